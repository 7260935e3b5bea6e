/* SPDX-License-Identifier: BSD-3-Clause */
/* check_wb_err.c - the disk's write errors told to every open file once, as errseq does. */
#include <check.h>
#include <errno.h>

#include "fake_driver.h"
#include "wb_err.h"

/* No error: no file is told anything, however often it asks. */
START_TEST(no_error_tells_nothing)
{
	struct wb_err e = { 0 };
	uint64_t a = wb_err_sample(&e);

	ck_assert_int_eq(wb_err_check_and_advance(&e, &a), 0);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &a), 0);
}
END_TEST

/* Every file open at the error is told once, whoever asks first; then 0. */
START_TEST(every_open_file_is_told_once)
{
	struct wb_err e = { 0 };
	uint64_t a = wb_err_sample(&e), b = wb_err_sample(&e), c = wb_err_sample(&e);

	wb_err_set(&e, -EIO);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &a), -EIO);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &a), 0);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &b), -EIO);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &b), 0);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &a), 0);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &c), -EIO);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &c), 0);
}
END_TEST

/* A file opened once a file has been told of the error is not told. */
START_TEST(a_file_opened_after_the_error_was_told_is_not)
{
	struct wb_err e = { 0 };
	uint64_t a = wb_err_sample(&e), late;

	wb_err_set(&e, -EIO);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &a), -EIO);
	late = wb_err_sample(&e);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &late), 0);
}
END_TEST

/*
 * An error no file has been told of yet goes to the files opened after
 * it too, until one is told: it is never lost for want of an open file.
 */
START_TEST(an_error_no_file_was_told_of_goes_to_the_next_opened)
{
	struct wb_err e = { 0 };
	uint64_t a, b, c;

	wb_err_set(&e, -EIO);
	a = wb_err_sample(&e);
	b = wb_err_sample(&e);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &a), -EIO);
	c = wb_err_sample(&e);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &b), -EIO);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &c), 0);
	/* a second error, after the first was told: the same again */
	wb_err_set(&e, -EIO);
	c = wb_err_sample(&e);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &c), -EIO);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &a), -EIO);
}
END_TEST

/* Several errors before a file asks are told as one, the last one's error. */
START_TEST(errors_before_a_file_asks_are_told_once_with_the_last)
{
	struct wb_err e = { 0 };
	uint64_t a = wb_err_sample(&e);

	wb_err_set(&e, -EIO);
	wb_err_set(&e, -ENOSPC);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &a), -ENOSPC);
	ck_assert_int_eq(wb_err_check_and_advance(&e, &a), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wb_err");
	TCase *tc = tcase_create("errseq");

	tcase_add_test(tc, no_error_tells_nothing);
	tcase_add_test(tc, every_open_file_is_told_once);
	tcase_add_test(tc, a_file_opened_after_the_error_was_told_is_not);
	tcase_add_test(tc, an_error_no_file_was_told_of_goes_to_the_next_opened);
	tcase_add_test(tc, errors_before_a_file_asks_are_told_once_with_the_last);
	suite_add_tcase(s, tc);
	return fake_run_suite(s);
}
