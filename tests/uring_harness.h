/* SPDX-License-Identifier: BSD-3-Clause */
/* uring_harness.h - a queue over the io_uring driver on a real file, run by the daemon's loop. */
#ifndef RQDISK_URING_HARNESS_H
#define RQDISK_URING_HARNESS_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "backend_uring.h"
#include "blktrace.h"
#include "driver_uring.h"
#include "fake_driver.h"

#define KIB 1024u
#define MIB (1024u * 1024)
#define DISK_SIZE (4 * MIB)
#define NS_PER_MS 1000000L
#define WAIT_SECONDS 30 /* a bio not ended by then never will be */

/* The elevators most tests run under, one loop iteration each. */
#define NR_ELEVATORS 2
extern const char *const elevators[NR_ELEVATORS];

/*
 * Every test drives the disk through uring_driver_run(), the daemon's loop,
 * in the test's own thread: what a test submits waits as steps until the
 * loop's serve runs them, so bios go in as the daemon's do, from the loop
 * thread with deferred submission, and end there too.
 */
struct disk;
typedef void(step_fn)(struct disk *k, void *arg, uint64_t val);

struct step {
	step_fn *fn;
	void *arg;
	uint64_t val;
};

#define MAX_STEPS 1024

struct disk {
	int fd;
	struct request_queue *q;
	struct uring_driver *d;
	int idle[2]; /* the watched pipe: never any input */
	struct uring_watch w;
	struct step steps[MAX_STEPS];
	unsigned int nr_steps;
	unsigned int ended; /* bios ended since the last wait */
	unsigned int want;  /* serve says DONE once this many have */
	bool running;       /* inside uring_driver_run() */
	char trace_dir[64];
};

struct tbio {
	struct bio bio;
	struct bio_vec vec[4];
	struct disk *k;
	int ended;
	int error;
};

/* What the queue's blktrace shows of a run. */
struct trace_counts {
	unsigned int issued, requeued, completed;
	unsigned int max_in_flight; /* issued, not requeued or completed, at once */
	uint64_t min_d2c_ns;        /* the shortest time from an issue to a completion */
};

/* A disk: a temporary file, a queue, the driver; started, then closed when idle. */
const char *tmp_dir(void);
int temp_file(const char *dir, off_t size, bool readonly);
/* The driver with flags over backend (dev_file_ops, dev_null_ops), under model's filter. */
void disk_start_flags(struct disk *k, unsigned int entries, const char *model,
		      unsigned int flags, const struct dev_ops *backend);
void disk_start_model(struct disk *k, unsigned int entries, const char *model);
void disk_start(struct disk *k, unsigned int entries);
void disk_init(struct disk *k, int fd, const char *elevator);
void disk_open(struct disk *k, const char *elevator, const char *dir, off_t size,
	       bool readonly, unsigned int entries);
void disk_close(struct disk *k);

/* Bios, given to the loop as steps and waited for. */
void tbio_setup(struct tbio *tb, struct disk *k, enum req_op op, unsigned int flags,
		sector_t sector, unsigned int bytes, void *buf);
void disk_step(struct disk *k, step_fn *fn, void *arg, uint64_t val);
void disk_submit(struct disk *k, struct tbio *tb);
void disk_plug(struct disk *k);
void disk_unplug(struct disk *k);
void wait_ended(struct disk *k, unsigned int n);
int disk_io(struct disk *k, enum req_op op, unsigned int flags, sector_t sector,
	    unsigned int bytes, void *buf);

/* What blktrace saw: issues, requeues, completions. */
void disk_trace_start(struct disk *k);
struct trace_counts disk_trace_stop(struct disk *k);

/* Memory and the file: patterns, and what the file holds. */
void *mem_alloc(size_t size);
void mem_fill(void *buf, size_t size, unsigned int seed);
bool mem_is_zero(const void *buf, size_t size);
void file_has(struct disk *k, off_t off, const void *buf, size_t size);
void write_pattern(struct disk *k, sector_t sector, unsigned int bytes, unsigned int seed);

/* The queue's count of ios done in g, read under its lock. */
uint64_t ios_done(struct disk *k, enum stat_group g);

/* Run i of a loop test over both elevators, without a model and then under one. */
const char *elevator_of(int i);
void disk_open_modelled(struct disk *k, int i, off_t size);

/* The real clock the driver runs on. */
uint64_t now_ns(void);
/*
 * n 4 KiB reads 64 sectors apart at once (n <= 16), under the elevator and
 * the model, over backend.
 */
struct trace_counts modelled_reads(const char *elevator, const char *spec, unsigned int n,
				   const struct dev_ops *backend, uint64_t *ns);

/* 77 when this kernel or this process has no io_uring, 0 when it has, 1 otherwise. */
int uring_available(void);

#endif
