/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * checkorder_core.c - barrier order verified on a trace: every D and C
 * record matched back to the Q'd bios it covers, and each barrier's issue
 * and completion held against the bios queued before and after it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/sys/queue.h>

#include "checkorder.h"

#define BT_SECTOR_SHIFT 9
#define NS_PER_SEC UINT64_C(1000000000)
#define ORDER_DESC_LEN 96

/* Sectors [start, end). */
struct sector_range {
	uint64_t start, end;
};

/* Disjoint ranges, in no particular order: what of a bio is left to issue or to complete. */
struct range_set {
	struct sector_range *r;
	size_t nr, alloc;
};

enum flush_state {
	FLUSH_NONE,     /* not a barrier, or its flush has completed */
	FLUSH_AWAITED,  /* a barrier whose 0-byte flush has not been issued */
	FLUSH_INFLIGHT, /* that flush issued, not completed */
};

/* A Q'd bio not yet completed. */
struct order_bio {
	TAILQ_ENTRY(order_bio) age;     /* every outstanding bio, in queue order */
	TAILQ_ENTRY(order_bio) barrier; /* outstanding barriers, in queue order */
	TAILQ_ENTRY(order_bio) flush;   /* barriers on a flush list */
	const struct bt_event *queued;  /* its Q record */
	const struct bt_event *issued;  /* its first D record, or NULL */
	bool write;
	bool is_barrier;
	enum flush_state flush_state;
	struct range_set unissued;
	struct range_set inflight; /* issued, not completed */
};

TAILQ_HEAD(order_bio_list, order_bio);

struct order_state {
	struct order_bio_list bios;
	struct order_bio_list barriers;
	struct order_bio_list flush_awaited;
	struct order_bio_list flush_inflight;
	/* per direction: sectors requeued, not issued again yet (still inflight in their bios) */
	struct range_set requeued[2];
	size_t requeued_flushes;
	struct order_report *r;
};

static int rs_append(struct range_set *s, struct sector_range range)
{
	if (s->nr == s->alloc) {
		size_t n = s->alloc ? 2 * s->alloc : 2;
		struct sector_range *p = realloc(s->r, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->r = p;
		s->alloc = n;
	}
	s->r[s->nr++] = range;
	return 0;
}

/* Take cut out of s; a range cut falls strictly inside of becomes two. */
static int rs_subtract(struct range_set *s, struct sector_range cut)
{
	size_t i = 0;

	while (i < s->nr) {
		struct sector_range *r = &s->r[i];

		if (r->end <= cut.start || cut.end <= r->start) {
			i++;
		} else if (cut.start <= r->start && r->end <= cut.end) {
			*r = s->r[--s->nr];
		} else if (r->start < cut.start && cut.end < r->end) {
			struct sector_range tail = { cut.end, r->end };

			r->end = cut.start;
			/* the ranges are disjoint: no other one overlaps cut */
			return rs_append(s, tail);
		} else {
			if (r->start < cut.start)
				r->end = cut.start;
			else
				r->start = cut.end;
			i++;
		}
	}
	return 0;
}

/* Some sectors both a and b hold, in *o; false when they share none. */
static bool rs_overlap(const struct range_set *a, const struct range_set *b, struct sector_range *o)
{
	for (size_t i = 0; i < a->nr; i++) {
		for (size_t j = 0; j < b->nr; j++) {
			const struct sector_range *x = &a->r[i], *y = &b->r[j];
			uint64_t start = x->start > y->start ? x->start : y->start;
			uint64_t end = x->end < y->end ? x->end : y->end;

			if (start < end) {
				*o = (struct sector_range){ start, end };
				return true;
			}
		}
	}
	return false;
}

/* The sectors from and want share leave both; they go to to, when there is one. */
static int rs_move(struct range_set *from, struct range_set *want, struct range_set *to,
		   bool *moved)
{
	struct sector_range o;
	int ret = 0;

	*moved = false;
	while (!ret && rs_overlap(from, want, &o)) {
		ret = rs_subtract(from, o);
		if (!ret)
			ret = rs_subtract(want, o);
		if (!ret && to)
			ret = rs_append(to, o);
		*moved = true;
	}
	return ret;
}

static void rs_free(struct range_set *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}

static uint64_t bt_sectors(const struct bt_event *e)
{
	return ((uint64_t)e->bytes + (1u << BT_SECTOR_SHIFT) - 1) >> BT_SECTOR_SHIFT;
}

/* Discards and flushes change the disk: they go the way of writes, as the kernel marks them. */
static bool bt_is_write(const struct bt_event *e)
{
	return bt_cat(e, BLK_TC_WRITE) || bt_cat(e, BLK_TC_DISCARD);
}

static char bt_action_letter(const struct bt_event *e)
{
	/* blkparse's letters, indexed by __BLK_TA_QUEUE (1) up to __BLK_TA_REMAP */
	static const char letters[] = "?QMFGSRDCPUTIXBA";
	unsigned int act = bt_act(e);

	_Static_assert(sizeof(letters) - 1 == __BLK_TA_REMAP + 1, "one letter per action");
	if (bt_is_notify(e))
		return 'N';
	return act < sizeof(letters) - 1 ? letters[act] : '?';
}

/* blkparse's RWBS: F(lush), then D(iscard)/W/R/N(one), then F(UA), A(head), S(ync), M(eta). */
static void bt_rwbs(const struct bt_event *e, char rwbs[8])
{
	int i = 0;

	if (bt_cat(e, BLK_TC_FLUSH))
		rwbs[i++] = 'F';
	if (bt_cat(e, BLK_TC_DISCARD))
		rwbs[i++] = 'D';
	else if (bt_cat(e, BLK_TC_WRITE))
		rwbs[i++] = 'W';
	else if (e->bytes)
		rwbs[i++] = 'R';
	else
		rwbs[i++] = 'N';
	if (bt_cat(e, BLK_TC_FUA))
		rwbs[i++] = 'F';
	if (bt_cat(e, BLK_TC_AHEAD))
		rwbs[i++] = 'A';
	if (bt_cat(e, BLK_TC_SYNC))
		rwbs[i++] = 'S';
	if (bt_cat(e, BLK_TC_META))
		rwbs[i++] = 'M';
	rwbs[i] = '\0';
}

void order_describe(const struct bt_event *e, char *buf, size_t len)
{
	char rwbs[8];

	bt_rwbs(e, rwbs);
	snprintf(buf, len, "%c #%" PRIu32 " at %" PRIu64 ".%09" PRIu64 " %s %" PRIu64 "+%" PRIu64,
		 bt_action_letter(e), e->sequence, e->time / NS_PER_SEC, e->time % NS_PER_SEC, rwbs,
		 e->sector, bt_sectors(e));
}

static int order_fail(struct order_state *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int order_fail(struct order_state *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->r->why, sizeof(s->r->why), fmt, ap);
	va_end(ap);
	return 1;
}

/* e claimed sectors (or the flush) nothing queued is waiting for. */
static int order_fail_unmatched(struct order_state *s, const struct bt_event *e,
				const struct range_set *left, const char *what)
{
	char d[ORDER_DESC_LEN];

	order_describe(e, d, sizeof(d));
	if (!left)
		return order_fail(s, "%s: %s of a flush never queued", d, what);
	return order_fail(s, "%s: %s of something never queued (sectors %" PRIu64 "+%" PRIu64 ")",
			  d, what, left->r[0].start, left->r[0].end - left->r[0].start);
}

/*
 * b's first D: everything queued before a barrier must have completed,
 * and no barrier queued before b may still be outstanding.
 */
static int order_first_issue(struct order_state *s, struct order_bio *b, const struct bt_event *e)
{
	char db[ORDER_DESC_LEN], de[ORDER_DESC_LEN], dother[ORDER_DESC_LEN];
	struct order_bio *older = TAILQ_FIRST(&s->bios);
	struct order_bio *barrier = TAILQ_FIRST(&s->barriers);

	if (b->issued)
		return 0;
	b->issued = e;
	order_describe(b->queued, db, sizeof(db));
	order_describe(e, de, sizeof(de));
	if (b->is_barrier && older != b) { /* the list is in queue order, b on it */
		order_describe(older->queued, dother, sizeof(dother));
		return order_fail(s, "barrier %s was issued by %s before %s, %s", db, de, dother,
				  "queued before the barrier, completed");
	}
	if (barrier && barrier != b && barrier->queued < b->queued) {
		order_describe(barrier->queued, dother, sizeof(dother));
		return order_fail(s, "%s, queued after barrier %s, was issued by %s %s", db, dother,
				  de, "before the barrier completed");
	}
	return 0;
}

static void order_maybe_done(struct order_state *s, struct order_bio *b)
{
	if (b->unissued.nr || b->inflight.nr || b->flush_state != FLUSH_NONE)
		return;
	TAILQ_REMOVE(&s->bios, b, age);
	if (b->is_barrier)
		TAILQ_REMOVE(&s->barriers, b, barrier);
	rs_free(&b->unissued);
	rs_free(&b->inflight);
	free(b);
}

static int order_queue(struct order_state *s, const struct bt_event *e)
{
	struct sector_range range = { e->sector, e->sector + bt_sectors(e) };
	bool barrier = bt_cat(e, BLK_TC_FLUSH);
	struct order_bio *b;

	s->r->bios++;
	s->r->barriers += barrier;
	if (!barrier && !e->bytes)
		return 0; /* nothing will be issued for it: no order to keep */
	b = calloc(1, sizeof(*b));
	if (!b || (e->bytes && rs_append(&b->unissued, range))) {
		free(b);
		return -ENOMEM;
	}
	b->queued = e;
	b->write = bt_is_write(e);
	b->is_barrier = barrier;
	TAILQ_INSERT_TAIL(&s->bios, b, age);
	if (barrier) {
		b->flush_state = FLUSH_AWAITED;
		TAILQ_INSERT_TAIL(&s->barriers, b, barrier);
		TAILQ_INSERT_TAIL(&s->flush_awaited, b, flush);
	}
	return 0;
}

/* A 0-byte flush: again after a requeue, or the one the oldest barrier waits for. */
static int order_issue_flush(struct order_state *s, const struct bt_event *e)
{
	struct order_bio *b = TAILQ_FIRST(&s->flush_awaited);

	if (s->requeued_flushes) {
		s->requeued_flushes--;
		return 0;
	}
	if (!b)
		return order_fail_unmatched(s, e, NULL, "issue");
	TAILQ_REMOVE(&s->flush_awaited, b, flush);
	b->flush_state = FLUSH_INFLIGHT;
	TAILQ_INSERT_TAIL(&s->flush_inflight, b, flush);
	return order_first_issue(s, b, e);
}

static int order_complete_flush(struct order_state *s, const struct bt_event *e)
{
	struct order_bio *b = TAILQ_FIRST(&s->flush_inflight);

	if (!b)
		return order_fail_unmatched(s, e, NULL, "completion");
	TAILQ_REMOVE(&s->flush_inflight, b, flush);
	b->flush_state = FLUSH_NONE;
	order_maybe_done(s, b);
	return 0;
}

/* Sectors issued again after a requeue are not a new issue of anything. */
static int order_issue_data(struct order_state *s, const struct bt_event *e, struct range_set *want)
{
	struct order_bio *b;
	bool moved;
	int ret = rs_move(&s->requeued[bt_is_write(e)], want, NULL, &moved);

	TAILQ_FOREACH(b, &s->bios, age) {
		if (ret || !want->nr)
			break;
		if (b->write != bt_is_write(e))
			continue;
		ret = rs_move(&b->unissued, want, &b->inflight, &moved);
		if (!ret && moved)
			ret = order_first_issue(s, b, e);
	}
	if (!ret && want->nr)
		ret = order_fail_unmatched(s, e, want, "issue");
	return ret;
}

static int order_complete_data(struct order_state *s, const struct bt_event *e,
			       struct range_set *want)
{
	struct order_bio *b, *next;
	bool moved;
	int ret = 0;

	TAILQ_FOREACH_SAFE(b, &s->bios, age, next) {
		if (ret || !want->nr)
			break;
		if (b->write != bt_is_write(e))
			continue;
		ret = rs_move(&b->inflight, want, NULL, &moved);
		if (!ret && moved)
			order_maybe_done(s, b);
	}
	if (!ret && want->nr)
		ret = order_fail_unmatched(s, e, want, "completion");
	return ret;
}

/* Match a D or C record, oldest outstanding bio first. */
static int order_match(struct order_state *s, const struct bt_event *e, bool issue)
{
	struct range_set want = { 0 };
	int ret;

	if (!e->bytes) {
		if (!bt_cat(e, BLK_TC_FLUSH))
			return 0; /* no sectors, no flush: nothing to account */
		return issue ? order_issue_flush(s, e) : order_complete_flush(s, e);
	}
	ret = rs_append(&want, (struct sector_range){ e->sector, e->sector + bt_sectors(e) });
	if (!ret)
		ret = issue ? order_issue_data(s, e, &want) : order_complete_data(s, e, &want);
	rs_free(&want);
	return ret;
}

static int order_requeue(struct order_state *s, const struct bt_event *e)
{
	struct range_set *requeued = &s->requeued[bt_is_write(e)];
	struct sector_range range = { e->sector, e->sector + bt_sectors(e) };
	int ret;

	if (!e->bytes) {
		s->requeued_flushes += bt_cat(e, BLK_TC_FLUSH);
		return 0;
	}
	ret = rs_subtract(requeued, range); /* keep the set disjoint */
	return ret ? ret : rs_append(requeued, range);
}

static int order_event(struct order_state *s, const struct bt_event *e)
{
	if (bt_is_notify(e))
		return 0;
	switch (bt_act(e)) {
	case __BLK_TA_QUEUE:
		return order_queue(s, e);
	case __BLK_TA_ISSUE:
		return order_match(s, e, true);
	case __BLK_TA_COMPLETE:
		return order_match(s, e, false);
	case __BLK_TA_REQUEUE:
		return order_requeue(s, e);
	default:
		return 0; /* merges, splits, bounces, G, I: the sectors of D and C say it all */
	}
}

static void order_state_free(struct order_state *s)
{
	struct order_bio *b;

	while ((b = TAILQ_FIRST(&s->bios))) {
		TAILQ_REMOVE(&s->bios, b, age);
		s->r->outstanding++;
		rs_free(&b->unissued);
		rs_free(&b->inflight);
		free(b);
	}
	rs_free(&s->requeued[0]);
	rs_free(&s->requeued[1]);
}

int order_check(const struct bt_trace *t, struct order_report *r)
{
	struct order_state s = { .r = r };
	int ret = 0;

	memset(r, 0, sizeof(*r));
	TAILQ_INIT(&s.bios);
	TAILQ_INIT(&s.barriers);
	TAILQ_INIT(&s.flush_awaited);
	TAILQ_INIT(&s.flush_inflight);
	for (size_t i = 0; i < t->nr && !ret; i++)
		ret = order_event(&s, &t->ev[i]);
	order_state_free(&s);
	if (ret == -ENOMEM)
		snprintf(r->why, sizeof(r->why), "out of memory");
	return ret;
}
