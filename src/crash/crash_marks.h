/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_marks.h - a log's marks by name: which of its name each mark is,
 * where the K-th mark of a name stands, and how many of each name a state
 * has passed, each found in logarithmic time, so that a log of a million
 * marks is listed in seconds.
 *
 * The marks are numbered as crash_log's marks[] numbers them, in log
 * order.  A name is its bytes; the names are numbered in the order each
 * first appears in the log.
 */
#ifndef RQDISK_CRASH_MARKS_H
#define RQDISK_CRASH_MARKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct crash_log;

struct crash_marks {
	size_t *by_name;    /* the marks sorted by name, then by place: a name's marks are a run */
	size_t *name_of;    /* per mark: its name's number */
	uint64_t *occ;      /* per mark: which of its name it is, from 1 */
	size_t *first;      /* per name: where its run starts in by_name */
	size_t *count;      /* per name: how many marks bear it */
	size_t nr_names;
};

/* Indexes the marks of log (its e[] and marks[] set): 0, -ENOMEM. */
int crash_marks_index(struct crash_marks *m, const struct crash_log *log);
void crash_marks_free(struct crash_marks *m);

/* The index into marks[] of the k-th mark (from 1) named name, or -1 when there is none. */
long crash_marks_find(const struct crash_log *log, const char *name, size_t len, uint64_t k);

/* How many marks stand before entry pos: the marks a state at pos has passed. */
size_t crash_marks_before(const struct crash_log *log, size_t pos);

/* How many marks of name number n stand among the first nr_passed marks. */
uint64_t crash_marks_passed(const struct crash_log *log, size_t n, size_t nr_passed);

#endif
