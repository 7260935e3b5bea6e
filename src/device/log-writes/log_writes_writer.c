/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_writes_writer.c - the log-writes filter's writer: a thread of its
 * own, since the host's loop must not sleep, that writes the log's blocks
 * in the order the filter hands them over; before it writes a super block
 * it syncs the entries that block counts.  When it has caught up with a
 * filter that said no to requests, it wakes the host's loop through an
 * eventfd.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "log_writes_impl.h"

/*
 * One line on stderr; in syslog too when the host runs detached (its
 * stderr goes nowhere then): a log that stops must be seen somewhere.
 */
void lw_say(const struct lw_filter *lw, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("rqdisk: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (!lw->dev->stack->syslog)
		return;
	va_start(ap, fmt);
	vsyslog(LOG_DAEMON | LOG_ERR, fmt, ap);
	va_end(ap);
}

/* Block 0: the super block counting nr_entries, and rqdisk's record (log_writes.h). */
void lw_super_fill(unsigned char *blk, unsigned int ss, uint64_t nr_entries, uint32_t flags,
		   uint32_t error)
{
	memset(blk, 0, ss);
	log_write_super_encode(blk, &(struct log_write_super){ .magic = LOG_WRITES_MAGIC,
							      .version = LOG_WRITES_VERSION,
							      .nr_entries = nr_entries,
							      .sectorsize = ss });
	log_write_super_rqdisk_encode(blk, &(struct log_write_super_rqdisk){ .flags = flags,
									    .error = error });
}

void lw_free_list(struct lw_list *l)
{
	struct lw_block *b;

	while ((b = TAILQ_FIRST(l))) {
		TAILQ_REMOVE(l, b, link);
		free(b);
	}
}

int lw_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOSPC;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * bytes of zeros at off: a regular file is only made long enough (a hole
 * reads zeros), a block device is written.
 */
static int lw_write_zeros(int fd, uint64_t off, uint64_t bytes)
{
	static const unsigned char zero[64 * 1024];
	struct stat st;
	int ret = 0;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size < off + bytes && ftruncate(fd, (off_t)(off + bytes)))
			return -errno;
		return 0;
	}
	while (bytes && !ret) {
		size_t n = bytes < sizeof(zero) ? (size_t)bytes : sizeof(zero);

		ret = lw_pwrite_all(fd, zero, n, off);
		off += n;
		bytes -= n;
	}
	return ret;
}

/*
 * One block of the log.  A super block counts entries written before it:
 * they are synced first (*dirty: some are not yet), so that the log on
 * disk never counts an entry it does not hold, whatever the page cache
 * writes back first.
 */
static int lw_write_out(int fd, const struct lw_block *b, bool *dirty)
{
	int ret;

	if (b->super && *dirty) {
		if (fdatasync(fd))
			return -errno;
		*dirty = false;
	}
	ret = lw_pwrite_all(fd, b->data, b->len, b->off);
	if (!ret && b->zeros)
		ret = lw_write_zeros(fd, b->off + b->len, b->zeros);
	if (!b->super)
		*dirty = true;
	return ret;
}

/*
 * The log stopped at a write that failed: block 0 says so once more, and
 * why, counting the entries written whole when a sync still covers them
 * (a full file system takes a sync and a rewrite of block 0), else those
 * the last super block written counted.  As far as it can: the log may
 * be past writing at all.
 */
static void lw_write_stop(struct lw_filter *lw, uint64_t written, uint64_t counted, int error)
{
	unsigned char *blk = malloc(lw->ss);

	if (!blk)
		return;
	lw_super_fill(blk, lw->ss, fdatasync(lw->fd) ? counted : written,
		      LOG_RQDISK_ENDS | LOG_RQDISK_STOPPED, (uint32_t)error);
	if (!lw_pwrite_all(lw->fd, blk, lw->ss, 0) && fdatasync(lw->fd)) {
		/* nothing more to do: the log's end says it all the same */
	}
	free(blk);
}

/*
 * The writer's thread: write what it is handed, in order; the first error
 * stops the log.  A super block with a later one queued is skipped: the
 * later one counts more, and costs one sync for both.
 */
void *lw_writer(void *arg)
{
	struct lw_filter *lw = arg;
	struct lw_block *b;
	uint64_t one = 1, written = 0, counted = 0;
	bool dirty = false;

	pthread_mutex_lock(&lw->lock);
	for (;;) {
		bool wake = false, skip;
		int ret = 0;

		while (!(b = TAILQ_FIRST(&lw->queue)) && !lw->quit)
			pthread_cond_wait(&lw->wake, &lw->lock);
		if (!b)
			break;
		TAILQ_REMOVE(&lw->queue, b, link);
		skip = b->super && --lw->supers;
		if (!lw->error && !skip) {
			pthread_mutex_unlock(&lw->lock);
			ret = lw_write_out(lw->fd, b, &dirty);
			pthread_mutex_lock(&lw->lock);
		}
		if (!ret && !lw->error && !skip && b->super) {
			struct log_write_super sb;

			log_write_super_decode(b->data, &sb);
			counted = sb.nr_entries;
		} else if (!ret && !lw->error && !skip) {
			written++;
		}
		if (ret && !lw->error) {
			lw->error = -ret;
			pthread_mutex_unlock(&lw->lock);
			lw_say(lw, "log-writes: writing %s: %s; logging stops (%llu entries written)",
			       lw->path, strerror(-ret), (unsigned long long)written);
			lw_write_stop(lw, written, counted, -ret);
			pthread_mutex_lock(&lw->lock);
		}
		lw->queued -= b->len;
		if (lw->starved && lw->queued <= LW_QUEUE_MAX) {
			lw->starved = false;
			wake = true;
		}
		pthread_mutex_unlock(&lw->lock);
		free(b);
		if (wake && write(lw->efd, &one, sizeof(one)) < 0) {
			/* EAGAIN: the counter is full, the loop wakes all the same */
		}
		pthread_mutex_lock(&lw->lock);
	}
	pthread_mutex_unlock(&lw->lock);
	return NULL;
}

/* The loop's side of the eventfd: empty it; the host runs the queue after this. */
void lw_ready(void *arg)
{
	struct lw_filter *lw = arg;
	uint64_t v;

	if (read(lw->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: read already */
	}
}

/* Hand b to the writer at the end of the log; false if logging has stopped. */
bool lw_emit(struct lw_filter *lw, struct lw_block *b)
{
	pthread_mutex_lock(&lw->lock);
	if (lw->error)
		lw->stopped = true;
	if (lw->stopped) {
		pthread_mutex_unlock(&lw->lock);
		free(b);
		return false;
	}
	b->off = lw->next_off;
	lw->next_off += b->len + b->zeros;
	lw->n.bytes += b->len + b->zeros;
	TAILQ_INSERT_TAIL(&lw->queue, b, link);
	lw->queued += b->len;
	pthread_cond_signal(&lw->wake);
	pthread_mutex_unlock(&lw->lock);
	return true;
}
