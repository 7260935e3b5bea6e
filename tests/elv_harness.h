/* SPDX-License-Identifier: BSD-3-Clause */
/* elv_harness.h - what elevator tests share: set up a queue, feed it, drain it, check the order. */
#ifndef RQDISK_ELV_HARNESS_H
#define RQDISK_ELV_HARNESS_H

#include "fake_driver.h"

#define MS NSEC_PER_MSEC

/* The fake driver never touches data: every bio may share this memory (128 sectors). */
#define ELV_BUF_SECTORS 128
extern char elv_buf[ELV_BUF_SECTORS * SECTOR_SIZE];

/* ---- setting up ---- */

/* A queue under elevator; depth, when not 0, is its nr_requests. */
struct fake_disk *elv_disk(const char *elevator, bool stopped, unsigned int depth);
struct fake_disk *elv_stopped_disk(const char *elevator);
/* Switch the running queue to name, or fail the test with the core's reason. */
void elv_switch(struct fake_disk *fd, const char *name);
/* The same, the core's answer returned: a test may expect a refusal. */
int elv_try_switch(struct fake_disk *fd, const char *name);

/* ---- feeding ---- */

void elv_submit(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
		unsigned int sectors);
/* A bio from process pid at priority ioprio. */
void elv_submit_from(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
		     unsigned int sectors, pid_t pid, unsigned short ioprio);
/* The same from cgroup blkcg (NULL: the root), as the frontend's bios carry it. */
void elv_submit_cg(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
		   unsigned int sectors, pid_t pid, unsigned short ioprio,
		   const struct blkcg *blkcg);

/* ---- draining ---- */

/* The virtual clock's time. */
uint64_t elv_now(const struct fake_disk *fd);

/* The driver holds one request: completing it lets the elevator choose the next. */
void elv_complete_one(struct fake_disk *fd);
/* The same, step_ms of virtual time after the clock's. */
void elv_complete_one_after(struct fake_disk *fd, uint64_t step_ms);
/* A driver that stops after each dispatch until elv_complete_one* ends what it took. */
void elv_start_serial(struct fake_disk *fd);
/* Nothing out, work queued: the wake-up the elevator asked for; move the clock there, run. */
void elv_wake(struct fake_disk *fd);
/* One request at a time, step_ms each, through idle waits, until all is done. */
void elv_serve_serially(struct fake_disk *fd, uint64_t step_ms);
/* Run everything to its end, step_ns per completion (the first out), waking when idle. */
void elv_drain_stepped(struct fake_disk *fd, uint64_t step_ns);
/* Start the driver and complete everything, through any idle waits. */
void elv_drain(struct fake_disk *fd);
/* Each of tb[0..n-1] ended once, cleanly. */
void elv_assert_ended(const struct test_bio *tb, unsigned int n);
/* Complete what the driver holds (and what that lets in), check tb, free the disk. */
void elv_finish(struct fake_disk *fd, struct test_bio *tb, unsigned int n);
/* Drain through idle waits, check tb, free the disk. */
void elv_finish_drained(struct fake_disk *fd, struct test_bio *tb, unsigned int n);

/* ---- the order the driver saw ---- */

void elv_assert_dispatched(const struct fake_disk *fd, unsigned int i, sector_t sector,
			   unsigned int nr_sectors);
/* The same, and it was of op. */
void elv_assert_dispatched_op(const struct fake_disk *fd, unsigned int i, enum req_op op,
			      sector_t sector, unsigned int nr_sectors);
/* Dispatch i was pid's, to sector. */
void elv_assert_event(const struct fake_disk *fd, unsigned int i, pid_t pid, sector_t sector);
/* Exactly n dispatches, to want[0..n-1] (sectors only). */
void elv_assert_order(const struct fake_disk *fd, const sector_t *want, unsigned int n);
/* Dispatches from..from+n-1 went to want[0..n-1], one sector each, and no more. */
void elv_assert_order_from(const struct fake_disk *fd, unsigned int from, const sector_t *want,
			   unsigned int n);
/* Sectors the head crossed from head through dispatches from on. */
sector_t elv_head_movement(const struct fake_disk *fd, unsigned int from, sector_t head);

/* The dispatch order as runs of one pid. */
struct elv_run {
	pid_t pid;
	unsigned int len;
};
/* Fills runs[0..max-1]; returns how many runs there are, max or not. */
unsigned int elv_pid_runs(const struct fake_disk *fd, struct elv_run *runs, unsigned int max);
/* The dispatch order begins with the n runs of want (more may follow). */
void elv_assert_runs(const struct fake_disk *fd, const struct elv_run *want, unsigned int n);

/* ---- the seek elevators (sstf, clook): the textbook example and the tree's merges ---- */

/* The textbook queue (cylinders), in arrival order; the head starts at 53. */
#define NR_TEXTBOOK 8
#define TEXTBOOK_HEAD 53
extern const sector_t textbook[NR_TEXTBOOK];

struct fake_disk *run_textbook(const char *elevator, struct test_bio *tb, sector_t scale,
			       bool one_at_a_time);

/* The core's merges through the elevator's tree: back, gap fill, front. */
TCase *seek_merge_tests(const char *elevator);

#endif
