/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_crash.c - rqdisk-crash's library: the log parser's checks, the
 * points of each --at, the states made there, the IDs' grammar, and the
 * overlay's bytes against a naive replay onto a copy of BASE.
 */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_driver.h"
#include "crash_aim.h"
#include "crash_dedup.h"
#include "crash_joint.h"
#include "crash_joint_id.h"
#include "crash_log.h"
#include "crash_overlay.h"
#include "crash_shard.h"
#include "crash_state.h"

/* ------------------------------------------------------------ logs made in memory */

struct tlog {
	uint8_t *buf;
	size_t len;
	uint32_t ss;
	uint64_t nr;
};

static void tlog_block(struct tlog *t, const void *p, size_t n)
{
	t->buf = realloc(t->buf, t->len + t->ss);
	ck_assert_ptr_nonnull(t->buf);
	memset(t->buf + t->len, 0, t->ss);
	memcpy(t->buf + t->len, p, n);
	t->len += t->ss;
}

static void tlog_super(struct tlog *t)
{
	struct log_write_super s = {
		.magic = htole64(LOG_WRITES_MAGIC),
		.version = htole64(LOG_WRITES_VERSION),
		.nr_entries = htole64(t->nr),
		.sectorsize = htole32(t->ss),
	};

	memcpy(t->buf, &s, sizeof(s));
}

static void tlog_init(struct tlog *t, uint32_t ss)
{
	memset(t, 0, sizeof(*t));
	t->ss = ss;
	tlog_block(t, "", 0);
	tlog_super(t);
}

/* An entry; a write's data blocks hold seed + block index, byte by byte. */
static void tlog_entry(struct tlog *t, uint64_t sector, uint64_t nr, uint64_t flags,
		       const char *mark, unsigned int seed)
{
	struct log_write_entry e = {
		.sector = htole64(sector),
		.nr_sectors = htole64(nr),
		.flags = htole64(flags),
		.data_len = htole64(mark ? strlen(mark) : 0),
	};
	uint8_t blk[65536];

	memcpy(blk, &e, sizeof(e));
	if (mark)
		memcpy(blk + sizeof(e), mark, strlen(mark));
	tlog_block(t, blk, sizeof(e) + (mark ? strlen(mark) : 0));
	for (uint64_t b = 0; !(flags & (LOG_DISCARD_FLAG | LOG_MARK_FLAG)) && b < nr; b++) {
		for (uint32_t i = 0; i < t->ss; i++)
			blk[i] = (uint8_t)(seed * 131 + b * 7 + i);
		tlog_block(t, blk, t->ss);
	}
	t->nr++;
	tlog_super(t);
}

static const uint64_t W = 0, F = LOG_FLUSH_FLAG, U = LOG_FUA_FLAG, D = LOG_DISCARD_FLAG,
		      M = LOG_MARK_FLAG;

/* 0 w 1 w 2 F 3 w(fua) 4 w 5 mark a 6 d 7 w 8 F 9 w : image of 64 sectors of 512 */
static void tlog_sample(struct tlog *t)
{
	tlog_init(t, 512);
	tlog_entry(t, 0, 2, W, NULL, 1);
	tlog_entry(t, 4, 4, W, NULL, 2);
	tlog_entry(t, 0, 0, F, NULL, 0);
	tlog_entry(t, 2, 2, U, NULL, 3);
	tlog_entry(t, 8, 1, W, NULL, 4);
	tlog_entry(t, 0, 0, M, "a", 0);
	tlog_entry(t, 4, 2, D, NULL, 0);
	tlog_entry(t, 0, 1, W, NULL, 5);
	tlog_entry(t, 0, 0, F, NULL, 0);
	tlog_entry(t, 1, 1, W, NULL, 6);
}

static int parse(struct tlog *t, uint64_t image, struct crash_log *log, char *why)
{
	return crash_log_parse(t->buf, t->len, image, log, why, 256);
}

START_TEST(good_logs_are_read)
{
	struct crash_log log;
	struct tlog t;
	char why[256] = "";

	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	ck_assert_uint_eq(log.nr, 10);
	ck_assert_uint_eq(log.nr_flushes, 2);
	ck_assert_uint_eq(log.flushes[1], 8);
	ck_assert_uint_eq(log.nr_fuas, 1);
	ck_assert_uint_eq(log.nr_marks, 1);
	ck_assert_uint_eq(log.e[1].off, 4 * 512);
	ck_assert_uint_eq(log.e[1].len, 4 * 512);
	ck_assert_uint_eq(log.e[1].data[0], (uint8_t)(2 * 131));
	ck_assert_ptr_null(log.e[6].data);
	ck_assert_int_eq(log.e[5].mark_len, 1);
	ck_assert_int_eq(log.e[5].mark[0], 'a');
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

/* Damages the sample log by f, and expects a refusal saying text. */
static void refused(void (*f)(struct tlog *), uint64_t image, const char *text)
{
	struct crash_log log;
	struct tlog t;
	char why[256] = "";

	tlog_sample(&t);
	f(&t);
	ck_assert_msg(parse(&t, image, &log, why) == -EINVAL, "taken, not '%s'", text);
	ck_assert_msg(strstr(why, text), "'%s' does not say '%s'", why, text);
	ck_assert_ptr_null(strchr(why, '\n'));
	free(t.buf);
}

static void bad_magic(struct tlog *t) { t->buf[0] ^= 1; }
static void bad_version(struct tlog *t) { t->buf[8] = 2; }
static void bad_ss(struct tlog *t) { t->buf[24] = 0; t->buf[25] = 3; } /* 768 */
static void small_ss(struct tlog *t) { t->buf[24] = 0; t->buf[25] = 1; } /* 256 */
static void short_super(struct tlog *t) { t->len = 20; }
static void more_entries(struct tlog *t) { t->buf[16] = 11; }
static void lying_count(struct tlog *t) { t->buf[16 + 6] = 0x10; }
static void cut_data(struct tlog *t) { t->len -= 1; }
static void unknown_flag(struct tlog *t) { t->buf[512 * 4 + 16] |= 0x40; } /* entry 1 */
/* entry 5 (a mark) lies at block 1 + 3 + 5 + 1 + 3 + 2 = 15 */
static void long_mark(struct tlog *t) { t->buf[512 * 15 + 24] = 0xf0; t->buf[512 * 15 + 25] = 1; }
static void mark_sectors(struct tlog *t) { t->buf[512 * 15 + 8] = 1; }
static void empty_entry(struct tlog *t) { t->buf[512 * 15 + 16] = 0; }
static void nothing(struct tlog *t) { (void)t; }

START_TEST(bad_logs_are_refused_naming_the_entry)
{
	refused(bad_magic, 64 * 512, "bad magic");
	refused(bad_version, 64 * 512, "version 2");
	refused(bad_ss, 64 * 512, "sectorsize 768");
	refused(small_ss, 64 * 512, "sectorsize 256");
	refused(short_super, 64 * 512, "too short");
	refused(more_entries, 64 * 512, "entry 10: the log ends before it");
	refused(lying_count, 64 * 512, "nr_entries says");
	refused(cut_data, 64 * 512, "entry 9: its 512 bytes of data end past the log");
	refused(unknown_flag, 64 * 512, "entry 1: unknown flags");
	refused(long_mark, 64 * 512, "entry 5: a mark longer than its block");
	refused(mark_sectors, 64 * 512, "entry 5: a mark with sectors");
	refused(empty_entry, 64 * 512, "entry 5: no sectors and no flush");
	/* entry 1 writes sectors 4..7: an image of 7 sectors is too small */
	refused(nothing, 7 * 512, "entry 1: sectors 4+4 end past the image");
}
END_TEST

/* ------------------------------------------------------------ points and states */

static void ids_of(const struct crash_log *log, const struct crash_at *at,
		   const struct crash_gen_opts *o, char ***out, size_t *nr, size_t *per_class)
{
	struct crash_gen g;
	struct crash_id id;
	enum crash_class cls;
	int ret;

	*out = NULL;
	*nr = 0;
	ck_assert_int_eq(crash_gen_init(&g, log, at, o), 0);
	while ((ret = crash_gen_next(&g, &id, &cls)) == 1) {
		*out = realloc(*out, (*nr + 1) * sizeof(**out));
		(*out)[(*nr)++] = crash_id_format(&id);
		if (per_class)
			per_class[cls]++;
		crash_id_free(&id);
	}
	ck_assert_int_eq(ret, 0);
	crash_gen_free(&g);
}

static void free_ids(char **ids, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(ids[i]);
	free(ids);
}

static void expect_ids(const struct crash_log *log, const struct crash_at *at, const char *want)
{
	struct crash_gen_opts o = { .atomic = 512 };
	char **ids, text[1024] = "";
	size_t nr;

	ids_of(log, at, &o, &ids, &nr, NULL);
	for (size_t i = 0; i < nr; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s", i ? " " : "",
			 ids[i]);
	ck_assert_str_eq(text, want);
	free_ids(ids, nr);
}

START_TEST(points_for_each_at)
{
	struct crash_log log;
	struct tlog t;
	char why[256], *marks[] = { "a" };
	size_t lens[] = { 1 };

	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	expect_ids(&log, &(struct crash_at){ .kinds = AT_FLUSH }, "flush:1 flush:2 end");
	expect_ids(&log, &(struct crash_at){ .kinds = AT_FUA }, "fua:1 end");
	expect_ids(&log, &(struct crash_at){ .marks = marks, .mark_lens = lens, .nr_marks = 1 },
		   "mark:a end");
	expect_ids(&log, &(struct crash_at){ .every = 4 }, "entry:4 entry:8 end");
	expect_ids(&log, &(struct crash_at){ .kinds = AT_FLUSH | AT_FUA, .every = 3 },
		   "flush:1 entry:3 fua:1 entry:6 flush:2 entry:9 end");
	/* the FUA write's point and entry 4, the flush at 8 and entry 8: one state each */
	expect_ids(&log, &(struct crash_at){ .kinds = AT_FLUSH | AT_FUA, .every = 4 },
		   "flush:1 fua:1 flush:2 end");
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

/* 0 w 1 F 2 mark off 3 mark user [mark on] w F w: the writes while logging was off are missing */
static void tlog_gap(struct tlog *t, bool back_on)
{
	tlog_init(t, 512);
	tlog_entry(t, 0, 1, W, NULL, 1);
	tlog_entry(t, 0, 0, F, NULL, 0);
	tlog_entry(t, 0, 0, M, LOG_WRITES_GAP_MARK, 0);
	tlog_entry(t, 0, 0, M, "user", 0);
	if (back_on)
		tlog_entry(t, 0, 0, M, LOG_WRITES_GAP_END_MARK, 0);
	tlog_entry(t, 2, 1, W, NULL, 2);
	tlog_entry(t, 0, 0, F, NULL, 0);
	tlog_entry(t, 3, 1, W, NULL, 3);
}

START_TEST(points_past_a_gap_are_skipped_unless_asked)
{
	char *marks[] = { LOG_WRITES_GAP_MARK, "user" };
	size_t lens[] = { strlen(LOG_WRITES_GAP_MARK), 4 };
	struct crash_at at = { .kinds = AT_FLUSH, .marks = marks, .mark_lens = lens,
			       .nr_marks = 2 };
	struct crash_gen_opts o = { .atomic = 512 };
	struct crash_log log;
	struct crash_gen g;
	struct tlog t;
	char why[256];

	for (int on = 0; on < 2; on++) {
		tlog_gap(&t, on);
		ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
		ck_assert_int_eq(log.gap_off, 2);
		ck_assert_uint_eq(log.gap_on, on ? 4 : log.nr);
		ck_assert(!crash_log_past_gap(&log, 3)); /* just after the mark: nothing missing yet */
		ck_assert(crash_log_past_gap(&log, 4));
		/* flush:1 and the mark that starts the gap; not the user's mark, flush:2, the end */
		o.past_gaps = false;
		expect_ids(&log, &at, "flush:1 mark:rqdisk-log-disabled");
		ck_assert_int_eq(crash_gen_init(&g, &log, &at, &o), 0);
		ck_assert_uint_eq(g.nr_skipped, 3);
		crash_gen_free(&g);
		o.past_gaps = true;
		ck_assert_int_eq(crash_gen_init(&g, &log, &at, &o), 0);
		ck_assert_uint_eq(g.nr_skipped, 0);
		ck_assert_uint_eq(g.nr_pts, 5);
		crash_gen_free(&g);
		crash_log_free(&log);
		free(t.buf);
	}
	/* a log with no gap */
	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	ck_assert_int_eq(log.gap_off, -1);
	ck_assert(!crash_log_past_gap(&log, log.nr));
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

static void at_refused(const struct crash_log *log, const struct crash_at *at, const char *text)
{
	char why[512] = "";

	ck_assert_int_eq(crash_at_check(log, at, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, text), "'%s' does not say '%s'", why, text);
	ck_assert_ptr_null(strchr(why, '\n'));
}

START_TEST(points_that_match_nothing_are_refused)
{
	char *nosuch[] = { "nosuch" }, *a[] = { "a" };
	size_t nosuch_len[] = { 6 }, a_len[] = { 1 };
	struct crash_log log;
	struct tlog t;
	char why[512];

	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	at_refused(&log, &(struct crash_at){ .marks = nosuch, .mark_lens = nosuch_len, .nr_marks = 1 },
		   "--at mark:nosuch: LOG has no mark of that name (its marks: a)");
	at_refused(&log, &(struct crash_at){ .every = 10 }, "--at 10: LOG has only 10 entries");
	ck_assert_int_eq(crash_at_check(&log, &(struct crash_at){ .kinds = AT_FLUSH | AT_FUA,
			 .marks = a, .mark_lens = a_len, .nr_marks = 1, .every = 9 }, why, sizeof(why)), 0);
	crash_log_free(&log);
	free(t.buf);
	/* no FUA, no flush, no mark: as QEMU writes a log without flushes */
	tlog_init(&t, 512);
	tlog_entry(&t, 0, 1, W, NULL, 1);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	ck_assert(crash_log_qemu_shaped(&log));
	at_refused(&log, &(struct crash_at){ .kinds = AT_FUA }, "LOG has no FUA entries");
	at_refused(&log, &(struct crash_at){ .kinds = AT_FLUSH }, "LOG has no FLUSH entries");
	at_refused(&log, &(struct crash_at){ .marks = a, .mark_lens = a_len, .nr_marks = 1 },
		   "(it has no marks)");
	/* the default --at flush is not a request: the end alone is checked */
	ck_assert_int_eq(crash_at_check(&log, &(struct crash_at){ .kinds = AT_FLUSH,
			 .flush_by_default = true }, why, sizeof(why)), 0);
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

START_TEST(volatile_sets_follow_the_flushes)
{
	struct crash_log log;
	struct tlog t;
	char why[256];
	size_t v[16], n;

	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	ck_assert_uint_eq(crash_volatile(&log, 2, v), 2); /* before flush 1: entries 0, 1 */
	n = crash_volatile(&log, 8, v);                   /* before flush 2: not the FUA 3 */
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(v[0], 4);
	ck_assert_uint_eq(v[1], 6);
	ck_assert_uint_eq(v[2], 7);
	ck_assert_uint_eq(crash_volatile(&log, 10, v), 1);
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

/* A write that carries the flush (PREFLUSH): what came before is durable, not the write itself. */
START_TEST(a_flush_with_data_is_volatile_unless_fua)
{
	struct crash_log log;
	struct tlog t;
	char why[256];
	size_t v[16];

	tlog_init(&t, 512);
	tlog_entry(&t, 0, 1, W, NULL, 1);
	tlog_entry(&t, 1, 1, F, NULL, 2);     /* 1: PREFLUSH write */
	tlog_entry(&t, 2, 1, W, NULL, 3);
	tlog_entry(&t, 3, 1, F | U, NULL, 4); /* 3: PREFLUSH|FUA write */
	tlog_entry(&t, 4, 1, W, NULL, 5);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	ck_assert_uint_eq(crash_volatile(&log, 3, v), 2);
	ck_assert_uint_eq(v[0], 1);
	ck_assert_uint_eq(v[1], 2);
	ck_assert_uint_eq(crash_volatile(&log, 5, v), 1);
	ck_assert_uint_eq(v[0], 4);
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

START_TEST(torn_lengths_are_one_half_and_all_but_one)
{
	uint64_t ks[3];

	ck_assert_uint_eq(crash_torn_ks(0, ks), 0);
	ck_assert_uint_eq(crash_torn_ks(1, ks), 0);
	ck_assert_uint_eq(crash_torn_ks(2, ks), 1);
	ck_assert_uint_eq(ks[0], 1);
	ck_assert_uint_eq(crash_torn_ks(3, ks), 2);
	ck_assert_uint_eq(ks[1], 2);
	ck_assert_uint_eq(crash_torn_ks(8, ks), 3);
	ck_assert_uint_eq(ks[0], 1);
	ck_assert_uint_eq(ks[1], 4);
	ck_assert_uint_eq(ks[2], 7);
}
END_TEST

static uint64_t torn_bytes_of(const struct crash_log *log, const char *text)
{
	struct crash_spec spec;
	struct crash_id id;
	char why[256];

	ck_assert_msg(!crash_id_parse(text, &id, why, sizeof(why)), "%s", why);
	if (crash_resolve(log, &id, &spec, why, sizeof(why)))
		spec.torn_bytes = 0;
	crash_id_free(&id);
	return spec.torn_bytes;
}

/*
 * A write tears at the disk's units, aligned from its byte 0, not at
 * multiples of the unit from the write's start: each unit is all old or
 * all new, a unit the write starts or ends inside counted whole.
 */
START_TEST(writes_tear_at_the_disks_aligned_units)
{
	struct crash_gen_opts o = { .torn = true, .atomic = 4096 };
	struct crash_at at = { .kinds = AT_FLUSH };
	struct crash_log log;
	struct crash_gen g;
	struct crash_id id;
	enum crash_class cls;
	struct tlog t;
	char why[256], got[512] = "";

	tlog_init(&t, 512);
	tlog_entry(&t, 1, 8, W, NULL, 1);  /* bytes 512..4608: units 0 and 1 */
	tlog_entry(&t, 8, 8, W, NULL, 2);  /* 4096..8192: unit 1 alone */
	tlog_entry(&t, 6, 12, W, NULL, 3); /* 3072..9216: units 0, 1 and 2 */
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	ck_assert_uint_eq(torn_bytes_of(&log, "end+torn:0@4096/1"), 4096 - 512);
	ck_assert_uint_eq(torn_bytes_of(&log, "end+torn:1@4096/1"), 0);
	ck_assert_uint_eq(torn_bytes_of(&log, "end+torn:2@4096/1"), 4096 - 3072);
	ck_assert_uint_eq(torn_bytes_of(&log, "end+torn:2@4096/2"), 8192 - 3072);
	ck_assert_uint_eq(torn_bytes_of(&log, "end+torn:2@4096/3"), 0);
	/* at 512-byte units every sector is one: from the write's start, as before */
	ck_assert_uint_eq(torn_bytes_of(&log, "end+torn:2@512/5"), 5 * 512);
	ck_assert_int_eq(crash_gen_init(&g, &log, &at, &o), 0);
	while (crash_gen_next(&g, &id, &cls) == 1) {
		char *text = crash_id_format(&id);

		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s ", text);
		free(text);
		crash_id_free(&id);
	}
	ck_assert_str_eq(got, "end end+torn:0@4096/1 end+torn:2@4096/1 end+torn:2@4096/2 ");
	crash_gen_free(&g);
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

static uint64_t choose(uint64_t n, uint64_t k)
{
	uint64_t c = 1;

	for (uint64_t i = 1; i <= k; i++)
		c = c * (n - k + i) / i;
	return c;
}

/* One epoch of E writes then a flush: --drop K makes sum C(E, i), i <= K, states there. */
START_TEST(drop_subsets_are_counted)
{
	for (unsigned int e = 0; e <= 7; e++) {
		for (unsigned int k = 0; k <= 4; k++) {
			struct crash_gen_opts o = { .drop = k, .atomic = 512 };
			struct crash_at at = { .kinds = AT_FLUSH };
			size_t per[NR_CLASSES] = { 0 }, nr, want = 0;
			struct crash_log log;
			struct tlog t;
			char why[256], **ids;

			tlog_init(&t, 512);
			for (unsigned int i = 0; i < e; i++)
				tlog_entry(&t, i, 1, W, NULL, i);
			tlog_entry(&t, 0, 0, F, NULL, 0);
			ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
			ids_of(&log, &at, &o, &ids, &nr, per);
			for (unsigned int i = 0; i <= k && i <= e; i++)
				want += choose(e, i);
			/* the flush point, and the end (nothing volatile after the flush) */
			ck_assert_uint_eq(nr, want + 1);
			ck_assert_uint_eq(per[CLASS_PREFIX], 2);
			ck_assert_uint_eq(per[CLASS_DROP], want - 1);
			/* every subset once */
			for (size_t i = 0; i < nr; i++)
				for (size_t j = i + 1; j < nr; j++)
					ck_assert_str_ne(ids[i], ids[j]);
			free_ids(ids, nr);
			crash_log_free(&log);
			free(t.buf);
		}
	}
}
END_TEST

START_TEST(samples_are_reproducible_under_a_seed)
{
	struct crash_at at = { .kinds = AT_FLUSH };
	struct crash_log log;
	struct tlog t;
	char why[256], **a, **b, **c;
	size_t na, nb, nc, per[NR_CLASSES] = { 0 };
	bool differ = false;

	tlog_init(&t, 512);
	for (unsigned int i = 0; i < 12; i++)
		tlog_entry(&t, i, 1, W, NULL, i);
	tlog_entry(&t, 0, 0, F, NULL, 0);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	ids_of(&log, &at, &(struct crash_gen_opts){ .sample = 20, .seed = 7, .atomic = 512 }, &a,
	       &na, per);
	ids_of(&log, &at, &(struct crash_gen_opts){ .sample = 20, .seed = 7, .atomic = 512 }, &b,
	       &nb, NULL);
	ids_of(&log, &at, &(struct crash_gen_opts){ .sample = 20, .seed = 8, .atomic = 512 }, &c,
	       &nc, NULL);
	ck_assert_uint_eq(per[CLASS_SAMPLE], 20);
	ck_assert_uint_eq(na, nb);
	for (size_t i = 0; i < na; i++)
		ck_assert_str_eq(a[i], b[i]);
	for (size_t i = 0; i < na && i < nc; i++)
		differ |= strcmp(a[i], c[i]) != 0;
	ck_assert_msg(differ, "another seed drew the same subsets");
	/* distinct subsets */
	for (size_t i = 0; i < na; i++)
		for (size_t j = i + 1; j < na; j++)
			ck_assert_str_ne(a[i], a[j]);
	free_ids(a, na);
	free_ids(b, nb);
	free_ids(c, nc);
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

/* ------------------------------------------------------------ IDs */

static void round_trip(const char *text)
{
	struct crash_id id;
	char why[256], *again;

	ck_assert_msg(!crash_id_parse(text, &id, why, sizeof(why)), "'%s' refused: %s", text, why);
	again = crash_id_format(&id);
	ck_assert_str_eq(again, text);
	free(again);
	crash_id_free(&id);
}

static void id_refused(const char *text)
{
	struct crash_id id;
	char why[256] = "";

	ck_assert_msg(crash_id_parse(text, &id, why, sizeof(why)) == -EINVAL, "'%s' taken", text);
	ck_assert_msg(strstr(why, "bad state ID"), "'%s': %s", text, why);
	ck_assert_ptr_null(strchr(why, '\n'));
}

START_TEST(ids_round_trip)
{
	const char *good[] = {
		"flush:1", "fua:3", "entry:0", "entry:12", "end", "mark:a", "mark:a#2",
		"mark:x%2By%25%23%2C%20", "mark:", "flush:2+drop:4", "flush:2+drop:4,6,7",
		"end+torn:9@512/1", "flush:1+drop:0+torn:1@4096/3", "entry:4611686018427387904",
	};
	const char *bad[] = {
		"", "flush", "flush:0", "flush:01", "flush:-1", "fua:", "entry:x", "end:1",
		"mark:a#1", "mark:a#", "mark:a b", "mark:%zz", "mark:%61", "mark:%2b", "flush:1+drop:", "flush:1+drop:3,3",
		"flush:1+drop:4,2", "flush:1+torn:1@512", "flush:1+torn:1/2", "end+", "end ",
		"flush:1+torn:1@512/1+drop:2", "flush:99999999999999999999", "flush:225555555555555555555",
		"entry:4611686018427387905",
	};
	struct crash_id id = { .kind = PT_MARK, .k = 1, .name = (char[]){ 'a', '\n', 0, '+' },
			       .name_len = 4 };
	struct crash_id back;
	char why[256], *text;

	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		round_trip(good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		id_refused(bad[i]);
	/* a refusal says what is wrong where the ID alone does not show it */
	ck_assert_int_eq(crash_id_parse("flush:0", &back, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "bad state ID 'flush:0' at '0': flush and fua count from 1");
	ck_assert_int_eq(crash_id_parse("flush:1+drop:4,2", &back, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "bad state ID 'flush:1+drop:4,2' at '2': the dropped entries must "
			      "rise, each once");
	/* a refusal quotes the ID as a line can show it */
	ck_assert_int_eq(crash_id_parse("mark:\n\x01", &back, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "bad state ID 'mark:?\?' at '?\?'");
	/* any bytes in a mark's name */
	text = crash_id_format(&id);
	ck_assert_str_eq(text, "mark:a%0A%00%2B");
	ck_assert_int_eq(crash_id_parse(text, &back, why, sizeof(why)), 0);
	ck_assert_uint_eq(back.name_len, 4);
	ck_assert_mem_eq(back.name, id.name, 4);
	crash_id_free(&back);
	free(text);
}
END_TEST

START_TEST(generated_ids_round_trip_and_resolve)
{
	struct crash_gen_opts o = { .drop = 2, .sample = 3, .torn = true, .atomic = 512, .seed = 3 };
	struct crash_at at = { .kinds = AT_FLUSH | AT_FUA, .every = 3 };
	struct crash_log log;
	struct crash_spec spec;
	struct tlog t;
	char why[256], **ids;
	size_t nr, per[NR_CLASSES] = { 0 };

	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	ids_of(&log, &at, &o, &ids, &nr, per);
	ck_assert_uint_gt(per[CLASS_TORN], 0);
	ck_assert_uint_gt(per[CLASS_SAMPLE], 0);
	for (size_t i = 0; i < nr; i++) {
		struct crash_id id;

		round_trip(ids[i]);
		ck_assert_int_eq(crash_id_parse(ids[i], &id, why, sizeof(why)), 0);
		ck_assert_msg(!crash_resolve(&log, &id, &spec, why, sizeof(why)), "%s", why);
		crash_id_free(&id);
	}
	free_ids(ids, nr);
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

static void unresolved(const struct crash_log *log, const char *text)
{
	struct crash_spec spec;
	struct crash_id id;
	char why[256] = "";

	ck_assert_int_eq(crash_id_parse(text, &id, why, sizeof(why)), 0);
	ck_assert_msg(crash_resolve(log, &id, &spec, why, sizeof(why)) == -EINVAL, "%s taken", text);
	ck_assert_msg(strstr(why, text), "'%s' does not name %s", why, text);
	crash_id_free(&id);
}

START_TEST(ids_not_in_the_log_are_refused)
{
	struct crash_log log;
	struct tlog t;
	char why[256];

	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	unresolved(&log, "flush:3");
	unresolved(&log, "fua:2");
	unresolved(&log, "mark:b");
	unresolved(&log, "mark:a#2");
	unresolved(&log, "entry:11");
	unresolved(&log, "flush:2+drop:3");  /* a FUA write is durable */
	unresolved(&log, "flush:2+drop:1");  /* before the last flush */
	unresolved(&log, "flush:2+drop:8");  /* the flush itself: not a write */
	unresolved(&log, "flush:2+drop:9");  /* after the point */
	unresolved(&log, "flush:2+torn:6@512/1"); /* a discard */
	unresolved(&log, "flush:1+torn:1@512/4"); /* 4 of 4 units: not torn */
	unresolved(&log, "flush:1+torn:1@768/1");
	unresolved(&log, "flush:1+drop:1+torn:1@512/1");
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

/* ------------------------------------------------------------ the overlay */

#define IMG_SECTORS 48

static int memfd_of(const uint8_t *buf, size_t len)
{
	int fd = memfd_create("base", 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, buf, len, 0), (ssize_t)len);
	return fd;
}

/* The state by hand: every entry before pos onto a copy of BASE, but the dropped ones. */
static void naive(const struct crash_log *log, const struct crash_spec *spec, uint8_t *img)
{
	for (size_t i = 0; i < spec->pos; i++) {
		const struct crash_entry *e = &log->e[i];
		uint64_t len = e->len;
		bool drop = false;

		for (size_t d = 0; d < spec->nr_drop; d++)
			drop |= spec->drop[d] == i;
		if (drop || (e->flags & LOG_MARK_FLAG) || !e->len)
			continue;
		if ((long)i == spec->torn_e)
			len = spec->torn_bytes;
		if (e->flags & LOG_DISCARD_FLAG)
			memset(img + e->off, 0, len);
		else
			memcpy(img + e->off, e->data, len);
	}
}

static void random_log(struct tlog *t, unsigned int seed)
{
	srand(seed);
	tlog_init(t, 512);
	for (int i = 0, n = 5 + rand() % 40; i < n; i++) {
		int r = rand() % 10;
		uint64_t s = (uint64_t)(rand() % IMG_SECTORS);
		uint64_t c = 1 + (uint64_t)(rand() % 12);

		if (s + c > IMG_SECTORS)
			c = IMG_SECTORS - s;
		if (r == 0)
			tlog_entry(t, 0, 0, F, NULL, 0);
		else if (r == 1)
			tlog_entry(t, s, c, D, NULL, 0);
		else if (r == 2)
			tlog_entry(t, s, c, U, NULL, (unsigned int)rand());
		else if (r == 3)
			tlog_entry(t, 0, 0, M, "m", 0);
		else
			tlog_entry(t, s, c, W, NULL, (unsigned int)rand());
	}
}

static void compare(struct ovl *o, const uint8_t *want, unsigned int seed, const char *id)
{
	uint8_t got[IMG_SECTORS * 512];

	ck_assert_int_eq(ovl_read(o, got, sizeof(got), 0), (ssize_t)sizeof(got));
	ck_assert_msg(!memcmp(got, want, sizeof(got)), "seed %u, %s: the whole image differs", seed,
		      id);
	for (int i = 0; i < 20; i++) {
		size_t off = (size_t)(rand() % (int)sizeof(got)), len = (size_t)(rand() % 3000);
		uint8_t part[3000];
		ssize_t n = ovl_read(o, part, len, off);

		if (len > sizeof(got) - off)
			len = sizeof(got) - off;
		ck_assert_int_eq(n, (ssize_t)len);
		ck_assert_msg(!memcmp(part, want + off, len), "seed %u, %s: %zu+%zu differs", seed,
			      id, off, len);
	}
}

START_TEST(overlay_reads_equal_a_naive_replay)
{
	struct crash_gen_opts o = { .drop = 2, .sample = 4, .torn = true, .atomic = 512 };
	struct crash_at at = { .kinds = AT_FLUSH | AT_FUA, .every = 2 };
	uint8_t base[IMG_SECTORS * 512];
	size_t states = 0;

	for (unsigned int seed = 1; seed <= 200; seed++) {
		struct ovl_layer *durable = NULL;
		struct crash_log log;
		struct crash_gen g;
		struct crash_id id;
		enum crash_class cls;
		struct tlog t;
		char why[256];
		int fd;

		random_log(&t, seed);
		for (size_t i = 0; i < sizeof(base); i++)
			base[i] = (uint8_t)rand();
		fd = memfd_of(base, sizeof(base));
		ck_assert_int_eq(parse(&t, sizeof(base), &log, why), 0);
		o.seed = seed;
		ck_assert_int_eq(crash_gen_init(&g, &log, &at, &o), 0);
		while (crash_gen_next(&g, &id, &cls) == 1) {
			uint8_t want[sizeof(base)];
			struct crash_spec spec;
			struct ovl ov;
			char *text = crash_id_format(&id);

			ck_assert_int_eq(crash_resolve(&log, &id, &spec, why, sizeof(why)), 0);
			memcpy(want, base, sizeof(base));
			naive(&log, &spec, want);
			ck_assert_int_eq(ovl_build(&ov, &log, &spec, fd, sizeof(base), NULL), 0);
			compare(&ov, want, seed, text);
			ovl_free(&ov);
			/* the same on the durable layer states share, as rqdisk-crash builds them */
			ck_assert_int_eq(ovl_layer_advance(&durable, &log, spec.pos), 0);
			ck_assert_int_eq(ovl_build(&ov, &log, &spec, fd, sizeof(base), durable), 0);
			ck_assert_ptr_eq(ov.durable, durable);
			compare(&ov, want, seed, text);
			ovl_free(&ov);
			free(text);
			crash_id_free(&id);
			states++;
		}
		crash_gen_free(&g);
		ovl_layer_put(durable);
		durable = NULL;
		crash_log_free(&log);
		close(fd);
		free(t.buf);
	}
	ck_assert_uint_gt(states, 1000);
}
END_TEST

START_TEST(cow_writes_stay_in_their_state)
{
	uint8_t base[IMG_SECTORS * 512], want[sizeof(base)], zeros[9000] = { 0 }, data[9000];
	struct crash_spec spec = { .pos = 0, .torn_e = -1 };
	struct crash_log log;
	struct ovl a, b;
	struct tlog t;
	char why[256];
	int fd;

	for (size_t i = 0; i < sizeof(base); i++)
		base[i] = (uint8_t)(i * 7);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 1);
	fd = memfd_of(base, sizeof(base));
	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, sizeof(base), &log, why), 0);
	spec.pos = log.nr;
	ck_assert_int_eq(ovl_build(&a, &log, &spec, fd, sizeof(base), NULL), 0);
	ck_assert_int_eq(ovl_build(&b, &log, &spec, fd, sizeof(base), NULL), 0);
	memcpy(want, base, sizeof(base));
	naive(&log, &spec, want);
	/* unaligned, across blocks: the rest of each block is kept */
	ck_assert_int_eq(ovl_write(&a, data, 9000, 1000), 9000);
	ck_assert_int_eq(ovl_write(&a, NULL, 3000, 12000), 3000);
	ck_assert_int_eq(ovl_write(&a, data, 10, sizeof(base) - 10), 10);
	ck_assert_int_eq(ovl_write(&a, data, 11, sizeof(base) - 10), -ENOSPC);
	compare(&b, want, 0, "the other state");
	memcpy(want + 1000, data, 9000);
	memcpy(want + 12000, zeros, 3000);
	memcpy(want + sizeof(base) - 10, data, 10);
	compare(&a, want, 0, "the written state");
	ck_assert_int_eq(ovl_read(&a, data, 100, sizeof(base)), 0);
	ovl_free(&a);
	ovl_free(&b);
	crash_log_free(&log);
	close(fd);
	free(t.buf);
}
END_TEST

/* The first n calls succeed, the rest fail, as when memory runs out. */
static int allocs_left;

static void *failing_calloc(size_t nmemb, size_t size)
{
	return allocs_left-- > 0 ? calloc(nmemb, size) : NULL;
}

/* A write the COW map finds no memory for fails, and the state reads as before it, not zeros. */
START_TEST(cow_write_without_memory_fails_and_keeps_the_state)
{
	uint8_t base[IMG_SECTORS * 512], want[sizeof(base)], data[OVL_COW_BLOCK];
	struct crash_spec spec = { .torn_e = -1 };
	struct crash_log log;
	struct ovl o;
	struct tlog t;
	char why[256];
	int fd;

	for (size_t i = 0; i < sizeof(base); i++)
		base[i] = (uint8_t)(i * 5 + 1);
	memset(data, 0xee, sizeof(data));
	fd = memfd_of(base, sizeof(base));
	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, sizeof(base), &log, why), 0);
	spec.pos = log.nr;
	memcpy(want, base, sizeof(base));
	naive(&log, &spec, want);
	/* no memory for a block's node, then none for its data: part of a block, and a whole one */
	for (int n = 0; n < 2; n++) {
		ck_assert_int_eq(ovl_build(&o, &log, &spec, fd, sizeof(base), NULL), 0);
		o.cow_calloc = failing_calloc;
		allocs_left = n;
		ck_assert_int_eq(ovl_write(&o, data, 100, 8192 + 7), -ENOMEM);
		allocs_left = n;
		ck_assert_int_eq(ovl_write(&o, data, OVL_COW_BLOCK, 4096), -ENOMEM);
		compare(&o, want, (unsigned int)n, "after the failed writes");
		ovl_free(&o);
	}
	crash_log_free(&log);
	close(fd);
	free(t.buf);
}
END_TEST

START_TEST(whole_images_are_written)
{
	uint8_t base[IMG_SECTORS * 512], want[sizeof(base)], got[sizeof(base)];
	struct ovl_layer *durable = NULL;
	struct crash_id id;
	struct crash_spec spec;
	struct crash_log log;
	struct ovl o;
	struct tlog t;
	char why[256];
	int fd, out;

	for (size_t i = 0; i < sizeof(base); i++)
		base[i] = (uint8_t)(i * 3 + 1);
	fd = memfd_of(base, sizeof(base));
	out = memfd_create("out", 0);
	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, sizeof(base), &log, why), 0);
	ck_assert_int_eq(crash_id_parse("flush:2+drop:4+torn:7@512/0", &id, why, 256), 0);
	ck_assert_int_ne(crash_resolve(&log, &id, &spec, why, sizeof(why)), 0);
	crash_id_free(&id);
	ck_assert_int_eq(crash_id_parse("end+drop:9", &id, why, 256), 0);
	ck_assert_int_eq(crash_resolve(&log, &id, &spec, why, sizeof(why)), 0);
	memcpy(want, base, sizeof(base));
	naive(&log, &spec, want);
	ck_assert_int_eq(ovl_layer_advance(&durable, &log, spec.pos), 0);
	ck_assert_uint_eq(durable->upto, 8);
	ck_assert_int_eq(ovl_build(&o, &log, &spec, fd, sizeof(base), durable), 0);
	ovl_layer_put(durable);
	ck_assert_int_eq(ovl_write_image(&o, out), 0);
	ck_assert_int_eq(pread(out, got, sizeof(got), 0), (ssize_t)sizeof(got));
	ck_assert(!memcmp(got, want, sizeof(got)));
	ovl_free(&o);
	crash_id_free(&id);
	crash_log_free(&log);
	close(fd);
	close(out);
	free(t.buf);
}
END_TEST

/* ------------------------------------------------------------ identical states, shards */

/* The key of the state named id, built on a fresh durable layer. */
static struct dedup_key key_of(const struct crash_log *log, const char *text)
{
	struct dedup_durable durable = { 0 };
	struct crash_spec spec;
	struct crash_id id;
	struct dedup_key k;
	char why[256];

	ck_assert_msg(!crash_id_parse(text, &id, why, sizeof(why)), "%s", why);
	ck_assert_msg(!crash_resolve(log, &id, &spec, why, sizeof(why)), "%s", why);
	ck_assert_int_eq(dedup_key_of(log, &spec, &durable, &k), 0);
	dedup_durable_put(&durable);
	crash_id_free(&id);
	return k;
}

static bool same_key(const struct crash_log *log, const char *a, const char *b)
{
	struct dedup_key ka = key_of(log, a), kb = key_of(log, b);

	return !memcmp(&ka, &kb, sizeof(ka));
}

/*
 * 0 w 0+2 1 w 0+2 2 w 8+4 3 w 8+2 4 w 16+4 5 w 16+4 6 d 24+2 7 w 30+1
 * 8 w 32+2 9 w 34+2 10 F 11 M 12 F: entry 1 overwrites 0 whole, 3 only
 * the start of 2, 5 all of 4, 9 is beside 8.
 */
static void tlog_overwrites(struct tlog *t)
{
	tlog_init(t, 512);
	tlog_entry(t, 0, 2, W, NULL, 1);
	tlog_entry(t, 0, 2, W, NULL, 2);
	tlog_entry(t, 8, 4, W, NULL, 3);
	tlog_entry(t, 8, 2, W, NULL, 4);
	tlog_entry(t, 16, 4, W, NULL, 5);
	tlog_entry(t, 16, 4, W, NULL, 6);
	tlog_entry(t, 24, 2, D, NULL, 0);
	tlog_entry(t, 30, 1, W, NULL, 7);
	tlog_entry(t, 32, 2, W, NULL, 8);
	tlog_entry(t, 34, 2, W, NULL, 9);
	tlog_entry(t, 0, 0, F, NULL, 0);
	tlog_entry(t, 0, 0, M, "m", 0);
	tlog_entry(t, 0, 0, F, NULL, 0);
}

START_TEST(dedup_folds_what_a_later_write_overwrites_whole)
{
	struct crash_log log;
	struct tlog t;
	char why[256];

	tlog_overwrites(&t);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	/* a drop whose sectors a later write of the state overwrites: the prefix state */
	ck_assert(same_key(&log, "flush:1+drop:0", "flush:1"));
	ck_assert(same_key(&log, "flush:1+drop:4", "flush:1"));
	ck_assert(same_key(&log, "flush:1+drop:0,4", "flush:1"));
	/* only partly overwritten: its tail shows */
	ck_assert(!same_key(&log, "flush:1+drop:2", "flush:1"));
	/* the torn write overwritten whole, or where it was written */
	ck_assert(same_key(&log, "flush:1+torn:4@512/1", "flush:1"));
	ck_assert(same_key(&log, "flush:1+torn:4@512/3", "flush:1"));
	ck_assert(same_key(&log, "flush:1+torn:2@512/2", "flush:1+drop:2"));
	ck_assert(!same_key(&log, "flush:1+torn:2@512/3", "flush:1+drop:2"));
	ck_assert(!same_key(&log, "flush:1+torn:2@512/3", "flush:1"));
	/* the prefixes on either side of a flush, which changes nothing */
	ck_assert(same_key(&log, "flush:1", "entry:11"));
	ck_assert(same_key(&log, "flush:2", "end"));
	/* but not of a mark: a checker may judge the same bytes by what the mark promised */
	ck_assert(!same_key(&log, "flush:1", "flush:2"));
	ck_assert(!same_key(&log, "entry:11", "mark:m"));
	ck_assert(!same_key(&log, "flush:1", "end"));
	/* different data, or data against BASE or zeros, never folds */
	ck_assert(!same_key(&log, "flush:1+drop:1", "flush:1"));
	ck_assert(!same_key(&log, "flush:1+drop:1", "flush:1+drop:0"));
	ck_assert(!same_key(&log, "flush:1+drop:5", "flush:1+drop:4"));
	ck_assert(!same_key(&log, "flush:1+drop:6", "flush:1"));
	ck_assert(!same_key(&log, "flush:1+drop:7", "flush:1"));
	ck_assert(!same_key(&log, "flush:1+drop:8", "flush:1+drop:9"));
	ck_assert(!same_key(&log, "entry:0", "flush:1"));
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

/* Where each byte of the state comes from, by hand: BASE (~0), zeros (~1) or a log offset. */
static void naive_sources(const struct crash_log *log, const struct crash_spec *spec,
			  uint64_t *src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		src[i] = ~0ULL;
	for (size_t i = 0; i < spec->pos; i++) {
		const struct crash_entry *e = &log->e[i];
		uint64_t n = e->len;
		bool drop = false;

		for (size_t d = 0; d < spec->nr_drop; d++)
			drop |= spec->drop[d] == i;
		if (drop || !crash_entry_changes(e))
			continue;
		if ((long)i == spec->torn_e)
			n = spec->torn_bytes;
		for (uint64_t b = 0; b < n; b++)
			src[e->off + b] = e->data ? (uint64_t)(e->data - log->map) + b : ~1ULL;
	}
}

/*
 * On random logs, two states' keys are equal exactly when every byte of
 * theirs comes from the same source and they have passed the same marks:
 * what is folded is identical, and what is identical by source and marks
 * is folded.  Keys built on the durable layer the run shares equal those
 * built afresh.
 */
START_TEST(dedup_keys_equal_exactly_when_the_sources_do)
{
	struct crash_gen_opts o = { .drop = 2, .torn = true, .atomic = 512 };
	struct crash_at at = { .kinds = AT_FLUSH | AT_FUA, .every = 3 };
	const size_t len = IMG_SECTORS * 512;
	size_t folds = 0;

	for (unsigned int seed = 1; seed <= 40; seed++) {
		struct dedup_durable durable = { 0 };
		struct dedup_key *keys = NULL;
		uint64_t **srcs = NULL, *marks = NULL;
		struct crash_log log;
		struct crash_gen g;
		struct crash_id id;
		enum crash_class cls;
		struct tlog t;
		size_t n = 0;
		char why[256];

		random_log(&t, seed);
		ck_assert_int_eq(parse(&t, len, &log, why), 0);
		ck_assert_int_eq(crash_gen_init(&g, &log, &at, &o), 0);
		while (n < 150 && crash_gen_next(&g, &id, &cls) == 1) {
			struct dedup_durable fresh = { 0 };
			struct crash_spec spec;
			struct dedup_key k;

			keys = realloc(keys, (n + 1) * sizeof(*keys));
			srcs = realloc(srcs, (n + 1) * sizeof(*srcs));
			srcs[n] = malloc(len * sizeof(**srcs));
			marks = realloc(marks, (n + 1) * sizeof(*marks));
			ck_assert_int_eq(crash_resolve(&log, &id, &spec, why, sizeof(why)), 0);
			naive_sources(&log, &spec, srcs[n], len);
			marks[n] = 0;
			for (size_t e = 0; e < spec.pos; e++)
				marks[n] += !!(log.e[e].flags & LOG_MARK_FLAG);
			ck_assert_int_eq(dedup_key_of(&log, &spec, &durable, &keys[n]), 0);
			ck_assert_int_eq(dedup_key_of(&log, &spec, &fresh, &k), 0);
			ck_assert(!memcmp(&k, &keys[n], sizeof(k)));
			dedup_durable_put(&fresh);
			crash_id_free(&id);
			n++;
		}
		for (size_t i = 0; i < n; i++) {
			for (size_t j = 0; j < i; j++) {
				bool keys_eq = !memcmp(&keys[i], &keys[j], sizeof(keys[i]));
				bool srcs_eq = !memcmp(srcs[i], srcs[j], len * sizeof(**srcs)) &&
					       marks[i] == marks[j];

				ck_assert_msg(keys_eq == srcs_eq, "seed %u: states %zu and %zu: keys %s, "
					      "sources %s", seed, j, i, keys_eq ? "equal" : "differ",
					      srcs_eq ? "equal" : "differ");
				folds += keys_eq;
			}
		}
		for (size_t i = 0; i < n; i++)
			free(srcs[i]);
		free(srcs);
		free(marks);
		free(keys);
		crash_gen_free(&g);
		dedup_durable_put(&durable);
		crash_log_free(&log);
		free(t.buf);
	}
	ck_assert_uint_gt(folds, 50);
}
END_TEST

START_TEST(shards_are_read_strictly)
{
	const char *bad[] = { "", "1", "1/", "/3", "0/3", "4/3", "1/0", "0/0", "x/3", "1/3x",
			      " 1/3", "+1/3", "-1/3", "1//3", "1/3/", "1/1000001" };
	struct crash_shard sh;
	char why[128];

	ck_assert_int_eq(crash_shard_parse("1/1", &sh, why, sizeof(why)), 0);
	ck_assert_uint_eq(sh.k, 1);
	ck_assert_uint_eq(sh.n, 1);
	ck_assert_int_eq(crash_shard_parse("7/13", &sh, why, sizeof(why)), 0);
	ck_assert_uint_eq(sh.k, 7);
	ck_assert_uint_eq(sh.n, 13);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(crash_shard_parse(bad[i], &sh, why, sizeof(why)) == -EINVAL,
			      "'%s' taken", bad[i]);
	crash_shard_parse("0/3", &sh, why, sizeof(why));
	ck_assert_str_eq(why, "--shard: K counts from 1, not 0, in");
	crash_shard_parse("4/3", &sh, why, sizeof(why));
	ck_assert_str_eq(why, "--shard: K is past N in");
	crash_shard_parse("1/0", &sh, why, sizeof(why));
	ck_assert_str_eq(why, "--shard: N, the number of shards, is 0 in");
}
END_TEST

/* The IDs a pick gives, "ID" or "ID=REP", space-separated; with the folded count of the run. */
static void picked(const struct crash_log *log, const struct crash_gen_opts *o, bool dedup,
		   unsigned long k, unsigned long n, char *out, size_t len, uint64_t *folded)
{
	struct crash_at at = { .kinds = AT_FLUSH, .every = 2 };
	struct crash_dedup d;
	struct crash_gen g;
	struct crash_pick p = { .gen = &g, .dedup = dedup ? &d : NULL, .shard = { k, n } };
	struct dedup_rep *rep;
	struct crash_id id;
	enum crash_class cls;
	int ret;

	out[0] = '\0';
	dedup_init(&d, log, NULL);
	ck_assert_int_eq(crash_gen_init(&g, log, &at, o), 0);
	while ((ret = crash_pick_next(&p, &id, &cls, &rep)) == 1) {
		char *text = crash_id_format(&id);

		snprintf(out + strlen(out), len - strlen(out), "%s%s%s", *out ? " " : "", text,
			 rep ? "=" : "");
		free(text);
		crash_id_free(&id);
	}
	ck_assert_int_eq(ret, 0);
	*folded = dedup ? d.nr_folded : 0;
	ck_assert_uint_eq(p.nr_checked + *folded, p.nr_states);
	crash_gen_free(&g);
	dedup_free(&d);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The space-separated words of s (changed in place), sorted: their number. */
static size_t sorted_words(char *s, char **w, size_t max)
{
	size_t n = 0;

	for (char *tok = strtok(s, " "); tok; tok = strtok(NULL, " ")) {
		ck_assert_uint_lt(n, max);
		w[n++] = tok;
	}
	qsort(w, n, sizeof(*w), str_cmp);
	return n;
}

/* How many words of s do not end in '=': the states checked. */
static size_t nr_checked(const char *s)
{
	size_t n = 0;

	for (const char *p = s; *p; p++)
		n += (p[1] == ' ' || !p[1]) && *p != '=' && *p != ' ';
	return n;
}

/*
 * The shards of a run, N of them, give every state of the whole run once,
 * each folded or not as in the whole run, and the states checked dealt
 * out evenly; N past the number of states leaves shards empty.
 */
START_TEST(shards_split_the_run_exactly)
{
	struct crash_gen_opts o = { .drop = 2, .torn = true, .atomic = 512 };
	static char whole[1 << 16], part[1 << 16], joined[1 << 16];
	static char *ww[4096], *wj[4096];
	struct crash_log log;
	struct tlog t;
	uint64_t folded, f;
	char why[256];

	tlog_overwrites(&t);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	for (int dedup = 0; dedup < 2; dedup++) {
		unsigned long ns[] = { 1, 2, 3, 4, 5, 401 };

		picked(&log, &o, dedup, 0, 0, whole, sizeof(whole), &folded);
		ck_assert(dedup ? folded > 10 : !folded);
		for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
			unsigned long n = ns[i];
			size_t all = nr_checked(whole), nw, nj, empty = 0;
			char copy[sizeof(whole)];

			joined[0] = '\0';
			for (unsigned long k = 1; k <= n; k++) {
				size_t c;

				picked(&log, &o, dedup, k, n, part, sizeof(part), &f);
				ck_assert_uint_eq(f, folded);
				c = nr_checked(part);
				ck_assert_msg(c == all / n || c == all / n + 1,
					      "shard %lu/%lu checks %zu of %zu", k, n, c, all);
				empty += !*part;
				ck_assert_uint_lt(strlen(joined) + strlen(part) + 1, sizeof(joined));
				if (*joined && *part)
					strcat(joined, " ");
				strcat(joined, part);
			}
			ck_assert(n < all || empty == n - all);
			memcpy(copy, whole, sizeof(copy));
			nw = sorted_words(copy, ww, 4096);
			nj = sorted_words(joined, wj, 4096);
			ck_assert_uint_eq(nj, nw);
			for (size_t j = 0; j < nw; j++)
				ck_assert_str_eq(wj[j], ww[j]);
		}
	}
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

/* ------------------------------------------------------------ marks by name, verdicts */

static const char *const mark_names_of_test[] = { "a", "b", "c d", "%", "ab", "a" };

/* A random log as random_log's, its marks of several names, some needing %XX in an ID. */
static void random_marked_log(struct tlog *t, unsigned int seed, int nr)
{
	srand(seed);
	tlog_init(t, 512);
	for (int i = 0; i < nr; i++) {
		int r = rand() % 8;
		uint64_t s = (uint64_t)(rand() % IMG_SECTORS);
		uint64_t c = 1 + (uint64_t)(rand() % 8);

		if (s + c > IMG_SECTORS)
			c = IMG_SECTORS - s;
		if (r == 0)
			tlog_entry(t, 0, 0, F, NULL, 0);
		else if (r == 1)
			tlog_entry(t, s, c, U, NULL, (unsigned int)rand());
		else if (r <= 4)
			tlog_entry(t, 0, 0, M, mark_names_of_test[rand() % 6], 0);
		else
			tlog_entry(t, s, c, W, NULL, (unsigned int)(rand() % 4));
	}
}

/* RQDISK_CRASH_MARKS at pos, by hand: every mark before pos counted under its name. */
static void naive_marks_text(const struct crash_log *log, size_t pos, char *out, size_t len)
{
	const char *names[64];
	unsigned int counts[64], nr = 0;

	for (size_t i = 0; i < pos; i++) {
		const struct crash_entry *e = &log->e[i];
		unsigned int n;

		if (!(e->flags & LOG_MARK_FLAG))
			continue;
		for (n = 0; n < nr; n++)
			if (strlen(names[n]) == e->mark_len && !memcmp(names[n], e->mark, e->mark_len))
				break;
		if (n == nr) {
			for (size_t k = 0; k < sizeof(mark_names_of_test) / sizeof(char *); k++)
				if (strlen(mark_names_of_test[k]) == e->mark_len &&
				    !memcmp(mark_names_of_test[k], e->mark, e->mark_len))
					names[nr] = mark_names_of_test[k];
			counts[nr++] = 0;
		}
		counts[n]++;
	}
	out[0] = '\0';
	for (unsigned int n = 0; n < nr; n++) {
		const char *spelled = !strcmp(names[n], "c d") ? "c%20d" :
				      !strcmp(names[n], "%")   ? "%25" :
								 names[n];

		snprintf(out + strlen(out), len - strlen(out), "%s%s=%u", n ? " " : "", spelled,
			 counts[n]);
	}
}

/*
 * The marks' index answers as a walk of the log does: the K-th mark of a
 * name, which of its name each is, the names passed at every position and
 * how many of each, in the order the names first appear.
 */
START_TEST(marks_are_found_and_counted_by_name)
{
	for (unsigned int seed = 1; seed <= 60; seed++) {
		struct crash_log log;
		struct tlog t;
		char why[256], want[512];

		random_marked_log(&t, seed, 1 + (int)(seed % 50));
		ck_assert_int_eq(parse(&t, IMG_SECTORS * 512, &log, why), 0);
		for (size_t pos = 0; pos <= log.nr; pos++) {
			char *got = crash_marks_text(&log, pos);

			naive_marks_text(&log, pos, want, sizeof(want));
			ck_assert_msg(!strcmp(got, want), "seed %u, pos %zu: '%s', not '%s'", seed,
				      pos, got, want);
			free(got);
		}
		for (size_t k = 0; k < sizeof(mark_names_of_test) / sizeof(char *); k++) {
			const char *name = mark_names_of_test[k];
			uint64_t occ = 0;

			for (size_t m = 0; m < log.nr_marks; m++) {
				const struct crash_entry *e = &log.e[log.marks[m]];

				if (e->mark_len != strlen(name) || memcmp(e->mark, name, e->mark_len))
					continue;
				ck_assert_uint_eq(log.names.occ[m], ++occ);
				ck_assert_int_eq(crash_marks_find(&log, name, strlen(name), occ),
						 (long)m);
			}
			ck_assert_int_eq(crash_marks_find(&log, name, strlen(name), occ + 1), -1);
			ck_assert_int_eq(crash_marks_find(&log, name, strlen(name), 0), -1);
		}
		ck_assert_int_eq(crash_marks_find(&log, "c", 1, 1), -1);
		ck_assert_int_eq(crash_marks_find(&log, "", 0, 1), -1);
		crash_log_free(&log);
		free(t.buf);
	}
}
END_TEST

/* A checker that judges bytes against marks: any function of the two will do, a hash here. */
static bool verdict_of(const struct crash_log *log, const struct crash_id *id, int fd,
		       unsigned int salt)
{
	uint8_t img[IMG_SECTORS * 512];
	struct crash_spec spec;
	struct ovl ov;
	char why[256], *marks;
	uint64_t h = 1469598103934665603ULL ^ salt;

	ck_assert_int_eq(crash_resolve(log, id, &spec, why, sizeof(why)), 0);
	ck_assert_int_eq(ovl_build(&ov, log, &spec, fd, sizeof(img), NULL), 0);
	ck_assert_int_eq(ovl_read(&ov, img, sizeof(img), 0), (ssize_t)sizeof(img));
	ovl_free(&ov);
	marks = crash_marks_text(log, spec.pos);
	for (size_t i = 0; i < sizeof(img); i++)
		h = (h ^ img[i]) * 1099511628211ULL;
	for (const char *p = marks; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	free(marks);
	return (h >> 29) & 1;
}

/* The verdict of each state a pick reports, "ID=V" in its order; a folded one takes its class's. */
static size_t verdicts(const struct crash_log *log, bool dedup, unsigned long k, unsigned long n,
		       int fd, unsigned int salt, char **out, size_t *nr_folded,
		       const struct sector_ranges *aim)
{
	static char *at_marks[] = { "a", "c d" };
	static size_t at_lens[] = { 1, 3 };
	struct crash_gen_opts o = { .drop = 2, .torn = true, .atomic = 512, .aim = aim };
	struct crash_at at = { .kinds = AT_FLUSH | AT_FUA, .every = 3, .marks = at_marks,
			       .mark_lens = at_lens, .nr_marks = 2 };
	struct crash_dedup d;
	struct crash_gen g;
	struct crash_pick p = { .gen = &g, .dedup = dedup ? &d : NULL, .shard = { k, n } };
	struct dedup_rep *rep;
	struct crash_id id;
	enum crash_class cls;
	bool *by_class = NULL;
	size_t nr = 0;
	int ret;

	dedup_init(&d, log, NULL);
	ck_assert_int_eq(crash_gen_init(&g, log, &at, &o), 0);
	while ((ret = crash_pick_next(&p, &id, &cls, &rep)) == 1) {
		bool v;

		by_class = realloc(by_class, (p.nr_checked + 1) * sizeof(*by_class));
		if (rep) {
			v = by_class[rep->ordinal];
			++*nr_folded;
		} else {
			v = verdict_of(log, &id, fd, salt);
			if (dedup)
				by_class[p.nr_checked - 1] = v;
		}
		out[nr] = crash_id_format(&id);
		out[nr] = realloc(out[nr], strlen(out[nr]) + 3);
		strcat(out[nr++], v ? "=1" : "=0");
		crash_id_free(&id);
	}
	ck_assert_int_eq(ret, 0);
	free(by_class);
	crash_gen_free(&g);
	dedup_free(&d);
	return nr;
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * For random logs with marks and a random checker of bytes and marks, each
 * state gets the same verdict with dedup (it may be borrowed from the state
 * it is folded into), without, and in every shard of a run: no state
 * borrows a verdict it might not deserve.
 */
START_TEST(folded_states_get_the_verdict_they_deserve)
{
	static char *whole[8192], *folded[8192], *shards[8192];
	uint8_t base[IMG_SECTORS * 512];
	size_t nr_folded = 0, nr_folded_in_shards = 0, nr_states = 0, ignored = 0;

	for (unsigned int seed = 1; seed <= 40; seed++) {
		struct crash_log log;
		struct tlog t;
		size_t nw, nf, ns = 0;
		char why[256];
		int fd;

		random_marked_log(&t, seed, 12 + (int)(seed % 20));
		for (size_t i = 0; i < sizeof(base); i++)
			base[i] = (uint8_t)rand();
		fd = memfd_of(base, sizeof(base));
		ck_assert_int_eq(parse(&t, sizeof(base), &log, why), 0);
		nw = verdicts(&log, false, 0, 0, fd, seed, whole, &ignored, NULL);
		nf = verdicts(&log, true, 0, 0, fd, seed, folded, &nr_folded, NULL);
		ck_assert_uint_eq(nf, nw);
		for (unsigned long k = 1; k <= 3; k++)
			ns += verdicts(&log, true, k, 3, fd, seed, shards + ns, &nr_folded_in_shards,
				      NULL);
		ck_assert_uint_eq(ns, nw);
		/* the same order with and without dedup: state by state */
		for (size_t i = 0; i < nw; i++)
			ck_assert_msg(!strcmp(whole[i], folded[i]), "seed %u: %s without dedup, %s with",
				      seed, whole[i], folded[i]);
		qsort(whole, nw, sizeof(*whole), strp_cmp);
		qsort(shards, ns, sizeof(*shards), strp_cmp);
		for (size_t i = 0; i < nw; i++)
			ck_assert_msg(!strcmp(whole[i], shards[i]), "seed %u: %s in the run, %s in a shard",
				      seed, whole[i], shards[i]);
		for (size_t i = 0; i < nw; i++) {
			free(whole[i]);
			free(folded[i]);
			free(shards[i]);
		}
		nr_states += nw;
		crash_log_free(&log);
		close(fd);
		free(t.buf);
	}
	/* folding was tried, often: the shards fold as the whole run */
	ck_assert_uint_gt(nr_states, 1000);
	ck_assert_uint_gt(nr_folded, nr_states / 10);
	ck_assert_uint_eq(nr_folded_in_shards, nr_folded);
}
END_TEST

/* ------------------------------------------------------------ aimed runs: --only, --except */

/* Whether entry i of log touches a sector of [lo, hi) or [lo2, hi2), by hand; or, out, one outside. */
struct test_ranges {
	uint64_t lo, hi, lo2, hi2;
};

static bool by_hand_touches(const struct crash_log *log, uint64_t i, const struct test_ranges *r,
			    bool outside)
{
	const struct crash_entry *e = &log->e[i];

	for (uint64_t x = e->off / 512; x < (e->off + e->len + 511) / 512; x++) {
		bool in = (x >= r->lo && x < r->hi) || (x >= r->lo2 && x < r->hi2);

		if (in != outside)
			return true;
	}
	return false;
}

/* Whether the state text loses or tears only entries that touch r (or, outside, its complement). */
static bool loses_only(const struct crash_log *log, const char *text, const struct test_ranges *r,
		       bool outside)
{
	struct crash_id id;
	char why[256];
	bool ok = true;

	ck_assert_int_eq(crash_id_parse(text, &id, why, sizeof(why)), 0);
	for (size_t i = 0; i < id.nr_drop; i++)
		ok = ok && by_hand_touches(log, id.drop[i], r, outside);
	if (id.torn)
		ok = ok && by_hand_touches(log, id.torn_e, r, outside);
	crash_id_free(&id);
	return ok;
}

static bool has_id(char **ids, size_t nr, const char *text)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(ids[i], text))
			return true;
	return false;
}

/* The states of an aimed run, checked against the unaimed run's, for one side of the ranges. */
static size_t check_aimed(const struct crash_log *log, const struct crash_at *at,
			  const struct test_ranges *tr, bool except, unsigned int seed)
{
	struct crash_gen_opts o = { .drop = 2, .torn = true, .atomic = 512 };
	struct crash_aim aim = { 0 };
	char arg[96], why[512], **all, **aimed;
	size_t nr_all, nr_aimed, wanted = 0;

	snprintf(arg, sizeof(arg), "%llu-%llu/%llu-%llu", (unsigned long long)tr->lo,
		 (unsigned long long)tr->hi - 1, (unsigned long long)tr->lo2,
		 (unsigned long long)tr->hi2 - 1);
	ck_assert_int_eq(crash_aim_add(&aim, except, arg, why, sizeof(why)), 0);
	ids_of(log, at, &o, &all, &nr_all, NULL);
	o.aim = &aim.may_lose;
	ids_of(log, at, &o, &aimed, &nr_aimed, NULL);
	/* no state loses or tears a write that touches none of the sectors aimed at */
	for (size_t i = 0; i < nr_aimed; i++) {
		ck_assert_msg(loses_only(log, aimed[i], tr, except), "seed %u: %s %s loses %s",
			      seed, except ? "--except" : "--only", arg, aimed[i]);
		ck_assert_msg(has_id(all, nr_all, aimed[i]), "seed %u: %s not in the unaimed run",
			      seed, aimed[i]);
	}
	/* every state of the unaimed run that loses only such writes is still made */
	for (size_t i = 0; i < nr_all; i++) {
		if (!loses_only(log, all[i], tr, except))
			continue;
		wanted++;
		ck_assert_msg(has_id(aimed, nr_aimed, all[i]), "seed %u: %s %s misses %s", seed,
			      except ? "--except" : "--only", arg, all[i]);
	}
	ck_assert_uint_eq(wanted, nr_aimed);
	free_ids(all, nr_all);
	free_ids(aimed, nr_aimed);
	crash_aim_free(&aim);
	return nr_aimed;
}

/*
 * With --only RANGES a run makes exactly the unaimed run's states whose
 * lost and torn writes all touch RANGES; with --except RANGES, exactly
 * those whose lost writes each touch a sector outside them.
 */
START_TEST(aimed_runs_lose_only_the_writes_aimed_at)
{
	struct crash_at at = { .kinds = AT_FLUSH, .every = 4 };
	size_t fewer = 0, runs = 0;

	for (unsigned int seed = 1; seed <= 60; seed++) {
		struct test_ranges tr;
		struct crash_log log;
		struct tlog t;
		char why[256];
		size_t only, except, nr_all;
		char **all;
		struct crash_gen_opts o = { .drop = 2, .torn = true, .atomic = 512 };

		random_log(&t, seed);
		ck_assert_int_eq(parse(&t, IMG_SECTORS * 512, &log, why), 0);
		tr.lo = (uint64_t)(rand() % IMG_SECTORS);
		tr.hi = tr.lo + 1 + (uint64_t)(rand() % 8);
		tr.lo2 = tr.hi + (uint64_t)(rand() % 8);
		tr.hi2 = tr.lo2 + 1 + (uint64_t)(rand() % 4);
		only = check_aimed(&log, &at, &tr, false, seed);
		except = check_aimed(&log, &at, &tr, true, seed);
		ids_of(&log, &at, &o, &all, &nr_all, NULL);
		fewer += only < nr_all;
		runs++;
		ck_assert_uint_le(only, nr_all);
		ck_assert_uint_le(except, nr_all);
		free_ids(all, nr_all);
		crash_log_free(&log);
		free(t.buf);
	}
	/* the ranges left some writes out, often: the aim was tried */
	ck_assert_uint_gt(fewer, runs / 2);
}
END_TEST

/*
 * The sample log aimed at sector 8 (entry 4's): at flush 2, the one
 * volatile write there is entry 4, and at the end none; the report names
 * what a state lost in those sectors.
 */
START_TEST(aimed_runs_name_what_a_state_lost)
{
	struct crash_at at = { .kinds = AT_FLUSH };
	struct crash_aim aim = { 0 };
	struct crash_log log;
	struct tlog t;
	char why[512], *text;

	tlog_sample(&t);
	ck_assert_int_eq(parse(&t, 64 * 512, &log, why), 0);
	ck_assert_int_eq(crash_aim_add(&aim, false, "8", why, sizeof(why)), 0);
	{
		struct crash_gen_opts o = { .drop = 3, .torn = true, .atomic = 512,
					    .aim = &aim.may_lose };
		char **ids, list[512] = "";
		size_t nr;

		ids_of(&log, &at, &o, &ids, &nr, NULL);
		for (size_t i = 0; i < nr; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? " " : "", ids[i]);
		ck_assert_str_eq(list, "flush:1 flush:2 flush:2+drop:4 end");
		free_ids(ids, nr);
	}
	text = crash_aim_lost(&aim, &log, "flush:2+drop:4");
	ck_assert_str_eq(text, "lost in 8: entry 4 (sectors 8-8)");
	free(text);
	ck_assert_ptr_null(crash_aim_lost(&aim, &log, "flush:2"));
	crash_aim_free(&aim);
	ck_assert_int_eq(crash_aim_add(&aim, false, "@/dev/null", why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "--only @/dev/null: no sector ranges in it");
	ck_assert_int_eq(crash_aim_add(&aim, false, "4-5", why, sizeof(why)), 0);
	text = crash_aim_lost(&aim, &log, "flush:2+torn:1@512/2");
	ck_assert_str_eq(text, "torn in 4-5: entry 1 (sectors 4-7)");
	free(text);
	crash_aim_free(&aim);
	ck_assert_int_eq(crash_aim_add(&aim, true, "0-3/8-63", why, sizeof(why)), 0);
	text = crash_aim_lost(&aim, &log, "flush:2+drop:1,4+torn:1@512/2");
	ck_assert_str_eq(text, "lost in what --except leaves of 0-3/8-63: entry 1 (sectors 4-7); "
			       "torn in what --except leaves of 0-3/8-63: entry 1 (sectors 4-7)");
	free(text);
	crash_aim_free(&aim);
	/* several --only: each lost write named by the one it touches */
	ck_assert_int_eq(crash_aim_add(&aim, false, "8", why, sizeof(why)), 0);
	ck_assert_int_eq(crash_aim_add(&aim, false, "0", why, sizeof(why)), 0);
	text = crash_aim_lost(&aim, &log, "flush:2+drop:4,7");
	ck_assert_str_eq(text, "lost in 8: entry 4 (sectors 8-8); lost in 0: entry 7 (sectors 0-0)");
	free(text);
	text = crash_aim_lost(&aim, &log, "flush:2+drop:7");
	ck_assert_str_eq(text, "lost in 0: entry 7 (sectors 0-0)");
	free(text);
	crash_aim_free(&aim);
	crash_log_free(&log);
	free(t.buf);
}
END_TEST

/* The ranges of an aimed run fold and shard as the unaimed run's: each state, its verdict. */
START_TEST(aimed_runs_fold_and_shard_as_the_unaimed_run)
{
	static char *whole[8192], *folded[8192], *shards[8192], *unaimed[8192];
	uint8_t base[IMG_SECTORS * 512];
	size_t nr_folded = 0, nr_in_shards = 0, ignored = 0, nr_states = 0;

	for (unsigned int seed = 1; seed <= 20; seed++) {
		struct sector_ranges aim = { 0 };
		struct crash_log log;
		struct tlog t;
		size_t nw, nf, nu, ns = 0;
		char why[256];
		int fd;

		random_marked_log(&t, seed, 14 + (int)(seed % 16));
		for (size_t i = 0; i < sizeof(base); i++)
			base[i] = (uint8_t)rand();
		ck_assert_int_eq(sector_ranges_add(&aim, seed % 20, seed % 20 + 12), 0);
		fd = memfd_of(base, sizeof(base));
		ck_assert_int_eq(parse(&t, sizeof(base), &log, why), 0);
		nu = verdicts(&log, false, 0, 0, fd, seed, unaimed, &ignored, NULL);
		nw = verdicts(&log, false, 0, 0, fd, seed, whole, &ignored, &aim);
		nf = verdicts(&log, true, 0, 0, fd, seed, folded, &nr_folded, &aim);
		for (unsigned long k = 1; k <= 3; k++)
			ns += verdicts(&log, true, k, 3, fd, seed, shards + ns, &nr_in_shards, &aim);
		ck_assert_uint_eq(nf, nw);
		ck_assert_uint_eq(ns, nw);
		for (size_t i = 0; i < nw; i++) {
			ck_assert_str_eq(whole[i], folded[i]);
			/* an aimed state is the unaimed run's, with the verdict it has there */
			ck_assert_msg(has_id(unaimed, nu, whole[i]), "seed %u: %s", seed, whole[i]);
		}
		qsort(whole, nw, sizeof(*whole), strp_cmp);
		qsort(shards, ns, sizeof(*shards), strp_cmp);
		for (size_t i = 0; i < nw; i++)
			ck_assert_str_eq(whole[i], shards[i]);
		for (size_t i = 0; i < nw; i++) {
			free(whole[i]);
			free(folded[i]);
			free(shards[i]);
		}
		for (size_t i = 0; i < nu; i++)
			free(unaimed[i]);
		nr_states += nw;
		sector_ranges_free(&aim);
		crash_log_free(&log);
		close(fd);
		free(t.buf);
	}
	ck_assert_uint_gt(nr_states, 200);
	ck_assert_uint_gt(nr_folded, 0);
	ck_assert_uint_eq(nr_in_shards, nr_folded);
}
END_TEST

static void ranges_read_as(const char *text, const char *want)
{
	struct sector_ranges s = { 0 };
	char why[256], got[256] = "";
	FILE *f = fmemopen(got, sizeof(got), "w");

	ck_assert_msg(!sector_ranges_parse(&s, text, strlen(text), why, sizeof(why)), "%s: %s",
		      text, why);
	ck_assert_int_eq(sector_ranges_print(&s, f), 0);
	fclose(f);
	ck_assert_str_eq(got, want);
	sector_ranges_free(&s);
}

static void ranges_refused(const char *text, size_t len, const char *why_want)
{
	struct sector_ranges s = { 0 };
	char why[256];

	ck_assert_int_eq(sector_ranges_parse(&s, text, len, why, sizeof(why)), -EINVAL);
	ck_assert_uint_eq(s.nr, 0);
	ck_assert_ptr_null(strchr(why, '\n'));
	if (why_want)
		ck_assert_str_eq(why, why_want);
	sector_ranges_free(&s);
}

/* The ranges of s, as sector_ranges_print writes them. */
static const char *ranges_text(const struct sector_ranges *s)
{
	static char got[256];
	FILE *f = fmemopen(got, sizeof(got), "w");

	got[0] = 0;
	ck_assert_int_eq(sector_ranges_print(s, f), 0);
	fclose(f);
	return got;
}

/*
 * What the fault filter keeps its bad sectors in: clear splits a range,
 * next finds the range holding a sector or after it, copy is deep, and a
 * set's own max refuses a range more (a split too), leaving it as it was.
 */
START_TEST(ranges_clear_copy_next_and_max)
{
	struct sector_ranges s = { .max = 3 }, c;
	char why[256];

	ck_assert_int_eq(sector_ranges_add(&s, 10, 20), 0);
	ck_assert_int_eq(sector_ranges_add(&s, 30, 40), 0);
	ck_assert_int_eq(sector_ranges_clear(&s, 14, 16), 0); /* inside: split */
	ck_assert_str_eq(ranges_text(&s), "10-13/16-19/30-39\n");
	ck_assert_int_eq(sector_ranges_clear(&s, 50, 60), 0); /* in none: nothing */
	ck_assert_int_eq(sector_ranges_clear(&s, 8, 11), 0); /* a head */
	ck_assert_int_eq(sector_ranges_clear(&s, 19, 31), 0); /* a tail and a head */
	ck_assert_str_eq(ranges_text(&s), "11-13/16-18/31-39\n");
	/* three ranges, the max: another, or a split, is refused and changes nothing */
	ck_assert_int_eq(sector_ranges_add(&s, 100, 101), -ENOSPC);
	ck_assert_int_eq(sector_ranges_clear(&s, 33, 34), -ENOSPC);
	ck_assert_int_eq(sector_ranges_add(&s, 14, 16), 0); /* touches both: merges */
	ck_assert_str_eq(ranges_text(&s), "11-18/31-39\n");
	ck_assert_int_eq(sector_ranges_parse(&s, "50/60", 5, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "more than 3 sector ranges");
	ck_assert_str_eq(ranges_text(&s), "11-18/31-39\n");
	ck_assert_uint_eq(sector_ranges_next(&s, 0)->start, 11);
	ck_assert_uint_eq(sector_ranges_next(&s, 18)->start, 11);
	ck_assert_uint_eq(sector_ranges_next(&s, 19)->start, 31);
	ck_assert_uint_eq(sector_ranges_next(&s, 39)->start, 31);
	ck_assert_ptr_null(sector_ranges_next(&s, 40));
	ck_assert_int_eq(sector_ranges_copy(&c, &s), 0);
	ck_assert_int_eq(sector_ranges_clear(&c, 0, 35), 0);
	ck_assert_str_eq(ranges_text(&c), "35-39\n");
	ck_assert_str_eq(ranges_text(&s), "11-18/31-39\n");
	ck_assert_uint_eq(c.max, 3);
	sector_ranges_free(&c);
	sector_ranges_free(&s); /* emptied, its max kept */
	ck_assert_uint_eq(s.nr, 0);
	ck_assert_uint_eq(s.max, 3);
	ck_assert_ptr_null(sector_ranges_next(&s, 0));
}
END_TEST

/* The badblocks syntax, joined by '/' or lines; anything else refused in one line. */
START_TEST(ranges_are_read_strictly)
{
	struct crash_aim aim = { 0 };
	char why[512];

	ranges_read_as("1-3/5/7-9", "1-3/5/7-9\n");
	ranges_read_as("7-9/1-3\n4\n", "1-4/7-9\n");
	ranges_read_as("0-18014398509481983", "0-18014398509481983\n");
	ranges_read_as("5-5", "5\n");
	ranges_read_as("", "");
	ranges_refused("1-", 2, "'1-' is not a sector range: S-E or S, decimal sectors below 2^54");
	ranges_refused("-1", 2, NULL);
	ranges_refused("3-1", 3, "'3-1' ends before it starts");
	ranges_refused("1//2", 4, "an empty range beside a '/'");
	ranges_refused("/1", 2, "an empty range beside a '/'");
	ranges_refused("1/", 2, "an empty range beside a '/'");
	ranges_refused("1/\n2", 4, "an empty range beside a '/'");
	ranges_refused("1-2-3", 5, NULL);
	ranges_refused("0x10", 4, NULL);
	ranges_refused("+1", 2, NULL);
	ranges_refused("18014398509481984", 17, NULL);
	ranges_refused("99999999999999999999999", 23, NULL);
	ranges_refused("1-2\0/3", 6, "a NUL byte where sector ranges were expected");
	ranges_refused("1-2/x", 5, "'x' is not a sector range: S-E or S, decimal sectors below 2^54");

	ck_assert_int_eq(crash_aim_add(&aim, false, "", why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "--only : no sector ranges in it");
	ck_assert_int_eq(crash_aim_add(&aim, false, "4-9", why, sizeof(why)), 0);
	ck_assert_int_eq(crash_aim_add(&aim, true, "4-9", why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "--only and --except do not go together");
	ck_assert_int_eq(crash_aim_add(&aim, false, "1-x", why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "--only 1-x: '1-x' is not a sector range: S-E or S, decimal sectors "
			      "below 2^54");
	ck_assert_int_eq(crash_aim_check(&aim, 10, why, sizeof(why)), 0);
	ck_assert_int_eq(crash_aim_check(&aim, 9, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "--only 4-9: sector 9 is past the disk's end (9 sectors): ranges of "
			      "another disk?");
	ck_assert_int_eq(crash_aim_add(&aim, false, "@/nonexistent/ranges", why, sizeof(why)),
			 -EINVAL);
	ck_assert_str_eq(why, "--only @/nonexistent/ranges: No such file or directory");
	crash_aim_free(&aim);
	/* --except: the complement, to the limit */
	ck_assert_int_eq(crash_aim_add(&aim, true, "0/4-9", why, sizeof(why)), 0);
	ck_assert_uint_eq(aim.may_lose.nr, 2);
	ck_assert_uint_eq(aim.may_lose.r[0].start, 1);
	ck_assert_uint_eq(aim.may_lose.r[0].end, 4);
	ck_assert_uint_eq(aim.may_lose.r[1].start, 10);
	ck_assert_uint_eq(aim.may_lose.r[1].end, SECTOR_RANGES_LIMIT);
	crash_aim_free(&aim);
}
END_TEST


/* ------------------------------------------------------------ several disks' logs */

/* disk 0: w F w   disk 1: w w(4 sectors) F;  made in the order 0 1 0 1 1 0 */
static void joint_logs(struct tlog *t, struct crash_log *log)
{
	char why[256];

	tlog_init(&t[0], 512);
	tlog_entry(&t[0], 0, 1, W, NULL, 1);
	tlog_entry(&t[0], 0, 0, F, NULL, 0);
	tlog_entry(&t[0], 1, 1, W, NULL, 2);
	tlog_init(&t[1], 512);
	tlog_entry(&t[1], 0, 1, W, NULL, 3);
	tlog_entry(&t[1], 1, 4, W, NULL, 4);
	tlog_entry(&t[1], 0, 0, F, NULL, 0);
	for (int d = 0; d < 2; d++)
		ck_assert_int_eq(parse(&t[d], 64 * 512, &log[d], why), 0);
}

static void joint_free(struct tlog *t, struct crash_log *log)
{
	for (int d = 0; d < 2; d++) {
		crash_log_free(&log[d]);
		free(t[d].buf);
	}
}

#define ORDER "rqdisk-log-order 1\n0\n1\n0\n1\n1\n0\n"

START_TEST(joint_positions_follow_the_order)
{
	const struct crash_log *logs[2];
	struct crash_log log[2];
	struct crash_joint j;
	struct tlog t[2];
	char why[256];
	size_t pos[2];

	joint_logs(t, log);
	logs[0] = &log[0];
	logs[1] = &log[1];
	ck_assert_int_eq(crash_joint_init(&j, logs, 2, ORDER, strlen(ORDER), why, sizeof(why)), 0);
	ck_assert_uint_eq(j.nr, 6);
	ck_assert_uint_eq(j.seq[4].disk, 1);
	ck_assert_uint_eq(j.seq[4].entry, 2);
	crash_joint_positions(&j, 0, pos);
	ck_assert(pos[0] == 0 && pos[1] == 0);
	crash_joint_positions(&j, 3, pos);
	ck_assert(pos[0] == 2 && pos[1] == 1);
	crash_joint_positions(&j, 6, pos);
	ck_assert(pos[0] == 3 && pos[1] == 3);
	crash_joint_free(&j);
	joint_free(t, log);
}
END_TEST

START_TEST(joint_volatile_writes_are_every_disks_in_order)
{
	const struct crash_log *logs[2];
	struct crash_joint_ref v[6];
	struct crash_log log[2];
	struct crash_joint j;
	struct tlog t[2];
	char why[256];
	size_t n;

	joint_logs(t, log);
	logs[0] = &log[0];
	logs[1] = &log[1];
	ck_assert_int_eq(crash_joint_init(&j, logs, 2, ORDER, strlen(ORDER), why, sizeof(why)), 0);
	/* after 0 1: disk 0's write and disk 1's, neither flushed */
	ck_assert_int_eq(crash_joint_volatile(&j, 2, v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert(v[0].disk == 0 && v[0].entry == 0 && v[1].disk == 1 && v[1].entry == 0);
	/* after 0 1 0 1: disk 0 flushed its write; disk 1's two are not */
	ck_assert_int_eq(crash_joint_volatile(&j, 4, v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert(v[0].disk == 1 && v[0].entry == 0 && v[1].disk == 1 && v[1].entry == 1);
	/* all: disk 1 flushed; disk 0's last write is not */
	ck_assert_int_eq(crash_joint_volatile(&j, 6, v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(v[0].disk == 0 && v[0].entry == 2);
	crash_joint_free(&j);
	joint_free(t, log);
}
END_TEST

/* joint_refused ORDER WHY: the order is refused over the two logs, with a line holding WHY. */
static void joint_refused(const char *order, unsigned int nr_disks, const char *want)
{
	const struct crash_log *logs[2];
	struct crash_log log[2];
	struct crash_joint j;
	struct tlog t[2];
	char why[256] = "";

	joint_logs(t, log);
	logs[0] = &log[0];
	logs[1] = &log[1];
	ck_assert_int_eq(crash_joint_init(&j, logs, nr_disks, order, strlen(order), why,
					  sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, want) && !strchr(why, '\n'), "said: %s", why);
	ck_assert_ptr_null(j.seq);
	joint_free(t, log);
}

START_TEST(joint_orders_that_do_not_fit_are_refused)
{
	joint_refused("rqdisk-log-order 1\n0\n1\n0\n1\n1\n", 2,
		      "order: disk 0 has 2 lines, its log 3 entries");
	joint_refused("rqdisk-log-order 1\n0\n1\n0\n1\n1\n0\n0\n", 2,
		      "order: disk 0 has 4 lines, its log 3 entries");
	joint_refused("rqdisk-log-order 1\n0\n1\n0\n1\n2\n0\n", 2,
		      "order line 6: '2' is not a disk number below 2");
	joint_refused("rqdisk-log-order 2\n", 2, "order line 1: not an rqdisk log order");
	joint_refused(ORDER, 1, "order line 3: '1' is not a disk number below 1");
	joint_refused(ORDER, 0, "order: 0 disks");
}
END_TEST

/* ID's text parses, and prints back the same. */
static void joint_id_round_trip(const char *id, struct crash_joint_state *st)
{
	char why[256] = "", back[CRASH_JOINT_ID_MAX];

	ck_assert_msg(!crash_joint_id_parse(id, st, why, sizeof(why)), "%s: %s", id, why);
	crash_joint_id_format(st, back, sizeof(back));
	ck_assert_str_eq(back, id);
}

static void joint_id_refused(const char *id, const char *want)
{
	struct crash_joint_state st;
	char why[256] = "";

	ck_assert_int_eq(crash_joint_id_parse(id, &st, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, want) && !strchr(why, '\n'), "%s: said %s", id, why);
}

START_TEST(joint_ids_round_trip_and_bad_ones_are_refused)
{
	struct crash_joint_state st;

	joint_id_round_trip("joint:4-1.0-1.1~0.2@512/1", &st);
	ck_assert_uint_eq(st.n, 4);
	ck_assert_uint_eq(st.nr_drop, 2);
	ck_assert(st.drop[0].disk == 1 && st.drop[0].entry == 0);
	ck_assert(st.drop[1].disk == 1 && st.drop[1].entry == 1);
	ck_assert(st.torn && st.torn_w.disk == 0 && st.torn_w.entry == 2);
	ck_assert(st.torn_a == 512 && st.torn_k == 1);
	joint_id_round_trip("joint:0", &st);
	ck_assert(!st.torn && !st.nr_drop);
	joint_id_round_trip("joint:12~15.7@4096/3", &st);
	joint_id_refused("joint:04", "bad joint state ID 'joint:04' at '04'");
	joint_id_refused("joint:4-16.0", "at '16.0': disks are numbered 0 to 15");
	joint_id_refused("joint:4-0.1-0.2-0.3-0.4", "at '-0.4': at most 3 lost writes");
	joint_id_refused("joint:4~0.1@512", "at ''");
	joint_id_refused("joint:4~0.1@512/1-0.2", "at '-0.2'");
	joint_id_refused("joint:4x", "at 'x'");
	joint_id_refused("flush:1", "at 'flush:1'");
	joint_id_refused("joint:4-1.\n", "at '?'");
}
END_TEST

/* ID is a state of the two logs: disk D's part as a one-disk ID, resolved in its log. */
static void joint_state_taken(const struct crash_joint *j, const char *id, unsigned int d,
			      const char *want)
{
	struct crash_joint_state st;
	struct crash_spec spec;
	struct crash_id one;
	char why[256] = "", *text;

	ck_assert_int_eq(crash_joint_id_parse(id, &st, why, sizeof(why)), 0);
	ck_assert_msg(!crash_joint_check(j, &st, why, sizeof(why)), "%s: %s", id, why);
	ck_assert_int_eq(crash_joint_disk_id(j, &st, d, &one), 0);
	text = crash_id_format(&one);
	ck_assert_str_eq(text, want);
	ck_assert_int_eq(crash_resolve(j->logs[d], &one, &spec, why, sizeof(why)), 0);
	free(text);
	crash_id_free(&one);
}

static void joint_state_refused(const struct crash_joint *j, const char *id, const char *want)
{
	struct crash_joint_state st;
	char why[256] = "";

	ck_assert_int_eq(crash_joint_id_parse(id, &st, why, sizeof(why)), 0);
	ck_assert_int_eq(crash_joint_check(j, &st, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, want) && !strchr(why, '\n'), "%s: said %s", id, why);
}

START_TEST(joint_states_are_each_disks_state_at_one_instant)
{
	const struct crash_log *logs[2];
	struct crash_log log[2];
	struct crash_joint j;
	struct tlog t[2];
	char why[256];
	uint64_t ks[3];

	joint_logs(t, log);
	logs[0] = &log[0];
	logs[1] = &log[1];
	ck_assert_int_eq(crash_joint_init(&j, logs, 2, ORDER, strlen(ORDER), why, sizeof(why)), 0);
	/* after 0 1 0 1: disk 0 at 2 (flushed), disk 1 at 2 with both writes volatile */
	joint_state_taken(&j, "joint:4", 0, "entry:2");
	joint_state_taken(&j, "joint:4-1.0-1.1", 1, "entry:2+drop:0,1");
	joint_state_taken(&j, "joint:4-1.0-1.1", 0, "entry:2");
	joint_state_taken(&j, "joint:4~1.1@512/3", 1, "entry:2+torn:1@512/3");
	joint_state_taken(&j, "joint:4~1.1@512/3", 0, "entry:2");
	joint_state_taken(&j, "joint:4-1.0~1.1@1024/1", 1, "entry:2+drop:0+torn:1@1024/1");
	joint_state_refused(&j, "joint:7", "the order has 6 entries, not 7");
	joint_state_refused(&j, "joint:4-2.0", "disk 2: there are 2 disks");
	joint_state_refused(&j, "joint:4-0.0",
			    "lost write 0.0 is not a volatile write after the order's first 4 "
			    "entries");
	joint_state_refused(&j, "joint:4-1.1-1.0",
			    "the lost writes must follow the order's sequence, each once");
	joint_state_refused(&j, "joint:4-1.0-1.0", "each once");
	joint_state_refused(&j, "joint:6~1.1@512/1",
			    "torn write 1.1 is not a volatile write after the order's first 6");
	joint_state_refused(&j, "joint:4-1.1~1.1@512/1", "torn write 1.1 is lost too");
	joint_state_refused(&j, "joint:4~1.1@512/4", "torn write 1.1 cannot keep 4 of its units");
	joint_state_refused(&j, "joint:4~1.0@512/1", "torn write 1.0 cannot keep 1");
	joint_state_refused(&j, "joint:4~1.1@1000/1", "of 1000 bytes");
	/* the torn lengths: a write of 4 units tears after 1, 2, 3; one of a unit never */
	ck_assert_uint_eq(crash_joint_torn_ks(&j, (struct crash_joint_ref){ 1, 1 }, 512, ks), 3);
	ck_assert(ks[0] == 1 && ks[1] == 2 && ks[2] == 3);
	ck_assert_uint_eq(crash_joint_torn_ks(&j, (struct crash_joint_ref){ 1, 0 }, 512, ks), 0);
	/* bytes 512 to 2560 touch 3 units of 1024 */
	ck_assert_uint_eq(crash_joint_torn_ks(&j, (struct crash_joint_ref){ 1, 1 }, 1024, ks), 2);
	ck_assert(ks[0] == 1 && ks[1] == 2);
	crash_joint_free(&j);
	joint_free(t, log);
}
END_TEST
static Suite *crash_suite(void)
{
	Suite *s = suite_create("crash");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, good_logs_are_read);
	tcase_add_test(tc, bad_logs_are_refused_naming_the_entry);
	tcase_add_test(tc, points_for_each_at);
	tcase_add_test(tc, points_past_a_gap_are_skipped_unless_asked);
	tcase_add_test(tc, points_that_match_nothing_are_refused);
	tcase_add_test(tc, volatile_sets_follow_the_flushes);
	tcase_add_test(tc, a_flush_with_data_is_volatile_unless_fua);
	tcase_add_test(tc, torn_lengths_are_one_half_and_all_but_one);
	tcase_add_test(tc, writes_tear_at_the_disks_aligned_units);
	tcase_add_test(tc, drop_subsets_are_counted);
	tcase_add_test(tc, samples_are_reproducible_under_a_seed);
	tcase_add_test(tc, ids_round_trip);
	tcase_add_test(tc, generated_ids_round_trip_and_resolve);
	tcase_add_test(tc, ids_not_in_the_log_are_refused);
	tcase_add_test(tc, overlay_reads_equal_a_naive_replay);
	tcase_add_test(tc, cow_writes_stay_in_their_state);
	tcase_add_test(tc, whole_images_are_written);
	tcase_add_test(tc, cow_write_without_memory_fails_and_keeps_the_state);
	tcase_add_test(tc, dedup_folds_what_a_later_write_overwrites_whole);
	tcase_add_test(tc, dedup_keys_equal_exactly_when_the_sources_do);
	tcase_add_test(tc, shards_are_read_strictly);
	tcase_add_test(tc, shards_split_the_run_exactly);
	tcase_add_test(tc, marks_are_found_and_counted_by_name);
	tcase_add_test(tc, folded_states_get_the_verdict_they_deserve);
	tcase_add_test(tc, aimed_runs_lose_only_the_writes_aimed_at);
	tcase_add_test(tc, aimed_runs_name_what_a_state_lost);
	tcase_add_test(tc, aimed_runs_fold_and_shard_as_the_unaimed_run);
	tcase_add_test(tc, ranges_are_read_strictly);
	tcase_add_test(tc, ranges_clear_copy_next_and_max);
	tcase_add_test(tc, joint_positions_follow_the_order);
	tcase_add_test(tc, joint_volatile_writes_are_every_disks_in_order);
	tcase_add_test(tc, joint_orders_that_do_not_fit_are_refused);
	tcase_add_test(tc, joint_ids_round_trip_and_bad_ones_are_refused);
	tcase_add_test(tc, joint_states_are_each_disks_state_at_one_instant);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(crash_suite());
}
