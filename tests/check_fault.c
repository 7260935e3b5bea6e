/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_fault.c - the fault filter over a memory backend on a virtual
 * clock: seeded probabilities, times and interval, sector ranges, flakey's
 * up and down, bad sectors and the good prefix before them, corruption,
 * dropped writes, delays, and rules refused with nothing changed; the
 * same aimed at sector ranges (sectors=, sectors_file=).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "stack_harness.h"

#define MS 1000000ull
#define START_NS SH_START_NS
#define CAPACITY 65536u /* sectors: 32 MiB */
#define MAX_BIOS 4096

static unsigned char pattern(size_t off)
{
	return (unsigned char)(off * 7 + 3);
}

/* A queue with noop over the filter of spec over mem, its medium a pattern. */
static void setup(struct stack_harness *h, const char *spec)
{
	sh_setup(h, &spec, 1, &sh_mem_cache_ops, CAPACITY, MAX_BIOS);
	for (size_t i = 0; i < (size_t)CAPACITY * SECTOR_SIZE; i++)
		sh_mem->data[i] = pattern(i);
}

/* One request of one bio, run until it has ended; its index. */
static unsigned int io(struct stack_harness *h, enum req_op op, sector_t sector, unsigned int nr)
{
	unsigned int i;

	blk_queue_lock(h->q);
	i = sh_queue_bio(h, op, 0, sector, nr, 0x5a);
	blk_queue_unlock(h->q);
	sh_run_until(h, h->clock.virtual_ns);
	ck_assert_msg(h->ended_at[i], "bio %u has not ended", i);
	return i;
}

/* One request of two bios: [sector, sector + a) and then b sectors. */
static void io2(struct stack_harness *h, enum req_op op, sector_t sector, unsigned int a, unsigned int b)
{
	blk_queue_lock(h->q);
	blk_plug_device(h->q);
	sh_queue_bio(h, op, 0, sector, a, 0x5a);
	sh_queue_bio(h, op, 0, sector + a, b, 0x5a);
	__blk_unplug(h->q);
	blk_queue_unlock(h->q);
	sh_run_until(h, h->clock.virtual_ns);
}

/* bio_clone_range, linked with --wrap: the Nth call from when clone_fails_in is set to N fails. */
struct bio *__real_bio_clone_range(struct bio *parent, size_t offset, unsigned int size);
struct bio *__wrap_bio_clone_range(struct bio *parent, size_t offset, unsigned int size);
static unsigned int clone_fails_in;

struct bio *__wrap_bio_clone_range(struct bio *parent, size_t offset, unsigned int size)
{
	if (clone_fails_in && !--clone_fails_in)
		return NULL;
	return __real_bio_clone_range(parent, offset, size);
}

/*
 * stat, linked with --wrap: a look at a path under /hang/ waits for a
 * ticket, as on a mount that does not answer; /hang/yes exists.
 */
int __real_stat(const char *path, struct stat *st);
int __wrap_stat(const char *path, struct stat *st);
static pthread_mutex_t hang_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hang_cond = PTHREAD_COND_INITIALIZER;
static unsigned int hang_entered, hang_tickets;

int __wrap_stat(const char *path, struct stat *st)
{
	if (strncmp(path, "/hang/", 6))
		return __real_stat(path, st);
	pthread_mutex_lock(&hang_lock);
	hang_entered++;
	pthread_cond_broadcast(&hang_cond);
	while (!hang_tickets)
		pthread_cond_wait(&hang_cond, &hang_lock);
	hang_tickets--;
	pthread_mutex_unlock(&hang_lock);
	if (!strcmp(path, "/hang/yes")) {
		memset(st, 0, sizeof(*st));
		return 0;
	}
	errno = ENOENT;
	return -1;
}

/* Until n looks have begun (a test that never gets there times out). */
static void hang_wait_entered(unsigned int n)
{
	pthread_mutex_lock(&hang_lock);
	while (hang_entered < n)
		pthread_cond_wait(&hang_cond, &hang_lock);
	pthread_mutex_unlock(&hang_lock);
}

static void hang_let_go(unsigned int n)
{
	pthread_mutex_lock(&hang_lock);
	hang_tickets += n;
	pthread_cond_broadcast(&hang_cond);
	pthread_mutex_unlock(&hang_lock);
}

static const char *show(struct stack_harness *h, const char *name)
{
	return sh_show(h, h->stack.top, name);
}

static int store(struct stack_harness *h, const char *name, const char *value)
{
	return sh_store(h, h->stack.top, name, value);
}

/* A stat line's count. */
static unsigned long long stat_of(struct stack_harness *h, const char *key)
{
	const char *s = strstr(show(h, "stats"), key);

	ck_assert_ptr_nonnull(s);
	return strtoull(s + strlen(key) + 1, NULL, 10);
}

/* 2000 one-sector reads, far apart; which of them failed, as a bitmap. */
static unsigned int hits(const char *spec, unsigned char *failed)
{
	struct stack_harness h;
	unsigned int n = 0;

	setup(&h, spec);
	for (unsigned int batch = 0; batch < 2000; batch += 50) {
		blk_queue_lock(h.q);
		for (unsigned int i = batch; i < batch + 50; i++)
			sh_queue_bio(&h, REQ_OP_READ, 0, (sector_t)i * 16, 1, 0);
		blk_queue_unlock(h.q);
		sh_run_until(&h, h.clock.virtual_ns);
	}
	for (unsigned int i = 0; i < 2000; i++) {
		ck_assert_msg(h.ended_at[i], "read %u never ended", i);
		ck_assert(h.error[i] == 0 || h.error[i] == -EIO);
		failed[i] = h.error[i] != 0;
		n += failed[i];
	}
	ck_assert_uint_eq(stat_of(&h, "errors"), n);
	sh_teardown(&h);
	return n;
}

/*
 * prob=100000 (10%) over 2000 reads: 200 expected, the binomial's sigma
 * 13.4; the seed fixes the outcome, and 160..240 (3 sigma) is what any
 * seed should give.  The same seed fails the same reads; another does not.
 */
START_TEST(prob_hits_within_margin_and_the_seed_repeats)
{
	static unsigned char a[2000], b[2000], c[2000];
	unsigned int na = hits("fault:error=read,prob=100000,seed=42", a);
	unsigned int nb = hits("fault:error=read,prob=100000,seed=42", b);
	unsigned int nc = hits("fault:error=read,prob=100000,seed=43", c);

	ck_assert_msg(na >= 160 && na <= 240, "%u of 2000 failed at 10%%", na);
	ck_assert_msg(nc >= 160 && nc <= 240, "%u of 2000 failed at 10%%", nc);
	ck_assert_uint_eq(na, nb);
	ck_assert(!memcmp(a, b, sizeof(a)));
	ck_assert(memcmp(a, c, sizeof(a)));
	ck_assert_uint_eq(hits("fault:error=read,prob=0", a), 0);
	ck_assert_uint_eq(hits("fault:error=write,prob=1000000", a), 0); /* reads do not match */
}
END_TEST

/* interval=3,times=2: the 3rd and 6th write fail, then no more; reads never. */
/* times counts the requests the rule fails, not one a bad sector failed earlier. */
START_TEST(times_counts_only_what_the_rule_fails)
{
	struct stack_harness h;

	setup(&h, "fault:badblocks=10,error=read,start=12,times=1");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 8, 8)], -EIO); /* the bad sector */
	ck_assert_uint_eq(stat_of(&h, "errors"), 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 100, 1)], -EIO); /* the rule's one */
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 200, 1)], 0);
	ck_assert_uint_eq(stat_of(&h, "errors"), 1);
	sh_teardown(&h);
}
END_TEST

START_TEST(times_and_interval)
{
	struct stack_harness h;

	setup(&h, "fault:error=write,errno=ENOSPC,interval=3,times=2");
	for (unsigned int i = 0; i < 12; i++) {
		unsigned int b = io(&h, REQ_OP_WRITE, (sector_t)i * 16, 1);

		ck_assert_msg(h.error[b] == ((i == 2 || i == 5) ? -ENOSPC : 0), "write %u: %d", i,
			      h.error[b]);
		b = io(&h, REQ_OP_READ, (sector_t)i * 16, 1);
		ck_assert_int_eq(h.error[b], 0);
	}
	ck_assert_uint_eq(stat_of(&h, "errors"), 2);
	ck_assert_uint_eq(sh_mem->writes, 10); /* the failed two never went down */
	sh_teardown(&h);
}
END_TEST

/*
 * error=read,start=100,end=108: reads outside pass; one across 96..111,
 * in two bios of 4 and 12, ends the first good and before the second,
 * which fails: its good part came up first, then the error; in one bio,
 * its good prefix is the four sectors before the range.
 */
START_TEST(ranges_fail_from_their_first_sector)
{
	struct stack_harness h;
	unsigned int b;

	setup(&h, "fault:error=read,start=100,end=108");
	b = io(&h, REQ_OP_READ, 92, 8);
	ck_assert_int_eq(h.error[b], 0);
	b = io(&h, REQ_OP_READ, 108, 8);
	ck_assert_int_eq(h.error[b], 0);
	b = io(&h, REQ_OP_READ, 107, 1);
	ck_assert_int_eq(h.error[b], -EIO);
	b = io(&h, REQ_OP_WRITE, 100, 8);
	ck_assert_int_eq(h.error[b], 0);
	io2(&h, REQ_OP_READ, 96, 4, 12);
	ck_assert_int_eq(h.error[h.nr_bios - 2], 0);
	ck_assert_int_eq(h.error[h.nr_bios - 1], -EIO);
	ck_assert_uint_lt(h.order[h.nr_bios - 2], h.order[h.nr_bios - 1]);
	/* one bio across it: the four sectors before the range are its good prefix */
	b = io(&h, REQ_OP_READ, 96, 16);
	ck_assert_int_eq(h.error[b], -EIO);
	ck_assert_uint_eq(h.bio[b].bi_good, 4 * SECTOR_SIZE);
	sh_teardown(&h);
}
END_TEST

/* up=100,down=50 with no feature: every request fails while down, from the open on. */
START_TEST(flakey_up_and_down_on_the_virtual_clock)
{
	static const struct {
		uint64_t ms;
		int error;
	} at[] = {{0, 0},   {99, 0},  {100, -EIO}, {149, -EIO},
		  {150, 0}, {249, 0}, {260, -EIO}, {310, 0}};
	struct stack_harness h;

	setup(&h, "fault:up=100,down=50");
	for (unsigned int i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		unsigned int b;

		sh_run_until(&h, START_NS + at[i].ms * MS);
		b = io(&h, i % 2 ? REQ_OP_WRITE : REQ_OP_READ, 8 * i, 8);
		ck_assert_msg(h.error[b] == at[i].error, "at %llu ms: %d",
			      (unsigned long long)at[i].ms, h.error[b]);
	}
	ck_assert_uint_eq(stat_of(&h, "flakey_errors"), 3);
	sh_teardown(&h);
}
END_TEST

/* error_reads only: writes go through while down. */
START_TEST(flakey_error_reads_only)
{
	struct stack_harness h;

	setup(&h, "fault:up=1,down=1000,error_reads=1");
	sh_run_until(&h, START_NS + 2 * MS);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 0, 8)], -EIO);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 0, 8)], 0);
	ck_assert_uint_eq(sh_mem->writes, 1);
	ck_assert_uint_eq(sh_mem->reads, 0);
	sh_teardown(&h);
}
END_TEST

/*
 * Sector 10 bad: a read of 8..15 in bios of 2 and 6 ends the first with
 * the backend's bytes, before the second fails; sectors around it read.
 */
START_TEST(badblocks_end_the_good_prefix_first)
{
	struct stack_harness h;
	unsigned int b;

	setup(&h, "fault:badblocks=10-10");
	ck_assert_str_eq(show(&h, "badblocks"), "10-10\n");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 9, 1)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 11, 1)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 10, 1)], -EIO);
	io2(&h, REQ_OP_READ, 8, 2, 6);
	b = h.nr_bios - 2;
	ck_assert_int_eq(h.error[b], 0);
	ck_assert_int_eq(h.error[b + 1], -EIO);
	ck_assert_uint_lt(h.order[b], h.order[b + 1]);
	for (size_t i = 0; i < 2 * SECTOR_SIZE; i++)
		ck_assert_uint_eq(h.buf[b][i], pattern(8 * SECTOR_SIZE + i));
	ck_assert_uint_eq(stat_of(&h, "badblock_errors"), 2);

	/* one bio over it: its good prefix is what a short read returns */
	b = io(&h, REQ_OP_READ, 8, 8);
	ck_assert_int_eq(h.error[b], -EIO);
	ck_assert_uint_eq(h.bio[b].bi_good, 2 * SECTOR_SIZE);
	for (size_t i = 0; i < 2 * SECTOR_SIZE; i++)
		ck_assert_uint_eq(h.buf[b][i], pattern(8 * SECTOR_SIZE + i));
	b = io(&h, REQ_OP_READ, 16, 8);
	ck_assert_int_eq(h.error[b], 0);
	ck_assert_uint_eq(h.bio[b].bi_good, 8 * SECTOR_SIZE);

	/* split in requests of 16 sectors: the prefix runs over the pieces before the bad one */
	h.q->limits.max_sectors = 16;
	b = io(&h, REQ_OP_READ, 0, 64);
	ck_assert_int_eq(h.error[b], -EIO);
	ck_assert_uint_eq(h.bio[b].bi_good, 10 * SECTOR_SIZE);
	ck_assert_int_eq(store(&h, "badblocks", "clear"), 0);
	ck_assert_int_eq(store(&h, "badblocks", "+40"), 0);
	b = io(&h, REQ_OP_READ, 0, 64);
	ck_assert_int_eq(h.error[b], -EIO);
	ck_assert_uint_eq(h.bio[b].bi_good, 40 * SECTOR_SIZE);
	for (size_t i = 0; i < 40 * SECTOR_SIZE; i++)
		ck_assert_uint_eq(h.buf[b][i], pattern(i));
	sh_teardown(&h);
}
END_TEST

/* A write over a bad sector clears it (remapped), unless sticky=1: then it fails, and stays. */
START_TEST(write_clears_a_bad_sector_unless_sticky)
{
	struct stack_harness h;

	setup(&h, "fault:badblocks=20-21/40-40");
	ck_assert_str_eq(show(&h, "badblocks"), "20-21\n40-40\n");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 21, 1)], 0);
	ck_assert_str_eq(show(&h, "badblocks"), "20-20\n40-40\n");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 21, 1)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 20, 1)], -EIO);
	ck_assert_uint_eq(stat_of(&h, "cleared_badblocks"), 1);
	sh_teardown(&h);

	setup(&h, "fault:badblocks=20-21,sticky=1");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 21, 1)], -EIO);
	ck_assert_str_eq(show(&h, "badblocks"), "20-21\n");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 21, 1)], -EIO);
	ck_assert_uint_eq(sh_mem->writes, 0);
	sh_teardown(&h);
}
END_TEST

/* error_file on a mount that hangs: the filter closes all the same (its watcher is left behind). */
START_TEST(a_hung_error_file_does_not_hold_up_the_close)
{
	struct stack_harness h;

	setup(&h, "fault:error=read,error_file=/hang/yes");
	hang_wait_entered(1);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 0, 1)], 0); /* not seen yet: no rule */
	sh_teardown(&h);
	hang_let_go(1);
}
END_TEST

/*
 * A look at the old error_file that ends after the rules named another
 * does not count for the new one.
 */
START_TEST(a_look_at_the_old_error_file_does_not_count_for_the_new)
{
	struct stack_harness h;

	setup(&h, "fault:error=read,error_file=/hang/yes");
	hang_wait_entered(1); /* looking at /hang/yes */
	ck_assert_int_eq(store(&h, "rules", "error_file=/hang/no"), 0);
	hang_let_go(1);	      /* /hang/yes exists */
	hang_wait_entered(2); /* looking at /hang/no, not seen yet */
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 0, 1)], 0);
	hang_let_go(1);
	sh_teardown(&h);
}
END_TEST

/*
 * A read split in pieces whose third piece finds no memory: the bio fails,
 * and its good prefix is the two pieces that were read, not the sectors
 * never read after them (a short read would return the buffer's old bytes).
 */
START_TEST(a_split_cut_short_keeps_no_unread_bytes_in_the_prefix)
{
	struct stack_harness h;
	unsigned int b;

	setup(&h, "fault");
	h.q->limits.max_sectors = 16;
	clone_fails_in = 3;
	b = io(&h, REQ_OP_READ, 0, 64);
	ck_assert_uint_eq(clone_fails_in, 0);
	ck_assert_int_eq(h.error[b], -ENOMEM);
	ck_assert_uint_eq(h.bio[b].bi_good, 32 * SECTOR_SIZE);
	for (size_t i = 0; i < 32 * SECTOR_SIZE; i++)
		ck_assert_uint_eq(h.buf[b][i], pattern(i));

	clone_fails_in = 1; /* none read */
	b = io(&h, REQ_OP_READ, 0, 64);
	ck_assert_int_eq(h.error[b], -ENOMEM);
	ck_assert_uint_eq(h.bio[b].bi_good, 0);
	sh_teardown(&h);
}
END_TEST

/*
 * A write that fails whole, or is dropped, writes no sector: the bad ones
 * stay bad.  One that fails part way clears those before the failure only.
 */
START_TEST(a_failed_or_dropped_write_leaves_bad_sectors_bad)
{
	struct stack_harness h;

	setup(&h, "fault:badblocks=20-21,error=write");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 21, 1)], -EIO);
	ck_assert_str_eq(show(&h, "badblocks"), "20-21\n");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 21, 1)], -EIO);
	ck_assert_uint_eq(stat_of(&h, "cleared_badblocks"), 0);

	/* the rule fails sectors 22 on: 20 and 21 are written, and good again */
	ck_assert_int_eq(store(&h, "rules", "start=22"), 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 20, 4)], -EIO);
	ck_assert_str_eq(show(&h, "badblocks"), "");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 20, 2)], 0);
	sh_teardown(&h);

	/* down, writes dropped: the bad sector still fails a read */
	setup(&h, "fault:badblocks=30,up=1,down=1000,drop_writes=1");
	sh_run_until(&h, START_NS + 2 * MS);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 30, 1)], 0);
	ck_assert_uint_eq(stat_of(&h, "dropped_writes"), 1);
	ck_assert_str_eq(show(&h, "badblocks"), "30-30\n");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 30, 1)], -EIO);
	sh_teardown(&h);
}
END_TEST

/* badblocks: +, - and clear through the file; a bad command changes nothing. */
START_TEST(badblocks_file)
{
	struct stack_harness h;

	setup(&h, "fault");
	ck_assert_str_eq(show(&h, "rules"), "error=none\n");
	ck_assert_str_eq(show(&h, "badblocks"), "");
	ck_assert_int_eq(store(&h, "badblocks", "+100-199"), 0);
	ck_assert_int_eq(store(&h, "badblocks", "+5"), 0);
	ck_assert_int_eq(store(&h, "badblocks", "+200-209"), 0); /* adjacent: one range */
	ck_assert_str_eq(show(&h, "badblocks"), "5-5\n100-209\n");
	ck_assert_int_eq(store(&h, "badblocks", "-150-159"), 0);
	ck_assert_str_eq(show(&h, "badblocks"), "5-5\n100-149\n160-209\n");
	for (const char *const *bad = (const char *const[]){"100", "+", "+9-8", "+x", "+65536",
							    "-1-2-3", "+1,2", "clear ", NULL};
	     *bad; bad++)
		ck_assert_msg(store(&h, "badblocks", *bad) == -EINVAL, "'%s' taken", *bad);
	ck_assert_str_eq(show(&h, "badblocks"), "5-5\n100-149\n160-209\n");
	/* several at once, as badblocks= takes them; one past the disk: none of them */
	ck_assert_int_eq(store(&h, "badblocks", "+300/310-311"), 0);
	ck_assert_int_eq(store(&h, "badblocks", "-300/311"), 0);
	ck_assert_int_eq(store(&h, "badblocks", "+400/65536"), -EINVAL);
	ck_assert_int_eq(store(&h, "badblocks", "-310/65536"), -EINVAL);
	ck_assert_str_eq(show(&h, "badblocks"), "5-5\n100-149\n160-209\n310-310\n");
	ck_assert_int_eq(store(&h, "badblocks", "-310"), 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 155, 1)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 149, 1)], -EIO);
	ck_assert_int_eq(store(&h, "badblocks", "clear"), 0);
	ck_assert_str_eq(show(&h, "badblocks"), "");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 149, 1)], 0);
	sh_teardown(&h);
}
END_TEST

/* corrupt_bio_byte=5,corrupt_value=171 while down: that byte of each bio, and no other. */
START_TEST(corrupt_bio_byte_changes_exactly_that_byte)
{
	struct stack_harness h;
	unsigned int b;

	setup(&h, "fault:up=1,down=1000,corrupt_bio_byte=5,corrupt_value=171");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 8, 8)], 0); /* up: as it is */
	for (size_t i = 0; i < 8 * SECTOR_SIZE; i++)
		ck_assert_uint_eq(h.buf[0][i], pattern(8 * SECTOR_SIZE + i));
	sh_run_until(&h, START_NS + 2 * MS);
	io2(&h, REQ_OP_READ, 8, 2, 6);
	for (b = h.nr_bios - 2; b < h.nr_bios; b++) {
		size_t base = (b == h.nr_bios - 2 ? 8 : 10) * SECTOR_SIZE;

		ck_assert_int_eq(h.error[b], 0);
		for (size_t i = 0; i < h.vec[b].bv_len; i++)
			ck_assert_msg(h.buf[b][i] == (i == 4 ? 171 : pattern(base + i)),
				      "bio %u byte %zu is %u", b, i, h.buf[b][i]);
	}
	ck_assert_uint_eq(stat_of(&h, "corrupted"), 1);
	sh_teardown(&h);

	setup(&h, "fault:up=1,down=1000,corrupt_bio_byte=1,corrupt_value=7,corrupt_on=write");
	sh_run_until(&h, START_NS + 2 * MS);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 0, 1)], 0);
	ck_assert_uint_eq(sh_mem->data[0], 7);
	for (size_t i = 1; i < SECTOR_SIZE; i++)
		ck_assert_uint_eq(sh_mem->data[i], 0x5a);
	sh_teardown(&h);
}
END_TEST

/* drop_writes while down: the write ends without error and never reaches the backend. */
START_TEST(drop_writes_completes_but_writes_nothing)
{
	struct stack_harness h;

	setup(&h, "fault:up=1,down=1000,drop_writes=1");
	sh_run_until(&h, START_NS + 2 * MS);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 0, 8)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE_ZEROES, 64, 8)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 0, 8)], 0);
	ck_assert_uint_eq(sh_mem->writes, 0);
	ck_assert_uint_eq(sh_mem->others, 0);
	ck_assert_uint_eq(sh_mem->reads, 1);
	for (size_t i = 0; i < 8 * SECTOR_SIZE; i++)
		ck_assert_uint_eq(sh_mem->data[i], pattern(i));
	ck_assert_uint_eq(stat_of(&h, "dropped_writes"), 2);
	sh_teardown(&h);
}
END_TEST

/* delay_read=5: a read ends 5 ms later, a write at once; spike_prob=1000000 adds spike_ms to each.
 */
START_TEST(delays_and_spikes)
{
	struct stack_harness h;
	unsigned int r, w;

	setup(&h, "fault:delay_read=5");
	blk_queue_lock(h.q);
	r = sh_queue_bio(&h, REQ_OP_READ, 0, 0, 8, 0);
	w = sh_queue_bio(&h, REQ_OP_WRITE, 0, 64, 8, 0);
	blk_queue_unlock(h.q);
	sh_run_until(&h, START_NS + 10 * MS);
	ck_assert_uint_eq(h.ended_at[r], START_NS + 5 * MS);
	ck_assert_uint_eq(h.ended_at[w], START_NS);
	ck_assert_uint_eq(stat_of(&h, "delayed"), 1);
	sh_teardown(&h);

	setup(&h, "fault:delay_read=5,spike_ms=20,spike_prob=1000000");
	blk_queue_lock(h.q);
	r = sh_queue_bio(&h, REQ_OP_READ, 0, 0, 8, 0);
	w = sh_queue_bio(&h, REQ_OP_WRITE, 0, 64, 8, 0);
	blk_queue_unlock(h.q);
	sh_run_until(&h, START_NS + 100 * MS);
	ck_assert_uint_eq(h.ended_at[r], START_NS + 25 * MS);
	ck_assert_uint_eq(h.ended_at[w], START_NS + 20 * MS);
	ck_assert_uint_eq(stat_of(&h, "spikes"), 2);
	sh_teardown(&h);
}
END_TEST

/* The error rule switched off and on by fault/enable; a flush fails when the rule says flush. */
START_TEST(enable_switches_the_error_rule)
{
	struct stack_harness h;

	setup(&h, "fault:error=read/flush,enable=0");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 0, 8)], 0);
	ck_assert_int_eq(store(&h, "enable", "1"), 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 0, 8)], -EIO);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_FLUSH, 0, 0)], -EIO);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 0, 8)], 0);
	ck_assert_int_eq(store(&h, "enable", "2"), -EINVAL);
	ck_assert_str_eq(show(&h, "enable"), "1\n");
	ck_assert_int_eq(store(&h, "enable", "0"), 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 0, 8)], 0);
	sh_teardown(&h);
}
END_TEST

START_TEST(bad_rules_are_refused_and_change_nothing)
{
	const char *sim_spec = "fault:up=1,down=1,drop_writes=1";
	struct stack_harness h;
	char why[256] = "";
	char before[4096];

	sh_assert_refused("fault:error=reed", "fault: error must be none, or read");
	sh_assert_refused("fault:error=read/", "fault: error must be");
	sh_assert_refused("fault:errno=EFOO", "fault: errno must be EIO, ENOSPC");
	sh_assert_refused("fault:prob=1000001", "fault: prob must be parts per million");
	sh_assert_refused("fault:prob=10%", "fault: prob must be parts per million");
	sh_assert_refused("fault:interval=0", "fault: interval must be");
	sh_assert_refused("fault:start=10,end=10", "fault: end (10) must be after start (10)");
	sh_assert_refused("fault:down=5", "fault: down=5 needs up=");
	sh_assert_refused("fault:corrupt_value=256", "fault: corrupt_value must be 0 to 255");
	sh_assert_refused("fault:corrupt_on=flush", "fault: corrupt_on must be read, write");
	sh_assert_refused("fault:badblocks=9-8", "fault: badblocks must be START-END");
	sh_assert_refused("fault:error_file=relative", "fault: error_file must be an absolute path");
	sh_assert_refused("fault:nosuch=1", "fault: no key 'nosuch'");
	sh_assert_refused("fault:enable", "fault: enable must be 0 or 1, not ''");
	ck_assert_int_eq(
	    dev_check_filter("fault:error=any,errno=ETIMEDOUT,prob=5", why, sizeof(why)), 0);

	/* over the sim backend, what needs data or files is refused */
	ck_assert_int_eq(sh_open(&h, &sim_spec, 1, &dev_sim_ops, CAPACITY, MAX_BIOS, why,
				 sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "which the device below has not"), "%s", why);
	blk_cleanup_queue(h.q);
	sh_free(&h);

	setup(&h, "fault:error=read,prob=500000,seed=3,badblocks=7");
	strcpy(before, show(&h, "rules"));
	ck_assert_str_eq(before, "error=read,prob=500000,seed=3\n");
	for (const char *const *bad =
		 (const char *const[]){"prob=2000000", "error=read,x=1", "seed=1,start=70000",
				       "up=1,down=1,times=-1", "badblocks=1/70000", NULL};
	     *bad; bad++) {
		ck_assert_msg(store(&h, "rules", *bad) == -EINVAL, "'%s' taken", *bad);
		ck_assert_str_eq(show(&h, "rules"), before);
		ck_assert_str_eq(show(&h, "badblocks"), "7-7\n");
	}
	ck_assert_int_eq(store(&h, "rules", "error=none,up=10,down=10"), 0);
	ck_assert_str_eq(show(&h, "rules"), "prob=500000,seed=3,up=10,down=10\n");
	dev_stack_describe(&h.stack, before, sizeof(before));
	ck_assert_str_eq(before, "fault:prob=500000,seed=3,up=10,down=10 -> mem");
	sh_teardown(&h);
}
END_TEST

/*
 * sectors=100-107/200-203: the error rule fails only requests that reach
 * those sectors; one that begins before them has its sectors before the
 * first aimed one done (a disk's good prefix), and start/end narrow the
 * aim further.  A flush, with no sectors, is never aimed at.
 */
START_TEST(aimed_errors_touch_only_the_aimed_sectors)
{
	struct stack_harness h;
	unsigned int b;

	setup(&h, "fault:error=any,sectors=100-107/200-203");
	ck_assert_str_eq(show(&h, "sectors"), "100-107\n200-203\n");
	ck_assert_str_eq(show(&h, "rules"), "error=any,sectors=100-107/200-203\n");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 0, 8)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 108, 92)], 0); /* between the two */
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 300, 8)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_FLUSH, 0, 0)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 107, 1)], -EIO);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 202, 4)], -EIO);
	b = io(&h, REQ_OP_READ, 96, 16);
	ck_assert_int_eq(h.error[b], -EIO);
	ck_assert_uint_eq(h.bio[b].bi_good, 4 * SECTOR_SIZE);
	for (size_t i = 0; i < 4 * SECTOR_SIZE; i++)
		ck_assert_uint_eq(h.buf[b][i], pattern(96 * SECTOR_SIZE + i));
	b = io(&h, REQ_OP_READ, 150, 60);
	ck_assert_int_eq(h.error[b], -EIO);
	ck_assert_uint_eq(h.bio[b].bi_good, 50 * SECTOR_SIZE);
	ck_assert_uint_eq(stat_of(&h, "errors"), 4);
	/* start= inside the aim: the prefix runs to the first sector both take */
	ck_assert_int_eq(store(&h, "rules", "start=102"), 0);
	b = io(&h, REQ_OP_READ, 96, 16);
	ck_assert_int_eq(h.error[b], -EIO);
	ck_assert_uint_eq(h.bio[b].bi_good, 6 * SECTOR_SIZE);
	/* sectors= with nothing: the whole disk again, as before */
	ck_assert_int_eq(store(&h, "rules", "start=0,sectors="), 0);
	ck_assert_str_eq(show(&h, "sectors"), "");
	ck_assert_str_eq(show(&h, "rules"), "error=any\n");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 0, 8)], -EIO);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_FLUSH, 0, 0)], -EIO);
	sh_teardown(&h);
}
END_TEST

/*
 * Flakey aimed at 64..71: while down, requests there fail (from the first
 * aimed sector), the rest of the disk works.
 */
START_TEST(aimed_flakey_fails_only_there)
{
	struct stack_harness h;
	unsigned int b;

	setup(&h, "fault:up=1,down=1000,sectors=64-71");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 64, 8)], 0); /* up */
	sh_run_until(&h, START_NS + 2 * MS);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 0, 8)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 72, 8)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 64, 8)], -EIO);
	b = io(&h, REQ_OP_READ, 60, 8);
	ck_assert_int_eq(h.error[b], -EIO);
	ck_assert_uint_eq(h.bio[b].bi_good, 4 * SECTOR_SIZE);
	ck_assert_uint_eq(stat_of(&h, "flakey_errors"), 2);
	sh_teardown(&h);

	setup(&h, "fault:up=1,down=1000,error_writes=1,sectors=64-71");
	sh_run_until(&h, START_NS + 2 * MS);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_READ, 64, 8)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 0, 8)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 64, 8)], -EIO);
	ck_assert_uint_eq(stat_of(&h, "flakey_errors"), 1);
	sh_teardown(&h);
}
END_TEST

/* Read back [sector, sector + nr) of the medium: all fill, or all the pattern. */
static bool medium_is(sector_t sector, unsigned int nr, int fill)
{
	for (size_t i = sector * SECTOR_SIZE; i < (sector + nr) * SECTOR_SIZE; i++)
		if (sh_mem->data[i] != (fill >= 0 ? (unsigned char)fill : pattern(i)))
			return false;
	return true;
}

/*
 * drop_writes aimed at 64..71: writes there end as done and are lost,
 * writes elsewhere are kept; a write that reaches the aimed sectors in
 * part loses only its aimed part.
 */
START_TEST(aimed_drop_writes_loses_only_the_aimed_writes)
{
	struct stack_harness h;

	setup(&h, "fault:up=1,down=1000,drop_writes=1,sectors=64-71");
	sh_run_until(&h, START_NS + 2 * MS);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 0, 8)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 64, 8)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 72, 8)], 0);
	ck_assert(medium_is(0, 8, 0x5a));
	ck_assert(medium_is(64, 8, -1));
	ck_assert(medium_is(72, 8, 0x5a));
	ck_assert_uint_eq(stat_of(&h, "dropped_writes"), 1);
	/* across the edges: 56..63 and 72..79 written, 64..71 not */
	ck_assert_int_eq(store(&h, "rules", "up=1"), 0); /* the cycle over: up again */
	sh_run_until(&h, h.clock.virtual_ns + 2 * MS);
	for (size_t i = 0; i < 128 * SECTOR_SIZE; i++)
		sh_mem->data[i] = pattern(i);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 56, 24)], 0);
	ck_assert(medium_is(56, 8, 0x5a));
	ck_assert(medium_is(64, 8, -1));
	ck_assert(medium_is(72, 8, 0x5a));
	ck_assert_uint_eq(stat_of(&h, "dropped_writes"), 2);
	/* one request of two bios, 56..65 and 66..79: each kept sector has its own bio's bytes */
	blk_queue_lock(h.q);
	blk_plug_device(h.q);
	sh_queue_bio(&h, REQ_OP_WRITE, 0, 56, 10, 0x11);
	sh_queue_bio(&h, REQ_OP_WRITE, 0, 66, 14, 0x22);
	__blk_unplug(h.q);
	blk_queue_unlock(h.q);
	sh_run_until(&h, h.clock.virtual_ns);
	ck_assert_int_eq(h.error[h.nr_bios - 2], 0);
	ck_assert_int_eq(h.error[h.nr_bios - 1], 0);
	ck_assert(medium_is(56, 8, 0x11));
	ck_assert(medium_is(64, 8, -1));
	ck_assert(medium_is(72, 8, 0x22));
	/* bad sectors in the kept part are written, and good again; those aimed stay bad */
	ck_assert_int_eq(store(&h, "badblocks", "+60-67"), 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 56, 24)], 0);
	ck_assert_str_eq(show(&h, "badblocks"), "64-67\n");
	/* wholly aimed: nothing goes down */
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE_ZEROES, 64, 8)], 0);
	ck_assert(medium_is(64, 8, -1));
	sh_teardown(&h);
}
END_TEST

/*
 * A write dropped in part while the backend takes nothing: its kept
 * pieces wait, then go down as the write's own (FUA kept); a piece that
 * fails fails the write as a whole.
 */
START_TEST(a_write_dropped_in_part_waits_for_room_and_fails_whole)
{
	struct stack_harness h;
	unsigned int b;

	/* delayed: held in the filter, due when the backend has stopped taking */
	setup(&h, "fault:up=1,down=1000,drop_writes=1,sectors=64-71,delay_write=1");
	sh_run_until(&h, START_NS + 2 * MS);
	blk_queue_lock(h.q);
	b = sh_queue_bio(&h, REQ_OP_WRITE, REQ_FUA, 56, 24, 0x33);
	blk_queue_unlock(h.q);
	sh_run_until(&h, h.clock.virtual_ns);
	sh_mem->refuse = true;
	sh_run_until(&h, h.clock.virtual_ns + 2 * MS);
	ck_assert(!h.ended_at[b]);
	ck_assert_uint_eq(sh_mem->nr_log, 0);
	sh_mem->refuse = false;
	sh_run_until(&h, h.clock.virtual_ns + MS);
	ck_assert_msg(h.ended_at[b], "the write never ended");
	ck_assert_int_eq(h.error[b], 0);
	ck_assert_uint_eq(sh_mem->nr_log, 2);
	ck_assert_uint_eq(sh_mem->log[0].sector, 56);
	ck_assert_uint_eq(sh_mem->log[0].nr, 8);
	ck_assert_uint_eq(sh_mem->log[1].sector, 72);
	ck_assert_uint_eq(sh_mem->log[1].nr, 8);
	ck_assert(sh_mem->log[0].flags & REQ_FUA);
	ck_assert(sh_mem->log[1].flags & REQ_FUA);
	ck_assert(medium_is(56, 8, 0x33));
	ck_assert(medium_is(64, 8, -1));
	ck_assert(medium_is(72, 8, 0x33));

	ck_assert_int_eq(store(&h, "rules", "delay_write=0"), 0);
	sh_run_until(&h, h.clock.virtual_ns + 2 * MS); /* down again */
	sh_mem->fail_writes = true;
	b = io(&h, REQ_OP_WRITE, 60, 16);
	ck_assert_int_eq(h.error[b], -EIO);
	ck_assert_uint_eq(h.bio[b].bi_good, 0);
	sh_teardown(&h);
}
END_TEST

/* corrupt_bio_byte and random corruption aimed at sector 8: bytes elsewhere are never changed. */
START_TEST(aimed_corruption_lands_only_in_the_aimed_sectors)
{
	struct stack_harness h;

	setup(&h, "fault:up=1,down=1000,corrupt_bio_byte=1,corrupt_value=7,corrupt_on=write,"
		  "sectors=8");
	sh_run_until(&h, START_NS + 2 * MS);
	io2(&h, REQ_OP_WRITE, 0, 8, 8); /* two bios: the second begins in sector 8 */
	ck_assert_uint_eq(sh_mem->data[0], 0x5a);
	ck_assert_uint_eq(sh_mem->data[8 * SECTOR_SIZE], 7);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 16, 8)], 0);
	ck_assert_uint_eq(sh_mem->data[16 * SECTOR_SIZE], 0x5a);
	sh_teardown(&h);

	setup(&h, "fault:up=1,down=1000,random_write_corrupt=1000000,seed=5,sectors=8");
	sh_run_until(&h, START_NS + 2 * MS);
	for (unsigned int k = 0; k < 20; k++) {
		unsigned int changed = 0;

		ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 0, 16)], 0);
		for (size_t i = 0; i < 16 * SECTOR_SIZE; i++)
			if (sh_mem->data[i] != 0x5a) {
				ck_assert_msg(i / SECTOR_SIZE == 8, "byte %zu changed", i);
				changed++;
			}
		ck_assert_uint_eq(changed, 1);
	}
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 32, 16)], 0);
	ck_assert(medium_is(32, 16, 0x5a));
	sh_teardown(&h);
}
END_TEST

/* delay_write=5 aimed at 64..71: a write there ends 5 ms later, others (and flushes) at once. */
START_TEST(aimed_delay_holds_only_the_aimed_requests)
{
	struct stack_harness h;
	unsigned int a, b, c, f;

	setup(&h, "fault:delay_write=5,delay_read=5,sectors=64-71");
	blk_queue_lock(h.q);
	a = sh_queue_bio(&h, REQ_OP_WRITE, 0, 0, 8, 0);
	b = sh_queue_bio(&h, REQ_OP_WRITE, 0, 68, 8, 0);
	c = sh_queue_bio(&h, REQ_OP_READ, 0, 200, 8, 0);
	blk_queue_unlock(h.q);
	sh_run_until(&h, START_NS + 10 * MS);
	ck_assert_uint_eq(h.ended_at[a], START_NS);
	ck_assert_uint_eq(h.ended_at[b], START_NS + 5 * MS);
	ck_assert_uint_eq(h.ended_at[c], START_NS); /* not aimed: not behind b */
	f = io(&h, REQ_OP_FLUSH, 0, 0);
	ck_assert_uint_eq(h.ended_at[f], START_NS + 10 * MS);
	ck_assert_uint_eq(stat_of(&h, "delayed"), 1);
	sh_teardown(&h);
}
END_TEST

/* A file of the ranges rqdisk-extents prints, at a new path of its own; the path. */
static const char *sectors_file(const char *text)
{
	static char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/check_fault.%d.sectors", (int)getpid());
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

/* sectors_file: lines of ranges, blank lines and comments; read whole when the rules are set. */
START_TEST(sectors_file_aims_at_its_ranges)
{
	struct stack_harness h;
	char spec[128];
	const char *path = sectors_file("# wal\n100-107\n\n  200-203/300 \r\n");

	snprintf(spec, sizeof(spec), "fault:error=write,sectors_file=%s", path);
	setup(&h, spec);
	ck_assert_str_eq(show(&h, "sectors"), "100-107\n200-203\n300-300\n");
	snprintf(spec, sizeof(spec), "error=write,sectors_file=%s\n", path);
	ck_assert_str_eq(show(&h, "rules"), spec);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 300, 1)], -EIO);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 301, 1)], 0);
	/* a new file through the rules */
	sectors_file("5-6\n");
	snprintf(spec, sizeof(spec), "sectors_file=%s", path);
	ck_assert_int_eq(store(&h, "rules", spec), 0);
	ck_assert_str_eq(show(&h, "sectors"), "5-6\n");
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 300, 1)], 0);
	ck_assert_int_eq(h.error[io(&h, REQ_OP_WRITE, 6, 1)], -EIO);
	/* a bad file changes nothing */
	sectors_file("5-6\n70000\n");
	ck_assert_int_eq(store(&h, "rules", spec), -EINVAL);
	ck_assert_str_eq(show(&h, "sectors"), "5-6\n");
	/* sectors= after it: the ranges, shown as such */
	ck_assert_int_eq(store(&h, "rules", "sectors=9"), 0);
	ck_assert_str_eq(show(&h, "rules"), "error=write,sectors=9-9\n");
	unlink(path);
	sh_teardown(&h);
}
END_TEST

/* Bad aims and bad files: one line naming the problem (and the file's line), nothing kept. */
START_TEST(bad_sectors_and_sectors_files_are_refused)
{
	char spec[4200], big[128];
	const char *path;
	FILE *f;

	sh_assert_refused("fault:error=read,sectors=9-8", "fault: sectors must be START-END");
	sh_assert_refused("fault:error=read,sectors=1/", "fault: sectors must be START-END");
	sh_assert_refused("fault:error=read,sectors=x", "fault: sectors must be START-END");
	sh_assert_refused("fault:error=flush,sectors=1", "error=flush with sectors= never fails");
	sh_assert_refused("fault:sectors_file=rel", "fault: sectors_file must be an absolute path");
	sh_assert_refused("fault:sectors_file=/nonexistent/x",
			  "fault: sectors_file /nonexistent/x: No such file");
	sh_assert_refused("fault:sectors_file=/tmp",
			  "fault: sectors_file /tmp: not a regular file");
	sh_assert_refused("fault:sectors_file=/dev/null",
			  "fault: sectors_file /dev/null: not a regular file");

	path = sectors_file("1-2\n3\nfour\n");
	snprintf(spec, sizeof(spec), "fault:error=read,sectors_file=%s", path);
	snprintf(big, sizeof(big), "sectors_file %s line 3: must be START-END", path);
	sh_assert_refused(spec, big);
	sectors_file("# nothing\n\n");
	snprintf(big, sizeof(big), "sectors_file %s holds no range", path);
	sh_assert_refused(spec, big);
	sectors_file("1-2\n99999999999999\n"); /* past a 1 TiB disk */
	snprintf(big, sizeof(big), "sectors_file %s line 2:", path);
	sh_assert_refused(spec, big);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite("1-2\n3\0004\n", 1, 8, f), 8); /* a NUL inside line 2 */
	ck_assert_int_eq(fclose(f), 0);
	snprintf(big, sizeof(big), "sectors_file %s line 2: must be START-END", path);
	sh_assert_refused(spec, big);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (unsigned int i = 0; i <= 65536; i++) /* never adjacent: one range each */
		fprintf(f, "%u\n", 2 * i);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(big, sizeof(big), "sectors_file %s line 65537: more than 65536 ranges", path);
	sh_assert_refused(spec, big);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (unsigned int i = 0; i < (4u << 20) / 8 + 1; i++)
		fputs("1-2/3-4\n", f);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(big, sizeof(big), "sectors_file %s: larger than 4 MiB", path);
	sh_assert_refused(spec, big);
	unlink(path);
}
END_TEST

static Suite *fault_suite(void)
{
	Suite *s = suite_create("fault");
	TCase *tc = tcase_create("fault");

	tcase_add_test(tc, prob_hits_within_margin_and_the_seed_repeats);
	tcase_add_test(tc, times_and_interval);
	tcase_add_test(tc, times_counts_only_what_the_rule_fails);
	tcase_add_test(tc, ranges_fail_from_their_first_sector);
	tcase_add_test(tc, flakey_up_and_down_on_the_virtual_clock);
	tcase_add_test(tc, flakey_error_reads_only);
	tcase_add_test(tc, badblocks_end_the_good_prefix_first);
	tcase_add_test(tc, write_clears_a_bad_sector_unless_sticky);
	tcase_add_test(tc, a_failed_or_dropped_write_leaves_bad_sectors_bad);
	tcase_add_test(tc, a_split_cut_short_keeps_no_unread_bytes_in_the_prefix);
	tcase_add_test(tc, a_hung_error_file_does_not_hold_up_the_close);
	tcase_add_test(tc, a_look_at_the_old_error_file_does_not_count_for_the_new);
	tcase_add_test(tc, badblocks_file);
	tcase_add_test(tc, corrupt_bio_byte_changes_exactly_that_byte);
	tcase_add_test(tc, drop_writes_completes_but_writes_nothing);
	tcase_add_test(tc, delays_and_spikes);
	tcase_add_test(tc, enable_switches_the_error_rule);
	tcase_add_test(tc, bad_rules_are_refused_and_change_nothing);
	tcase_add_test(tc, aimed_errors_touch_only_the_aimed_sectors);
	tcase_add_test(tc, aimed_flakey_fails_only_there);
	tcase_add_test(tc, aimed_drop_writes_loses_only_the_aimed_writes);
	tcase_add_test(tc, a_write_dropped_in_part_waits_for_room_and_fails_whole);
	tcase_add_test(tc, aimed_corruption_lands_only_in_the_aimed_sectors);
	tcase_add_test(tc, aimed_delay_holds_only_the_aimed_requests);
	tcase_add_test(tc, sectors_file_aims_at_its_ranges);
	tcase_add_test(tc, bad_sectors_and_sectors_files_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(fault_suite());
}
