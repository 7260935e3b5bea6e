/*
 * bufpool.c - I/O buffers by power-of-two class.  A buffer from malloc
 * big enough to be mmapped is unmapped when freed, and the next request's
 * copy into a new one faults in every page again: on a 1 MiB write that
 * cost more than the copy.  Freed buffers wait on their class's list
 * instead, up to a bound, so the resident memory stays that bound plus
 * what is in flight.
 */
#include <stdint.h>
#include <stdlib.h>

#include "bufpool.h"

struct bufpool_free {
	SLIST_ENTRY(bufpool_free) link;
};

static unsigned int bufpool_shift(size_t size)
{
	unsigned int shift = BUFPOOL_MIN_SHIFT;

	while (shift < 64 && ((size_t)1 << shift) < size)
		shift++;
	return shift;
}

void bufpool_init(struct bufpool *p, size_t max_kept)
{
	pthread_mutex_init(&p->lock, NULL);
	p->kept = 0;
	p->max_kept = max_kept;
	for (unsigned int i = 0; i < BUFPOOL_NR_CLASSES; i++)
		SLIST_INIT(&p->free[i]);
}

void bufpool_destroy(struct bufpool *p)
{
	for (unsigned int i = 0; i < BUFPOOL_NR_CLASSES; i++) {
		struct bufpool_free *f;

		while ((f = SLIST_FIRST(&p->free[i]))) {
			SLIST_REMOVE_HEAD(&p->free[i], link);
			free(f);
		}
	}
	p->kept = 0;
	pthread_mutex_destroy(&p->lock);
}

/* A buffer of at least size bytes, page-aligned; NULL when memory is short. */
void *bufpool_get(struct bufpool *p, size_t size)
{
	unsigned int shift = bufpool_shift(size);
	struct bufpool_free *f = NULL;
	void *buf;

	if (shift <= BUFPOOL_MAX_SHIFT) {
		pthread_mutex_lock(&p->lock);
		f = SLIST_FIRST(&p->free[shift - BUFPOOL_MIN_SHIFT]);
		if (f) {
			SLIST_REMOVE_HEAD(&p->free[shift - BUFPOOL_MIN_SHIFT], link);
			p->kept -= (size_t)1 << shift;
		}
		pthread_mutex_unlock(&p->lock);
		if (f)
			return f;
	}
	if (shift >= 64 || posix_memalign(&buf, (size_t)1 << BUFPOOL_MIN_SHIFT, (size_t)1 << shift))
		return NULL;
	return buf;
}

/* Gives back a buffer from bufpool_get with the size asked for then. */
void bufpool_put(struct bufpool *p, void *buf, size_t size)
{
	unsigned int shift = bufpool_shift(size);
	struct bufpool_free *f = buf;

	if (!buf)
		return;
	if (shift <= BUFPOOL_MAX_SHIFT) {
		pthread_mutex_lock(&p->lock);
		if (p->kept + ((size_t)1 << shift) <= p->max_kept) {
			SLIST_INSERT_HEAD(&p->free[shift - BUFPOOL_MIN_SHIFT], f, link);
			p->kept += (size_t)1 << shift;
			f = NULL;
		}
		pthread_mutex_unlock(&p->lock);
	}
	free(f);
}
