/* SPDX-License-Identifier: BSD-3-Clause */
/* options.h - rqdisk's command line: what to mount, where, and the queue it gets. */
#ifndef RQDISK_OPTIONS_H
#define RQDISK_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "queue_limits.h"

/* 50 µs covers a depth-1 client's turnaround, measured from 10 to 100 */
#define RQDISK_IDLE_POLL_US 50
#define RQDISK_IDLE_POLL_MAX_US 1000000
#define RQDISK_MAX_FILTERS 7 /* DEV_MAX_LAYERS, less the backend */
/* the control tree numbers mq/N/ within a fixed inode range (control.h) */
#define RQDISK_MAX_HW_QUEUES 64
/* --hw-queue-depth's default: null_blk's hw_queue_depth */
#define RQDISK_HW_QUEUE_DEPTH 64
#define RQDISK_MAX_HW_QUEUE_DEPTH 4096
/* IMAGE and the --disk ones: a thread and a mount each */
#define RQDISK_MAX_DISKS 16

/* --queue-mode: the 2.6 request queue, or the multi-queue one beside it */
enum queue_mode {
	QUEUE_MODE_RQ, /* one queue, one lock, request_fn: the default */
	QUEUE_MODE_MQ, /* software queues onto hardware queues with driver tags */
};

/* --fuse-uring[=WHEN]: FUSE requests on io_uring */
enum fuse_uring_mode {
	FUSE_URING_AUTO, /* where the kernel offers it; else /dev/fuse, unsaid */
	FUSE_URING_ON,   /* or refuse to start; a failure later is said */
	FUSE_URING_OFF,  /* never: /dev/fuse */
};

struct rqdisk_options {
	const char *image;
	const char *mountpoint;
	const char *elevator;
	struct queue_limits limits;
	bool direct;
	bool read_only;
	bool request_size_set; /* --max-sectors or --max-segment-size given */
	bool allow_other;
	bool foreground;
	enum fuse_uring_mode fuse_uring;
	bool null;       /* no I/O on the image: null_blk's instant device */
	const char *null_keys; /* --null=KEYS: the null backend's, or NULL */
	unsigned int idle_poll_us; /* poll for input this long before sleeping idle */
	unsigned int poll_us;      /* mq: a hardware queue's thread spins this long before any sleep */
	uint64_t create_size; /* 0: the image must exist */
	const char *trace;    /* NULL, or blktrace to NAME.blktrace.N from the start */
	const char *model;    /* the last --model's spec; "none" for none */
	/* the device stack's filters, "NAME[:ARGS]", nearest the queue first */
	const char *filters[RQDISK_MAX_FILTERS];
	unsigned int nr_filters;
	int model_filter; /* where --model's filter is in filters, or -1 */
	unsigned int nbd_timeout; /* seconds; 0: not given (the default) */
	unsigned int connections; /* to an NBD server; 0: not given (one) */
	enum queue_mode queue_mode;
	unsigned int hw_queues;      /* --hw-queues; 0: not given (the CPUs online) */
	unsigned int hw_queue_depth; /* --hw-queue-depth; 0: not given */
	/* --disk: the disks after IMAGE (disk1, disk2, ...); none: IMAGE alone, as ever */
	const char *disks[RQDISK_MAX_DISKS - 1];
	unsigned int nr_disks;
};

enum parse_result { PARSE_OK, PARSE_EXIT_OK, PARSE_ERROR };

enum parse_result rqdisk_parse_options(int argc, char **argv, struct rqdisk_options *o);

#endif
