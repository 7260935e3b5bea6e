/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_joint_id.c - the joint state IDs' text, parsed and printed (crash_joint_id.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "crash_joint_id.h"
#include "log_order.h"

static bool take_char(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

/* "D.E" at *p. */
static bool take_ref(const char **p, struct crash_joint_ref *w, const char **reason)
{
	const char *at = *p;
	uint64_t d, e;

	if (!crash_id_number(p, &d))
		return false;
	if (d >= LOG_ORDER_MAX_DISKS) {
		*p = at;
		*reason = "disks are numbered 0 to 15";
		return false;
	}
	if (!take_char(p, '.') || !crash_id_number(p, &e))
		return false;
	w->disk = (unsigned int)d;
	w->entry = (size_t)e;
	return true;
}

static bool take_drops(const char **p, struct crash_joint_state *st, const char **reason)
{
	while (take_char(p, '-')) {
		if (st->nr_drop == CRASH_JOINT_MAX_DROP) {
			(*p)--;
			*reason = "at most 3 lost writes";
			return false;
		}
		if (!take_ref(p, &st->drop[st->nr_drop++], reason))
			return false;
	}
	return true;
}

static bool take_torn(const char **p, struct crash_joint_state *st, const char **reason)
{
	if (!take_char(p, '~'))
		return true;
	st->torn = true;
	return take_ref(p, &st->torn_w, reason) && take_char(p, '@') &&
	       crash_id_number(p, &st->torn_a) && take_char(p, '/') &&
	       crash_id_number(p, &st->torn_k);
}

int crash_joint_id_parse(const char *s, struct crash_joint_state *st, char *why, size_t whylen)
{
	const char *p = s, *reason = NULL;
	char whole[65], at[17];
	uint64_t n = 0;
	bool ok;

	memset(st, 0, sizeof(*st));
	ok = !strncmp(p, "joint:", 6);
	if (ok) {
		p += 6;
		ok = crash_id_number(&p, &n);
	}
	st->n = (size_t)n;
	ok = ok && take_drops(&p, st, &reason) && take_torn(&p, st, &reason) && !*p;
	if (ok)
		return 0;
	memset(st, 0, sizeof(*st));
	return crash_refuse(why, whylen, "bad joint state ID '%s%s' at '%s'%s%s",
			    crash_printable(s, 64, whole), strlen(s) > 64 ? "..." : "",
			    crash_printable(p, 16, at), reason ? ": " : "", reason ? reason : "");
}

void crash_joint_id_format(const struct crash_joint_state *st, char *buf, size_t len)
{
	int at = snprintf(buf, len, "joint:%zu", st->n);

	for (unsigned int i = 0; i < st->nr_drop && at > 0 && (size_t)at < len; i++)
		at += snprintf(buf + at, len - (size_t)at, "-%u.%zu", st->drop[i].disk,
			       st->drop[i].entry);
	if (st->torn && at > 0 && (size_t)at < len)
		snprintf(buf + at, len - (size_t)at, "~%u.%zu@%llu/%llu", st->torn_w.disk,
			 st->torn_w.entry, (unsigned long long)st->torn_a,
			 (unsigned long long)st->torn_k);
}
