/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * disk_files.c - the disk's open files and the losses they are told of:
 * the stack counts writes lost after they were acknowledged (an NBD
 * server gone with writes no flush covered, stack->lost), and each open
 * file's next fsync or O_DSYNC write fails once for them, whichever
 * process asks first (wb_err.h).
 *
 * The rule is the kernel's: every file open when the loss came is told,
 * not only those that wrote since the last good flush.  Which writes a
 * flush covered is known below the queue, not per file (a write cache
 * holds writes, several connections flush together), and a file that
 * wrote nothing is told too rather than a writer of a lost block being
 * told nothing.  A file opened later is told only while no file has been
 * (so a writer that closed and opened again is).
 */
#include <errno.h>
#include <stdlib.h>

#include "disk_files.h"

/* The stack's new losses, into the disk's error sequence; lock held. */
static void fe_take_losses(struct rqdisk *d)
{
	if (!d->stack || d->stack->lost.events == d->lost_taken)
		return;
	d->lost_taken = d->stack->lost.events;
	wb_err_set(&d->wb_err, -EIO);
}

struct fe_file *fe_file_open(struct rqdisk *d)
{
	struct fe_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	blk_queue_lock(d->q);
	fe_take_losses(d);
	f->wb_since = wb_err_sample(&d->wb_err);
	LIST_INSERT_HEAD(&d->files, f, link);
	blk_queue_unlock(d->q);
	return f;
}

void fe_file_release(struct rqdisk *d, struct fe_file *f)
{
	blk_queue_lock(d->q);
	LIST_REMOVE(f, link);
	blk_queue_unlock(d->q);
	free(f);
}

int fe_file_check(struct rqdisk *d, struct fe_file *f)
{
	fe_take_losses(d);
	return wb_err_check_and_advance(&d->wb_err, &f->wb_since);
}

void fe_files_cleanup(struct rqdisk *d)
{
	struct fe_file *f;

	while ((f = LIST_FIRST(&d->files))) {
		LIST_REMOVE(f, link);
		free(f);
	}
}
