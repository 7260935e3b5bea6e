/* SPDX-License-Identifier: BSD-3-Clause */
/* fake_driver.c - a driver for unit tests: takes requests and completes them on command. */
#include <check.h>
#include <stdlib.h>

#include "fake_driver.h"

unsigned int tbio_completions;

static void fake_request_fn(struct request_queue *q)
{
	struct fake_disk *fd = q->queuedata;
	struct request *rq;

	while (!fd->stopped && (rq = blk_fetch_request(q))) {
		TAILQ_INSERT_TAIL(&fd->dispatched, rq, queuelist);
		fd->nr_dispatched++;
		ck_assert_uint_lt(fd->nr_events, FAKE_MAX_EVENTS);
		fd->events[fd->nr_events++] = (struct fake_event){
			.op = rq->cmd_op,
			.flags = rq->cmd_flags,
			.sector = blk_rq_pos(rq),
			.nr_sectors = blk_rq_sectors(rq),
			.nr_segments = rq->nr_phys_segments,
			.epoch = rq->epoch,
			.pid = rq->pid,
			.ioprio = rq->ioprio,
		};
		if (fd->on_dispatch)
			fd->on_dispatch(fd, rq);
	}
}

struct fake_disk *fake_disk_new(const char *elevator)
{
	struct fake_disk *fd = calloc(1, sizeof(*fd));

	ck_assert_ptr_nonnull(fd);
	blk_virtual_clock_init(&fd->clock, 1000000000ull);
	fd->q = blk_init_queue(fake_request_fn, NULL, &fd->clock);
	ck_assert_ptr_nonnull(fd->q);
	fd->q->queuedata = fd;
	TAILQ_INIT(&fd->dispatched);
	ck_assert_int_eq(elevator_init(fd->q, elevator), 0);
	return fd;
}

void fake_disk_free(struct fake_disk *fd)
{
	ck_assert(TAILQ_EMPTY(&fd->dispatched));
	ck_assert(blk_queue_idle(fd->q));
	blk_cleanup_queue(fd->q);
	free(fd);
}

/* The nth request still out, from 0, in dispatch order. */
struct request *fake_nth(struct fake_disk *fd, unsigned int n)
{
	struct request *rq;

	TAILQ_FOREACH(rq, &fd->dispatched, queuelist)
		if (!n--)
			return rq;
	return NULL;
}

void fake_complete(struct fake_disk *fd, struct request *rq, int error, unsigned int nr_sectors)
{
	bool last = nr_sectors >= blk_rq_sectors(rq) || (error && nr_sectors == 0);

	if (last) {
		TAILQ_REMOVE(&fd->dispatched, rq, queuelist);
		fd->nr_dispatched--;
	}
	ck_assert_int_eq(blk_end_request(rq, error, nr_sectors), !last);
}

void fake_complete_all(struct fake_disk *fd)
{
	struct request *rq;

	while ((rq = TAILQ_FIRST(&fd->dispatched)))
		fake_complete(fd, rq, 0, blk_rq_sectors(rq));
}

/* Complete what is out now, not what that lets in. */
void fake_complete_batch(struct fake_disk *fd)
{
	for (unsigned int n = fd->nr_dispatched; n; n--) {
		struct request *rq = TAILQ_FIRST(&fd->dispatched);

		fake_complete(fd, rq, 0, blk_rq_sectors(rq));
	}
}

void fake_start(struct fake_disk *fd)
{
	fd->stopped = false;
	blk_run_queue(fd->q);
}

static void tbio_end_io(struct bio *bio, int error)
{
	struct test_bio *tb = bio->bi_private;

	tb->ended++;
	tb->error = error;
	tb->order = ++tbio_completions;
}

void tbio_init_vecs(struct test_bio *tb, enum req_op op, sector_t sector,
		    const struct bio_vec *vecs, unsigned short n)
{
	unsigned int size = 0;

	ck_assert_uint_le(n, TBIO_MAX_VECS);
	for (unsigned short i = 0; i < n; i++) {
		tb->vecs[i] = vecs[i];
		size += (unsigned int)vecs[i].bv_len;
	}
	bio_init(&tb->bio, op, sector, size, tb->vecs, n);
	tb->bio.bi_end_io = tbio_end_io;
	tb->bio.bi_private = tb;
	tb->ended = 0;
	tb->error = 0;
	tb->order = 0;
}

/* One segment of sectors at buf (NULL: no data, for flush/discard/zeroes). */
void tbio_init(struct test_bio *tb, enum req_op op, sector_t sector, unsigned int sectors,
	       void *buf)
{
	struct bio_vec v = { buf, (size_t)sectors << SECTOR_SHIFT };

	tbio_init_vecs(tb, op, sector, &v, buf ? 1 : 0);
	tb->bio.bi_size = sectors << SECTOR_SHIFT;
}

/* Run every test of s; the exit status for main. */
int fake_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

const char *fake_elevator(int i)
{
	return i ? elevator_builtin_names()[i - 1] : "none";
}

int fake_nr_elevators(void)
{
	int n = 1;

	for (const char *const *e = elevator_builtin_names(); *e; e++)
		n++;
	return n;
}
