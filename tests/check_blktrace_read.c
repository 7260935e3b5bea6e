/* SPDX-License-Identifier: BSD-3-Clause */
/* check_blktrace_read.c - traces written record by record here, read back by bt_trace_load(). */
#include <byteswap.h>
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blktrace_read.h"
#include "fake_driver.h"

#define MAGIC (BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION)
#define WRITE_CAT BLK_TC_ACT(BLK_TC_WRITE)
#define MAX_FILES 8

/* A scratch directory and the trace files written into it. */
struct scratch {
	char dir[64];
	char name[96]; /* the trace's NAME: dir/t */
	char paths[MAX_FILES][128];
	unsigned int nr_paths;
	char why[256];
};

static void scratch_init(struct scratch *s)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->dir, "/tmp/check_blktrace_read.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(s->dir));
	snprintf(s->name, sizeof(s->name), "%s/t", s->dir);
}

static void scratch_free(struct scratch *s)
{
	for (unsigned int i = 0; i < s->nr_paths; i++)
		unlink(s->paths[i]);
	ck_assert_int_eq(rmdir(s->dir), 0);
}

/* Create dir/FILE for writing. */
static FILE *scratch_file(struct scratch *s, const char *file)
{
	char path[sizeof(s->paths[0])];
	FILE *f;

	ck_assert_uint_lt(s->nr_paths, MAX_FILES);
	snprintf(path, sizeof(path), "%s/%s", s->dir, file);
	memcpy(s->paths[s->nr_paths++], path, sizeof(path));
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	return f;
}

/*
 * One record as the kernel writes it, in the other byte order when swap;
 * with no pdu given, the header alone whatever its pdu_len says.
 */
static void emit(FILE *f, struct blk_io_trace t, const void *pdu, bool swap)
{
	uint16_t pdu_len = t.pdu_len;

	if (!t.magic)
		t.magic = MAGIC;
	if (swap) {
		t.magic = bswap_32(t.magic);
		t.sequence = bswap_32(t.sequence);
		t.time = bswap_64(t.time);
		t.sector = bswap_64(t.sector);
		t.bytes = bswap_32(t.bytes);
		t.action = bswap_32(t.action);
		t.pid = bswap_32(t.pid);
		t.device = bswap_32(t.device);
		t.cpu = bswap_32(t.cpu);
		t.error = bswap_16(t.error);
		t.pdu_len = bswap_16(t.pdu_len);
	}
	ck_assert_uint_eq(fwrite(&t, sizeof(t), 1, f), 1);
	if (pdu && pdu_len)
		ck_assert_uint_eq(fwrite(pdu, pdu_len, 1, f), 1);
}

/* A write event: action, time, cpu, sequence, sector. */
static struct blk_io_trace wr(uint32_t action, uint64_t time, uint32_t cpu, uint32_t seq,
			      uint64_t sector)
{
	return (struct blk_io_trace){ .action = action | WRITE_CAT, .time = time, .cpu = cpu,
				      .sequence = seq, .sector = sector, .bytes = 4096,
				      .pid = 42 };
}

static void close_file(FILE *f)
{
	ck_assert_int_eq(fclose(f), 0);
}

static void load_ok(struct scratch *s, const char *name, struct bt_trace *t)
{
	int ret = bt_trace_load(name, t, s->why, sizeof(s->why));

	ck_assert_msg(ret == 0, "%s: %d: %s", name, ret, s->why);
}

/* The load fails with err and a one-line reason holding each of the words. */
static void load_fails(struct scratch *s, const char *name, int err, const char *const *words)
{
	struct bt_trace t = { (void *)1, 99 };

	ck_assert_int_eq(bt_trace_load(name, &t, s->why, sizeof(s->why)), err);
	ck_assert_ptr_null(t.ev);
	ck_assert_uint_eq(t.nr, 0);
	ck_assert_ptr_null(strchr(s->why, '\n'));
	for (; *words; words++)
		ck_assert_msg(strstr(s->why, *words), "'%s' lacks '%s'", s->why, *words);
}

START_TEST(fields_read_as_written)
{
	struct scratch s;
	struct bt_trace t;
	FILE *f;

	scratch_init(&s);
	f = scratch_file(&s, "t.blktrace.0");
	emit(f,
	     (struct blk_io_trace){ .sequence = 7, .time = 123456789, .sector = 1u << 20,
				    .bytes = 65536, .action = BLK_TA_COMPLETE | WRITE_CAT,
				    .pid = 4321, .device = 240u << 20, .cpu = 3, .error = 65531 },
	     NULL, false);
	close_file(f);
	load_ok(&s, s.name, &t);
	ck_assert_uint_eq(t.nr, 1);
	ck_assert_uint_eq(t.ev[0].sequence, 7);
	ck_assert_uint_eq(t.ev[0].time, 123456789);
	ck_assert_uint_eq(t.ev[0].sector, 1u << 20);
	ck_assert_uint_eq(t.ev[0].bytes, 65536);
	ck_assert_uint_eq(t.ev[0].action, BLK_TA_COMPLETE | WRITE_CAT);
	ck_assert_uint_eq(bt_act(&t.ev[0]), __BLK_TA_COMPLETE);
	ck_assert(bt_cat(&t.ev[0], BLK_TC_WRITE));
	ck_assert(!bt_is_notify(&t.ev[0]));
	ck_assert_uint_eq(t.ev[0].pid, 4321);
	ck_assert_uint_eq(t.ev[0].cpu, 3);
	ck_assert_uint_eq(t.ev[0].error, 65531);
	bt_trace_free(&t);
	ck_assert_ptr_null(t.ev);
	scratch_free(&s);
}
END_TEST

/*
 * Two cpus' files, each in its own time order, interleave by time; at one
 * time the lower cpu goes first (whatever its sequence: each cpu counts its
 * own), and on one cpu the lower sequence.
 */
START_TEST(two_cpu_files_merge_in_time_cpu_sequence_order)
{
	static const struct {
		uint64_t time;
		uint32_t cpu, seq;
	} want[] = { { 10, 0, 1 }, { 20, 1, 1 }, { 30, 0, 5 }, { 30, 1, 2 },
		     { 30, 1, 3 }, { 40, 1, 4 }, { 50, 0, 6 } };
	struct scratch s;
	struct bt_trace t;
	FILE *f0, *f1;

	scratch_init(&s);
	f0 = scratch_file(&s, "t.blktrace.0");
	f1 = scratch_file(&s, "t.blktrace.1");
	emit(f0, wr(BLK_TA_QUEUE, 10, 0, 1, 0), NULL, false);
	emit(f0, wr(BLK_TA_QUEUE, 30, 0, 5, 8), NULL, false);
	emit(f0, wr(BLK_TA_QUEUE, 50, 0, 6, 16), NULL, false);
	emit(f1, wr(BLK_TA_QUEUE, 20, 1, 1, 24), NULL, false);
	emit(f1, wr(BLK_TA_QUEUE, 30, 1, 3, 32), NULL, false); /* out of sequence in its file */
	emit(f1, wr(BLK_TA_QUEUE, 30, 1, 2, 40), NULL, false);
	emit(f1, wr(BLK_TA_QUEUE, 40, 1, 4, 48), NULL, false);
	close_file(f0);
	close_file(f1);
	load_ok(&s, s.name, &t);
	ck_assert_uint_eq(t.nr, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < t.nr; i++) {
		ck_assert_msg(t.ev[i].time == want[i].time && t.ev[i].cpu == want[i].cpu &&
				      t.ev[i].sequence == want[i].seq,
			      "record %zu: time %" PRIu64 " cpu %u seq %u", i, t.ev[i].time,
			      t.ev[i].cpu, t.ev[i].sequence);
	}
	bt_trace_free(&t);
	scratch_free(&s);
}
END_TEST

/*
 * A missing cpu does not hide the ones after it, and neither another
 * trace whose name starts the same nor a file that only looks like one of
 * ours is read.
 */
START_TEST(every_cpu_file_and_only_those)
{
	struct scratch s;
	struct bt_trace t;
	FILE *f;

	scratch_init(&s);
	f = scratch_file(&s, "t.blktrace.0");
	emit(f, wr(BLK_TA_QUEUE, 10, 0, 1, 0), NULL, false);
	close_file(f);
	f = scratch_file(&s, "t.blktrace.12");
	emit(f, wr(BLK_TA_QUEUE, 5, 12, 1, 8), NULL, false);
	close_file(f);
	f = scratch_file(&s, "tt.blktrace.1");
	emit(f, wr(BLK_TA_QUEUE, 1, 1, 1, 16), NULL, false);
	close_file(f);
	f = scratch_file(&s, "t.blktrace.2.old");
	emit(f, wr(BLK_TA_QUEUE, 2, 2, 1, 24), NULL, false);
	close_file(f);
	load_ok(&s, s.name, &t);
	ck_assert_uint_eq(t.nr, 2);
	ck_assert_uint_eq(t.ev[0].cpu, 12);
	ck_assert_uint_eq(t.ev[0].sector, 8);
	ck_assert_uint_eq(t.ev[1].cpu, 0);
	bt_trace_free(&t);
	scratch_free(&s);
}
END_TEST

/* A trace of one file is named by that file itself; an empty one has no records. */
START_TEST(a_single_file_by_its_own_name)
{
	struct scratch s;
	struct bt_trace t;
	FILE *f;

	scratch_init(&s);
	f = scratch_file(&s, "one.trace");
	emit(f, wr(BLK_TA_ISSUE, 10, 0, 1, 64), NULL, false);
	emit(f, wr(BLK_TA_COMPLETE, 20, 0, 2, 64), NULL, false);
	close_file(f);
	load_ok(&s, s.paths[0], &t);
	ck_assert_uint_eq(t.nr, 2);
	ck_assert_uint_eq(bt_act(&t.ev[0]), __BLK_TA_ISSUE);
	ck_assert_uint_eq(bt_act(&t.ev[1]), __BLK_TA_COMPLETE);
	bt_trace_free(&t);

	close_file(scratch_file(&s, "empty"));
	load_ok(&s, s.paths[1], &t);
	ck_assert_uint_eq(t.nr, 0);
	bt_trace_free(&t);
	scratch_free(&s);
}
END_TEST

static void write_split_and_note(FILE *f, bool swap)
{
	uint64_t at = htobe64(1000008); /* big-endian whatever the host, as blkparse reads it */
	char comm[16] = "fio-writer-0123"; /* 15 characters and the NUL */
	char full[16];

	memset(full, 'x', sizeof(full)); /* no NUL at all: the kernel's comm can fill it */
	emit(f,
	     (struct blk_io_trace){ .action = BLK_TN_PROCESS, .time = 1, .pid = 77,
				    .pdu_len = sizeof(comm) },
	     comm, swap);
	emit(f,
	     (struct blk_io_trace){ .action = BLK_TA_SPLIT | WRITE_CAT, .time = 2, .sequence = 1,
				    .sector = 1000000, .bytes = 4096, .pid = 77,
				    .pdu_len = sizeof(at) },
	     &at, swap);
	emit(f,
	     (struct blk_io_trace){ .action = BLK_TN_PROCESS, .time = 3, .pid = 78,
				    .pdu_len = sizeof(full) },
	     full, swap);
}

static void assert_split_and_note(const struct bt_trace *t)
{
	ck_assert_uint_ge(t->nr, 3);
	ck_assert(bt_is_notify(&t->ev[0]));
	ck_assert_uint_eq(bt_act(&t->ev[0]), __BLK_TN_PROCESS);
	ck_assert_uint_eq(t->ev[0].pid, 77);
	ck_assert_str_eq(t->ev[0].comm, "fio-writer-0123");
	ck_assert(!bt_is_notify(&t->ev[1]));
	ck_assert_uint_eq(bt_act(&t->ev[1]), __BLK_TA_SPLIT);
	ck_assert_uint_eq(t->ev[1].sector, 1000000);
	ck_assert_uint_eq(t->ev[1].split_at, 1000008);
	ck_assert_uint_eq(t->ev[1].comm[0], '\0');
	ck_assert_str_eq(t->ev[2].comm, "xxxxxxxxxxxxxxx"); /* cut to 15 and terminated */
}

START_TEST(split_pdu_and_process_name)
{
	struct scratch s;
	struct bt_trace t;
	FILE *f;

	scratch_init(&s);
	f = scratch_file(&s, "t.blktrace.0");
	write_split_and_note(f, false);
	close_file(f);
	load_ok(&s, s.name, &t);
	assert_split_and_note(&t);
	bt_trace_free(&t);
	scratch_free(&s);
}
END_TEST

/*
 * A message note (what a filter writes when its settings change): kept as
 * a note with no comm, its text of any length passed over, so that the
 * records after it read whole in either byte order.
 */
static void assert_message_skipped(bool swap)
{
	static const char text[] = "delay: read_ms 200 -> 0"; /* 23 bytes: no multiple of 8 */
	struct scratch s;
	struct bt_trace t;
	FILE *f;

	scratch_init(&s);
	f = scratch_file(&s, "t.blktrace.0");
	emit(f, wr(BLK_TA_QUEUE, 10, 0, 1, 100), NULL, swap);
	emit(f,
	     (struct blk_io_trace){ .action = BLK_TN_MESSAGE, .time = 15, .pid = 42,
				    .pdu_len = sizeof(text) - 1 },
	     text, swap);
	emit(f, wr(BLK_TA_ISSUE, 20, 0, 2, 100), NULL, swap);
	emit(f, wr(BLK_TA_COMPLETE, 30, 0, 3, 100), NULL, swap);
	close_file(f);
	load_ok(&s, s.name, &t);
	ck_assert_uint_eq(t.nr, 4);
	ck_assert(bt_is_notify(&t.ev[1]));
	ck_assert_uint_eq(bt_act(&t.ev[1]), __BLK_TN_MESSAGE);
	ck_assert_uint_eq(t.ev[1].time, 15);
	ck_assert_uint_eq(t.ev[1].comm[0], '\0');
	for (size_t i = 0; i < 4; i += i ? 1 : 2) {
		ck_assert(!bt_is_notify(&t.ev[i]));
		ck_assert_uint_eq(t.ev[i].sector, 100);
		ck_assert_uint_eq(t.ev[i].bytes, 4096);
	}
	ck_assert_uint_eq(bt_act(&t.ev[2]), __BLK_TA_ISSUE);
	ck_assert_uint_eq(bt_act(&t.ev[3]), __BLK_TA_COMPLETE);
	bt_trace_free(&t);
	scratch_free(&s);
}

START_TEST(message_note_is_passed_over)
{
	assert_message_skipped(false);
	assert_message_skipped(true);
}
END_TEST

/* Written on a host of the other byte order: every field comes back in ours. */
START_TEST(byte_swapped_file_reads_in_host_order)
{
	struct scratch s;
	struct bt_trace t;
	FILE *f;

	scratch_init(&s);
	f = scratch_file(&s, "t.blktrace.0");
	write_split_and_note(f, true);
	emit(f,
	     (struct blk_io_trace){ .sequence = 0x01020304, .time = 0x0102030405060708ull,
				    .sector = 0x1112131415161718ull, .bytes = 0x00200000,
				    .action = BLK_TA_COMPLETE | WRITE_CAT, .pid = 0x2122,
				    .cpu = 5, .error = 0x3132 },
	     NULL, true);
	close_file(f);
	load_ok(&s, s.name, &t);
	ck_assert_uint_eq(t.nr, 4);
	assert_split_and_note(&t);
	ck_assert_uint_eq(t.ev[3].sequence, 0x01020304);
	ck_assert_uint_eq(t.ev[3].time, 0x0102030405060708ull);
	ck_assert_uint_eq(t.ev[3].sector, 0x1112131415161718ull);
	ck_assert_uint_eq(t.ev[3].bytes, 0x00200000);
	ck_assert_uint_eq(t.ev[3].action, BLK_TA_COMPLETE | WRITE_CAT);
	ck_assert_uint_eq(t.ev[3].pid, 0x2122);
	ck_assert_uint_eq(t.ev[3].cpu, 5);
	ck_assert_uint_eq(t.ev[3].error, 0x3132);
	bt_trace_free(&t);
	scratch_free(&s);
}
END_TEST

/*
 * The kernel puts a cgroup id before the pdu of records marked
 * __BLK_TA_CGROUP: kept (in the tracing host's byte order), and the pdu
 * read after it.
 */
START_TEST(cgroup_id_is_kept)
{
	struct {
		uint64_t cgroup;
		uint64_t at;
	} pdu = { 12345, htobe64(4096) };
	struct scratch s;
	struct bt_trace t;
	FILE *f;

	scratch_init(&s);
	f = scratch_file(&s, "t.blktrace.0");
	emit(f,
	     (struct blk_io_trace){ .action = BLK_TA_SPLIT | __BLK_TA_CGROUP | WRITE_CAT,
				    .sector = 4000, .bytes = 65536, .pdu_len = sizeof(pdu) },
	     &pdu, false);
	close_file(f);
	load_ok(&s, s.name, &t);
	ck_assert_uint_eq(t.nr, 1);
	ck_assert_uint_eq(t.ev[0].action, BLK_TA_SPLIT | WRITE_CAT);
	ck_assert_uint_eq(t.ev[0].split_at, 4096);
	ck_assert_uint_eq(t.ev[0].cgroup_id, 12345);
	bt_trace_free(&t);
	scratch_free(&s);
}
END_TEST

START_TEST(no_such_trace)
{
	static const char *const words[] = { "no such trace", NULL };
	struct scratch s;

	scratch_init(&s);
	load_fails(&s, "/nowhere/at/all", -ENOENT, words);
	ck_assert_ptr_nonnull(strstr(s.why, "/nowhere/at/all"));
	load_fails(&s, s.name, -ENOENT, words); /* its directory is there, empty */
	ck_assert_ptr_nonnull(strstr(s.why, s.name));
	scratch_free(&s);
}
END_TEST

/*
 * The second record of cpu 1's file is broken: the reason names that file
 * and byte 64, after the first record's 48 bytes and its 16-byte pdu.
 */
static void assert_second_record_refused(struct blk_io_trace broken, const char *what)
{
	struct blk_io_trace note = { .action = BLK_TN_PROCESS, .time = 20, .cpu = 1,
				     .pdu_len = 16 };
	const char *words[] = { NULL, "byte 64", what, NULL };
	char comm[16] = "fio";
	struct scratch s;
	FILE *f;

	scratch_init(&s);
	f = scratch_file(&s, "t.blktrace.0");
	emit(f, wr(BLK_TA_QUEUE, 10, 0, 1, 0), NULL, false);
	close_file(f);
	f = scratch_file(&s, "t.blktrace.1");
	emit(f, note, comm, false);
	emit(f, broken, NULL, false);
	close_file(f);
	words[0] = s.paths[1];
	load_fails(&s, s.name, -EINVAL, words);
	scratch_free(&s);
}

START_TEST(bad_magic)
{
	struct blk_io_trace t = wr(BLK_TA_QUEUE, 30, 1, 2, 16);

	t.magic = 0x12345607;
	assert_second_record_refused(t, "bad magic");
}
END_TEST

START_TEST(unknown_version)
{
	struct blk_io_trace t = wr(BLK_TA_QUEUE, 30, 1, 2, 16);

	t.magic = BLK_IO_TRACE_MAGIC | 6;
	assert_second_record_refused(t, "unknown version 6");
}
END_TEST

/* A pdu that runs past the end of the file: its length is not believed. */
START_TEST(truncated_pdu)
{
	struct blk_io_trace t = wr(BLK_TA_SPLIT, 30, 1, 2, 16);

	t.pdu_len = 4096;
	assert_second_record_refused(t, "truncated record");
}
END_TEST

/* A file that ends inside a record's 48 bytes. */
START_TEST(truncated_header)
{
	static const char *const words_base[] = { "byte 96", "truncated record", NULL };
	struct scratch s;
	FILE *f;

	scratch_init(&s);
	f = scratch_file(&s, "t.blktrace.0");
	emit(f, wr(BLK_TA_QUEUE, 10, 0, 1, 0), NULL, false);
	emit(f, wr(BLK_TA_ISSUE, 20, 0, 2, 0), NULL, false);
	emit(f, wr(BLK_TA_COMPLETE, 30, 0, 3, 0), NULL, false);
	close_file(f);
	ck_assert_int_eq(truncate(s.paths[0], 2 * sizeof(struct blk_io_trace) + 20), 0);
	load_fails(&s, s.name, -EINVAL, words_base);
	ck_assert_ptr_nonnull(strstr(s.why, s.paths[0]));
	scratch_free(&s);
}
END_TEST

static Suite *blktrace_read_suite(void)
{
	Suite *s = suite_create("blktrace_read");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, fields_read_as_written);
	tcase_add_test(tc, two_cpu_files_merge_in_time_cpu_sequence_order);
	tcase_add_test(tc, every_cpu_file_and_only_those);
	tcase_add_test(tc, a_single_file_by_its_own_name);
	tcase_add_test(tc, split_pdu_and_process_name);
	tcase_add_test(tc, message_note_is_passed_over);
	tcase_add_test(tc, byte_swapped_file_reads_in_host_order);
	tcase_add_test(tc, cgroup_id_is_kept);
	tcase_add_test(tc, no_such_trace);
	tcase_add_test(tc, bad_magic);
	tcase_add_test(tc, unknown_version);
	tcase_add_test(tc, truncated_pdu);
	tcase_add_test(tc, truncated_header);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(blktrace_read_suite());
}
