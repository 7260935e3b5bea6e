/* SPDX-License-Identifier: BSD-3-Clause */
/* fake_driver.h - a driver for unit tests: takes requests and completes them on command. */
#ifndef RQDISK_FAKE_DRIVER_H
#define RQDISK_FAKE_DRIVER_H

#include <check.h>

#include "blkdev.h"

#define FAKE_MAX_EVENTS 65536

/* What the driver saw, in order. */
struct fake_event {
	enum req_op op;
	unsigned int flags;
	sector_t sector;
	unsigned int nr_sectors;
	unsigned int nr_segments;
	uint64_t epoch;
	pid_t pid;
	unsigned short ioprio;
};

struct fake_disk {
	struct request_queue *q;
	struct blk_clock clock;
	struct rq_list dispatched; /* started, not yet completed */
	unsigned int nr_dispatched;
	bool stopped;              /* take nothing until restarted */
	void (*on_dispatch)(struct fake_disk *fd, struct request *rq); /* a test's checks */
	void *priv;
	struct fake_event events[FAKE_MAX_EVENTS];
	unsigned int nr_events;
};

/* A bio with its own segments and a record of how it ended. */
#define TBIO_MAX_VECS 8
struct test_bio {
	struct bio bio;
	struct bio_vec vecs[TBIO_MAX_VECS];
	int ended;
	int error;
	unsigned int order; /* completion order, from 1 */
};

struct fake_disk *fake_disk_new(const char *elevator);
void fake_disk_free(struct fake_disk *fd);
struct request *fake_nth(struct fake_disk *fd, unsigned int n);
void fake_complete(struct fake_disk *fd, struct request *rq, int error, unsigned int nr_sectors);
void fake_complete_all(struct fake_disk *fd);
void fake_complete_batch(struct fake_disk *fd);
void fake_start(struct fake_disk *fd);

void tbio_init(struct test_bio *tb, enum req_op op, sector_t sector, unsigned int sectors,
	       void *buf);
void tbio_init_vecs(struct test_bio *tb, enum req_op op, sector_t sector,
		    const struct bio_vec *vecs, unsigned short n);
extern unsigned int tbio_completions;

int fake_run_suite(Suite *s);

/*
 * Every elevator a generic test runs over: "none", then each built-in one
 * from the registry (elevator_builtin_names()), in its order.  A new
 * built-in elevator is in every generic test with no edit of a test.
 */
const char *fake_elevator(int i);
int fake_nr_elevators(void);

#endif
