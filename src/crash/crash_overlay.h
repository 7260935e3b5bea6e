/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_overlay.h - one crash state as an image: BASE, under an extent map of
 * pointers into the log (the state's entries, none copied), under a
 * private copy-on-write map that takes a checker's writes and dies with
 * the state.
 */
#ifndef RQDISK_CRASH_OVERLAY_H
#define RQDISK_CRASH_OVERLAY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <bsd/sys/tree.h>

#include "crash_state.h"

#define OVL_COW_BLOCK 4096u

/* Bytes [start, end) of the state are src's, or zeros when src is NULL (a discard). */
struct ovl_extent {
	RB_ENTRY(ovl_extent) node;
	uint64_t start, end;
	const uint8_t *src;
};
RB_HEAD(ovl_extents, ovl_extent);

/* One block a checker wrote; data NULL is a block of zeros. */
struct ovl_cow {
	RB_ENTRY(ovl_cow) node;
	uint64_t blk;
	uint8_t *data;
};
RB_HEAD(ovl_cows, ovl_cow);

/*
 * The entries before a flush, applied: no state drops or tears them, so
 * every state after that flush shares one, built once (refcounted: a
 * state's last reader may be a FUSE thread).
 */
struct ovl_layer {
	struct ovl_extents extents;
	size_t nr_extents;
	size_t upto; /* entries [0, upto) */
	_Atomic int refs;
};

struct ovl {
	int base_fd;
	uint64_t size;
	struct ovl_layer *durable; /* under the state's own extents, or NULL */
	struct ovl_extents extents;
	size_t nr_extents;
	pthread_rwlock_t lock; /* the COW map: reads share it, writes hold it alone */
	struct ovl_cows cows;
	size_t nr_cows;
	/* what the COW map's blocks and nodes come from: calloc; a test sets one that fails */
	void *(*cow_calloc)(size_t nmemb, size_t size);
};

/*
 * The state spec names in log over BASE (base_fd, size bytes): 0 or -ENOMEM.
 * durable (or NULL) holds entries [0, durable->upto) applied, no more than
 * the state's point has before its last flush; the state takes a reference.
 */
int ovl_build(struct ovl *o, const struct crash_log *log, const struct crash_spec *spec,
	      int base_fd, uint64_t size, struct ovl_layer *durable);

/*
 * The shared layer for a state at pos: *cur is advanced (a new layer, the
 * old one's reference dropped) when pos's last flush is past it; states
 * taken in log order copy it once per flush.  0 or -ENOMEM (*cur kept).
 */
int ovl_layer_advance(struct ovl_layer **cur, const struct crash_log *log, size_t pos);
void ovl_layer_put(struct ovl_layer *l);
void ovl_free(struct ovl *o);

/* Bytes of the state, clipped at its end: the count read, or -errno. */
ssize_t ovl_read(struct ovl *o, void *buf, size_t len, uint64_t off);
/* A checker's write, or zeros (buf NULL), into the state's own COW map: len or -errno. */
ssize_t ovl_write(struct ovl *o, const void *buf, size_t len, uint64_t off);

/* The state as a whole image in fd (truncated to size): BASE copied (a reflink where the
 * file system can), then the extents written.  0 or -errno. */
int ovl_write_image(struct ovl *o, int fd);

#endif
