/* replay_input.c - traces into replay I/Os: blktrace's Q records, or a fio iolog (v2, v3). */
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
			origin = e->time;
		first = false;
		replay_from_queue(e, &io);
		io.time = e->time - origin;
		ret = replay_add(t, &io, &alloc);
	}
	bt_trace_free(&bt);
	if (ret == -ENOMEM)
		snprintf(why, whylen, "out of memory");
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

/* The fields of one line after the version's timestamp: "file action [offset length]". */
struct iolog_line {
	uint64_t usec;
	char action[16];
	unsigned long long offset, length;
	int fields; /* after the file name */
};

static int iolog_parse_line(const char *line, int version, struct iolog_line *l)
{
	char file[4096];
	int n;

	memset(l, 0, sizeof(*l));
	if (version == 3) {
		n = sscanf(line, "%" SCNu64 " %4095s %15s %llu %llu", &l->usec, file, l->action,
			   &l->offset, &l->length);
		l->fields = n - 2;
		return n >= 3 ? 0 : -EINVAL;
	}
	n = sscanf(line, "%4095s %15s %llu %llu", file, l->action, &l->offset, &l->length);
	l->fields = n - 1;
	return n >= 2 ? 0 : -EINVAL;
}

static int iolog_io(const struct iolog_line *l, struct replay_io *io, char *what, size_t len)
{
	if (iolog_op(l->action, &io->op)) {
		snprintf(what, len, "unknown action '%s'", l->action);
		return -EINVAL;
	}
	if (io->op == REQ_OP_FLUSH)
		return 0;
	if (l->fields != 3) {
		snprintf(what, len, "'%s' needs an offset and a length", l->action);
		return -EINVAL;
	}
	if (l->offset % SECTOR_SIZE || l->length % SECTOR_SIZE || !l->length ||
	    l->length > (1ull << 31)) {
		snprintf(what, len, "offset %llu length %llu are not whole 512-byte sectors",
			 l->offset, l->length);
		return -EINVAL;
	}
	io->sector = l->offset >> SECTOR_SHIFT;
	io->nr_sectors = (unsigned int)(l->length >> SECTOR_SHIFT);
	return 0;
}

/* v2 times are the sum of the waits so far; v3 stamps every line. */
static int iolog_add_line(const char *line, int version, uint64_t *v2_time,
			  struct replay_trace *t, size_t *alloc, char *what, size_t len)
{
	struct iolog_line l;
	struct replay_io io = { 0 };

	if (iolog_parse_line(line, version, &l)) {
		snprintf(what, len, "not an iolog v%d line", version);
		return -EINVAL;
	}
	if (iolog_file_action(l.action))
		return 0;
	if (version == 2 && !strcmp(l.action, "wait")) {
		*v2_time += l.offset * NS_PER_US;
		return 0;
	}
	if (iolog_io(&l, &io, what, len))
		return -EINVAL;
	io.time = version == 3 ? l.usec * NS_PER_US : *v2_time;
	return replay_add(t, &io, alloc);
}

int replay_load_iolog(FILE *f, const char *name, struct replay_trace *t, char *why,
		      size_t whylen)
{
	char line[8192], what[160];
	uint64_t v2_time = 0;
	unsigned long lineno = 1;
	size_t alloc = 0;
	int version, ret = 0;

	if (!fgets(line, sizeof(line), f) || sscanf(line, "fio version %d iolog", &version) != 1 ||
	    (version != 2 && version != 3)) {
		snprintf(why, whylen, "%s: not a fio iolog of version 2 or 3", name);
		return -EINVAL;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		lineno++;
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		ret = iolog_add_line(line, version, &v2_time, t, &alloc, what, sizeof(what));
		if (ret == -ENOMEM)
			snprintf(why, whylen, "out of memory");
		else if (ret)
			snprintf(why, whylen, "%s:%lu: %s", name, lineno, what);
	}
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
	memset(t, 0, sizeof(*t));
}
