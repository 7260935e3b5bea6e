/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_joint.c - several disks' logs in their shared order (crash_joint.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_joint.h"
#include "crash_state.h"
#include "log_order.h"

/* Each disk's lines number its log's entries: else the order is another run's. */
static int joint_counts(const struct crash_joint *j, const uint8_t *disks, char *why,
			size_t whylen)
{
	size_t count[LOG_ORDER_MAX_DISKS] = { 0 };

	for (size_t i = 0; i < j->nr; i++)
		count[disks[i]]++;
	for (unsigned int d = 0; d < j->nr_disks; d++)
		if (count[d] != j->logs[d]->nr)
			return crash_refuse(why, whylen,
					    "order: disk %u has %zu lines, its log %zu entries", d,
					    count[d], j->logs[d]->nr);
	return 0;
}

int crash_joint_init(struct crash_joint *j, const struct crash_log *const *logs,
		     unsigned int nr_disks, const char *order, size_t len, char *why, size_t whylen)
{
	size_t next[LOG_ORDER_MAX_DISKS] = { 0 };
	char what[200];
	uint8_t *disks;
	int ret;

	memset(j, 0, sizeof(*j));
	if (!nr_disks || nr_disks > LOG_ORDER_MAX_DISKS)
		return crash_refuse(why, whylen, "order: %u disks; an order holds 1 to %d",
				    nr_disks, LOG_ORDER_MAX_DISKS);
	j->nr_disks = nr_disks;
	j->logs = logs;
	ret = log_order_parse(order, len, nr_disks, &disks, &j->nr, what, sizeof(what));
	if (ret) {
		snprintf(why, whylen, "order %s", what);
		return ret;
	}
	ret = joint_counts(j, disks, why, whylen);
	if (!ret) {
		j->seq = malloc((j->nr ? j->nr : 1) * sizeof(*j->seq));
		ret = j->seq ? 0 : -ENOMEM;
		if (ret)
			snprintf(why, whylen, "out of memory");
	}
	for (size_t i = 0; !ret && i < j->nr; i++)
		j->seq[i] = (struct crash_joint_ref){ disks[i], next[disks[i]]++ };
	free(disks);
	if (ret)
		crash_joint_free(j);
	return ret;
}

void crash_joint_positions(const struct crash_joint *j, size_t n, size_t *pos)
{
	memset(pos, 0, j->nr_disks * sizeof(*pos));
	for (size_t i = 0; i < n && i < j->nr; i++)
		pos[j->seq[i].disk] = j->seq[i].entry + 1;
}

int crash_joint_volatile(const struct crash_joint *j, size_t n, struct crash_joint_ref *out,
			 size_t *count)
{
	size_t pos[LOG_ORDER_MAX_DISKS], nv[LOG_ORDER_MAX_DISKS], k[LOG_ORDER_MAX_DISKS] = { 0 };
	size_t *v[LOG_ORDER_MAX_DISKS] = { NULL };
	int ret = 0;

	*count = 0;
	crash_joint_positions(j, n, pos);
	for (unsigned int d = 0; d < j->nr_disks && !ret; d++) {
		v[d] = malloc((pos[d] ? pos[d] : 1) * sizeof(*v[d]));
		if (!v[d])
			ret = -ENOMEM;
		else
			nv[d] = crash_volatile(j->logs[d], pos[d], v[d]);
	}
	/* seq meets each disk's entries rising, as its volatile list is */
	for (size_t i = 0; !ret && i < n && i < j->nr; i++) {
		unsigned int d = j->seq[i].disk;

		if (k[d] < nv[d] && v[d][k[d]] == j->seq[i].entry) {
			out[(*count)++] = j->seq[i];
			k[d]++;
		}
	}
	for (unsigned int d = 0; d < j->nr_disks; d++)
		free(v[d]);
	return ret;
}

void crash_joint_free(struct crash_joint *j)
{
	free(j->seq);
	j->seq = NULL;
	j->nr = 0;
}
