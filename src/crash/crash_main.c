/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_main.c - rqdisk-crash: the crash states a power failure could leave, each checked. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash_checker.h"
#include "cli.h"
#include "crash_dedup.h"
#include "crash_log.h"
#include "crash_overlay.h"
#include "crash_report.h"
#include "crash_server.h"
#include "crash_shard.h"
#include "crash_state.h"

#define PROG "rqdisk-crash"

/* EXIT_UNCHECKED: none failed, but points were skipped (a gap in the log): not an all-clear */
enum { EXIT_CONSISTENT = 0, EXIT_FAILED = 1, EXIT_TROUBLE = 2, EXIT_UNCHECKED = 3 };
enum via { VIA_AUTO, VIA_FUSE, VIA_COPY };

#define DEFAULT_TIMEOUT_S 60
#define MAX_JOBS 256

struct options {
	struct crash_at at;
	struct crash_gen_opts gen;
	bool atomic_set;
	const char *state;
	const char *output;
	const char *csv;
	enum via via;
	unsigned int jobs, timeout_s;
	bool progress;
	bool loop;
	bool list, no_dedup;
	struct crash_shard shard;
	const char *base, *log;
	char **check; /* NULL: none */
};

enum {
	OPT_AT = 256,
	OPT_DROP,
	OPT_SAMPLE,
	OPT_SEED,
	OPT_TORN,
	OPT_ATOMIC,
	OPT_STATE,
	OPT_VIA,
	OPT_TIMEOUT,
	OPT_PROGRESS,
	OPT_CSV,
	OPT_LOOP,
	OPT_PAST_GAPS,
	OPT_LIST,
	OPT_SHARD,
	OPT_NO_DEDUP,
};

static const struct option long_options[] = {
	{ "at", required_argument, NULL, OPT_AT },
	{ "drop", required_argument, NULL, OPT_DROP },
	{ "sample", required_argument, NULL, OPT_SAMPLE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "torn", no_argument, NULL, OPT_TORN },
	{ "atomic", required_argument, NULL, OPT_ATOMIC },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "output", required_argument, NULL, 'o' },
	{ "via", required_argument, NULL, OPT_VIA },
	{ "jobs", required_argument, NULL, 'j' },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "loop", no_argument, NULL, OPT_LOOP },
	{ "past-gaps", no_argument, NULL, OPT_PAST_GAPS },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "shard", required_argument, NULL, OPT_SHARD },
	{ "no-dedup", no_argument, NULL, OPT_NO_DEDUP },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS] BASE LOG -- CHECK [ARGS...]\n"
		"       " PROG " [OPTIONS] --state ID [-o FILE] BASE LOG [-- CHECK [ARGS...]]\n"
		"       " PROG " [OPTIONS] --list BASE LOG\n"
		"Build the states a power failure could leave of BASE after the writes of LOG\n"
		"(dm-log-writes' format) and run CHECK on each: {} in ARGS is the state's\n"
		"path, RQDISK_CRASH_STATE its ID, RQDISK_CRASH_MARKS the marks passed\n"
		"(NAME=COUNT ...); exit 0 means consistent.\n"
		"\n"
		"  --at flush|fua|mark:NAME|N  points: before each flush, after each FUA write,\n"
		"                        after each mark NAME, every N entries (default flush;\n"
		"                        repeatable); the end of the log always\n"
		"  --drop K              also every subset of up to K volatile writes lost\n"
		"  --sample N            also N random subsets lost per point (--seed S)\n"
		"  --seed S              the seed of --sample (default 1)\n"
		"  --torn                also each volatile write torn after 1, n/2, n-1 units\n"
		"  --atomic BYTES        the atomic unit of --torn (default: the log's sectorsize)\n"
		"  --past-gaps           also the points past a gap in the log (logging was off)\n"
		"  --state ID            that state alone; -o FILE writes it as a whole image\n"
		"  -o, --output FILE     with --state: where the image goes\n"
		"  --via fuse|copy|auto  states as files of a FUSE mount, or as copies (auto)\n"
		"  -j, --jobs N          checkers at a time (default 1)\n"
		"  --timeout SEC         a checker running longer fails (default 60)\n"
		"  --loop                {} is the state on a loop device of its own\n"
		"  --progress            a progress line on stderr (default: when it is a tty)\n"
		"  --csv FILE            one row per state: id,class,result,exit,seconds,same_as\n"
		"  --list                print the IDs of the run's states, one a line; no check\n"
		"  --shard K/N           only the K-th of N shares of the states (K from 1)\n"
		"  --no-dedup            check each state; by default a state of the same bytes\n"
		"                        and marks passed as an earlier one takes its verdict\n"
		"  -h, --help            show this help\n"
		"  -V, --version         show the version\n"
		"\n"
		"Exit status: 0 every state consistent, 1 some failed, 2 bad usage or input,\n"
		"3 none failed but not all was checked: points past a gap in the log (also\n"
		"with --past-gaps: their states miss writes), or writes after the end of a\n"
		"log that was cut short.\n");
}

static int parse_at(struct options *o, const char *s)
{
	unsigned long n;

	if (!strcmp(s, "flush")) {
		o->at.kinds |= AT_FLUSH;
	} else if (!strcmp(s, "fua")) {
		o->at.kinds |= AT_FUA;
	} else if (!strcmp(s, "mark:")) {
		cli_usage_error(PROG, "--at mark: needs a NAME", NULL);
		return -EINVAL;
	} else if (!strncmp(s, "mark:", 5)) {
		char **m = realloc(o->at.marks, (o->at.nr_marks + 1) * sizeof(*m));
		size_t *l = realloc(o->at.mark_lens, (o->at.nr_marks + 1) * sizeof(*l));

		if (m)
			o->at.marks = m;
		if (l)
			o->at.mark_lens = l;
		if (!m || !l)
			return -ENOMEM;
		m[o->at.nr_marks] = (char *)s + 5;
		l[o->at.nr_marks++] = strlen(s + 5);
	} else if (s[0] >= '0' && s[0] <= '9') {
		if (cli_number(PROG, "--at", s, 1, 1ul << 40, &n))
			return -EINVAL;
		o->at.every = n;
	} else {
		cli_usage_error(PROG, "--at takes flush, fua, mark:NAME or a number, not", s);
		return -EINVAL;
	}
	return 0;
}

static int parse_via(struct options *o, const char *s)
{
	if (!strcmp(s, "fuse"))
		o->via = VIA_FUSE;
	else if (!strcmp(s, "copy"))
		o->via = VIA_COPY;
	else if (!strcmp(s, "auto"))
		o->via = VIA_AUTO;
	else {
		cli_usage_error(PROG, "--via takes fuse, copy or auto, not", s);
		return -EINVAL;
	}
	return 0;
}

static int parse_shard(struct options *o, const char *s)
{
	char why[128];

	if (!crash_shard_parse(s, &o->shard, why, sizeof(why)))
		return 0;
	cli_usage_error(PROG, why, s);
	return -EINVAL;
}

/* One option: 0, 1 when main should exit 0 (help, version), <0 bad usage (said). */
static int parse_one(struct options *o, int opt, const char *arg)
{
	unsigned long n;
	int ret = 0;

	switch (opt) {
	case OPT_AT:
		return parse_at(o, arg);
	case OPT_DROP:
		ret = cli_number(PROG, "--drop", arg, 0, 64, &n);
		o->gen.drop = (unsigned int)n;
		break;
	case OPT_SAMPLE:
		ret = cli_number(PROG, "--sample", arg, 0, 1000000, &n);
		o->gen.sample = (unsigned int)n;
		break;
	case OPT_SEED:
		ret = cli_number(PROG, "--seed", arg, 0, ~0ul, &n);
		o->gen.seed = n;
		break;
	case OPT_TORN:
		o->gen.torn = true;
		break;
	case OPT_ATOMIC:
		ret = cli_number(PROG, "--atomic", arg, 512, 65536, &n);
		if (!ret && (n & (n - 1))) {
			cli_usage_error(PROG, "--atomic must be a power of two, not", arg);
			ret = -EINVAL;
		}
		o->gen.atomic = (uint32_t)n;
		o->atomic_set = true;
		break;
	case OPT_STATE:
		o->state = arg;
		break;
	case 'o':
		o->output = arg;
		break;
	case OPT_VIA:
		return parse_via(o, arg);
	case 'j':
		ret = cli_number(PROG, "--jobs", arg, 1, MAX_JOBS, &n);
		o->jobs = (unsigned int)n;
		break;
	case OPT_TIMEOUT:
		ret = cli_number(PROG, "--timeout", arg, 1, 1u << 24, &n);
		o->timeout_s = (unsigned int)n;
		break;
	case OPT_PROGRESS:
		o->progress = true;
		break;
	case OPT_LOOP:
		o->loop = true;
		break;
	case OPT_PAST_GAPS:
		o->gen.past_gaps = true;
		break;
	case OPT_CSV:
		o->csv = arg;
		break;
	case OPT_LIST:
		o->list = true;
		break;
	case OPT_SHARD:
		return parse_shard(o, arg);
	case OPT_NO_DEDUP:
		o->no_dedup = true;
		break;
	case 'h':
	case 'V':
		return cli_help_version(PROG, opt, usage);
	default:
		return -EINVAL;
	}
	return ret;
}

/* --state ID: its syntax, before any file is read; -EINVAL (said) when it is wrong. */
static int check_state_syntax(const char *s)
{
	struct crash_id id;
	char why[512];
	int ret = crash_id_parse(s, &id, why, sizeof(why));

	if (ret)
		fprintf(stderr, PROG ": %s\n", why);
	crash_id_free(&id);
	return ret;
}

/* No CHECK where one is needed (all but --list and --state -o): said. */
static bool check_missing(const struct options *o)
{
	if (o->check || o->list || (o->state && o->output))
		return false;
	cli_usage_error(PROG, "a CHECK is needed (after --)", NULL);
	return true;
}

/* Options before "--", CHECK after it.  0, 1 (exit 0) or <0 (exit 2; said). */
static int parse_options(int argc, char **argv, struct options *o)
{
	int end = 1, opt, ret;

	while (end < argc && strcmp(argv[end], "--"))
		end++;
	if (end < argc && end + 1 < argc)
		o->check = argv + end + 1;
	else if (end < argc) {
		cli_usage_error(PROG, "a CHECK is needed after --", NULL);
		return -EINVAL;
	}
	while ((opt = cli_getopt(PROG, end, argv, ":j:o:hV", long_options)) != -1) {
		ret = parse_one(o, opt, optarg);
		if (ret)
			return ret;
	}
	if (end - optind != 2) {
		cli_usage_error(PROG, end - optind < 2 ? "BASE and LOG are needed" :
				"only BASE and LOG before --, not", end - optind < 2 ? NULL :
				argv[optind + 2]);
		return -EINVAL;
	}
	o->base = argv[optind];
	o->log = argv[optind + 1];
	if (o->state && (o->list || o->shard.n)) {
		cli_usage_error(PROG, o->list ? "--list does not go with --state" :
				"--shard does not go with --state", NULL);
		return -EINVAL;
	}
	/*
	 * A wrong ID is what to fix first: its syntax is checked here, and
	 * whether the log has that state before a missing CHECK is said (main).
	 */
	if (o->state && check_state_syntax(o->state))
		return -EINVAL;
	if (!o->state && check_missing(o))
		return -EINVAL;
	if (o->output && !o->state) {
		cli_usage_error(PROG, "-o needs --state", NULL);
		return -EINVAL;
	}
	if (!o->at.kinds && !o->at.nr_marks && !o->at.every) {
		o->at.kinds = AT_FLUSH;
		o->at.flush_by_default = true;
	}
	return 0;
}

/* ------------------------------------------------------------ the states as files */

struct run {
	const struct options *o;
	struct crash_log log;
	int base_fd;
	uint64_t size;
	struct crash_gen gen;
	struct crash_dedup dedup;
	struct crash_pick pick; /* the states of gen this run reports on */
	struct crash_id single; /* --state */
	size_t single_pos;      /* its point's place in the log */
	uint64_t past_gap_states; /* states reported (listed, checked, folded) past a gap */
	size_t gen_skipped;     /* points past a gap the generator left out */
	bool single_done;
	struct ovl_layer *durable; /* the entries before the current point's last flush */
	struct crash_server *srv; /* NULL: copies */
	char *tmpdir, *mnt;
	uint64_t serial;
};

/* Whether LOG is still what was read; one line when it is not. */
static bool log_intact(const struct run *r)
{
	char why[512];

	if (!crash_log_intact(&r->log, r->o->log, why, sizeof(why)))
		return true;
	fprintf(stderr, PROG ": %s\n", why);
	return false;
}

/* The next state to check; one folded into an earlier state is reported with that one's verdict. */
/* A state this run reports on, past a gap (--past-gaps): counted, its verdict no all-clear. */
static void count_past_gap(struct run *r, const struct crash_id *id)
{
	struct crash_spec spec;
	char why[512];

	if (r->o->gen.past_gaps && !crash_resolve(&r->log, id, &spec, why, sizeof(why)) &&
	    crash_log_past_gap(&r->log, spec.pos))
		r->past_gap_states++;
}

static int next_picked(struct run *r, struct crash_id *id, enum crash_class *cls)
{
	struct dedup_rep *rep;
	int ret;

	while ((ret = crash_pick_next(&r->pick, id, cls, &rep)) == 1) {
		count_past_gap(r, id);
		if (!rep)
			break;
		ret = dedup_fold(&r->dedup, rep, id, *cls);
		crash_id_free(id);
		if (ret)
			break;
	}
	return ret;
}

static int next_state(void *ctx, struct crash_id *id, enum crash_class *cls)
{
	struct run *r = ctx;
	int ret;

	/* a state read from a truncated log is not one to report on: the run ends here */
	if (!log_intact(r))
		return -EIO;
	if (!r->o->state) {
		ret = next_picked(r, id, cls);
		if (ret < 0)
			fprintf(stderr, PROG ": out of memory\n");
		return ret;
	}
	if (r->single_done)
		return 0;
	r->single_done = true;
	*cls = r->single.torn ? CLASS_TORN : r->single.nr_drop ? CLASS_DROP : CLASS_PREFIX;
	return crash_id_copy(id, &r->single) ? -ENOMEM : 1;
}

/* The state as an overlay; shared says to build on (and advance) the run's durable layer. */
static int build_ovl(struct run *r, const struct crash_id *id, struct ovl *ovl, bool shared)
{
	struct crash_spec spec;
	char why[512];
	int ret = crash_resolve(&r->log, id, &spec, why, sizeof(why));

	if (ret) {
		fprintf(stderr, PROG ": %s\n", why);
		return ret;
	}
	ret = shared ? ovl_layer_advance(&r->durable, &r->log, spec.pos) : 0;
	if (!ret)
		ret = ovl_build(ovl, &r->log, &spec, r->base_fd, r->size,
				shared ? r->durable : NULL);
	if (ret)
		fprintf(stderr, PROG ": out of memory\n");
	return ret;
}

/* The most one variable of a program's environment may hold, with its name, '=' and NUL. */
#define ENV_STRING_MAX (32 * 4096)

/* RQDISK_CRASH_MARKS of state id: the marks its point has passed, malloc'd; NULL (said). */
static char *marks_of(void *ctx, const struct crash_id *id)
{
	struct run *r = ctx;
	struct crash_spec spec;
	char why[512], *text;

	if (crash_resolve(&r->log, id, &spec, why, sizeof(why))) {
		fprintf(stderr, PROG ": %s\n", why);
		return NULL;
	}
	text = crash_marks_text(&r->log, spec.pos);
	if (!text) {
		fprintf(stderr, PROG ": out of memory\n");
	} else if (strlen(text) + sizeof("RQDISK_CRASH_MARKS=") > ENV_STRING_MAX) {
		fprintf(stderr, PROG ": RQDISK_CRASH_MARKS would be %zu bytes, more than a "
			"program's environment variable may hold (%d): the log has too many "
			"mark names\n", strlen(text), ENV_STRING_MAX);
		free(text);
		text = NULL;
	}
	return text;
}

struct copy_state {
	char path[4096];
};

static int build_state(void *ctx, const struct crash_id *id, char *path, size_t pathlen, void **st)
{
	struct run *r = ctx;
	struct ovl *ovl = malloc(sizeof(*ovl));
	struct copy_state *c;
	uint64_t handle;
	int fd, ret;

	if (!ovl || build_ovl(r, id, ovl, true)) {
		free(ovl);
		return -ENOMEM;
	}
	if (r->srv) {
		ret = server_add(r->srv, ovl, path, pathlen, &handle);
		if (ret) {
			ovl_free(ovl);
			free(ovl);
			return ret;
		}
		*st = (void *)(uintptr_t)handle;
		return 0;
	}
	c = malloc(sizeof(*c));
	ret = c ? 0 : -ENOMEM;
	if (c) {
		snprintf(c->path, sizeof(c->path), "%s/state.%llu", r->tmpdir,
			 (unsigned long long)r->serial++);
		fd = open(c->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		ret = fd < 0 ? -errno : ovl_write_image(ovl, fd);
		if (fd >= 0 && close(fd) && !ret)
			ret = -errno;
		if (ret) {
			/* a write from the map faults (EFAULT) once the log is truncated */
			if (log_intact(r))
				fprintf(stderr, PROG ": %s: %s\n", c->path, strerror(-ret));
			unlink(c->path);
			free(c);
		}
	}
	ovl_free(ovl);
	free(ovl);
	if (ret)
		return ret;
	snprintf(path, pathlen, "%s", c->path);
	*st = c;
	return 0;
}

static void release_state(void *ctx, void *st)
{
	struct run *r = ctx;
	struct copy_state *c = st;

	if (r->srv) {
		server_remove(r->srv, (uint64_t)(uintptr_t)st);
		return;
	}
	unlink(c->path);
	free(c);
}

/* ------------------------------------------------------------ setting up */

static int open_base(struct run *r, const char *path)
{
	struct stat st;

	r->base_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->base_fd < 0 || fstat(r->base_fd, &st)) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(r->base_fd, BLKGETSIZE64, &r->size)) {
			fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
			return -errno;
		}
	} else if (S_ISREG(st.st_mode)) {
		r->size = (uint64_t)st.st_size;
	} else {
		fprintf(stderr, PROG ": %s: not a file or a block device\n", path);
		return -EINVAL;
	}
	return 0;
}

static int make_tmpdir(struct run *r)
{
	const char *t = getenv("TMPDIR");

	if (asprintf(&r->tmpdir, "%s/rqdisk-crash.XXXXXX", t && *t ? t : "/tmp") < 0) {
		r->tmpdir = NULL;
		return -ENOMEM;
	}
	if (!mkdtemp(r->tmpdir)) {
		fprintf(stderr, PROG ": cannot make a directory %s: %s\n", r->tmpdir,
			strerror(errno));
		free(r->tmpdir);
		r->tmpdir = NULL;
		return -errno;
	}
	return 0;
}

/* The FUSE mount, or copies: auto falls back to copies, saying so in one line. */
static int start_via(struct run *r, const char **via)
{
	char why[512];
	int ret, fd;

	*via = "copy";
	if (r->o->via == VIA_COPY)
		return 0;
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, sizeof(why), "/dev/fuse: %s", strerror(errno));
		ret = -ENODEV;
	} else {
		close(fd);
		ret = asprintf(&r->mnt, "%s/mnt", r->tmpdir) < 0 ? -ENOMEM : 0;
		if (ret)
			r->mnt = NULL;
		else if (mkdir(r->mnt, 0700))
			ret = -errno;
		if (!ret)
			ret = server_start(&r->srv, r->mnt, r->size, why, sizeof(why));
	}
	if (!ret) {
		*via = "fuse";
		return 0;
	}
	if (r->o->via == VIA_FUSE) {
		fprintf(stderr, PROG ": --via fuse: %s\n", why);
		return ret;
	}
	fprintf(stderr, PROG ": FUSE is not available (%s): states are written as copies (--via copy)\n",
		why);
	return 0;
}

static void cleanup(struct run *r)
{
	if (r->srv)
		server_stop(r->srv);
	r->srv = NULL;
	if (r->mnt) {
		rmdir(r->mnt);
		free(r->mnt);
		r->mnt = NULL;
	}
	if (r->tmpdir) {
		if (rmdir(r->tmpdir))
			fprintf(stderr, PROG ": cannot remove %s: %s\n", r->tmpdir, strerror(errno));
		free(r->tmpdir);
		r->tmpdir = NULL;
	}
}

/*
 * FILE, open, is BASE or LOG: writing the state there would truncate what
 * the state is read from (and the user's only copy of it).
 */
static const char *output_clobbers(const struct run *r, int fd)
{
	struct stat out, st;

	if (fstat(fd, &out))
		return NULL;
	if (!fstat(r->base_fd, &st) && st.st_dev == out.st_dev && st.st_ino == out.st_ino)
		return "BASE";
	if (!stat(r->o->log, &st) && st.st_dev == out.st_dev && st.st_ino == out.st_ino)
		return "LOG";
	return NULL;
}

/*
 * A file that is there in a directory someone else may write to (/tmp,
 * a group's directory, another user's): it is another user's (theirs to
 * read what is written to it), or a second name of a file elsewhere (a
 * hard link to one of ours, where the kernel's protected_hardlinks is
 * off): writing it would hand the state over, or write over that file.
 */
static bool planted(int fd, const char *path)
{
	char *dir = strdup(path);
	struct stat st, ds;
	bool ret = false, shared;

	if (dir && !fstat(fd, &st) && !stat(dirname(dir), &ds)) {
		shared = (ds.st_uid != geteuid() && ds.st_uid != 0) ||
			 (ds.st_mode & (S_IWGRP | S_IWOTH));
		ret = shared && (st.st_uid != geteuid() || (S_ISREG(st.st_mode) && st.st_nlink > 1));
	}
	free(dir);
	return ret;
}

/*
 * -o and --csv FILE: never through a symlink, nor into a file another
 * user put in a shared directory.  Run as root in /tmp, a link planted
 * there would have the state or the table written over whatever it names,
 * and a planted file would hand them to its owner; and never waiting on a
 * FIFO with no reader.  Truncated (--csv) only once taken.  -1 once said
 * in a line naming the option.
 */
static int open_output(const char *opt, const char *path, bool truncate)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	int err = errno;
	struct stat st;

	if (fd >= 0 && planted(fd, path)) {
		close(fd);
		fprintf(stderr, PROG ": %s %s: in a directory others may write to, another user's "
			"file or a second name of a file: refused\n", opt, path);
		return -1;
	}
	if (fd >= 0 && !fcntl(fd, F_SETFL, 0) && (!truncate || !ftruncate(fd, 0)))
		return fd;
	if (fd >= 0) {
		err = errno;
		close(fd);
	}
	if (err == ELOOP && !lstat(path, &st) && S_ISLNK(st.st_mode))
		fprintf(stderr, PROG ": %s %s: a symbolic link: refused (name the file itself)\n",
			opt, path);
	else
		fprintf(stderr, PROG ": %s %s: %s\n", opt, path,
			err == ENXIO ? "nothing reads it (a FIFO), or no device is behind it"
				     : strerror(err));
	return -1;
}

/* --state ID -o FILE: the state as a whole image (ovl_write_image truncates FILE). */
static int write_output(struct run *r)
{
	const char *same;
	struct ovl ovl;
	int fd, ret;

	if (build_ovl(r, &r->single, &ovl, false))
		return -EINVAL;
	fd = open_output("-o", r->o->output, false);
	if (fd < 0) {
		ovl_free(&ovl);
		return -EINVAL;
	}
	if ((same = output_clobbers(r, fd))) {
		fprintf(stderr, PROG ": -o %s is %s itself\n", r->o->output, same);
		close(fd);
		ovl_free(&ovl);
		return -EINVAL;
	}
	ret = ovl_write_image(&ovl, fd);
	if (close(fd) && !ret)
		ret = -errno;
	ovl_free(&ovl);
	if (!log_intact(r))
		return -EIO;
	if (ret)
		fprintf(stderr, PROG ": %s: %s\n", r->o->output, strerror(-ret));
	return ret;
}

/* --state ID: it names a state of the log, and one before any gap unless --past-gaps. */
static int load_state(struct run *r)
{
	struct crash_spec spec;
	char why[512], gap[96];
	int ret;

	ret = crash_id_parse(r->o->state, &r->single, why, sizeof(why));
	if (!ret)
		ret = crash_resolve(&r->log, &r->single, &spec, why, sizeof(why));
	if (ret) {
		fprintf(stderr, PROG ": %s\n", why);
		return ret;
	}
	r->single_pos = spec.pos;
	if (!r->o->gen.past_gaps && crash_log_past_gap(&r->log, spec.pos)) {
		crash_log_gap_text(&r->log, gap, sizeof(gap));
		fprintf(stderr, PROG ": state %s is past a gap in the log: %s (%s); "
			"--past-gaps builds it\n", r->o->state, gap, crash_log_gap_loss(&r->log));
		return -EINVAL;
	}
	return 0;
}

/* The points asked for: each must match something, or the run would check only the end. */
static int load_points(struct run *r)
{
	char why[512];

	if (crash_at_check(&r->log, &r->o->at, why, sizeof(why))) {
		fprintf(stderr, PROG ": %s\n", why);
		return -EINVAL;
	}
	if (r->o->at.flush_by_default && !r->log.nr_flushes)
		fprintf(stderr, PROG ": LOG has no FLUSH entries: its end is the only point "
			"(--at N for more)\n");
	return 0;
}

static int load(struct run *r)
{
	char why[512];
	int ret;

	ret = open_base(r, r->o->base);
	if (ret)
		return ret;
	ret = crash_log_open(r->o->log, r->size, &r->log, why, sizeof(why));
	if (ret) {
		fprintf(stderr, PROG ": %s\n", why);
		return ret;
	}
	return r->o->state ? load_state(r) : load_points(r);
}

/* One line for the points the gap keeps from being checked, and the same in the summary. */
static void say_skipped(struct run *r, struct report *rep)
{
	size_t n = r->gen.nr_skipped;
	char why[96], where[40] = "the start";

	if (rep && r->log.gap_kind != GAP_NONE)
		crash_log_gap_text(&r->log, rep->skipped_why, sizeof(rep->skipped_why));
	if (!n)
		return;
	crash_log_gap_text(&r->log, why, sizeof(why));
	if (r->log.gap_off >= 0)
		snprintf(where, sizeof(where), "entry %ld", r->log.gap_off);
	if (rep) {
		snprintf(rep->skipped_why, sizeof(rep->skipped_why), "%s", why);
		rep->skipped = n;
	}
	fprintf(stderr, PROG ": %zu point%s after %s skipped: %s (%s); --past-gaps checks them\n",
		n, n == 1 ? "" : "s", where, why, crash_log_gap_loss(&r->log));
}

/* A log cut short: its states are checked, but not what came after it; said, and in the summary. */
static void say_cut(struct run *r, struct report *rep)
{
	char why[160];

	if (!crash_log_cut(&r->log))
		return;
	crash_log_cut_text(&r->log, why, sizeof(why));
	if (rep)
		snprintf(rep->cut_why, sizeof(rep->cut_why), "%s", why);
	fprintf(stderr, PROG ": %s: %s; writes after it are not in the log, nor checked\n",
		r->o->log, why);
}

/*
 * The generator, and which of its states this run reports on: a shard's,
 * byte-identical ones folded (unless --no-dedup) into the first, whose
 * verdict rep (NULL for --list) hears of.  0, -ENOMEM (said).
 */
static int start_pick(struct run *r, struct report *rep)
{
	struct crash_gen_opts g = r->o->gen;

	if (!r->o->atomic_set)
		g.atomic = r->log.sectorsize;
	if (crash_gen_init(&r->gen, &r->log, &r->o->at, &g)) {
		fprintf(stderr, PROG ": out of memory\n");
		return -ENOMEM;
	}
	r->pick.gen = &r->gen;
	r->pick.shard = r->o->shard;
	if (!r->o->no_dedup) {
		dedup_init(&r->dedup, &r->log, rep);
		r->pick.dedup = &r->dedup;
	}
	say_skipped(r, rep);
	say_cut(r, rep);
	if (!rep)
		return 0;
	rep->dedup = !r->o->no_dedup;
	rep->on_checked = rep->dedup ? dedup_checked : NULL;
	rep->on_checked_ctx = &r->dedup;
	rep->shard_k = r->o->shard.k;
	rep->shard_n = r->o->shard.n;
	rep->total = crash_gen_total(&r->gen);
	if (r->o->shard.n) {
		/* a shard's share is known once the run's states are: about a 1/N of them */
		rep->total = rep->total / r->o->shard.n + 1;
		rep->total_about = true;
	}
	return 0;
}

static void stop_pick(struct run *r)
{
	r->gen_skipped = r->gen.nr_skipped;
	if (r->pick.dedup)
		dedup_free(&r->dedup);
	r->pick.dedup = NULL;
	crash_gen_free(&r->gen);
}

/* A shard with no state passes, and says why: the run has fewer checked states than shards. */
static void say_empty_shard(const struct run *r, uint64_t states)
{
	if (r->o->shard.n && !states)
		fprintf(stderr, PROG ": shard %lu/%lu has no states: the run checks %llu of its "
			"%llu states\n", r->o->shard.k, r->o->shard.n,
			(unsigned long long)r->pick.nr_checked, (unsigned long long)r->pick.nr_states);
}

/* --list: the IDs of the states the run (the shard) reports on, one a line, in its order. */
static int run_list(struct run *r)
{
	struct dedup_rep *folded;
	enum crash_class cls;
	struct crash_id id;
	uint64_t n = 0;
	char *text;
	int ret;

	ret = start_pick(r, NULL);
	while (!ret && (ret = crash_pick_next(&r->pick, &id, &cls, &folded)) == 1) {
		count_past_gap(r, &id);
		text = crash_id_format(&id);
		crash_id_free(&id);
		ret = text ? 0 : -ENOMEM;
		if (text && puts(text) < 0)
			ret = -EIO;
		free(text);
		n++;
	}
	if (ret == -ENOMEM)
		fprintf(stderr, PROG ": out of memory\n");
	if (!ret)
		say_empty_shard(r, n);
	stop_pick(r);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": cannot write the list: %s\n", strerror(errno));
		ret = -EIO;
	}
	if (!ret && !log_intact(r))
		ret = -EIO;
	return ret;
}

/*
 * What a run (or its list) leaves unchecked or unclear: points past a gap
 * skipped, states past one listed or checked all the same, a log cut
 * short.  Any of these makes its exit 3 at best: a harness that checks
 * the listed states one by one must not take their passing for an
 * all-clear.
 */
static bool run_unclear(const struct run *r)
{
	return r->gen_skipped || r->past_gap_states || crash_log_cut(&r->log);
}

static void noop_handler(int sig)
{
	(void)sig;
}

static int run_checks(struct run *r, struct report *rep, int *sig)
{
	struct check_opts co = {
		.args = r->o->check,
		.jobs = r->o->jobs,
		.timeout_s = r->o->timeout_s,
		.loop = r->o->loop,
	};
	struct check_source src = { r, next_state, build_state, release_state, marks_of };
	const char *via = "copy";
	uint64_t made = 0;
	int ret;

	co.exe = check_find(r->o->check[0]);
	if (!co.exe) {
		fprintf(stderr, PROG ": %s: no such program\n", r->o->check[0]);
		return -EINVAL;
	}
	if (r->o->state) {
		rep->total = 1;
		say_cut(r, rep);
		if (r->o->gen.past_gaps && crash_log_past_gap(&r->log, r->single_pos)) {
			crash_log_gap_text(&r->log, rep->skipped_why, sizeof(rep->skipped_why));
			r->past_gap_states = 1;
		}
	}
	ret = r->o->state ? 0 : start_pick(r, rep);
	if (!ret)
		ret = make_tmpdir(r);
	if (!ret)
		ret = start_via(r, &via);
	if (!ret) {
		co.tmpdir = r->tmpdir;
		rep->progress = rep->progress || r->o->progress;
		ret = check_run(&co, &src, rep);
	}
	rep->read_ns = r->srv ? server_read_ns(r->srv) : 0;
	rep->past_gaps = r->past_gap_states;
	rep->run_states = r->pick.nr_states;
	for (int c = 0; c < NR_CLASSES; c++)
		made += rep->made[c];
	if (!ret)
		say_empty_shard(r, made);
	cleanup(r);
	ovl_layer_put(r->durable);
	r->durable = NULL;
	stop_pick(r);
	free((char *)co.exe);
	if (ret > 0) {
		*sig = ret;
		return 0;
	}
	/* the last states were checked after the last next_state's look */
	if (!ret && !log_intact(r))
		ret = -EIO;
	if (!ret && report_print(rep, stdout, via, co.jobs)) {
		fprintf(stderr, PROG ": cannot write the report: %s\n", strerror(errno));
		return -EIO;
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct options o = { .jobs = 1, .timeout_s = DEFAULT_TIMEOUT_S, .gen.seed = 1 };
	struct run r = { .o = &o, .base_fd = -1 };
	struct report rep;
	FILE *csv = NULL;
	int csv_fd;
	sigset_t set;
	int ret, sig = 0, status = EXIT_TROUBLE;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret > 0 ? EXIT_CONSISTENT : EXIT_TROUBLE;
	check_signals(&set);
	signal(SIGCHLD, noop_handler);
	if (load(&r) || (o.state && check_missing(&o)))
		goto out;
	if (o.list) {
		status = run_list(&r) ? EXIT_TROUBLE : run_unclear(&r) ? EXIT_UNCHECKED : EXIT_CONSISTENT;
		goto out;
	}
	if (o.output && write_output(&r))
		goto out;
	if (!o.check) {
		status = EXIT_CONSISTENT;
		goto out;
	}
	if (o.csv && (csv_fd = open_output("--csv", o.csv, true)) < 0)
		goto out;
	if (o.csv && !(csv = fdopen(csv_fd, "w"))) {
		fprintf(stderr, PROG ": %s: %s\n", o.csv, strerror(errno));
		close(csv_fd);
		goto out;
	}
	if (report_init(&rep, csv)) {
		fprintf(stderr, PROG ": %s: %s\n", o.csv, strerror(errno));
		goto out;
	}
	/*
	 * Only a run of checkers waits for SIGINT, SIGTERM and SIGHUP, to end
	 * them and clean up: blocked here, before any thread starts (the FUSE
	 * server's inherits the mask), the main thread alone takes them.
	 * Before, and for --list and --state -o, they end the program as they
	 * end any tool.
	 */
	sigprocmask(SIG_BLOCK, &set, NULL);
	ret = run_checks(&r, &rep, &sig);
	if (!ret && !sig)
		status = report_nr_failed(&rep) ? EXIT_FAILED :
			 rep.skipped || r.past_gap_states || rep.cut_why[0] ? EXIT_UNCHECKED :
						    EXIT_CONSISTENT;
	report_free(&rep);
out:
	if (csv && fclose(csv) && status != EXIT_TROUBLE) {
		fprintf(stderr, PROG ": %s: %s\n", o.csv, strerror(errno));
		status = EXIT_TROUBLE;
	}
	crash_id_free(&r.single);
	crash_log_free(&r.log);
	if (r.base_fd >= 0)
		close(r.base_fd);
	free(o.at.marks);
	free(o.at.mark_lens);
	if (sig) {
		/* stopped by a signal: say so the way the shell expects, as the signal */
		signal(sig, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
	}
	return status;
}
