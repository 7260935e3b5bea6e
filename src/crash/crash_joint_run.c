/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_joint_run.c - rqdisk-crash --order ORDER BASE0 LOG0 BASE1 LOG1 ...
 * -- CHECK: the joint crash states of several disks (the logs of rqdisk
 * --disk with log-writes' order=).  At each point of the disks' shared
 * order where any disk's flush or FUA write completed, and at its end,
 * every disk's state at that instant is built (crash_joint.h): each log's
 * prefix, less every subset of up to --drop K of the writes the disks
 * held in their volatile caches then, chosen across all the disks, and
 * with --torn each of those writes torn alone.  CHECK runs once per joint
 * state, its disks' images as whole files in a directory of its own.
 * --state ID builds the one state its ID names (crash_joint_id.h), checked
 * or written to a directory (-o).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "crash_joint.h"
#include "crash_joint_id.h"
#include "crash_joint_run.h"
#include "crash_options.h"
#include "crash_overlay.h"
#include "log_order.h"

enum { J_CONSISTENT = 0, J_FAILED = 1, J_TROUBLE = 2 };
#define J_MAX_DROP CRASH_JOINT_MAX_DROP

struct jdisk {
	const char *base, *logpath;
	int base_fd;
	uint64_t size;
	struct crash_log log;
	bool log_open;
};

struct jrun {
	const char *order_path, *state_id, *output;
	unsigned int drop, timeout_s;
	uint32_t atomic; /* --atomic, or 0: each disk's log's sectorsize */
	bool list, torn;
	char **check;
	struct jdisk d[LOG_ORDER_MAX_DISKS];
	unsigned int nr;
	const struct crash_log *logs[LOG_ORDER_MAX_DISKS]; /* j reads them from here */
	struct crash_joint j;
	char *order_text;
	size_t order_len;
	char dir[256];
	unsigned long states, failed;
	sigset_t stop; /* SIGINT, SIGTERM, SIGHUP: blocked while it runs, taken in the wait */
	int sig;       /* the one that ended the run, or 0 */
};

bool joint_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--order") || !strncmp(argv[i], "--order=", 8))
			return true;
	return false;
}

static int joint_usage(const char *what)
{
	fprintf(stderr, PROG ": %s\n", what);
	return -EINVAL;
}

static int joint_parse(int argc, char **argv, struct jrun *r)
{
	static const struct option opts[] = {
		{ "order", required_argument, NULL, 'O' },
		{ "drop", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 't' },
		{ "list", no_argument, NULL, 'l' },
		{ "torn", no_argument, NULL, 'T' },
		{ "atomic", required_argument, NULL, 'a' },
		{ "state", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int opt, n;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+o:", opts, NULL)) != -1) {
		if (opt == 'O')
			r->order_path = optarg;
		else if (opt == 'd' && !cli_number(PROG, "--drop", optarg, 0, J_MAX_DROP, &v))
			r->drop = (unsigned int)v;
		else if (opt == 't' && !cli_number(PROG, "--timeout", optarg, 1, 86400, &v))
			r->timeout_s = (unsigned int)v;
		else if (opt == 'l')
			r->list = true;
		else if (opt == 'T')
			r->torn = true;
		else if (opt == 'a' && !cli_number(PROG, "--atomic", optarg, 512, 65536, &v)) {
			if (v & (v - 1))
				return joint_usage("--atomic must be a power of two");
			r->atomic = (uint32_t)v;
		} else if (opt == 's')
			r->state_id = optarg;
		else if (opt == 'o')
			r->output = optarg;
		else if (opt == '?')
			return joint_usage("with --order: only --drop K (0 to 3), --torn, --atomic "
					   "BYTES, --state ID, -o DIR, --timeout S and --list");
		else
			return -EINVAL; /* a bad number: cli_number said so */
	}
	for (n = optind; n < argc && strcmp(argv[n], "--"); n++)
		;
	if (n - optind < 2 || (n - optind) % 2 || (n - optind) / 2 > LOG_ORDER_MAX_DISKS)
		return joint_usage("--order takes BASE LOG pairs, one per disk in the order's "
				   "numbering, 1 to 16 of them");
	r->nr = (unsigned int)(n - optind) / 2;
	for (unsigned int i = 0; i < r->nr; i++) {
		r->d[i].base = argv[optind + 2 * i];
		r->d[i].logpath = argv[optind + 2 * i + 1];
	}
	r->check = n < argc && argv[n + 1] ? &argv[n + 1] : NULL;
	if (r->output && !r->state_id)
		return joint_usage("-o DIR writes the state --state ID names: give --state");
	if (r->state_id && r->list)
		return joint_usage("--state and --list: one or the other");
	if (!r->check && !r->list && !r->output)
		return joint_usage("no CHECK: give one after \"--\", or --list, or --state ID -o DIR");
	return 0;
}

static int joint_open_disk(struct jdisk *d)
{
	char why[512];
	struct stat st;

	d->base_fd = open(d->base, O_RDONLY | O_CLOEXEC);
	if (d->base_fd < 0 || fstat(d->base_fd, &st)) {
		fprintf(stderr, PROG ": %s: %s\n", d->base, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, PROG ": %s: with --order, BASE is a regular file\n", d->base);
		return -1;
	}
	d->size = (uint64_t)st.st_size;
	if (crash_log_open(d->logpath, d->size, &d->log, why, sizeof(why))) {
		fprintf(stderr, PROG ": %s\n", why);
		return -1;
	}
	d->log_open = true;
	return 0;
}

static int joint_load(struct jrun *r)
{
	char why[512];
	FILE *f;

	for (unsigned int i = 0; i < r->nr; i++) {
		if (joint_open_disk(&r->d[i]))
			return -1;
		r->logs[i] = &r->d[i].log;
	}
	f = fopen(r->order_path, "re");
	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", r->order_path, strerror(errno));
		return -1;
	}
	r->order_text = malloc(1 << 20);
	for (size_t cap = 1 << 20, n; r->order_text; cap *= 2) {
		n = fread(r->order_text + r->order_len, 1, cap - r->order_len, f);
		r->order_len += n;
		if (r->order_len < cap)
			break;
		r->order_text = realloc(r->order_text, cap * 2);
	}
	if (!r->order_text || ferror(f)) {
		fprintf(stderr, PROG ": %s: %s\n", r->order_path,
			r->order_text ? strerror(errno) : "out of memory");
		fclose(f);
		return -1;
	}
	fclose(f);
	if (crash_joint_init(&r->j, r->logs, r->nr, r->order_text, r->order_len, why, sizeof(why))) {
		fprintf(stderr, PROG ": %s: %s\n", r->order_path, why);
		return -1;
	}
	return 0;
}

/* The points: after each entry of the order that is a flush or a FUA write, and the end. */
static bool joint_point(const struct jrun *r, size_t n)
{
	const struct crash_joint_ref *ref;
	uint64_t flags;

	if (n == r->j.nr)
		return true;
	if (!n)
		return false;
	ref = &r->j.seq[n - 1];
	flags = r->d[ref->disk].log.e[ref->entry].flags;
	return (flags & (LOG_FLUSH_FLAG | LOG_FUA_FLAG)) && !(flags & LOG_MARK_FLAG);
}

/* Disk d's image of the state st (checked) into fd, truncated to the disk's size. */
static int joint_write_disk(struct jrun *r, const struct crash_joint_state *st, unsigned int d,
			    int fd)
{
	struct crash_spec spec;
	struct crash_id id;
	char why[512];
	struct ovl o;
	int ret;

	ret = crash_joint_disk_id(&r->j, st, d, &id);
	if (!ret && crash_resolve(&r->d[d].log, &id, &spec, why, sizeof(why)))
		ret = -EINVAL; /* crash_joint_check took it: not the state it checked */
	if (!ret)
		ret = ovl_build(&o, &r->d[d].log, &spec, r->d[d].base_fd, r->d[d].size, NULL);
	if (!ret) {
		ret = ovl_write_image(&o, fd);
		ovl_free(&o);
	}
	crash_id_free(&id);
	return ret;
}

/* Every disk's image of st as DIR/diskD, for the checker. */
static int joint_write_state(struct jrun *r, const struct crash_joint_state *st, const char *id)
{
	char path[320];
	int fd, ret = 0;

	for (unsigned int d = 0; d < r->nr && !ret; d++) {
		snprintf(path, sizeof(path), "%s/disk%u", r->dir, d);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		ret = fd < 0 ? -errno : joint_write_disk(r, st, d, fd);
		if (fd >= 0)
			close(fd);
		if (ret)
			fprintf(stderr, PROG ": %s: disk%u's state: %s\n", id, d, strerror(-ret));
	}
	return ret;
}

/* CHECK with {} the state's directory and RQDISK_CRASH_IMAGEn each disk's file: its status. */
static int joint_exec(struct jrun *r, const char *id)
{
	unsigned int n = 0;
	char var[32], path[320];
	pid_t pid;
	int st;

	for (char **a = r->check; *a; a++)
		n++;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		char **argv = calloc(n + 1, sizeof(*argv));

		sigprocmask(SIG_UNBLOCK, &r->stop, NULL);
		for (unsigned int i = 0; argv && i < n; i++)
			argv[i] = strcmp(r->check[i], "{}") ? r->check[i] : r->dir;
		for (unsigned int d = 0; d < r->nr; d++) {
			snprintf(var, sizeof(var), "RQDISK_CRASH_IMAGE%u", d);
			snprintf(path, sizeof(path), "%s/disk%u", r->dir, d);
			setenv(var, path, 1);
		}
		setenv("RQDISK_CRASH_STATE", id, 1);
		snprintf(var, sizeof(var), "%u", r->nr);
		setenv("RQDISK_CRASH_DISKS", var, 1);
		if (argv)
			execvp(argv[0], argv);
		fprintf(stderr, PROG ": %s: %s\n", r->check[0], strerror(errno));
		_exit(127);
	}
	for (unsigned int t = 0; waitpid(pid, &st, WNOHANG) == 0; t++) {
		int sig = sigtimedwait(&r->stop, NULL, &(struct timespec){ .tv_nsec = 10000000 });

		if (sig > 0) { /* stopped: the checker ends, then the run, its files taken away */
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			r->sig = sig;
			return -EINTR;
		}
		if (t == r->timeout_s * 100u) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fprintf(stderr, PROG ": %s: CHECK did not end in %u s: failed\n", id,
				r->timeout_s);
			return 1;
		}
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* One joint state: listed, or built and checked.  0, or -errno (said). */
static int joint_state(struct jrun *r, const struct crash_joint_state *st)
{
	char id[CRASH_JOINT_ID_MAX];
	int ret;

	crash_joint_id_format(st, id, sizeof(id));
	r->states++;
	if (r->list) {
		printf("%s\n", id);
		return 0;
	}
	ret = joint_write_state(r, st, id);
	if (ret)
		return ret;
	ret = joint_exec(r, id);
	if (ret == -EINTR)
		return ret;
	if (ret < 0) {
		fprintf(stderr, PROG ": fork: %s\n", strerror(-ret));
		return ret;
	}
	if (ret) {
		r->failed++;
		printf("FAIL %s (status %d)\n", id, ret);
		fflush(stdout);
	}
	return 0;
}

/* Every subset of v of k writes lost, in rising order of picks. */
static int joint_subsets(struct jrun *r, size_t n, const struct crash_joint_ref *v, size_t nv,
			 unsigned int k)
{
	struct crash_joint_state st = { .n = n, .nr_drop = k };
	size_t pick[J_MAX_DROP];
	int ret = 0;

	if (k > nv)
		return 0;
	for (unsigned int i = 0; i < k; i++)
		pick[i] = i;
	for (;;) {
		for (unsigned int i = 0; i < k; i++)
			st.drop[i] = v[pick[i]];
		ret = joint_state(r, &st);
		if (ret || !k)
			return ret;
		int i = (int)k - 1;

		while (i >= 0 && pick[i] == nv - k + (size_t)i)
			i--;
		if (i < 0)
			return 0;
		pick[i]++;
		for (unsigned int m = (unsigned int)i + 1; m < k; m++)
			pick[m] = pick[m - 1] + 1;
	}
}

/* --torn: each of v torn alone, after 1, n/2 and n-1 of its n atomic units. */
static int joint_torn(struct jrun *r, size_t n, const struct crash_joint_ref *v, size_t nv)
{
	struct crash_joint_state st = { .n = n, .torn = true };
	uint64_t ks[3];
	int ret = 0;

	for (size_t i = 0; i < nv && !ret; i++) {
		st.torn_w = v[i];
		st.torn_a = r->atomic ? r->atomic : r->d[v[i].disk].log.sectorsize;
		for (size_t m = crash_joint_torn_ks(&r->j, v[i], st.torn_a, ks), x = 0;
		     x < m && !ret; x++) {
			st.torn_k = ks[x];
			ret = joint_state(r, &st);
		}
	}
	return ret;
}

/* Every joint state, or the one --state names. */
static int joint_run(struct jrun *r, const struct crash_joint_state *one)
{
	struct crash_joint_ref *v = malloc((r->j.nr + 1) * sizeof(*v));
	size_t nv;
	int ret = v ? 0 : -ENOMEM;

	if (!ret && one)
		ret = joint_state(r, one);
	for (size_t n = 0; !ret && !one && n <= r->j.nr; n++) {
		if (!joint_point(r, n))
			continue;
		ret = crash_joint_volatile(&r->j, n, v, &nv);
		for (unsigned int k = 0; !ret && k <= r->drop; k++)
			ret = joint_subsets(r, n, v, nv, k);
		if (!ret && r->torn)
			ret = joint_torn(r, n, v, nv);
	}
	if (ret == -ENOMEM)
		fprintf(stderr, PROG ": out of memory\n");
	if (ret == -EINTR)
		fprintf(stderr, PROG ": stopped by signal %d after %lu joint states\n", r->sig,
			r->states);
	free(v);
	return ret;
}

/* --state ID: a state of these disks' logs, or refused in one line. */
static int joint_load_state(struct jrun *r, struct crash_joint_state *st)
{
	char why[512];

	if (crash_joint_id_parse(r->state_id, st, why, sizeof(why))) {
		fprintf(stderr, PROG ": %s\n", why);
		return -1;
	}
	if (crash_joint_check(&r->j, st, why, sizeof(why))) {
		/* an ID that parses is plain digits and punctuation: printable */
		fprintf(stderr, PROG ": state %s: %s\n", r->state_id, why);
		return -1;
	}
	return 0;
}

/*
 * -o's file for disk d, open: what writing it would harm (a BASE or a LOG
 * of the run, another user's file, a second name of a file, not a regular
 * file), or NULL.
 */
static const char *joint_clobbers(const struct jrun *r, int fd)
{
	struct stat out, st;

	if (fstat(fd, &out))
		return "cannot be looked at";
	if (!S_ISREG(out.st_mode))
		return "not a regular file";
	if (out.st_uid != geteuid() || out.st_nlink > 1)
		return "another user's file, or a second name of a file";
	for (unsigned int d = 0; d < r->nr; d++) {
		if (!fstat(r->d[d].base_fd, &st) && st.st_dev == out.st_dev &&
		    st.st_ino == out.st_ino)
			return "a BASE of the run";
		if (!stat(r->d[d].logpath, &st) && st.st_dev == out.st_dev &&
		    st.st_ino == out.st_ino)
			return "a LOG of the run";
	}
	return NULL;
}

/*
 * --state ID -o DIR: every disk's image of the state as DIR/diskD (DIR
 * made when missing), each a whole file of its disk's size.  Never
 * through a symbolic link, nor over what joint_clobbers refuses.
 */
static int joint_output(struct jrun *r, const struct crash_joint_state *st)
{
	const char *harm;
	char name[16];
	int dfd, fd, ret = 0;

	if (mkdir(r->output, 0700) && errno != EEXIST) {
		fprintf(stderr, PROG ": -o %s: %s\n", r->output, strerror(errno));
		return -1;
	}
	dfd = open(r->output, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		int err = errno;
		struct stat ls;

		/* a link to a directory is ENOTDIR, to anything else ELOOP */
		fprintf(stderr, PROG ": -o %s: %s\n", r->output,
			!lstat(r->output, &ls) && S_ISLNK(ls.st_mode)
				? "a symbolic link: refused (name the directory itself)"
				: strerror(err));
		return -1;
	}
	for (unsigned int d = 0; d < r->nr && !ret; d++) {
		snprintf(name, sizeof(name), "disk%u", d);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			    0644);
		harm = fd < 0 ? strerror(errno) : joint_clobbers(r, fd);
		if (!harm && fcntl(fd, F_SETFL, 0))
			harm = strerror(errno);
		if (!harm) {
			ret = joint_write_disk(r, st, d, fd);
			harm = ret ? strerror(-ret) : NULL;
		}
		if (fd >= 0)
			close(fd);
		if (harm) {
			fprintf(stderr, PROG ": -o %s/%s: %s\n", r->output, name, harm);
			ret = -1;
		}
	}
	close(dfd);
	return ret;
}

static void joint_cleanup(struct jrun *r)
{
	char path[320];

	if (r->dir[0]) {
		for (unsigned int d = 0; d < r->nr; d++) {
			snprintf(path, sizeof(path), "%s/disk%u", r->dir, d);
			unlink(path);
		}
		rmdir(r->dir);
	}
	crash_joint_free(&r->j);
	free(r->order_text);
	for (unsigned int d = 0; d < r->nr; d++) {
		if (r->d[d].log_open)
			crash_log_free(&r->d[d].log);
		if (r->d[d].base_fd >= 0)
			close(r->d[d].base_fd);
	}
}

int joint_main(int argc, char **argv)
{
	struct jrun r = { .drop = 1, .timeout_s = DEFAULT_TIMEOUT_S };
	struct crash_joint_state st = { 0 };
	const char *tmp = getenv("TMPDIR");
	int status = J_TROUBLE;

	for (unsigned int d = 0; d < LOG_ORDER_MAX_DISKS; d++)
		r.d[d].base_fd = -1;
	if (joint_parse(argc, argv, &r))
		return J_TROUBLE;
	if (joint_load(&r) || (r.state_id && joint_load_state(&r, &st)))
		goto out;
	if (r.output && joint_output(&r, &st))
		goto out;
	if (r.output && !r.check) {
		status = J_CONSISTENT;
		goto out;
	}
	/* a run of checkers takes these signals in its wait, to end them and clean up */
	sigemptyset(&r.stop);
	sigaddset(&r.stop, SIGINT);
	sigaddset(&r.stop, SIGTERM);
	sigaddset(&r.stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &r.stop, NULL);
	snprintf(r.dir, sizeof(r.dir), "%s/rqdisk-crash.XXXXXX",
		 tmp && *tmp && strlen(tmp) < 200 ? tmp : "/tmp");
	if (!r.list && !mkdtemp(r.dir)) {
		fprintf(stderr, PROG ": %s: %s\n", r.dir, strerror(errno));
		r.dir[0] = '\0';
		goto out;
	}
	if (r.list)
		r.dir[0] = '\0';
	if (joint_run(&r, r.state_id ? &st : NULL))
		goto out;
	if (!r.list)
		printf("%lu joint states of %u disks, %lu failed\n", r.states, r.nr, r.failed);
	status = r.failed ? J_FAILED : J_CONSISTENT;
out:
	joint_cleanup(&r);
	if (r.sig) { /* said as the shell expects: the signal */
		signal(r.sig, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &r.stop, NULL);
		raise(r.sig);
	}
	return status;
}
