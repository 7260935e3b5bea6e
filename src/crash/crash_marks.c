/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_marks.c - a log's marks indexed by name, so that no question about them walks them all. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crash_log.h"
#include "crash_marks.h"

static const struct crash_entry *mark_entry(const struct crash_log *log, size_t m)
{
	return &log->e[log->marks[m]];
}

/* Names in byte order, a shorter name before every longer one it begins. */
static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

static int by_name_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct crash_log *log = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct crash_entry *ea = mark_entry(log, a), *eb = mark_entry(log, b);
	int c = name_cmp(ea->mark, ea->mark_len, eb->mark, eb->mark_len);

	return c ? c : a < b ? -1 : a > b;
}

static bool same_name(const struct crash_log *log, size_t a, size_t b)
{
	const struct crash_entry *ea = mark_entry(log, a), *eb = mark_entry(log, b);

	return !name_cmp(ea->mark, ea->mark_len, eb->mark, eb->mark_len);
}

/* Numbers each run of by_name (the runs in name order): run_of per mark, run_start per run. */
static size_t number_runs(struct crash_marks *m, const struct crash_log *log, size_t *run_start)
{
	size_t runs = 0;

	for (size_t i = 0; i < log->nr_marks; i++) {
		size_t mk = m->by_name[i];

		if (!i || !same_name(log, m->by_name[i - 1], mk))
			run_start[runs++] = i;
		m->name_of[mk] = runs - 1;
		m->occ[mk] = i - run_start[runs - 1] + 1;
	}
	return runs;
}

/* The runs renumbered in the order each name first appears in the log. */
static int renumber_by_first(struct crash_marks *m, const struct crash_log *log,
			     const size_t *run_start, size_t runs)
{
	size_t *to = malloc((runs ? runs : 1) * sizeof(*to));

	if (!to)
		return -ENOMEM;
	for (size_t mk = 0; mk < log->nr_marks; mk++) {
		size_t run = m->name_of[mk];

		if (m->occ[mk] != 1)
			continue;
		to[run] = m->nr_names;
		m->first[m->nr_names] = run_start[run];
		m->count[m->nr_names++] = (run + 1 < runs ? run_start[run + 1] : log->nr_marks) -
					  run_start[run];
	}
	for (size_t mk = 0; mk < log->nr_marks; mk++)
		m->name_of[mk] = to[m->name_of[mk]];
	free(to);
	return 0;
}

int crash_marks_index(struct crash_marks *m, const struct crash_log *log)
{
	size_t n = log->nr_marks ? log->nr_marks : 1, runs;
	size_t *run_start;
	int ret = -ENOMEM;

	memset(m, 0, sizeof(*m));
	m->by_name = malloc(n * sizeof(*m->by_name));
	m->name_of = malloc(n * sizeof(*m->name_of));
	m->occ = malloc(n * sizeof(*m->occ));
	m->first = malloc(n * sizeof(*m->first));
	m->count = malloc(n * sizeof(*m->count));
	run_start = malloc(n * sizeof(*run_start));
	if (!m->by_name || !m->name_of || !m->occ || !m->first || !m->count || !run_start)
		goto out;
	for (size_t i = 0; i < log->nr_marks; i++)
		m->by_name[i] = i;
	qsort_r(m->by_name, log->nr_marks, sizeof(*m->by_name), by_name_cmp, (void *)log);
	runs = number_runs(m, log, run_start);
	ret = renumber_by_first(m, log, run_start, runs);
out:
	free(run_start);
	if (ret)
		crash_marks_free(m);
	return ret;
}

void crash_marks_free(struct crash_marks *m)
{
	free(m->by_name);
	free(m->name_of);
	free(m->occ);
	free(m->first);
	free(m->count);
	memset(m, 0, sizeof(*m));
}

long crash_marks_find(const struct crash_log *log, const char *name, size_t len, uint64_t k)
{
	const struct crash_marks *m = &log->names;
	const struct crash_entry *e;
	size_t lo = 0, hi = log->nr_marks;

	/* the first mark of by_name whose name is not below name */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		e = mark_entry(log, m->by_name[mid]);
		if (name_cmp(e->mark, e->mark_len, name, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == log->nr_marks || !k)
		return -1;
	e = mark_entry(log, m->by_name[lo]);
	if (name_cmp(e->mark, e->mark_len, name, len) || k > m->count[m->name_of[m->by_name[lo]]])
		return -1;
	return (long)m->by_name[lo + k - 1];
}

/* How many of v's n rising values are below x. */
static size_t below(const size_t *v, size_t n, size_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t crash_marks_before(const struct crash_log *log, size_t pos)
{
	return below(log->marks, log->nr_marks, pos);
}

uint64_t crash_marks_passed(const struct crash_log *log, size_t n, size_t nr_passed)
{
	const struct crash_marks *m = &log->names;

	/* a name's run in by_name rises by place: the marks among the first nr_passed */
	return below(m->by_name + m->first[n], m->count[n], nr_passed);
}
