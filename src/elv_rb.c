/* elv_rb.c - the sector-sorted tree of requests every elevator keeps, generated once here. */
#include <assert.h>

#include "blkdev.h"

/* Sector order; equal sectors in address order, so that the tree holds both. */
static int elv_rq_sector_cmp(const struct request *a, const struct request *b)
{
	if (blk_rq_pos(a) != blk_rq_pos(b))
		return blk_rq_pos(a) < blk_rq_pos(b) ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* libbsd leaves __unused undefined: the attribute spelled out, for RB_FIND and the like. */
RB_GENERATE_INTERNAL(elv_rb_root, request, rb_node, elv_rq_sector_cmp,
		     __attribute__((unused)) static)

void elv_rb_add(struct elv_rb_root *root, struct request *rq)
{
	assert(!rq->rb_tree);
	RB_INSERT(elv_rb_root, root, rq);
	rq->rb_tree = root;
}

void elv_rb_del(struct elv_rb_root *root, struct request *rq)
{
	assert(rq->rb_tree == root);
	RB_REMOVE(elv_rb_root, root, rq);
	rq->rb_tree = NULL;
}

/* Lock held: a front merge moved rq's start; its tree, if any, must follow. */
void elv_rb_reposition(struct request *rq)
{
	struct elv_rb_root *root = rq->rb_tree;

	if (!root)
		return;
	RB_REMOVE(elv_rb_root, root, rq);
	RB_INSERT(elv_rb_root, root, rq);
}

struct request *elv_rb_first(const struct elv_rb_root *root)
{
	return RB_MIN(elv_rb_root, (struct elv_rb_root *)root);
}

struct request *elv_rb_last(const struct elv_rb_root *root)
{
	return RB_MAX(elv_rb_root, (struct elv_rb_root *)root);
}

struct request *elv_rb_next(const struct request *rq)
{
	return RB_NEXT(elv_rb_root, NULL, (struct request *)rq);
}

struct request *elv_rb_prev(const struct request *rq)
{
	return RB_PREV(elv_rb_root, NULL, (struct request *)rq);
}

/*
 * The searches look at sectors only: the tree's own RB_NFIND would also
 * weigh the address that breaks ties, and so skip requests at the very
 * sector asked for.
 */
struct request *elv_rb_find(const struct elv_rb_root *root, sector_t sector)
{
	struct request *rq = RB_ROOT(root);

	while (rq && blk_rq_pos(rq) != sector)
		rq = blk_rq_pos(rq) < sector ? RB_RIGHT(rq, rb_node) : RB_LEFT(rq, rb_node);
	return rq;
}

struct request *elv_rb_ceiling(const struct elv_rb_root *root, sector_t sector)
{
	struct request *rq = RB_ROOT(root), *found = NULL;

	while (rq) {
		if (blk_rq_pos(rq) >= sector) {
			found = rq;
			rq = RB_LEFT(rq, rb_node);
		} else {
			rq = RB_RIGHT(rq, rb_node);
		}
	}
	return found;
}

struct request *elv_rb_below(const struct elv_rb_root *root, sector_t sector)
{
	struct request *rq = RB_ROOT(root), *found = NULL;

	while (rq) {
		if (blk_rq_pos(rq) < sector) {
			found = rq;
			rq = RB_RIGHT(rq, rb_node);
		} else {
			rq = RB_LEFT(rq, rb_node);
		}
	}
	return found;
}
