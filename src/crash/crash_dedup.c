/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_dedup.c - states of the same bytes and marks passed, told from their maps, checked once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crash_dedup.h"

/* ------------------------------------------------------------ the form's hash */

/*
 * A state's form is the source of each of its bytes: BASE, zeros (a
 * discard) or a place in the log.  Its hash is a sum over the bytes x not
 * BASE's of phi(src(x) - x) * r^x, modulo the prime 2^61 - 1, in each of
 * DEDUP_LANES lanes of its own r and phi.  Along a range read from one
 * source src(x) - x is constant, so a range's share is phi * (r^hi - r^lo)
 * / (r - 1), whatever its length; and a sum does not care how the form is
 * cut into ranges.  So the hash of the durable layer, taken once per
 * layer, becomes a state's by taking off the layer's share of the ranges
 * the state's own extents cover and adding theirs: a state costs its own
 * extents, not the whole image's.
 */
#define HASH_P ((1ULL << 61) - 1)

/* Where a range's bytes come from: a place in the log, or zeros. */
enum { TAG_LOG = 1, TAG_ZEROS = 2 };

static uint64_t mod_mul(uint64_t a, uint64_t b)
{
	unsigned __int128 x = (unsigned __int128)a * b;
	uint64_t v = (uint64_t)(x & HASH_P) + (uint64_t)(x >> 61);

	v = (v & HASH_P) + (v >> 61);
	return v >= HASH_P ? v - HASH_P : v;
}

static uint64_t mod_add(uint64_t a, uint64_t b)
{
	uint64_t v = a + b;

	return v >= HASH_P ? v - HASH_P : v;
}

static uint64_t mod_sub(uint64_t a, uint64_t b)
{
	return a >= b ? a - b : a + HASH_P - b;
}

/* r^e from the lane's tables of r^(v * 256^c): one product per byte of e that is not 0. */
static uint64_t lane_pow(const struct dedup_lane *l, uint64_t e)
{
	uint64_t v = 1;

	for (int c = 0; e; c++, e >>= 8)
		if (e & 0xff)
			v = mod_mul(v, l->pow[c][e & 0xff]);
	return v;
}

/* splitmix64's finalizer: phi's mixing. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Each lane's r, fixed (the keys of one run only ever meet each other). */
static const uint64_t lane_r[DEDUP_LANES] = {
	0x1b8a5c3f27d90e61ULL, 0x0d6e4f3a9c21b7f5ULL, 0x15f2c8e07a3d9b43ULL, 0x0a97d3b1e64c2f89ULL,
};

static uint64_t mod_pow(uint64_t b, uint64_t e)
{
	uint64_t v = 1;

	for (; e; e >>= 1, b = mod_mul(b, b))
		if (e & 1)
			v = mod_mul(v, b);
	return v;
}

static void lanes_init(struct dedup_durable *d)
{
	if (d->lanes_ready)
		return;
	for (int i = 0; i < DEDUP_LANES; i++) {
		struct dedup_lane *l = &d->lane[i];
		uint64_t r = lane_r[i] % HASH_P;

		for (int c = 0; c < 8; c++, r = mod_pow(r, 256)) {
			l->pow[c][0] = 1;
			for (int v = 1; v < 256; v++)
				l->pow[c][v] = mod_mul(l->pow[c][v - 1], r);
		}
		/* Fermat: 1 / b = b^(p - 2) */
		l->inv_r_1 = mod_pow(mod_sub(lane_r[i] % HASH_P, 1), HASH_P - 2);
		l->seed = mix(lane_r[i] ^ 0x9e3779b97f4a7c15ULL);
	}
	d->lanes_ready = true;
}

/* The share of bytes [lo, hi) read from tag's source, src(x) - x being delta. */
static void share(const struct dedup_lane *l, uint64_t *h, bool add, int tag, uint64_t delta,
		  uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return;
	for (int i = 0; i < DEDUP_LANES; i++) {
		uint64_t phi = mix(delta ^ l[i].seed ^ ((uint64_t)tag << 62)) % HASH_P;
		uint64_t sum = mod_mul(mod_sub(lane_pow(&l[i], hi), lane_pow(&l[i], lo)),
				       l[i].inv_r_1);
		uint64_t v = mod_mul(phi, sum);

		h[i] = add ? mod_add(h[i], v) : mod_sub(h[i], v);
	}
}

/* The share of extent x's bytes in [lo, hi). */
static void share_of(const struct crash_log *log, const struct dedup_lane *l, uint64_t *h, bool add,
		     const struct ovl_extent *x, uint64_t lo, uint64_t hi)
{
	if (!x->src)
		share(l, h, add, TAG_ZEROS, 0, lo, hi);
	else
		share(l, h, add, TAG_LOG, (uint64_t)(x->src - log->map) - x->start, lo, hi);
}

/* The overlay's extent trees, walked here (never changed): ordered by start, as there. */
static int extent_cmp(const struct ovl_extent *a, const struct ovl_extent *b)
{
	return a->start < b->start ? -1 : a->start > b->start;
}
RB_GENERATE_INTERNAL(ovl_extents, ovl_extent, node, extent_cmp, __attribute__((unused)) static)

/* The durable layer's share of bytes [lo, hi) added (or taken off) h. */
static void layer_share(const struct crash_log *log, const struct dedup_lane *l, uint64_t *h, bool add,
			struct ovl_layer *layer, uint64_t lo, uint64_t hi)
{
	struct ovl_extent find = { .start = lo }, *x;

	/* the extent holding lo, if any, starts before it */
	x = RB_NFIND(ovl_extents, &layer->extents, &find);
	x = x ? RB_PREV(ovl_extents, &layer->extents, x) : RB_MAX(ovl_extents, &layer->extents);
	if (!x || x->end <= lo)
		x = x ? RB_NEXT(ovl_extents, &layer->extents, x) :
			RB_MIN(ovl_extents, &layer->extents);
	for (; x && x->start < hi; x = RB_NEXT(ovl_extents, &layer->extents, x))
		share_of(log, l, h, add, x, x->start > lo ? x->start : lo, x->end < hi ? x->end : hi);
}

/* d's hash of the durable layer, taken when the layer is new. */
static void durable_hash(const struct crash_log *log, struct dedup_durable *d)
{
	struct ovl_extent *x;

	if (d->hashed && d->hashed_upto == d->layer->upto)
		return;
	memset(d->h, 0, sizeof(d->h));
	RB_FOREACH(x, ovl_extents, &d->layer->extents)
		share_of(log, d->lane, d->h, true, x, x->start, x->end);
	d->hashed = true;
	d->hashed_upto = d->layer->upto;
}

int dedup_key_of(const struct crash_log *log, const struct crash_spec *spec,
		 struct dedup_durable *d, struct dedup_key *key)
{
	struct ovl_extent *x;
	struct ovl o;
	int ret;

	lanes_init(d);
	ret = ovl_layer_advance(&d->layer, log, spec->pos);
	if (!ret)
		ret = ovl_build(&o, log, spec, -1, log->image_size, d->layer);
	if (ret)
		return ret;
	memset(key, 0, sizeof(*key));
	if (o.durable) {
		durable_hash(log, d);
		memcpy(key->h, d->h, sizeof(key->h));
	}
	/* the state's own extents over the durable layer: theirs in, the layer's under them out */
	RB_FOREACH(x, ovl_extents, &o.extents) {
		if (o.durable)
			layer_share(log, d->lane, key->h, false, o.durable, x->start, x->end);
		share_of(log, d->lane, key->h, true, x, x->start, x->end);
	}
	key->marks = crash_marks_before(log, spec->pos);
	ovl_free(&o);
	return 0;
}

void dedup_durable_put(struct dedup_durable *d)
{
	ovl_layer_put(d->layer);
	memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------ the classes */

static int rep_cmp(const struct dedup_rep *a, const struct dedup_rep *b)
{
	for (int i = 0; i < DEDUP_LANES; i++)
		if (a->key.h[i] != b->key.h[i])
			return a->key.h[i] < b->key.h[i] ? -1 : 1;
	if (a->key.lone != b->key.lone)
		return a->key.lone < b->key.lone ? -1 : 1;
	return a->key.marks < b->key.marks ? -1 : a->key.marks > b->key.marks;
}
RB_GENERATE_INTERNAL(dedup_reps, dedup_rep, node, rep_cmp, __attribute__((unused)) static)

void dedup_init(struct crash_dedup *d, const struct crash_log *log, struct report *report)
{
	memset(d, 0, sizeof(*d));
	d->log = log;
	d->report = report;
	RB_INIT(&d->reps);
}

static void rep_free(struct dedup_rep *rep)
{
	for (size_t i = 0; i < rep->nr_waiting; i++)
		free(rep->waiting[i].id);
	free(rep->waiting);
	free(rep->id);
	free(rep);
}

static struct dedup_rep *rep_new(struct crash_dedup *d)
{
	struct dedup_rep *rep = calloc(1, sizeof(*rep));

	if (rep)
		rep->ordinal = d->nr_reps++;
	return rep;
}

/*
 * The first state of the marks run that ends: if no other state came with
 * its marks it is a class of its own, keyed apart from every other.
 */
static void run_end(struct crash_dedup *d)
{
	struct dedup_rep *first = d->run_first;

	if (!first)
		return;
	if (d->run_first_id) {
		first->key.lone = ++d->nr_lone;
		first->key.marks = d->run_marks;
		RB_INSERT(dedup_reps, &d->reps, first);
		crash_id_free(d->run_first_id);
		free(d->run_first_id);
		d->run_first_id = NULL;
	}
	d->run_first = NULL;
}

/* A second state with the run's marks came: the first one's key is needed after all. */
static int run_key_first(struct crash_dedup *d)
{
	struct crash_spec spec;
	char why[512];
	int ret;

	if (!d->run_first_id)
		return 0;
	ret = crash_resolve(d->log, d->run_first_id, &spec, why, sizeof(why));
	if (!ret)
		ret = dedup_key_of(d->log, &spec, &d->durable, &d->run_first->key);
	if (ret)
		return ret;
	RB_INSERT(dedup_reps, &d->reps, d->run_first);
	crash_id_free(d->run_first_id);
	free(d->run_first_id);
	d->run_first_id = NULL;
	return 0;
}

/*
 * The first state of a run of states with the same marks passed is a new
 * class (states come in log order: no earlier one has its marks), and its
 * key, the costly part, is only taken once a second state of the run comes.
 */
static int run_start(struct crash_dedup *d, const struct crash_id *id, uint64_t marks,
		     struct dedup_rep **out)
{
	struct dedup_rep *rep = rep_new(d);
	struct crash_id *copy = malloc(sizeof(*copy));

	if (!rep || !copy || crash_id_copy(copy, id)) {
		free(rep);
		free(copy);
		return -ENOMEM;
	}
	run_end(d);
	d->run_first = rep;
	d->run_first_id = copy;
	d->run_marks = marks;
	*out = rep;
	return 0;
}

int dedup_add(struct crash_dedup *d, const struct crash_id *id, struct dedup_rep **out)
{
	struct dedup_rep key, *rep;
	struct crash_spec spec;
	uint64_t marks;
	char why[512];
	int ret;

	ret = crash_resolve(d->log, id, &spec, why, sizeof(why));
	if (ret)
		return ret;
	marks = crash_marks_before(d->log, spec.pos);
	if (!d->run_first || marks != d->run_marks)
		return run_start(d, id, marks, out);
	ret = run_key_first(d);
	if (!ret)
		ret = dedup_key_of(d->log, &spec, &d->durable, &key.key);
	if (ret)
		return ret;
	rep = RB_FIND(dedup_reps, &d->reps, &key);
	if (rep) {
		d->nr_folded++;
		*out = rep;
		return 1;
	}
	rep = rep_new(d);
	if (!rep)
		return -ENOMEM;
	rep->key = key.key;
	RB_INSERT(dedup_reps, &d->reps, rep);
	*out = rep;
	return 0;
}

void dedup_free(struct crash_dedup *d)
{
	struct dedup_rep *rep, *next;

	run_end(d);
	RB_FOREACH_SAFE(rep, dedup_reps, &d->reps, next) {
		RB_REMOVE(dedup_reps, &d->reps, rep);
		rep_free(rep);
	}
	dedup_durable_put(&d->durable);
	d->in_flight = NULL;
}

int dedup_mine(struct crash_dedup *d, struct dedup_rep *rep, const struct crash_id *id)
{
	if (!d->report)
		return 0;
	rep->id = crash_id_format(id);
	if (!rep->id)
		return -ENOMEM;
	rep->next_in_flight = d->in_flight;
	d->in_flight = rep;
	return 0;
}

static void report_waiting(struct crash_dedup *d, struct dedup_rep *rep)
{
	for (size_t i = 0; i < rep->nr_waiting; i++) {
		report_folded(d->report, rep->waiting[i].id, rep->waiting[i].cls, rep->id,
			      rep->result, rep->exit);
		free(rep->waiting[i].id);
	}
	free(rep->waiting);
	rep->waiting = NULL;
	rep->nr_waiting = 0;
}

int dedup_fold(struct crash_dedup *d, struct dedup_rep *rep, const struct crash_id *id,
	       enum crash_class cls)
{
	struct dedup_waiting *w;
	char *text = crash_id_format(id);

	if (!text)
		return -ENOMEM;
	if (rep->done) {
		report_folded(d->report, text, cls, rep->id, rep->result, rep->exit);
		free(text);
		return 0;
	}
	w = realloc(rep->waiting, (rep->nr_waiting + 1) * sizeof(*w));
	if (!w) {
		free(text);
		return -ENOMEM;
	}
	rep->waiting = w;
	w[rep->nr_waiting].id = text;
	w[rep->nr_waiting++].cls = cls;
	return 0;
}

void dedup_checked(void *ctx, const char *id, enum check_result result, int exit)
{
	struct crash_dedup *d = ctx;
	struct dedup_rep **pp, *rep;

	/* at most a checker's worth of states are in flight: a walk finds it */
	for (pp = &d->in_flight; (rep = *pp); pp = &rep->next_in_flight) {
		if (strcmp(rep->id, id))
			continue;
		*pp = rep->next_in_flight;
		rep->next_in_flight = NULL;
		rep->done = true;
		rep->result = result;
		rep->exit = exit;
		report_waiting(d, rep);
		return;
	}
}
