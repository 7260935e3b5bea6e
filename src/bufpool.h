/* bufpool.h - page-aligned I/O buffers, kept warm for the next request of their size. */
#ifndef RQDISK_BUFPOOL_H
#define RQDISK_BUFPOOL_H

#include <pthread.h>
#include <stddef.h>

#include <bsd/sys/queue.h>

#define BUFPOOL_MIN_SHIFT 12 /* the smallest class: one page */
#define BUFPOOL_MAX_SHIFT 22 /* larger buffers are not kept */
#define BUFPOOL_NR_CLASSES (BUFPOOL_MAX_SHIFT - BUFPOOL_MIN_SHIFT + 1)

struct bufpool_free;

struct bufpool {
	pthread_mutex_t lock;
	size_t kept, max_kept; /* bytes on the free lists, and their bound */
	SLIST_HEAD(, bufpool_free) free[BUFPOOL_NR_CLASSES];
};

void bufpool_init(struct bufpool *p, size_t max_kept);
void bufpool_destroy(struct bufpool *p);
void *bufpool_get(struct bufpool *p, size_t size);
void bufpool_put(struct bufpool *p, void *buf, size_t size);

#endif
