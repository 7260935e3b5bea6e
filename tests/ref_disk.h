/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ref_disk.h - a reference model of a disk with a volatile write cache,
 * small, slow and independent of the code it checks (libc only): fed the
 * operations as the disk's user sees them, it says which images the disk
 * may hold at a crash point.
 *
 * The disk is size bytes in 512-byte sectors, first all zeros.  A write
 * (a discard and a write-zeroes are writes of zeros) becomes a version of
 * the sectors it covers when it is acknowledged; versions overlap in the
 * order they were acknowledged.  Each version is in one of three states:
 *
 *   volatile  acknowledged, in the cache: at a crash it may be present or
 *             absent, each atomic unit of it on its own
 *   durable   covered by a flush that completed, or a FUA write: present
 *             (unless a later version of the same sectors is)
 *   maybe     it may or may not have reached the medium, each unit on its
 *             own, and no flush will ever make it durable: the part of a
 *             write that ended in an error, a write still in flight at
 *             the crash point, the volatile versions a power cut (or an
 *             NBD drop) lost or kept, and what a flush that failed covered
 *
 * A flush covers the versions acknowledged before it was submitted and,
 * with barrier (the request queue's ordering: everything submitted before
 * a flush is done before it starts), the ones submitted before it.  An
 * error acknowledges only the good prefix the request reports (bi_good);
 * the rest is maybe: old, new, or per unit either, never torn inside a
 * unit.  The atomic unit (a multiple of 512, at most 32 KiB, aligned on
 * the disk) is never torn: a state in which one unit holds part of a
 * version and not the rest is not allowed.
 *
 * At a point the images allowed are, unit by unit, every result of
 * applying in order some subset of that unit's versions that holds every
 * durable one.  rd_allowed answers for one image.  rd_enumerate gives the
 * coarser set a log-based tool can build: whole writes dropped, at most
 * max_drop of the volatile ones, the maybe ones absent.
 */
#ifndef RQDISK_REF_DISK_H
#define RQDISK_REF_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rd_state { RD_VOLATILE, RD_DURABLE, RD_MAYBE };

/* One version: bytes [off, off + len), data NULL for zeros. */
struct rd_version {
	uint64_t off, len;
	uint8_t *data;
	enum rd_state state;
	uint64_t submitted, acked; /* the model's clock when each happened */
};

/* A write or a flush submitted and not yet acknowledged. */
struct rd_pending {
	uint64_t id;
	uint64_t off, len;
	uint8_t *data;
	bool fua, flush;
	uint64_t submitted;
};

/* The versions as they were at a crash point. */
struct rd_point {
	struct rd_version *v; /* data shared with the model's versions */
	size_t nr;
};

struct ref_disk {
	uint64_t size;
	uint32_t unit; /* atomic unit, bytes */
	bool barrier;
	uint64_t clock, next_id;
	struct rd_version *v; /* acknowledged, in order */
	size_t nr_v;
	struct rd_pending *p;
	size_t nr_p;
	struct rd_point *pt;
	size_t nr_pt;
	uint8_t **owned; /* every data buffer, freed at the end */
	size_t nr_owned;
};

/* A disk of size bytes (a multiple of unit), zeros, atomic unit unit bytes. 0 or -ENOMEM. */
int rd_init(struct ref_disk *m, uint64_t size, uint32_t unit, bool barrier);
void rd_free(struct ref_disk *m);

/* A write (data NULL: zeros) or a flush (rd_submit_flush) submitted: its id. */
uint64_t rd_submit_write(struct ref_disk *m, uint64_t off, uint64_t len, const void *data,
			 bool fua);
uint64_t rd_submit_flush(struct ref_disk *m);
/*
 * The request id was acknowledged: its first good bytes done, the rest
 * (error) maybe.  A flush: error, or what it covers made durable.
 */
void rd_ack(struct ref_disk *m, uint64_t id, uint64_t good, int error);
/* The power went: every volatile version is maybe from now on. */
void rd_power_cut(struct ref_disk *m);
/* A crash point here: its index, or -1 when out of memory. */
long rd_point(struct ref_disk *m);

/*
 * Whether img (size bytes) is a state the disk may hold at point pt; if
 * not, why says which unit and what it holds, in one line.
 */
bool rd_allowed(const struct ref_disk *m, size_t pt, const uint8_t *img, char *why,
		size_t whylen);

/*
 * Each image of point pt with at most max_drop whole volatile versions
 * dropped (every subset of that size), the maybe ones absent, into fn
 * until it returns non-zero (what this returns).  The first is the one
 * with nothing dropped: the image a replay of everything gives.
 */
int rd_enumerate(const struct ref_disk *m, size_t pt, unsigned int max_drop,
		 int (*fn)(void *arg, const uint8_t *img), void *arg);

#endif
