/* SPDX-License-Identifier: BSD-3-Clause */
/* bufpool.h - page-aligned I/O buffers from one arena, faulted in and locked at start. */
#ifndef RQDISK_BUFPOOL_H
#define RQDISK_BUFPOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bsd/sys/queue.h>

#define BUFPOOL_PAGE_SHIFT 12 /* the arena's unit: one page */
#define BUFPOOL_MAX_ORDER 9   /* its largest block, 2 MiB: a FUSE input buffer fits */
#define BUFPOOL_BLOCK ((size_t)1 << (BUFPOOL_PAGE_SHIFT + BUFPOOL_MAX_ORDER))

/* bufpool_init() flags */
#define BUFPOOL_NO_FALLBACK (1u << 0) /* an empty arena gives NULL, not malloc'd memory */

struct bufpool_free;

struct bufpool {
	pthread_mutex_t lock;
	char *arena;     /* mapped, faulted in and (if permitted) locked at init */
	size_t size;     /* arena bytes, a multiple of BUFPOOL_BLOCK */
	size_t free;     /* arena bytes not handed out */
	bool locked;     /* mlock succeeded */
	unsigned int flags;
	uint64_t fallbacks;  /* buffers that came from malloc: the arena was short */
	uint8_t *free_order; /* by page: 1 + the order of a free block starting there, or 0 */
	LIST_HEAD(, bufpool_free) free_list[BUFPOOL_MAX_ORDER + 1];
};

/*
 * An arena of size bytes (rounded up to BUFPOOL_BLOCK), faulted in and
 * locked in memory.  0, or -ENOMEM if it cannot be mapped; a refused
 * mlock leaves p->locked false and is not an error.
 */
int bufpool_init(struct bufpool *p, size_t size, unsigned int flags);
void bufpool_destroy(struct bufpool *p);

/*
 * A buffer of at least size bytes, page-aligned: from the arena, else
 * from malloc (counted in p->fallbacks) unless BUFPOOL_NO_FALLBACK.
 * NULL when memory is short.
 */
void *bufpool_get(struct bufpool *p, size_t size);
/* Gives back a buffer from bufpool_get with the size asked for then. */
void bufpool_put(struct bufpool *p, void *buf, size_t size);
/* Whether n buffers of size bytes could be had from the arena now. */
bool bufpool_has(struct bufpool *p, size_t size, unsigned int n);
/* Whether buf lies in the arena. */
bool bufpool_owns(const struct bufpool *p, const void *buf);

/*
 * len bytes of anonymous memory, every page faulted in now and locked if
 * permitted (*locked says whether), so that the kernel's copies into it
 * later never fault or allocate.  NULL if it cannot be mapped.
 */
void *mem_map_locked(size_t len, bool *locked);

#endif
