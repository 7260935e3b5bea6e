/* SPDX-License-Identifier: BSD-3-Clause */
/* wb_err.c - the disk's write errors, told to every open file once (wb_err.h). */
#include "wb_err.h"

void wb_err_set(struct wb_err *e, int error)
{
	e->seq++;
	e->error = error;
	e->seen = false;
}

uint64_t wb_err_sample(const struct wb_err *e)
{
	return e->seen ? e->seq : 0;
}

int wb_err_check_and_advance(struct wb_err *e, uint64_t *since)
{
	if (*since == e->seq)
		return 0;
	*since = e->seq;
	e->seen = true;
	return e->error;
}
