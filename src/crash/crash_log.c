/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_log.c - reads a dm-log-writes log: every field checked, since anyone may hand us the file. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash_guard.h"
#include "crash_log.h"

#define SECTORSIZE_MIN 512u
#define SECTORSIZE_MAX 65536u

int crash_refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int log_super(struct crash_log *log, uint64_t *nr_entries, char *why, size_t whylen)
{
	struct log_write_super sb;
	uint32_t ss;

	if (log->map_len < sizeof(struct log_write_super))
		return crash_refuse(why, whylen, "%zu bytes, too short for a log superblock",
				 log->map_len);
	log_write_super_decode(log->map, &sb);
	if (sb.magic != LOG_WRITES_MAGIC)
		return crash_refuse(why, whylen, "not a dm-log-writes log (bad magic)");
	if (sb.version != LOG_WRITES_VERSION)
		return crash_refuse(why, whylen, "log version %llu, only %llu is known",
				 (unsigned long long)sb.version, LOG_WRITES_VERSION);
	ss = sb.sectorsize;
	if (ss < SECTORSIZE_MIN || ss > SECTORSIZE_MAX || (ss & (ss - 1)))
		return crash_refuse(why, whylen, "sectorsize %u is not a power of two from %u to %u",
				 ss, SECTORSIZE_MIN, SECTORSIZE_MAX);
	if (log->map_len < ss)
		return crash_refuse(why, whylen, "%zu bytes, shorter than its superblock's sector of %u",
				 log->map_len, ss);
	log->sectorsize = ss;
	*nr_entries = sb.nr_entries;
	return 0;
}

/* The flag combinations dm-log-writes can write; anything else is a damaged log. */
static const char *bad_flags(uint64_t flags, uint64_t nr_sectors, uint64_t data_len,
			     uint32_t ss)
{
	if (flags & ~(uint64_t)LOG_KNOWN_FLAGS)
		return "unknown flags";
	if (flags & LOG_MARK_FLAG) {
		if (flags & ~(uint64_t)(LOG_MARK_FLAG | LOG_METADATA_FLAG))
			return "a mark with other flags";
		if (nr_sectors)
			return "a mark with sectors";
		if (data_len > ss - sizeof(struct log_write_entry))
			return "a mark longer than its block";
		return NULL;
	}
	if ((flags & LOG_DISCARD_FLAG) && (flags & LOG_FUA_FLAG))
		return "a FUA discard";
	if (!nr_sectors && !(flags & LOG_FLUSH_FLAG))
		return "no sectors and no flush";
	return NULL;
}

/* Reads entry i at *pos; moves *pos past it and its data. */
static int log_entry(struct crash_log *log, size_t i, uint64_t *pos, char *why, size_t whylen)
{
	struct crash_entry *e = &log->e[i];
	const uint8_t *p = log->map + *pos;
	uint64_t ss = log->sectorsize, sector, nr_sectors, data_len, bytes;
	struct log_write_entry le;
	const char *bad;

	if (log->map_len - *pos < ss)
		return crash_refuse(why, whylen, "entry %zu: the log ends before it (nr_entries says %zu)",
				 i, log->nr);
	log_write_entry_decode(p, &le);
	sector = le.sector;
	nr_sectors = le.nr_sectors;
	e->flags = le.flags;
	data_len = le.data_len;
	bad = bad_flags(e->flags, nr_sectors, data_len, log->sectorsize);
	if (bad)
		return crash_refuse(why, whylen, "entry %zu: %s (flags 0x%llx)", i, bad,
				 (unsigned long long)e->flags);
	*pos += ss;
	if (e->flags & LOG_MARK_FLAG) {
		e->mark = (const char *)p + sizeof(struct log_write_entry);
		e->mark_len = data_len;
		if (memchr(e->mark, '\0', e->mark_len))
			return crash_refuse(why, whylen, "entry %zu: a mark name holding a NUL", i);
		return 0;
	}
	if (nr_sectors > log->image_size / ss || sector > log->image_size / ss - nr_sectors)
		return crash_refuse(why, whylen,
				 "entry %zu: sectors %llu+%llu end past the image's %llu bytes", i,
				 (unsigned long long)sector, (unsigned long long)nr_sectors,
				 (unsigned long long)log->image_size);
	e->off = sector * ss;
	e->len = bytes = nr_sectors * ss;
	if (e->flags & LOG_DISCARD_FLAG || !bytes)
		return 0;
	if (bytes > log->map_len - *pos)
		return crash_refuse(why, whylen, "entry %zu: its %llu bytes of data end past the log", i,
				 (unsigned long long)bytes);
	e->data = log->map + *pos;
	*pos += bytes;
	return 0;
}

static int push(size_t **v, size_t *nr, size_t x)
{
	size_t *n;

	if (!(*nr & (*nr - 1)) || !*nr) {
		n = realloc(*v, (*nr ? 2 * *nr : 16) * sizeof(**v));
		if (!n)
			return -ENOMEM;
		*v = n;
	}
	(*v)[(*nr)++] = x;
	return 0;
}

static bool mark_is(const struct crash_entry *e, const char *name)
{
	return (e->flags & LOG_MARK_FLAG) && e->mark_len == strlen(name) &&
	       !memcmp(e->mark, name, e->mark_len);
}

/*
 * The first gap: where logging was first turned off, and on again (nr when
 * it never was); on with no off before it, off from the start; or a flush
 * that failed, after which the log holds writes the disk may have lost.
 */
static void log_find_gap(struct crash_log *log)
{
	log->gap_kind = GAP_NONE;
	log->gap_off = -1;
	log->gap_on = log->nr;
	for (size_t i = 0; i < log->nr_marks; i++) {
		const struct crash_entry *e = &log->e[log->marks[i]];

		if (log->gap_kind == GAP_NONE && mark_is(e, LOG_WRITES_GAP_MARK)) {
			log->gap_kind = GAP_OFF;
			log->gap_off = (long)log->marks[i];
		} else if (log->gap_kind == GAP_NONE && mark_is(e, LOG_WRITES_FLUSH_FAILED_MARK)) {
			log->gap_kind = GAP_FLUSH_FAILED;
			log->gap_off = (long)log->marks[i];
			return;
		} else if (mark_is(e, LOG_WRITES_GAP_END_MARK)) {
			if (log->gap_kind == GAP_NONE)
				log->gap_kind = GAP_FROM_START;
			log->gap_on = log->marks[i];
			return;
		}
	}
}

void crash_log_gap_text(const struct crash_log *log, char *buf, size_t len)
{
	if (log->gap_kind == GAP_FLUSH_FAILED)
		snprintf(buf, len, "a flush failed at entry %ld", log->gap_off);
	else if (log->gap_kind == GAP_FROM_START)
		snprintf(buf, len, "logging was off from the start to entry %zu", log->gap_on);
	else if (log->gap_on < log->nr)
		snprintf(buf, len, "logging was off from entry %ld to %zu", log->gap_off,
			 log->gap_on);
	else
		snprintf(buf, len, "logging was off from entry %ld to the end", log->gap_off);
}

const char *crash_log_gap_loss(const struct crash_log *log)
{
	return log->gap_kind == GAP_FLUSH_FAILED ? "writes before it may be lost" :
						   "writes missing";
}

void crash_log_cut_text(const struct crash_log *log, char *buf, size_t len)
{
	char after[48];

	if (log->nr)
		snprintf(after, sizeof(after), "after entry %zu", log->nr - 1);
	else
		snprintf(after, sizeof(after), "before its first entry");
	if (log->rq_flags & LOG_RQDISK_STOPPED)
		snprintf(buf, len, "logging stopped %s: %s", after,
			 log->rq_error ? strerror((int)log->rq_error) : "no reason given");
	else
		snprintf(buf, len, "the log ends %s without its end mark (its writer was killed, "
			 "or stopped logging)", after);
}

/* rqdisk's record in block 0, and whether the log ends as a whole one does. */
static void log_find_end(struct crash_log *log)
{
	struct log_write_super_rqdisk rec;

	log->rqdisk = log_write_super_rqdisk_decode(log->map, &rec);
	log->rq_flags = log->rqdisk ? rec.flags : 0;
	log->rq_error = log->rqdisk ? rec.error : 0;
	log->ended = log->nr && mark_is(&log->e[log->nr - 1], LOG_WRITES_END_MARK);
}

static int log_index(struct crash_log *log)
{
	for (size_t i = 0; i < log->nr; i++) {
		uint64_t f = log->e[i].flags;

		if (((f & LOG_FLUSH_FLAG) && push(&log->flushes, &log->nr_flushes, i)) ||
		    ((f & LOG_FUA_FLAG) && push(&log->fuas, &log->nr_fuas, i)) ||
		    ((f & LOG_MARK_FLAG) && push(&log->marks, &log->nr_marks, i)))
			return -ENOMEM;
	}
	log_find_gap(log);
	log_find_end(log);
	return crash_marks_index(&log->names, log);
}

int crash_log_parse(const uint8_t *buf, size_t len, uint64_t image_size, struct crash_log *log,
		    char *why, size_t whylen)
{
	uint64_t nr_entries = 0, pos, cap;
	int ret;

	memset(log, 0, sizeof(*log));
	log->map = buf;
	log->map_len = len;
	log->image_size = image_size;
	ret = log_super(log, &nr_entries, why, whylen);
	if (ret)
		return ret;
	/*
	 * Every entry takes a block at least: a count past what the file can
	 * hold is not allocated, and the loop below stops at the entry the
	 * file ends before.
	 */
	cap = len / log->sectorsize - 1;
	log->e = calloc(nr_entries < cap ? nr_entries + 1 : cap + 1, sizeof(*log->e));
	if (!log->e)
		return -ENOMEM;
	log->nr = nr_entries;
	pos = log->sectorsize;
	for (size_t i = 0; i < log->nr && !ret; i++)
		ret = log_entry(log, i, &pos, why, whylen);
	if (!ret && log_index(log))
		ret = -ENOMEM;
	if (ret == -ENOMEM)
		snprintf(why, whylen, "out of memory");
	if (ret)
		crash_log_free(log);
	return ret;
}

#define TRUNCATED "the log was truncated while it was read"

/* The file fd, mapped for len bytes, is shorter now, or a read of the map faulted. */
static bool truncated(int fd, size_t len)
{
	struct stat st;

	return crash_guard_tripped() || (!fstat(fd, &st) && (uint64_t)st.st_size < len);
}

int crash_log_open(const char *path, uint64_t image_size, struct crash_log *log, char *why,
		   size_t whylen)
{
	struct stat st;
	void *map;
	char sub[256];
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s: not a regular file", path);
		ret = -EINVAL;
		goto out;
	}
	if (!st.st_size) {
		snprintf(why, whylen, "%s: empty, not a log", path);
		ret = -EINVAL;
		goto out;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		snprintf(why, whylen, "%s: mmap: %s", path, strerror(errno));
		goto out;
	}
	ret = crash_guard_watch(map, (size_t)st.st_size);
	if (!ret)
		ret = crash_log_parse(map, (size_t)st.st_size, image_size, log, sub, sizeof(sub));
	if (ret && truncated(fd, (size_t)st.st_size)) {
		/* what the zeros it read look like is not the news */
		snprintf(why, whylen, "%s: " TRUNCATED, path);
		ret = -EIO;
	} else if (ret == -EINVAL || ret == -ENOMEM) {
		snprintf(why, whylen, "%s: %s", path, sub);
	} else if (ret) {
		snprintf(why, whylen, "%s: %s", path, strerror(-ret));
	}
	if (ret) {
		crash_guard_unwatch();
		munmap(map, (size_t)st.st_size);
	} else {
		log->mapped = true;
		log->fd = fd;
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

int crash_log_intact(const struct crash_log *log, const char *path, char *why, size_t whylen)
{
	if (!log->mapped || !truncated(log->fd, log->map_len))
		return 0;
	snprintf(why, whylen, "%s: " TRUNCATED, path);
	return -EIO;
}

void crash_log_free(struct crash_log *log)
{
	if (log->mapped) {
		crash_guard_unwatch();
		munmap((void *)(uintptr_t)log->map, log->map_len);
		close(log->fd);
	}
	free(log->e);
	free(log->flushes);
	free(log->fuas);
	free(log->marks);
	crash_marks_free(&log->names);
	memset(log, 0, sizeof(*log));
}

long crash_log_last_flush(const struct crash_log *log, size_t pos)
{
	size_t lo = 0, hi = log->nr_flushes;

	/* the number of flushes before pos, by bisection */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (log->flushes[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (long)log->flushes[lo - 1] : -1;
}
