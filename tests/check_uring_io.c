/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_uring_io.c - the io_uring driver on a real file: reads and writes land,
 * memory off the alignment is bounced, a big bio is split, a small ring
 * serves a deep queue.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "uring_harness.h"

/* A write of three segments reads back, and so do two writes a read spans. */
START_TEST(test_write_then_read)
{
	struct disk k;
	char *a = mem_alloc(16 * KIB), *b = mem_alloc(32 * KIB), *c = mem_alloc(16 * KIB);
	char *want = mem_alloc(64 * KIB), *got = mem_alloc(64 * KIB);
	struct tbio tb[2];

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(want, 64 * KIB, 1);
	memcpy(a, want, 16 * KIB);
	memcpy(b, want + 16 * KIB, 32 * KIB);
	memcpy(c, want + 48 * KIB, 16 * KIB);
	tbio_setup(&tb[0], &k, REQ_OP_WRITE, 0, 16, 64 * KIB, a);
	tb[0].vec[1] = (struct bio_vec){ b, 32 * KIB };
	tb[0].vec[2] = (struct bio_vec){ c, 16 * KIB };
	tb[0].vec[0].bv_len = 16 * KIB;
	tb[0].bio.bi_vcnt = 3;
	disk_submit(&k, &tb[0]);
	wait_ended(&k, 1);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 16, 64 * KIB, got), 0);
	ck_assert(!memcmp(got, want, 64 * KIB));
	file_has(&k, 16 * 512, want, 64 * KIB);

	/* two plugged writes side by side (one request under deadline), one read */
	mem_fill(want, 16 * KIB, 2);
	disk_plug(&k);
	tbio_setup(&tb[0], &k, REQ_OP_WRITE, 0, 1000, 8 * KIB, want);
	disk_submit(&k, &tb[0]);
	tbio_setup(&tb[1], &k, REQ_OP_WRITE, 0, 1016, 8 * KIB, want + 8 * KIB);
	disk_submit(&k, &tb[1]);
	disk_unplug(&k);
	wait_ended(&k, 2);
	ck_assert_int_eq(tb[0].error, 0);
	ck_assert_int_eq(tb[1].error, 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 1000, 16 * KIB, got), 0);
	ck_assert(!memcmp(got, want, 16 * KIB));
	file_has(&k, 1000 * 512, want, 16 * KIB);
	disk_close(&k);
	free(a), free(b), free(c), free(want), free(got);
}
END_TEST

/* Memory off the DMA alignment goes through a bounce buffer both ways. */
START_TEST(test_unaligned_memory)
{
	struct disk k;
	char *src = mem_alloc(8 * KIB + 8), *dst = mem_alloc(8 * KIB + 8);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(src + 8, 8 * KIB, 3);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 40, 8 * KIB, src + 8), 0);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 40, 8 * KIB, dst + 8), 0);
	ck_assert_uint_ge(k.q->bounced, 2);
	ck_assert(!memcmp(src + 8, dst + 8, 8 * KIB));
	file_has(&k, 40 * 512, src + 8, 8 * KIB);
	disk_close(&k);
	free(src), free(dst);
}
END_TEST

/* 1 MiB is more than one request may carry: the core splits, the pieces land. */
START_TEST(test_big_write_is_split)
{
	struct disk k;
	char *want = mem_alloc(MIB), *got = mem_alloc(MIB);

	disk_open(&k, elevators[_i], tmp_dir(), DISK_SIZE, false, 0);
	mem_fill(want, MIB, 4);
	ck_assert_int_eq(disk_io(&k, REQ_OP_WRITE, 0, 2048, MIB, want), 0);
	ck_assert_uint_gt(k.q->split, 0);
	file_has(&k, MIB, want, MIB);
	ck_assert_int_eq(disk_io(&k, REQ_OP_READ, 0, 2048, MIB, got), 0);
	ck_assert(!memcmp(got, want, MIB));
	disk_close(&k);
	free(want), free(got);
}
END_TEST

/*
 * Far more requests than SQEs, let out in one batch by an unplug: the SQ
 * fills, goes out to make room, and more are in flight than the CQ holds.
 * Each request is issued once: none is taken and given back for want of
 * an SQE.
 */
START_TEST(test_small_ring_deep_queue)
{
	enum { N = 256, STRIDE = 37 };
	struct tbio *tb = calloc(N, sizeof(*tb));
	char *want = mem_alloc(N * 4 * KIB), *got = mem_alloc(N * 4 * KIB);
	struct trace_counts tc;
	struct disk k;

	ck_assert_ptr_nonnull(tb);
	disk_init(&k, temp_file(tmp_dir(), DISK_SIZE, false), elevators[_i]);
	k.q->limits.nomerges = BLK_MERGES_NONE; /* N requests, not a few big ones */
	k.q->unplug_thresh = N + 1;
	disk_start(&k, 4);
	disk_trace_start(&k);
	mem_fill(want, N * 4 * KIB, 14);
	disk_plug(&k);
	for (unsigned int i = 0; i < N; i++) {
		unsigned int blk = i * STRIDE % N;

		tbio_setup(&tb[i], &k, REQ_OP_WRITE, 0, blk * 8, 4 * KIB, want + blk * 4 * KIB);
		disk_submit(&k, &tb[i]);
	}
	disk_unplug(&k);
	wait_ended(&k, N);
	for (unsigned int i = 0; i < N; i++)
		ck_assert_int_eq(tb[i].error, 0);
	file_has(&k, 0, want, N * 4 * KIB);
	disk_plug(&k);
	for (unsigned int i = 0; i < N; i++) {
		tbio_setup(&tb[i], &k, REQ_OP_READ, 0, i * 8, 4 * KIB, got + i * 4 * KIB);
		disk_submit(&k, &tb[i]);
	}
	disk_unplug(&k);
	wait_ended(&k, N);
	for (unsigned int i = 0; i < N; i++)
		ck_assert_int_eq(tb[i].error, 0);
	ck_assert(!memcmp(got, want, N * 4 * KIB));
	tc = disk_trace_stop(&k);
	ck_assert_msg(tc.issued == 2 * N && tc.requeued == 0 && tc.completed == 2 * N,
		      "%u D, %u R, %u C for %u requests", tc.issued, tc.requeued, tc.completed,
		      2 * N);
	disk_close(&k);
	free(tb), free(want), free(got);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("uring_io");
	TCase *tc = tcase_create("io");
	int unavailable = uring_available();

	if (unavailable)
		return unavailable;
	tcase_set_timeout(tc, 2 * WAIT_SECONDS);
	tcase_add_loop_test(tc, test_write_then_read, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_unaligned_memory, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_big_write_is_split, 0, NR_ELEVATORS);
	tcase_add_loop_test(tc, test_small_ring_deep_queue, 0, NR_ELEVATORS);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
