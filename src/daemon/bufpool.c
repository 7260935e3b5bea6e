/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bufpool.c - I/O buffers from one arena mapped, faulted in and locked at
 * start, handed out by a buddy allocator.  A FUSE request read into a
 * page never touched, or an I/O buffer from malloc, makes the daemon
 * allocate while it serves I/O; if its memory cgroup is at its limit, that
 * allocation may wait on the writeback of a page that only the daemon can
 * write (a loop device on its own disk).  Memory taken once at start and
 * locked is never reclaimed, so the I/O path allocates nothing until the
 * arena runs out.  Blocks are powers of two pages; a buffer takes the
 * pages it needs and gives the rest of its block back at once: a FUSE
 * input buffer of 1 MiB + 8 KiB takes a 2 MiB block, and smaller buffers
 * use the rest.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "bufpool.h"

#define BUFPOOL_PAGE ((size_t)1 << BUFPOOL_PAGE_SHIFT)

struct bufpool_free {
	LIST_ENTRY(bufpool_free) link;
};

void *mem_map_locked(size_t len, bool *locked)
{
	char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (mem == MAP_FAILED)
		return NULL;
	*locked = !mlock(mem, len);
	/* MAP_POPULATE is best effort: touch every page, locked or not */
	for (size_t i = 0; i < len; i += BUFPOOL_PAGE)
		((volatile char *)mem)[i] = 0;
	return mem;
}

static struct bufpool_free *bufpool_block(struct bufpool *p, size_t page)
{
	return (struct bufpool_free *)(p->arena + (page << BUFPOOL_PAGE_SHIFT));
}

static void bufpool_push(struct bufpool *p, size_t page, unsigned int order)
{
	p->free_order[page] = (uint8_t)(order + 1);
	LIST_INSERT_HEAD(&p->free_list[order], bufpool_block(p, page), link);
}

static void bufpool_unlink(struct bufpool *p, size_t page)
{
	p->free_order[page] = 0;
	LIST_REMOVE(bufpool_block(p, page), link);
}

/* Frees the block of 2^order pages at page, joined with its free buddies. */
static void bufpool_free_block(struct bufpool *p, size_t page, unsigned int order)
{
	while (order < BUFPOOL_MAX_ORDER) {
		size_t buddy = page ^ ((size_t)1 << order);

		if (p->free_order[buddy] != order + 1)
			break;
		bufpool_unlink(p, buddy);
		page &= ~((size_t)1 << order);
		order++;
	}
	bufpool_push(p, page, order);
}

/* Frees n pages from page on, as the largest aligned blocks that fit. */
static void bufpool_free_range(struct bufpool *p, size_t page, size_t n)
{
	p->free += n << BUFPOOL_PAGE_SHIFT;
	while (n) {
		unsigned int order = 0;

		while (order < BUFPOOL_MAX_ORDER && !(page & ((size_t)1 << order)) &&
		       ((size_t)2 << order) <= n)
			order++;
		bufpool_free_block(p, page, order);
		page += (size_t)1 << order;
		n -= (size_t)1 << order;
	}
}

/* The first page of a free block of 2^order pages, split off a larger one if need be. */
static bool bufpool_alloc_block(struct bufpool *p, unsigned int order, size_t *page)
{
	unsigned int o = order;
	struct bufpool_free *f;

	while (o <= BUFPOOL_MAX_ORDER && LIST_EMPTY(&p->free_list[o]))
		o++;
	if (o > BUFPOOL_MAX_ORDER)
		return false;
	f = LIST_FIRST(&p->free_list[o]);
	*page = (size_t)((char *)f - p->arena) >> BUFPOOL_PAGE_SHIFT;
	bufpool_unlink(p, *page);
	while (o > order) {
		o--;
		bufpool_push(p, *page + ((size_t)1 << o), o);
	}
	return true;
}

static void *bufpool_take(struct bufpool *p, size_t pages)
{
	unsigned int order = 0;
	size_t page;

	while (((size_t)1 << order) < pages)
		order++;
	if (!bufpool_alloc_block(p, order, &page))
		return NULL;
	p->free -= (size_t)1 << (order + BUFPOOL_PAGE_SHIFT);
	if (pages < (size_t)1 << order) /* the tail of the block goes back */
		bufpool_free_range(p, page + pages, ((size_t)1 << order) - pages);
	return bufpool_block(p, page);
}

int bufpool_init(struct bufpool *p, size_t size, unsigned int flags)
{
	size_t pages;

	*p = (struct bufpool){ .flags = flags };
	pthread_mutex_init(&p->lock, NULL);
	for (unsigned int i = 0; i <= BUFPOOL_MAX_ORDER; i++)
		LIST_INIT(&p->free_list[i]);
	p->size = (size + BUFPOOL_BLOCK - 1) / BUFPOOL_BLOCK * BUFPOOL_BLOCK;
	if (!p->size)
		return 0;
	pages = p->size >> BUFPOOL_PAGE_SHIFT;
	p->free_order = calloc(pages, 1);
	p->arena = mem_map_locked(p->size, &p->locked);
	if (!p->free_order || !p->arena) {
		bufpool_destroy(p);
		return -ENOMEM;
	}
	bufpool_free_range(p, 0, pages);
	return 0;
}

void bufpool_destroy(struct bufpool *p)
{
	if (p->arena)
		munmap(p->arena, p->size);
	free(p->free_order);
	p->arena = NULL;
	p->free_order = NULL;
	p->size = p->free = 0;
	pthread_mutex_destroy(&p->lock);
}

bool bufpool_has(struct bufpool *p, size_t size, unsigned int n)
{
	size_t pages = size ? (size - 1) / BUFPOOL_PAGE + 1 : 1, found = 0;
	unsigned int order = 0;
	struct bufpool_free *f;

	while (((size_t)1 << order) < pages)
		order++;
	if (order > BUFPOOL_MAX_ORDER)
		return !n;
	pthread_mutex_lock(&p->lock);
	for (unsigned int o = BUFPOOL_MAX_ORDER + 1; o-- > order && found < n;) {
		LIST_FOREACH(f, &p->free_list[o], link) {
			found += (size_t)1 << (o - order);
			if (found >= n)
				break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return found >= n;
}

bool bufpool_owns(const struct bufpool *p, const void *buf)
{
	const char *b = buf;

	return p->arena && b >= p->arena && b < p->arena + p->size;
}

static void *bufpool_fallback(struct bufpool *p, size_t pages)
{
	void *buf;

	if ((p->flags & BUFPOOL_NO_FALLBACK) ||
	    posix_memalign(&buf, BUFPOOL_PAGE, pages << BUFPOOL_PAGE_SHIFT))
		return NULL;
	pthread_mutex_lock(&p->lock);
	p->fallbacks++;
	pthread_mutex_unlock(&p->lock);
	return buf;
}

void *bufpool_get(struct bufpool *p, size_t size)
{
	size_t pages = size ? (size - 1) / BUFPOOL_PAGE + 1 : 1;
	void *buf = NULL;

	if (size > SIZE_MAX - BUFPOOL_PAGE)
		return NULL;
	if (pages <= ((size_t)1 << BUFPOOL_MAX_ORDER)) {
		pthread_mutex_lock(&p->lock);
		buf = bufpool_take(p, pages);
		pthread_mutex_unlock(&p->lock);
	}
	return buf ? buf : bufpool_fallback(p, pages);
}

void bufpool_put(struct bufpool *p, void *buf, size_t size)
{
	size_t pages = size ? (size - 1) / BUFPOOL_PAGE + 1 : 1;

	if (!buf)
		return;
	if (!bufpool_owns(p, buf)) {
		free(buf);
		return;
	}
	pthread_mutex_lock(&p->lock);
	bufpool_free_range(p, (size_t)((char *)buf - p->arena) >> BUFPOOL_PAGE_SHIFT, pages);
	pthread_mutex_unlock(&p->lock);
}
