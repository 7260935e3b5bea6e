/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_mq_threads.c - a multi-queue queue used from several threads at
 * once: two submitters on their own CPUs, one completer per hardware
 * queue, under every elevator on the real clock.  Every bio ends once,
 * without error; no queue ever had more out than its driver tags; and a
 * flush never went out while a write submitted before it was still out.
 * With run_async, queue_rq runs only on the completer thread of its own
 * hardware queue.  Meanwhile the main thread switches elevators.  Run it under ThreadSanitizer (configure --enable-sanitizers=thread) for
 * the locking.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "fake_driver.h"
#include "fake_mq.h"

#define NR_SUBMITTERS 2
#define NR_HW 2
#define DEPTH 3
#define BIOS_PER_THREAD 600

static char mem[1 << 20] __attribute__((aligned(4096)));

struct tbio {
	struct bio bio;
	struct bio_vec vec;
	int ended, error; /* written under the queue lock, read after every thread is joined */
};

struct mt {
	struct fake_mq *fm;
	pthread_t owner[NR_HW];
	unsigned int foreign; /* atomic: queue_rq calls on another hardware queue's thread */
	struct tbio bios[NR_SUBMITTERS][BIOS_PER_THREAD];
};

static void tbio_end(struct bio *bio, int error)
{
	struct tbio *tb = bio->bi_private;

	tb->ended++;
	tb->error = error;
}

struct submitter {
	struct mt *mt;
	unsigned int cpu;
};

static void *submit_thread(void *arg)
{
	struct submitter *s = arg;
	struct mt *mt = s->mt;
	unsigned int seed = s->cpu + 1;

	for (unsigned int i = 0; i < BIOS_PER_THREAD; i++) {
		struct tbio *tb = &mt->bios[s->cpu][i];
		unsigned int kind = (unsigned int)rand_r(&seed) % 50;
		sector_t sector = 8 * (sector_t)((s->cpu * 997 + i * 13) % 2048);
		unsigned int sectors = kind == 0 ? 0 : 8;
		enum req_op op = kind == 0 ? REQ_OP_FLUSH : kind < 25 ? REQ_OP_READ : REQ_OP_WRITE;

		tb->vec = (struct bio_vec){ mem + (sector % 128) * 4096, (size_t)sectors << 9 };
		bio_init(&tb->bio, op, sector, sectors << 9, &tb->vec, sectors ? 1 : 0);
		tb->bio.bi_end_io = tbio_end;
		tb->bio.bi_private = tb;
		blk_mq_submit_bio(mt->fm->q, &tb->bio, s->cpu);
		if (i % 64 == 0)
			sched_yield();
	}
	return NULL;
}

/* queue_rq, with run_async: on the owner's thread only. */
static void check_owner(struct fake_mq *fm, unsigned int hctx, struct request *rq)
{
	struct mt *mt = fm->priv;

	(void)rq;
	if (!pthread_equal(pthread_self(), mt->owner[hctx]))
		__atomic_fetch_add(&mt->foreign, 1, __ATOMIC_RELAXED);
}

struct completer {
	struct mt *mt;
	unsigned int hw;
	volatile bool *stop;
};

static void *complete_thread(void *arg)
{
	struct completer *c = arg;
	struct fake_mq *fm = c->mt->fm;

	/* with run_async only this thread runs hctx c->hw, so only it reads this */
	c->mt->owner[c->hw] = pthread_self();
	while (!__atomic_load_n(c->stop, __ATOMIC_ACQUIRE)) {
		struct request *rq = fake_mq_take_first(fm, c->hw);

		if (rq) {
			ck_assert(!blk_mq_end_request(rq, 0, blk_rq_sectors(rq)));
			continue;
		}
		/* kicked or not: an idling elevator's wake-up is a timer in a real driver */
		blk_mq_run_hw_queue(&fm->q->mq->hctxs[c->hw]);
		sched_yield();
	}
	return NULL;
}

START_TEST(test_threads)
{
	bool async = _i % 2;
	struct fake_mq_opts o = { .elevator = fake_elevator(_i / 2), .nr_hw_queues = NR_HW,
				  .queue_depth = DEPTH, .nr_requests = 8,
				  .nr_cpus = NR_SUBMITTERS, .real_clock = true,
				  .run_async = async };
	struct mt *mt = calloc(1, sizeof(*mt));
	struct submitter subs[NR_SUBMITTERS];
	struct completer comps[NR_HW];
	pthread_t st[NR_SUBMITTERS], ct[NR_HW];
	volatile bool stop = false;

	ck_assert_ptr_nonnull(mt);
	mt->fm = fake_mq_new(&o);
	mt->fm->priv = mt;
	if (async)
		mt->fm->on_dispatch = check_owner;
	for (unsigned int i = 0; i < NR_HW; i++) {
		comps[i] = (struct completer){ mt, i, &stop };
		ck_assert_int_eq(pthread_create(&ct[i], NULL, complete_thread, &comps[i]), 0);
	}
	for (unsigned int i = 0; i < NR_SUBMITTERS; i++) {
		subs[i] = (struct submitter){ mt, i };
		ck_assert_int_eq(pthread_create(&st[i], NULL, submit_thread, &subs[i]), 0);
	}
	/* every elevator in turn while the I/O runs; EBUSY: the last switch still waits */
	for (int k = 1; k <= fake_nr_elevators(); k++) {
		char why[256] = "";
		int ret;

		while ((ret = blk_mq_elevator_switch(mt->fm->q, fake_elevator(k % fake_nr_elevators()),
						     why, sizeof(why))) == -EBUSY)
			sched_yield();
		ck_assert_msg(!ret, "%s", why);
		sched_yield();
	}
	for (unsigned int i = 0; i < NR_SUBMITTERS; i++)
		pthread_join(st[i], NULL);
	while (!blk_mq_queue_idle(mt->fm->q))
		sched_yield();
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < NR_HW; i++)
		pthread_join(ct[i], NULL);
	for (unsigned int t = 0; t < NR_SUBMITTERS; t++)
		for (unsigned int i = 0; i < BIOS_PER_THREAD; i++) {
			ck_assert_int_eq(mt->bios[t][i].ended, 1);
			ck_assert_int_eq(mt->bios[t][i].error, 0);
		}
	for (unsigned int i = 0; i < NR_HW; i++)
		ck_assert_uint_le(mt->fm->hw[i].max_out, DEPTH);
	ck_assert_uint_eq(mt->fm->flush_passed, 0);
	ck_assert_uint_eq(mt->foreign, 0);
	fake_mq_free(mt->fm);
	free(mt);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mq_threads");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_threads, 0, 2 * fake_nr_elevators());
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
