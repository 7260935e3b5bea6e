/* SPDX-License-Identifier: BSD-3-Clause */
/* mq_model.c - the multi-queue path's model: threads, CPUs, locks and tags on a virtual clock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "mq_model.h"

enum step_kind { CLIENT_SUBMIT, TAKE, SUBMIT, END, ANSWER, CLIENT_REAP };
enum thread_state { IDLE, WAKING, READY, RUNNING, BLOCKED };

/* An I/O: one pending step (on a thread's list), device time, or a tag wait at a time. */
struct mrq {
	unsigned int job, hctx;
	enum step_kind step;
	struct mrq *next; /* on a thread's steps or a tag wait list */
};

struct mrq_list {
	struct mrq *head, *tail;
};

struct mthread {
	unsigned int cpu;
	enum thread_state state;
	struct mrq_list steps;
	int holds; /* the lock it holds, or -1 */
	uint64_t wait_since;
	struct mthread *next; /* on a CPU's ready list or a lock's waiters */
};

struct mthread_list {
	struct mthread *head, *tail;
};

struct mcpu {
	struct mthread *running;
	struct mthread_list ready;
	uint64_t busy_since, busy;
};

struct mlock {
	struct mthread *holder;
	struct mthread_list waiters;
	uint64_t held_since, held, acquisitions, wait;
};

struct mhctx {
	unsigned int free_tags;
	struct mrq_list tag_waits;
};

enum event_kind { EV_STEP_DONE, EV_DEVICE_DONE, EV_WAKE };

struct event {
	uint64_t at, seq;
	enum event_kind kind;
	void *arg; /* the CPU, the request, or the thread */
};

struct model {
	const struct mq_model_params *p;
	uint64_t now, seq, warm_at, completed, warm_completed, taken, tag_waited;
	bool warm;
	struct event *heap;
	unsigned int nr_events, heap_size;
	struct mthread *threads; /* jobs' first, then the hardware queues' */
	struct mcpu *cpus;
	struct mlock *locks;
	struct mhctx *hctxs;
	struct mrq *rqs;
};

static void rq_append(struct mrq_list *l, struct mrq *rq)
{
	rq->next = NULL;
	if (l->tail)
		l->tail->next = rq;
	else
		l->head = rq;
	l->tail = rq;
}

static struct mrq *rq_pop(struct mrq_list *l)
{
	struct mrq *rq = l->head;

	if (rq && !(l->head = rq->next))
		l->tail = NULL;
	return rq;
}

static void thread_append(struct mthread_list *l, struct mthread *t)
{
	t->next = NULL;
	if (l->tail)
		l->tail->next = t;
	else
		l->head = t;
	l->tail = t;
}

static struct mthread *thread_pop(struct mthread_list *l)
{
	struct mthread *t = l->head;

	if (t && !(l->head = t->next))
		l->tail = NULL;
	return t;
}

/* Events by time, then by the order they were made: the tie-break that makes a run repeatable. */
static bool event_before(const struct event *a, const struct event *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void event_add(struct model *m, uint64_t at, enum event_kind kind, void *arg)
{
	unsigned int i = m->nr_events++;

	m->heap[i] = (struct event){ .at = at, .seq = m->seq++, .kind = kind, .arg = arg };
	while (i && event_before(&m->heap[i], &m->heap[(i - 1) / 2])) {
		struct event e = m->heap[i];

		m->heap[i] = m->heap[(i - 1) / 2];
		m->heap[(i - 1) / 2] = e;
		i = (i - 1) / 2;
	}
}

static struct event event_pop(struct model *m)
{
	struct event top = m->heap[0];
	unsigned int i = 0;

	m->heap[0] = m->heap[--m->nr_events];
	for (;;) {
		unsigned int l = 2 * i + 1, r = l + 1, min = i;
		struct event e;

		if (l < m->nr_events && event_before(&m->heap[l], &m->heap[min]))
			min = l;
		if (r < m->nr_events && event_before(&m->heap[r], &m->heap[min]))
			min = r;
		if (min == i)
			return top;
		e = m->heap[i];
		m->heap[i] = m->heap[min];
		m->heap[min] = e;
		i = min;
	}
}

static struct mthread *job_thread(struct model *m, unsigned int job)
{
	return &m->threads[job];
}

static struct mthread *hctx_thread(struct model *m, unsigned int hctx)
{
	return &m->threads[m->p->jobs + hctx];
}

static uint64_t step_ns(const struct model *m, enum step_kind k)
{
	switch (k) {
	case CLIENT_SUBMIT:
		return m->p->client_ns / 2;
	case TAKE:
		return m->p->take_ns;
	case SUBMIT:
		return m->p->submit_lock_ns;
	case END:
		return m->p->end_lock_ns;
	case ANSWER:
		return m->p->answer_ns;
	case CLIENT_REAP:
		break;
	}
	return m->p->client_ns - m->p->client_ns / 2;
}

/* The lock a step runs under, or -1. */
static int step_lock(const struct model *m, const struct mrq *rq)
{
	if (rq->step != SUBMIT && rq->step != END)
		return -1;
	return m->p->shared_lock ? 0 : (int)rq->hctx;
}

static void cpu_dispatch(struct model *m, struct mcpu *c);

static void make_ready(struct model *m, struct mthread *t)
{
	struct mcpu *c = &m->cpus[t->cpu];

	t->state = READY;
	thread_append(&c->ready, t);
	if (!c->running)
		cpu_dispatch(m, c);
}

static void push_step(struct model *m, struct mthread *t, struct mrq *rq, enum step_kind k)
{
	rq->step = k;
	rq_append(&t->steps, rq);
	if (t->state != IDLE)
		return;
	if (!m->p->wake_ns) {
		make_ready(m, t);
		return;
	}
	/* asleep: what wakes it takes wake_ns to reach it */
	t->state = WAKING;
	event_add(m, m->now + m->p->wake_ns, EV_WAKE, t);
}

/* Time counted from the warm-up's end: what came before is not in the figures. */
static uint64_t since(const struct model *m, uint64_t t)
{
	return m->warm && t < m->warm_at ? m->warm_at : t;
}

static void lock_take(struct model *m, struct mlock *l, struct mthread *t, int idx)
{
	l->holder = t;
	l->held_since = m->now;
	l->acquisitions++;
	t->holds = idx;
}

static void lock_release(struct model *m, struct mthread *t)
{
	struct mlock *l = &m->locks[t->holds];
	struct mthread *w;
	int idx = t->holds;

	l->held += m->now - since(m, l->held_since);
	l->holder = NULL;
	t->holds = -1;
	w = thread_pop(&l->waiters);
	if (!w)
		return;
	/* handed over, as a mutex wakes its first waiter: it holds the lock while it waits for its CPU */
	l->wait += m->now - since(m, w->wait_since);
	lock_take(m, l, w, idx);
	make_ready(m, w);
}

/* An idle CPU runs its next ready thread's next step; one that must wait for the lock sleeps. */
static void cpu_dispatch(struct model *m, struct mcpu *c)
{
	struct mthread *t;

	while (!c->running && (t = thread_pop(&c->ready))) {
		struct mrq *rq = t->steps.head;
		int lock = step_lock(m, rq);

		if (lock >= 0 && t->holds != lock) {
			struct mlock *l = &m->locks[lock];

			if (l->holder) {
				t->state = BLOCKED;
				t->wait_since = m->now;
				thread_append(&l->waiters, t);
				continue;
			}
			lock_take(m, l, t, lock);
		}
		t->state = RUNNING;
		c->running = t;
		c->busy_since = m->now;
		event_add(m, m->now + step_ns(m, rq->step), EV_STEP_DONE, c);
	}
}

static void warm_up_ends(struct model *m)
{
	m->warm = true;
	m->warm_at = m->now;
	m->warm_completed = m->completed;
	m->taken = m->tag_waited = 0;
	for (unsigned int i = 0; i < (m->p->shared_lock ? 1 : m->p->hw_queues); i++)
		m->locks[i].held = m->locks[i].acquisitions = m->locks[i].wait = 0;
	for (unsigned int i = 0; i < m->p->cpus; i++)
		m->cpus[i].busy = 0;
}

/* What follows a step, on the thread that comes next. */
static void step_done(struct model *m, struct mrq *rq)
{
	struct mhctx *h = &m->hctxs[rq->hctx];
	struct mrq *waiter;

	switch (rq->step) {
	case CLIENT_SUBMIT:
		push_step(m, hctx_thread(m, rq->hctx), rq, TAKE);
		break;
	case TAKE:
		m->taken++;
		if (h->free_tags) {
			h->free_tags--;
			push_step(m, hctx_thread(m, rq->hctx), rq, SUBMIT);
		} else {
			m->tag_waited++;
			rq_append(&h->tag_waits, rq);
		}
		break;
	case SUBMIT:
		event_add(m, m->now + m->p->device_ns, EV_DEVICE_DONE, rq);
		break;
	case END:
		/* the tag passes to the first waiter, as a tag wait queue's wake-up */
		if ((waiter = rq_pop(&h->tag_waits)))
			push_step(m, hctx_thread(m, rq->hctx), waiter, SUBMIT);
		else
			h->free_tags++;
		push_step(m, hctx_thread(m, rq->hctx), rq, ANSWER);
		break;
	case ANSWER:
		push_step(m, job_thread(m, rq->job), rq, CLIENT_REAP);
		break;
	case CLIENT_REAP:
		if (++m->completed == m->p->requests / 10)
			warm_up_ends(m);
		push_step(m, job_thread(m, rq->job), rq, CLIENT_SUBMIT);
		break;
	}
}

static void cpu_step_done(struct model *m, struct mcpu *c)
{
	struct mthread *t = c->running;
	struct mrq *rq = rq_pop(&t->steps);

	c->running = NULL;
	c->busy += m->now - since(m, c->busy_since);
	if (t->holds >= 0)
		lock_release(m, t);
	/* between its steps a thread is awake: work handed to it now needs no wake-up */
	t->state = RUNNING;
	step_done(m, rq);
	if (t->steps.head)
		make_ready(m, t);
	else
		t->state = IDLE;
	cpu_dispatch(m, c);
}

int mq_model_check(const struct mq_model_params *p, char *why, unsigned long whylen)
{
	const char *bad = NULL;

	if (!p->cpus || !p->hw_queues || !p->jobs || !p->iodepth || !p->tags)
		bad = "cpus, hardware queues, jobs, iodepth and tags must be at least 1";
	else if (p->cpus > 4096 || p->hw_queues > 4096 || p->jobs > 4096 || p->iodepth > 4096 ||
		 p->tags > 1u << 20)
		bad = "cpus, hardware queues, jobs and iodepth are at most 4096, tags 1048576";
	else if (p->requests < 100 || p->requests > 1ull << 32)
		bad = "requests must be between 100 and 4294967296";
	else if (!p->client_ns && !p->take_ns && !p->submit_lock_ns && !p->end_lock_ns &&
		 !p->answer_ns && !p->device_ns)
		bad = "an I/O that costs nothing anywhere makes no model";
	if (!bad)
		return 0;
	snprintf(why, whylen, "%s", bad);
	return -EINVAL;
}

static int model_alloc(struct model *m, const struct mq_model_params *p)
{
	unsigned int nr_rqs = p->jobs * p->iodepth;

	m->p = p;
	/* a step per CPU, device time per request, a wake-up per thread */
	m->heap_size = nr_rqs + p->cpus + p->jobs + p->hw_queues + 1;
	m->heap = calloc(m->heap_size, sizeof(*m->heap));
	m->threads = calloc(p->jobs + p->hw_queues, sizeof(*m->threads));
	m->cpus = calloc(p->cpus, sizeof(*m->cpus));
	m->locks = calloc(p->hw_queues, sizeof(*m->locks));
	m->hctxs = calloc(p->hw_queues, sizeof(*m->hctxs));
	m->rqs = calloc(nr_rqs, sizeof(*m->rqs));
	return m->heap && m->threads && m->cpus && m->locks && m->hctxs && m->rqs ? 0 : -ENOMEM;
}

static void model_free(struct model *m)
{
	free(m->heap);
	free(m->threads);
	free(m->cpus);
	free(m->locks);
	free(m->hctxs);
	free(m->rqs);
}

static void model_start(struct model *m)
{
	const struct mq_model_params *p = m->p;

	for (unsigned int i = 0; i < p->jobs + p->hw_queues; i++) {
		unsigned int nr = i < p->jobs ? i : i - p->jobs;

		m->threads[i].cpu = nr % p->cpus;
		m->threads[i].holds = -1;
	}
	for (unsigned int h = 0; h < p->hw_queues; h++)
		m->hctxs[h].free_tags = p->tags;
	for (unsigned int j = 0; j < p->jobs; j++) {
		for (unsigned int d = 0; d < p->iodepth; d++) {
			struct mrq *rq = &m->rqs[j * p->iodepth + d];

			rq->job = j;
			/* the job's CPU's software queue, mapped as blk_mq_map_queues maps CPUs */
			rq->hctx = (j % p->cpus) % p->hw_queues;
			push_step(m, job_thread(m, j), rq, CLIENT_SUBMIT);
		}
	}
}

static void model_report(const struct model *m, struct mq_model_result *r)
{
	const struct mq_model_params *p = m->p;
	double span = (double)(m->now - m->warm_at);
	uint64_t held = 0, acq = 0, wait = 0, busy = 0;

	for (unsigned int i = 0; i < (p->shared_lock ? 1 : p->hw_queues); i++) {
		if (m->locks[i].held > held)
			held = m->locks[i].held;
		acq += m->locks[i].acquisitions;
		wait += m->locks[i].wait;
	}
	for (unsigned int i = 0; i < p->cpus; i++)
		busy += m->cpus[i].busy;
	r->iops = span > 0 ? (double)(m->completed - m->warm_completed) * 1e9 / span : 0;
	r->lock_utilisation = span > 0 ? (double)held / span : 0;
	r->lock_wait_ns = acq ? (double)wait / (double)acq : 0;
	r->tag_wait_fraction = m->taken ? (double)m->tag_waited / (double)m->taken : 0;
	r->cpu_utilisation = span > 0 ? (double)busy / (span * p->cpus) : 0;
}

int mq_model_run(const struct mq_model_params *p, struct mq_model_result *r)
{
	struct model m = { 0 };

	if (model_alloc(&m, p)) {
		model_free(&m);
		return -ENOMEM;
	}
	model_start(&m);
	while (m.completed < p->requests && m.nr_events) {
		struct event e = event_pop(&m);

		m.now = e.at;
		if (e.kind == EV_STEP_DONE)
			cpu_step_done(&m, e.arg);
		else if (e.kind == EV_WAKE)
			make_ready(&m, e.arg);
		else
			push_step(&m, hctx_thread(&m, ((struct mrq *)e.arg)->hctx), e.arg, END);
	}
	model_report(&m, r);
	model_free(&m);
	return 0;
}
