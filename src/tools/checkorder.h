/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * checkorder.h - the barrier invariant checked on a blktrace trace: every
 * bio queued before a barrier completes before the barrier is issued, and
 * no bio queued after a barrier is issued before the barrier completes.
 */
#ifndef RQDISK_CHECKORDER_H
#define RQDISK_CHECKORDER_H

#include <stddef.h>

#include "blktrace_read.h"

#define ORDER_WHY_LEN 512

struct order_report {
	size_t bios;              /* Q records */
	size_t barriers;          /* Q records carrying BLK_TC_FLUSH */
	size_t outstanding;       /* bios not yet completed when the trace ends */
	char why[ORDER_WHY_LEN];  /* the first violation, one line */
};

/*
 * Walk t in order, matching every D and C record to the Q'd bios it covers
 * (by direction and sectors, oldest first; a 0-byte flush to the oldest
 * barrier waiting for one).  Returns 0 when the order was kept, 1 at the
 * first violation or at a D or C record that matches no queued bio (r->why
 * names the records), -ENOMEM.  r's counts are filled in either way.
 */
int order_check(const struct bt_trace *t, struct order_report *r);

/* e as "Q #12 at 0.000123456 WS 100+8" (action, sequence, seconds, rwbs, sectors). */
void order_describe(const struct bt_event *e, char *buf, size_t len);

#endif
