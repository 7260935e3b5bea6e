/* SPDX-License-Identifier: BSD-3-Clause */
/* fault_rules.c - the fault filter's "KEY=VALUE,..." rules: parsed, checked, and written back. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "fault.h"
#include "kv.h"

static const struct {
	const char *name;
	int err;
} fault_errnos[] = {
    {"EIO", EIO},	  {"ENOSPC", ENOSPC},	{"ETIMEDOUT", ETIMEDOUT}, {"EROFS", EROFS},
    {"ENOLINK", ENOLINK}, {"ENODATA", ENODATA}, {"EILSEQ", EILSEQ},	  {"ENOMEM", ENOMEM},
    {"EAGAIN", EAGAIN},	  {"EPERM", EPERM},	{"ENXIO", ENXIO},	  {"EBUSY", EBUSY},
};

static const struct {
	const char *name;
	unsigned int ops;
} fault_op_names[] = {
    {"read", FAULT_OP(REQ_OP_READ)},
    {"write", FAULT_OP(REQ_OP_WRITE)},
    {"flush", FAULT_OP(REQ_OP_FLUSH)},
    {"discard", FAULT_OP(REQ_OP_DISCARD)},
    {"write-zeroes", FAULT_OP(REQ_OP_WRITE_ZEROES)},
    {"any", FAULT_OPS_ALL},
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

const char *fault_errno_name(int err)
{
	for (size_t i = 0; i < NR(fault_errnos); i++)
		if (fault_errnos[i].err == err)
			return fault_errnos[i].name;
	return NULL;
}

void fault_rules_init(struct fault_rules *r)
{
	*r = (struct fault_rules){.err = EIO,
				  .prob = FAULT_PPM,
				  .interval = 1,
				  .enable = true,
				  .corrupt_on = FAULT_OP(REQ_OP_READ),
				  .sectors = {.max = FAULT_MAX_BAD_RANGES}};
}

int fault_rules_copy(struct fault_rules *to, const struct fault_rules *from)
{
	*to = *from;
	to->error_file = to->sectors_file = NULL;
	if (sector_ranges_copy(&to->sectors, &from->sectors))
		return -ENOMEM;
	if ((from->error_file && !(to->error_file = strdup(from->error_file))) ||
	    (from->sectors_file && !(to->sectors_file = strdup(from->sectors_file)))) {
		fault_rules_free(to);
		return -ENOMEM;
	}
	return 0;
}

void fault_rules_free(struct fault_rules *r)
{
	free(r->error_file);
	r->error_file = NULL;
	free(r->sectors_file);
	r->sectors_file = NULL;
	sector_ranges_free(&r->sectors);
}

/* "read/write": each a name of fault_op_names; only allows restricts them (corrupt_on). */
static int fault_parse_ops(const char *v, size_t len, unsigned int allowed, unsigned int *out)
{
	unsigned int ops = 0;

	if (len == 4 && !strncmp(v, "none", 4) && allowed == FAULT_OPS_ALL) {
		*out = 0; /* error=none: no error rule */
		return 0;
	}
	while (len) {
		size_t n = 0, i;

		while (n < len && v[n] != '/')
			n++;
		for (i = 0; i < NR(fault_op_names); i++)
			if (strlen(fault_op_names[i].name) == n &&
			    !strncmp(fault_op_names[i].name, v, n))
				break;
		if (i == NR(fault_op_names) || (fault_op_names[i].ops & ~allowed))
			return -EINVAL;
		ops |= fault_op_names[i].ops;
		v += n;
		len -= n;
		if (len) { /* the '/': a value may not end with one */
			v++;
			if (!--len)
				return -EINVAL;
		}
	}
	if (!ops)
		return -EINVAL;
	*out = ops;
	return 0;
}

static int fault_parse_u64(const char *v, size_t len, uint64_t min, uint64_t max, uint64_t *out)
{
	char num[24];

	if (len >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, len);
	num[len] = 0;
	return dev_parse_value(num, min, max, out);
}

/* A path a key takes: absolute, one line, no longer than PATH_MAX; NULL for a bad one. */
static bool fault_path_ok(const char *v, size_t len)
{
	return len && v[0] == '/' && len <= 4095 && !memchr(v, '\n', len) && !memchr(v, 0, len);
}

/* sectors=S-E/S-E: the ranges replace those aimed at before; empty: the whole disk again. */
static int fault_parse_sectors(struct fault_rules *r, const char *v, size_t len, sector_t cap)
{
	struct sector_ranges got = {.max = FAULT_MAX_BAD_RANGES};
	int ret = fault_bb_parse(&got, v, len, cap);

	if (ret) {
		sector_ranges_free(&got);
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	sector_ranges_free(&r->sectors);
	r->sectors = got;
	free(r->sectors_file);
	r->sectors_file = NULL;
	return 0;
}

/* sectors_file=PATH: read now, its ranges as sectors= takes them; says why itself. */
static int fault_parse_sectors_file(struct fault_rules *r, const char *v, size_t len, sector_t cap,
				    char *why, size_t whylen)
{
	char *path;
	int ret;

	if (!fault_path_ok(v, len))
		return -EINVAL;
	path = strndup(v, len);
	if (!path)
		return -ENOMEM;
	ret = fault_bb_read_file(&r->sectors, path, cap, why, whylen);
	if (ret) {
		free(path);
		return ret;
	}
	free(r->sectors_file);
	r->sectors_file = path;
	return 0;
}

enum fault_key_type {
	FK_U64,
	FK_BOOL,
	FK_PPM,
	FK_MS,
	FK_OPS,
	FK_ERRNO,
	FK_PATH,
	FK_BAD,
	FK_RW,
	FK_SECTORS,
	FK_SECTORS_FILE,
};

/* What the fault filter keeps of each of its keys (struct dev_key's data). */
struct fault_key {
	enum fault_key_type type;
	size_t off;	  /* of the field in struct fault_rules */
	const char *what; /* the accepted values, for the refusal */
};

#define FK(n, t, f, w, h)                                                                       \
	{                                                                                       \
		.name = n, .help = h,                                                           \
		.data = &(const struct fault_key){ t, offsetof(struct fault_rules, f), w }      \
	}
const struct dev_key fault_keys[] = {
    FK("error", FK_OPS, ops,
       "none, or read, write, flush, discard, write-zeroes or any joined by /",
       "the operations that fail: read, write, flush, discard, write-zeroes, any, none"),
    FK("errno", FK_ERRNO, err,
       "EIO, ENOSPC, ETIMEDOUT, EROFS, ENOLINK, ENODATA, EILSEQ, ENOMEM, EAGAIN, EPERM, ENXIO or "
       "EBUSY",
       "the error a failed request ends with (default EIO)"),
    FK("prob", FK_PPM, prob, "parts per million, 0 to 1000000",
       "the chance a request in the rule fails, parts per million"),
    FK("seed", FK_U64, seed, "a whole number", "the seed of the chances"),
    FK("start", FK_U64, start, "a sector of the disk", "the first sector the rule covers"),
    FK("end", FK_U64, end, "a sector of the disk, or its size",
       "the sector after the last the rule covers"),
    FK("sectors", FK_SECTORS, sectors,
       "START-END sector ranges inside the disk, joined by /, or nothing",
       "aim the rules at sector ranges START-END joined by /: only requests there are touched"),
    FK("sectors_file", FK_SECTORS_FILE, sectors, "an absolute path",
       "aim the rules at the sector ranges listed in this file, as sectors= takes them"),
    FK("times", FK_U64, times, "a whole number, 0 for no limit",
       "the rule fails this many requests, then stops (0: no limit)"),
    FK("interval", FK_U64, interval, "a whole number from 1",
       "only every Nth request in the rule fails"),
    FK("enable", FK_BOOL, enable, "0 or 1", "0 to start with the rules off"),
    FK("error_file", FK_PATH, error_file, "an absolute path",
       "the rule holds only while this file exists"),
    FK("badblocks", FK_BAD, sticky, "START-END sector ranges inside the disk, joined by /",
       "bad sector ranges START-END joined by /: reads there fail"),
    FK("sticky", FK_BOOL, sticky, "0 or 1", "1: a write does not repair a bad block"),
    FK("up", FK_MS, up_ms, "milliseconds, 0 to 3600000",
       "milliseconds the disk works, as dm-flakey's up interval"),
    FK("down", FK_MS, down_ms, "milliseconds, 0 to 3600000",
       "milliseconds it then fails, as dm-flakey's down interval"),
    FK("error_reads", FK_BOOL, error_reads, "0 or 1", "1: reads fail while down"),
    FK("error_writes", FK_BOOL, error_writes, "0 or 1", "1: writes fail while down"),
    FK("drop_writes", FK_BOOL, drop_writes, "0 or 1",
       "1: writes while down end as done, unwritten"),
    FK("corrupt_bio_byte", FK_U64, corrupt_bio_byte, "a byte of each bio from 1, 0 for none",
       "the byte of each bio, from 1, to corrupt while down"),
    FK("corrupt_value", FK_U64, corrupt_value, "0 to 255", "the value written at that byte"),
    FK("corrupt_on", FK_RW, corrupt_on, "read, write or read/write",
       "the bios corrupted: read, write or read/write"),
    FK("random_read_corrupt", FK_PPM, random_read_corrupt, "parts per million, 0 to 1000000",
       "the chance a read gets a random byte flipped, parts per million"),
    FK("random_write_corrupt", FK_PPM, random_write_corrupt, "parts per million, 0 to 1000000",
       "the chance a write gets a random byte flipped, parts per million"),
    FK("delay_read", FK_MS, delay_read_ms, "milliseconds, 0 to 3600000",
       "milliseconds each read is held"),
    FK("delay_write", FK_MS, delay_write_ms, "milliseconds, 0 to 3600000",
       "milliseconds each write is held"),
    FK("spike_ms", FK_MS, spike_ms, "milliseconds, 0 to 3600000",
       "milliseconds of a latency spike"),
    FK("spike_prob", FK_PPM, spike_prob, "parts per million, 0 to 1000000",
       "the chance a request gets a spike, parts per million"),
    { .name = NULL },
};

static int fault_set_number(const char *name, const struct fault_key *k, void *f, const char *v,
			    size_t len, sector_t cap)
{
	uint64_t max = UINT64_MAX, min = 0, x;

	switch (k->type) {
	case FK_BOOL:
		max = 1;
		break;
	case FK_PPM:
		max = FAULT_PPM;
		break;
	case FK_MS:
		max = FAULT_MAX_MS;
		break;
	default:
		break;
	}
	if (!strcmp(name, "start"))
		max = cap - 1;
	else if (!strcmp(name, "end"))
		max = cap;
	else if (!strcmp(name, "interval"))
		min = 1;
	else if (!strcmp(name, "corrupt_value"))
		max = 255;
	if (fault_parse_u64(v, len, min, max, &x))
		return -EINVAL;
	if (k->type == FK_BOOL)
		*(bool *)f = x;
	else if (k->type == FK_PPM)
		*(uint32_t *)f = (uint32_t)x;
	else if (!strcmp(name, "corrupt_value"))
		*(unsigned int *)f = (unsigned int)x;
	else
		*(uint64_t *)f = x;
	return 0;
}

static int fault_set(const struct dev_key *key, struct fault_rules *r, struct sector_ranges *bb,
		     const char *v, size_t len, sector_t cap, char *why, size_t whylen)
{
	const struct fault_key *k = key->data;
	void *f = (char *)r + k->off;
	char *path;

	switch (k->type) {
	case FK_OPS:
		return fault_parse_ops(v, len, FAULT_OPS_ALL, f);
	case FK_RW:
		return fault_parse_ops(v, len, FAULT_OP(REQ_OP_READ) | FAULT_OP(REQ_OP_WRITE), f);
	case FK_BAD:
		return fault_bb_parse(bb, v, len, cap) ? -EINVAL : 0;
	case FK_SECTORS:
		return fault_parse_sectors(r, v, len, cap);
	case FK_SECTORS_FILE:
		return fault_parse_sectors_file(r, v, len, cap, why, whylen);
	case FK_ERRNO:
		for (size_t i = 0; i < NR(fault_errnos); i++)
			if (strlen(fault_errnos[i].name) == len &&
			    !strncmp(fault_errnos[i].name, v, len)) {
				r->err = fault_errnos[i].err;
				return 0;
			}
		return -EINVAL;
	case FK_PATH:
		if (!len) { /* error_file= : no file, the rule always holds */
			free(r->error_file);
			r->error_file = NULL;
			return 0;
		}
		if (!fault_path_ok(v, len))
			return -EINVAL;
		path = strndup(v, len);
		if (!path)
			return -ENOMEM;
		free(r->error_file);
		r->error_file = path;
		return 0;
	default:
		return fault_set_number(key->name, k, f, v, len, cap);
	}
}

struct fault_walk {
	struct fault_rules *r;
	struct sector_ranges *bb;
	sector_t cap;
	char *why;
	size_t whylen;
};

static int fault_parse_one(void *opaque, const char *key, size_t klen, const char *val,
			   size_t vlen)
{
	struct fault_walk *w = opaque;

	for (const struct dev_key *k = fault_keys; k->name; k++) {
		const struct fault_key *fk = k->data;
		int ret;

		if (!kv_key_is(key, klen, k->name))
			continue;
		if (w->whylen)
			w->why[0] = 0;
		ret =
		    val ? fault_set(k, w->r, w->bb, val, vlen, w->cap, w->why, w->whylen) : -EINVAL;
		if (!ret || (w->whylen && w->why[0])) /* said already (sectors_file) */
			return ret;
		if (ret == -ENOMEM)
			snprintf(w->why, w->whylen, "out of memory");
		else
			snprintf(w->why, w->whylen, "fault: %s must be %s, not '%.*s'", k->name,
				 fk->what, (int)vlen, val ? val : "");
		return ret;
	}
	snprintf(w->why, w->whylen, "fault: no key '%.*s'", (int)klen, key);
	return -EINVAL;
}

int fault_rules_parse(struct fault_rules *r, struct sector_ranges *bb, const char *args,
		      sector_t capacity, char *why, size_t whylen)
{
	struct fault_walk w = { r, bb, capacity, why, whylen };
	int ret = kv_walk(args, fault_parse_one, &w);

	if (ret)
		return ret;
	if (r->end && r->end <= r->start) {
		snprintf(why, whylen, "fault: end (%llu) must be after start (%llu)",
			 (unsigned long long)r->end, (unsigned long long)r->start);
		return -EINVAL;
	}
	if (r->sectors.nr && r->ops == FAULT_OP(REQ_OP_FLUSH)) {
		snprintf(why, whylen,
			 "fault: error=flush with sectors= never fails: a flush has none");
		return -EINVAL;
	}
	if (!r->up_ms && r->down_ms) {
		snprintf(why, whylen, "fault: down=%llu needs up= as well (the disk is up first)",
			 (unsigned long long)r->down_ms);
		return -EINVAL;
	}
	return 0;
}

/* "read/write" */
static void fault_format_ops(unsigned int ops, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	if (ops == FAULT_OPS_ALL) {
		snprintf(buf, len, "any");
		return;
	}
	for (size_t i = 0; i + 1 < NR(fault_op_names) && n < len; i++)
		if (ops & fault_op_names[i].ops)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "/" : "",
					      fault_op_names[i].name);
}

struct fault_out {
	char *buf;
	size_t len, used;
};

static void fault_vappend(struct fault_out *o, const char *fmt, va_list ap)
{
	size_t at = o->used < o->len ? o->used : o->len;

	o->used += (size_t)vsnprintf(o->buf + at, o->len - at, fmt, ap);
}

static void __attribute__((format(printf, 2, 3)))
fault_append(struct fault_out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fault_vappend(o, fmt, ap);
	va_end(ap);
}

/* One more key: after a comma unless it is the first. */
static void __attribute__((format(printf, 2, 3)))
fault_put(struct fault_out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->used)
		fault_append(o, ",");
	va_start(ap, fmt);
	fault_vappend(o, fmt, ap);
	va_end(ap);
}

#define ULL(x) ((unsigned long long)(x))

/* The keys that differ from fault_rules_init's, comma-separated: what a spec would say (error=none
 * for none). */
int fault_rules_format(const struct fault_rules *r, char *buf, size_t len)
{
	struct fault_out o = {buf, len, 0};
	struct fault_rules d;
	char ops[64];

	fault_rules_init(&d);
	if (len)
		buf[0] = 0;
	if (r->ops) {
		fault_format_ops(r->ops, ops, sizeof(ops));
		fault_put(&o, "error=%s", ops);
	}
	if (r->err != d.err)
		fault_put(&o, "errno=%s", fault_errno_name(r->err));
	if (r->prob != d.prob)
		fault_put(&o, "prob=%u", r->prob);
	if (r->seed)
		fault_put(&o, "seed=%llu", ULL(r->seed));
	if (r->start)
		fault_put(&o, "start=%llu", ULL(r->start));
	if (r->end)
		fault_put(&o, "end=%llu", ULL(r->end));
	/* a file's ranges, many as a fragmented file's extents, as they were given: its path */
	if (r->sectors_file)
		fault_put(&o, "sectors_file=%s", r->sectors_file);
	for (size_t i = 0; !r->sectors_file && i < r->sectors.nr; i++) {
		const struct sector_range *a = &r->sectors.r[i];

		if (i)
			fault_append(&o, "/%llu-%llu", ULL(a->start), ULL(a->end - 1));
		else
			fault_put(&o, "sectors=%llu-%llu", ULL(a->start), ULL(a->end - 1));
	}
	if (r->times)
		fault_put(&o, "times=%llu", ULL(r->times));
	if (r->interval != d.interval)
		fault_put(&o, "interval=%llu", ULL(r->interval));
	if (!r->enable)
		fault_put(&o, "enable=0");
	if (r->error_file)
		fault_put(&o, "error_file=%s", r->error_file);
	if (r->sticky)
		fault_put(&o, "sticky=1");
	if (r->up_ms)
		fault_put(&o, "up=%llu", ULL(r->up_ms));
	if (r->down_ms)
		fault_put(&o, "down=%llu", ULL(r->down_ms));
	if (r->error_reads)
		fault_put(&o, "error_reads=1");
	if (r->error_writes)
		fault_put(&o, "error_writes=1");
	if (r->drop_writes)
		fault_put(&o, "drop_writes=1");
	if (r->corrupt_bio_byte)
		fault_put(&o, "corrupt_bio_byte=%llu", ULL(r->corrupt_bio_byte));
	if (r->corrupt_value)
		fault_put(&o, "corrupt_value=%u", r->corrupt_value);
	if (r->corrupt_on != d.corrupt_on) {
		fault_format_ops(r->corrupt_on, ops, sizeof(ops));
		fault_put(&o, "corrupt_on=%s", ops);
	}
	if (r->random_read_corrupt)
		fault_put(&o, "random_read_corrupt=%u", r->random_read_corrupt);
	if (r->random_write_corrupt)
		fault_put(&o, "random_write_corrupt=%u", r->random_write_corrupt);
	if (r->delay_read_ms)
		fault_put(&o, "delay_read=%llu", ULL(r->delay_read_ms));
	if (r->delay_write_ms)
		fault_put(&o, "delay_write=%llu", ULL(r->delay_write_ms));
	if (r->spike_ms)
		fault_put(&o, "spike_ms=%llu", ULL(r->spike_ms));
	if (r->spike_prob)
		fault_put(&o, "spike_prob=%u", r->spike_prob);
	if (!o.used) /* all defaults: still something a spec takes */
		fault_put(&o, "error=none");
	return (int)o.used;
}
