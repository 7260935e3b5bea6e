/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mq_model.h - a deterministic model of rqdisk's multi-queue path, to say
 * what it would do on more CPUs than the machine it was measured on.
 *
 * It simulates, on a virtual clock in nanoseconds, what one I/O costs on
 * each thread it crosses: a client thread per job (fio and the kernel's
 * side of FUSE), pinned to CPU job % cpus, keeping iodepth I/Os in flight;
 * a hardware-queue thread per hardware queue, pinned to CPU queue % cpus,
 * which takes each FUSE request of the CPUs mapped to it (software queue
 * CPU % hw_queues, as blk_mq_map_queues), gets a driver tag, inserts and
 * dispatches under the queue lock, waits for the device, and ends and
 * answers the request, again part under the lock.  The lock is one for
 * the whole queue (a single-queue elevator: deadline, bfq, cfq) or one per
 * hardware queue (none, kyber's per-queue lists).
 *
 * A CPU runs one thread's step at a time, to its end, and its ready
 * threads in turn; a thread that finds the lock held sleeps until it is
 * handed the lock, and then waits for its CPU like any other.  A thread
 * with nothing to do sleeps, and work handed to it is taken up wake_ns
 * later (the wake-up's latency: no CPU of its own, but the work waits).  Every time
 * is a constant, and ties are broken by the order events were made, so a
 * run is a function of its parameters alone.
 */
#ifndef RQDISK_MQ_MODEL_H
#define RQDISK_MQ_MODEL_H

#include <stdbool.h>
#include <stdint.h>

struct mq_model_params {
	unsigned int cpus;
	unsigned int hw_queues;
	unsigned int jobs;	    /* client threads */
	unsigned int iodepth;	    /* I/Os in flight per job */
	unsigned int tags;	    /* driver tags per hardware queue */
	bool shared_lock;	    /* one queue lock (single-queue elevator), else one per queue */
	uint64_t client_ns;	    /* a client thread's CPU per I/O (submission and reaping) */
	uint64_t take_ns;	    /* a hardware-queue thread's CPU to take a request, unlocked */
	uint64_t submit_lock_ns;    /* ... inserting and dispatching it, under the lock */
	uint64_t end_lock_ns;	    /* ... ending it, under the lock */
	uint64_t answer_ns;	    /* ... answering FUSE, unlocked */
	uint64_t device_ns;	    /* the device's time for it (no CPU) */
	uint64_t wake_ns;	    /* an idle thread handed work runs no sooner than this after */
	uint64_t requests;	    /* I/Os to complete; the first tenth warms up */
};

struct mq_model_result {
	double iops;
	double lock_utilisation;    /* the busiest lock's held time over the run */
	double lock_wait_ns;	    /* mean wait for the lock, over every acquisition */
	double tag_wait_fraction;   /* of requests, those that waited for a driver tag */
	double cpu_utilisation;	    /* busy time over cpus * run time */
};

/* 0, or -EINVAL with why filled for parameters that make no model. */
int mq_model_check(const struct mq_model_params *p, char *why, unsigned long whylen);
/* Runs the model; p must pass mq_model_check(). 0, or -ENOMEM. */
int mq_model_run(const struct mq_model_params *p, struct mq_model_result *r);

#endif
