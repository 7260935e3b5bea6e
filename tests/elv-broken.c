/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * elv-broken.c - elevator shared objects the loader must refuse, one per
 * BROKEN_* macro (check_loader builds each as its own libtool module):
 *
 *   BROKEN_VERSION   built against a future header: API version 99
 *   BROKEN_NOHOOK    no dispatch_request, a required hook
 *   BROKEN_NOSYMBOL  registered as a built-in: no rqdisk_elevator_init
 *   BROKEN_SMALL     an ops table that ends before the required hooks
 *   BROKEN_NONE      named "none", which means no elevator at all
 *   BROKEN_ALIAS     with deadline's alias, "mq-deadline"
 *   BROKEN_TUNABLE   a tunable with a number's get and a text's store
 *
 * and one it must take: OLD_TABLE, built before the tunables were added at
 * the end of struct elevator_type (its size ends before them; what lies
 * past it is another thing's, here a broken tunable the loader must not
 * read).
 */
#ifdef BROKEN_NOSYMBOL
#define ELV_BUILTIN /* the entry point is then elv_builtin_broken */
#endif
#include <stdlib.h>

#include <rqdisk/elevator.h>

#ifdef BROKEN_VERSION
#undef ELV_API_VERSION
#define ELV_API_VERSION 99
#endif

static int broken_init_queue(struct elevator_queue *e)
{
	e->elevator_data = NULL;
	return 0;
}

static void broken_exit_queue(struct elevator_queue *e)
{
	(void)e;
}

static void broken_add_request(struct elevator_queue *e, struct request *rq)
{
	(void)e;
	(void)rq;
	abort(); /* never loaded, so never called */
}

/* unused in BROKEN_NOHOOK */
__attribute__((unused)) static struct request *broken_dispatch_request(struct elevator_queue *e,
								   uint64_t now_ns)
{
	(void)e;
	(void)now_ns;
	return NULL;
}

static bool broken_has_work(const struct elevator_queue *e)
{
	(void)e;
	return false;
}

#if defined(BROKEN_TUNABLE) || defined(OLD_TABLE)
static long long broken_mixed_get(const struct elevator_queue *e)
{
	(void)e;
	return 0;
}

static int broken_mixed_store(struct elevator_queue *e, const char *buf)
{
	(void)e;
	(void)buf;
	return 0;
}

static const struct elv_tunable broken_tunables[] = {
	{ .name = "mixed", .get = broken_mixed_get, .store = broken_mixed_store },
	{ 0 },
};
#endif

static struct elevator_type elevator_broken = {
#ifdef BROKEN_NONE
	.elevator_name = "none",
#else
	.elevator_name = "broken",
#endif
#ifdef BROKEN_ALIAS
	.elevator_alias = "mq-deadline",
#endif
	.init_queue = broken_init_queue,
	.exit_queue = broken_exit_queue,
	.add_request = broken_add_request,
#ifndef BROKEN_NOHOOK
	.dispatch_request = broken_dispatch_request,
#endif
	.has_work = broken_has_work,
#if defined(BROKEN_TUNABLE) || defined(OLD_TABLE)
	.tunables = broken_tunables,
#endif
#ifdef OLD_TABLE
	.elevator_description = "past the table's size: never read",
#endif
};

#ifdef BROKEN_SMALL
/* What a plugin whose table stopped at the name would register. */
const struct elevator_type *rqdisk_elevator_init(void);
const struct elevator_type *rqdisk_elevator_init(void)
{
	elevator_broken.size = offsetof(struct elevator_type, init_queue);
	elevator_broken.api_version = ELV_API_VERSION;
	return &elevator_broken;
}
#elif defined(OLD_TABLE)
/* What a plugin built before tunables were added would register: a table that ends there. */
const struct elevator_type *rqdisk_elevator_init(void);
const struct elevator_type *rqdisk_elevator_init(void)
{
	elevator_broken.size = offsetof(struct elevator_type, tunables);
	elevator_broken.api_version = ELV_API_VERSION;
	return &elevator_broken;
}
#else
ELEVATOR_REGISTER(broken, elevator_broken)
#endif
