/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wcache_impl.h - what the write-cache filter's files share: its state and
 * its requests', and the calls between its arguments and open
 * (filter_write_cache.c), its requests' path (wcache_io.c), its writeback
 * (wcache_writeback.c) and its power cut and control-tree files
 * (wcache_power.c).
 */
#ifndef RQDISK_WCACHE_IMPL_H
#define RQDISK_WCACHE_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "device.h"
#include "wcache_map.h"

enum wc_kind {
	WC_RQ_NEW,       /* from above, not yet looked at (the pdu is zeroed at submit) */
	WC_RQ_PENDING,   /* from above, waiting in the FIFO */
	WC_RQ_READ,      /* a read below: the cache's data goes over it at its end */
	WC_RQ_THROUGH,   /* a write the cache does not keep (FUA, discard, zeroes), below */
	WC_RQ_FLUSH,     /* a flush below, after the writebacks it covers */
	WC_RQ_WRITEBACK, /* the cache's own, never passed up */
};

/* What the filter keeps with each request. */
struct wc_rq {
	TAILQ_ENTRY(wc_rq) link; /* the FIFO, or the list of what is below */
	struct request *rq;
	enum wc_kind kind;
	sector_t start, end; /* its range as it came: its position moves as it ends */
	unsigned int left;   /* sectors below not yet ended */
	int error;
	bool superseded;       /* a write through: it carved older dirty data away unwritten */
	bool hit;              /* a read given some of the cache's data */
	struct wc_extent *ext; /* a writeback's */
};

TAILQ_HEAD(wc_rq_list, wc_rq);

enum wc_power { WC_ON, WC_CUTTING, WC_OFF };

struct wc_stats {
	uint64_t written_back, dropped, torn; /* bytes */
	uint64_t read_hits;                   /* reads given data of the cache's */
};

struct wc_filter {
	uint64_t size;      /* bytes */
	uint64_t expire_ns; /* 0: never by age */
	uint64_t seed;
	unsigned int depth;  /* writebacks below at once */
	unsigned int atomic; /* bytes a torn write keeps whole */
	uint64_t rng, cut_rng;
	struct wc_map map;
	struct wc_rq_list fifo;    /* from above, in arrival order */
	struct wc_rq_list reads;   /* below */
	struct wc_rq_list through; /* below */
	unsigned int nr_fifo, nr_wb, nr_flush;
	bool need_room;  /* the FIFO's head waits for writeback to free room */
	bool need_flush; /* the FIFO's head is a flush waiting for writeback */
	int wb_error;    /* a writeback failed: the next flush says so */
	enum wc_power power;
	struct wc_stats stats;
};

/* filter_write_cache.c: the arguments and open */
uint64_t wc_rand(uint64_t *state);
int wc_describe(const struct blk_dev *dev, char *buf, size_t len);

/* wcache_io.c: the requests from above, in the order they came */
bool wc_list_overlaps(const struct wc_rq_list *list, sector_t start, sector_t end);
bool wc_below(const struct wc_filter *wc);
bool wc_can_take(struct blk_dev *dev);
void wc_fifo_remove(struct wc_filter *wc, struct wc_rq *w);
void wc_submit(struct blk_dev *dev, struct request *rq);
void wc_take(struct blk_dev *dev, uint64_t now);
void wc_end_rq(struct blk_dev *dev, struct request *rq, int error, unsigned int nr_sectors);

/* wcache_writeback.c: the dirty data written back, and the timer that looks */
bool wc_may_write(const struct wc_filter *wc, const struct wc_extent *e);
bool wc_start_writeback(struct blk_dev *dev, struct wc_extent *e);
void wc_power_settle(struct wc_filter *wc);
void wc_timer(struct blk_dev *dev, uint64_t now);
void wc_look(struct blk_dev *dev);
void wc_writeback_done(struct blk_dev *dev, struct wc_rq *w);

/* wcache_power.c: power/ (cut, restore, state) and device/write-cache/ */
extern const struct dev_attr wc_attrs[];

#endif
