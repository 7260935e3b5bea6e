/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_writes_order.c - order=FILE: the log-writes filters of several disks
 * (rqdisk --disk) share one order file (log_order.h), a line per entry
 * saying which disk's log it went to, taken under one lock at the moment
 * the entry takes its place in its log.  Each filter runs on its own
 * disk's thread; the filters that name one FILE share one struct
 * lw_order, found by the file's path in the process's list of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include "log_order.h"
#include "log_writes_impl.h"

/* Lines kept in memory before they go to the file, under the order's lock. */
#define LW_ORDER_BUF 65536

struct lw_order {
	LIST_ENTRY(lw_order) link;
	char *path; /* absolute */
	int fd;
	unsigned int refs;
	unsigned int disks; /* a bit for each disk that logs here */
	bool made;
	bool aborted; /* a disk never served: the file goes with the last reference */
	int error;    /* the first failed write, or 0 */
	uint64_t off; /* where the next lines go */
	pthread_mutex_t lock;
	size_t len;
	char buf[LW_ORDER_BUF];
};

/* Every order file open in the process: one per FILE, whatever disks share it. */
static LIST_HEAD(, lw_order) lw_orders = LIST_HEAD_INITIALIZER(lw_orders);
static pthread_mutex_t lw_orders_lock = PTHREAD_MUTEX_INITIALIZER;

/* Lock held: what is in memory to the file. */
static void lw_order_write(struct lw_order *o)
{
	int ret = o->error || !o->len ? 0 : lw_pwrite_all(o->fd, o->buf, o->len, o->off);

	if (ret)
		o->error = -ret;
	o->off += o->len;
	o->len = 0;
}

static struct lw_order *lw_order_find(const char *path)
{
	char abs[PATH_MAX];
	struct lw_order *o;

	if (!realpath(path, abs))
		return NULL;
	LIST_FOREACH(o, &lw_orders, link)
		if (!strcmp(o->path, abs))
			return o;
	return NULL;
}

/* A new order file, its header written; NULL with why. */
static struct lw_order *lw_order_new(const char *path, char *why, size_t whylen)
{
	struct lw_order *o = calloc(1, sizeof(*o));
	int ret;

	if (!o) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	ret = lw_create("order", path, &o->path, &o->made, why, whylen);
	if (ret < 0) {
		free(o);
		return NULL;
	}
	o->fd = ret;
	pthread_mutex_init(&o->lock, NULL);
	o->len = strlen(LOG_ORDER_HEADER);
	memcpy(o->buf, LOG_ORDER_HEADER, o->len);
	LIST_INSERT_HEAD(&lw_orders, o, link);
	return o;
}

struct lw_order *lw_order_get(const char *path, unsigned int disk, char *why, size_t whylen)
{
	struct lw_order *o;

	if (disk >= LOG_ORDER_MAX_DISKS) {
		snprintf(why, whylen, "log-writes: order=: disk %u is past the %d an order holds",
			 disk, LOG_ORDER_MAX_DISKS);
		return NULL;
	}
	pthread_mutex_lock(&lw_orders_lock);
	o = lw_order_find(path);
	if (o && o->disks & (1u << disk)) {
		snprintf(why, whylen, "log-writes: order=%s: disk %u logs there already", path,
			 disk);
		o = NULL;
	} else if (!o) {
		o = lw_order_new(path, why, whylen);
	}
	if (o) {
		o->refs++;
		o->disks |= 1u << disk;
	}
	pthread_mutex_unlock(&lw_orders_lock);
	return o;
}

void lw_order_note(struct lw_order *o, unsigned int disk)
{
	pthread_mutex_lock(&o->lock);
	if (o->len + 4 > sizeof(o->buf))
		lw_order_write(o);
	o->len += (size_t)snprintf(o->buf + o->len, sizeof(o->buf) - o->len, "%u\n", disk);
	pthread_mutex_unlock(&o->lock);
}

/*
 * A disk's filter closes: the last one writes what is left and syncs, or
 * (a start aborted) takes the file away.  -EIO where the order is not
 * whole on disk.
 */
int lw_order_put(struct lw_order *o, bool aborted)
{
	int ret = 0;

	pthread_mutex_lock(&lw_orders_lock);
	o->aborted |= aborted;
	if (--o->refs) {
		pthread_mutex_unlock(&lw_orders_lock);
		return 0;
	}
	LIST_REMOVE(o, link);
	pthread_mutex_unlock(&lw_orders_lock);
	if (!o->aborted) {
		lw_order_write(o);
		if (!o->error && fsync(o->fd))
			o->error = errno;
		ret = o->error ? -EIO : 0;
	} else if (o->made) {
		unlink(o->path);
	}
	close(o->fd);
	pthread_mutex_destroy(&o->lock);
	free(o->path);
	free(o);
	return ret;
}

const char *lw_order_path(const struct lw_order *o)
{
	return o->path;
}
