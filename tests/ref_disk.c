/* SPDX-License-Identifier: BSD-3-Clause */
/* ref_disk.c - the reference disk model (ref_disk.h): versions, points, and what they allow. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_disk.h"

#define RD_SECTOR 512u
#define RD_MAX_UNIT (64u * RD_SECTOR) /* a unit's sectors fit in a 64-bit mask */

static void *rd_xrealloc(void *p, size_t n, size_t size)
{
	void *q = realloc(p, (n ? n : 1) * size);

	if (!q) {
		fprintf(stderr, "ref_disk: out of memory\n");
		abort(); /* a test helper: no state to keep consistent */
	}
	return q;
}

int rd_init(struct ref_disk *m, uint64_t size, uint32_t unit, bool barrier)
{
	memset(m, 0, sizeof(*m));
	if (!unit || unit % RD_SECTOR || unit > RD_MAX_UNIT || size % unit)
		return -EINVAL;
	m->size = size;
	m->unit = unit;
	m->barrier = barrier;
	return 0;
}

void rd_free(struct ref_disk *m)
{
	for (size_t i = 0; i < m->nr_owned; i++)
		free(m->owned[i]);
	for (size_t i = 0; i < m->nr_pt; i++)
		free(m->pt[i].v);
	free(m->owned);
	free(m->pt);
	free(m->v);
	free(m->p);
	memset(m, 0, sizeof(*m));
}

static uint64_t rd_submit(struct ref_disk *m, struct rd_pending p)
{
	p.id = ++m->next_id;
	p.submitted = ++m->clock;
	m->p = rd_xrealloc(m->p, m->nr_p + 1, sizeof(*m->p));
	m->p[m->nr_p++] = p;
	return p.id;
}

uint64_t rd_submit_write(struct ref_disk *m, uint64_t off, uint64_t len, const void *data,
			 bool fua)
{
	struct rd_pending p = { .off = off, .len = len, .fua = fua };

	if (data) {
		p.data = rd_xrealloc(NULL, len, 1);
		memcpy(p.data, data, len);
		m->owned = rd_xrealloc(m->owned, m->nr_owned + 1, sizeof(*m->owned));
		m->owned[m->nr_owned++] = p.data;
	}
	return rd_submit(m, p);
}

uint64_t rd_submit_flush(struct ref_disk *m)
{
	return rd_submit(m, (struct rd_pending){ .flush = true });
}

static void rd_add_version(struct ref_disk *m, const struct rd_pending *p, uint64_t from,
			   uint64_t len, enum rd_state state)
{
	if (!len)
		return;
	m->v = rd_xrealloc(m->v, m->nr_v + 1, sizeof(*m->v));
	m->v[m->nr_v++] = (struct rd_version){ .off = p->off + from,
					       .len = len,
					       .data = p->data ? p->data + from : NULL,
					       .state = state,
					       .submitted = p->submitted,
					       .acked = m->clock };
}

/* A flush done: what it covers is durable, or (it failed) may have been lost for good. */
static void rd_flush_done(struct ref_disk *m, const struct rd_pending *f, int error)
{
	for (size_t i = 0; i < m->nr_v; i++) {
		struct rd_version *v = &m->v[i];
		bool covered = v->acked < f->submitted || (m->barrier && v->submitted < f->submitted);

		if (v->state == RD_VOLATILE && covered)
			v->state = error ? RD_MAYBE : RD_DURABLE;
	}
}

void rd_ack(struct ref_disk *m, uint64_t id, uint64_t good, int error)
{
	struct rd_pending p;
	size_t i;

	for (i = 0; i < m->nr_p && m->p[i].id != id; i++)
		;
	if (i == m->nr_p) {
		fprintf(stderr, "ref_disk: request %llu acknowledged twice\n",
			(unsigned long long)id);
		abort();
	}
	p = m->p[i];
	memmove(&m->p[i], &m->p[i + 1], (m->nr_p - i - 1) * sizeof(*m->p));
	m->nr_p--;
	m->clock++;
	if (p.flush) {
		rd_flush_done(m, &p, error);
		return;
	}
	if (!error)
		good = p.len;
	good = good > p.len ? p.len : good;
	rd_add_version(m, &p, 0, good, p.fua ? RD_DURABLE : RD_VOLATILE);
	if (error)
		rd_add_version(m, &p, good, p.len - good, RD_MAYBE);
}

void rd_power_cut(struct ref_disk *m)
{
	for (size_t i = 0; i < m->nr_v; i++)
		if (m->v[i].state == RD_VOLATILE)
			m->v[i].state = RD_MAYBE;
}

/* The acknowledged versions as they are, then every write in flight as maybe. */
long rd_point(struct ref_disk *m)
{
	struct rd_point pt = { .nr = m->nr_v };

	pt.v = rd_xrealloc(NULL, m->nr_v + m->nr_p, sizeof(*pt.v));
	if (m->nr_v)
		memcpy(pt.v, m->v, m->nr_v * sizeof(*pt.v));
	for (size_t i = 0; i < m->nr_p; i++)
		if (!m->p[i].flush)
			pt.v[pt.nr++] = (struct rd_version){ .off = m->p[i].off,
							     .len = m->p[i].len,
							     .data = m->p[i].data,
							     .state = RD_MAYBE,
							     .submitted = m->p[i].submitted,
							     .acked = m->clock };
	m->pt = rd_xrealloc(m->pt, m->nr_pt + 1, sizeof(*m->pt));
	m->pt[m->nr_pt] = pt;
	return (long)m->nr_pt++;
}

/* ------------------------------------------------------------ allowed */

/* Sector s (of the disk) as version v has it. */
static const uint8_t *rd_sector_of(const struct rd_version *v, uint64_t s)
{
	static const uint8_t zeros[RD_SECTOR];

	return v->data ? v->data + (s * RD_SECTOR - v->off) : zeros;
}

static bool rd_covers(const struct rd_version *v, uint64_t s)
{
	return v->off <= s * RD_SECTOR && s * RD_SECTOR < v->off + v->len;
}

static bool rd_has(const uint64_t *set, size_t n, uint64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == x)
			return true;
	return false;
}

/*
 * Unit u of img: the versions that meet it, from the latest back; each
 * set of sectors already decided by a later version present ("claimed")
 * that a choice so far reaches is kept.  A version may be present only if
 * the unclaimed sectors it covers hold its data (then it claims them),
 * absent only if it is not durable.  The unit is allowed if some reached
 * set leaves unclaimed only sectors that still hold zeros, the first
 * state.
 */
static bool rd_unit_allowed(const struct rd_point *pt, uint64_t u, uint32_t unit,
			    const uint8_t *img)
{
	uint64_t first = u * unit / RD_SECTOR, n = unit / RD_SECTOR;
	uint64_t *set = rd_xrealloc(NULL, 1, sizeof(*set)), *next;
	size_t nr = 1, nr_next;
	bool ok = false;

	set[0] = 0;
	for (size_t i = pt->nr; i-- > 0;) {
		const struct rd_version *v = &pt->v[i];
		uint64_t mine = 0;

		for (uint64_t k = 0; k < n; k++)
			if (rd_covers(v, first + k))
				mine |= 1ull << k;
		if (!mine)
			continue;
		next = rd_xrealloc(NULL, 2 * nr, sizeof(*next));
		nr_next = 0;
		for (size_t j = 0; j < nr; j++) {
			bool fits = true;

			for (uint64_t k = 0; k < n && fits; k++)
				if ((mine & ~set[j]) >> k & 1)
					fits = !memcmp(img + (first + k) * RD_SECTOR,
						       rd_sector_of(v, first + k), RD_SECTOR);
			if (v->state != RD_DURABLE && !rd_has(next, nr_next, set[j]))
				next[nr_next++] = set[j];
			if (fits && !rd_has(next, nr_next, set[j] | mine))
				next[nr_next++] = set[j] | mine;
		}
		free(set);
		set = next;
		nr = nr_next;
	}
	for (size_t j = 0; j < nr && !ok; j++) {
		ok = true;
		for (uint64_t k = 0; k < n && ok; k++)
			if (!(set[j] >> k & 1))
				for (uint32_t b = 0; b < RD_SECTOR && ok; b++)
					ok = !img[(first + k) * RD_SECTOR + b];
	}
	free(set);
	return ok;
}

static const char *const rd_state_names[] = { "volatile", "durable", "maybe" };

/* What the versions meeting unit u are, for a reader of a failure. */
static void rd_explain(const struct rd_point *pt, uint64_t u, uint32_t unit, const uint8_t *img,
		       char *why, size_t whylen)
{
	uint64_t lo = u * unit, hi = lo + unit;
	int n = snprintf(why, whylen, "unit %llu (bytes %llu-%llu) holds %02x..%02x; its versions:",
			 (unsigned long long)u, (unsigned long long)lo,
			 (unsigned long long)hi - 1, img[lo], img[hi - 1]);

	for (size_t i = 0; i < pt->nr && n > 0 && (size_t)n < whylen; i++) {
		const struct rd_version *v = &pt->v[i];

		if (v->off < hi && lo < v->off + v->len)
			n += snprintf(why + n, whylen - (size_t)n, " [%llu+%llu %02x %s]",
				      (unsigned long long)v->off / RD_SECTOR,
				      (unsigned long long)v->len / RD_SECTOR,
				      v->data ? v->data[0] : 0, rd_state_names[v->state]);
	}
}

bool rd_allowed(const struct ref_disk *m, size_t pt, const uint8_t *img, char *why,
		size_t whylen)
{
	for (uint64_t u = 0; u < m->size / m->unit; u++) {
		if (!rd_unit_allowed(&m->pt[pt], u, m->unit, img)) {
			if (why)
				rd_explain(&m->pt[pt], u, m->unit, img, why, whylen);
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------ enumerate */

struct rd_enum {
	const struct rd_point *pt;
	size_t *vol, nr_vol;
	bool *drop; /* by version */
	uint8_t *img;
	uint64_t size;
	int (*fn)(void *arg, const uint8_t *img);
	void *arg;
};

static int rd_emit(struct rd_enum *e)
{
	memset(e->img, 0, e->size);
	for (size_t i = 0; i < e->pt->nr; i++) {
		const struct rd_version *v = &e->pt->v[i];

		if (v->state == RD_MAYBE || e->drop[i])
			continue;
		if (v->data)
			memcpy(e->img + v->off, v->data, v->len);
		else
			memset(e->img + v->off, 0, v->len);
	}
	return e->fn(e->arg, e->img);
}

/* Every subset of exactly left more volatile versions, from vol[from] on. */
static int rd_subsets(struct rd_enum *e, size_t from, unsigned int left)
{
	int ret;

	if (!left)
		return rd_emit(e);
	for (size_t i = from; i < e->nr_vol; i++) {
		e->drop[e->vol[i]] = true;
		ret = rd_subsets(e, i + 1, left - 1);
		e->drop[e->vol[i]] = false;
		if (ret)
			return ret;
	}
	return 0;
}

int rd_enumerate(const struct ref_disk *m, size_t pt, unsigned int max_drop,
		 int (*fn)(void *arg, const uint8_t *img), void *arg)
{
	const struct rd_point *p = &m->pt[pt];
	struct rd_enum e = { .pt = p, .size = m->size, .fn = fn, .arg = arg };
	int ret = 0;

	e.vol = rd_xrealloc(NULL, p->nr, sizeof(*e.vol));
	e.drop = rd_xrealloc(NULL, p->nr, sizeof(*e.drop));
	e.img = rd_xrealloc(NULL, m->size, 1);
	memset(e.drop, 0, (p->nr ? p->nr : 1) * sizeof(*e.drop));
	for (size_t i = 0; i < p->nr; i++)
		if (p->v[i].state == RD_VOLATILE)
			e.vol[e.nr_vol++] = i;
	for (unsigned int k = 0; k <= max_drop && k <= e.nr_vol && !ret; k++)
		ret = rd_subsets(&e, 0, k);
	free(e.vol);
	free(e.drop);
	free(e.img);
	return ret;
}
