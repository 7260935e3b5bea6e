/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_run.h - one run of rqdisk-crash: its log, the states it reports on, their files. */
#ifndef RQDISK_CRASH_RUN_H
#define RQDISK_CRASH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash_dedup.h"
#include "crash_log.h"
#include "crash_options.h"
#include "crash_overlay.h"
#include "crash_server.h"
#include "crash_shard.h"
#include "crash_state.h"

struct run {
	const struct options *o;
	struct crash_log log;
	int base_fd;
	uint64_t size;
	struct crash_gen gen;
	struct crash_dedup dedup;
	struct crash_pick pick; /* the states of gen this run reports on */
	struct crash_id single; /* --state */
	size_t single_pos;      /* its point's place in the log */
	uint64_t past_gap_states; /* states reported (listed, checked, folded) past a gap */
	size_t gen_skipped;     /* points past a gap the generator left out */
	bool single_done;
	struct ovl_layer *durable; /* the entries before the current point's last flush */
	struct crash_server *srv; /* NULL: copies */
	char *tmpdir, *mnt;
	uint64_t serial;
};

/* crash_main.c */
bool log_intact(const struct run *r);
void count_past_gap(struct run *r, const struct crash_id *id);

/* crash_files.c: the states as files, what crash_checker.h's check_source asks for */
int next_state(void *ctx, struct crash_id *id, enum crash_class *cls);
int build_ovl(struct run *r, const struct crash_id *id, struct ovl *ovl, bool shared);
char *marks_of(void *ctx, const struct crash_id *id);
int build_state(void *ctx, const struct crash_id *id, char *path, size_t pathlen, void **st);
void release_state(void *ctx, void *st);
int make_tmpdir(struct run *r);
int start_via(struct run *r, const char **via);
void cleanup(struct run *r);

#endif
