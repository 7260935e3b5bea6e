/* SPDX-License-Identifier: BSD-3-Clause */
/* check_segments.c - splitting to the limits, scatter/gather mapping and bouncing. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_driver.h"

static char mem[2 << 20] __attribute__((aligned(65536)));

START_TEST(test_1mib_bio_is_split_under_the_defaults)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb;
	sector_t next = 0;

	tbio_init(&tb, REQ_OP_WRITE, 0, 2048, mem);
	submit_bio(fd->q, &tb.bio);
	ck_assert_uint_eq(fd->nr_events, 9); /* 8 x 255 + 8 */
	for (unsigned int i = 0; i < fd->nr_events; i++) {
		ck_assert_uint_eq(fd->events[i].sector, next);
		ck_assert_uint_eq(fd->events[i].nr_sectors, i < 8 ? 255 : 8);
		ck_assert_uint_le(fd->events[i].nr_segments, 128);
		next += fd->events[i].nr_sectors;
	}
	ck_assert_uint_eq(fd->q->split, 1);
	/* the bio ends once, after its last piece */
	for (unsigned int i = 0; i < 8; i++)
		fake_complete(fd, fake_nth(fd, 0), 0, 255);
	ck_assert_int_eq(tb.ended, 0);
	fake_complete(fd, fake_nth(fd, 0), 0, 8);
	ck_assert_int_eq(tb.ended, 1);
	ck_assert_int_eq(tb.error, 0);
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_split_keeps_whole_logical_blocks)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb;

	fd->q->limits.logical_block_size = 4096;
	tbio_init(&tb, REQ_OP_READ, 0, 2048, mem);
	submit_bio(fd->q, &tb.bio);
	for (unsigned int i = 0; i < fd->nr_events; i++) {
		ck_assert_uint_eq(fd->events[i].sector % 8, 0);
		ck_assert_uint_eq(fd->events[i].nr_sectors % 8, 0);
		ck_assert_uint_le(fd->events[i].nr_sectors, 248);
	}
	ck_assert_uint_eq(fd->events[0].nr_sectors, 248);
	fake_complete_all(fd);
	ck_assert_int_eq(tb.ended, 1);
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_split_at_max_segments)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb;
	struct bio_vec v[4] = {
		{ mem, 4096 }, { mem + 65536, 4096 }, { mem + 131072, 4096 }, { mem + 196608, 4096 },
	};

	fd->q->limits.max_phys_segments = 3;
	tbio_init_vecs(&tb, REQ_OP_WRITE, 0, v, 4);
	submit_bio(fd->q, &tb.bio);
	ck_assert_uint_eq(fd->nr_events, 2);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 24);
	ck_assert_uint_eq(fd->events[0].nr_segments, 3);
	ck_assert_uint_eq(fd->events[1].nr_sectors, 8);
	fake_complete_all(fd);
	ck_assert_int_eq(tb.ended, 1);
	fake_disk_free(fd);
}
END_TEST

static int map(struct fake_disk *fd, struct iovec *sg)
{
	struct request *rq = fake_nth(fd, 0);

	ck_assert_ptr_nonnull(rq);
	return blk_rq_map_sg(fd->q, rq, sg);
}

/* Three bios of contiguous memory: one entry, up to max_segment_size. */
START_TEST(test_map_sg_joins_contiguous_memory)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb[3];
	struct iovec sg[8];

	fd->stopped = true;
	for (int i = 0; i < 3; i++) {
		tbio_init(&tb[i], REQ_OP_WRITE, (sector_t)i * 8, 8, mem + i * 4096);
		submit_bio(fd->q, &tb[i].bio);
	}
	fake_start(fd);
	ck_assert_int_eq(map(fd, sg), 1);
	ck_assert_ptr_eq(sg[0].iov_base, mem);
	ck_assert_uint_eq(sg[0].iov_len, 12288);
	ck_assert_uint_eq(fake_nth(fd, 0)->nr_phys_segments, 1);
	fake_complete_all(fd);
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_map_sg_splits_at_segment_size_and_boundary)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb;
	struct iovec sg[16];

	fd->q->limits.max_segment_size = 8192;
	fd->q->limits.seg_boundary_mask = 0x3fff; /* 16 KiB */
	/* 20 KiB from 4 KiB in: cut at 12 KiB (size), then 16 KiB (boundary) */
	tbio_init(&tb, REQ_OP_WRITE, 0, 40, mem + 4096);
	submit_bio(fd->q, &tb.bio);
	ck_assert_int_eq(map(fd, sg), 3);
	ck_assert_ptr_eq(sg[0].iov_base, mem + 4096);
	ck_assert_uint_eq(sg[0].iov_len, 8192);
	ck_assert_ptr_eq(sg[1].iov_base, mem + 12288);
	ck_assert_uint_eq(sg[1].iov_len, 4096);
	ck_assert_ptr_eq(sg[2].iov_base, mem + 16384);
	ck_assert_uint_eq(sg[2].iov_len, 8192);
	ck_assert_uint_eq(fake_nth(fd, 0)->nr_phys_segments, 3);
	fake_complete_all(fd);
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_map_sg_keeps_separate_memory_apart)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb;
	struct iovec sg[4];
	struct bio_vec v[2] = { { mem + 8192, 4096 }, { mem, 4096 } };

	tbio_init_vecs(&tb, REQ_OP_READ, 0, v, 2);
	submit_bio(fd->q, &tb.bio);
	ck_assert_int_eq(map(fd, sg), 2);
	ck_assert_ptr_eq(sg[0].iov_base, mem + 8192);
	ck_assert_ptr_eq(sg[1].iov_base, mem);
	fake_complete_all(fd);
	fake_disk_free(fd);
}
END_TEST

/* Misaligned memory is written from, and read into, an aligned copy. */
START_TEST(test_misaligned_memory_is_bounced)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb;
	struct iovec sg[2];
	char *user = mem + 1;

	memset(user, 'w', 4096);
	tbio_init(&tb, REQ_OP_WRITE, 0, 8, user);
	submit_bio(fd->q, &tb.bio);
	ck_assert_uint_eq(fd->q->bounced, 1);
	ck_assert_int_eq(map(fd, sg), 1);
	ck_assert_uint_eq((uintptr_t)sg[0].iov_base & 511, 0);
	ck_assert_ptr_ne(sg[0].iov_base, user);
	ck_assert_int_eq(memcmp(sg[0].iov_base, user, 4096), 0);
	fake_complete_all(fd);
	ck_assert_int_eq(tb.ended, 1);

	memset(user, 0, 4096);
	tbio_init(&tb, REQ_OP_READ, 0, 8, user);
	submit_bio(fd->q, &tb.bio);
	ck_assert_uint_eq(fd->q->bounced, 2);
	ck_assert_int_eq(map(fd, sg), 1);
	memset(sg[0].iov_base, 'r', 4096); /* the "device" fills the bounce buffer */
	ck_assert_uint_eq((unsigned char)user[0], 0);
	fake_complete_all(fd);
	ck_assert_int_eq(tb.ended, 1);
	ck_assert_uint_eq((unsigned char)user[0], 'r');
	ck_assert_uint_eq((unsigned char)user[4095], 'r');
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_aligned_memory_is_not_bounced)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb;
	struct iovec sg[2];

	tbio_init(&tb, REQ_OP_WRITE, 0, 8, mem + 512);
	submit_bio(fd->q, &tb.bio);
	ck_assert_uint_eq(fd->q->bounced, 0);
	ck_assert_int_eq(map(fd, sg), 1);
	ck_assert_ptr_eq(sg[0].iov_base, mem + 512);
	fake_complete_all(fd);
	fake_disk_free(fd);
}
END_TEST

/* Segments too small for one block within max_segments: copied, never stuck. */
START_TEST(test_tiny_segments_fall_back_to_a_bounce)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb;
	struct bio_vec v[8];

	fd->q->limits.dma_alignment = 0;
	fd->q->limits.max_phys_segments = 4;
	for (int i = 0; i < 8; i++)
		v[i] = (struct bio_vec){ mem + i * 1000, 64 }; /* 4 segments hold half a sector */
	tbio_init_vecs(&tb, REQ_OP_WRITE, 0, v, 8);
	submit_bio(fd->q, &tb.bio);
	ck_assert_uint_eq(fd->q->bounced, 1);
	ck_assert_uint_eq(fd->nr_events, 1);
	ck_assert_uint_eq(fd->events[0].nr_sectors, 1);
	ck_assert_uint_eq(fd->events[0].nr_segments, 1);
	fake_complete_all(fd);
	ck_assert_int_eq(tb.ended, 1);
	ck_assert_int_eq(tb.error, 0);
	fake_disk_free(fd);
}
END_TEST

START_TEST(test_discard_splits_at_max_discard_sectors)
{
	struct fake_disk *fd = fake_disk_new("noop");
	struct test_bio tb;

	fd->q->limits.max_discard_sectors = 1024;
	tbio_init(&tb, REQ_OP_DISCARD, 0, 4096, NULL);
	submit_bio(fd->q, &tb.bio);
	ck_assert_uint_eq(fd->nr_events, 4);
	ck_assert_uint_eq(fd->events[3].sector, 3072);
	ck_assert_uint_eq(fd->events[3].nr_segments, 0);
	fake_complete_all(fd);
	ck_assert_int_eq(tb.ended, 1);
	fake_disk_free(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("segments");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_1mib_bio_is_split_under_the_defaults);
	tcase_add_test(tc, test_split_keeps_whole_logical_blocks);
	tcase_add_test(tc, test_split_at_max_segments);
	tcase_add_test(tc, test_map_sg_joins_contiguous_memory);
	tcase_add_test(tc, test_map_sg_splits_at_segment_size_and_boundary);
	tcase_add_test(tc, test_map_sg_keeps_separate_memory_apart);
	tcase_add_test(tc, test_misaligned_memory_is_bounced);
	tcase_add_test(tc, test_aligned_memory_is_not_bounced);
	tcase_add_test(tc, test_tiny_segments_fall_back_to_a_bounce);
	tcase_add_test(tc, test_discard_splits_at_max_discard_sectors);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
