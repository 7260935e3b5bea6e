/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_report.c - the summary of a run: per class made, checked, failed; the first failures; timing. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crash_report.h"

#define NS_PER_S 1000000000.0
#define PROGRESS_EVERY_NS 1000000000ull

static const char *const result_names[] = { "ok", "failed", "timeout" };

uint64_t report_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int report_init(struct report *r, FILE *csv)
{
	memset(r, 0, sizeof(*r));
	r->csv = csv;
	r->start_ns = r->last_progress_ns = report_now_ns();
	r->tty = isatty(STDERR_FILENO);
	r->progress = r->tty;
	if (csv && fprintf(csv, "id,class,result,exit,seconds,same_as\n") < 0)
		return -EIO;
	return 0;
}

void report_made(struct report *r, enum crash_class cls)
{
	r->made[cls]++;
}

/* An ID as a CSV field: quoted when it holds a comma (a drop list) or a quote. */
static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void report_checked(struct report *r, const char *id, enum crash_class cls,
		    enum check_result result, int exit, uint64_t ns, const char *tail)
{
	r->checked[cls]++;
	if (result != CHECK_OK) {
		r->failed[cls]++;
		if (r->nr_first < REPORT_FIRST_FAILED) {
			struct report_failure *f = &r->first[r->nr_first++];

			f->id = strdup(id);
			f->tail = strdup(tail ? tail : "");
			f->result = result;
			f->exit = exit;
			f->lost = r->name_lost ? r->name_lost(r->name_lost_ctx, id) : NULL;
		}
	}
	if (r->csv) {
		csv_field(r->csv, id);
		fprintf(r->csv, ",%s,%s,%d,%.3f,\n", crash_class_names[cls], result_names[result],
			exit, (double)ns / NS_PER_S);
	}
	if (r->on_checked)
		r->on_checked(r->on_checked_ctx, id, result, exit);
}

void report_folded(struct report *r, const char *id, enum crash_class cls, const char *same_as,
		   enum check_result result, int exit)
{
	r->made[cls]++;
	r->folded[cls]++;
	r->failed[cls] += result != CHECK_OK;
	if (r->csv) {
		csv_field(r->csv, id);
		fprintf(r->csv, ",%s,%s,%d,0.000,", crash_class_names[cls], result_names[result],
			exit);
		csv_field(r->csv, same_as);
		fputc('\n', r->csv);
	}
}

static uint64_t sum(const uint64_t *v)
{
	uint64_t s = 0;

	for (int i = 0; i < NR_CLASSES; i++)
		s += v[i];
	return s;
}

uint64_t report_nr_failed(const struct report *r)
{
	return sum(r->failed);
}

void report_progress(struct report *r, bool final)
{
	uint64_t now = report_now_ns();

	if (!r->progress || (!final && now - r->last_progress_ns < PROGRESS_EVERY_NS))
		return;
	r->last_progress_ns = now;
	fprintf(stderr, "%srqdisk-crash: %" PRIu64 " of %s%" PRIu64 " states checked, %" PRIu64
		" failed%s",
		r->tty ? "\r" : "", sum(r->checked) + sum(r->folded), r->total_about ? "about " : "",
		r->total, sum(r->failed), r->tty && !final ? "" : "\n");
	fflush(stderr);
}

/* The checker's last lines, indented under the failure. */
static void print_tail(FILE *f, const char *tail)
{
	const char *line = tail;

	while (*line) {
		size_t n = strcspn(line, "\n");

		fprintf(f, "    | %.*s\n", (int)n, line);
		line += n + (line[n] == '\n');
	}
}

int report_print(struct report *r, FILE *f, const char *via, unsigned int jobs)
{
	double wall = (double)(report_now_ns() - r->start_ns) / NS_PER_S;
	uint64_t done = sum(r->checked) + sum(r->folded);

	fprintf(f, "rqdisk-crash: states via %s, %u checker%s at a time\n", via, jobs,
		jobs == 1 ? "" : "s");
	if (r->shard_n)
		fprintf(f, "shard %lu/%lu: %" PRIu64 " of the run's %" PRIu64 " states\n",
			r->shard_k, r->shard_n, sum(r->made), r->run_states);
	fprintf(f, "%-8s %10s %10s %10s %10s\n", "class", "made", "checked", "failed", "folded");
	for (int c = 0; c < NR_CLASSES; c++)
		fprintf(f, "%-8s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
			crash_class_names[c], r->made[c], r->checked[c], r->failed[c],
			r->folded[c]);
	if (r->dedup)
		fprintf(f, "dedup: %" PRIu64 " states, %" PRIu64 " folded into earlier identical "
			"states (same bytes, same marks passed)\n", sum(r->made), sum(r->folded));
	for (size_t i = 0; i < r->nr_first; i++) {
		struct report_failure *x = &r->first[i];

		if (x->result == CHECK_TIMEOUT)
			fprintf(f, "failed: %s (timeout)\n", x->id);
		else
			fprintf(f, "failed: %s (exit %d)\n", x->id, x->exit);
		if (x->lost)
			fprintf(f, "  %s\n", x->lost);
		print_tail(f, x->tail);
	}
	if (report_nr_failed(r) > r->nr_first)
		fprintf(f, "... and %" PRIu64 " more failed\n", report_nr_failed(r) - r->nr_first);
	/* a point not checked is not one that passed: the summary says so, last before timing */
	if (r->skipped)
		fprintf(f, "not checked: %" PRIu64 " point%s past a gap in the log (%s)\n", r->skipped,
			r->skipped == 1 ? "" : "s", r->skipped_why);
	if (r->past_gaps)
		fprintf(f, "not an all-clear: %" PRIu64 " state%s past a gap in the log checked (%s): "
			"they miss writes\n", r->past_gaps, r->past_gaps == 1 ? "" : "s",
			r->skipped_why);
	if (r->cut_why[0])
		fprintf(f, "not checked: writes after the log's last entry (%s)\n", r->cut_why);
	fprintf(f,
		"time: %" PRIu64 " states in %.2f s, %.1f states/s; building states %.2f s, "
		"checkers %.2f s, serving reads %.2f s\n",
		done, wall, wall > 0 ? (double)done / wall : 0.0,
		(double)r->build_ns / NS_PER_S, (double)r->check_ns / NS_PER_S,
		(double)r->read_ns / NS_PER_S);
	if (fflush(f) || ferror(f) || (r->csv && (fflush(r->csv) || ferror(r->csv))))
		return -EIO;
	return 0;
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nr_first; i++) {
		free(r->first[i].id);
		free(r->first[i].tail);
		free(r->first[i].lost);
	}
	r->nr_first = 0;
}
