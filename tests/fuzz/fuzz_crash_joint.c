/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_crash_joint.c - fuzz target: several disks' logs read with their
 * shared order (crash_joint.h).  The first byte says how many disks (1 to
 * 4) and which entries are flushes; the rest is the order file.  Over logs
 * made to hold as many entries as the order gives each disk, an order that
 * parses is taken, its sequence numbers each disk's entries rising, the
 * positions after n entries add up to n, and the volatile writes there are
 * each disk's own (crash_volatile) in the order's sequence; a state losing
 * the first or the last of them is taken, one losing both out of the
 * order's sequence, or one past the order's end, refused.  With one entry
 * more in disk 0's log, the same order is refused in one line naming the
 * count; an order that does not parse is refused in one line.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "crash_joint.h"
#include "crash_state.h"
#include "log_order.h"

#define SS 512
#define MAX_DISKS 4
#define TEXT_MAX 4096

/* A log of nr entries over an image of 8 sectors: writes, and a flush where the mask says. */
static uint8_t *make_log(size_t nr, unsigned int flush_every, size_t *len)
{
	uint8_t *buf = calloc(1 + 2 * nr, SS), *p = buf + SS;
	struct log_write_super s = { htole64(LOG_WRITES_MAGIC), htole64(LOG_WRITES_VERSION),
				     htole64(nr), htole32(SS) };

	FUZZ_ASSERT(buf);
	memcpy(buf, &s, sizeof(s));
	for (size_t i = 0; i < nr; i++) {
		bool flush = flush_every && i % flush_every == flush_every - 1;
		struct log_write_entry e = { htole64(i % 8), htole64(flush ? 0 : 1),
					     htole64(flush ? LOG_FLUSH_FLAG : 0), 0 };

		memcpy(p, &e, sizeof(e));
		p += SS;
		if (!flush) {
			memset(p, (int)i, SS);
			p += SS;
		}
	}
	*len = (size_t)(p - buf);
	return buf;
}

/* The joint states at n losing one of the nv volatile writes v, or two out of order. */
static void check_states(const struct crash_joint *j, size_t n, const struct crash_joint_ref *v,
			 size_t nv)
{
	struct crash_joint_state st = { .n = n, .nr_drop = 1 };
	char why[256] = "";

	for (size_t k = 0; k < nv; k += nv - 1 > k ? nv - 1 - k : 1) {
		st.drop[0] = v[k];
		FUZZ_ASSERT(!crash_joint_check(j, &st, why, sizeof(why)));
	}
	if (nv < 2)
		return;
	st.nr_drop = 2;
	st.drop[0] = v[nv - 1];
	st.drop[1] = v[0];
	FUZZ_ASSERT(crash_joint_check(j, &st, why, sizeof(why)) == -EINVAL);
	FUZZ_ASSERT(strstr(why, "sequence") && !strchr(why, '\n'));
}

static void check_taken(const struct crash_joint *j, const struct crash_log *logs)
{
	char why[256];
	struct crash_joint_ref *v = malloc((j->nr + 1) * sizeof(*v));
	size_t pos[MAX_DISKS], next[MAX_DISKS] = { 0 }, nv, vd[2 * TEXT_MAX];

	FUZZ_ASSERT(v);
	for (size_t i = 0; i < j->nr; i++) {
		FUZZ_ASSERT(j->seq[i].disk < j->nr_disks);
		FUZZ_ASSERT(j->seq[i].entry == next[j->seq[i].disk]++);
	}
	for (size_t n = 0; n <= j->nr; n++) {
		size_t sum = 0, own = 0;

		crash_joint_positions(j, n, pos);
		for (unsigned int d = 0; d < j->nr_disks; d++) {
			sum += pos[d];
			own += crash_volatile(&logs[d], pos[d], vd);
		}
		FUZZ_ASSERT(sum == n);
		FUZZ_ASSERT(!crash_joint_volatile(j, n, v, &nv));
		FUZZ_ASSERT(nv == own);
		for (size_t k = 0; k < nv; k++)
			FUZZ_ASSERT(v[k].entry < pos[v[k].disk]);
		check_states(j, n, v, nv);
	}
	FUZZ_ASSERT(crash_joint_check(j, &(struct crash_joint_state){ .n = j->nr + 1 }, why,
				      sizeof(why)) == -EINVAL);
	free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct crash_log *lp[MAX_DISKS];
	struct crash_log logs[MAX_DISKS];
	uint8_t *bufs[MAX_DISKS] = { NULL }, *disks = NULL;
	size_t count[MAX_DISKS] = { 0 }, nr, n, len;
	unsigned int nr_disks, flush_every;
	struct crash_joint j;
	char why[256] = "";
	const char *text;

	if (!size)
		return 0;
	nr_disks = 1 + data[0] % MAX_DISKS;
	flush_every = data[0] / MAX_DISKS % 5; /* 0: no flush */
	text = (const char *)data + 1;
	n = size - 1 < TEXT_MAX ? size - 1 : TEXT_MAX;
	if (log_order_parse(text, n, nr_disks, &disks, &nr, why, sizeof(why))) {
		/* no logs to speak of: the order's own refusal, in one line */
		for (unsigned int d = 0; d < nr_disks; d++) {
			bufs[d] = make_log(0, 0, &len);
			FUZZ_ASSERT(!crash_log_parse(bufs[d], len, 8 * SS, &logs[d], why, sizeof(why)));
			lp[d] = &logs[d];
		}
		FUZZ_ASSERT(crash_joint_init(&j, lp, nr_disks, text, n, why, sizeof(why)));
		FUZZ_ASSERT(why[0] && !strchr(why, '\n') && !j.seq);
		goto out;
	}
	for (size_t i = 0; i < nr; i++)
		count[disks[i]]++;
	for (int extra = 0; extra < 2; extra++) {
		for (unsigned int d = 0; d < nr_disks; d++) {
			free(bufs[d]);
			bufs[d] = make_log(count[d] + (extra && !d), flush_every, &len);
			FUZZ_ASSERT(!crash_log_parse(bufs[d], len, 8 * SS, &logs[d], why, sizeof(why)));
			lp[d] = &logs[d];
		}
		if (!extra) {
			FUZZ_ASSERT(!crash_joint_init(&j, lp, nr_disks, text, n, why, sizeof(why)));
			FUZZ_ASSERT(j.nr == nr);
			check_taken(&j, logs);
			crash_joint_free(&j);
		} else {
			FUZZ_ASSERT(crash_joint_init(&j, lp, nr_disks, text, n, why, sizeof(why)) ==
				    -EINVAL);
			FUZZ_ASSERT(strstr(why, "disk 0 has") && !strchr(why, '\n') && !j.seq);
		}
		for (unsigned int d = 0; d < nr_disks; d++)
			crash_log_free(&logs[d]);
	}
	for (unsigned int d = 0; d < nr_disks; d++)
		free(bufs[d]);
	free(disks);
	return 0;
out:
	for (unsigned int d = 0; d < nr_disks; d++) {
		crash_log_free(&logs[d]);
		free(bufs[d]);
	}
	return 0;
}
