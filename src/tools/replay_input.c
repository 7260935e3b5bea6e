/* SPDX-License-Identifier: BSD-3-Clause */
/* replay_input.c - traces into replay I/Os: blktrace's Q records, or a fio iolog (v2, v3). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blktrace_read.h"
#include "replay.h"

#define NS_PER_US 1000ull

static int replay_add(struct replay_trace *t, const struct replay_io *io, size_t *alloc)
{
	sector_t end = io->sector + io->nr_sectors;

	if (t->nr == *alloc) {
		size_t n = *alloc ? 2 * *alloc : 4096;
		struct replay_io *p = realloc(t->ios, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->ios = p;
		*alloc = n;
	}
	t->ios[t->nr++] = *io;
	if (end > t->capacity)
		t->capacity = end;
	if (op_has_data(io->op) && io->nr_sectors << SECTOR_SHIFT > t->max_bytes)
		t->max_bytes = io->nr_sectors << SECTOR_SHIFT;
	return 0;
}

/* A Q record as the bio its submitter sent. */
static void replay_from_queue(const struct bt_event *e, struct replay_io *io)
{
	bool flush = bt_cat(e, BLK_TC_FLUSH);

	io->op = REQ_OP_READ;
	if (bt_cat(e, BLK_TC_DISCARD))
		io->op = REQ_OP_DISCARD;
	else if (flush && !e->bytes)
		io->op = REQ_OP_FLUSH;
	else if (bt_cat(e, BLK_TC_WRITE))
		io->op = REQ_OP_WRITE;
	io->flags = 0;
	if (flush && io->op == REQ_OP_WRITE)
		io->flags |= REQ_BARRIER;
	if (bt_cat(e, BLK_TC_FUA))
		io->flags |= REQ_FUA;
	if (bt_cat(e, BLK_TC_SYNC))
		io->flags |= REQ_SYNC;
	io->sector = e->sector;
	io->nr_sectors = e->bytes >> SECTOR_SHIFT;
	io->pid = (pid_t)e->pid;
	io->cpu = e->cpu; /* the CPU that queued it; rqdisk's mq trace: its hardware queue */
}

/* A Q record the replay can hold: within REPLAY_MAX_NS of the first, ending inside 2^64 bytes. */
static int replay_check_queue(const char *name, const struct bt_event *e, uint64_t origin,
			      char *why, size_t whylen)
{
	if (e->time - origin > REPLAY_MAX_NS) {
		snprintf(why, whylen,
			 "%s: a Q record %llu ns after the first is past the longest trace "
			 "replayed (%llu ns)",
			 name, (unsigned long long)(e->time - origin), REPLAY_MAX_NS);
		return -EINVAL;
	}
	if (e->sector > REPLAY_MAX_SECTOR - (e->bytes >> SECTOR_SHIFT)) {
		snprintf(why, whylen, "%s: a Q record at sector %llu of %u bytes ends past 2^64 bytes",
			 name, (unsigned long long)e->sector, e->bytes);
		return -EINVAL;
	}
	return 0;
}

static int replay_load_blktrace(const char *name, struct replay_trace *t, char *why,
				size_t whylen)
{
	struct bt_trace bt;
	size_t alloc = 0;
	uint64_t origin = 0;
	bool first = true;
	int ret = bt_trace_load(name, &bt, why, whylen);

	if (ret)
		return ret;
	for (size_t i = 0; i < bt.nr && !ret; i++) {
		const struct bt_event *e = &bt.ev[i];
		struct replay_io io;

		if (bt_is_notify(e) || bt_act(e) != __BLK_TA_QUEUE)
			continue;
		if (first)
			origin = e->time; /* the records are in time order: none comes before */
		first = false;
		ret = replay_check_queue(name, e, origin, why, whylen);
		if (ret)
			break;
		replay_from_queue(e, &io);
		io.blkcg = blkcg_intern_id(&t->cgroups, e->cgroup_id);
		io.time = e->time - origin;
		ret = replay_add(t, &io, &alloc);
		if (ret == -ENOMEM)
			snprintf(why, whylen, "out of memory");
	}
	bt_trace_free(&bt);
	return ret;
}

static int iolog_op(const char *action, enum req_op *op)
{
	static const struct {
		const char *name;
		enum req_op op;
	} ops[] = {
		{ "read", REQ_OP_READ },   { "write", REQ_OP_WRITE },    { "trim", REQ_OP_DISCARD },
		{ "sync", REQ_OP_FLUSH },  { "datasync", REQ_OP_FLUSH },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!strcmp(action, ops[i].name)) {
			*op = ops[i].op;
			return 0;
		}
	}
	return -EINVAL;
}

static bool iolog_file_action(const char *action)
{
	return !strcmp(action, "add") || !strcmp(action, "open") || !strcmp(action, "close");
}

#define IOLOG_MAX_LENGTH (1ull << 31) /* bytes in one I/O: its sectors fit an unsigned int */
#define IOLOG_FIELDS 5 /* v3: time file action offset length; v2 has no time */

/* One line of an iolog, and what came before it that it must agree with. */
struct iolog_state {
	int version;
	uint64_t time;  /* ns: v3's last stamp, or v2's sum of the waits so far */
	char *what;     /* why the line is refused */
	size_t whylen;
};

/* "%.*s" of a field in a message: a line of garbage is not echoed whole. */
#define FIELD_SHOWN 32

/* An unsigned decimal, all of s: sscanf's %llu would take "-1" and wrap. */
static int iolog_number(struct iolog_state *st, const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = isdigit((unsigned char)*s) ? strtoull(s, &end, 10) : 0;
	if (!isdigit((unsigned char)*s) || errno || *end) {
		snprintf(st->what, st->whylen, "'%.*s' is not a number from 0 to %llu", FIELD_SHOWN,
			 s, (unsigned long long)UINT64_MAX);
		return -EINVAL;
	}
	return 0;
}

/* base + us as ns, unless that goes past REPLAY_MAX_NS. */
static int iolog_us(uint64_t base, uint64_t us, uint64_t *ns)
{
	if (us > (REPLAY_MAX_NS - base) / NS_PER_US)
		return -ERANGE;
	*ns = base + us * NS_PER_US;
	return 0;
}

/* v3 stamps every line; they must not go back, or the replay would have to. */
static int iolog_stamp(struct iolog_state *st, const char *field)
{
	uint64_t us, ns;

	if (iolog_number(st, field, &us))
		return -EINVAL;
	if (iolog_us(0, us, &ns)) {
		snprintf(st->what, st->whylen,
			 "time %llu us is past the longest trace replayed (%llu us)",
			 (unsigned long long)us, REPLAY_MAX_NS / NS_PER_US);
		return -EINVAL;
	}
	if (ns < st->time) {
		snprintf(st->what, st->whylen, "time %llu us goes back before %llu us",
			 (unsigned long long)us, (unsigned long long)(st->time / NS_PER_US));
		return -EINVAL;
	}
	st->time = ns;
	return 0;
}

/* v2 times are the sum of the waits so far. */
static int iolog_wait(struct iolog_state *st, char **f, int nr)
{
	uint64_t us;

	if (nr < 3) {
		snprintf(st->what, st->whylen, "'wait' needs a time");
		return -EINVAL;
	}
	if (iolog_number(st, f[2], &us))
		return -EINVAL;
	if (iolog_us(st->time, us, &st->time)) {
		snprintf(st->what, st->whylen,
			 "the waits add up past the longest trace replayed (%llu us)",
			 REPLAY_MAX_NS / NS_PER_US);
		return -EINVAL;
	}
	return 0;
}

/* f: action [offset length], after the time and file. */
static int iolog_io(struct iolog_state *st, char **f, int nr, struct replay_io *io)
{
	uint64_t offset, length;

	if (iolog_op(f[0], &io->op)) {
		snprintf(st->what, st->whylen, "unknown action '%.*s'", FIELD_SHOWN, f[0]);
		return -EINVAL;
	}
	if (io->op == REQ_OP_FLUSH)
		return 0;
	if (nr < 3) {
		snprintf(st->what, st->whylen, "'%s' needs an offset and a length", f[0]);
		return -EINVAL;
	}
	if (iolog_number(st, f[1], &offset) || iolog_number(st, f[2], &length))
		return -EINVAL;
	if (length > IOLOG_MAX_LENGTH) {
		snprintf(st->what, st->whylen, "length %llu is more than %llu bytes",
			 (unsigned long long)length, IOLOG_MAX_LENGTH);
		return -EINVAL;
	}
	if (offset % SECTOR_SIZE || length % SECTOR_SIZE || !length) {
		snprintf(st->what, st->whylen,
			 "offset %llu length %llu are not whole 512-byte sectors",
			 (unsigned long long)offset, (unsigned long long)length);
		return -EINVAL;
	}
	io->sector = offset >> SECTOR_SHIFT;
	io->nr_sectors = (unsigned int)(length >> SECTOR_SHIFT);
	if (io->nr_sectors > REPLAY_MAX_SECTOR - io->sector) {
		snprintf(st->what, st->whylen, "offset %llu length %llu ends past 2^64 bytes",
			 (unsigned long long)offset, (unsigned long long)length);
		return -EINVAL;
	}
	return 0;
}

/* Whitespace-separated fields; any after the first max are ignored, as fio does. */
static int iolog_split(char *line, char **f, int max)
{
	char *save;
	int n = 0;

	for (char *tok = strtok_r(line, " \t\r\n", &save); tok && n < max;
	     tok = strtok_r(NULL, " \t\r\n", &save))
		f[n++] = tok;
	return n;
}

static int iolog_add_line(struct iolog_state *st, char *line, struct replay_trace *t,
			  size_t *alloc)
{
	char *f[IOLOG_FIELDS];
	int nr = iolog_split(line, f, IOLOG_FIELDS), skip = st->version == 3 ? 1 : 0;
	struct replay_io io = { 0 };

	if (nr < 2 + skip || (skip && !isdigit((unsigned char)*f[0]))) {
		snprintf(st->what, st->whylen, "not an iolog v%d line", st->version);
		return -EINVAL;
	}
	if (skip && iolog_stamp(st, f[0]))
		return -EINVAL;
	/* f[skip] is the file: every file of the log is the one disk */
	if (iolog_file_action(f[skip + 1]))
		return 0;
	if (st->version == 2 && !strcmp(f[1], "wait"))
		return iolog_wait(st, f + skip, nr - skip);
	if (iolog_io(st, f + skip + 1, nr - skip - 1, &io))
		return -EINVAL;
	io.time = st->time;
	io.cpu = (unsigned int)t->nr; /* an iolog names no CPU: its I/Os take the queues in turn */
	return replay_add(t, &io, alloc);
}

/* The first line: "fio version N iolog". */
static bool iolog_header(const char *line, int *version)
{
	return sscanf(line, "fio version %d iolog", version) == 1 &&
	       (*version == 2 || *version == 3);
}

int replay_load_iolog(FILE *f, const char *name, struct replay_trace *t, char *why,
		      size_t whylen)
{
	char what[160], *line = NULL;
	struct iolog_state st = { .what = what, .whylen = sizeof(what) };
	unsigned long lineno = 1;
	size_t alloc = 0, cap = 0;
	ssize_t len;
	int ret = 0;

	if (getline(&line, &cap, f) < 0 || !iolog_header(line, &st.version)) {
		snprintf(why, whylen, "%s: not a fio iolog of version 2 or 3", name);
		free(line);
		return -EINVAL;
	}
	while (!ret && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (strlen(line) != (size_t)len) {
			snprintf(what, sizeof(what), "a NUL byte in the line");
			ret = -EINVAL;
		} else if (strspn(line, " \t\r\n") != (size_t)len) {
			ret = iolog_add_line(&st, line, t, &alloc);
		}
		if (ret == -ENOMEM)
			snprintf(why, whylen, "out of memory");
		else if (ret)
			snprintf(why, whylen, "%s:%lu: %s", name, lineno, what);
	}
	free(line);
	return ret;
}

static bool replay_is_iolog(FILE *f)
{
	char head[16] = "";
	bool iolog = fread(head, 1, 12, f) == 12 && !memcmp(head, "fio version ", 12);

	rewind(f);
	return iolog;
}

int replay_load(const char *name, struct replay_trace *t, char *why, size_t whylen)
{
	FILE *f = fopen(name, "r");
	int ret;

	memset(t, 0, sizeof(*t));
	if (f && replay_is_iolog(f)) {
		ret = replay_load_iolog(f, name, t, why, whylen);
		fclose(f);
	} else {
		if (f)
			fclose(f);
		ret = replay_load_blktrace(name, t, why, whylen);
	}
	if (!ret && !t->nr) {
		snprintf(why, whylen, "%s: no I/O to replay", name);
		ret = -ENODATA;
	}
	if (ret)
		replay_trace_free(t);
	return ret;
}

void replay_trace_free(struct replay_trace *t)
{
	free(t->ios);
	blkcg_table_free(&t->cgroups);
	memset(t, 0, sizeof(*t));
}
