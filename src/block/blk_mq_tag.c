/* SPDX-License-Identifier: BSD-3-Clause */
/* blk_mq_tag.c - tag maps: a fixed number of slots, taken per request and given back at its end. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blk_mq.h"

int blk_mq_init_tags(struct blk_mq_tags *tags, unsigned int nr_tags)
{
	tags->free = calloc(nr_tags ? nr_tags : 1, sizeof(*tags->free));
	if (!tags->free)
		return -ENOMEM;
	pthread_mutex_init(&tags->lock, NULL);
	tags->nr_tags = tags->nr_alloc = nr_tags;
	tags->nr_free = nr_tags;
	/* the lowest tag on top of the stack, as the first sbitmap bit would be */
	for (unsigned int i = 0; i < nr_tags; i++)
		tags->free[i] = nr_tags - 1 - i;
	return 0;
}

void blk_mq_free_tags(struct blk_mq_tags *tags)
{
	if (!tags->free)
		return;
	pthread_mutex_destroy(&tags->lock);
	free(tags->free);
	tags->free = NULL;
}

/*
 * A free tag, or -1: none is free, nr_tags are in use (more after a
 * shrink, until they come back), or shallow_depth (when not 0) are.
 * Never waits: the caller parks the request instead.
 */
int blk_mq_get_tag(struct blk_mq_tags *tags, unsigned int shallow_depth)
{
	int tag = -1;
	unsigned int in_use;

	pthread_mutex_lock(&tags->lock);
	in_use = tags->nr_alloc - tags->nr_free;
	if (tags->nr_free && in_use < tags->nr_tags && (!shallow_depth || in_use < shallow_depth))
		tag = (int)tags->free[--tags->nr_free];
	pthread_mutex_unlock(&tags->lock);
	return tag;
}

void blk_mq_put_tag(struct blk_mq_tags *tags, int tag)
{
	if (tag < 0)
		return;
	pthread_mutex_lock(&tags->lock);
	tags->free[tags->nr_free++] = (unsigned int)tag;
	pthread_mutex_unlock(&tags->lock);
}

/* tags takes with's map and with tags' old one (both all free): an elevator's scheduler tags. */
void blk_mq_tags_swap(struct blk_mq_tags *tags, struct blk_mq_tags *with)
{
	unsigned int *free_tags = tags->free;
	unsigned int nr = tags->nr_tags, nr_alloc = tags->nr_alloc;

	pthread_mutex_lock(&tags->lock);
	tags->free = with->free;
	tags->nr_tags = with->nr_tags;
	tags->nr_alloc = tags->nr_free = with->nr_alloc;
	pthread_mutex_unlock(&tags->lock);
	with->free = free_tags;
	with->nr_tags = nr;
	with->nr_alloc = with->nr_free = nr_alloc;
}

unsigned int blk_mq_tags_in_use(struct blk_mq_tags *tags)
{
	unsigned int n;

	pthread_mutex_lock(&tags->lock);
	n = tags->nr_alloc - tags->nr_free;
	pthread_mutex_unlock(&tags->lock);
	return n;
}

/*
 * From now on at most nr_tags are out at once, as sbitmap_queue_resize()
 * sets a depth: tags out above it stay out until they come back, and a
 * map grows by new numbers (never one that may still be out).  -ENOMEM
 * leaves it as it was.
 */
int blk_mq_resize_tags(struct blk_mq_tags *tags, unsigned int nr_tags)
{
	unsigned int *free_tags, grow;

	pthread_mutex_lock(&tags->lock);
	if (nr_tags > tags->nr_alloc) {
		free_tags = realloc(tags->free, nr_tags * sizeof(*free_tags));
		if (!free_tags) {
			pthread_mutex_unlock(&tags->lock);
			return -ENOMEM;
		}
		/* the new numbers go under the free ones, which are taken first */
		grow = nr_tags - tags->nr_alloc;
		memmove(free_tags + grow, free_tags, tags->nr_free * sizeof(*free_tags));
		for (unsigned int i = 0; i < grow; i++)
			free_tags[i] = nr_tags - 1 - i;
		tags->free = free_tags;
		tags->nr_free += grow;
		tags->nr_alloc = nr_tags;
	}
	tags->nr_tags = nr_tags;
	pthread_mutex_unlock(&tags->lock);
	return 0;
}
