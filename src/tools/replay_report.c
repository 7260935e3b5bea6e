/* SPDX-License-Identifier: BSD-3-Clause */
/* replay_report.c - a replay's numbers as a table row, a CSV row, or every latency. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define NS_PER_MS 1e6

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p percent at or below it. */
static uint64_t percentile(const uint64_t *sorted, size_t n, unsigned int p)
{
	size_t rank = (n * p + 99) / 100;

	return sorted[rank ? rank - 1 : 0];
}

int replay_lat_summary(const struct replay_lat *lat, struct lat_summary *s)
{
	unsigned __int128 sum = 0; /* latencies near the clock's 2^63 ns would wrap a 64-bit sum */
	uint64_t *v;

	memset(s, 0, sizeof(*s));
	if (!lat->nr)
		return 0;
	v = malloc(lat->nr * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, lat->ns, lat->nr * sizeof(*v));
	qsort(v, lat->nr, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < lat->nr; i++)
		sum += v[i];
	s->mean = (uint64_t)(sum / lat->nr);
	s->p50 = percentile(v, lat->nr, 50);
	s->p99 = percentile(v, lat->nr, 99);
	s->max = v[lat->nr - 1];
	free(v);
	return 0;
}

static const char *const columns[] = {
	"elevator", "requests", "merges", "MB/s",
	"read_mean_ms", "read_p50_ms", "read_p99_ms", "read_max_ms",
	"write_mean_ms", "write_p50_ms", "write_p99_ms", "write_max_ms",
	"seek_sectors", "barriers", "errors",
};
#define NR_COLUMNS (sizeof(columns) / sizeof(columns[0]))

/* Wide enough for the header and the numbers below it. */
static const int widths[NR_COLUMNS] = { -10, 9, 8, 9, 12, 11, 11, 11, 13, 12, 12, 12, 14, 8, 6 };

/* The multi-queue queue's own columns: hardware queue N's dispatched requests. */
#define HW_COLUMN_WIDTH 16
#define HW_COLUMN "hctx%u_dispatched"

/* The columns, and after them one per hardware queue of a multi-queue queue (none: 0). */
void replay_print_header(FILE *f, bool csv, unsigned int nr_hw_queues)
{
	char name[32];

	for (size_t i = 0; i < NR_COLUMNS; i++) {
		if (csv)
			fprintf(f, "%s%s", i ? "," : "", columns[i]);
		else
			fprintf(f, "%s%*s", i ? " " : "", widths[i], columns[i]);
	}
	for (unsigned int n = 0; n < nr_hw_queues; n++) {
		snprintf(name, sizeof(name), HW_COLUMN, n);
		if (csv)
			fprintf(f, ",%s", name);
		else
			fprintf(f, " %*s", HW_COLUMN_WIDTH, name);
	}
	fputc('\n', f);
}

static double mb_per_s(const struct replay_result *res)
{
	uint64_t span = res->end_ns - res->start_ns;

	return span ? (double)res->bytes / ((double)span / 1e9) / 1e6 : 0.0;
}

static void print_field(FILE *f, bool csv, size_t i, const char *text)
{
	if (csv)
		fprintf(f, "%s%s", i ? "," : "", text);
	else
		fprintf(f, "%s%*s", i ? " " : "", widths[i], text);
}

static void print_ms(FILE *f, bool csv, size_t i, uint64_t ns)
{
	char text[32];

	snprintf(text, sizeof(text), "%.3f", (double)ns / NS_PER_MS);
	print_field(f, csv, i, text);
}

static void print_u64(FILE *f, bool csv, size_t i, uint64_t v)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
	print_field(f, csv, i, text);
}

int replay_print_row(FILE *f, bool csv, const char *elevator, const struct replay_result *res)
{
	struct lat_summary s[2];
	char text[32];
	size_t i = 0;

	if (replay_lat_summary(&res->lat[0], &s[0]) || replay_lat_summary(&res->lat[1], &s[1]))
		return -ENOMEM;
	print_field(f, csv, i++, elevator);
	print_u64(f, csv, i++, res->requests);
	print_u64(f, csv, i++, res->merges);
	snprintf(text, sizeof(text), "%.2f", mb_per_s(res));
	print_field(f, csv, i++, text);
	for (int d = 0; d < 2; d++) {
		print_ms(f, csv, i++, s[d].mean);
		print_ms(f, csv, i++, s[d].p50);
		print_ms(f, csv, i++, s[d].p99);
		print_ms(f, csv, i++, s[d].max);
	}
	print_u64(f, csv, i++, res->seek_sectors);
	print_u64(f, csv, i++, res->barriers);
	print_u64(f, csv, i++, res->errors);
	for (unsigned int n = 0; n < res->nr_hw_queues; n++) {
		if (csv)
			fprintf(f, ",%llu", (unsigned long long)res->hw_dispatched[n]);
		else
			fprintf(f, " %*llu", HW_COLUMN_WIDTH,
				(unsigned long long)res->hw_dispatched[n]);
	}
	fputc('\n', f);
	return 0;
}

/* One line per I/O, in completion order per direction: what a CDF is drawn from. */
void replay_print_latencies(FILE *f, const char *elevator, const struct replay_result *res)
{
	static const char *const dir[2] = { "read", "write" };

	for (int d = 0; d < 2; d++)
		for (size_t i = 0; i < res->lat[d].nr; i++)
			fprintf(f, "%s,%s,%.6f\n", elevator, dir[d],
				(double)res->lat[d].ns[i] / NS_PER_MS);
}
