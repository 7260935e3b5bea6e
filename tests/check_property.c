/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_property.c - random streams of reads, writes, discards and barriers,
 * completed in random order and random parts, against every rule of the
 * core: each bio ends once with the right error, no request breaks a
 * limit, every sector maps to the right memory, and no barrier is passed.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elv_harness.h"

#define NR_SEEDS 16 /* per elevator; RQDISK_PROPERTY_SEEDS changes it */
#define NR_BIOS 300
#define DISK_SECTORS 8192
#define MAX_VECS 4

/* Check records every passing ck_assert with a write(2): too slow for millions. */
#define REQUIRE(cond, ...)                         \
	do {                                       \
		if (!(cond))                       \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

/* Every elevator, from the registry (fake_elevator()). */
#define NR_ELEVATORS ((unsigned int)fake_nr_elevators())

struct pbio {
	struct bio bio;
	struct bio_vec vecs[MAX_VECS];
	void *alloc[MAX_VECS];
	bool barrier;        /* a flush or a barrier write */
	bool expect_error;   /* some part was completed with an error */
	bool preflush_done;  /* its preflush completed (barrier writes) */
	int ended;
	int error;
};

struct prop {
	struct pbio bios[NR_BIOS];
	unsigned int nr_submitted;
	unsigned int first_unended; /* every bio before it has ended */
	int prev_barrier[NR_BIOS];  /* the last barrier submitted before each bio, or -1 */
	sector_t last_end; /* of the last bio made */
};

static unsigned int rnd(unsigned int *seed, unsigned int n)
{
	return (unsigned int)(rand_r(seed) % n);
}

static uint64_t stamp(sector_t sector)
{
	return 0x5eed000000000000ull | sector;
}

/* Copy between a flat buffer and len bytes of vecs from offset. */
static void vec_copy(const struct bio_vec *v, unsigned int n, size_t off, char *buf, size_t len,
		     bool to_vecs)
{
	for (unsigned int i = 0; i < n && len; i++) {
		size_t take;

		if (off >= v[i].bv_len) {
			off -= v[i].bv_len;
			continue;
		}
		take = v[i].bv_len - off < len ? v[i].bv_len - off : len;
		if (to_vecs)
			memcpy((char *)v[i].bv_base + off, buf, take);
		else
			memcpy(buf, (char *)v[i].bv_base + off, take);
		buf += take;
		len -= take;
		off = 0;
	}
}

static void fill_stamps(char *buf, sector_t sector, unsigned int sectors)
{
	for (unsigned int s = 0; s < sectors; s++)
		for (unsigned int w = 0; w < SECTOR_SIZE / 8; w++) {
			uint64_t v = stamp(sector + s);

			memcpy(buf + s * SECTOR_SIZE + w * 8, &v, 8);
		}
}

static void check_stamps(const char *buf, sector_t sector, unsigned int sectors, const char *what)
{
	for (unsigned int s = 0; s < sectors; s++)
		for (unsigned int w = 0; w < SECTOR_SIZE / 8; w++) {
			uint64_t v;

			memcpy(&v, buf + s * SECTOR_SIZE + w * 8, 8);
			REQUIRE(v == stamp(sector + s), "%s: sector %llu holds %llx", what,
				(unsigned long long)(sector + s), (unsigned long long)v);
		}
}

static struct pbio *root_of(struct bio *bio)
{
	while (bio->bi_parent)
		bio = bio->bi_parent;
	return (struct pbio *)bio;
}

static void pbio_end_io(struct bio *bio, int error)
{
	struct prop *p = bio->bi_private;
	struct pbio *pb = (struct pbio *)bio;

	REQUIRE((pb->ended) == (0), "pb->ended == 0");
	pb->ended++;
	pb->error = error;
	if (bio->bi_op == REQ_OP_READ && !error) {
		char *buf = malloc(bio->bi_size);

		vec_copy(pb->vecs, bio->bi_vcnt, 0, buf, bio->bi_size, false);
		check_stamps(buf, bio->bi_sector, bio_sectors(bio), "read");
		free(buf);
	}
	while (p->first_unended < p->nr_submitted && p->bios[p->first_unended].ended)
		p->first_unended++;
}

static void check_limits(struct request_queue *q, struct request *rq)
{
	const struct queue_limits *lim = &q->limits;
	unsigned int lbs = lim->logical_block_size >> SECTOR_SHIFT;
	sector_t next = blk_rq_pos(rq);
	unsigned int total = 0;
	struct bio *bio;

	REQUIRE((blk_rq_sectors(rq)) <= (queue_max_sectors(lim, rq->cmd_op)), "blk_rq_sectors(rq) <= queue_max_sectors(lim, rq->cmd_op)");
	REQUIRE((blk_rq_pos(rq) % lbs) == (0), "request start breaks the logical block size");
	REQUIRE((blk_rq_sectors(rq) % lbs) == (0), "request size breaks the logical block size");
	rq_for_each_bio(bio, rq) {
		REQUIRE((bio->bi_sector) == (next), "bio->bi_sector == next");
		next += bio_sectors(bio);
		total += bio_sectors(bio);
	}
	REQUIRE((total) == (blk_rq_sectors(rq)), "total == blk_rq_sectors(rq)");
	if (op_has_data(rq->cmd_op))
		REQUIRE((rq->nr_phys_segments) <= (queue_max_segments(lim)), "rq->nr_phys_segments <= queue_max_segments(lim)");
}

/* The memory the driver would hand the device, checked entry by entry. */
static void check_sg(struct request_queue *q, struct request *rq)
{
	const struct queue_limits *lim = &q->limits;
	struct iovec sg[1024];
	size_t off = 0, bytes = (size_t)blk_rq_sectors(rq) << SECTOR_SHIFT;
	char *flat = malloc(bytes);
	int n = blk_rq_map_sg(q, rq, sg);

	REQUIRE((n) == (rq->nr_phys_segments), "n == rq->nr_phys_segments");
	for (int i = 0; i < n; i++) {
		uintptr_t a = (uintptr_t)sg[i].iov_base;

		REQUIRE((sg[i].iov_len) <= (lim->max_segment_size), "sg[i].iov_len <= lim->max_segment_size");
		REQUIRE((a & ~lim->seg_boundary_mask) ==
				((a + sg[i].iov_len - 1) & ~lim->seg_boundary_mask),
			"sg entry crosses the segment boundary");
		REQUIRE((a & lim->dma_alignment) == 0, "sg entry %d of %d at %lx len %zu, dma %x, segsize %u, bounce? %d lbs %u", i, n, (unsigned long)a, sg[i].iov_len, lim->dma_alignment, lim->max_segment_size, rq->bio->bi_bounce != NULL, lim->logical_block_size);
		REQUIRE((sg[i].iov_len & lim->dma_alignment & (SECTOR_SIZE - 1)) == (0), "sg[i].iov_len & lim->dma_alignment & (SECTOR_SIZE - 1) == 0");
		if (rq->cmd_op == REQ_OP_WRITE)
			memcpy(flat + off, sg[i].iov_base, sg[i].iov_len);
		off += sg[i].iov_len;
	}
	REQUIRE((off) == (bytes), "off == bytes");
	if (rq->cmd_op == REQ_OP_WRITE) {
		check_stamps(flat, blk_rq_pos(rq), blk_rq_sectors(rq), "write");
	} else {
		fill_stamps(flat, blk_rq_pos(rq), blk_rq_sectors(rq));
		for (int i = 0, o = 0; i < n; o += (int)sg[i].iov_len, i++)
			memcpy(sg[i].iov_base, flat + o, sg[i].iov_len);
	}
	free(flat);
}

/* No request starts before its barrier ended; a barrier starts after all before it. */
static void check_order(struct prop *p, unsigned int idx, bool preflush)
{
	struct pbio *pb = &p->bios[idx];
	int b = p->prev_barrier[idx];

	REQUIRE(b < 0 || p->bios[b].ended, "bio %u started before barrier %d ended", idx, b);
	if (!pb->barrier)
		return;
	REQUIRE(p->first_unended >= idx, "barrier %u started before bio %u ended", idx,
		      p->first_unended);
	if (!preflush && pb->bio.bi_op == REQ_OP_WRITE)
		REQUIRE(pb->preflush_done, "barrier write %u started before its preflush", idx);
}

static void on_dispatch(struct fake_disk *fd, struct request *rq)
{
	struct prop *p = fd->priv;
	struct bio *bio;

	check_limits(fd->q, rq);
	if (!rq->bio) {
		REQUIRE(rq->cmd_flags & REQ_PREFLUSH, "rq->cmd_flags & REQ_PREFLUSH");
		check_order(p, (unsigned int)rq->pid, true);
		return;
	}
	if (op_has_data(rq->cmd_op))
		check_sg(fd->q, rq);
	rq_for_each_bio(bio, rq)
		check_order(p, (unsigned int)(root_of(bio) - p->bios), false);
}

/* Which bios nr_sectors from the completion position touch, as the core must see it. */
static void mark_error(struct prop *p, struct request *rq, unsigned int nr_sectors)
{
	struct bio *bio = rq->bio;

	if (!bio && (rq->cmd_flags & REQ_PREFLUSH))
		p->bios[rq->pid].expect_error = true;
	for (; bio; bio = bio->bi_next) {
		unsigned int left = (bio->bi_size - bio->bi_done) >> SECTOR_SHIFT;

		if (!nr_sectors && left)
			break;
		root_of(bio)->expect_error = true;
		nr_sectors -= left < nr_sectors ? left : nr_sectors;
	}
}

static void complete_one(struct prop *p, struct fake_disk *fd, unsigned int *seed)
{
	struct request *rq = fake_nth(fd, rnd(seed, fd->nr_dispatched));
	unsigned int left = blk_rq_sectors(rq);
	unsigned int n = left && rnd(seed, 2) ? 1 + rnd(seed, left) : left;
	int err = rnd(seed, 40) ? 0 : -EIO;

	if (err)
		mark_error(p, rq, n);
	if (!rq->bio && !err && (rq->cmd_flags & REQ_PREFLUSH))
		p->bios[rq->pid].preflush_done = true;
	fake_complete(fd, rq, err, n);
}

static void random_limits(struct request_queue *q, unsigned int *seed)
{
	static const unsigned int sectors[] = { 8, 64, 255, 1024 };
	static const unsigned short segs[] = { 1, 2, 4, 128 };
	static const unsigned long bounds[] = { 0xfff, 0xffff, 0xffffffff };
	static const unsigned int dma[] = { 511, 0, 4095 };
	static const unsigned int depth[] = { 1, 2, 8, 128 };
	struct queue_limits lim = q->limits;
	char why[128];

	lim.logical_block_size = rnd(seed, 3) ? 512 : 4096;
	lim.max_sectors = sectors[rnd(seed, 4)];
	lim.max_hw_sectors = 1024;
	lim.max_phys_segments = segs[rnd(seed, 4)];
	lim.max_hw_segments = segs[rnd(seed, 4)];
	lim.max_segment_size = rnd(seed, 2) ? 4096 : 65536;
	do
		lim.seg_boundary_mask = bounds[rnd(seed, 3)];
	while (lim.seg_boundary_mask < lim.max_segment_size - 1);
	lim.dma_alignment = dma[rnd(seed, 3)];
	lim.nr_requests = depth[rnd(seed, 4)];
	lim.nomerges = rnd(seed, 4) == 3 ? rnd(seed, 3) : 0;
	lim.max_discard_sectors = rnd(seed, 2) ? 64 : BLK_DEF_MAX_DISCARD_SECTORS;
	lim.max_write_zeroes_sectors = lim.max_discard_sectors;
	ck_assert_msg(!blk_queue_set_limits(q, &lim, why, sizeof(why)), "%s", why);
}

/* Memory in 1 to MAX_VECS pieces, aligned or not, each its own allocation. */
static void random_memory(struct pbio *pb, size_t bytes, unsigned int *seed)
{
	unsigned int n = 1 + rnd(seed, MAX_VECS);
	size_t start = 0;

	for (unsigned int i = 0; i < n && start < bytes; i++) {
		size_t end = i == n - 1 ? bytes : start + 1 + rnd(seed, (unsigned int)(bytes - start));
		size_t skew = rnd(seed, 2) ? 0 : rnd(seed, 4096);

		if (rnd(seed, 2) && end < bytes) /* whole sectors, most of the time */
			end = (end + SECTOR_SIZE - 1) / SECTOR_SIZE * SECTOR_SIZE;
		if (end > bytes)
			end = bytes;
		ck_assert_int_eq(posix_memalign(&pb->alloc[i], 4096, end - start + skew), 0);
		pb->vecs[i] = (struct bio_vec){ (char *)pb->alloc[i] + skew, end - start };
		pb->bio.bi_vcnt = (unsigned short)(i + 1);
		start = end;
	}
	if (start < bytes) { /* the last piece takes the rest */
		unsigned int last = pb->bio.bi_vcnt - 1;
		size_t len = pb->vecs[last].bv_len + bytes - start;

		free(pb->alloc[last]);
		ck_assert_int_eq(posix_memalign(&pb->alloc[last], 4096, len), 0);
		pb->vecs[last] = (struct bio_vec){ pb->alloc[last], len };
	}
}

static void make_bio(struct prop *p, unsigned int idx, unsigned int lbs, unsigned int *seed)
{
	struct pbio *pb = &p->bios[idx];
	unsigned int r = rnd(seed, 100);
	unsigned int blocks = rnd(seed, 10) ? 1 + rnd(seed, 300 / lbs + 1) : 2048 / lbs;
	enum req_op op = r < 40 ? REQ_OP_WRITE : r < 75 ? REQ_OP_READ : r < 82 ? REQ_OP_FLUSH
		       : r < 88 ? REQ_OP_WRITE : r < 94 ? REQ_OP_DISCARD : REQ_OP_WRITE_ZEROES;
	sector_t sector = (sector_t)rnd(seed, (DISK_SECTORS - blocks * lbs) / lbs) * lbs;
	/* a third of the stream is sequential, so that merges are tried often */
	if (rnd(seed, 3) == 0 && p->last_end + blocks * lbs <= DISK_SECTORS)
		sector = p->last_end;
	if (op != REQ_OP_FLUSH)
		p->last_end = sector + blocks * lbs;
	unsigned int size = op == REQ_OP_FLUSH ? 0 : blocks * lbs * SECTOR_SIZE;

	memset(pb, 0, sizeof(*pb));
	bio_init(&pb->bio, op, sector, size, pb->vecs, 0);
	pb->bio.bi_end_io = pbio_end_io;
	pb->bio.bi_private = p;
	pb->bio.bi_pid = (pid_t)idx;
	pb->barrier = op == REQ_OP_FLUSH || (r >= 82 && r < 88);
	if (pb->barrier && op == REQ_OP_WRITE)
		pb->bio.bi_flags |= REQ_BARRIER;
	if (op_has_data(op)) {
		random_memory(pb, size, seed);
		if (op == REQ_OP_WRITE) {
			char *buf = malloc(size);

			fill_stamps(buf, sector, size / SECTOR_SIZE);
			vec_copy(pb->vecs, pb->bio.bi_vcnt, 0, buf, size, true);
			free(buf);
		}
	}
}

static void free_bio_memory(struct pbio *pb)
{
	for (unsigned int i = 0; i < MAX_VECS; i++)
		free(pb->alloc[i]);
}

static void submit_next(struct prop *p, struct fake_disk *fd, unsigned int *seed)
{
	unsigned int idx = p->nr_submitted;

	if (!rnd(seed, 8)) {
		blk_queue_lock(fd->q);
		fd->q->plugged ? __blk_unplug(fd->q) : blk_plug_device(fd->q);
		blk_queue_unlock(fd->q);
	}
	p->prev_barrier[idx] = idx ? (p->bios[idx - 1].barrier ? (int)idx - 1 : p->prev_barrier[idx - 1])
				   : -1;
	p->nr_submitted++;
	submit_bio(fd->q, &p->bios[idx].bio);
}

/* Now and then, another elevator while everything runs: nothing may be lost or stuck. */
static unsigned int maybe_switch(struct fake_disk *fd, unsigned int *seed)
{
	const char *name = fake_elevator((int)rnd(seed, NR_ELEVATORS));
	const struct elevator_queue *before = fd->q->elevator;
	bool started = false;
	char why[256];

	blk_queue_lock(fd->q);
	if (!fd->q->switch_pending) {
		REQUIRE(!elevator_switch(fd->q, name, why, sizeof(why)), "switch refused: %s", why);
		started = fd->q->switch_pending || fd->q->elevator != before;
	}
	blk_queue_unlock(fd->q);
	return started;
}

static void run_stream(const char *elevator, unsigned int seed, bool switching)
{
	struct prop *p = calloc(1, sizeof(*p));
	struct fake_disk *fd = fake_disk_new(elevator);
	unsigned int lbs, switches = 0;

	random_limits(fd->q, &seed);
	lbs = fd->q->limits.logical_block_size >> SECTOR_SHIFT;
	fd->on_dispatch = on_dispatch;
	fd->priv = p;
	for (unsigned int i = 0; i < NR_BIOS; i++)
		make_bio(p, i, lbs, &seed);
	for (;;) {
		bool can_submit = p->nr_submitted < NR_BIOS;

		if (switching && !rnd(&seed, 50))
			switches += maybe_switch(fd, &seed);
		if (can_submit && (rnd(&seed, 3) || !fd->nr_dispatched))
			submit_next(p, fd, &seed);
		else if (fd->nr_dispatched)
			complete_one(p, fd, &seed);
		else if (fd->q->plugged)
			blk_unplug(fd->q);
		else if (fd->q->dispatch_at)
			elv_wake(fd);
		else
			break;
	}
	for (unsigned int i = 0; i < NR_BIOS; i++) {
		struct pbio *pb = &p->bios[i];

		ck_assert_msg(pb->ended == 1, "%s seed %u: bio %u ended %d times", elevator, seed,
			      i, pb->ended);
		ck_assert_msg(!!pb->error == pb->expect_error, "%s: bio %u error %d, expected %s",
			      elevator, i, pb->error, pb->expect_error ? "one" : "none");
		free_bio_memory(pb);
	}
	ck_assert_uint_eq(fd->q->in_flight, 0);
	ck_assert_msg(!switching || switches > 2, "only %u elevator switches", switches);
	fake_disk_free(fd);
	free(p);
}

START_TEST(test_random_streams)
{
	const char *env = getenv("RQDISK_PROPERTY_SEEDS");
	unsigned int seeds = env ? (unsigned int)strtoul(env, NULL, 10) : NR_SEEDS;

	for (unsigned int seed = 1; seed <= seeds; seed++)
		run_stream(fake_elevator(_i), seed, false);
}
END_TEST

START_TEST(test_random_streams_switching_elevators)
{
	const char *env = getenv("RQDISK_PROPERTY_SEEDS");
	unsigned int seeds = env ? (unsigned int)strtoul(env, NULL, 10) : NR_SEEDS;

	for (unsigned int seed = 1; seed <= seeds; seed++)
		run_stream(fake_elevator((int)(seed % NR_ELEVATORS)), seed, true);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("property");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_random_streams, 0, fake_nr_elevators());
	tcase_add_test(tc, test_random_streams_switching_elevators);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
