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

/* Where w is among the nv writes of v: its index, or nv. */
static size_t find_ref(const struct crash_joint_ref *v, size_t nv, struct crash_joint_ref w)
{
	for (size_t i = 0; i < nv; i++)
		if (v[i].disk == w.disk && v[i].entry == w.entry)
			return i;
	return nv;
}

/* The lost and torn writes are among the nv volatile ones v, the lost in v's order, each once. */
static int check_writes(const struct crash_joint_state *st, const struct crash_joint_ref *v,
			size_t nv, char *why, size_t whylen)
{
	size_t at, next = 0;

	for (unsigned int i = 0; i < st->nr_drop; i++) {
		at = find_ref(v, nv, st->drop[i]);
		if (at == nv)
			return crash_refuse(why, whylen, "lost write %u.%zu is not a volatile write "
					    "after the order's first %zu entries", st->drop[i].disk,
					    st->drop[i].entry, st->n);
		if (at < next)
			return crash_refuse(why, whylen, "the lost writes must follow the order's "
					    "sequence, each once");
		next = at + 1;
	}
	if (!st->torn)
		return 0;
	if (find_ref(v, nv, st->torn_w) == nv)
		return crash_refuse(why, whylen, "torn write %u.%zu is not a volatile write after "
				    "the order's first %zu entries", st->torn_w.disk,
				    st->torn_w.entry, st->n);
	if (find_ref(st->drop, st->nr_drop, st->torn_w) < st->nr_drop)
		return crash_refuse(why, whylen, "torn write %u.%zu is lost too", st->torn_w.disk,
				    st->torn_w.entry);
	return 0;
}

/* The disks named are j's. */
static int check_disks(const struct crash_joint *j, const struct crash_joint_state *st,
		       char *why, size_t whylen)
{
	for (unsigned int i = 0; i <= st->nr_drop; i++) {
		const struct crash_joint_ref *w = i < st->nr_drop ? &st->drop[i] : &st->torn_w;

		if ((i < st->nr_drop || st->torn) && w->disk >= j->nr_disks)
			return crash_refuse(why, whylen, "disk %u: there are %u disks", w->disk,
					    j->nr_disks);
	}
	return 0;
}

int crash_joint_check(const struct crash_joint *j, const struct crash_joint_state *st, char *why,
		      size_t whylen)
{
	struct crash_joint_ref *v;
	struct crash_spec spec;
	struct crash_id id;
	char what[256];
	size_t nv = 0;
	int ret;

	if (st->n > j->nr)
		return crash_refuse(why, whylen, "the order has %zu entries, not %zu", j->nr,
				    st->n);
	ret = check_disks(j, st, why, whylen);
	if (ret)
		return ret;
	v = malloc((j->nr + 1) * sizeof(*v));
	ret = v ? crash_joint_volatile(j, st->n, v, &nv) : -ENOMEM;
	if (!ret)
		ret = check_writes(st, v, nv, why, whylen);
	free(v);
	/* what is left to check is the torn write's units: its disk's log says */
	for (unsigned int d = 0; !ret && d < j->nr_disks; d++) {
		ret = crash_joint_disk_id(j, st, d, &id);
		if (!ret && crash_resolve(j->logs[d], &id, &spec, what, sizeof(what)))
			ret = crash_refuse(why, whylen, "torn write %u.%zu cannot keep %llu of its "
					   "units of %llu bytes (a power of two, 512 to 65536; 0 < K < "
					   "its units; no discard)", st->torn_w.disk, st->torn_w.entry,
					   (unsigned long long)st->torn_k,
					   (unsigned long long)st->torn_a);
		crash_id_free(&id);
	}
	if (ret == -ENOMEM)
		snprintf(why, whylen, "out of memory");
	return ret;
}

int crash_joint_disk_id(const struct crash_joint *j, const struct crash_joint_state *st,
			unsigned int d, struct crash_id *id)
{
	size_t pos[LOG_ORDER_MAX_DISKS];

	memset(id, 0, sizeof(*id));
	crash_joint_positions(j, st->n, pos);
	id->kind = PT_ENTRY;
	id->k = pos[d];
	id->drop = malloc(CRASH_JOINT_MAX_DROP * sizeof(*id->drop));
	if (!id->drop)
		return -ENOMEM;
	/* the order meets each disk's entries rising: so does its share of the lost */
	for (unsigned int i = 0; i < st->nr_drop; i++)
		if (st->drop[i].disk == d)
			id->drop[id->nr_drop++] = st->drop[i].entry;
	if (st->torn && st->torn_w.disk == d) {
		id->torn = true;
		id->torn_e = st->torn_w.entry;
		id->torn_a = st->torn_a;
		id->torn_k = st->torn_k;
	}
	return 0;
}

size_t crash_joint_torn_ks(const struct crash_joint *j, struct crash_joint_ref w, uint64_t a,
			   uint64_t ks[3])
{
	const struct crash_entry *e = &j->logs[w.disk]->e[w.entry];

	return e->data ? crash_torn_ks(crash_torn_units(e, a), ks) : 0;
}

void crash_joint_free(struct crash_joint *j)
{
	free(j->seq);
	j->seq = NULL;
	j->nr = 0;
}
