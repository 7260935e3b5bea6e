/* SPDX-License-Identifier: BSD-3-Clause */
/* elevator.h - the I/O scheduler plugin API: one versioned ops table per elevator. */
#ifndef RQDISK_ELEVATOR_H
#define RQDISK_ELEVATOR_H

#include "blk_types.h"

/*
 * The version of this API: of the layout of struct request, struct bio,
 * struct elevator_queue and every other structure here, which elevators
 * read in place, and of the meaning of their fields.  A loader refuses an
 * elevator built for another one (but the previous, below, on a 2.6
 * queue).  The one exception: new fields are added
 * at the end of struct elevator_type without a new version, and the loader
 * copies no more than the size the elevator was built with.  See
 * rqdisk-elevator(3), VERSIONING.
 */
#define ELV_API_VERSION 4

/*
 * The previous version, which a loader still takes for a 2.6 (rq) queue:
 * version 4 only added the multi-queue fields at the ends of struct
 * request, struct elevator_queue and struct elevator_type, so a version 3
 * elevator reads every structure it knows at the offsets it was built
 * with.  A multi-queue queue refuses it (its hooks were promised the
 * queue lock and one dispatching thread).
 */
#define ELV_API_VERSION_RQ_ONLY 3

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
	/*
	 * Core-managed: the queue's depth (queue/nr_requests; the scheduler
	 * tags on a multi-queue queue), updated before depth_updated.
	 */
	unsigned int nr_requests;
	/* Version 4.  Core-managed: the hardware queues of a multi-queue queue, 0 on a 2.6 queue. */
	unsigned int nr_hw_queues;
};

/*
 * A tunable shows under queue/iosched/.  The core parses and checks the
 * bounds; set is only called with a value in [min, max].  A tunable that
 * is not one number (bfq's per-process weights) has show and store
 * instead, and no get or set: show writes at most len bytes of text and
 * returns its length; store gets one write's text (NUL-terminated, a
 * trailing newline possibly there) and returns 0 or -EINVAL, leaving everything as
 * it was on an error.  A text tunable without store is read-only (a
 * write fails with EACCES).  Both are called with the queue lock held.
 */
struct elv_tunable {
	const char *name;
	long long min, max;
	long long (*get)(const struct elevator_queue *e);
	void (*set)(struct elevator_queue *e, long long value);
	int (*show)(const struct elevator_queue *e, char *buf, size_t len);
	int (*store)(struct elevator_queue *e, const char *buf);
};

/* A FIFO of requests on rq->queuelist, by rq->fifo_time. */
TAILQ_HEAD(elv_fifo, request);

/*
 * What a request is about to be given a scheduler tag for, in limit_depth:
 * shallow_depth (0: all of them) is how many scheduler tags the request
 * may find in use and still take one; an elevator lowers it to keep room
 * for others (deadline's async_depth), and the request waits otherwise.
 */
struct blk_mq_alloc_data {
	unsigned int cmd_flags;      /* REQ_* of the request */
	unsigned int shallow_depth;  /* the elevator's to set */
	unsigned int nr_tags;        /* the scheduler tags there are (nr_requests) */
};

/* The index of a hardware queue, from 0: what a per-queue elevator keys its lists on. */
unsigned int blk_mq_hctx_index(const struct blk_mq_hw_ctx *hctx);

/*
 * The multi-queue hooks (version 4), all optional.  An elevator with none
 * of them runs on a multi-queue queue through the core's adapter, as one
 * instance for the whole queue: insert is add_request, dispatch is
 * dispatch_request and has_work is has_work, whichever hardware queue
 * asks, and the request goes out through the hardware queue that asked.
 * With ELEVATOR_F_MQ_SINGLE_QUEUE an elevator with these hooks is the
 * same: any hardware queue may be handed any request.  Without it,
 * dispatch_request(hctx) returns only requests insert_requests was given
 * for hctx, and they go out through hctx.  Every hook, of either kind, is
 * called with the queue lock held, from whichever thread runs a hardware
 * queue or submits, never two at once.  See rqdisk-elevator(3), MULTI-QUEUE.
 */
struct elevator_mq_ops {
	/* Take every request off list (new ones, for hctx).  Required with dispatch_request. */
	void (*insert_requests)(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx,
				struct elv_fifo *list, bool at_head);
	/* Remove and return hctx's next request, or NULL.  Required with insert_requests. */
	struct request *(*dispatch_request)(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx,
					    uint64_t now_ns);
	/* Whether hctx has a request to dispatch.  Required with insert_requests. */
	bool (*has_work)(struct elevator_queue *e, struct blk_mq_hw_ctx *hctx);
	/*
	 * Lower data->shallow_depth for a request of op about to get a
	 * scheduler tag.  Called for an elevator on the adapter too (one with
	 * this hook alone).  Optional.
	 */
	void (*limit_depth)(struct elevator_queue *e, enum req_op op,
			    struct blk_mq_alloc_data *data);
};

/* elevator_features */
#define ELEVATOR_F_MQ_SINGLE_QUEUE (1u << 0) /* any hctx may dispatch any request */

/*
 * Every hook is called with the queue lock held and must not sleep or call
 * back into the queue, except elv_schedule_dispatch(); the elv_rb and
 * elv_fifo functions touch only the tree or list they are given.  Requests
 * reach an elevator one barrier epoch at a time: ordering across barriers
 * is the core's, and an elevator has no way to break it.
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

	/* One line saying what the elevator does, for rqdisk --list.  Optional. */
	const char *elevator_description;

	/* Version 4: the multi-queue hooks and ELEVATOR_F_* flags.  Optional. */
	struct elevator_mq_ops mq_ops;
	unsigned int elevator_features;

	/*
	 * The queue's depth changed (queue/nr_requests written, on either
	 * queue): e->nr_requests is the new one; recompute what was derived
	 * from it, as Linux's depth_updated.  Added with no new API version:
	 * an elevator built before has none, and keeps what it derived.
	 * Optional.
	 */
	void (*depth_updated)(struct elevator_queue *e);
};

/*
 * The sector-sorted tree every elevator keeps its requests in, on
 * rq->rb_node: one instance, the core's.  Requests at one sector are all
 * kept, in an order of the core's.  A front merge moves a request's start:
 * the core then puts it back in order before request_merged is called.
 * Walk it with these functions: libbsd's RB_ macros on it would call
 * functions only the core has.
 */
RB_HEAD(elv_rb_root, request);

static inline void elv_rb_init(struct elv_rb_root *root)
{
	RB_INIT(root);
}

static inline bool elv_rb_empty(const struct elv_rb_root *root)
{
	return RB_EMPTY(root);
}

void elv_rb_add(struct elv_rb_root *root, struct request *rq);
void elv_rb_del(struct elv_rb_root *root, struct request *rq);
/* The lowest and the highest request, or NULL. */
struct request *elv_rb_first(const struct elv_rb_root *root);
struct request *elv_rb_last(const struct elv_rb_root *root);
/* The request after and before rq in the tree, or NULL. */
struct request *elv_rb_next(const struct request *rq);
struct request *elv_rb_prev(const struct request *rq);
/* A request that starts at sector, or NULL: a front merge's partner (2.6's elv_rb_find). */
struct request *elv_rb_find(const struct elv_rb_root *root, sector_t sector);
/* The first request that starts at or above sector, or NULL. */
struct request *elv_rb_ceiling(const struct elv_rb_root *root, sector_t sector);
/* The last request that starts below sector, or NULL. */
struct request *elv_rb_below(const struct elv_rb_root *root, sector_t sector);

/*
 * next is about to be merged into rq, both on fifo: if next expires first,
 * rq takes its deadline and its place (just after next, which the elevator
 * removes next).  Call it from requests_merged.
 */
void elv_fifo_merge(struct elv_fifo *fifo, struct request *rq, struct request *next);

/* Ask the core to call dispatch_request again at time when_ns. */
void elv_schedule_dispatch(struct elevator_queue *e, uint64_t when_ns);

/*
 * Version 4.  Whether the device below does not seek (queue/rotational is
 * 0), as the driver says; call it with e->q when deciding, not once at
 * init: the stack below may set it after the elevator is.
 */
bool blk_queue_nonrot(const struct request_queue *q);

/*
 * The cgroup (v2) rq's bios were submitted from, as Linux's bio carries
 * its blkcg: an interned identifier, the same pointer for every request
 * of one cgroup, NULL for the root cgroup or when the submitter is not
 * known.  Two requests of different cgroups are never merged.  Added
 * with no new API version (an elevator built before never asks).
 */
const struct blkcg *blk_rq_cgroup(const struct request *rq);

/*
 * The cgroup's path under the cgroup (v2) root, as /proc/PID/cgroup
 * shows it ("/" for NULL, the root): what its weight files and the
 * group_weights tunables are found by.  Valid as long as the queue.
 */
const char *blkcg_path(const struct blkcg *blkcg);

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
			prefix##_##name##_get, prefix##_##name##_set, NULL, NULL \
	}

/* A read-only text tunable: prefix_name_show, defined by the elevator. */
#define ELV_RO_ATTR(prefix, name)                                               \
	{                                                                       \
		#name, 0, 0, NULL, NULL, prefix##_##name##_show, NULL           \
	}

/* A text tunable: prefix_name_show and prefix_name_store, defined by the elevator. */
#define ELV_TEXT_ATTR(prefix, name)                                             \
	{                                                                       \
		#name, 0, 0, NULL, NULL, prefix##_##name##_show, prefix##_##name##_store \
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
