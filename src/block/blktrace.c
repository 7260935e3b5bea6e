/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blktrace.c - the queue traced in blktrace's binary format: one struct
 * blk_io_trace per event, in host byte order, buffered into a file per
 * "cpu" as blktrace writes one per CPU: NAME.blktrace.0 alone on the 2.6
 * queue, NAME.blktrace.N for each hardware queue N on a multi-queue one
 * (the cpu field is the hardware queue), so that blkparse -i NAME, btt and
 * iowatcher read it unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blk_mq.h"
#include "blkcg.h"
#include "blktrace.h"

/*
 * The device every record names: 240,0 in the kernel's dev_t layout
 * (major << 20 | minor), which is how blkparse decodes it.  rqdisk's disk
 * has no device number of its own; 240 is the first of the block majors
 * devices.txt leaves for local use.  Not 253 or 254: btt takes those for
 * device-mapper remappers and reports Q2C as "Q2Cdm" without D2C.
 */
#define BLK_TRACE_MINORBITS 20
#define BLK_TRACE_DEV ((240u << BLK_TRACE_MINORBITS) | 0u)

#define BLK_TRACE_BUFSIZE (1u << 16) /* records reach the file in 64 KiB writes */
#define BLK_TRACE_COMM_LEN 16        /* the kernel's TASK_COMM_LEN: blkparse copies this much */
#define BLK_TRACE_PIDS_MIN 64
#define BLK_TRACE_HELD_END (-2) /* ends q->blk_trace_last_hw (a failed dup leaves -1) */
#define BLK_TRACE_PDU_MAX 8     /* the longest pdu of an I/O record: a split's sector */

_Static_assert(sizeof(struct blk_io_trace) == 48, "blkparse reads 48-byte records");

/*
 * One "cpu" of the trace: its file and its records' sequence.  blkparse
 * reads a file per cpu, drops a record whose cpu is not its file's, and
 * expects each cpu's sequence to run 1, 2, 3 ... with no gap.
 */
struct blk_trace_cpu {
	FILE *out;
	uint32_t sequence; /* of its last event record */
	bool made;         /* made by this trace (not a restart): removed if setup fails */
};

struct blk_trace {
	struct blk_trace_cpu *cpus;
	unsigned int nr_cpus;
	uint64_t start_ns; /* q->clock when tracing started: record times count from it */
	int error;         /* the first write error, -errno; later records are dropped */
	uint32_t *pids;    /* pids named so far, stored as pid + 1 (0 is a free slot) */
	size_t pids_size;  /* a power of two */
	size_t nr_pids;
};

static uint64_t blk_trace_now(struct request_queue *q)
{
	return blk_clock_now(q->clock) - q->blk_trace->start_ns;
}

static void blk_trace_write(struct blk_trace *bt, FILE *out, const void *buf, size_t len)
{
	if (bt->error)
		return;
	if (fwrite(buf, 1, len, out) != len)
		bt->error = errno ? -errno : -EIO;
}

/* t goes to the file of its cpu (t->cpu, below bt->nr_cpus). */
static void blk_trace_emit(struct blk_trace *bt, const struct blk_io_trace *t, const void *pdu)
{
	FILE *out = bt->cpus[t->cpu].out;

	blk_trace_write(bt, out, t, sizeof(*t));
	if (t->pdu_len)
		blk_trace_write(bt, out, pdu, t->pdu_len);
}

/*
 * The trace's "cpu" of what the submitter does now (a bio's Q, X, B, M
 * and F): on a multi-queue queue, the hardware queue its software queue
 * maps to, as the kernel records the CPU that queued it; 0 on the 2.6
 * queue, or outside a submission.
 */
static unsigned int blk_trace_submit_cpu(const struct request_queue *q)
{
	if (!queue_is_mq(q) || !q->mq->submit_ctx)
		return 0;
	return q->mq->submit_ctx->hctx->queue_num;
}

/*
 * A request's: the hardware queue it is on, its submitter's until one
 * dispatches it (an elevator serves every hardware queue; the one that
 * takes it moves it there), then that one's, for its D, R and C.
 */
static unsigned int blk_trace_rq_cpu(const struct request *rq)
{
	return queue_is_mq(rq->q) && rq->mq_hctx ? rq->mq_hctx->queue_num : 0;
}

static size_t pid_slot(const struct blk_trace *bt, uint32_t key)
{
	size_t i = (key * 2654435761u) & (bt->pids_size - 1);

	while (bt->pids[i] && bt->pids[i] != key)
		i = (i + 1) & (bt->pids_size - 1);
	return i;
}

/* Keep the table at most half full; a failed grow only costs names. */
static bool pids_grow(struct blk_trace *bt)
{
	size_t old_size = bt->pids_size;
	uint32_t *old = bt->pids;
	size_t size = old_size ? old_size * 2 : BLK_TRACE_PIDS_MIN;
	uint32_t *pids = calloc(size, sizeof(*pids));

	if (!pids)
		return false;
	bt->pids = pids;
	bt->pids_size = size;
	for (size_t i = 0; i < old_size; i++)
		if (old[i])
			bt->pids[pid_slot(bt, old[i])] = old[i];
	free(old);
	return true;
}

/* True the first time pid is seen in this trace. */
static bool pid_first_seen(struct blk_trace *bt, pid_t pid)
{
	uint32_t key = (uint32_t)pid + 1;
	size_t i;

	if ((bt->nr_pids + 1) * 2 > bt->pids_size && !pids_grow(bt))
		return false;
	i = pid_slot(bt, key);
	if (bt->pids[i])
		return false;
	bt->pids[i] = key;
	bt->nr_pids++;
	return true;
}

/* /proc/PID/comm without its newline, or "unknown" once the process is gone. */
static void pid_comm(pid_t pid, char comm[BLK_TRACE_COMM_LEN])
{
	char path[64];
	ssize_t n = -1;
	int fd;

	memset(comm, 0, BLK_TRACE_COMM_LEN);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, BLK_TRACE_COMM_LEN - 1);
		close(fd);
	}
	if (n <= 0)
		strcpy(comm, "unknown");
	else
		comm[strcspn(comm, "\n")] = '\0';
}

/*
 * The pid-to-name note blkparse needs before a pid's first record.  Like
 * the kernel's, it takes no sequence number: blkparse handles notes as it
 * reads them and checks the sequence of the other records only.
 */
static void blk_trace_note_process(struct request_queue *q, pid_t pid, unsigned int cpu)
{
	struct blk_trace *bt = q->blk_trace;
	char comm[BLK_TRACE_COMM_LEN];
	struct blk_io_trace t = {
		.magic = BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION,
		.time = blk_trace_now(q),
		.action = BLK_TN_PROCESS,
		.pid = (uint32_t)pid,
		.device = BLK_TRACE_DEV,
		.cpu = cpu, /* the file of the record it names, read before that record */
		.pdu_len = BLK_TRACE_COMM_LEN,
	};

	pid_comm(pid, comm);
	blk_trace_emit(bt, &t, comm);
}

void blk_add_trace_msg(struct request_queue *q, const char *text)
{
	struct blk_trace *bt = q->blk_trace;
	size_t len = strnlen(text, 127);
	struct blk_io_trace t = {
		.magic = BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION,
		.action = BLK_TN_MESSAGE,
		.pid = (uint32_t)getpid(),
		.device = BLK_TRACE_DEV,
		.pdu_len = (uint16_t)len,
	};

	if (!bt)
		return;
	t.time = blk_trace_now(q);
	blk_trace_emit(bt, &t, text);
}

/* The category bits of an I/O, as the kernel's blktrace sets them. */
static uint32_t blk_trace_category(enum req_op op, unsigned int flags)
{
	uint32_t cat = op_is_write(op) ? BLK_TC_WRITE : BLK_TC_READ;

	if (op == REQ_OP_FLUSH || (flags & (REQ_BARRIER | REQ_PREFLUSH)))
		cat |= BLK_TC_FLUSH;
	if (flags & REQ_FUA)
		cat |= BLK_TC_FUA;
	if (op == REQ_OP_READ || (flags & REQ_SYNC))
		cat |= BLK_TC_SYNC;
	if (op == REQ_OP_DISCARD || op == REQ_OP_WRITE_ZEROES)
		cat |= BLK_TC_DISCARD;
	return BLK_TC_ACT(cat);
}

/* What a record says of a bio or a request. */
struct blk_trace_io {
	unsigned int cpu; /* below the trace's nr_cpus */
	sector_t sector;
	unsigned int nr_sectors;
	enum req_op op;
	unsigned int flags;
	pid_t pid;
	int error; /* -errno */
	uint64_t cgroup_id; /* the kernel's id of its cgroup, 0 for the root's or not known */
};

/*
 * The id a record names its cgroup by: the kernel's (Linux's blktrace
 * records cgroup_id(), 4.14 on), where q->blk_trace_cgroup asks for it
 * (Linux's blk_cgroup trace option, off by default: blkparse before 1.3
 * takes a marked record for a bad one), the cgroup is not the root and its
 * id is known; 0 leaves the record unmarked, as the root's.
 */
static uint64_t blk_trace_cgroup_id(const struct request_queue *q, const struct blkcg *cg)
{
	return q->blk_trace_cgroup && cg ? cg->id : 0;
}

static void blk_trace_add(struct request_queue *q, const struct blk_trace_io *io, uint32_t what,
			  const void *pdu, uint16_t pdu_len)
{
	struct blk_trace *bt = q->blk_trace;
	unsigned int cpu = io->cpu < bt->nr_cpus ? io->cpu : 0;
	unsigned char cg_pdu[sizeof(io->cgroup_id) + BLK_TRACE_PDU_MAX];
	struct blk_io_trace t;

	if (pid_first_seen(bt, io->pid))
		blk_trace_note_process(q, io->pid, cpu);
	/*
	 * From a cgroup: marked __BLK_TA_CGROUP, its id (host byte order, as
	 * the header) ahead of the record's own pdu, where blkparse and the
	 * kernel put it.
	 */
	if (io->cgroup_id && pdu_len <= BLK_TRACE_PDU_MAX) {
		memcpy(cg_pdu, &io->cgroup_id, sizeof(io->cgroup_id));
		if (pdu_len)
			memcpy(cg_pdu + sizeof(io->cgroup_id), pdu, pdu_len);
		what |= __BLK_TA_CGROUP;
		pdu = cg_pdu;
		pdu_len += sizeof(io->cgroup_id);
	}
	t = (struct blk_io_trace){
		.magic = BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION,
		.sequence = ++bt->cpus[cpu].sequence,
		.time = blk_trace_now(q),
		.sector = io->sector,
		.bytes = io->nr_sectors << SECTOR_SHIFT,
		.action = what | blk_trace_category(io->op, io->flags),
		.pid = (uint32_t)io->pid,
		.device = BLK_TRACE_DEV,
		.cpu = cpu,
		/* the kernel's int error in 16 bits: -EIO reads 65531 */
		.error = (uint16_t)io->error,
		.pdu_len = pdu_len,
	};
	blk_trace_emit(bt, &t, pdu);
}

static struct blk_trace_io bio_trace_io(const struct request_queue *q, const struct bio *bio)
{
	return (struct blk_trace_io){ .cpu = blk_trace_submit_cpu(q), .sector = bio->bi_sector,
				      .nr_sectors = bio_sectors(bio), .op = bio->bi_op,
				      .flags = bio->bi_flags, .pid = bio->bi_pid,
				      .cgroup_id = blk_trace_cgroup_id(q, bio->bi_blkcg) };
}

void __blk_add_trace_bio(struct request_queue *q, const struct bio *bio, uint32_t what)
{
	struct blk_trace_io io = bio_trace_io(q, bio);

	blk_trace_add(q, &io, what, NULL, 0);
}

/*
 * Where the request is now, except a completion, which covers the whole
 * range first issued (the completion position has moved over it by then).
 */
void __blk_add_trace_rq(struct request_queue *q, const struct request *rq, uint32_t what)
{
	struct blk_trace_io io = { .cpu = blk_trace_rq_cpu(rq), .sector = blk_rq_pos(rq),
				   .nr_sectors = blk_rq_sectors(rq), .op = rq->cmd_op,
				   .flags = rq->cmd_flags, .pid = rq->pid,
				   .cgroup_id = blk_trace_cgroup_id(q, rq->blkcg) };

	if (what == BLK_TA_COMPLETE) {
		io.sector = rq->issue_sector;
		io.nr_sectors = rq->issue_nr_sectors;
		io.error = rq->errors;
	}
	blk_trace_add(q, &io, what, NULL, 0);
}

/* bio is the first part; its pdu, big-endian as blkparse reads it, is where the rest starts. */
void __blk_add_trace_split(struct request_queue *q, const struct bio *bio, sector_t at)
{
	struct blk_trace_io io = bio_trace_io(q, bio);
	uint64_t pdu = htobe64(at);

	blk_trace_add(q, &io, BLK_TA_SPLIT, &pdu, sizeof(pdu));
}

/* The number of files (cpus) a trace of q writes: one per hardware queue. */
static unsigned int blk_trace_nr_cpus(const struct request_queue *q)
{
	return queue_is_mq(q) ? q->mq->set->nr_hw_queues : 1;
}

/* The stopped trace's file of cpu, held for a restart, or -1. */
static int blk_trace_last_fd(const struct request_queue *q, unsigned int cpu)
{
	const int *fd = q->blk_trace_last_hw;

	if (!cpu)
		return q->blk_trace_last;
	for (unsigned int n = 1; fd && *fd != BLK_TRACE_HELD_END; n++, fd++)
		if (n == cpu)
			return *fd;
	return -1;
}

/* The stopped trace's files let go: no restart will come (a deleted one's space comes back). */
static void blk_trace_forget_last(struct request_queue *q)
{
	if (q->blk_trace_last >= 0)
		close(q->blk_trace_last);
	q->blk_trace_last = -1;
	for (int *fd = q->blk_trace_last_hw; fd && *fd != BLK_TRACE_HELD_END; fd++)
		if (*fd >= 0)
			close(*fd);
	free(q->blk_trace_last_hw);
	q->blk_trace_last_hw = NULL;
}

/*
 * NAME.blktrace.CPU that is there, taken again (to be truncated) only
 * where it is the file q's last trace made for that cpu, which q holds
 * open since it stopped (so its inode cannot have been freed and reused):
 * the same inode, a regular file with no other link (through which the
 * new trace would be read).  Otherwise -1 with errno EEXIST, or ELOOP for
 * a symlink.
 */
static int blk_trace_reopen(struct request_queue *q, unsigned int cpu, const char *path)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int last = blk_trace_last_fd(q, cpu);
	struct stat st, held;

	if (fd < 0) {
		if (errno != ELOOP)
			errno = EEXIST;
		return -1;
	}
	if (last >= 0 && !fstat(fd, &st) && !fstat(last, &held) && st.st_dev == held.st_dev &&
	    st.st_ino == held.st_ino && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
	    !fcntl(fd, F_SETFL, 0))
		return fd;
	close(fd);
	errno = EEXIST;
	return -1;
}

/*
 * A trace file, made new (mode 0600), or q's own last one of that cpu
 * reopened (*made false), never through a symlink: a file that is there
 * may be another user's, made in a shared directory to read the daemon's
 * I/O, and a symlink would have it write wherever it points.
 */
static FILE *blk_trace_create(struct request_queue *q, unsigned int cpu, const char *path,
			      bool *made)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f;

	*made = fd >= 0;
	if (fd < 0 && errno == EEXIST) /* O_EXCL says EEXIST for a symlink too */
		fd = blk_trace_reopen(q, cpu, path);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		int err = errno;

		close(fd);
		if (*made)
			unlink(path);
		errno = err;
	}
	return f;
}

static int blk_trace_path(char *path, size_t len, const char *name, unsigned int cpu)
{
	return (size_t)snprintf(path, len, "%s.blktrace.%u", name, cpu) >= len ? -ENAMETOOLONG : 0;
}

/* Setup failed: the files opened so far closed, those it made removed. */
static void blk_trace_close_failed(struct blk_trace *bt, const char *name)
{
	char path[PATH_MAX];

	for (unsigned int n = 0; n < bt->nr_cpus && bt->cpus[n].out; n++) {
		fclose(bt->cpus[n].out);
		if (bt->cpus[n].made && !blk_trace_path(path, sizeof(path), name, n))
			unlink(path);
	}
}

static void blk_trace_why(char *why, size_t whylen, const char *path, int err)
{
	const char *what = strerror(-err);

	if (err == -EEXIST)
		what = "it exists: name a new trace";
	else if (err == -ELOOP)
		what = "a symbolic link: name a new trace";
	else if (err == -ENAMETOOLONG)
		what = "the name is too long";
	snprintf(why, whylen, "trace %s: %s", path, what);
}

/*
 * Every file of the trace, or none: each made new or q's own restarted.
 * As blktrace does, a restart begins the files again: they are truncated
 * once all are open, so that a refusal leaves the stopped trace whole.
 */
static int blk_trace_open_files(struct request_queue *q, struct blk_trace *bt, const char *name,
				char *why, size_t whylen)
{
	char path[PATH_MAX];
	int err = 0;

	for (unsigned int n = 0; n < bt->nr_cpus && !err; n++) {
		err = blk_trace_path(path, sizeof(path), name, n);
		if (!err && !(bt->cpus[n].out = blk_trace_create(q, n, path, &bt->cpus[n].made)))
			err = -errno;
	}
	for (unsigned int n = 0; n < bt->nr_cpus && !err; n++) {
		if (!bt->cpus[n].made && ftruncate(fileno(bt->cpus[n].out), 0)) {
			err = -errno;
			blk_trace_path(path, sizeof(path), name, n);
		}
		setvbuf(bt->cpus[n].out, NULL, _IOFBF, BLK_TRACE_BUFSIZE);
	}
	if (err) {
		blk_trace_why(why, whylen, err == -ENAMETOOLONG ? name : path, err);
		blk_trace_close_failed(bt, name);
	}
	return err;
}

static void blk_trace_free(struct blk_trace *bt)
{
	free(bt->cpus);
	free(bt->pids);
	free(bt);
}

int __blk_trace_setup(struct request_queue *q, const char *name, char *why, size_t whylen)
{
	struct blk_trace *bt;
	int ret;

	if (q->blk_trace) {
		snprintf(why, whylen, "trace %s: already tracing", name);
		return -EBUSY;
	}
	bt = calloc(1, sizeof(*bt));
	if (bt) {
		bt->nr_cpus = blk_trace_nr_cpus(q);
		bt->cpus = calloc(bt->nr_cpus, sizeof(*bt->cpus));
	}
	if (!bt || !bt->cpus) {
		snprintf(why, whylen, "trace %s: out of memory", name);
		free(bt);
		return -ENOMEM;
	}
	ret = blk_trace_open_files(q, bt, name, why, whylen);
	if (ret) {
		blk_trace_free(bt);
		return ret;
	}
	blk_trace_forget_last(q); /* this one is the last trace now */
	bt->start_ns = blk_clock_now(q->clock);
	q->blk_trace = bt;
	return 0;
}

int blk_trace_setup(struct request_queue *q, const char *name, char *why, size_t whylen)
{
	int ret;

	blk_queue_lock(q);
	ret = __blk_trace_setup(q, name, why, whylen);
	blk_queue_unlock(q);
	return ret;
}

/*
 * The stopped trace's files held for a restart, in q->blk_trace_last and
 * q->blk_trace_last_hw (a failed dup or allocation only costs that).
 */
static void blk_trace_hold(struct request_queue *q, const struct blk_trace *bt)
{
	int *hw = bt->nr_cpus > 1 ? malloc(bt->nr_cpus * sizeof(*hw)) : NULL;

	q->blk_trace_last = fcntl(fileno(bt->cpus[0].out), F_DUPFD_CLOEXEC, 0);
	if (!hw)
		return;
	for (unsigned int n = 1; n < bt->nr_cpus; n++)
		hw[n - 1] = fcntl(fileno(bt->cpus[n].out), F_DUPFD_CLOEXEC, 0);
	hw[bt->nr_cpus - 1] = BLK_TRACE_HELD_END;
	q->blk_trace_last_hw = hw;
}

int __blk_trace_remove(struct request_queue *q)
{
	struct blk_trace *bt = q->blk_trace;
	int ret;

	if (!bt)
		return 0;
	q->blk_trace = NULL;
	ret = bt->error;
	blk_trace_hold(q, bt);
	for (unsigned int n = 0; n < bt->nr_cpus; n++)
		if (fclose(bt->cpus[n].out) && !ret)
			ret = -errno;
	blk_trace_free(bt);
	return ret;
}

int blk_trace_remove(struct request_queue *q)
{
	int ret;

	blk_queue_lock(q);
	ret = __blk_trace_remove(q);
	blk_queue_unlock(q);
	return ret;
}

void blk_trace_cleanup(struct request_queue *q)
{
	blk_trace_remove(q);
	blk_trace_forget_last(q);
}

int blk_trace_set_name(struct request_queue *q, const char *name)
{
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	free(q->blk_trace_name);
	q->blk_trace_name = copy;
	blk_trace_forget_last(q); /* the next trace is another file */
	return 0;
}
