/* SPDX-License-Identifier: BSD-3-Clause */
/* check_bufpool.c - I/O buffers: aligned, from the locked arena, given back; malloc past it. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bufpool.h"
#include "fake_driver.h"

#define PAGE 4096u
#define MIB (1u << 20)
#define INPUT (MIB + 2 * PAGE) /* a FUSE input buffer */

/* VmLck of this process, in bytes. */
static size_t locked_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	size_t kb = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %zu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/*
 * Whether this process may lock size more bytes, seen in VmLck.  Not
 * under AddressSanitizer, which makes mlock() a no-op that succeeds.
 */
static bool may_lock(size_t size)
{
	struct rlimit rl;

#ifdef __SANITIZE_ADDRESS__
	return false;
#endif
	return !geteuid() || (!getrlimit(RLIMIT_MEMLOCK, &rl) &&
			      (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= size + locked_bytes()));
}

START_TEST(buffers_are_page_aligned_and_whole)
{
	static const size_t sizes[] = { 0, 1, 512, PAGE, PAGE + 1, 129 * 1024, MIB, MIB + 512,
					INPUT, 2 * MIB, 8 * MIB };
	struct bufpool p;

	ck_assert_int_eq(bufpool_init(&p, 4 * MIB, 0), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *b = bufpool_get(&p, sizes[i]);

		ck_assert_ptr_nonnull(b);
		ck_assert_uint_eq((uintptr_t)b % PAGE, 0);
		memset(b, 0xa5, sizes[i]); /* ASan catches a short buffer past the arena */
		bufpool_put(&p, b, sizes[i]);
	}
	bufpool_destroy(&p);
}
END_TEST

START_TEST(the_arena_is_resident_and_locked)
{
	size_t before = locked_bytes();
	struct bufpool p;

	ck_assert_int_eq(bufpool_init(&p, 6 * MIB, 0), 0);
	ck_assert_uint_eq(p.size, 6 * MIB);
	ck_assert_uint_eq(p.free, 6 * MIB);
	if (!may_lock(6 * MIB)) {
		bufpool_destroy(&p);
		return;
	}
	ck_assert(p.locked);
	ck_assert_uint_ge(locked_bytes(), before + 6 * MIB);
	bufpool_destroy(&p);
	ck_assert_uint_le(locked_bytes(), before);
}
END_TEST

START_TEST(an_arena_not_a_block_multiple_is_rounded_up)
{
	struct bufpool p;

	ck_assert_int_eq(bufpool_init(&p, BUFPOOL_BLOCK + 1, 0), 0);
	ck_assert_uint_eq(p.size, 2 * BUFPOOL_BLOCK);
	bufpool_destroy(&p);
}
END_TEST

/*
 * A buffer takes its pages, not its power of two: the rest of the 2 MiB
 * block an input buffer came from serves smaller buffers.
 */
START_TEST(an_input_buffer_costs_its_pages)
{
	static const size_t tail[] = { 512 * 1024, 256 * 1024, 128 * 1024, 64 * 1024,
				       32 * 1024, 16 * 1024, 8 * 1024 };
	struct bufpool p;
	void *in, *b[7];

	ck_assert_int_eq(bufpool_init(&p, 2 * MIB, BUFPOOL_NO_FALLBACK), 0);
	in = bufpool_get(&p, INPUT);
	ck_assert(bufpool_owns(&p, in));
	ck_assert_uint_eq(p.free, 2 * MIB - INPUT);
	for (int i = 0; i < 7; i++) {
		b[i] = bufpool_get(&p, tail[i]);
		ck_assert(bufpool_owns(&p, b[i]));
	}
	ck_assert_uint_eq(p.free, 0);
	for (int i = 0; i < 7; i++)
		bufpool_put(&p, b[i], tail[i]);
	bufpool_put(&p, in, INPUT);
	ck_assert_uint_eq(p.free, 2 * MIB);
	ck_assert(bufpool_owns(&p, bufpool_get(&p, BUFPOOL_BLOCK))); /* whole again */
	bufpool_destroy(&p);
}
END_TEST

/*
 * Buffers of every size, taken and given back in a scrambled order, as
 * requests end out of order: none from malloc, and once all are back the
 * arena is whole again (every block joined with its buddy): its largest
 * blocks can all be had.
 */
START_TEST(steady_state_takes_nothing_from_malloc)
{
	static const size_t sizes[] = { 512, PAGE, 3 * PAGE, 64 * 1024, 130 * 1024, MIB, INPUT };
	enum { N = 24 };
	struct bufpool p;
	void *b[N] = { 0 };
	size_t sz[N] = { 0 };
	unsigned int seed = 1;

	ck_assert_int_eq(bufpool_init(&p, 32 * MIB, 0), 0);
	for (int round = 0; round < 20000; round++) {
		int i = (int)((seed = seed * 1103515245 + 12345) >> 16) % N;

		if (b[i]) {
			bufpool_put(&p, b[i], sz[i]);
			b[i] = NULL;
			continue;
		}
		sz[i] = sizes[(seed >> 8) % (sizeof(sizes) / sizeof(sizes[0]))];
		if (sz[i] == INPUT && i % 6) /* at most 4 input buffers, a 2 MiB block each */
			sz[i] = MIB;
		b[i] = bufpool_get(&p, sz[i]);
		ck_assert(bufpool_owns(&p, b[i]));
		memset(b[i], round, sz[i]);
	}
	for (int i = 0; i < N; i++)
		bufpool_put(&p, b[i], sz[i]);
	ck_assert_uint_eq(p.fallbacks, 0);
	ck_assert_uint_eq(p.free, 32 * MIB);
	for (int i = 0; i < 16; i++) {
		b[i] = bufpool_get(&p, BUFPOOL_BLOCK);
		ck_assert(bufpool_owns(&p, b[i]));
	}
	ck_assert_uint_eq(p.free, 0);
	bufpool_destroy(&p);
}
END_TEST

START_TEST(past_the_arena_malloc_is_counted)
{
	struct bufpool p;
	void *a, *b, *c;

	ck_assert_int_eq(bufpool_init(&p, 2 * MIB, 0), 0);
	a = bufpool_get(&p, INPUT);
	ck_assert(bufpool_owns(&p, a));
	b = bufpool_get(&p, MIB); /* 1 MiB - 8 KiB left, in smaller blocks */
	ck_assert_ptr_nonnull(b);
	ck_assert(!bufpool_owns(&p, b));
	ck_assert_uint_eq(p.fallbacks, 1);
	c = bufpool_get(&p, 512 * 1024); /* the tail's largest block */
	ck_assert(bufpool_owns(&p, c));
	ck_assert_uint_eq(p.free, MIB - 2 * PAGE - 512 * 1024);
	bufpool_put(&p, b, MIB); /* to free(), not into the arena */
	ck_assert_uint_eq(p.free, MIB - 2 * PAGE - 512 * 1024);
	bufpool_put(&p, a, INPUT);
	bufpool_put(&p, c, 512 * 1024);
	ck_assert_uint_eq(p.free, 2 * MIB);
	bufpool_destroy(&p);
}
END_TEST

START_TEST(without_fallback_an_empty_arena_gives_null)
{
	size_t big = BUFPOOL_BLOCK + 1;
	struct bufpool p;
	void *a;

	ck_assert_int_eq(bufpool_init(&p, 2 * MIB, BUFPOOL_NO_FALLBACK), 0);
	a = bufpool_get(&p, INPUT);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(bufpool_get(&p, MIB));
	ck_assert_ptr_null(bufpool_get(&p, big)); /* past the largest block */
	ck_assert_ptr_nonnull(bufpool_get(&p, PAGE)); /* what is left still serves */
	ck_assert_uint_eq(p.fallbacks, 0);
	bufpool_destroy(&p);
}
END_TEST

START_TEST(buffers_past_the_largest_block_come_from_malloc)
{
	size_t big = BUFPOOL_BLOCK + 1;
	struct bufpool p;
	void *b;

	ck_assert_int_eq(bufpool_init(&p, 4 * MIB, 0), 0);
	b = bufpool_get(&p, big);
	ck_assert_ptr_nonnull(b);
	ck_assert(!bufpool_owns(&p, b));
	bufpool_put(&p, b, big);
	ck_assert_uint_eq(p.free, 4 * MIB);
	ck_assert_ptr_null(bufpool_get(&p, SIZE_MAX)); /* no such buffer */
	bufpool_destroy(&p);
}
END_TEST

START_TEST(an_empty_arena_is_malloc_alone)
{
	struct bufpool p;
	void *b;

	ck_assert_int_eq(bufpool_init(&p, 0, 0), 0);
	b = bufpool_get(&p, PAGE);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(p.fallbacks, 1);
	bufpool_put(&p, b, PAGE);
	bufpool_destroy(&p);
}
END_TEST

START_TEST(mapped_locked_memory_is_resident)
{
	size_t before = locked_bytes();
	bool locked = false;
	char *m = mem_map_locked(3 * MIB, &locked);

	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq((uintptr_t)m % PAGE, 0);
	if (may_lock(3 * MIB)) {
		ck_assert(locked);
		ck_assert_uint_ge(locked_bytes(), before + 3 * MIB);
	}
	m[3 * MIB - 1] = 1;
	munmap(m, 3 * MIB);
}
END_TEST

/* What could be had now, counted in the free blocks big enough. */
START_TEST(has_counts_what_could_be_had)
{
	struct bufpool p;
	void *a, *b;

	ck_assert_int_eq(bufpool_init(&p, 4 * MIB, BUFPOOL_NO_FALLBACK), 0);
	ck_assert(bufpool_has(&p, BUFPOOL_BLOCK, 2));
	ck_assert(!bufpool_has(&p, BUFPOOL_BLOCK, 3));
	ck_assert(bufpool_has(&p, MIB, 4));
	ck_assert(!bufpool_has(&p, MIB, 5));
	ck_assert(!bufpool_has(&p, BUFPOOL_BLOCK + 1, 1));
	a = bufpool_get(&p, INPUT);
	ck_assert(bufpool_has(&p, BUFPOOL_BLOCK, 1));
	ck_assert(!bufpool_has(&p, BUFPOOL_BLOCK, 2));
	ck_assert(bufpool_has(&p, 512 * 1024, 5)); /* four in the free block, one in a's tail */
	ck_assert(!bufpool_has(&p, 512 * 1024, 6));
	b = bufpool_get(&p, PAGE);
	ck_assert(bufpool_has(&p, BUFPOOL_BLOCK, 1)); /* b came from a's tail */
	bufpool_put(&p, a, INPUT);
	bufpool_put(&p, b, PAGE);
	ck_assert(bufpool_has(&p, BUFPOOL_BLOCK, 2));
	bufpool_destroy(&p);
}
END_TEST

static Suite *bufpool_suite(void)
{
	Suite *s = suite_create("bufpool");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, buffers_are_page_aligned_and_whole);
	tcase_add_test(tc, the_arena_is_resident_and_locked);
	tcase_add_test(tc, an_arena_not_a_block_multiple_is_rounded_up);
	tcase_add_test(tc, an_input_buffer_costs_its_pages);
	tcase_add_test(tc, steady_state_takes_nothing_from_malloc);
	tcase_add_test(tc, past_the_arena_malloc_is_counted);
	tcase_add_test(tc, without_fallback_an_empty_arena_gives_null);
	tcase_add_test(tc, buffers_past_the_largest_block_come_from_malloc);
	tcase_add_test(tc, an_empty_arena_is_malloc_alone);
	tcase_add_test(tc, mapped_locked_memory_is_resident);
	tcase_add_test(tc, has_counts_what_could_be_had);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(bufpool_suite());
}
