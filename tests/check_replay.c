/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_replay.c - the replay engine: same input, same numbers; the textbook
 * properties of the elevators at scale on the hdd model; iolog parsing; the
 * multi-queue queue: as deterministic, one hardware queue the 2.6 queue's
 * numbers, each I/O on its CPU's hardware queue.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/blktrace_api.h>

#include "fake_driver.h"
#include "replay.h"

#define MS 1000000ull
#define SECTORS_1G (2ull * 1024 * 1024)
#define READ_EXPIRE_MS 500 /* deadline's default */

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

static struct replay_trace *trace_new(size_t nr)
{
	struct replay_trace *t = calloc(1, sizeof(*t));

	ck_assert_ptr_nonnull(t);
	t->ios = calloc(nr, sizeof(*t->ios));
	ck_assert_ptr_nonnull(t->ios);
	t->nr = nr;
	t->capacity = SECTORS_1G;
	t->max_bytes = 4096;
	return t;
}

static void trace_free(struct replay_trace *t)
{
	replay_trace_free(t);
	free(t);
}

static void set_io(struct replay_io *io, enum req_op op, sector_t sector, unsigned int n)
{
	io->op = op;
	io->sector = sector;
	io->nr_sectors = n;
	io->pid = 1;
}

/* Random 4 KiB reads (and writes, one in write_every) over 1 GiB. */
static struct replay_trace *random_trace(size_t nr, unsigned int write_every)
{
	struct replay_trace *t = trace_new(nr);
	uint64_t x = 1;

	for (size_t i = 0; i < nr; i++) {
		enum req_op op = write_every && i % write_every == 0 ? REQ_OP_WRITE : REQ_OP_READ;

		set_io(&t->ios[i], op, lcg(&x) % (SECTORS_1G / 8) * 8, 8);
	}
	return t;
}

/* Most reads in the first 10 MiB, one in 33 at the far end: the starvation test. */
static struct replay_trace *hot_and_far_trace(size_t nr)
{
	struct replay_trace *t = trace_new(nr);
	uint64_t x = 3;

	for (size_t i = 0; i < nr; i++) {
		sector_t s = lcg(&x) % 2560 * 8;

		if (i % 33 == 0)
			s = SECTORS_1G - 8 - s;
		set_io(&t->ios[i], REQ_OP_READ, s, 8);
	}
	return t;
}

static void run(const struct replay_trace *t, const char *elv, const char *model,
		unsigned int depth, struct replay_result *res)
{
	struct replay_config cfg = { .elevator = elv, .model = model, .depth = depth };
	char why[256] = "";

	blk_set_default_limits(&cfg.limits);
	ck_assert_msg(replay_run(t, &cfg, res, why, sizeof(why)) == 0, "%s: %s", elv, why);
}

/* The same on the multi-queue queue with hw hardware queues of 64 tags. */
static void run_mq(const struct replay_trace *t, const char *elv, const char *model,
		   unsigned int depth, unsigned int hw, struct replay_result *res)
{
	struct replay_config cfg = { .elevator = elv, .model = model, .depth = depth,
				     .hw_queues = hw };
	char why[256] = "";

	blk_set_default_limits(&cfg.limits);
	ck_assert_msg(replay_run(t, &cfg, res, why, sizeof(why)) == 0, "%s: %s", elv, why);
	ck_assert_uint_eq(res->nr_hw_queues, hw);
}

static void assert_same_run(const struct replay_result *a, const struct replay_result *b,
			    const char *what)
{
	ck_assert_msg(a->requests == b->requests && a->merges == b->merges &&
			      a->end_ns == b->end_ns && a->seek_sectors == b->seek_sectors &&
			      a->errors == b->errors,
		      "%s: %llu/%llu requests, end %llu/%llu, seek %llu/%llu", what,
		      (unsigned long long)a->requests, (unsigned long long)b->requests,
		      (unsigned long long)a->end_ns, (unsigned long long)b->end_ns,
		      (unsigned long long)a->seek_sectors, (unsigned long long)b->seek_sectors);
	for (int d = 0; d < 2; d++) {
		ck_assert_uint_eq(a->lat[d].nr, b->lat[d].nr);
		ck_assert_msg(!memcmp(a->lat[d].ns, b->lat[d].ns, a->lat[d].nr * sizeof(uint64_t)),
			      "%s: the %s latencies differ", what, d ? "write" : "read");
	}
}

static uint64_t max_ns(const struct replay_lat *lat)
{
	struct lat_summary s;

	ck_assert_int_eq(replay_lat_summary(lat, &s), 0);
	return s.max;
}

START_TEST(same_input_same_numbers)
{
	struct replay_trace *t = random_trace(3000, 4);

	for (int e = 0; e < fake_nr_elevators(); e++) { /* every elevator, from the registry */
		struct replay_result a, b;

		run(t, fake_elevator(e), "hdd", 16, &a);
		run(t, fake_elevator(e), "hdd", 16, &b);
		ck_assert_uint_eq(a.requests, b.requests);
		ck_assert_uint_eq(a.end_ns, b.end_ns);
		ck_assert_uint_eq(a.seek_sectors, b.seek_sectors);
		for (int d = 0; d < 2; d++) {
			ck_assert_uint_eq(a.lat[d].nr, b.lat[d].nr);
			ck_assert(!memcmp(a.lat[d].ns, b.lat[d].ns, a.lat[d].nr * sizeof(uint64_t)));
		}
		replay_result_free(&a);
		replay_result_free(&b);
	}
	trace_free(t);
}
END_TEST

START_TEST(every_io_completes_once)
{
	struct replay_trace *t = random_trace(2000, 3);
	struct replay_result res;

	t->ios[100].op = REQ_OP_FLUSH;
	t->ios[100].nr_sectors = 0;
	t->ios[200].flags = REQ_BARRIER;
	run(t, "deadline", "ssd", 8, &res);
	/* two flushes are not data: 1998 reads and writes, each counted once */
	ck_assert_uint_eq(res.lat[0].nr + res.lat[1].nr, 1999);
	ck_assert_uint_eq(res.bytes, 1999 * 4096);
	ck_assert_uint_eq(res.barriers, 2);
	ck_assert_uint_le(res.requests + res.merges, 2000 + 2); /* a barrier write adds its preflush */
	ck_assert_uint_ge(res.requests, 1000);
	replay_result_free(&res);
	trace_free(t);
}
END_TEST

START_TEST(open_loop_honours_issue_times)
{
	struct replay_trace *t = trace_new(3);
	struct replay_result res;

	for (int i = 0; i < 3; i++) {
		set_io(&t->ios[i], REQ_OP_READ, (sector_t)i * 1000, 8);
		t->ios[i].time = (uint64_t)i * 5 * MS;
	}
	run(t, "noop", "none", 0, &res);
	ck_assert_uint_eq(res.end_ns - res.start_ns, 10 * MS);
	ck_assert_uint_eq(max_ns(&res.lat[0]), 0);
	replay_result_free(&res);
	trace_free(t);
}
END_TEST

START_TEST(sstf_and_clook_seek_less_than_noop)
{
	struct replay_trace *t = random_trace(5000, 0);
	struct replay_result noop, sstf, clook;

	run(t, "noop", "hdd", 32, &noop);
	run(t, "sstf", "hdd", 32, &sstf);
	run(t, "clook", "hdd", 32, &clook);
	/* sorting a queue of 32 cuts the travel several times over, and the time with it */
	ck_assert_uint_lt(sstf.seek_sectors * 4, noop.seek_sectors);
	ck_assert_uint_lt(clook.seek_sectors * 4, noop.seek_sectors);
	ck_assert_uint_lt(sstf.end_ns, noop.end_ns);
	ck_assert_uint_lt(clook.end_ns, noop.end_ns);
	replay_result_free(&noop);
	replay_result_free(&sstf);
	replay_result_free(&clook);
	trace_free(t);
}
END_TEST

START_TEST(deadline_bounds_what_sstf_starves)
{
	struct replay_trace *t = hot_and_far_trace(20000);
	struct replay_result dl, sstf;

	run(t, "deadline", "hdd", 32, &dl);
	run(t, "sstf", "hdd", 32, &sstf);
	/* an expired read waits at most a batch or two more */
	ck_assert_uint_lt(max_ns(&dl.lat[0]), 2 * READ_EXPIRE_MS * MS);
	/* far reads wait while near ones keep coming */
	ck_assert_uint_gt(max_ns(&sstf.lat[0]), 4 * max_ns(&dl.lat[0]));
	replay_result_free(&dl);
	replay_result_free(&sstf);
	trace_free(t);
}
END_TEST

static int load_text(const char *text, struct replay_trace *t, char *why, size_t len)
{
	FILE *f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
	int ret;

	ck_assert_ptr_nonnull(f);
	memset(t, 0, sizeof(*t));
	ret = replay_load_iolog(f, "log", t, why, len);
	fclose(f);
	return ret;
}

START_TEST(iolog_v2_and_v3)
{
	struct replay_trace t;
	char why[256] = "";

	ck_assert_int_eq(load_text("fio version 2 iolog\n/f add\n/f open\n/f read 4096 8192\n"
				   "/f wait 1500 0\n/f write 0 512\n/f sync 0 0\n/f trim 8192 4096\n"
				   "/f close\n",
				   &t, why, sizeof(why)), 0);
	ck_assert_uint_eq(t.nr, 4);
	ck_assert_int_eq(t.ios[0].op, REQ_OP_READ);
	ck_assert_uint_eq(t.ios[0].sector, 8);
	ck_assert_uint_eq(t.ios[0].nr_sectors, 16);
	ck_assert_uint_eq(t.ios[0].time, 0);
	ck_assert_int_eq(t.ios[1].op, REQ_OP_WRITE);
	ck_assert_uint_eq(t.ios[1].time, 1500000);
	ck_assert_int_eq(t.ios[2].op, REQ_OP_FLUSH);
	ck_assert_int_eq(t.ios[3].op, REQ_OP_DISCARD);
	ck_assert_uint_eq(t.capacity, 24);
	ck_assert_uint_eq(t.max_bytes, 8192);
	replay_trace_free(&t);

	ck_assert_int_eq(load_text("fio version 3 iolog\n0 /f add\n250 /f read 0 4096\n"
				   "1250 /f write 1048576 4096\n",
				   &t, why, sizeof(why)), 0);
	ck_assert_uint_eq(t.nr, 2);
	ck_assert_uint_eq(t.ios[0].time, 250000);
	ck_assert_uint_eq(t.ios[1].time, 1250000);
	ck_assert_uint_eq(t.ios[1].sector, 2048);
	replay_trace_free(&t);
}
END_TEST

/* A Q record of a read from pid at sector, marked with cgroup id cg unless it is 0. */
static void write_q(FILE *f, uint32_t pid, uint64_t sector, uint64_t cg)
{
	struct blk_io_trace rec = {
		.magic = BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION,
		.sector = sector,
		.bytes = 4096,
		.action = __BLK_TA_QUEUE | BLK_TC_ACT(BLK_TC_READ) | (cg ? __BLK_TA_CGROUP : 0),
		.pid = pid,
		.pdu_len = cg ? sizeof(cg) : 0,
	};

	ck_assert_uint_eq(fwrite(&rec, sizeof(rec), 1, f), 1);
	if (cg)
		ck_assert_uint_eq(fwrite(&cg, sizeof(cg), 1, f), 1);
}

/*
 * A blktrace's cgroup ids (Q records marked __BLK_TA_CGROUP) reach the
 * bios: one cgroup per id, named /ID (group_weights weighs it by that
 * name), the root's id (1) and unmarked records in the root (NULL).
 */
START_TEST(blktrace_cgroup_ids_carried)
{
	char name[] = "/tmp/check_replay_cg_XXXXXX", why[256] = "";
	struct replay_trace t;
	int fd = mkstemp(name);
	FILE *f = fdopen(fd, "w");

	ck_assert_ptr_nonnull(f);
	write_q(f, 10, 0, 4242);
	write_q(f, 11, 8, 1);
	write_q(f, 12, 16, 0);
	write_q(f, 13, 24, 4242);
	write_q(f, 14, 32, 77);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(replay_load(name, &t, why, sizeof(why)) == 0, "%s", why);
	unlink(name);
	ck_assert_uint_eq(t.nr, 5);
	ck_assert_ptr_nonnull(t.ios[0].blkcg);
	ck_assert_str_eq(blkcg_path(t.ios[0].blkcg), "/4242");
	ck_assert_ptr_null(t.ios[1].blkcg);
	ck_assert_ptr_null(t.ios[2].blkcg);
	ck_assert_ptr_eq(t.ios[3].blkcg, t.ios[0].blkcg);
	ck_assert_str_eq(blkcg_path(t.ios[4].blkcg), "/77");
	replay_trace_free(&t);
}
END_TEST

/*
 * A trace names as many cgroups as it likes: each id is looked up in time
 * that does not grow with the cgroups seen (100000 distinct ids took
 * minutes with a lookup that walked every cgroup; now well under a
 * second, against the hostile cases' 30 s).
 */
START_TEST(blktrace_many_cgroup_ids_load_fast)
{
	char name[] = "/tmp/check_replay_cgs_XXXXXX", why[256] = "";
	enum { NR = 100000 };
	struct replay_trace t;
	int fd = mkstemp(name);
	FILE *f = fdopen(fd, "w");

	ck_assert_ptr_nonnull(f);
	for (uint64_t i = 0; i < NR; i++)
		write_q(f, 10, 8 * i, 2 + i);
	write_q(f, 10, 8 * NR, 2); /* the first id again */
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(replay_load(name, &t, why, sizeof(why)) == 0, "%s", why);
	unlink(name);
	ck_assert_uint_eq(t.nr, NR + 1);
	ck_assert_str_eq(blkcg_path(t.ios[NR - 1].blkcg), "/100001");
	ck_assert_uint_eq(t.cgroups.nr, NR);
	ck_assert_ptr_eq(t.ios[NR].blkcg, t.ios[0].blkcg);
	replay_trace_free(&t);
}
END_TEST

static void assert_bad_iolog(const char *text, const char *reason)
{
	struct replay_trace t;
	char why[256] = "";

	ck_assert_int_eq(load_text(text, &t, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, reason), "'%s' lacks '%s'", why, reason);
	replay_trace_free(&t);
}

START_TEST(bad_iologs_name_the_line)
{
	assert_bad_iolog("fio version 1 iolog\n", "log: not a fio iolog of version 2 or 3");
	assert_bad_iolog("fio version 2 iolog\n/f read 100 4096\n",
			 "log:2: offset 100 length 4096 are not whole 512-byte sectors");
	assert_bad_iolog("fio version 2 iolog\n/f add\n/f frob 0 4096\n",
			 "log:3: unknown action 'frob'");
	assert_bad_iolog("fio version 2 iolog\n/f read\n", "log:2: 'read' needs an offset");
	assert_bad_iolog("fio version 3 iolog\n/f read 0 4096\n", "log:2: not an iolog v3 line");
}
END_TEST

START_TEST(iolog_times_never_go_back_or_wrap)
{
	/* each of these hung the replay: a time behind the clock was never due */
	assert_bad_iolog("fio version 3 iolog\n0 /f add\n2000 /f read 0 4096\n"
			 "1000 /f read 8192 4096\n",
			 "log:4: time 1000 us goes back before 2000 us");
	assert_bad_iolog("fio version 3 iolog\n0 /f add\n2000 /f read 0 4096\n1000 /f close\n",
			 "log:4: time 1000 us goes back before 2000 us");
	assert_bad_iolog("fio version 2 iolog\n/f read 0 4096\n/f wait 18446744073709551 0\n"
			 "/f wait 18446744073709551 0\n/f read 8192 4096\n",
			 "log:3: the waits add up past the longest trace replayed "
			 "(4611686018427387 us)");
	assert_bad_iolog("fio version 2 iolog\n/f wait 4611686018427387 0\n/f wait 1 0\n",
			 "log:3: the waits add up past");
	assert_bad_iolog("fio version 3 iolog\n18446744073709551615 /f read 0 4096\n",
			 "log:2: time 18446744073709551615 us is past the longest trace replayed");
	assert_bad_iolog("fio version 3 iolog\n99999999999999999999 /f read 0 4096\n",
			 "log:2: '99999999999999999999' is not a number");
}
END_TEST

START_TEST(iolog_numbers_are_strict)
{
	struct replay_trace t;
	char why[256] = "";

	assert_bad_iolog("fio version 2 iolog\n/f read -512 4096\n",
			 "log:2: '-512' is not a number");
	assert_bad_iolog("fio version 2 iolog\n/f read +512 4096\n",
			 "log:2: '+512' is not a number");
	assert_bad_iolog("fio version 2 iolog\n/f read 0 4096x\n",
			 "log:2: '4096x' is not a number");
	assert_bad_iolog("fio version 2 iolog\n/f wait -1 0\n", "log:2: '-1' is not a number");
	assert_bad_iolog("fio version 2 iolog\n/f read 18446744073709551104 1024\n",
			 "log:2: offset 18446744073709551104 length 1024 ends past 2^64 bytes");
	assert_bad_iolog("fio version 2 iolog\n/f read 0 4294967296\n",
			 "log:2: length 4294967296 is more than 2147483648 bytes");
	assert_bad_iolog("fio version 2 iolog\n/f wait\n", "log:2: 'wait' needs a time");
	/* the last sector a 64-bit byte offset reaches is still a disk's */
	ck_assert_int_eq(load_text("fio version 2 iolog\n/f read 18446744073709550592 512\n", &t,
				   why, sizeof(why)), 0);
	ck_assert_uint_eq(t.capacity, REPLAY_MAX_SECTOR);
	replay_trace_free(&t);
}
END_TEST

/* A trace built by hand may still go back in time: the engine submits it late, never hangs. */
START_TEST(replay_submits_a_late_io_at_once)
{
	struct replay_trace *t = trace_new(3);
	struct replay_result res;

	for (int i = 0; i < 3; i++)
		set_io(&t->ios[i], REQ_OP_READ, (sector_t)i * 1000, 8);
	t->ios[0].time = 5 * MS;
	t->ios[1].time = 1 * MS;
	t->ios[2].time = UINT64_MAX; /* past the clock's end: due at its end */
	run(t, "noop", "none", 0, &res);
	ck_assert_uint_eq(res.lat[0].nr, 3);
	ck_assert_uint_eq(res.lat[0].ns[1], 0); /* the late one went with the one before */
	ck_assert_uint_eq(res.errors, 0);
	replay_result_free(&res);
	trace_free(t);
}
END_TEST

START_TEST(refused_ios_are_errors_not_latencies)
{
	struct replay_trace *t = trace_new(3);
	struct replay_result res;

	set_io(&t->ios[0], REQ_OP_READ, 0, 8);
	set_io(&t->ios[1], REQ_OP_READ, 64, 0); /* no sectors: the queue refuses it, -EINVAL */
	set_io(&t->ios[2], REQ_OP_WRITE, 128, 8);
	run(t, "deadline", "hdd", 0, &res);
	ck_assert_uint_eq(res.errors, 1);
	ck_assert_uint_eq(res.lat[0].nr, 1);
	ck_assert_uint_eq(res.lat[1].nr, 1);
	ck_assert_uint_eq(res.bytes, 2 * 4096);
	replay_result_free(&res);
	trace_free(t);
}
END_TEST

/*
 * The slowest hdd adds up to about 1e19 ns a request: the clock stops at its
 * end, never wraps.  The slowest ssd takes hours a request, at most.  The
 * device's times stop at 2^63 ns; an elevator's own wake-up (bfq's idling,
 * now + slice_idle) may take the clock a little past, as replay.c leaves
 * room for, never round.
 */
#define ELV_WAIT_MAX_NS (3600ull * 1000000000ull) /* an hour: far above any elevator's wait */

START_TEST(slowest_models_end)
{
	const char *models[] = {
		"hdd:rpm=1,cylinders=1e9,seek_knee=0,seek_c=1e4,seek_e=1e4,overhead=1e4,depth=4",
		"ssd:bandwidth=0.001,read_us=1e9,write_us=1e9,flush_us=1e9,channels=1",
	};
	struct replay_trace *t = random_trace(200, 3);

	for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
		for (int e = 0; e < fake_nr_elevators(); e++) {
			struct replay_result res;

			run(t, fake_elevator(e), models[m], 4, &res);
			ck_assert_uint_eq(res.lat[0].nr + res.lat[1].nr, 200);
			ck_assert_msg(res.end_ns <= (1ull << 63) + ELV_WAIT_MAX_NS,
				      "%s, %s: the clock ran past 2^63 and its waits: %llu",
				      fake_elevator(e), models[m], (unsigned long long)res.end_ns);
			if (m == 0) {
				ck_assert_uint_ge(res.end_ns, 1ull << 62);
				ck_assert_uint_ge(max_ns(&res.lat[0]), 1ull << 60);
			}
			replay_result_free(&res);
		}
	}
	trace_free(t);
}
END_TEST

START_TEST(capacity_below_the_trace_is_refused)
{
	struct replay_trace *t = random_trace(10, 0);
	struct replay_config cfg = { .elevator = "noop", .model = "hdd", .capacity = 8 };
	struct replay_result res;
	char why[256] = "";

	blk_set_default_limits(&cfg.limits);
	ck_assert_int_eq(replay_run(t, &cfg, &res, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "below the trace's extent"), "%s", why);
	trace_free(t);
}
END_TEST

/*
 * Four hardware queues, the I/Os from four CPUs: two runs take the same
 * steps, and every request the disk took was dispatched by one of them.
 */
START_TEST(mq_same_input_same_numbers)
{
	struct replay_trace *t = random_trace(3000, 4);

	for (size_t i = 0; i < t->nr; i++)
		t->ios[i].cpu = (unsigned int)(i % 4);
	for (int e = 0; e < fake_nr_elevators(); e++) {
		struct replay_result a, b;
		uint64_t sum = 0;

		run_mq(t, fake_elevator(e), "hdd", 16, 4, &a);
		run_mq(t, fake_elevator(e), "hdd", 16, 4, &b);
		assert_same_run(&a, &b, fake_elevator(e));
		ck_assert(!memcmp(a.hw_dispatched, b.hw_dispatched, 4 * sizeof(uint64_t)));
		for (int n = 0; n < 4; n++)
			sum += a.hw_dispatched[n];
		ck_assert_uint_eq(sum, a.requests);
		ck_assert_uint_eq(a.lat[0].nr + a.lat[1].nr, 3000);
		replay_result_free(&a);
		replay_result_free(&b);
	}
	trace_free(t);
}
END_TEST

/*
 * One hardware queue gives the 2.6 queue's numbers, request for request,
 * under every elevator, open and closed loop, where no more is out or
 * queued at once than either lets through: the hardware queue asks the
 * device before it takes a request (the elevator chooses as late as the
 * 2.6 queue's request_fn does), and a plugged batch runs it where the 2.6
 * queue's unplug threshold would.
 */
START_TEST(mq_one_queue_is_the_26_queue)
{
	static const struct {
		const char *model;
		unsigned int depth;
	} runs[] = { { "hdd", 0 }, { "hdd", 16 }, { "ssd", 16 }, { "ssd:depth=1", 16 } };
	struct replay_trace *t = random_trace(2000, 4);

	/*
	 * A flush every 100 I/Os, so that no elevator ever holds more than
	 * nr_requests (the multi-queue queue's scheduler tags) at once.
	 */
	for (size_t i = 0; i < t->nr; i++) {
		t->ios[i].time = i * 2 * MS;
		if (i % 100 == 99)
			set_io(&t->ios[i], REQ_OP_FLUSH, 0, 0);
	}
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		for (int e = 0; e < fake_nr_elevators(); e++) {
			struct replay_result rq, mq;
			char what[96];

			snprintf(what, sizeof(what), "%s, %s, depth %u", fake_elevator(e),
				 runs[r].model, runs[r].depth);
			run(t, fake_elevator(e), runs[r].model, runs[r].depth, &rq);
			run_mq(t, fake_elevator(e), runs[r].model, runs[r].depth, 1, &mq);
			assert_same_run(&rq, &mq, what);
			ck_assert_uint_eq(mq.hw_dispatched[0], mq.requests);
			replay_result_free(&rq);
			replay_result_free(&mq);
		}
	}
	trace_free(t);
}
END_TEST

/*
 * Without an elevator a request stays on its CPU's hardware queue: reads
 * from CPUs 0, 1 and 2 on two hardware queues are dispatched by queue 0
 * (CPUs 0 and 2) and queue 1 (CPU 1), one request each.
 */
START_TEST(mq_none_dispatches_each_cpu_on_its_queue)
{
	struct replay_trace *t = random_trace(999, 0);
	struct replay_result res;

	for (size_t i = 0; i < t->nr; i++)
		t->ios[i].cpu = (unsigned int)(i % 3);
	run_mq(t, "none", "ssd", 8, 2, &res);
	ck_assert_uint_eq(res.requests, 999);
	ck_assert_uint_eq(res.hw_dispatched[0], 666);
	ck_assert_uint_eq(res.hw_dispatched[1], 333);
	replay_result_free(&res);
	trace_free(t);
}
END_TEST

static Suite *replay_suite(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, same_input_same_numbers);
	tcase_add_test(tc, every_io_completes_once);
	tcase_add_test(tc, open_loop_honours_issue_times);
	tcase_add_test(tc, sstf_and_clook_seek_less_than_noop);
	tcase_add_test(tc, deadline_bounds_what_sstf_starves);
	tcase_add_test(tc, iolog_v2_and_v3);
	tcase_add_test(tc, blktrace_cgroup_ids_carried);
	tcase_add_test(tc, bad_iologs_name_the_line);
	tcase_add_test(tc, mq_same_input_same_numbers);
	tcase_add_test(tc, mq_one_queue_is_the_26_queue);
	tcase_add_test(tc, mq_none_dispatches_each_cpu_on_its_queue);
	suite_add_tcase(s, tc);

	/* hostile input: each of these once hung, so a short timeout */
	tc = tcase_create("hostile");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, iolog_times_never_go_back_or_wrap);
	tcase_add_test(tc, iolog_numbers_are_strict);
	tcase_add_test(tc, replay_submits_a_late_io_at_once);
	tcase_add_test(tc, refused_ios_are_errors_not_latencies);
	tcase_add_test(tc, slowest_models_end);
	tcase_add_test(tc, capacity_below_the_trace_is_refused);
	tcase_add_test(tc, blktrace_many_cgroup_ids_load_fast);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(replay_suite());
}
