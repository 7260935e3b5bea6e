/* SPDX-License-Identifier: BSD-3-Clause */
/* fault_badblocks.c - the fault filter's sector ranges, its bad sectors and those its rules aim
 * at: sorted disjoint ranges, as null_blk's and dm-dust's lists, and their one parser. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "fault.h"

int fault_bb_copy(struct fault_badblocks *to, const struct fault_badblocks *from)
{
	*to = (struct fault_badblocks){0};
	if (!from->nr)
		return 0;
	to->r = malloc(from->nr * sizeof(*to->r));
	if (!to->r)
		return -ENOMEM;
	memcpy(to->r, from->r, from->nr * sizeof(*to->r));
	to->nr = to->cap = from->nr;
	return 0;
}

void fault_bb_free(struct fault_badblocks *bb)
{
	free(bb->r);
	*bb = (struct fault_badblocks){0};
}

/* Room for one more range. */
static int fault_bb_grow(struct fault_badblocks *bb)
{
	unsigned int cap = bb->cap ? bb->cap * 2 : 16;
	struct fault_bad_range *r;

	if (bb->nr < bb->cap)
		return 0;
	if (bb->nr >= FAULT_MAX_BAD_RANGES)
		return -ENOSPC;
	r = realloc(bb->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	bb->r = r;
	bb->cap = cap;
	return 0;
}

/* The first range that ends at or after sector s (an adjacent one merges). */
static unsigned int fault_bb_find(const struct fault_badblocks *bb, sector_t s)
{
	unsigned int lo = 0, hi = bb->nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (bb->r[mid].end < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int fault_bb_add(struct fault_badblocks *bb, sector_t start, sector_t end)
{
	unsigned int i = fault_bb_find(bb, start), j = i;
	int ret;

	if (start >= end)
		return 0;
	while (j < bb->nr && bb->r[j].start <= end)
		j++;
	if (j > i) { /* merge ranges i..j-1 into i */
		if (bb->r[i].start < start)
			start = bb->r[i].start;
		if (bb->r[j - 1].end > end)
			end = bb->r[j - 1].end;
		memmove(&bb->r[i + 1], &bb->r[j], (bb->nr - j) * sizeof(*bb->r));
		bb->nr -= j - i - 1;
		bb->r[i] = (struct fault_bad_range){start, end};
		return 0;
	}
	ret = fault_bb_grow(bb);
	if (ret)
		return ret;
	memmove(&bb->r[i + 1], &bb->r[i], (bb->nr - i) * sizeof(*bb->r));
	bb->r[i] = (struct fault_bad_range){start, end};
	bb->nr++;
	return 0;
}

int fault_bb_clear(struct fault_badblocks *bb, sector_t start, sector_t end)
{
	unsigned int i = fault_bb_find(bb, start + 1);

	if (start >= end)
		return 0;
	while (i < bb->nr && bb->r[i].start < end) {
		struct fault_bad_range *r = &bb->r[i];

		if (r->start < start && r->end > end) { /* split in two */
			int ret = fault_bb_grow(bb);

			if (ret)
				return ret;
			r = &bb->r[i];
			memmove(r + 1, r, (bb->nr - i) * sizeof(*r));
			bb->nr++;
			r[0].end = start;
			r[1].start = end;
			return 0;
		}
		if (r->start < start) {
			r->end = start;
			i++;
		} else if (r->end > end) {
			r->start = end;
			return 0;
		} else {
			memmove(r, r + 1, (bb->nr - i - 1) * sizeof(*r));
			bb->nr--;
		}
	}
	return 0;
}

unsigned int fault_bb_first(const struct fault_badblocks *bb, sector_t pos, unsigned int n)
{
	unsigned int i = fault_bb_find(bb, pos + 1);

	if (i < bb->nr && bb->r[i].start < pos + n)
		return bb->r[i].start > pos ? (unsigned int)(bb->r[i].start - pos) : 0;
	return n;
}

unsigned int fault_bb_first_clear(const struct fault_badblocks *bb, sector_t pos, unsigned int n)
{
	unsigned int i = fault_bb_find(bb, pos + 1);

	/* ranges are never adjacent: the sector after the one holding pos is in none */
	if (i < bb->nr && bb->r[i].start <= pos)
		return bb->r[i].end - pos < n ? (unsigned int)(bb->r[i].end - pos) : n;
	return 0;
}

static int fault_parse_sector(const char *s, size_t len, sector_t *out)
{
	char num[24];
	uint64_t v;

	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len);
	num[len] = 0;
	if (dev_parse_value(num, 0, UINT64_MAX, &v))
		return -EINVAL;
	*out = v;
	return 0;
}

int fault_parse_range(const char *s, size_t len, sector_t capacity, sector_t *start, sector_t *end)
{
	const char *dash = memchr(s, '-', len);
	sector_t a, b;

	if (fault_parse_sector(s, dash ? (size_t)(dash - s) : len, &a))
		return -EINVAL;
	b = a;
	if (dash && fault_parse_sector(dash + 1, len - (size_t)(dash - s) - 1, &b))
		return -EINVAL;
	if (b < a || b >= capacity)
		return -EINVAL;
	*start = a;
	*end = b + 1;
	return 0;
}

int fault_bb_parse(struct fault_badblocks *bb, const char *v, size_t len, sector_t capacity)
{
	while (len) {
		size_t n = 0;
		sector_t s, e;
		int ret;

		while (n < len && v[n] != '/')
			n++;
		if (fault_parse_range(v, n, capacity, &s, &e))
			return -EINVAL;
		ret = fault_bb_add(bb, s, e);
		if (ret)
			return ret;
		v += n;
		len -= n;
		if (len && !--len)
			return -EINVAL; /* a '/' at the end */
		v += !!n;
	}
	return 0;
}

/* The whole of a regular file no larger than max, NUL-terminated; its length or -errno. */
static ssize_t fault_slurp(const char *path, size_t max, char **out)
{
	/* O_NONBLOCK: a FIFO or a device opens without waiting, and is then refused */
	int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	ssize_t got = 0, n;
	struct stat st;
	char *buf = NULL;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		got = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		got = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
		goto out;
	}
	buf = malloc(max + 1);
	if (!buf) {
		got = -ENOMEM;
		goto out;
	}
	/* to what it holds now, whatever its size said: one byte more than max is too big */
	while ((size_t)got <= max && (n = read(fd, buf + got, max + 1 - (size_t)got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			got = -errno;
			goto out;
		}
		got += n;
	}
	if ((size_t)got > max) {
		got = -EFBIG;
		goto out;
	}
	buf[got] = 0;
	*out = buf;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return got;
}

/* One line, its blanks around it trimmed: nothing, a comment, or ranges. */
static int fault_bb_parse_line(struct fault_badblocks *bb, const char *s, size_t len,
			       sector_t capacity)
{
	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	if (!len || *s == '#')
		return 0;
	return fault_bb_parse(bb, s, len, capacity);
}

int fault_bb_read_file(struct fault_badblocks *bb, const char *path, sector_t capacity, char *why,
		       size_t whylen)
{
	struct fault_badblocks got = {0};
	unsigned int line = 0;
	char *text = NULL;
	ssize_t len = fault_slurp(path, FAULT_MAX_SECTORS_FILE, &text);
	int ret = 0;

	if (len < 0) {
		snprintf(why, whylen, "fault: sectors_file %s: %s", path,
			 len == -EFBIG	  ? "larger than 4 MiB"
			 : len == -EINVAL ? "not a regular file"
					  : strerror((int)-len));
		return (int)len == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	for (const char *s = text, *nl; !ret && s < text + len; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(text + len - s));
		if (!nl)
			nl = text + len;
		line++;
		if (memchr(s, 0, (size_t)(nl - s)))
			ret = -EINVAL;
		else
			ret = fault_bb_parse_line(&got, s, (size_t)(nl - s), capacity);
	}
	if (ret)
		snprintf(why, whylen, "fault: sectors_file %s line %u: %s", path, line,
			 ret == -ENOSPC	  ? "more than 65536 ranges"
			 : ret == -ENOMEM ? "out of memory"
					  : "must be START-END sector ranges inside the disk, "
					    "joined by /");
	else if (!got.nr) /* aimed at nothing would be aimed at everything */
		snprintf(why, whylen, "fault: sectors_file %s holds no range", path), ret = -EINVAL;
	free(text);
	if (ret) {
		fault_bb_free(&got);
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	fault_bb_free(bb);
	*bb = got;
	return 0;
}

int fault_bb_command(struct fault_badblocks *bb, const char *cmd, sector_t capacity)
{
	sector_t start, end;

	if (!strcmp(cmd, "clear")) {
		fault_bb_free(bb);
		return 0;
	}
	if ((cmd[0] != '+' && cmd[0] != '-') ||
	    fault_parse_range(cmd + 1, strlen(cmd + 1), capacity, &start, &end))
		return -EINVAL;
	/* clearing may split a range, and a full list then has no room: nothing changes */
	return cmd[0] == '+' ? fault_bb_add(bb, start, end) : fault_bb_clear(bb, start, end);
}

int fault_bb_show(const struct fault_badblocks *bb, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = 0;
	for (unsigned int i = 0; i < bb->nr; i++) {
		char line[48];
		int n =
		    snprintf(line, sizeof(line), "%llu-%llu\n", (unsigned long long)bb->r[i].start,
			     (unsigned long long)(bb->r[i].end - 1));

		if (used + (size_t)n >= len)
			break; /* the rest does not fit the file */
		memcpy(buf + used, line, (size_t)n + 1);
		used += (size_t)n;
	}
	return (int)used;
}
