/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_aim.c - --only and --except: the ranges read, checked against the disk, and named. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash_aim.h"
#include "crash_state.h"

/* Entries named in one failure's line, at most: the rest are counted. */
#define AIM_LIST_MAX 8

static int aim_refuse(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int aim_refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The whole of a file of ranges, malloc'd in *buf: its length, or -errno. */
static ssize_t read_ranges_file(const char *path, char **buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, len = 0;
	ssize_t n = 0;
	char *b = NULL, *nb;

	if (fd < 0)
		return -errno;
	for (;;) {
		if (len == cap || !b) {
			cap = b ? cap * 2 : cap;
			nb = cap > AIM_FILE_MAX + 1u ? NULL : realloc(b, cap);
			if (!nb) {
				n = cap > AIM_FILE_MAX + 1u ? -EFBIG : -ENOMEM;
				break;
			}
			b = nb;
		}
		n = read(fd, b + len, cap - len);
		if (n <= 0) {
			n = n < 0 ? -errno : 0;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (!n && len > AIM_FILE_MAX)
		n = -EFBIG;
	if (n < 0) {
		free(b);
		return n;
	}
	*buf = b;
	return (ssize_t)len;
}

/* arg's ranges, RANGES or @FILE, into one: 0, or -EINVAL with the reason in why, -ENOMEM. */
static int read_arg(const char *opt, const char *arg, struct sector_ranges *one, char *why,
		    size_t whylen)
{
	char inner[256], *buf = NULL;
	ssize_t len;
	int ret;

	if (arg[0] == '@') {
		len = read_ranges_file(arg + 1, &buf);
		if (len < 0)
			return aim_refuse(why, whylen, "%s %.200s: %s", opt, arg,
					  len == -EFBIG ? "larger than 64 MiB"
							: strerror((int)-len));
		ret = sector_ranges_parse(one, buf, (size_t)len, inner, sizeof(inner));
		free(buf);
	} else {
		ret = sector_ranges_parse(one, arg, strlen(arg), inner, sizeof(inner));
	}
	if (ret == -EINVAL)
		return aim_refuse(why, whylen, "%s %.200s: %s", opt, arg, inner);
	/* an empty set would aim at nothing: surely a wrong file, not a wish */
	if (!ret && !one->nr)
		return aim_refuse(why, whylen, "%s %.200s: no sector ranges in it", opt, arg);
	return ret;
}

/* Keeps one as a source named after arg, and its label in the joined one. */
static int add_source(struct crash_aim *a, const char *arg, struct sector_ranges *one)
{
	const char *text = arg[0] == '@' ? arg + 1 : arg;
	size_t old = a->label ? strlen(a->label) : 0;
	struct crash_aim_source *src = realloc(a->src, (a->nr_src + 1) * sizeof(*src));
	char *l, *label = strdup(text);

	if (src)
		a->src = src;
	l = realloc(a->label, old + strlen(text) + 2);
	if (l)
		a->label = l;
	if (!src || !l || !label) {
		free(label);
		return -ENOMEM;
	}
	snprintf(l + old, strlen(text) + 2, "%s%s", old ? " " : "", text);
	src[a->nr_src].label = label;
	src[a->nr_src++].r = *one;
	*one = (struct sector_ranges){0};
	return 0;
}

int crash_aim_add(struct crash_aim *a, bool except, const char *arg, char *why, size_t whylen)
{
	const char *opt = except ? "--except" : "--only";
	struct sector_ranges one = {0};
	int ret;

	if (a->given.nr && a->except != except)
		return aim_refuse(why, whylen, "--only and --except do not go together");
	ret = read_arg(opt, arg, &one, why, whylen);
	for (size_t i = 0; !ret && i < one.nr; i++)
		ret = sector_ranges_add(&a->given, one.r[i].start, one.r[i].end);
	if (!ret)
		ret = add_source(a, arg, &one);
	sector_ranges_free(&one);
	if (ret)
		goto out;
	a->except = except;
	if (except) {
		ret = sector_ranges_complement(&a->given, SECTOR_RANGES_LIMIT, &a->may_lose);
	} else {
		sector_ranges_free(&a->may_lose);
		for (size_t i = 0; !ret && i < a->given.nr; i++)
			ret =
			    sector_ranges_add(&a->may_lose, a->given.r[i].start, a->given.r[i].end);
	}
out:
	return ret == -ENOSPC ? aim_refuse(why, whylen, "%s: too many ranges", opt) : ret;
}

int crash_aim_check(const struct crash_aim *a, uint64_t sectors, char *why, size_t whylen)
{
	const struct sector_range *last;

	if (!a->given.nr)
		return 0;
	last = &a->given.r[a->given.nr - 1];
	if (last->end <= sectors)
		return 0;
	return aim_refuse(why, whylen,
			  "%s %.200s: sector %llu is past the disk's end (%llu sectors): "
			  "ranges of another disk?",
			  a->except ? "--except" : "--only", a->label,
			  (unsigned long long)last->end - 1, (unsigned long long)sectors);
}

/* Appends to a growing string; false when out of memory (the string is freed). */
static bool say(char **s, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool say(char **s, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *n;
	int add;

	va_start(ap, fmt);
	add = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	n = add < 0 ? NULL : realloc(*s, *len + (size_t)add + 1);
	if (!n) {
		free(*s);
		*s = NULL;
		return false;
	}
	va_start(ap, fmt);
	vsnprintf(n + *len, (size_t)add + 1, fmt, ap);
	va_end(ap);
	*s = n;
	*len += (size_t)add;
	return true;
}

static bool say_entry(char **s, size_t *len, const struct crash_log *log, uint64_t i)
{
	const struct crash_entry *e = &log->e[i];

	return say(s, len, "entry %llu (sectors %llu-%llu)", (unsigned long long)i,
		   (unsigned long long)(e->off / 512),
		   (unsigned long long)((e->off + e->len + 511) / 512 - 1));
}

/* "lost in LABEL: entry ..., ..." for the dropped entries of id touching r, and "torn in". */
static bool say_source(char **s, size_t *len, const char *label, const struct sector_ranges *r,
		       const struct crash_log *log, const struct crash_id *id)
{
	size_t listed = 0, touching = 0;
	bool ok = true;

	for (size_t i = 0; i < id->nr_drop; i++)
		touching += id->drop[i] < log->nr && crash_entry_aimed(&log->e[id->drop[i]], r);
	for (size_t i = 0; ok && touching && i < id->nr_drop; i++) {
		if (id->drop[i] >= log->nr || !crash_entry_aimed(&log->e[id->drop[i]], r))
			continue;
		if (listed == AIM_LIST_MAX) {
			ok = say(s, len, " and %zu more", touching - listed);
			break;
		}
		ok = say(s, len, "%s",
			 listed ? ", "
			 : *len ? "; lost in "
				: "lost in ") &&
		     (listed || say(s, len, "%s: ", label)) && say_entry(s, len, log, id->drop[i]);
		listed++;
	}
	if (ok && id->torn && id->torn_e < log->nr && crash_entry_aimed(&log->e[id->torn_e], r))
		ok = say(s, len, "%storn in %s: ", *len ? "; " : "", label) &&
		     say_entry(s, len, log, id->torn_e);
	return ok;
}

char *crash_aim_lost(const struct crash_aim *a, const struct crash_log *log, const char *text)
{
	struct crash_id id;
	char why[256], *s = NULL, *except = NULL;
	size_t len = 0;
	bool ok = true;

	if (!a->given.nr || crash_id_parse(text, &id, why, sizeof(why)))
		return NULL;
	if (a->except) {
		/* the writes lost are outside the ranges: one source, what they leave */
		if (asprintf(&except, "what --except leaves of %s", a->label) < 0) {
			except = NULL;
			ok = false;
		}
		ok = ok && say_source(&s, &len, except, &a->may_lose, log, &id);
		free(except);
	}
	for (size_t i = 0; ok && !a->except && i < a->nr_src; i++)
		ok = say_source(&s, &len, a->src[i].label, &a->src[i].r, log, &id);
	crash_id_free(&id);
	if (!ok)
		free(s);
	return ok ? s : NULL;
}

void crash_aim_free(struct crash_aim *a)
{
	sector_ranges_free(&a->given);
	sector_ranges_free(&a->may_lose);
	for (size_t i = 0; i < a->nr_src; i++) {
		free(a->src[i].label);
		sector_ranges_free(&a->src[i].r);
	}
	free(a->src);
	free(a->label);
	*a = (struct crash_aim){0};
}
