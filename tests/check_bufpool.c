/* check_bufpool.c - I/O buffers: aligned, reused by size class, kept only up to the bound. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "bufpool.h"
#include "fake_driver.h"

#define PAGE 4096u
#define MIB (1u << 20)

START_TEST(buffers_are_page_aligned_and_whole)
{
	static const size_t sizes[] = { 0, 1, 512, PAGE, PAGE + 1, 129 * 1024, MIB, MIB + 512,
					8 * MIB };
	struct bufpool p;

	bufpool_init(&p, 16 * MIB);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *b = bufpool_get(&p, sizes[i]);

		ck_assert_ptr_nonnull(b);
		ck_assert_uint_eq((uintptr_t)b % PAGE, 0);
		memset(b, 0xa5, sizes[i]); /* ASan catches a short buffer */
		bufpool_put(&p, b, sizes[i]);
	}
	bufpool_destroy(&p);
}
END_TEST

START_TEST(a_freed_buffer_serves_the_next_of_its_class)
{
	struct bufpool p;
	void *a, *b, *c;

	bufpool_init(&p, 16 * MIB);
	a = bufpool_get(&p, MIB);
	bufpool_put(&p, a, MIB);
	ck_assert_uint_eq(p.kept, MIB);
	b = bufpool_get(&p, MIB - 512); /* same class: 1 MiB */
	ck_assert_ptr_eq(b, a);
	ck_assert_uint_eq(p.kept, 0);
	bufpool_put(&p, b, MIB - 512);
	c = bufpool_get(&p, 64 * 1024); /* another class: a new buffer */
	ck_assert_ptr_ne(c, a);
	ck_assert_uint_eq(p.kept, MIB);
	bufpool_put(&p, c, 64 * 1024);
	bufpool_destroy(&p);
}
END_TEST

START_TEST(the_bound_holds)
{
	struct bufpool p;
	void *b[4];

	bufpool_init(&p, 2 * MIB);
	for (int i = 0; i < 4; i++)
		b[i] = bufpool_get(&p, MIB);
	for (int i = 0; i < 4; i++)
		bufpool_put(&p, b[i], MIB);
	ck_assert_uint_eq(p.kept, 2 * MIB);
	bufpool_destroy(&p);
	ck_assert_uint_eq(p.kept, 0);
}
END_TEST

START_TEST(buffers_past_the_largest_class_are_not_kept)
{
	size_t big = ((size_t)1 << BUFPOOL_MAX_SHIFT) + 1;
	struct bufpool p;
	void *b;

	bufpool_init(&p, 64 * MIB);
	b = bufpool_get(&p, big);
	ck_assert_ptr_nonnull(b);
	bufpool_put(&p, b, big);
	ck_assert_uint_eq(p.kept, 0);
	ck_assert_ptr_null(bufpool_get(&p, SIZE_MAX)); /* no class, no buffer */
	bufpool_destroy(&p);
}
END_TEST

static Suite *bufpool_suite(void)
{
	Suite *s = suite_create("bufpool");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, buffers_are_page_aligned_and_whole);
	tcase_add_test(tc, a_freed_buffer_serves_the_next_of_its_class);
	tcase_add_test(tc, the_bound_holds);
	tcase_add_test(tc, buffers_past_the_largest_class_are_not_kept);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(bufpool_suite());
}
