/* SPDX-License-Identifier: BSD-3-Clause */
/* bio.c - a bio's life: set up, cloned for splits and bounces, ended exactly once. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "blkdev.h"

void bio_init(struct bio *bio, enum req_op op, sector_t sector, unsigned int size,
	      struct bio_vec *vecs, unsigned short vcnt)
{
	memset(bio, 0, sizeof(*bio));
	bio->bi_op = op;
	bio->bi_sector = sector;
	bio->bi_size = size;
	bio->bi_io_vec = vecs;
	bio->bi_vcnt = vcnt;
	bio->bi_ioprio = IOPRIO_DEFAULT;
}

/*
 * Drop one reference.  A bio holds one from submit_bio() and one more per
 * clone still out; the last one calls bi_end_io, with the first error seen.
 */
void bio_endio(struct bio *bio, int error)
{
	if (error && !bio->bi_error)
		bio->bi_error = error;
	if (error && bio->bi_good == bio->bi_size && bio->bi_remaining == 1)
		bio->bi_good = 0; /* failed as a whole, not at a sector */
	assert(bio->bi_remaining > 0);
	if (--bio->bi_remaining > 0)
		return;
	assert(!(bio->bi_state & BIO_ENDED));
	bio->bi_state |= BIO_ENDED;
	bio->bi_end_io(bio, bio->bi_error);
}

/* A clone's good prefix, where it failed, bounds its parent's. */
void bio_chain_end_io(struct bio *child, int error)
{
	struct bio *parent = child->bi_parent;
	unsigned int at = (unsigned int)((child->bi_sector - parent->bi_sector) << SECTOR_SHIFT);

	if ((error || child->bi_good < child->bi_size) && at + child->bi_good < parent->bi_good)
		parent->bi_good = at + child->bi_good;

	free(child->bi_bounce);
	free(child);
	bio_endio(parent, error);
}

/* The index of the segment holding byte offset, and the offset inside it. */
static unsigned short bvec_seek(const struct bio *bio, size_t *offset)
{
	unsigned short i = 0;

	while (i < bio->bi_vcnt && *offset >= bio->bi_io_vec[i].bv_len)
		*offset -= bio->bi_io_vec[i++].bv_len;
	return i;
}

static unsigned short bvec_count(const struct bio *bio, unsigned short first, size_t skip,
				 size_t size)
{
	unsigned short n = 0;

	for (unsigned short i = first; i < bio->bi_vcnt && size; i++, n++) {
		size_t len = bio->bi_io_vec[i].bv_len - (i == first ? skip : 0);

		size -= len < size ? len : size;
	}
	return n;
}

/*
 * A clone of size bytes of parent from offset, sharing its memory; parent
 * ends once every clone has ended.
 */
struct bio *bio_clone_range(struct bio *parent, size_t offset, unsigned int size)
{
	size_t skip = offset;
	unsigned short first = bvec_seek(parent, &skip);
	unsigned short n = op_has_data(parent->bi_op) ? bvec_count(parent, first, skip, size) : 0;
	struct bio *bio = calloc(1, sizeof(*bio) + n * sizeof(struct bio_vec));
	struct bio_vec *bv = (struct bio_vec *)(bio + 1);
	size_t left = size;

	if (!bio)
		return NULL;
	for (unsigned short i = 0; i < n; i++) {
		const struct bio_vec *src = &parent->bi_io_vec[first + i];
		size_t off = i == 0 ? skip : 0;
		size_t len = src->bv_len - off < left ? src->bv_len - off : left;

		bv[i] = (struct bio_vec){ (char *)src->bv_base + off, len };
		left -= len;
	}
	bio->bi_op = parent->bi_op;
	bio->bi_flags = parent->bi_flags;
	bio->bi_pid = parent->bi_pid;
	bio->bi_ioprio = parent->bi_ioprio;
	bio->bi_blkcg = parent->bi_blkcg;
	bio->bi_sector = parent->bi_sector + (offset >> SECTOR_SHIFT);
	bio->bi_size = size;
	bio->bi_good = size;
	bio->bi_io_vec = bv;
	bio->bi_vcnt = n;
	bio->bi_end_io = bio_chain_end_io;
	bio->bi_parent = parent;
	bio->bi_remaining = 1;
	bio->bi_state = BIO_CLONED;
	parent->bi_remaining++;
	return bio;
}
