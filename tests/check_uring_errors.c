/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_uring_errors.c - the io_uring driver on a real file: what the kernel fails reaches the bio,
 * and a short read or write is continued, not taken for success.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "uring_harness.h"

/* 8 KiB of file, a 16 KiB read: the short read goes on, meets the end, fails with EIO. */
START_TEST(test_read_past_eof)
{
	struct disk k;
	char *want = mem_alloc(8 * KIB), *got = mem_alloc(16 * KIB);

	disk_open(&k, elevators[_i], tmp_dir(), 8 * KIB, false, 0);
	mem_fill(want, 8 * KIB, 10);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 0, 8 * KIB, want), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 0, 16 * KIB, got), -EIO);
	ck_assert(!memcmp(got, want, 8 * KIB)); /* the part before the end was read */
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 16, 8 * KIB, got), -EIO);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 8, 4 * KIB, got), 0);
	disk_close(&k);
	free(want), free(got);
}
END_TEST

/*
 * The file ends 100 bytes into sector 16.  Two 8 KiB reads (one request
 * under deadline): the one before the end succeeds with its data, the one
 * across it fails.  The kernel's first answer is short by a part sector:
 * the continuation starts inside sector 16, not over again.  Under a model
 * too, where nothing ends before the modelled time: the sectors read before
 * the error still end as done.
 */
START_TEST(test_short_read_is_continued)
{
	unsigned int fsize = 8 * KIB + 100;
	char *want = mem_alloc(fsize), *got = mem_alloc(16 * KIB);
	struct tbio tb[2];
	struct disk k;

	disk_open_modelled(&k, _i, fsize);
	mem_fill(want, fsize, 11);
	ck_assert_int_eq(pwrite(k.fd, want, fsize, 0), (ssize_t)fsize);
	disk_plug(&k);
	tbio_setup(&tb[0], &k, REQ_OP_READ, 0, 0, 8 * KIB, got);
	disk_submit(&k, &tb[0]);
	tbio_setup(&tb[1], &k, REQ_OP_READ, 0, 16, 8 * KIB, got + 8 * KIB);
	disk_submit(&k, &tb[1]);
	disk_unplug(&k);
	wait_ended(&k, 2);
	if (!strcmp(elevator_of(_i), "deadline"))
		ck_assert_uint_eq(k.q->stats.merges[STAT_READ], 1);
	ck_assert_int_eq(tb[0].ended, 1);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert(!memcmp(got, want, 8 * KIB));
	ck_assert_int_eq(tb[1].ended, 1);
	ck_assert_int_eq(tb[1].error, -EIO);
	ck_assert(!memcmp(got + 8 * KIB, want + 8 * KIB, 100));
	disk_close(&k);
	free(want), free(got);
}
END_TEST

static void set_fsize_limit(rlim_t limit, struct rlimit *old)
{
	struct rlimit rl;

	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, old), 0);
	rl = *old;
	rl.rlim_cur = limit;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

/*
 * RLIMIT_FSIZE makes the kernel write short, deterministically: up to
 * the limit, then EFBIG.  The bio before the limit succeeds and lands, the
 * one across it gets EFBIG, and the part sector before the limit lands too.
 * Under a model as well: the written bio is not failed with the rest.
 */
START_TEST(test_short_write_is_continued)
{
	unsigned int limit = 8 * KIB + 100;
	char *want = mem_alloc(16 * KIB);
	struct rlimit old;
	struct tbio tb[2];
	struct disk k;

	disk_open_modelled(&k, _i, DISK_SIZE);
	mem_fill(want, 16 * KIB, 12);
	signal(SIGXFSZ, SIG_IGN);
	set_fsize_limit(limit, &old);
	disk_plug(&k);
	tbio_setup(&tb[0], &k, REQ_OP_WRITE, 0, 0, 8 * KIB, want);
	disk_submit(&k, &tb[0]);
	tbio_setup(&tb[1], &k, REQ_OP_WRITE, 0, 16, 8 * KIB, want + 8 * KIB);
	disk_submit(&k, &tb[1]);
	disk_unplug(&k);
	wait_ended(&k, 2);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	if (!strcmp(elevator_of(_i), "deadline"))
		ck_assert_uint_eq(k.q->stats.merges[STAT_WRITE], 1);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert_int_eq(tb[1].error, -EFBIG);
	file_has(&k, 0, want, limit);
	disk_close(&k);
	free(want);
}
END_TEST

/* What the kernel answers reaches the bio: writes on a read-only file get EBADF. */
START_TEST(test_kernel_error_reaches_the_bio)
{
	struct disk k;
	char *buf = mem_alloc(8 * KIB);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, true, 0);
	mem_fill(buf, 8 * KIB, 13);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 0, 8 * KIB, buf), -EBADF);
	ck_assert_int_eq(disk_io(&k, REQ_OP_DISCARD, 0, 0, 8 * KIB, NULL), -EBADF);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE_ZEROES, 0, 0, 8 * KIB, NULL), -EBADF);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 0, 8 * KIB, buf), 0);
	ck_assert(mem_is_zero(buf, 8 * KIB));
	disk_close(&k);
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("uring_errors");
	TCase *tc = tcase_create("errors");
	int unavailable = uring_available();

	if (unavailable)
		return unavailable;
	tcase_set_timeout(tc, 2 * WAIT_SECONDS);
	tcase_add_loop_test(tc, test_read_past_eof, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_short_read_is_continued, 0, 2 * NR_ELEVATORS);
	tcase_add_loop_test(tc, test_short_write_is_continued, 0, 2 * NR_ELEVATORS);
	tcase_add_loop_test(tc, test_kernel_error_reaches_the_bio, 0, NR_ELEVATORS);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
