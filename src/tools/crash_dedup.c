/* crash_dedup.c - states of the same bytes and marks passed, told from their maps, checked once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crash_dedup.h"

/* The source of bytes a discard left: zeros, which no offset into the log can be. */
#define SRC_ZEROS UINT64_MAX

/* ------------------------------------------------------------ the canonical form */

/* The overlay's extent trees, walked here (never changed): ordered by start, as there. */
static int extent_cmp(const struct ovl_extent *a, const struct ovl_extent *b)
{
	return a->start < b->start ? -1 : a->start > b->start;
}
RB_GENERATE_INTERNAL(ovl_extents, ovl_extent, node, extent_cmp, __attribute__((unused)) static)

/* The form's pieces as they come, the one still growing held back, hashed as they end. */
struct form {
	const struct crash_log *log;
	struct dedup_key key;
	bool have;
	uint64_t start, end, src;
};

/* Two bijective 64-bit finalizers (splitmix64's and MurmurHash3's): the key's two lanes. */
static uint64_t mix_a(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t mix_b(uint64_t z)
{
	z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL;
	z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL;
	return z ^ (z >> 33);
}

static void hash_word(struct dedup_key *k, uint64_t w)
{
	k->h[0] = mix_a(k->h[0] ^ w);
	k->h[1] = mix_b(k->h[1] + (w ^ 0x9e3779b97f4a7c15ULL));
}

static void form_flush(struct form *f)
{
	if (!f->have)
		return;
	hash_word(&f->key, f->start);
	hash_word(&f->key, f->end);
	hash_word(&f->key, f->src);
	f->key.pieces++;
	f->have = false;
}

/* Bytes [start, end) read src (a log offset, or SRC_ZEROS) onwards. */
static void form_piece(struct form *f, uint64_t start, uint64_t end, uint64_t src)
{
	bool goes_on = f->have && f->end == start &&
		       (src == SRC_ZEROS ? f->src == SRC_ZEROS :
					   f->src != SRC_ZEROS && f->src + (f->end - f->start) == src);

	if (start >= end)
		return;
	if (goes_on) {
		f->end = end;
		return;
	}
	form_flush(f);
	f->have = true;
	f->start = start;
	f->end = end;
	f->src = src;
}

/* The source of x's byte at off: where it lies in the log, not the address it is mapped at. */
static uint64_t src_at(const struct form *f, const struct ovl_extent *x, uint64_t off)
{
	return x->src ? (uint64_t)(x->src - f->log->map) + (off - x->start) : SRC_ZEROS;
}

/* The durable layer's pieces in [lo, hi), from *dx on (which moves past what is done). */
static void form_durable(struct form *f, struct ovl_extents *t, struct ovl_extent **dx, uint64_t lo,
			 uint64_t hi)
{
	struct ovl_extent *x = *dx;

	while (x && x->end <= lo)
		x = RB_NEXT(ovl_extents, t, x);
	for (; x && x->start < hi; x = RB_NEXT(ovl_extents, t, x)) {
		uint64_t from = x->start > lo ? x->start : lo, to = x->end < hi ? x->end : hi;

		form_piece(f, from, to, src_at(f, x, from));
		if (x->end > hi)
			break;
	}
	*dx = x;
}

int dedup_key_of(const struct crash_log *log, const struct crash_spec *spec,
		 struct ovl_layer **durable, struct dedup_key *key)
{
	struct form f = { .log = log, .key = { { 0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL } } };
	struct ovl_extents *dt = NULL;
	struct ovl_extent *x, *dx = NULL;
	uint64_t at = 0;
	struct ovl o;
	int ret;

	ret = ovl_layer_advance(durable, log, spec->pos);
	if (!ret)
		ret = ovl_build(&o, log, spec, -1, log->image_size, *durable);
	if (ret)
		return ret;
	if (o.durable) {
		dt = &o.durable->extents;
		dx = RB_MIN(ovl_extents, dt);
	}
	/* the state's own extents over the durable layer's: what they leave of it shows */
	RB_FOREACH(x, ovl_extents, &o.extents) {
		if (dt)
			form_durable(&f, dt, &dx, at, x->start);
		form_piece(&f, x->start, x->end, src_at(&f, x, x->start));
		at = x->end;
	}
	if (dt)
		form_durable(&f, dt, &dx, at, UINT64_MAX);
	form_flush(&f);
	/* the count closes the key: no form is a prefix of another's hashing */
	hash_word(&f.key, f.key.pieces);
	f.key.marks = crash_marks_before(log, spec->pos);
	*key = f.key;
	ovl_free(&o);
	return 0;
}

/* ------------------------------------------------------------ the classes */

static int rep_cmp(const struct dedup_rep *a, const struct dedup_rep *b)
{
	for (int i = 0; i < 2; i++)
		if (a->key.h[i] != b->key.h[i])
			return a->key.h[i] < b->key.h[i] ? -1 : 1;
	if (a->key.pieces != b->key.pieces)
		return a->key.pieces < b->key.pieces ? -1 : 1;
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

void dedup_free(struct crash_dedup *d)
{
	struct dedup_rep *rep, *next;

	RB_FOREACH_SAFE(rep, dedup_reps, &d->reps, next) {
		RB_REMOVE(dedup_reps, &d->reps, rep);
		rep_free(rep);
	}
	ovl_layer_put(d->durable);
	d->durable = NULL;
	d->in_flight = NULL;
}

int dedup_add(struct crash_dedup *d, const struct crash_id *id, struct dedup_rep **out)
{
	struct dedup_rep key, *rep;
	struct crash_spec spec;
	char why[512];
	int ret;

	ret = crash_resolve(d->log, id, &spec, why, sizeof(why));
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
	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	rep->key = key.key;
	rep->ordinal = d->nr_reps++;
	RB_INSERT(dedup_reps, &d->reps, rep);
	*out = rep;
	return 0;
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
