/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_report.h - what rqdisk-crash tells: counts per class of state, the first failures, timing, CSV rows. */
#ifndef RQDISK_CRASH_REPORT_H
#define RQDISK_CRASH_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "crash_state.h"

#define REPORT_FIRST_FAILED 5 /* failing states shown with their checker's last lines */

enum check_result { CHECK_OK, CHECK_FAILED, CHECK_TIMEOUT };

struct report_failure {
	char *id;
	enum check_result result;
	int exit;   /* the exit status, or 128 + the signal that ended the checker */
	char *tail; /* the checker's last lines */
	char *lost; /* the lost writes of the sectors aimed at (--only), or NULL */
};

struct report {
	/* made = checked + folded; failed counts the folded states whose representative failed */
	uint64_t made[NR_CLASSES], checked[NR_CLASSES], failed[NR_CLASSES], folded[NR_CLASSES];
	struct report_failure first[REPORT_FIRST_FAILED];
	size_t nr_first;
	FILE *csv;
	uint64_t start_ns, build_ns, check_ns, read_ns;
	uint64_t total;       /* states expected, for the progress line */
	bool total_about;     /* a shard's share: about total */
	bool progress, tty;
	uint64_t last_progress_ns;
	uint64_t skipped;      /* points not checked: past a gap in the log */
	uint64_t past_gaps;    /* states past a gap reported all the same (--past-gaps) */
	char skipped_why[96];  /* "logging was off from entry E to F" */
	char cut_why[160];     /* the log was cut short, why (crash_log_cut_text), or "" */
	bool dedup;            /* a line says how many states were folded */
	unsigned long shard_k, shard_n; /* --shard K/N, or n 0 */
	uint64_t run_states;   /* with a shard: the whole run's */
	/* told of each state checked, after its row: the states folded into it follow */
	void (*on_checked)(void *ctx, const char *id, enum check_result result, int exit);
	void *on_checked_ctx;
	/* names the writes a failing state lost in the sectors aimed at, malloc'd; NULL: none */
	char *(*name_lost)(void *ctx, const char *id);
	void *name_lost_ctx;
};

uint64_t report_now_ns(void);

/* csv may be NULL: 0, or -errno when its header could not be written. */
int report_init(struct report *r, FILE *csv);
void report_made(struct report *r, enum crash_class cls);
/* One state checked: counted, and a row in the CSV; id and tail are copied. */
void report_checked(struct report *r, const char *id, enum crash_class cls,
		    enum check_result result, int exit, uint64_t ns, const char *tail);
/*
 * A state folded into an identical one, same_as, that was checked: counted,
 * and a row with same_as's verdict; id is copied.
 */
void report_folded(struct report *r, const char *id, enum crash_class cls, const char *same_as,
		   enum check_result result, int exit);
/* The progress line on stderr, at most once a second. */
void report_progress(struct report *r, bool final);
/* The summary on f; 0, or -EIO when it or the CSV could not be written. */
int report_print(struct report *r, FILE *f, const char *via, unsigned int jobs);
uint64_t report_nr_failed(const struct report *r);
void report_free(struct report *r);

#endif
