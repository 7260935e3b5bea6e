/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * disk_files.h - the disk's open files: each keeps the error sequence it
 * has seen, so that a loss of acknowledged writes fails the next fsync of
 * every one of them once (wb_err.h), as file->f_wb_err does.
 */
#ifndef RQDISK_DISK_FILES_H
#define RQDISK_DISK_FILES_H

#include "frontend.h"

/* A file opened on the disk: FUSE's file handle (fi->fh). */
struct fe_file {
	LIST_ENTRY(fe_file) link; /* on rqdisk.files until released */
	uint64_t wb_since;        /* the error sequence it has seen */
};

/* A new open, starting from the errors as they are now (wb_err_sample); NULL: no memory. */
struct fe_file *fe_file_open(struct rqdisk *d);
void fe_file_release(struct rqdisk *d, struct fe_file *f);
/*
 * Queue lock held, as f's fsync or O_DSYNC write ends: 0, or the error
 * (-EIO) of a loss since f last looked, told once.
 */
int fe_file_check(struct rqdisk *d, struct fe_file *f);
/* The files still open when the session ends: their release will never come. */
void fe_files_cleanup(struct rqdisk *d);

#endif
