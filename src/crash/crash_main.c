/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_main.c - rqdisk-crash: a run over the crash states of a log, listed or each checked. */
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
#include "crash_joint_run.h"
#include "crash_report.h"
#include "crash_run.h"

/* EXIT_UNCHECKED: none failed, but points were skipped (a gap in the log): not an all-clear */
enum { EXIT_CONSISTENT = 0, EXIT_FAILED = 1, EXIT_TROUBLE = 2, EXIT_UNCHECKED = 3 };

/* Whether LOG is still what was read; one line when it is not. */
bool log_intact(const struct run *r)
{
	char why[512];

	if (!crash_log_intact(&r->log, r->o->log, why, sizeof(why)))
		return true;
	fprintf(stderr, PROG ": %s\n", why);
	return false;
}

/* A state this run reports on, past a gap (--past-gaps): counted, its verdict no all-clear. */
void count_past_gap(struct run *r, const struct crash_id *id)
{
	struct crash_spec spec;
	char why[512];

	if (r->o->gen.past_gaps && !crash_resolve(&r->log, id, &spec, why, sizeof(why)) &&
	    crash_log_past_gap(&r->log, spec.pos))
		r->past_gap_states++;
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
	/* ranges past the disk's end are another disk's: nothing of this one would be aimed at */
	if (crash_aim_check(&r->o->aim, r->size / 512, why, sizeof(why))) {
		fprintf(stderr, PROG ": %s\n", why);
		return -EINVAL;
	}
	return 0;
}

/* The report's hook: the writes a failing state lost in the sectors aimed at. */
static char *name_lost(void *ctx, const char *id)
{
	const struct run *r = ctx;

	return crash_aim_lost(&r->o->aim, &r->log, id);
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
	g.aim = r->o->aim.given.nr ? &r->o->aim.may_lose : NULL;
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
	if (r->o->aim.given.nr) {
		rep->name_lost = name_lost;
		rep->name_lost_ctx = r;
	}
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

	if (joint_wanted(argc, argv))
		return joint_main(argc, argv);
	ret = parse_options(argc, argv, &o);
	if (ret) {
		crash_aim_free(&o.aim);
		free(o.at.marks);
		free(o.at.mark_lens);
		return ret > 0 ? EXIT_CONSISTENT : EXIT_TROUBLE;
	}
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
	crash_aim_free(&o.aim);
	if (sig) {
		/* stopped by a signal: say so the way the shell expects, as the signal */
		signal(sig, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
	}
	return status;
}
