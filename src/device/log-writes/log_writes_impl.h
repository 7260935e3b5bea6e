/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_writes_impl.h - what the log-writes filter's files share: its state,
 * its requests' and its log's blocks, and the calls between the filter's
 * open and close (filter_log_writes.c), its entries (log_writes_entries.c),
 * its I/O (log_writes_io.c), its control-tree files (log_writes_attrs.c),
 * its writer (log_writes_writer.c) and the files it makes
 * (log_writes_files.c).
 */
#ifndef RQDISK_LOG_WRITES_IMPL_H
#define RQDISK_LOG_WRITES_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "device.h"
#include "log_writes.h"

/*
 * Bytes held for a flush, or handed to the writer and not yet written,
 * past which no request is taken.
 */
#ifndef LW_QUEUE_MAX /* a test sets its own */
#define LW_QUEUE_MAX (64u << 20)
#endif

/* One entry of the log, serialized: its entry block, then its data blocks. */
struct lw_block {
	TAILQ_ENTRY(lw_block) link;
	uint64_t off; /* where in the log file: set when it is logged */
	uint64_t seq; /* a write: the number of writes that completed before it */
	size_t len;   /* bytes, whole blocks */
	uint64_t zeros; /* zeros after them in the log: write-zeroes' data, never in memory */
	bool super;     /* the super block: the entries before it are synced first */
	unsigned char data[];
};

TAILQ_HEAD(lw_list, lw_block);

/* What the filter keeps with each request. */
struct lw_rq {
	TAILQ_ENTRY(lw_rq) link; /* a flush, on the list of those in flight */
	uint64_t covers;         /* a flush: the writes completed before it was issued */
	struct lw_block *blk;    /* a write: its entry, filled as its sectors end */
	sector_t start;          /* 512-byte sectors, at submit */
	unsigned int total;      /* sectors at submit */
	unsigned int done;       /* ended below */
	unsigned int good;       /* ended below without error, before any error */
	TAILQ_ENTRY(lw_rq) plink; /* a write on the list of those ended in part */
	bool partial;            /* on it */
	bool logging;            /* logging was on at submit */
	bool unlogged;           /* a write submitted with logging off, not yet ended */
};

TAILQ_HEAD(lw_rq_list, lw_rq);

/* Entry counts by kind, for log/stats. */
struct lw_counts {
	uint64_t writes, fua, discards, zeroes, flushes, marks;
	uint64_t bytes;    /* of the log, super block included */
	uint64_t not_logged; /* parts that failed below, or that found no memory */
};

struct lw_filter {
	struct blk_dev *dev;
	uint64_t lost_seen;   /* the stack's losses below (dev_lost_writes) marked in the log */
	uint64_t lost_marked; /* nr_entries just after the last LOG_WRITES_FLUSH_FAILED_MARK, or 0 */
	char *path, *base; /* absolute */
	int fd, efd;
	unsigned int ss;     /* the log's sectorsize: the disk's logical block size */
	bool enabled;
	bool stopped; /* a write of the log failed, or memory ran out: nothing more is logged */
	int stop_error; /* errno that stopped it here (ENOMEM), 0; the writer's is error */
	struct lw_block *stop_blk; /* the super block that says so, kept for when memory runs out */
	uint64_t nr_entries;
	uint64_t next_off;
	uint64_t completed;  /* writes completed while logging: the next one's seq */
	struct lw_list held; /* completed while a flush was in flight, in order */
	uint64_t held_bytes;
	struct lw_rq_list flushes; /* in flight, oldest first */
	struct lw_rq_list partial; /* writes ended below in part, with no error yet */
	unsigned int unlogged; /* writes submitted with logging off, still below */
	bool owe_enabled;      /* logging is on again: the gap ends when they have ended */
	struct lw_counts n;
	char last_mark[256]; /* what log/mark shows */
	bool made_log, made_base; /* created here: taken away if the start is aborted */
	struct lw_order *order; /* order=: shared with the other disks' filters, or NULL */
	unsigned int disk;      /* this disk's number there (dev_stack.disk) */

	/* Shared with the writer, under lock. */
	pthread_t writer;
	bool writer_running;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct lw_list queue;
	uint64_t queued; /* bytes in queue and being written */
	unsigned int supers; /* super blocks in queue: only the last is written */
	bool starved;    /* can_take said no: wake the loop when below the limit */
	bool quit;
	int error; /* errno of the first failed write, 0 */
};

/* log_writes_entries.c: the log's entries, made and put in order, and its super block. */
struct lw_block *lw_block_new(struct lw_filter *lw, uint64_t sector, uint64_t nr, uint64_t flags,
			      uint64_t data_len, uint64_t nr_blocks);
uint64_t lw_flags(const struct lw_block *b);
uint64_t lw_losses_below(const struct blk_dev *dev);
void lw_out_of_memory(struct lw_filter *lw);
void lw_log_super(struct lw_filter *lw);
void lw_log(struct lw_filter *lw, struct lw_block *b);
int lw_log_mark(struct lw_filter *lw, const char *name);
void lw_log_held_before(struct lw_filter *lw, uint64_t seq);
void lw_log_released(struct lw_filter *lw);
void lw_log_pending(struct lw_filter *lw);

/* log_writes_io.c: what each request logs, and when. */
bool lw_can_take(struct blk_dev *dev);
void lw_submit(struct blk_dev *dev, struct request *rq);
void lw_end(struct blk_dev *dev, struct request *rq, int error, unsigned int nr_sectors);

/* log_writes_attrs.c: the control-tree files, device/log-writes/ and log/. */
int lw_describe(const struct blk_dev *dev, char *buf, size_t len);
extern const struct dev_attr lw_attrs[];

/* log_writes_writer.c: the thread that writes the log, in the order it is handed blocks. */
void lw_say(const struct lw_filter *lw, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lw_super_fill(unsigned char *blk, unsigned int ss, uint64_t nr_entries, uint32_t flags,
		   uint32_t error);
void lw_free_list(struct lw_list *l);
int lw_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
void *lw_writer(void *arg);
void lw_ready(void *arg);
bool lw_emit(struct lw_filter *lw, struct lw_block *b);

/* log_writes_order.c: order=, the entries of several disks' logs in one order (log_order.h). */
struct lw_order;
struct lw_order *lw_order_get(const char *path, unsigned int disk, char *why, size_t whylen);
void lw_order_note(struct lw_order *o, unsigned int disk);
int lw_order_put(struct lw_order *o, bool aborted);
const char *lw_order_path(const struct lw_order *o);

/* log_writes_files.c: the log and base= made new, the image copied into base=. */
bool lw_same_file(const char *path, const char *image);
int lw_copy_image(const char *image, int to, char *why, size_t whylen);
int lw_create(const char *what, const char *path, char **abs, bool *made, char *why,
	      size_t whylen);

#endif
