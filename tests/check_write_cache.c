/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_write_cache.c - the write-cache filter over a memory backend whose
 * requests end when the test says, on a virtual clock: when writes, reads,
 * flushes and FUA writes end, what reaches the backend and in what order,
 * and what a power cut leaves there.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "device.h"
#include "stack_harness.h"

#define MS 1000000ull
#define START_NS SH_START_NS
#define CAPACITY 16384u /* sectors: 8 MiB */
#define MAX_BIOS 64

/* A queue with noop over the stack of specs (top first) over mem, a write cache in it. */
static void setup_stack(struct stack_harness *h, const char *const *specs, unsigned int nr)
{
	sh_setup(h, specs, nr, &sh_mem_ops, CAPACITY, MAX_BIOS);
	sh_mem->no_overlap = true; /* their order would be the device's */
	ck_assert(h->stack.limits.has_cache);
	ck_assert_ptr_nonnull(sh_layer(&h->stack, "write-cache"));
}

static void setup(struct stack_harness *h, const char *spec)
{
	setup_stack(h, &spec, 1);
}

static unsigned int wr(struct stack_harness *h, sector_t sector, unsigned int nr, int fill)
{
	return sh_submit(h, REQ_OP_WRITE, 0, sector, nr, fill);
}

static unsigned int rd(struct stack_harness *h, sector_t sector, unsigned int nr)
{
	return sh_submit(h, REQ_OP_READ, 0, sector, nr, 0xee);
}

static unsigned int flush(struct stack_harness *h)
{
	return sh_submit(h, REQ_OP_FLUSH, REQ_SYNC, 0, 0, 0);
}

/* End the backend's nth pending request (0: the oldest). */
static void complete_nth(struct stack_harness *h, unsigned int n)
{
	struct sh_mem_rq *p = TAILQ_FIRST(&sh_mem->fifo);

	while (p && n--)
		p = TAILQ_NEXT(p, link);
	ck_assert_ptr_nonnull(p);
	blk_queue_lock(h->q);
	sh_mem_finish(h->stack.bottom, p);
	blk_queue_unlock(h->q);
	sh_kick(h);
}

/* End the backend's oldest request, a read, in two parts: its first sectors, then the rest. */
static void complete_read_in_two(struct stack_harness *h, unsigned int first)
{
	struct sh_mem_rq *p = TAILQ_FIRST(&sh_mem->fifo);
	struct request *rq;
	unsigned int total;

	ck_assert_ptr_nonnull(p);
	rq = p->rq;
	total = blk_rq_sectors(rq);
	ck_assert_int_eq(rq->cmd_op, REQ_OP_READ);
	ck_assert_uint_lt(first, total);
	blk_queue_lock(h->q);
	TAILQ_REMOVE(&sh_mem->fifo, p, link);
	sh_mem->nr_pending--;
	sh_copy(rq, p->snap, true); /* all its data, before any of it ends */
	free(p->snap);
	dev_end(h->stack.bottom, rq, 0, first);
	dev_end(h->stack.bottom, rq, 0, total - first);
	blk_queue_unlock(h->q);
	sh_kick(h);
}

static void complete_all(struct stack_harness *h)
{
	while (sh_mem->nr_pending)
		complete_nth(h, 0);
}

/* Whether nr sectors of the medium from sector are all byte b. */
static bool medium_is(sector_t sector, unsigned int nr, int b)
{
	const unsigned char *p = (unsigned char *)sh_mem->data + (sector << SECTOR_SHIFT);

	for (size_t i = 0; i < (size_t)nr << SECTOR_SHIFT; i++)
		if (p[i] != (unsigned char)b)
			return false;
	return true;
}

static bool buf_is(const void *data, size_t off, size_t len, int b)
{
	const unsigned char *buf = data;

	for (size_t i = off; i < off + len; i++)
		if ((unsigned char)buf[i] != (unsigned char)b)
			return false;
	return true;
}

static unsigned int log_count(enum req_op op)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < sh_mem->nr_log; i++)
		n += sh_mem->log[i].op == op;
	return n;
}

static void attr_store(struct stack_harness *h, const char *name, const char *val, int want)
{
	ck_assert_int_eq(sh_store(h, sh_layer(&h->stack, "write-cache"), name, val), want);
	sh_kick(h);
}

static const char *attr_show(struct stack_harness *h, const char *name)
{
	return sh_show(h, sh_layer(&h->stack, "write-cache"), name);
}

/* A write ends once in the cache, before the backend sees a thing; a read then gets it. */
START_TEST(write_ends_before_the_backend_and_reads_back)
{
	struct stack_harness h;
	unsigned int w, r;

	setup(&h, "write-cache:expire=0");
	w = wr(&h, 8, 8, 0xa1);
	ck_assert(h.ended_at[w]);
	ck_assert_int_eq(h.error[w], 0);
	ck_assert_uint_eq(sh_mem->nr_log, 0);
	ck_assert(medium_is(8, 8, 0));
	ck_assert_str_eq(attr_show(&h, "dirty"), "4096\n");

	/* sectors 0-23: the medium's zeros, the cache's 8-15, zeros again */
	r = rd(&h, 0, 24);
	ck_assert(h.ended_at[r]);
	ck_assert(buf_is(h.buf[r], 0, 4096, 0));
	ck_assert(buf_is(h.buf[r], 4096, 4096, 0xa1));
	ck_assert(buf_is(h.buf[r], 8192, 4096, 0));
	ck_assert_uint_eq(log_count(REQ_OP_WRITE), 0);
	ck_assert(strstr(attr_show(&h, "stats"), "read_hits 1\n"));

	/* and the data stays the cache's: nothing is written back, with no reason to */
	sh_run_until(&h, START_NS + 3600 * 1000 * MS);
	ck_assert_uint_eq(log_count(REQ_OP_WRITE), 0);
	attr_store(&h, "cut", "all", 0); /* what teardown leaves: nothing dirty */
	sh_teardown(&h);
}
END_TEST

/* A flush ends only once the backend has the data and then took a flush itself. */
START_TEST(flush_ends_after_writeback_and_a_flush_below)
{
	struct stack_harness h;
	unsigned int w, f;

	setup(&h, "write-cache:expire=0");
	sh_mem->hold = true;
	w = wr(&h, 0, 8, 0xb2);
	ck_assert(h.ended_at[w]);
	f = flush(&h);
	ck_assert(!h.ended_at[f]);
	ck_assert_uint_eq(sh_mem->nr_log, 1); /* the writeback, not yet the flush */
	ck_assert_int_eq(sh_mem->log[0].op, REQ_OP_WRITE);
	complete_nth(&h, 0);
	ck_assert(medium_is(0, 8, 0xb2));
	ck_assert(!h.ended_at[f]);
	ck_assert_uint_eq(sh_mem->nr_log, 2);
	ck_assert_int_eq(sh_mem->log[1].op, REQ_OP_FLUSH);
	ck_assert_uint_eq(sh_mem->writes_done_at_flush, 1);
	complete_nth(&h, 0);
	ck_assert(h.ended_at[f]);
	ck_assert_int_eq(h.error[f], 0);
	ck_assert_str_eq(attr_show(&h, "dirty"), "0\n");
	sh_teardown(&h);
}
END_TEST

/*
 * A FUA write ends only when the backend has it, with FUA; the older cached
 * data of its range never lands after it, even when its writeback is below.
 */
START_TEST(fua_write_goes_through_after_older_data)
{
	struct stack_harness h;
	unsigned int w1, w2, f;

	setup(&h, "write-cache:expire=10");
	sh_mem->hold = true;
	w1 = wr(&h, 0, 8, 0x11);
	ck_assert(h.ended_at[w1]);
	sh_run_until(&h, START_NS + 10 * MS); /* expired: its writeback goes down */
	ck_assert_uint_eq(sh_mem->nr_pending, 1);
	w2 = sh_submit(&h, REQ_OP_WRITE, REQ_FUA, 4, 8, 0x22);
	ck_assert(!h.ended_at[w2]);
	ck_assert_uint_eq(sh_mem->nr_pending, 1); /* waits for the writeback of 0-7 */
	complete_nth(&h, 0);
	ck_assert_uint_eq(sh_mem->nr_pending, 1);
	ck_assert_int_eq(sh_mem->log[1].op, REQ_OP_WRITE);
	ck_assert(sh_mem->log[1].flags & REQ_FUA);
	ck_assert(!h.ended_at[w2]);
	complete_nth(&h, 0);
	ck_assert(h.ended_at[w2]);
	ck_assert(medium_is(0, 4, 0x11));
	ck_assert(medium_is(4, 8, 0x22));

	/* cached data under a FUA write is superseded: it never lands */
	wr(&h, 16, 8, 0x33);
	w2 = sh_submit(&h, REQ_OP_WRITE, REQ_FUA, 16, 8, 0x44);
	complete_all(&h);
	ck_assert(h.ended_at[w2]);
	f = flush(&h);
	complete_all(&h);
	ck_assert(h.ended_at[f]);
	ck_assert(medium_is(16, 8, 0x44));
	ck_assert_uint_eq(log_count(REQ_OP_WRITE), 3); /* the writeback, and the two FUA writes */
	ck_assert_uint_eq(sh_mem->log[2].sector, 16);
	ck_assert(sh_mem->log[2].flags & REQ_FUA);
	sh_teardown(&h);
}
END_TEST

/* Overlapping writes keep their order: the last one is what the backend has. */
START_TEST(overlapping_writes_last_wins)
{
	struct stack_harness h;
	unsigned int w3, f;

	setup(&h, "write-cache:expire=10,depth=4");
	sh_mem->hold = true;
	wr(&h, 0, 16, 0xa0);
	wr(&h, 4, 4, 0xb0);
	wr(&h, 6, 4, 0xc0);
	sh_run_until(&h, START_NS + 10 * MS); /* every extent expired: written back at once */
	ck_assert_uint_eq(sh_mem->nr_pending, 4); /* 0-3, 4-5, 6-9, 10-15 */
	/* a newer write over one in writeback waits for it, then lands after it */
	w3 = wr(&h, 0, 16, 0xd0);
	ck_assert(!h.ended_at[w3]);
	complete_all(&h);
	ck_assert(h.ended_at[w3]);
	ck_assert(medium_is(0, 4, 0xa0));
	ck_assert(medium_is(4, 2, 0xb0));
	ck_assert(medium_is(6, 4, 0xc0));
	ck_assert(medium_is(10, 6, 0xa0));
	f = flush(&h);
	complete_all(&h);
	complete_all(&h);
	ck_assert(h.ended_at[f]);
	ck_assert(medium_is(0, 16, 0xd0));
	sh_teardown(&h);
}
END_TEST

/* A read below while the data it overlaps is written back still gets the cache's data. */
START_TEST(read_racing_a_writeback_gets_the_newer_data)
{
	struct stack_harness h;
	unsigned int r;

	setup(&h, "write-cache:expire=10");
	sh_mem->hold = true;
	wr(&h, 0, 8, 0x5a);
	r = rd(&h, 0, 8); /* the device reads the old zeros now */
	sh_run_until(&h, START_NS + 10 * MS);
	ck_assert_uint_eq(sh_mem->nr_pending, 2);
	complete_nth(&h, 1); /* the writeback lands first */
	ck_assert(medium_is(0, 8, 0x5a));
	complete_nth(&h, 0);
	ck_assert(h.ended_at[r]);
	ck_assert(buf_is(h.buf[r], 0, 4096, 0x5a));
	sh_teardown(&h);
}
END_TEST

/* cut all: what was not flushed is not on the backend, and I/O fails until restore. */
START_TEST(cut_all_drops_and_fails_until_restore)
{
	struct stack_harness h;
	unsigned int f, w, r;

	setup(&h, "write-cache:expire=0");
	wr(&h, 0, 8, 0x01);
	f = flush(&h);
	ck_assert(h.ended_at[f]);
	wr(&h, 8, 8, 0x02);
	wr(&h, 0, 4, 0x03);
	ck_assert_str_eq(attr_show(&h, "state"), "on\n");
	attr_store(&h, "cut", "all", 0);
	ck_assert_str_eq(attr_show(&h, "state"), "off\n");
	ck_assert(medium_is(0, 8, 0x01));
	ck_assert(medium_is(8, 8, 0));
	ck_assert(strstr(attr_show(&h, "stats"), "dropped 6144\n"));
	ck_assert_str_eq(attr_show(&h, "dirty"), "0\n");

	unsigned int before = sh_mem->nr_log;

	w = wr(&h, 32, 8, 0x04);
	r = rd(&h, 0, 8);
	f = flush(&h);
	ck_assert(h.ended_at[w] && h.ended_at[r] && h.ended_at[f]);
	ck_assert_int_eq(h.error[w], -EIO);
	ck_assert_int_eq(h.error[r], -EIO);
	ck_assert_int_eq(h.error[f], -EIO);
	ck_assert_uint_eq(sh_mem->nr_log, before); /* nothing reached the backend */

	attr_store(&h, "restore", "2", -EINVAL);
	attr_store(&h, "cut", "some", -EINVAL);
	attr_store(&h, "restore", "1", 0);
	ck_assert_str_eq(attr_show(&h, "state"), "on\n");
	w = wr(&h, 32, 8, 0x05);
	r = rd(&h, 0, 8);
	f = flush(&h);
	ck_assert_int_eq(h.error[w], 0);
	ck_assert_int_eq(h.error[r], 0);
	ck_assert_int_eq(h.error[f], 0);
	ck_assert(buf_is(h.buf[r], 0, 4096, 0x01));
	ck_assert(medium_is(32, 8, 0x05));
	sh_teardown(&h);
}
END_TEST

/* 32 writes of 8 sectors, 16 apart, each its own byte; a cut; the medium afterwards. */
static void cut_after_writes(struct stack_harness *h, const char *spec, const char *how, char *out)
{
	setup(h, spec);
	for (unsigned int i = 0; i < 32; i++)
		wr(h, (sector_t)i * 16, 8, 0x40 + (int)i);
	attr_store(h, "cut", how, 0);
	ck_assert_str_eq(attr_show(h, "state"), "off\n"); /* the persisted ones landed first */
	memcpy(out, sh_mem->data, 32 * 16 * SECTOR_SIZE);
	attr_store(h, "restore", "1", 0);
}

/* random: each write all there or not at all, some of each, the same for the same seed. */
START_TEST(cut_random_is_a_reproducible_subset)
{
	static char a[32 * 16 * SECTOR_SIZE], b[32 * 16 * SECTOR_SIZE], c[32 * 16 * SECTOR_SIZE];
	struct stack_harness h;
	unsigned int kept = 0;

	cut_after_writes(&h, "write-cache:expire=0,seed=7", "random", a);
	sh_teardown(&h);
	cut_after_writes(&h, "write-cache:expire=0,seed=7", "random", b);
	sh_teardown(&h);
	cut_after_writes(&h, "write-cache:expire=0,seed=8", "random", c);
	sh_teardown(&h);
	ck_assert(!memcmp(a, b, sizeof(a)));
	ck_assert(memcmp(a, c, sizeof(a))); /* another seed, another crash */
	for (unsigned int i = 0; i < 32; i++) {
		const char *w = a + (size_t)i * 16 * SECTOR_SIZE;
		bool there = buf_is(w, 0, 8 * SECTOR_SIZE, 0x40 + (int)i);

		ck_assert_msg(there || buf_is(w, 0, 8 * SECTOR_SIZE, 0), "write %u in part", i);
		ck_assert(buf_is(w, 8 * SECTOR_SIZE, 8 * SECTOR_SIZE, 0));
		kept += there;
	}
	ck_assert_uint_gt(kept, 0);
	ck_assert_uint_lt(kept, 32);
}
END_TEST

/* torn: as random, and one kept write only in part: a prefix of whole units. */
static void check_torn(const char *spec, unsigned int unit_sectors)
{
	static char a[32 * 16 * SECTOR_SIZE];
	struct stack_harness h;
	unsigned int torn = 0;

	cut_after_writes(&h, spec, "torn", a);
	for (unsigned int i = 0; i < 32; i++) {
		const char *w = a + (size_t)i * 16 * SECTOR_SIZE;
		unsigned int n = 0;

		while (n < 8 && buf_is(w, (size_t)n * SECTOR_SIZE, SECTOR_SIZE, 0x40 + (int)i))
			n++;
		ck_assert_msg(buf_is(w, (size_t)n * SECTOR_SIZE, (size_t)(16 - n) * SECTOR_SIZE, 0),
			      "write %u: not a prefix", i);
		if (n && n < 8) {
			ck_assert_uint_eq(n % unit_sectors, 0);
			torn++;
		}
	}
	ck_assert_uint_eq(torn, 1);
	ck_assert_ptr_nonnull(strstr(attr_show(&h, "stats"), "torn "));
	ck_assert_ptr_null(strstr(attr_show(&h, "stats"), "torn 0\n"));
	sh_teardown(&h);
}

START_TEST(cut_torn_keeps_a_prefix_at_the_unit)
{
	check_torn("write-cache:expire=0,seed=3", 1);
	check_torn("write-cache:expire=0,seed=3,atomic=2048", 4);
}
END_TEST

/* expire on the virtual clock: written back at the expiry, not a nanosecond before. */
START_TEST(expire_writes_back_on_time)
{
	struct stack_harness h;

	setup(&h, "write-cache:expire=50");
	sh_mem->hold = true;
	wr(&h, 0, 8, 0x77);
	sh_run_until(&h, START_NS + 50 * MS - 1);
	ck_assert_uint_eq(sh_mem->nr_log, 0);
	sh_run_until(&h, START_NS + 50 * MS);
	ck_assert_uint_eq(sh_mem->nr_log, 1);
	ck_assert_uint_eq(sh_mem->log[0].at, START_NS + 50 * MS);
	complete_all(&h);
	ck_assert(medium_is(0, 8, 0x77));
	ck_assert_str_eq(attr_show(&h, "dirty"), "0\n");
	sh_teardown(&h);
}
END_TEST

/* A full cache: the next write waits until writeback frees room. */
START_TEST(full_cache_makes_writes_wait)
{
	struct stack_harness h;
	unsigned int last;

	setup(&h, "write-cache:size=1,expire=0,depth=2");
	sh_mem->hold = true;
	for (unsigned int i = 0; i < 16; i++) /* 16 x 62 KiB: 992 KiB of 1 MiB */
		ck_assert(h.ended_at[wr(&h, (sector_t)i * 256, 124, 0x10 + (int)i)]);
	/* over half full: writeback began, no more than depth at once */
	ck_assert_uint_eq(sh_mem->nr_pending, 2);
	last = wr(&h, 4096, 128, 0x99); /* 64 KiB: 32 too many */
	ck_assert(!h.ended_at[last]);
	complete_nth(&h, 0);
	ck_assert(h.ended_at[last]);
	ck_assert_int_eq(h.error[last], 0);
	complete_all(&h);
	flush(&h);
	complete_all(&h);
	for (unsigned int i = 0; i < 16; i++)
		ck_assert(medium_is((sector_t)i * 256, 124, 0x10 + (int)i));
	ck_assert(medium_is(4096, 128, 0x99));
	sh_teardown(&h);
}
END_TEST

/* What was below when the power went ends with -EIO: the device lost power with it. */
START_TEST(cut_fails_what_is_below)
{
	struct stack_harness h;
	unsigned int r, w;

	setup(&h, "write-cache:expire=0");
	sh_mem->hold = true;
	r = rd(&h, 0, 8);
	w = sh_submit(&h, REQ_OP_WRITE, REQ_FUA, 64, 8, 0x66);
	ck_assert_uint_eq(sh_mem->nr_pending, 2);
	attr_store(&h, "cut", "all", 0);
	ck_assert(!h.ended_at[r] && !h.ended_at[w]);
	complete_all(&h);
	ck_assert_int_eq(h.error[r], -EIO);
	ck_assert_int_eq(h.error[w], -EIO);
	ck_assert(medium_is(64, 8, 0x66)); /* it was in the device's hands: it landed */
	sh_teardown(&h);
}
END_TEST

/* The sectors of the writebacks a flush makes of 16 writes, in the order they went down. */
static void writeback_order(const char *spec, sector_t *order)
{
	struct stack_harness h;

	setup(&h, spec);
	for (unsigned int i = 0; i < 16; i++)
		wr(&h, (sector_t)i * 16, 8, 0x60 + (int)i);
	flush(&h);
	ck_assert_uint_eq(log_count(REQ_OP_WRITE), 16);
	for (unsigned int i = 0; i < 16; i++)
		order[i] = sh_mem->log[i].sector;
	sh_teardown(&h);
}

/* Writeback goes in an order of the cache's own: the same for a seed, another for another. */
START_TEST(writeback_order_comes_from_the_seed)
{
	sector_t a[16], b[16], c[16];
	bool sorted = true;

	writeback_order("write-cache:expire=0,seed=5,depth=1", a);
	writeback_order("write-cache:expire=0,seed=5,depth=1", b);
	writeback_order("write-cache:expire=0,seed=6,depth=1", c);
	ck_assert(!memcmp(a, b, sizeof(a)));
	ck_assert(memcmp(a, c, sizeof(a)));
	for (unsigned int i = 1; i < 16; i++)
		sorted &= a[i] > a[i - 1];
	ck_assert(!sorted); /* not simply the order they came in */
}
END_TEST

/* A failed writeback fails the next flush, once; its data is counted as dropped. */
START_TEST(failed_writeback_fails_the_flush)
{
	struct stack_harness h;
	unsigned int f;

	setup(&h, "write-cache:expire=0");
	wr(&h, 0, 8, 0x12);
	sh_mem->fail_writes = true;
	f = flush(&h);
	ck_assert(h.ended_at[f]);
	ck_assert_int_eq(h.error[f], -EIO);
	ck_assert(strstr(attr_show(&h, "stats"), "dropped 4096\n"));
	sh_mem->fail_writes = false;
	f = flush(&h);
	ck_assert_int_eq(h.error[f], 0);
	sh_teardown(&h);
}
END_TEST

/*
 * A FUA write that fails on its way through: over older cached data it
 * carved away unwritten, that data is lost and the next flush fails; with
 * nothing cached under it, the error is its own and the flush succeeds.
 */
START_TEST(failed_write_through_fails_the_flush_only_over_cached_data)
{
	struct stack_harness h;
	unsigned int w, f;

	setup(&h, "write-cache:expire=0");
	sh_mem->fail_writes = true;
	w = sh_submit(&h, REQ_OP_WRITE, REQ_FUA, 32, 8, 0x21); /* nothing cached there */
	complete_all(&h);
	ck_assert_int_eq(h.error[w], -EIO);
	sh_mem->fail_writes = false;
	f = flush(&h);
	complete_all(&h);
	ck_assert_int_eq(h.error[f], 0);

	wr(&h, 0, 8, 0x12); /* cached, then superseded by the FUA write, which fails */
	sh_mem->fail_writes = true;
	w = sh_submit(&h, REQ_OP_WRITE, REQ_FUA, 0, 8, 0x34);
	complete_all(&h);
	ck_assert_int_eq(h.error[w], -EIO);
	sh_mem->fail_writes = false;
	f = flush(&h);
	complete_all(&h);
	ck_assert_int_eq(h.error[f], -EIO);
	f = flush(&h);
	complete_all(&h);
	ck_assert_int_eq(h.error[f], 0);
	sh_teardown(&h);
}
END_TEST

/*
 * A read that ends below in parts, under a filter that holds the parts
 * until the whole request has ended (the model): the request's position
 * has not moved when its second part ends, and the cache's data still
 * goes over that part, not over the first.
 */
START_TEST(read_ended_in_parts_under_a_model_gets_the_cache)
{
	const char *specs[] = { "model:ssd:depth=4", "write-cache:expire=0" };
	struct stack_harness h;
	unsigned int w, r;

	setup_stack(&h, specs, 2);
	sh_mem->hold = true;
	w = wr(&h, 8, 8, 0xa1);
	sh_run_until(&h, START_NS + 1000 * MS);
	ck_assert(h.ended_at[w]);
	ck_assert_uint_eq(sh_mem->nr_log, 0);
	r = rd(&h, 0, 16);
	ck_assert_uint_eq(sh_mem->nr_pending, 1);
	complete_read_in_two(&h, 8);
	sh_run_until(&h, START_NS + 2000 * MS);
	ck_assert(h.ended_at[r]);
	ck_assert_int_eq(h.error[r], 0);
	ck_assert(buf_is(h.buf[r], 0, 4096, 0));
	ck_assert_msg(buf_is(h.buf[r], 4096, 4096, 0xa1), "the read missed the cache's data");
	attr_store(&h, "cut", "all", 0);
	sh_teardown(&h);
}
END_TEST

/* A cut that keeps writes is "cutting" until they land: restore waits for that. */
START_TEST(restore_waits_for_the_cut)
{
	struct stack_harness h;

	setup(&h, "write-cache:expire=0,seed=7");
	sh_mem->hold = true;
	for (unsigned int i = 0; i < 8; i++)
		wr(&h, (sector_t)i * 16, 8, 0x20 + (int)i);
	attr_store(&h, "cut", "random", 0);
	ck_assert_uint_gt(sh_mem->nr_pending, 0);
	ck_assert_str_eq(attr_show(&h, "state"), "cutting\n");
	attr_store(&h, "restore", "1", -EBUSY);
	complete_all(&h);
	ck_assert_str_eq(attr_show(&h, "state"), "off\n");
	attr_store(&h, "restore", "1", 0);
	ck_assert_str_eq(attr_show(&h, "state"), "on\n");
	sh_teardown(&h);
}
END_TEST

/* A flush while the cut writes back what it keeps waits for all of it, then fails. */
START_TEST(flush_during_a_cut_waits_for_its_writebacks)
{
	struct stack_harness h;
	unsigned int f;

	setup(&h, "write-cache:expire=0,seed=12,depth=1");
	sh_mem->hold = true;
	for (unsigned int i = 0; i < 8; i++)
		wr(&h, (sector_t)i * 16, 8, 0x20 + (int)i);
	sh_mem->refuse = true; /* the cut's writebacks wait: none below for a moment */
	attr_store(&h, "cut", "random", 0);
	ck_assert_ptr_nonnull(strstr(attr_show(&h, "stats"), "dropped 16384\n")); /* 4 kept */
	f = flush(&h);
	ck_assert(!h.ended_at[f]);
	ck_assert_uint_eq(sh_mem->nr_pending, 0);
	sh_mem->refuse = false;
	sh_run_until(&h, START_NS + MS); /* the filter looks again */
	for (unsigned int i = 0; i < 3; i++) {
		ck_assert_uint_eq(sh_mem->nr_pending, 1);
		complete_nth(&h, 0);
		ck_assert(!h.ended_at[f]);
	}
	complete_nth(&h, 0);
	ck_assert(h.ended_at[f]);
	ck_assert_int_eq(h.error[f], -EIO);
	ck_assert_uint_eq(sh_mem->nr_pending, 0);
	ck_assert_str_eq(attr_show(&h, "state"), "off\n");
	sh_teardown(&h);
}
END_TEST

/* A discard goes through once the cached data of its range is gone: none lands after it. */
START_TEST(discard_goes_through)
{
	struct stack_harness h;
	unsigned int d, f;

	setup(&h, "write-cache:expire=0");
	wr(&h, 0, 16, 0x31);
	flush(&h);
	wr(&h, 0, 8, 0x32);
	d = sh_submit(&h, REQ_OP_DISCARD, 0, 0, 16, 0);
	ck_assert(h.ended_at[d]);
	f = flush(&h);
	ck_assert(h.ended_at[f]);
	ck_assert(medium_is(0, 16, 0));
	sh_teardown(&h);
}
END_TEST

/*
 * The writes that reached the backend over the atomic unit [start, start +
 * nr): how many, and false if one of them wrote only part of it.
 */
static bool unit_written_whole(sector_t start, unsigned int nr, unsigned int *count)
{
	bool whole = true;

	*count = 0;
	for (unsigned int i = 0; i < sh_mem->nr_log; i++) {
		const struct sh_mem_op *o = &sh_mem->log[i];

		if (o->op != REQ_OP_WRITE || o->sector >= start + nr || o->sector + o->nr <= start)
			continue;
		(*count)++;
		whole &= o->sector <= start && o->sector + o->nr >= start + nr;
	}
	return whole;
}

/*
 * atomic=4096: a newer cached write that cuts an older one inside a unit
 * (at its end, or inside it) leaves that unit's dirty data in one
 * writeback, not two: a crash between two would leave the unit holding
 * the older write without its part the newer one superseded.
 */
START_TEST(carved_unit_written_back_in_one_request)
{
	struct stack_harness h;
	unsigned int n, f;

	setup(&h, "write-cache:expire=0,atomic=4096,depth=4");
	wr(&h, 70, 10, 0xa1);
	wr(&h, 78, 14, 0xb2); /* the unit 72-79: 0xa1's 72-77, its own 78-79 */
	wr(&h, 160, 32, 0xc3);
	wr(&h, 170, 3, 0xd4); /* inside the unit 168-175 */
	f = flush(&h);
	ck_assert(h.ended_at[f]);
	ck_assert_int_eq(h.error[f], 0);
	ck_assert_msg(unit_written_whole(72, 8, &n) && n == 1, "unit 72-79: %u writes, in part", n);
	ck_assert_msg(unit_written_whole(168, 8, &n) && n == 1, "unit 168-175: %u writes, in part",
		      n);
	ck_assert(medium_is(70, 8, 0xa1));
	ck_assert(medium_is(78, 14, 0xb2));
	ck_assert(medium_is(160, 10, 0xc3));
	ck_assert(medium_is(170, 3, 0xd4));
	ck_assert(medium_is(173, 19, 0xc3));
	ck_assert_str_eq(attr_show(&h, "dirty"), "0\n");
	sh_teardown(&h);
}
END_TEST

/* The unit 72-79 after 0xa1 to 70-79 and 0xb2 to 78-91: each write's part of it whole or not. */
static bool unit_72_allowed(void)
{
	return medium_is(72, 8, 0) || medium_is(72, 8, 0xa1) ||
	       (medium_is(72, 6, 0) && medium_is(78, 2, 0xb2)) ||
	       (medium_is(72, 6, 0xa1) && medium_is(78, 2, 0xb2));
}

/*
 * atomic=4096: a FUA write that supersedes part of a unit of cached data
 * goes through, and the rest of that data expires while it is below.
 * Ended newest first, what is below never leaves the unit holding the
 * older write's 72-77 without its 78-79 (superseded, but the disk wrote
 * the unit whole).
 */
START_TEST(write_through_never_tears_the_unit_it_cuts)
{
	struct stack_harness h;
	unsigned int w, f;

	setup(&h, "write-cache:expire=10,atomic=4096");
	sh_mem->hold = true;
	wr(&h, 70, 10, 0xa1);
	w = sh_submit(&h, REQ_OP_WRITE, REQ_FUA, 78, 14, 0xb2);
	sh_run_until(&h, START_NS + 10 * MS); /* what the cache holds has expired */
	while (sh_mem->nr_pending) {
		complete_nth(&h, sh_mem->nr_pending - 1);
		ck_assert_msg(unit_72_allowed(), "after %u requests below: the unit 72-79 torn",
			      sh_mem->nr_log);
	}
	f = flush(&h);
	complete_all(&h);
	complete_all(&h);
	ck_assert(h.ended_at[w] && h.ended_at[f]);
	ck_assert_int_eq(h.error[w], 0);
	ck_assert_int_eq(h.error[f], 0);
	ck_assert(medium_is(70, 8, 0xa1));
	ck_assert(medium_is(78, 14, 0xb2));
	ck_assert_str_eq(attr_show(&h, "dirty"), "0\n");
	sh_teardown(&h);
}
END_TEST

START_TEST(refusals_say_why)
{
	struct dev_stack s = { 0 };
	struct dev_limits lim = { .capacity = CAPACITY };
	const char *spec = "write-cache";
	char why[256] = "";

	ck_assert_int_eq(dev_stack_open(&s, &spec, 1, &dev_sim_ops, NULL, &lim, why,
					sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "write-cache: the device below moves no data"), "%s", why);
	ck_assert_int_eq(dev_check_filter("write-cache:size=0", why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "size must be a whole number from 1"), "%s", why);
	ck_assert_int_eq(dev_check_filter("write-cache:colour=1", why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "no key 'colour'"), "%s", why);
	ck_assert_int_eq(dev_check_filter("write-cache:atomic=1000", why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "atomic must be a multiple"), "%s", why);
	ck_assert_int_eq(dev_check_filter("write-cache:depth=0", why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(dev_check_filter("write-cache:size=8,expire=0,seed=3,depth=2", why,
					  sizeof(why)),
			 0);
}
END_TEST

START_TEST(describes_its_parameters)
{
	struct stack_harness h;
	char buf[256];

	setup(&h, "write-cache:size=8,seed=5");
	dev_stack_describe(&h.stack, buf, sizeof(buf));
	ck_assert_str_eq(buf, "write-cache:size=8 expire=30000 seed=5 depth=4 atomic=512 -> mem");
	sh_teardown(&h);
}
END_TEST

static Suite *write_cache_suite(void)
{
	Suite *s = suite_create("write-cache");
	TCase *tc = tcase_create("cache");

	tcase_add_test(tc, write_ends_before_the_backend_and_reads_back);
	tcase_add_test(tc, flush_ends_after_writeback_and_a_flush_below);
	tcase_add_test(tc, fua_write_goes_through_after_older_data);
	tcase_add_test(tc, overlapping_writes_last_wins);
	tcase_add_test(tc, read_racing_a_writeback_gets_the_newer_data);
	tcase_add_test(tc, read_ended_in_parts_under_a_model_gets_the_cache);
	tcase_add_test(tc, cut_all_drops_and_fails_until_restore);
	tcase_add_test(tc, cut_random_is_a_reproducible_subset);
	tcase_add_test(tc, cut_torn_keeps_a_prefix_at_the_unit);
	tcase_add_test(tc, expire_writes_back_on_time);
	tcase_add_test(tc, full_cache_makes_writes_wait);
	tcase_add_test(tc, cut_fails_what_is_below);
	tcase_add_test(tc, writeback_order_comes_from_the_seed);
	tcase_add_test(tc, failed_writeback_fails_the_flush);
	tcase_add_test(tc, failed_write_through_fails_the_flush_only_over_cached_data);
	tcase_add_test(tc, restore_waits_for_the_cut);
	tcase_add_test(tc, flush_during_a_cut_waits_for_its_writebacks);
	tcase_add_test(tc, discard_goes_through);
	tcase_add_test(tc, carved_unit_written_back_in_one_request);
	tcase_add_test(tc, write_through_never_tears_the_unit_it_cuts);
	tcase_add_test(tc, refusals_say_why);
	tcase_add_test(tc, describes_its_parameters);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(write_cache_suite());
}
