/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wb_err.h - the disk's write errors told to every open file once, as
 * the kernel's errseq_t tells a writeback error (mapping->wb_err against
 * each file's f_wb_err).
 *
 * The disk keeps one wb_err; each open file keeps the sequence number it
 * last saw.  An error (acknowledged writes lost) advances the disk's; an
 * fsync on a file whose number is behind fails with the error, once, and
 * catches up.  So every file open when the error came is told, each
 * once, whoever asks first; a file opened later is not, unless no file
 * had been told yet: then the first to look, whenever opened, is (the
 * kernel's rule since 4.19, so that an error with no file open to take it
 * still reaches someone, a writer that closed and opened again included).
 */
#ifndef RQDISK_WB_ERR_H
#define RQDISK_WB_ERR_H

#include <stdbool.h>
#include <stdint.h>

struct wb_err {
	uint64_t seq; /* errors so far */
	int error;    /* the last one, -errno */
	bool seen;    /* a file has been told of the last one */
};

/* An error came: every file open now, and the next to open, are told of it once. */
void wb_err_set(struct wb_err *e, int error);
/*
 * What a file opened now starts from (errseq_sample): the sequence now,
 * or 0 while no file has been told of the last error, which it then sees.
 */
uint64_t wb_err_sample(const struct wb_err *e);
/*
 * An fsync on a file that has seen up to *since (errseq_check_and_advance):
 * 0, or the error that came since, told once; *since catches up.
 */
int wb_err_check_and_advance(struct wb_err *e, uint64_t *since);

#endif
