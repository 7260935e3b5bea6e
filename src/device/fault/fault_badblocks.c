/* SPDX-License-Identifier: BSD-3-Clause */
/* fault_badblocks.c - the fault filter's sector ranges, its bad sectors and those its rules aim
 * at: sets of sector_ranges.h no larger than FAULT_MAX_BAD_RANGES and inside the disk, as they
 * are read from its keys, files and fault/badblocks, and looked up on its I/O path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "fault.h"

unsigned int fault_bb_first(const struct sector_ranges *bb, sector_t pos, unsigned int n)
{
	const struct sector_range *r = sector_ranges_next(bb, pos);

	if (r && r->start < pos + n)
		return r->start > pos ? (unsigned int)(r->start - pos) : 0;
	return n;
}

unsigned int fault_bb_first_clear(const struct sector_ranges *bb, sector_t pos, unsigned int n)
{
	const struct sector_range *r = sector_ranges_next(bb, pos);

	/* ranges are never adjacent: the sector after the one holding pos is in none */
	if (r && r->start <= pos)
		return r->end - pos < n ? (unsigned int)(r->end - pos) : n;
	return 0;
}

int fault_bb_parse(struct sector_ranges *bb, const char *v, size_t len, sector_t capacity)
{
	struct sector_ranges got = {0};
	int ret = sector_ranges_parse(&got, v, len, NULL, 0);

	/* sorted: the last range ends last, and none may pass the disk's end */
	if (!ret && got.nr && got.r[got.nr - 1].end > capacity)
		ret = -EINVAL;
	for (size_t i = 0; !ret && i < got.nr; i++)
		ret = sector_ranges_add(bb, got.r[i].start, got.r[i].end);
	sector_ranges_free(&got);
	return ret;
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
static int fault_bb_parse_line(struct sector_ranges *bb, const char *s, size_t len,
			       sector_t capacity)
{
	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	if (len && *s == '#')
		return 0;
	/* blanks and a '\r' at its end join nothing: sector_ranges_parse skips them */
	return fault_bb_parse(bb, s, len, capacity);
}

int fault_bb_read_file(struct sector_ranges *bb, const char *path, sector_t capacity, char *why,
		       size_t whylen)
{
	struct sector_ranges got = {.max = FAULT_MAX_BAD_RANGES};
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
		sector_ranges_free(&got);
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	sector_ranges_free(bb);
	*bb = got;
	return 0;
}

int fault_bb_command(struct sector_ranges *bb, const char *cmd, sector_t capacity)
{
	struct sector_ranges got = {0}, to;
	int ret;

	if (!strcmp(cmd, "clear")) {
		sector_ranges_free(bb);
		return 0;
	}
	if (cmd[0] != '+' && cmd[0] != '-')
		return -EINVAL;
	ret = fault_bb_parse(&got, cmd + 1, strlen(cmd + 1), capacity);
	if (!ret && !got.nr)
		ret = -EINVAL;
	/* on a copy: clearing may split a range, and a full list then has no room */
	if (!ret)
		ret = sector_ranges_copy(&to, bb);
	for (size_t i = 0; !ret && i < got.nr; i++) {
		const struct sector_range *r = &got.r[i];

		ret = cmd[0] == '+' ? sector_ranges_add(&to, r->start, r->end)
				    : sector_ranges_clear(&to, r->start, r->end);
		if (ret)
			sector_ranges_free(&to);
	}
	sector_ranges_free(&got);
	if (ret)
		return ret; /* nothing changed */
	sector_ranges_free(bb);
	*bb = to;
	return 0;
}

int fault_bb_show(const struct sector_ranges *bb, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < bb->nr; i++) {
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
