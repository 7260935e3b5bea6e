/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_state.c - the crash states of a log: its points, the writes lost or torn there, in turn. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_state.h"

const char *const crash_class_names[NR_CLASSES] = { "prefix", "drop", "torn", "sample" };

/* The atomic units a torn ID may name: as --atomic takes. */
#define ATOMIC_MIN 512u
#define ATOMIC_MAX 65536u

/* ------------------------------------------------------------ against a log */

static bool is_volatile(const struct crash_log *log, long lf, size_t pos, uint64_t i)
{
	const struct crash_entry *e;

	if (i >= pos || (lf >= 0 && i < (uint64_t)lf))
		return false;
	e = &log->e[i];
	return crash_entry_changes(e) && !(e->flags & LOG_FUA_FLAG);
}

size_t crash_volatile(const struct crash_log *log, size_t pos, size_t *out)
{
	long lf = crash_log_last_flush(log, pos);
	size_t n = 0;

	/* a FLUSH entry's own data (a PREFLUSH write) is not covered by its flush */
	for (size_t i = lf < 0 ? 0 : (size_t)lf; i < pos; i++)
		if (is_volatile(log, lf, pos, i))
			out[n++] = i;
	return n;
}

bool crash_entry_aimed(const struct crash_entry *e, const struct sector_ranges *aim)
{
	return sector_ranges_touch(aim, e->off / 512, (e->off + e->len + 511) / 512);
}

/* The volatile writes at pos that the run may lose: all, or those aimed at. */
static size_t gen_volatile(const struct crash_gen *g, size_t pos, size_t *out)
{
	size_t n = crash_volatile(g->log, pos, out), kept = 0;

	if (!g->o.aim)
		return n;
	for (size_t i = 0; i < n; i++)
		if (crash_entry_aimed(&g->log->e[out[i]], g->o.aim))
			out[kept++] = out[i];
	return kept;
}

static int mark_pos(const struct crash_log *log, const char *name, size_t len, uint64_t k,
		    size_t *pos)
{
	long m = crash_marks_find(log, name, len, k);

	if (m < 0)
		return -EINVAL;
	*pos = log->marks[m] + 1;
	return 0;
}

static int point_pos(const struct crash_log *log, const struct crash_id *id, size_t *pos)
{
	switch (id->kind) {
	case PT_FLUSH:
		if (id->k > log->nr_flushes)
			return -EINVAL;
		*pos = log->flushes[id->k - 1];
		return 0;
	case PT_FUA:
		if (id->k > log->nr_fuas)
			return -EINVAL;
		*pos = log->fuas[id->k - 1] + 1;
		return 0;
	case PT_MARK:
		return mark_pos(log, id->name, id->name_len, id->k, pos);
	case PT_ENTRY:
		if (id->k > log->nr)
			return -EINVAL;
		*pos = id->k;
		return 0;
	case PT_END:
		*pos = log->nr;
		return 0;
	}
	return -EINVAL;
}

/*
 * The disk's atomic units of a bytes (aligned from its byte 0) that e
 * writes into: a write that starts or ends inside a unit counts it whole,
 * since a power failure leaves each unit all old or all new.
 */
static uint64_t torn_units(const struct crash_entry *e, uint64_t a)
{
	uint64_t first = e->off / a, end = (e->off + e->len + a - 1) / a;

	return end - first;
}

uint64_t crash_torn_units(const struct crash_entry *e, uint64_t a)
{
	return torn_units(e, a);
}

/* The bytes of e written, from its start, when only its first k units are: up to a unit's end. */
static uint64_t torn_bytes(const struct crash_entry *e, uint64_t a, uint64_t k)
{
	return e->off / a * a + k * a - e->off;
}

static int resolve_torn(const struct crash_log *log, const struct crash_id *id, long lf,
			struct crash_spec *spec)
{
	const struct crash_entry *e;

	if (id->torn_a < ATOMIC_MIN || id->torn_a > ATOMIC_MAX || (id->torn_a & (id->torn_a - 1)))
		return -EINVAL;
	if (!is_volatile(log, lf, spec->pos, id->torn_e))
		return -EINVAL;
	e = &log->e[id->torn_e];
	if (!e->data)
		return -EINVAL; /* a discard is not torn: it leaves no data */
	if (!id->torn_k || id->torn_k >= torn_units(e, id->torn_a))
		return -EINVAL;
	for (size_t i = 0; i < id->nr_drop; i++)
		if (id->drop[i] == id->torn_e)
			return -EINVAL;
	spec->torn_e = (long)id->torn_e;
	spec->torn_bytes = torn_bytes(e, id->torn_a, id->torn_k);
	return 0;
}

int crash_resolve(const struct crash_log *log, const struct crash_id *id, struct crash_spec *spec,
		  char *why, size_t whylen)
{
	char *text = crash_id_format(id);
	const char *what = NULL;
	long lf;

	memset(spec, 0, sizeof(*spec));
	spec->torn_e = -1;
	if (point_pos(log, id, &spec->pos)) {
		what = "no such point in the log";
		goto out;
	}
	lf = crash_log_last_flush(log, spec->pos);
	for (size_t i = 0; i < id->nr_drop; i++)
		if (!is_volatile(log, lf, spec->pos, id->drop[i]))
			what = "a dropped entry is not a volatile write at that point";
	spec->drop = id->drop;
	spec->nr_drop = id->nr_drop;
	if (!what && id->torn && resolve_torn(log, id, lf, spec))
		what = "the torn write is not a volatile write of more than K atomic units there";
out:
	if (what)
		crash_refuse(why, whylen, "state %s: %s", text ? text : "?", what);
	free(text);
	return what ? -EINVAL : 0;
}

size_t crash_torn_ks(uint64_t n, uint64_t ks[3])
{
	uint64_t want[3] = { 1, n / 2, n - 1 };
	size_t nr = 0;

	if (n < 2)
		return 0;
	for (int i = 0; i < 3; i++)
		if (want[i] > 0 && want[i] < n && (!nr || want[i] > ks[nr - 1]))
			ks[nr++] = want[i];
	return nr;
}

/* ------------------------------------------------------------ points */

/* The log's mark names, each once, the first few: ", "-separated into out. */
static void mark_names(const struct crash_log *log, char *out, size_t len)
{
	const struct crash_marks *m = &log->names;
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < m->nr_names && n + 1 < len; i++) {
		const struct crash_entry *e = &log->e[log->marks[m->by_name[m->first[i]]]];

		if (i == 5) {
			snprintf(out + n, len - n, ", ...");
			return;
		}
		n += (size_t)snprintf(out + n, len - n, "%s", i ? ", " : "");
		for (size_t k = 0; k < e->mark_len && k < 32 && n + 1 < len; k++)
			out[n++] = e->mark[k] > ' ' && e->mark[k] < 0x7f ? e->mark[k] : '?';
		out[n < len ? n : len - 1] = '\0';
	}
}

static bool has_mark(const struct crash_log *log, const char *name, size_t len)
{
	return crash_marks_find(log, name, len, 1) >= 0;
}

int crash_at_check(const struct crash_log *log, const struct crash_at *at, char *why,
		   size_t whylen)
{
	char names[256], name[65];

	for (size_t i = 0; i < at->nr_marks; i++) {
		if (has_mark(log, at->marks[i], at->mark_lens[i]))
			continue;
		mark_names(log, names, sizeof(names));
		return crash_refuse(why, whylen, "--at mark:%s: LOG has no mark of that name (%s%s)",
				    crash_printable(at->marks[i], 64, name),
				    names[0] ? "its marks: " : "it has no marks", names);
	}
	if ((at->kinds & AT_FUA) && !log->nr_fuas)
		return crash_refuse(why, whylen,
				    "--at fua: LOG has no FUA entries (through a loop device, which "
				    "offers no FUA, O_DSYNC writes reach the disk as a write and a "
				    "flush; QEMU's blklogwrites never sets FUA); use --at flush");
	if ((at->kinds & AT_FLUSH) && !at->flush_by_default && !log->nr_flushes)
		return crash_refuse(why, whylen,
				    "--at flush: LOG has no FLUSH entries (a file system mounted "
				    "with nobarrier issues none); use --at N");
	if (at->every && at->every >= log->nr)
		return crash_refuse(why, whylen, "--at %llu: LOG has only %zu entries",
				    (unsigned long long)at->every, log->nr);
	return 0;
}

static bool at_mark(const struct crash_at *at, const struct crash_entry *e)
{
	for (size_t i = 0; i < at->nr_marks; i++)
		if (at->mark_lens[i] == e->mark_len && !memcmp(at->marks[i], e->mark, e->mark_len))
			return true;
	return false;
}

/* Claims position pos for a point unless an earlier kind holds it already. */
static void add_point(struct crash_point *by_pos, enum crash_point_kind kind, uint64_t k, size_t pos,
		      const struct crash_entry *mark)
{
	struct crash_point *p = &by_pos[pos];

	if ((int)p->kind <= (int)kind && p->pos != SIZE_MAX)
		return;
	p->kind = kind;
	p->k = k;
	p->pos = pos;
	p->name = mark ? mark->mark : NULL;
	p->name_len = mark ? mark->mark_len : 0;
}

int crash_points(const struct crash_log *log, const struct crash_at *at, struct crash_point **out,
		 size_t *nr)
{
	struct crash_point *by_pos = malloc((log->nr + 1) * sizeof(*by_pos));
	size_t n = 0;

	if (!by_pos)
		return -ENOMEM;
	for (size_t i = 0; i <= log->nr; i++)
		by_pos[i].pos = SIZE_MAX;
	for (size_t i = 0; (at->kinds & AT_FLUSH) && i < log->nr_flushes; i++)
		add_point(by_pos, PT_FLUSH, i + 1, log->flushes[i], NULL);
	for (size_t i = 0; (at->kinds & AT_FUA) && i < log->nr_fuas; i++)
		add_point(by_pos, PT_FUA, i + 1, log->fuas[i] + 1, NULL);
	for (size_t i = 0; i < log->nr_marks; i++) {
		const struct crash_entry *e = &log->e[log->marks[i]];

		if (at_mark(at, e))
			add_point(by_pos, PT_MARK, log->names.occ[i], log->marks[i] + 1, e);
	}
	for (uint64_t p = at->every; at->every && p < log->nr; p += at->every)
		add_point(by_pos, PT_ENTRY, p, (size_t)p, NULL);
	add_point(by_pos, PT_END, 0, log->nr, NULL);
	for (size_t i = 0; i <= log->nr; i++)
		if (by_pos[i].pos != SIZE_MAX)
			by_pos[n++] = by_pos[i];
	*out = by_pos;
	*nr = n;
	return 0;
}

/* ------------------------------------------------------------ the generator */

enum { PH_PREFIX, PH_DROP, PH_TORN, PH_SAMPLE, PH_NEXT };

int crash_gen_init(struct crash_gen *g, const struct crash_log *log, const struct crash_at *at,
		   const struct crash_gen_opts *o)
{
	memset(g, 0, sizeof(*g));
	g->log = log;
	g->o = *o;
	if (g->o.drop > 64)
		g->o.drop = 64;
	g->vol = malloc((log->nr + 1) * sizeof(*g->vol));
	g->seen_words = log->nr / 64 + 1;
	if (!g->vol || crash_points(log, at, &g->pts, &g->nr_pts)) {
		crash_gen_free(g);
		return -ENOMEM;
	}
	/* in log order: the points past the gap are the last ones */
	while (!o->past_gaps && g->nr_pts && crash_log_past_gap(log, g->pts[g->nr_pts - 1].pos)) {
		g->nr_pts--;
		g->nr_skipped++;
	}
	g->phase = PH_NEXT;
	g->pt = SIZE_MAX;
	return 0;
}

void crash_gen_free(struct crash_gen *g)
{
	free(g->pts);
	free(g->vol);
	free(g->seen);
	memset(g, 0, sizeof(*g));
}

static int id_of_point(const struct crash_point *p, struct crash_id *id)
{
	memset(id, 0, sizeof(*id));
	id->kind = p->kind;
	id->k = p->kind == PT_ENTRY ? p->pos : p->k;
	if (p->kind == PT_MARK) {
		id->name = malloc(p->name_len + 1);
		if (!id->name)
			return -ENOMEM;
		memcpy(id->name, p->name, p->name_len);
		id->name[p->name_len] = '\0';
		id->name_len = p->name_len;
	}
	return 0;
}

static int set_drops(struct crash_id *id, const size_t *which, size_t n, const size_t *vol)
{
	id->drop = malloc((n ? n : 1) * sizeof(*id->drop));
	if (!id->drop)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		id->drop[i] = vol[which[i]];
	id->nr_drop = n;
	return 0;
}

/* The next combination of comb_k indices out of nr_vol, lexicographic; false past the last. */
static bool comb_next(struct crash_gen *g)
{
	size_t k = g->comb_k, n = g->nr_vol;
	size_t i = k;

	while (i-- > 0) {
		if (g->comb[i] < n - k + i) {
			g->comb[i]++;
			for (size_t j = i + 1; j < k; j++)
				g->comb[j] = g->comb[j - 1] + 1;
			return true;
		}
	}
	return false;
}

static void comb_first(struct crash_gen *g, size_t k)
{
	g->comb_k = k;
	for (size_t i = 0; i < k; i++)
		g->comb[i] = i;
}

/* The drop phase's next subset, sizes 1..K in turn; false when done. */
static bool next_drop(struct crash_gen *g)
{
	size_t kmax = g->o.drop < g->nr_vol ? g->o.drop : g->nr_vol;

	if (!g->comb_k) {
		if (!kmax)
			return false;
		comb_first(g, 1);
		return true;
	}
	if (comb_next(g))
		return true;
	if (g->comb_k >= kmax)
		return false;
	comb_first(g, g->comb_k + 1);
	return true;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A random subset of the volatile set not made before at this point: its size, 0 for none. */
static size_t next_sample(struct crash_gen *g, size_t *which)
{
	size_t words = g->nr_vol / 64 + 1;
	uint64_t *bits;

	while (g->drawn < g->o.sample && g->tries < 32 * g->o.sample + 64) {
		size_t n = 0;
		bool dup = false;

		g->tries++;
		bits = g->seen + g->nr_seen * words;
		memset(bits, 0, words * sizeof(*bits));
		for (size_t i = 0; i < g->nr_vol; i++) {
			if (splitmix(&g->rng) & 1) {
				bits[i / 64] |= 1ULL << (i % 64);
				which[n++] = i;
			}
		}
		if (!n || n <= g->o.drop)
			continue; /* the prefix state, or one the drop phase made */
		for (size_t s = 0; s < g->nr_seen && !dup; s++)
			dup = !memcmp(g->seen + s * words, bits, words * sizeof(*bits));
		if (dup)
			continue;
		g->nr_seen++;
		g->drawn++;
		return n;
	}
	return 0;
}

static int start_point(struct crash_gen *g)
{
	size_t words;

	g->nr_vol = gen_volatile(g, g->pts[g->pt].pos, g->vol);
	g->comb_k = 0;
	g->torn_w = 0;
	g->torn_i = 0;
	g->drawn = 0;
	g->tries = 0;
	g->nr_seen = 0;
	g->rng = g->o.seed ^ (0x51ed27052c2ULL * (g->pt + 1));
	words = g->nr_vol / 64 + 1;
	free(g->seen);
	g->seen = NULL;
	if (g->o.sample && !(g->seen = calloc((size_t)g->o.sample * words, sizeof(*g->seen))))
		return -ENOMEM;
	return 0;
}

/* The torn phase's next (write, k); false when done. */
static bool next_torn(struct crash_gen *g, struct crash_id *id)
{
	for (; g->torn_w < g->nr_vol; g->torn_w++, g->torn_i = 0) {
		const struct crash_entry *e = &g->log->e[g->vol[g->torn_w]];
		uint64_t ks[3];
		size_t n;

		if (!e->data)
			continue;
		n = crash_torn_ks(torn_units(e, g->o.atomic), ks);
		if (g->torn_i < n) {
			id->torn = true;
			id->torn_e = g->vol[g->torn_w];
			id->torn_a = g->o.atomic;
			id->torn_k = ks[g->torn_i++];
			return true;
		}
	}
	return false;
}

int crash_gen_next(struct crash_gen *g, struct crash_id *id, enum crash_class *cls)
{
	size_t *many, n;
	int ret;

	for (;;) {
		if (g->phase == PH_NEXT) {
			if (++g->pt >= g->nr_pts)
				return 0;
			ret = start_point(g);
			if (ret)
				return ret;
			g->phase = PH_PREFIX;
		}
		ret = id_of_point(&g->pts[g->pt], id);
		if (ret)
			return ret;
		switch (g->phase) {
		case PH_PREFIX:
			g->phase = PH_DROP;
			*cls = CLASS_PREFIX;
			return 1;
		case PH_DROP:
			if (next_drop(g)) {
				*cls = CLASS_DROP;
				ret = set_drops(id, g->comb, g->comb_k, g->vol);
				return ret ? ret : 1;
			}
			g->phase = PH_TORN;
			break;
		case PH_TORN:
			if (g->o.torn && next_torn(g, id)) {
				*cls = CLASS_TORN;
				return 1;
			}
			g->phase = PH_SAMPLE;
			break;
		case PH_SAMPLE:
			many = malloc((g->nr_vol + 1) * sizeof(*many));
			if (!many) {
				crash_id_free(id);
				return -ENOMEM;
			}
			n = g->o.sample ? next_sample(g, many) : 0;
			if (n) {
				*cls = CLASS_SAMPLE;
				ret = set_drops(id, many, n, g->vol);
				free(many);
				return ret ? ret : 1;
			}
			free(many);
			g->phase = PH_NEXT;
			break;
		}
		crash_id_free(id);
	}
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* C(n, k), saturating. */
static uint64_t choose(uint64_t n, uint64_t k)
{
	uint64_t c = 1;

	for (uint64_t i = 1; i <= k; i++) {
		if (c > UINT64_MAX / (n - k + i))
			return UINT64_MAX;
		c = c * (n - k + i) / i;
	}
	return c;
}

uint64_t crash_gen_total(const struct crash_gen *g)
{
	size_t *vol = malloc((g->log->nr + 1) * sizeof(*vol));
	uint64_t total = 0;

	if (!vol)
		return UINT64_MAX;
	for (size_t p = 0; p < g->nr_pts; p++) {
		size_t nv = gen_volatile(g, g->pts[p].pos, vol);

		total = sat_add(total, 1);
		for (size_t k = 1; k <= g->o.drop && k <= nv; k++)
			total = sat_add(total, choose(nv, k));
		for (size_t i = 0; g->o.torn && i < nv; i++) {
			const struct crash_entry *e = &g->log->e[vol[i]];
			uint64_t ks[3];

			if (e->data)
				total = sat_add(total, crash_torn_ks(torn_units(e, g->o.atomic), ks));
		}
		total = sat_add(total, g->o.sample);
	}
	free(vol);
	return total;
}
