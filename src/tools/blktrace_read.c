/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blktrace_read.c - blktrace binary traces read back: every file of a trace,
 * each record checked, all merged into one array in time order.
 */
#include <byteswap.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blktrace_read.h"

#define BT_FILE_SUFFIX ".blktrace."
#define BT_MAGIC_MASK 0xffffff00u
#define BT_VERSION_MASK 0xffu
#define BT_CGROUP_ID_LEN 8 /* a cgroup id leads the pdu of records marked __BLK_TA_CGROUP */

_Static_assert(sizeof(struct blk_io_trace) == 48, "blktrace records are 48 bytes");

/* One file of the trace: which cpu's it is (-1 for NAME itself) and its path. */
struct bt_file {
	long cpu;
	char *path;
};

struct bt_files {
	struct bt_file *f;
	size_t nr, alloc;
};

/* Where the records of the trace collect as the files are read. */
struct bt_reader {
	struct bt_trace *t;
	size_t alloc;
	const char *path; /* the file being read */
	uint64_t offset;  /* of the record being read */
	bool swapped;     /* the file was written on a host of the other byte order */
	unsigned char *pdu; /* UINT16_MAX bytes: the largest pdu a record can have */
	char *why;
	size_t whylen;
};

static int bt_fail(struct bt_reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line: the file, the byte offset of the record, what is wrong with it. */
static int bt_fail(struct bt_reader *r, int err, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->why, r->whylen, "%s: byte %" PRIu64 ": %s", r->path, r->offset, what);
	return err;
}

static int bt_files_add(struct bt_files *files, long cpu, const char *dir, const char *base)
{
	char *path;

	if (files->nr == files->alloc) {
		size_t n = files->alloc ? 2 * files->alloc : 8;
		struct bt_file *p = realloc(files->f, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		files->f = p;
		files->alloc = n;
	}
	if (dir ? asprintf(&path, "%s/%s", dir, base) < 0 : !(path = strdup(base)))
		return -ENOMEM;
	files->f[files->nr++] = (struct bt_file){ cpu, path };
	return 0;
}

static void bt_files_free(struct bt_files *files)
{
	for (size_t i = 0; i < files->nr; i++)
		free(files->f[i].path);
	free(files->f);
}

/* The cpu number of entry when it is BASE.blktrace.N, else -1. */
static long bt_file_cpu(const char *entry, const char *base)
{
	size_t len = strlen(base), suffix = strlen(BT_FILE_SUFFIX);
	const char *digits;
	char *end;
	long cpu;

	if (strncmp(entry, base, len) || strncmp(entry + len, BT_FILE_SUFFIX, suffix))
		return -1;
	digits = entry + len + suffix;
	if (*digits < '0' || *digits > '9')
		return -1;
	errno = 0;
	cpu = strtol(digits, &end, 10);
	return *end || errno ? -1 : cpu;
}

static int bt_file_cmp(const void *a, const void *b)
{
	const struct bt_file *fa = a, *fb = b;

	return (fa->cpu > fb->cpu) - (fa->cpu < fb->cpu);
}

/*
 * NAME.blktrace.N for every N there is (cpus need not be contiguous: an
 * offline cpu leaves a gap), in cpu order.  The directory is listed rather
 * than probed so that a gap does not hide the files after it.
 */
static int bt_find_cpu_files(const char *name, struct bt_files *files)
{
	char *dcopy = strdup(name), *bcopy = strdup(name);
	const char *dir, *base;
	struct dirent *d;
	DIR *dp = NULL;
	int ret = -ENOMEM;

	if (!dcopy || !bcopy)
		goto out;
	dir = dirname(dcopy);
	base = basename(bcopy);
	ret = 0;
	dp = opendir(dir);
	if (!dp) /* no directory, no files: the caller says which trace is missing */
		goto out;
	while (!ret && (d = readdir(dp))) {
		long cpu = bt_file_cpu(d->d_name, base);

		if (cpu >= 0)
			ret = bt_files_add(files, cpu, strchr(name, '/') ? dir : NULL, d->d_name);
	}
	closedir(dp);
	if (files->nr > 1)
		qsort(files->f, files->nr, sizeof(*files->f), bt_file_cmp);
out:
	free(dcopy);
	free(bcopy);
	return ret;
}

static int bt_find_files(const char *name, struct bt_files *files, char *why, size_t whylen)
{
	struct stat st;
	int ret = bt_find_cpu_files(name, files);

	if (ret || files->nr)
		goto out;
	if (stat(name, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s: no such trace (no %s%sN, no file %s)", name, name,
			 BT_FILE_SUFFIX, name);
		return -ENOENT;
	}
	ret = bt_files_add(files, -1, NULL, name);
out:
	if (ret == -ENOMEM)
		snprintf(why, whylen, "%s: out of memory", name);
	return ret;
}

static void bt_swap_record(struct blk_io_trace *rec)
{
	rec->magic = bswap_32(rec->magic);
	rec->sequence = bswap_32(rec->sequence);
	rec->time = bswap_64(rec->time);
	rec->sector = bswap_64(rec->sector);
	rec->bytes = bswap_32(rec->bytes);
	rec->action = bswap_32(rec->action);
	rec->pid = bswap_32(rec->pid);
	rec->device = bswap_32(rec->device);
	rec->cpu = bswap_32(rec->cpu);
	rec->error = bswap_16(rec->error);
	rec->pdu_len = bswap_16(rec->pdu_len);
}

/*
 * The first record of a file tells its byte order; every record must then
 * carry the magic in that order and version 7.
 */
static int bt_check_magic(struct bt_reader *r, struct blk_io_trace *rec, bool first)
{
	if (first)
		r->swapped = (rec->magic & BT_MAGIC_MASK) != BLK_IO_TRACE_MAGIC &&
			     (bswap_32(rec->magic) & BT_MAGIC_MASK) == BLK_IO_TRACE_MAGIC;
	if (r->swapped)
		bt_swap_record(rec);
	if ((rec->magic & BT_MAGIC_MASK) != BLK_IO_TRACE_MAGIC)
		return bt_fail(r, -EINVAL, "bad magic 0x%08x: not a blktrace record", rec->magic);
	if ((rec->magic & BT_VERSION_MASK) != BLK_IO_TRACE_VERSION)
		return bt_fail(r, -EINVAL, "unknown version %u (only %u is read)",
			       rec->magic & BT_VERSION_MASK, BLK_IO_TRACE_VERSION);
	return 0;
}

static struct bt_event *bt_new_event(struct bt_reader *r)
{
	struct bt_trace *t = r->t;

	if (t->nr == r->alloc) {
		size_t n = r->alloc ? 2 * r->alloc : 4096;
		struct bt_event *p = realloc(t->ev, n * sizeof(*p));

		if (!p)
			return NULL;
		t->ev = p;
		r->alloc = n;
	}
	return &t->ev[t->nr++];
}

/* The pdu's meaning for the records whose pdu the reader keeps: a split's, a process note's. */
static void bt_event_pdu(struct bt_event *e, const unsigned char *pdu, size_t len)
{
	uint64_t be;

	if (bt_is_notify(e)) {
		if (bt_act(e) == __BLK_TN_PROCESS)
			memcpy(e->comm, pdu, len < sizeof(e->comm) - 1 ? len : sizeof(e->comm) - 1);
	} else if (bt_act(e) == __BLK_TA_SPLIT && len >= sizeof(be)) {
		memcpy(&be, pdu, sizeof(be)); /* big-endian whatever the host that wrote it */
		e->split_at = be64toh(be);
	}
}

static int bt_add_record(struct bt_reader *r, const struct blk_io_trace *rec,
			 const unsigned char *pdu)
{
	struct bt_event *e = bt_new_event(r);
	size_t len = rec->pdu_len;

	if (!e) {
		snprintf(r->why, r->whylen, "%s: out of memory", r->path);
		return -ENOMEM;
	}
	*e = (struct bt_event){
		.time = rec->time,
		.sector = rec->sector,
		.bytes = rec->bytes,
		.action = rec->action & ~(uint32_t)__BLK_TA_CGROUP,
		.pid = rec->pid,
		.sequence = rec->sequence,
		.cpu = rec->cpu,
		.error = rec->error,
	};
	if (rec->action & __BLK_TA_CGROUP) {
		if (len < BT_CGROUP_ID_LEN)
			return bt_fail(r, -EINVAL, "a cgroup record with a %zu-byte pdu", len);
		/* in the byte order of the host that traced, as the header */
		memcpy(&e->cgroup_id, pdu, sizeof(e->cgroup_id));
		if (r->swapped)
			e->cgroup_id = bswap_64(e->cgroup_id);
		pdu += BT_CGROUP_ID_LEN;
		len -= BT_CGROUP_ID_LEN;
	}
	bt_event_pdu(e, pdu, len);
	return 0;
}

static int bt_read_error(struct bt_reader *r, FILE *f, size_t got, size_t want, const char *what)
{
	if (ferror(f)) {
		snprintf(r->why, r->whylen, "%s: %s", r->path, strerror(errno));
		return -EIO;
	}
	return bt_fail(r, -EINVAL, "truncated record: %zu of its %zu %s bytes in the file", got,
		       want, what);
}

static int bt_read_file(struct bt_reader *r, FILE *f)
{
	struct blk_io_trace rec;
	size_t n;
	int ret;

	for (r->offset = 0;; r->offset += sizeof(rec) + rec.pdu_len) {
		n = fread(&rec, 1, sizeof(rec), f);
		if (n == 0 && !ferror(f))
			return 0;
		if (n != sizeof(rec))
			return bt_read_error(r, f, n, sizeof(rec), "header");
		ret = bt_check_magic(r, &rec, r->offset == 0);
		if (ret)
			return ret;
		n = fread(r->pdu, 1, rec.pdu_len, f);
		if (n != rec.pdu_len)
			return bt_read_error(r, f, n, rec.pdu_len, "pdu");
		ret = bt_add_record(r, &rec, r->pdu);
		if (ret)
			return ret;
	}
}

static int bt_load_file(struct bt_reader *r, const char *path)
{
	FILE *f = fopen(path, "re");
	int ret;

	r->path = path;
	r->offset = 0;
	if (!f) {
		ret = -errno;
		snprintf(r->why, r->whylen, "%s: %s", path, strerror(errno));
		return ret;
	}
	ret = bt_read_file(r, f);
	fclose(f);
	return ret;
}

/* Time, then cpu, then sequence; equal keys keep the order they were read in. */
static bool bt_event_before(const struct bt_event *a, const struct bt_event *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu;
	return a->sequence < b->sequence;
}

/* A stable merge sort: qsort may not keep equal records (notes of one instant) in file order. */
static void bt_sort(struct bt_event *ev, struct bt_event *tmp, size_t nr)
{
	size_t half = nr / 2, i = 0, j = half, k = 0;

	if (nr < 2)
		return;
	bt_sort(ev, tmp, half);
	bt_sort(ev + half, tmp, nr - half);
	if (!bt_event_before(&ev[half], &ev[half - 1]))
		return; /* already in order: the common case of one file */
	while (i < half && j < nr)
		tmp[k++] = bt_event_before(&ev[j], &ev[i]) ? ev[j++] : ev[i++];
	while (i < half)
		tmp[k++] = ev[i++];
	/* what is left of the right half is already in place */
	memcpy(ev, tmp, k * sizeof(*ev));
}

static int bt_sort_trace(struct bt_trace *t, char *why, size_t whylen, const char *name)
{
	struct bt_event *tmp;

	if (t->nr < 2)
		return 0;
	tmp = malloc(t->nr * sizeof(*tmp));
	if (!tmp) {
		snprintf(why, whylen, "%s: out of memory", name);
		return -ENOMEM;
	}
	bt_sort(t->ev, tmp, t->nr);
	free(tmp);
	return 0;
}

int bt_trace_load(const char *name, struct bt_trace *t, char *why, size_t whylen)
{
	struct bt_reader r = { .t = t, .why = why, .whylen = whylen };
	struct bt_files files = { 0 };
	int ret;

	memset(t, 0, sizeof(*t));
	r.pdu = malloc(UINT16_MAX);
	if (!r.pdu) {
		snprintf(why, whylen, "%s: out of memory", name);
		return -ENOMEM;
	}
	ret = bt_find_files(name, &files, why, whylen);
	for (size_t i = 0; !ret && i < files.nr; i++)
		ret = bt_load_file(&r, files.f[i].path);
	if (!ret)
		ret = bt_sort_trace(t, why, whylen, name);
	bt_files_free(&files);
	free(r.pdu);
	if (ret)
		bt_trace_free(t);
	return ret;
}

void bt_trace_free(struct bt_trace *t)
{
	free(t->ev);
	memset(t, 0, sizeof(*t));
}
