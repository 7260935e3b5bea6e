/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_uring_flush.c - the io_uring driver on a real file: flushes, barriers
 * and FUA writes, discard and write zeroes, made durable.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uring_harness.h"

/* A flush, and a barrier write (a core-made preflush, then the write as FUA). */
START_TEST(test_flush_and_barrier)
{
	struct disk k;
	char *buf = mem_alloc(4 * KIB);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	write_pattern(&k, 0, 4 * KIB, 5);
	ck_assert_int_eq(disk_io(&k, REQ_OP_FLUSH, 0, 0, 0, NULL), 0);
	ck_assert_uint_eq(ios_done(&k, STAT_FLUSH), 1);
	mem_fill(buf, 4 * KIB, 6);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, REQ_BARRIER, 8, 4 * KIB, buf), 0);
	ck_assert_uint_eq(ios_done(&k, STAT_FLUSH), 2);
	file_has(&k, 8 * 512, buf, 4 * KIB);
	disk_close(&k);
	free(buf);
}
END_TEST

START_TEST(test_fua_write)
{
	struct disk k;
	char *buf = mem_alloc(12 * KIB);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(buf, 12 * KIB, 7);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, REQ_FUA, 24, 12 * KIB, buf), 0);
	file_has(&k, 24 * 512, buf, 12 * KIB);
	disk_close(&k);
	free(buf);
}
END_TEST

/* Discard punches a hole: the range reads back as zeros, its neighbours keep their data. */
START_TEST(test_discard)
{
	struct disk k;
	char *want = mem_alloc(64 * KIB), *got = mem_alloc(64 * KIB);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(want, 64 * KIB, 8);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 64, 64 * KIB, want), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_DISCARD, 0, 64 + 16, 32 * KIB, NULL), 0);
	memset(want + 8 * KIB, 0, 32 * KIB);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 64, 64 * KIB, got), 0);
	ck_assert(!memcmp(got, want, 64 * KIB));
	file_has(&k, 64 * 512, want, 64 * KIB);
	/* a barrier discard: FUA on a discard means a datasync after it */
	ck_assert_int_eq(disk_io(&k, REQ_OP_DISCARD, REQ_BARRIER, 64, 8 * KIB, NULL), 0);
	memset(want, 0, 8 * KIB);
	file_has(&k, 64 * 512, want, 64 * KIB);
	disk_close(&k);
	free(want), free(got);
}
END_TEST

/* Whether fallocate(FALLOC_FL_ZERO_RANGE) works on the file fd. */
static bool zero_range_works(int fd)
{
	if (!fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 4096))
		return true;
	ck_assert_msg(errno == EOPNOTSUPP, "fallocate(ZERO_RANGE): %s", strerror(errno));
	return false;
}

/* A file of size bytes in memory (tmpfs without a mount: no ZERO_RANGE there). */
static int memory_file(off_t size)
{
	int fd = memfd_create("check_uring", 0);

	ck_assert_msg(fd >= 0, "memfd_create: %s", strerror(errno));
	ck_assert_int_eq(ftruncate(fd, size), 0);
	return fd;
}

/*
 * Write-zeroes on a file in $TMPDIR (ext4 and xfs zero ranges) and on a
 * memfd, whose shmem answers EOPNOTSUPP: the fallback writes the zeros in
 * pieces, each piece ending its whole sectors.  Which way was taken is
 * checked against what the file system says it can do.
 */
START_TEST(test_write_zeroes)
{
	bool in_memory = _i / NR_ELEVATORS;
	unsigned int size = 3 * MIB, zstart = 4 * KIB, zlen = 2 * MIB + 4 * KIB;
	char *want = mem_alloc(size), *got = mem_alloc(size);
	int fd = in_memory ? memory_file(DISK_SIZE) : temp_file(tmp_dir(), DISK_SIZE, false);
	bool zero_range = zero_range_works(fd);
	unsigned long zero_writes;
	struct disk k;

	fprintf(stderr, "test_write_zeroes: %s: %s\n", in_memory ? "memfd" : tmp_dir(),
		zero_range ? "FALLOC_FL_ZERO_RANGE" : "the fallback, zeros written");
	if (in_memory)
		ck_assert_msg(!zero_range, "a memfd zeroes ranges now: the fallback is not tested");
	disk_init(&k, fd, elevators[_i % NR_ELEVATORS]);
	disk_start(&k, 0);
	mem_fill(want, size, 9);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 0, size, want), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE_ZEROES, 0, zstart / 512, zlen, NULL), 0);
	memset(want + zstart, 0, zlen);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 0, size, got), 0);
	ck_assert(!memcmp(got, want, size));
	file_has(&k, 0, want, size);
	/* FUA zeroing: durable through a datasync after it */
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE_ZEROES, REQ_FUA, 0, 8 * KIB, NULL), 0);
	memset(want, 0, 8 * KIB);
	file_has(&k, 0, want, size);
	zero_writes = file_backend_zero_writes(uring_driver_stack(k.d)->bottom);
	if (zero_range)
		ck_assert_uint_eq(zero_writes, 0);
	else
		ck_assert_uint_ge(zero_writes, 2); /* both zeroings, in one request or more */
	disk_close(&k);
	free(want), free(got);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("uring_flush");
	TCase *tc = tcase_create("flush");
	int unavailable = uring_available();

	if (unavailable)
		return unavailable;
	tcase_set_timeout(tc, 2 * WAIT_SECONDS);
	tcase_add_loop_test(tc, test_flush_and_barrier, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_fua_write, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_discard, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_write_zeroes, 0, 2 * NR_ELEVATORS);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
