/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_checker.h - running CHECK on states: up to jobs at a time, each in its
 * own process group, "{}" replaced by the state's path, its ID in
 * RQDISK_CRASH_STATE and the marks its point has passed in RQDISK_CRASH_MARKS;
 * one that outlives the timeout is killed, group and all.
 */
#ifndef RQDISK_CRASH_CHECKER_H
#define RQDISK_CRASH_CHECKER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "crash_report.h"
#include "crash_state.h"

#define CHECK_TAIL_LINES 5
#define CHECK_GRACE_S 2 /* between the SIGTERM of a timeout and the SIGKILL */

/* Where the states come from and how each becomes a file. */
struct check_source {
	void *ctx;
	/* The next state: 1, 0 at the end, <0 an error (said). */
	int (*next)(void *ctx, struct crash_id *id, enum crash_class *cls);
	/* The state as a file at path; *st is handed back to release.  0 or <0 (said). */
	int (*build)(void *ctx, const struct crash_id *id, char *path, size_t pathlen, void **st);
	void (*release)(void *ctx, void *st);
	/* The marks the state has passed, as RQDISK_CRASH_MARKS holds them, malloc'd; NULL (said). */
	char *(*marks)(void *ctx, const struct crash_id *id);
};

struct check_opts {
	const char *exe;    /* CHECK, found in PATH */
	char **args;        /* CHECK and its arguments, "{}" not yet replaced */
	unsigned int jobs;
	unsigned int timeout_s;
	bool loop;          /* "{}" is the state on a loop device, not its file */
	const char *tmpdir; /* the checkers' output files go there */
};

/* The signals the run waits for; block them in every thread before any starts. */
void check_signals(sigset_t *set);

/*
 * Runs CHECK on every state of src.  0 when all ran, a signal number when
 * SIGINT, SIGTERM or SIGHUP stopped it (the checkers killed), <0 on an
 * error (said).
 */
int check_run(const struct check_opts *o, const struct check_source *src, struct report *r);

/* The path of CHECK (found in PATH unless it holds a '/'), malloc'd; NULL when not found. */
char *check_find(const char *name);

#endif
