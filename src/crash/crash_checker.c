/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_checker.c - runs the checker on each state, j at a time, with a timeout and its output kept. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crash_checker.h"
#include "crash_loop.h"

#define TAIL_BYTES 4096
#define ENV_NAME "RQDISK_CRASH_STATE"
#define ENV_MARKS "RQDISK_CRASH_MARKS"

extern char **environ;

struct slot {
	pid_t pid;          /* 0: free */
	struct crash_id id;
	char *id_text;
	char *marks; /* RQDISK_CRASH_MARKS's value */
	enum crash_class cls;
	void *st;
	int loop_fd; /* --loop: holds the state's loop device; -1 otherwise */
	int out_fd;
	char *out_path;
	uint64_t start_ns, kill_ns;
	bool timed_out, termed;
};

/* The slot's state forgotten: its ID, the ID's text, its marks. */
static void slot_clear(struct slot *s)
{
	crash_id_free(&s->id);
	free(s->id_text);
	s->id_text = NULL;
	free(s->marks);
	s->marks = NULL;
}

void check_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

char *check_find(const char *name)
{
	const char *path = getenv("PATH");
	char *p;

	if (strchr(name, '/'))
		return access(name, X_OK) ? NULL : strdup(name);
	for (path = path ? path : "/usr/bin:/bin"; *path;) {
		size_t n = strcspn(path, ":");
		struct stat st;

		if (asprintf(&p, "%.*s/%s", (int)n, n ? path : ".", name) < 0)
			return NULL;
		if (!access(p, X_OK) && !stat(p, &st) && S_ISREG(st.st_mode))
			return p;
		free(p);
		path += n + (path[n] == ':');
	}
	return NULL;
}

/* s with every "{}" replaced by path, malloc'd. */
static char *substitute(const char *s, const char *path)
{
	size_t n = 0, plen = strlen(path);
	const char *q;
	char *out, *w;

	for (q = s; (q = strstr(q, "{}")); q += 2)
		n++;
	out = malloc(strlen(s) + n * plen + 1);
	if (!out)
		return NULL;
	for (w = out; *s;) {
		if (s[0] == '{' && s[1] == '}') {
			memcpy(w, path, plen);
			w += plen;
			s += 2;
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
	return out;
}

static void free_strv(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

/* Whether environ's entry e sets the variable name (a "NAME" string literal). */
#define ENV_IS(e, name) (!strncmp((e), name "=", sizeof(name)))

/* The checker's argv and environment, made before the fork: the child only execs. */
static int make_argv_env(const struct check_opts *o, const char *path, const struct slot *s,
			 char ***argv, char ***envp)
{
	size_t na = 0, ne = 0, j = 0;

	while (o->args[na])
		na++;
	while (environ[ne])
		ne++;
	*argv = calloc(na + 1, sizeof(**argv));
	*envp = calloc(ne + 3, sizeof(**envp));
	if (!*argv || !*envp)
		goto oom;
	for (size_t i = 0; i < na; i++)
		if (!((*argv)[i] = substitute(o->args[i], path)))
			goto oom;
	for (size_t i = 0; i < ne; i++)
		if (!ENV_IS(environ[i], ENV_NAME) && !ENV_IS(environ[i], ENV_MARKS) &&
		    !((*envp)[j++] = strdup(environ[i])))
			goto oom;
	if (asprintf(&(*envp)[j], ENV_NAME "=%s", s->id_text) < 0) {
		(*envp)[j] = NULL;
		goto oom;
	}
	if (asprintf(&(*envp)[++j], ENV_MARKS "=%s", s->marks) < 0) {
		(*envp)[j] = NULL;
		goto oom;
	}
	return 0;
oom:
	free_strv(*argv);
	free_strv(*envp);
	return -ENOMEM;
}

static int spawn(const struct check_opts *o, struct slot *s, const char *path)
{
	char **argv, **envp;
	sigset_t none;
	pid_t pid;
	int null_fd;

	if (make_argv_env(o, path, s, &argv, &envp))
		return -ENOMEM;
	if (ftruncate(s->out_fd, 0) || lseek(s->out_fd, 0, SEEK_SET))
		(void)0; /* a stale tail at worst */
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	sigemptyset(&none);
	pid = fork();
	if (pid == 0) {
		/* only async-signal-safe calls here: the parent has threads */
		setpgid(0, 0);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null_fd >= 0)
			dup2(null_fd, STDIN_FILENO);
		dup2(s->out_fd, STDOUT_FILENO);
		dup2(s->out_fd, STDERR_FILENO);
		execve(o->exe, argv, envp);
		if (write(STDERR_FILENO, "rqdisk-crash: cannot run the checker\n", 37) < 0)
			_exit(127);
		_exit(127);
	}
	if (null_fd >= 0)
		close(null_fd);
	free_strv(argv);
	free_strv(envp);
	if (pid < 0)
		return -errno;
	setpgid(pid, pid);
	s->pid = pid;
	s->start_ns = report_now_ns();
	s->kill_ns = s->start_ns + (uint64_t)o->timeout_s * 1000000000u;
	s->timed_out = s->termed = false;
	return 0;
}

/* The last CHECK_TAIL_LINES lines the checker wrote. */
static char *tail_of(int fd)
{
	char *buf = calloc(1, TAIL_BYTES + 1), *p;
	off_t end = lseek(fd, 0, SEEK_END), from = end > TAIL_BYTES ? end - TAIL_BYTES : 0;
	ssize_t n;
	int lines = 0;

	if (!buf)
		return NULL;
	n = pread(fd, buf, TAIL_BYTES, from);
	if (n <= 0)
		return buf;
	buf[n] = '\0';
	for (p = buf + n; p > buf; p--) {
		if (p[-1] == '\n' && p != buf + n && ++lines >= CHECK_TAIL_LINES)
			break;
	}
	if (p != buf)
		memmove(buf, p, strlen(p) + 1);
	return buf;
}

/* The state goes: its loop device first (the checker is gone), then its file. */
static void release_state(const struct check_source *src, struct slot *s)
{
	crash_loop_detach(s->loop_fd);
	s->loop_fd = -1;
	src->release(src->ctx, s->st);
}

static void finish(const struct check_source *src, struct report *r, struct slot *s, int status)
{
	uint64_t ns = report_now_ns() - s->start_ns;
	enum check_result res = CHECK_OK;
	int code = 0;
	char *tail;

	/* whatever the checker left running in its group must not outlive its state */
	kill(-s->pid, SIGKILL);
	if (WIFEXITED(status))
		code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		code = 128 + WTERMSIG(status);
	if (s->timed_out)
		res = CHECK_TIMEOUT;
	else if (code)
		res = CHECK_FAILED;
	tail = res == CHECK_OK ? NULL : tail_of(s->out_fd);
	r->check_ns += ns;
	report_checked(r, s->id_text, s->cls, res, code, ns, tail);
	free(tail);
	release_state(src, s);
	slot_clear(s);
	s->pid = 0;
}

static void reap(const struct check_source *src, struct report *r, struct slot *slots,
		 unsigned int n)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (unsigned int i = 0; i < n; i++)
			if (slots[i].pid == pid)
				finish(src, r, &slots[i], status);
	}
}

/* Timeouts: SIGTERM to the group, then SIGKILL once the grace is over. */
static uint64_t police(struct slot *slots, unsigned int n, uint64_t now)
{
	uint64_t next = now + 1000000000u;

	for (unsigned int i = 0; i < n; i++) {
		struct slot *s = &slots[i];

		if (!s->pid)
			continue;
		if (now >= s->kill_ns) {
			kill(-s->pid, s->termed ? SIGKILL : SIGTERM);
			s->timed_out = true;
			s->kill_ns = now + CHECK_GRACE_S * 1000000000ull;
			s->termed = true;
		}
		if (s->kill_ns < next)
			next = s->kill_ns;
	}
	return next;
}

/* The checker of the state at path, on a loop device of its own with --loop; released on failure. */
static int attach_and_spawn(const struct check_opts *o, const struct check_source *src,
			    struct slot *s, char *path, size_t pathlen)
{
	char why[256];
	int ret = 0;

	s->loop_fd = -1;
	if (o->loop) {
		ret = crash_loop_attach(path, path, pathlen, why, sizeof(why));
		if (ret < 0)
			fprintf(stderr, "rqdisk-crash: %s\n", why);
		else
			s->loop_fd = ret;
	}
	if (ret >= 0) {
		ret = spawn(o, s, path);
		if (ret)
			fprintf(stderr, "rqdisk-crash: cannot start the checker: %s\n",
				strerror(-ret));
	}
	if (ret < 0)
		release_state(src, s);
	return ret < 0 ? ret : 0;
}

/* The next state built and its checker started in slot s: 1, 0 when none is left, <0. */
static int start_one(const struct check_opts *o, const struct check_source *src,
		     struct report *r, struct slot *s)
{
	char path[4096];
	uint64_t t0;
	int ret = src->next(src->ctx, &s->id, &s->cls);

	if (ret <= 0)
		return ret;
	s->id_text = crash_id_format(&s->id);
	if (!s->id_text) {
		crash_id_free(&s->id);
		fprintf(stderr, "rqdisk-crash: out of memory\n");
		return -ENOMEM;
	}
	s->marks = src->marks(src->ctx, &s->id);
	if (!s->marks) {
		slot_clear(s);
		return -ENOMEM;
	}
	report_made(r, s->cls);
	t0 = report_now_ns();
	ret = src->build(src->ctx, &s->id, path, sizeof(path), &s->st);
	r->build_ns += report_now_ns() - t0;
	if (!ret)
		ret = attach_and_spawn(o, src, s, path, sizeof(path));
	if (ret)
		slot_clear(s);
	return ret ? ret : 1;
}

/* After SIGINT or an error: every checker's group killed, its state released, not counted. */
static void stop_all(const struct check_source *src, struct slot *slots, unsigned int n)
{
	int status;

	for (unsigned int i = 0; i < n; i++) {
		struct slot *s = &slots[i];

		if (!s->pid)
			continue;
		kill(-s->pid, SIGKILL);
		while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
			;
		release_state(src, s);
		slot_clear(s);
		s->pid = 0;
	}
}

static int open_outputs(const struct check_opts *o, struct slot *slots)
{
	for (unsigned int i = 0; i < o->jobs; i++) {
		if (asprintf(&slots[i].out_path, "%s/out.%u", o->tmpdir, i) < 0) {
			slots[i].out_path = NULL;
			return -ENOMEM;
		}
		slots[i].out_fd = open(slots[i].out_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (slots[i].out_fd < 0) {
			fprintf(stderr, "rqdisk-crash: %s: %s\n", slots[i].out_path, strerror(errno));
			free(slots[i].out_path);
			slots[i].out_path = NULL;
			return -errno;
		}
	}
	return 0;
}

static void close_outputs(const struct check_opts *o, struct slot *slots)
{
	for (unsigned int i = 0; i < o->jobs; i++) {
		if (!slots[i].out_path)
			continue;
		close(slots[i].out_fd);
		unlink(slots[i].out_path);
		free(slots[i].out_path);
	}
}

int check_run(const struct check_opts *o, const struct check_source *src, struct report *r)
{
	struct slot *slots = calloc(o->jobs, sizeof(*slots));
	bool more = true;
	unsigned int running;
	sigset_t set;
	int ret;

	if (!slots)
		return -ENOMEM;
	check_signals(&set);
	ret = open_outputs(o, slots);
	while (!ret) {
		uint64_t now, next;
		struct timespec ts;
		siginfo_t info;
		int sig;

		running = 0;
		for (unsigned int i = 0; i < o->jobs && !ret; i++) {
			if (!slots[i].pid && more) {
				ret = start_one(o, src, r, &slots[i]);
				more = ret > 0;
				ret = ret < 0 ? ret : 0;
			}
			running += !!slots[i].pid;
		}
		if (ret || !running)
			break;
		now = report_now_ns();
		next = police(slots, o->jobs, now);
		ts.tv_sec = (time_t)((next - now) / 1000000000u);
		ts.tv_nsec = (long)((next - now) % 1000000000u);
		sig = sigtimedwait(&set, &info, &ts);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			ret = sig;
			break;
		}
		reap(src, r, slots, o->jobs);
		report_progress(r, false);
	}
	stop_all(src, slots, o->jobs);
	close_outputs(o, slots);
	free(slots);
	if (r->progress)
		report_progress(r, true);
	return ret;
}
