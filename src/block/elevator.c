/* SPDX-License-Identifier: BSD-3-Clause */
/* elevator.c - the elevator registry, the core's side of every hook, the lists elevators share. */
#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "blk_mq.h"

/*
 * The registry of built-in elevators, in the order queue/scheduler and
 * rqdisk --list show them: one line each, ELEVATOR_REGISTER's name in
 * sched/NAME.c, the one place an elevator is named outside its file.
 */
#define ELV_BUILTINS(ELV) \
	ELV(noop)         \
	ELV(deadline)     \
	ELV(as)           \
	ELV(cfq)          \
	ELV(bfq)          \
	ELV(sstf)         \
	ELV(clook)        \
	ELV(kyber)

#define ELV_DECLARE(name) const struct elevator_type *elv_builtin_##name(void);
#define ELV_ENTRY_OF(name) elv_builtin_##name,
ELV_BUILTINS(ELV_DECLARE)

static const struct elevator_type *(*const builtin_elevators[])(void) = {
	ELV_BUILTINS(ELV_ENTRY_OF)
};

#define NR_BUILTIN (sizeof(builtin_elevators) / sizeof(builtin_elevators[0]))

/* Elevators loaded from shared objects, by path. */
struct elv_plugin {
	struct elevator_type type; /* the plugin's, copied up to the size it was built with */
	char *path;
	void *handle;
	struct elv_plugin *next;
};

static struct elv_plugin *elv_plugins;
static pthread_mutex_t elv_plugins_lock = PTHREAD_MUTEX_INITIALIZER;

static bool elv_name_is(const struct elevator_type *t, const char *name)
{
	return !strcmp(t->elevator_name, name) || (t->elevator_alias && !strcmp(t->elevator_alias, name));
}

static const struct elevator_type *elv_plugin_find(const char *name)
{
	const struct elevator_type *found = NULL;

	pthread_mutex_lock(&elv_plugins_lock);
	for (struct elv_plugin *p = elv_plugins; p && !found; p = p->next)
		if (elv_name_is(&p->type, name) || !strcmp(p->path, name))
			found = &p->type;
	pthread_mutex_unlock(&elv_plugins_lock);
	return found;
}

const struct elevator_type *elevator_find(const char *name)
{
	for (size_t i = 0; i < NR_BUILTIN; i++) {
		const struct elevator_type *t = builtin_elevators[i]();

		if (elv_name_is(t, name))
			return t;
	}
	return elv_plugin_find(name);
}

/* Every built-in name, in registry order, then NULL. */
const char *const *elevator_builtin_names(void)
{
	static const char *names[NR_BUILTIN + 1];

	for (size_t i = 0; i < NR_BUILTIN; i++)
		names[i] = builtin_elevators[i]()->elevator_name;
	return names;
}

#define ELV_MAX_NAMES 64

/* "none", every built-in, then every loaded plugin, then NULL. */
const char *const *elevator_names(void)
{
	static const char *names[ELV_MAX_NAMES + 1];
	size_t n = 0;

	names[n++] = "none";
	for (size_t i = 0; i < NR_BUILTIN && n < ELV_MAX_NAMES; i++)
		names[n++] = builtin_elevators[i]()->elevator_name;
	pthread_mutex_lock(&elv_plugins_lock);
	for (struct elv_plugin *p = elv_plugins; p && n < ELV_MAX_NAMES; p = p->next)
		names[n++] = p->type.elevator_name;
	pthread_mutex_unlock(&elv_plugins_lock);
	names[n] = NULL;
	return names;
}

/* What a new elevator cannot be called: "none", or any elevator's name or alias. */
static bool elv_name_taken(const char *name)
{
	return !strcmp(name, "none") || elevator_find(name);
}

#define ELV_REFUSE(...)                                   \
	do {                                              \
		snprintf(why, whylen, __VA_ARGS__);       \
		return -EINVAL;                           \
	} while (0)

/*
 * The loader's rule, as dev_ops_copy()'s for a backend module: another API
 * version, or a table that ends before the required hooks, is refused;
 * else the table is copied up to the size it was built with and the rest
 * zeroed, so a field added since reads as absent (new fields only ever go
 * at the end).  Nothing past its size is read.
 */
static int elv_plugin_copy(const char *path, const struct elevator_type *t,
			   struct elevator_type *out, char *why, size_t whylen)
{
	/* version 3 only lacks what version 4 added at the ends: a 2.6 queue runs it */
	if (t->api_version != ELV_API_VERSION && t->api_version != ELV_API_VERSION_RQ_ONLY)
		ELV_REFUSE("elevator %s speaks API version %d; rqdisk speaks %d", path,
			   t->api_version, ELV_API_VERSION);
	if (t->size < offsetof(struct elevator_type, find_merge))
		ELV_REFUSE("elevator %s: its ops table is too small (%zu bytes)", path, t->size);
	memset(out, 0, sizeof(*out));
	memcpy(out, t, t->size < sizeof(*out) ? t->size : sizeof(*out));
	out->size = sizeof(*out);
	return 0;
}

/* What the loader refuses in a table it copied: no name, a name taken, a required hook missing. */
static int elv_plugin_check(const char *path, const struct elevator_type *t, char *why,
			    size_t whylen)
{
	if (!t->elevator_name)
		ELV_REFUSE("elevator %s has no name", path);
	if (elv_name_taken(t->elevator_name))
		ELV_REFUSE("elevator %s: the name %s is taken", path, t->elevator_name);
	if (t->elevator_alias && elv_name_taken(t->elevator_alias))
		ELV_REFUSE("elevator %s: the name %s is taken", path, t->elevator_alias);
#define REQUIRE_HOOK(h)                                                         \
	if (!t->h)                                                              \
		ELV_REFUSE("elevator %s lacks the required hook %s", path, #h)
	REQUIRE_HOOK(init_queue);
	REQUIRE_HOOK(exit_queue);
	REQUIRE_HOOK(add_request);
	REQUIRE_HOOK(dispatch_request);
	REQUIRE_HOOK(has_work);
#undef REQUIRE_HOOK
	for (const struct elv_tunable *u = t->tunables; u && u->name; u++)
		if (!(u->get && u->set && !u->show && !u->store) &&
		    !(u->show && !u->get && !u->set))
			ELV_REFUSE("elevator %s: tunable %s needs get and set, or show (and store)",
				   path, u->name);
	return 0;
}

static int elv_plugin_open(const char *path, struct elv_plugin *p, char *why, size_t whylen)
{
	const struct elevator_type *(*entry)(void);
	const struct elevator_type *t;

	p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->handle)
		ELV_REFUSE("%s", dlerror());
	*(void **)&entry = dlsym(p->handle, "rqdisk_elevator_init");
	if (!entry)
		ELV_REFUSE("%s is not an rqdisk elevator: it has no rqdisk_elevator_init", path);
	t = entry();
	if (!t)
		ELV_REFUSE("elevator %s: rqdisk_elevator_init returned nothing", path);
	if (elv_plugin_copy(path, t, &p->type, why, whylen))
		return -EINVAL;
	return elv_plugin_check(path, &p->type, why, whylen);
}

/* Load an elevator from a shared object; loading one path twice gives the same type. */
const struct elevator_type *elevator_load(const char *path, char *why, size_t whylen)
{
	const struct elevator_type *t = elv_plugin_find(path);
	struct elv_plugin *p;

	if (t)
		return t;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->path = strdup(path))) {
		free(p);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	if (elv_plugin_open(path, p, why, whylen)) {
		if (p->handle)
			dlclose(p->handle);
		free(p->path);
		free(p);
		return NULL;
	}
	pthread_mutex_lock(&elv_plugins_lock);
	p->next = elv_plugins;
	elv_plugins = p;
	pthread_mutex_unlock(&elv_plugins_lock);
	return &p->type;
}

/* A name, or a path to a shared object (anything with a slash). */
const struct elevator_type *elevator_get(const char *name, char *why, size_t whylen)
{
	const struct elevator_type *t;
	const char *const *n;
	size_t used;

	if (strchr(name, '/') && getauxval(AT_SECURE)) {
		/* setcap or setuid: the caller's shared object would run with what they lack */
		snprintf(why, whylen, "elevator %s: a shared object is not loaded by a privileged "
			 "(setcap or setuid) rqdisk", name);
		return NULL;
	}
	if (strchr(name, '/'))
		return elevator_load(name, why, whylen);
	t = elevator_find(name);
	if (t)
		return t;
	used = (size_t)snprintf(why, whylen, "unknown elevator '%s' (available:", name);
	for (n = elevator_names(); *n && used < whylen; n++)
		used += (size_t)snprintf(why + used, whylen - used, " %s", *n);
	if (used < whylen)
		snprintf(why + used, whylen - used, ")");
	return NULL;
}

struct elevator_queue *elevator_alloc(struct request_queue *q, const struct elevator_type *type)
{
	struct elevator_queue *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->type = type;
	e->q = q;
	e->clock = q->clock;
	e->nr_requests = q->limits.nr_requests;
	e->nr_hw_queues = q->mq ? q->mq->set->nr_hw_queues : 0;
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

/* Lock held: e takes its queue's depth, and its hook recomputes what it derived from it. */
static void elv_depth_update(struct elevator_queue *e)
{
	if (!e || e->nr_requests == e->q->limits.nr_requests)
		return;
	e->nr_requests = e->q->limits.nr_requests;
	if (e->type->depth_updated)
		e->type->depth_updated(e);
}

/*
 * Queue lock held: q's nr_requests changed.  Its elevator, and one set up
 * for a switch that waits (a 2.6 queue's), take the new depth.
 */
void elv_depth_updated(struct request_queue *q)
{
	elv_depth_update(q->elevator);
	elv_depth_update(q->next_elevator);
}

void elv_schedule_dispatch(struct elevator_queue *e, uint64_t when_ns)
{
	struct request_queue *q = e->q;

	if (!q->dispatch_at || when_ns < q->dispatch_at)
		q->dispatch_at = when_ns;
}

/*
 * The sector-sorted tree every elevator keeps, generated once here.  Sector
 * order; equal sectors in address order, so that the tree holds both.
 */
static int elv_rq_sector_cmp(const struct request *a, const struct request *b)
{
	if (blk_rq_pos(a) != blk_rq_pos(b))
		return blk_rq_pos(a) < blk_rq_pos(b) ? -1 : 1;
	/*
	 * Not by address: the same input must sort the same in every run.
	 * Requests of one queue never share a seq; the address is only for
	 * requests made by hand (tests), so that no two are ever equal.
	 */
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* libbsd leaves __unused undefined: the attribute spelled out, for RB_FIND and the like. */
RB_GENERATE_INTERNAL(elv_rb_root, request, rb_node, elv_rq_sector_cmp,
		     __attribute__((unused)) static)

void elv_rb_add(struct elv_rb_root *root, struct request *rq)
{
	assert(!rq->rb_tree);
	RB_INSERT(elv_rb_root, root, rq);
	rq->rb_tree = root;
}

void elv_rb_del(struct elv_rb_root *root, struct request *rq)
{
	assert(rq->rb_tree == root);
	RB_REMOVE(elv_rb_root, root, rq);
	rq->rb_tree = NULL;
}

/* Lock held: a front merge moved rq's start; its tree, if any, must follow. */
void elv_rb_reposition(struct request *rq)
{
	struct elv_rb_root *root = rq->rb_tree;

	if (!root)
		return;
	RB_REMOVE(elv_rb_root, root, rq);
	RB_INSERT(elv_rb_root, root, rq);
}

struct request *elv_rb_first(const struct elv_rb_root *root)
{
	return RB_MIN(elv_rb_root, (struct elv_rb_root *)root);
}

struct request *elv_rb_last(const struct elv_rb_root *root)
{
	return RB_MAX(elv_rb_root, (struct elv_rb_root *)root);
}

struct request *elv_rb_next(const struct request *rq)
{
	return RB_NEXT(elv_rb_root, NULL, (struct request *)rq);
}

struct request *elv_rb_prev(const struct request *rq)
{
	return RB_PREV(elv_rb_root, NULL, (struct request *)rq);
}

/*
 * The searches look at sectors only: the tree's own RB_NFIND would also
 * weigh the address that breaks ties, and so skip requests at the very
 * sector asked for.
 */
struct request *elv_rb_find(const struct elv_rb_root *root, sector_t sector)
{
	struct request *rq = RB_ROOT(root);

	while (rq && blk_rq_pos(rq) != sector)
		rq = blk_rq_pos(rq) < sector ? RB_RIGHT(rq, rb_node) : RB_LEFT(rq, rb_node);
	return rq;
}

struct request *elv_rb_ceiling(const struct elv_rb_root *root, sector_t sector)
{
	struct request *rq = RB_ROOT(root), *found = NULL;

	while (rq) {
		if (blk_rq_pos(rq) >= sector) {
			found = rq;
			rq = RB_LEFT(rq, rb_node);
		} else {
			rq = RB_RIGHT(rq, rb_node);
		}
	}
	return found;
}

struct request *elv_rb_below(const struct elv_rb_root *root, sector_t sector)
{
	struct request *rq = RB_ROOT(root), *found = NULL;

	while (rq) {
		if (blk_rq_pos(rq) < sector) {
			found = rq;
			rq = RB_RIGHT(rq, rb_node);
		} else {
			rq = RB_LEFT(rq, rb_node);
		}
	}
	return found;
}

/* The merged request waits no longer than either part did: it keeps the earlier deadline. */
void elv_fifo_merge(struct elv_fifo *fifo, struct request *rq, struct request *next)
{
	if (next->fifo_time >= rq->fifo_time)
		return;
	TAILQ_REMOVE(fifo, rq, queuelist);
	TAILQ_INSERT_AFTER(fifo, next, rq, queuelist);
	rq->fifo_time = next->fifo_time;
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

/* Lock held: rq, the elevator's choice (or NULL), out of merge reach from now on. */
struct request *elv_taken(struct request_queue *q, struct request *rq)
{
	if (!rq)
		return NULL;
	rq->rq_flags &= ~RQF_ELVPRIV;
	elv_rqhash_del(q, rq);
	if (q->last_merge == rq)
		q->last_merge = NULL;
	return rq;
}

/* The elevator's choice, out of merge reach from now on. */
struct request *elv_next_request(struct request_queue *q, uint64_t now)
{
	struct elevator_queue *e = q->elevator;

	if (q->dispatch_at && now >= q->dispatch_at)
		q->dispatch_at = 0;
	if (!e->type->has_work(e))
		return NULL;
	return elv_taken(q, e->type->dispatch_request(e, now));
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
	if (!t->get)
		return -EINVAL; /* a text tunable: see elv_tunable_text */
	*value = t->get(e);
	return 0;
}

int elv_tunable_text(const struct elevator_queue *e, const struct elv_tunable *t, char *buf,
		     size_t len)
{
	int n = t->show ? t->show(e, buf, len) : snprintf(buf, len, "%lld\n", t->get(e));

	return n < 0 || (size_t)n < len ? n : (int)len - 1;
}

/* Parse, check the bounds, then set: a bad value leaves the old one. */
int elv_tunable_store(struct elevator_queue *e, const char *name, const char *buf)
{
	const struct elv_tunable *t = elv_tunable_find(e, name);
	char *end;
	long long v;

	if (!t)
		return -ENOENT;
	if (t->show && !t->store)
		return -EACCES; /* read-only */
	if (t->store)
		return t->store(e, buf);
	errno = 0;
	v = strtoll(buf, &end, 10);
	while (*end == '\n' || *end == ' ')
		end++;
	if (errno || end == buf || *end || v < t->min || v > t->max)
		return -EINVAL;
	t->set(e, v);
	return 0;
}
