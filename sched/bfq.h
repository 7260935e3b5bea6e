/* SPDX-License-Identifier: BSD-3-Clause */
/* bfq.h - Budget Fair Queueing: the B-WF2Q+ entities (queues and groups) and their scheduler. */

/*
 * Two levels, as Linux's with one level of cgroups: the root's service
 * trees hold the queues of processes in no group (the root cgroup) and
 * one entity per group with busy queues; each group's trees hold its
 * queues.  A group entity is served what its queues are served, so
 * B-WF2Q+ shares the disk between groups by their weights, and within a
 * group between its queues by theirs.
 */
#ifndef RQDISK_BFQ_H
#define RQDISK_BFQ_H

#include "elevator.h"

/* The classes, in the order they are served: a lower index always goes first. */
enum { BFQ_CLASS_RT, BFQ_CLASS_BE, BFQ_CLASS_IDLE, BFQ_NR_CLASSES };

/* Weights as Linux's: from 1 to 1000, ioprio levels map to 10..80 (level 4: 40). */
#define BFQ_MIN_WEIGHT 1
#define BFQ_MAX_WEIGHT 1000
#define BFQ_WEIGHT_CONVERSION_COEFF 10

/* The idle class is served at least once in this long, whatever else waits. */
#define BFQ_CL_IDLE_TIMEOUT_NS (200 * NSEC_PER_MSEC)

/*
 * One schedulable thing: a queue or a group.  Virtual times are fixed point, service
 * shifted left by BFQ_SERVICE_SHIFT before it is divided by a weight, so
 * a weight of 1000 still moves the clock for a one-sector request.
 */
#define BFQ_SERVICE_SHIFT 22

struct bfq_service_tree;

struct bfq_entity {
	TAILQ_ENTRY(bfq_entity) link; /* on its tree's active or idle list */
	struct bfq_service_tree *st;  /* the tree of its class while on a list or in service */
	uint64_t start, finish;       /* virtual times */
	int budget;                   /* sectors it may receive this time */
	int service;                  /* sectors it received since it was last set in service */
	unsigned int weight;          /* orig_weight times the raising coefficient */
	bool on_active, on_idle, in_service;
	bool in_wsum; /* its weight is in st->wsum: active, idle or in service */
	struct bfq_entity *parent;	    /* its group's entity; NULL in the root */
	struct bfq_sched_data *sched_data;  /* the trees it is scheduled in */
	struct bfq_sched_data *my_sched_data; /* a group's: its queues' trees; NULL for a queue */
};

TAILQ_HEAD(bfq_entity_list, bfq_entity);

/*
 * One class's B-WF2Q+ state.  The entities are kept on plain lists, not
 * Linux's augmented red-black trees: a disk here has tens of busy
 * processes, and a walk is obviously right.
 */
struct bfq_service_tree {
	struct bfq_entity_list active; /* backlogged, waiting for service */
	struct bfq_entity_list idle;   /* emptied with a finish still ahead of vtime */
	uint64_t vtime;
	uint64_t wsum; /* the weights of the active, the idle and the in-service one */
};

struct bfq_sched_data {
	struct bfq_service_tree st[BFQ_NR_CLASSES];
	struct bfq_entity *in_service;
	uint64_t class_idle_last_service; /* ns */
};

/* bfq_wf2q.c: the scheduler over entities; it knows nothing of requests. */
void bfq_sched_init(struct bfq_sched_data *sd);
void bfq_activate_entity(struct bfq_sched_data *sd, struct bfq_entity *e, int class,
			 bool non_blocking);
void bfq_requeue_entity(struct bfq_sched_data *sd, struct bfq_entity *e);
void bfq_deactivate_entity(struct bfq_sched_data *sd, struct bfq_entity *e);
void bfq_forget_entity(struct bfq_entity *e);
void bfq_entity_served(struct bfq_entity *e, int served);
void bfq_entity_set_weight(struct bfq_entity *e, unsigned int weight);
struct bfq_entity *bfq_get_next_entity(struct bfq_sched_data *sd, uint64_t now);
/* ... and over the two levels: a queue's entity with its group's */
void bfq_activate_leaf(struct bfq_entity *e, int class, bool non_blocking);
void bfq_requeue_leaf(struct bfq_entity *e);
void bfq_deactivate_leaf(struct bfq_entity *e);
void bfq_leaf_served(struct bfq_entity *e, int served);
struct bfq_entity *bfq_get_next_leaf(struct bfq_sched_data *root, uint64_t now);

/* A weight as Linux's bfq_ioprio_to_weight gives it for a level 0..7. */
static inline unsigned int bfq_ioprio_to_weight(int level)
{
	return (unsigned int)(IOPRIO_NR_LEVELS - level) * BFQ_WEIGHT_CONVERSION_COEFF;
}

#endif
