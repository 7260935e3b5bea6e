/* elevator.h - the I/O scheduler plugin API: one versioned ops table per elevator. */
#ifndef RQDISK_ELEVATOR_H
#define RQDISK_ELEVATOR_H

#include "blk_types.h"

/*
 * The version of this API.  A loader refuses an elevator built for another
 * one.  New fields are only ever added at the end of struct elevator_type,
 * and the loader copies no more than the size the elevator was built with.
 */
#define ELV_API_VERSION 1

/* Clocks in nanoseconds: real (CLOCK_MONOTONIC) or virtual (tests, replay). */
struct blk_clock {
	uint64_t (*now)(const struct blk_clock *clock);
	uint64_t virtual_ns; /* the virtual clock's time */
};

static inline uint64_t blk_clock_now(const struct blk_clock *clock)
{
	return clock->now(clock);
}

#define NSEC_PER_MSEC 1000000ull

enum elv_merge {
	ELEVATOR_NO_MERGE,
	ELEVATOR_FRONT_MERGE,
	ELEVATOR_BACK_MERGE,
};

struct elevator_type;

/* One elevator instance on one queue. */
struct elevator_queue {
	const struct elevator_type *type; /* core-managed */
	struct request_queue *q;          /* core-managed */
	const struct blk_clock *clock;    /* core-managed */
	void *elevator_data;              /* the elevator's */
	bool draining; /* core-managed: being emptied; hand out every request, never idle */
};

/*
 * A tunable shows under queue/iosched/.  The core parses and checks the
 * bounds; set is only called with a value in [min, max].
 */
struct elv_tunable {
	const char *name;
	long long min, max;
	long long (*get)(const struct elevator_queue *e);
	void (*set)(struct elevator_queue *e, long long value);
};

/*
 * Every hook is called with the queue lock held and must not sleep or call
 * back into the queue, except elv_schedule_dispatch().  Requests reach an
 * elevator one barrier epoch at a time: ordering across barriers is the
 * core's, and an elevator has no way to break it.
 */
struct elevator_type {
	/* Filled by ELEVATOR_REGISTER. */
	size_t size;
	int api_version;

	/* Filled by the elevator. */
	const char *elevator_name;
	const char *elevator_alias;

	/* Set up elevator_data.  Return 0 or -errno.  Required. */
	int (*init_queue)(struct elevator_queue *e);
	/* Free elevator_data; the elevator is empty by now.  Required. */
	void (*exit_queue)(struct elevator_queue *e);
	/* Take a new request.  Required. */
	void (*add_request)(struct elevator_queue *e, struct request *rq);
	/*
	 * Remove and return the request to run next, or NULL for none now.
	 * An elevator that holds back work on purpose (idling) asks the core
	 * to try again later with elv_schedule_dispatch().  Required.
	 */
	struct request *(*dispatch_request)(struct elevator_queue *e, uint64_t now_ns);
	/* Whether any request is queued in the elevator.  Required. */
	bool (*has_work)(const struct elevator_queue *e);

	/*
	 * Offer a queued request bio could join, beyond the core's own
	 * last-merge cache and back-merge lookup (e.g. front merges).  The
	 * core checks every limit before merging.  Optional.
	 */
	enum elv_merge (*find_merge)(struct elevator_queue *e, const struct bio *bio,
				     struct request **rq);
	/* rq grew by a bio at its front or back.  Optional. */
	void (*request_merged)(struct elevator_queue *e, struct request *rq,
			       enum elv_merge type);
	/*
	 * next was merged into rq and is about to be freed: forget it.
	 * Without this hook the core never merges two queued requests.
	 * Optional.
	 */
	void (*requests_merged)(struct elevator_queue *e, struct request *rq,
				struct request *next);
	/* A dispatched request finished.  Optional. */
	void (*completed)(struct elevator_queue *e, struct request *rq);

	/* NULL-terminated table of tunables.  Optional. */
	const struct elv_tunable *tunables;
};

/*
 * A red-black tree of requests (libbsd's sys/tree.h) on rq->rb_node, for
 * an elevator's sorted lists; libbsd leaves __unused undefined, so the
 * static functions are generated here with the attribute spelled out.
 */
#define ELV_RB_GENERATE(name, cmp) \
	RB_GENERATE_INTERNAL(name, request, rb_node, cmp, __attribute__((unused)) static)

/* Sector order for such a tree; equal sectors in address order, so that it holds both. */
static inline int elv_rq_sector_cmp(const struct request *a, const struct request *b)
{
	if (blk_rq_pos(a) != blk_rq_pos(b))
		return blk_rq_pos(a) < blk_rq_pos(b) ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * Searches of such a tree, from its root (RB_ROOT(tree)).  They look at
 * sectors only: the tree's own RB_NFIND would also weigh the address that
 * breaks ties, and so skip requests at the very sector asked for.
 */

/* A request that starts at sector, or NULL: a front merge's partner (2.6's elv_rb_find). */
static inline struct request *elv_rb_find(struct request *root, sector_t sector)
{
	while (root && blk_rq_pos(root) != sector)
		root = blk_rq_pos(root) < sector ? RB_RIGHT(root, rb_node) : RB_LEFT(root, rb_node);
	return root;
}

/* The first request in sector order that starts at or above sector, or NULL. */
static inline struct request *elv_rb_ceiling(struct request *root, sector_t sector)
{
	struct request *found = NULL;

	while (root) {
		if (blk_rq_pos(root) >= sector) {
			found = root;
			root = RB_LEFT(root, rb_node);
		} else {
			root = RB_RIGHT(root, rb_node);
		}
	}
	return found;
}

/* The last request in sector order that starts below sector, or NULL. */
static inline struct request *elv_rb_below(struct request *root, sector_t sector)
{
	struct request *found = NULL;

	while (root) {
		if (blk_rq_pos(root) < sector) {
			found = root;
			root = RB_RIGHT(root, rb_node);
		} else {
			root = RB_LEFT(root, rb_node);
		}
	}
	return found;
}

/* Ask the core to call dispatch_request again at time when_ns. */
void elv_schedule_dispatch(struct elevator_queue *e, uint64_t when_ns);

/*
 * Define tunable name kept in member of the elevator's data (of type type),
 * in natural units (mult 1) or in milliseconds kept as nanoseconds (mult
 * NSEC_PER_MSEC).  List it in the table with ELV_ATTR(prefix, name).
 */
#define ELV_TUNABLE(prefix, name, type, member, lo, hi, mult)                   \
	static long long prefix##_##name##_get(const struct elevator_queue *e)  \
	{                                                                       \
		return (long long)(((const type *)e->elevator_data)->member / (mult)); \
	}                                                                       \
	static void prefix##_##name##_set(struct elevator_queue *e, long long v) \
	{                                                                       \
		((type *)e->elevator_data)->member = v * (mult);                    \
	}                                                                       \
	enum { prefix##_##name##_min = (lo), prefix##_##name##_max = (hi) }

#define ELV_ATTR(prefix, name)                                                  \
	{                                                                       \
		#name, prefix##_##name##_min, prefix##_##name##_max,            \
			prefix##_##name##_get, prefix##_##name##_set            \
	}

/*
 * Register an elevator: fills the size and version and defines the one
 * entry point.  Built into rqdisk (ELV_BUILTIN defined), the entry point is
 * named after the elevator; as a shared object it is rqdisk_elevator_init.
 */
#ifdef ELV_BUILTIN
#define ELV_ENTRY(name) elv_builtin_##name
#else
#define ELV_ENTRY(name) rqdisk_elevator_init
#endif

#define ELEVATOR_REGISTER(name, type)                                                \
	const struct elevator_type *ELV_ENTRY(name)(void);                           \
	__attribute__((visibility("default"))) const struct elevator_type *ELV_ENTRY(name)(void) \
	{                                                                            \
		(type).size = sizeof(type);                                          \
		(type).api_version = ELV_API_VERSION;                                \
		return &(type);                                                      \
	}

#endif
