/* elevator.c - the elevator registry and the core's side of every elevator hook. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkdev.h"

const struct elevator_type *elv_builtin_noop(void);
const struct elevator_type *elv_builtin_deadline(void);

static const struct elevator_type *(*const builtin_elevators[])(void) = {
	elv_builtin_noop,
	elv_builtin_deadline,
};

#define NR_BUILTIN (sizeof(builtin_elevators) / sizeof(builtin_elevators[0]))

const struct elevator_type *elevator_find(const char *name)
{
	for (size_t i = 0; i < NR_BUILTIN; i++) {
		const struct elevator_type *t = builtin_elevators[i]();

		if (!strcmp(t->elevator_name, name) ||
		    (t->elevator_alias && !strcmp(t->elevator_alias, name)))
			return t;
	}
	return NULL;
}

/* Every built-in name, in registry order, then NULL. */
const char *const *elevator_builtin_names(void)
{
	static const char *names[NR_BUILTIN + 1];

	for (size_t i = 0; i < NR_BUILTIN; i++)
		names[i] = builtin_elevators[i]()->elevator_name;
	return names;
}

struct elevator_queue *elevator_alloc(struct request_queue *q, const struct elevator_type *type)
{
	struct elevator_queue *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->type = type;
	e->q = q;
	e->clock = q->clock;
	if (type->init_queue(e)) {
		free(e);
		return NULL;
	}
	return e;
}

void elevator_exit(struct elevator_queue *e)
{
	e->type->exit_queue(e);
	free(e);
}

void elv_schedule_dispatch(struct elevator_queue *e, uint64_t when_ns)
{
	struct request_queue *q = e->q;

	if (!q->dispatch_at || when_ns < q->dispatch_at)
		q->dispatch_at = when_ns;
}

static unsigned int rq_hash_key(sector_t sector)
{
	return (unsigned int)((sector * 0x9e3779b97f4a7c15ull) >> (64 - ELV_HASH_BITS));
}

void elv_rqhash_add(struct request_queue *q, struct request *rq)
{
	LIST_INSERT_HEAD(&q->hash_start[rq_hash_key(blk_rq_pos(rq))], rq, hash_start);
	LIST_INSERT_HEAD(&q->hash_end[rq_hash_key(blk_rq_end_sector(rq))], rq, hash_end);
	rq->rq_flags |= RQF_HASHED;
}

void elv_rqhash_del(struct request_queue *q, struct request *rq)
{
	(void)q;
	if (!(rq->rq_flags & RQF_HASHED))
		return;
	LIST_REMOVE(rq, hash_start);
	LIST_REMOVE(rq, hash_end);
	rq->rq_flags &= ~RQF_HASHED;
}

void elv_rqhash_reposition(struct request_queue *q, struct request *rq)
{
	elv_rqhash_del(q, rq);
	elv_rqhash_add(q, rq);
}

struct request *elv_rqhash_find_end(struct request_queue *q, sector_t end, uint64_t epoch)
{
	struct request *rq;

	LIST_FOREACH(rq, &q->hash_end[rq_hash_key(end)], hash_end)
		if (blk_rq_end_sector(rq) == end && rq->epoch == epoch)
			return rq;
	return NULL;
}

struct request *elv_rqhash_find_start(struct request_queue *q, sector_t start, uint64_t epoch)
{
	struct request *rq;

	LIST_FOREACH(rq, &q->hash_start[rq_hash_key(start)], hash_start)
		if (blk_rq_pos(rq) == start && rq->epoch == epoch)
			return rq;
	return NULL;
}

void elv_insert(struct request_queue *q, struct request *rq)
{
	struct elevator_queue *e = q->elevator;

	rq->rq_flags |= RQF_ELVPRIV | RQF_SORTED;
	e->type->add_request(e, rq);
}

/* The elevator's choice, out of merge reach from now on. */
struct request *elv_next_request(struct request_queue *q, uint64_t now)
{
	struct elevator_queue *e = q->elevator;
	struct request *rq;

	if (q->dispatch_at && now >= q->dispatch_at)
		q->dispatch_at = 0;
	if (!e->type->has_work(e))
		return NULL;
	rq = e->type->dispatch_request(e, now);
	if (!rq)
		return NULL;
	rq->rq_flags &= ~RQF_ELVPRIV;
	elv_rqhash_del(q, rq);
	if (q->last_merge == rq)
		q->last_merge = NULL;
	return rq;
}

static const struct elv_tunable *elv_tunable_find(const struct elevator_queue *e,
						  const char *name)
{
	const struct elv_tunable *t = e->type->tunables;

	for (; t && t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

int elv_tunable_show(const struct elevator_queue *e, const char *name, long long *value)
{
	const struct elv_tunable *t = elv_tunable_find(e, name);

	if (!t)
		return -ENOENT;
	*value = t->get(e);
	return 0;
}

/* Parse, check the bounds, then set: a bad value leaves the old one. */
int elv_tunable_store(struct elevator_queue *e, const char *name, const char *buf)
{
	const struct elv_tunable *t = elv_tunable_find(e, name);
	char *end;
	long long v;

	if (!t)
		return -ENOENT;
	errno = 0;
	v = strtoll(buf, &end, 10);
	while (*end == '\n' || *end == ' ')
		end++;
	if (errno || end == buf || *end || v < t->min || v > t->max)
		return -EINVAL;
	t->set(e, v);
	return 0;
}
