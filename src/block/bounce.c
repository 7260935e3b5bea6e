/* SPDX-License-Identifier: BSD-3-Clause */
/* bounce.c - copy bio memory the device cannot take (misaligned) through an aligned buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blkdev.h"
#include "blktrace.h"

/*
 * As O_DIRECT wants it: each segment's address on the dma alignment and,
 * where there is one, its length in whole sectors (or whole dma units if
 * those are smaller).
 */
bool blk_bio_needs_bounce(const struct request_queue *q, const struct bio *bio)
{
	uintptr_t addr_mask = q->limits.dma_alignment;
	size_t len_mask = q->limits.dma_alignment & (SECTOR_SIZE - 1);

	if (!op_has_data(bio->bi_op))
		return false;
	for (unsigned short i = 0; i < bio->bi_vcnt; i++)
		if (((uintptr_t)bio->bi_io_vec[i].bv_base & addr_mask) ||
		    (bio->bi_io_vec[i].bv_len & len_mask))
			return true;
	return false;
}

/* Copy between a flat buffer and size bytes of bio's segments from offset. */
static void bio_copy(struct bio *bio, size_t offset, char *buf, size_t size, bool to_bio)
{
	for (unsigned short i = 0; i < bio->bi_vcnt && size; i++) {
		struct bio_vec *bv = &bio->bi_io_vec[i];
		size_t n;

		if (offset >= bv->bv_len) {
			offset -= bv->bv_len;
			continue;
		}
		n = bv->bv_len - offset < size ? bv->bv_len - offset : size;
		if (to_bio)
			memcpy((char *)bv->bv_base + offset, buf, n);
		else
			memcpy(buf, (char *)bv->bv_base + offset, n);
		buf += n;
		size -= n;
		offset = 0;
	}
}

static void bounce_end_io(struct bio *clone, int error)
{
	struct bio *parent = clone->bi_parent;
	size_t offset = (size_t)(clone->bi_sector - parent->bi_sector) << SECTOR_SHIFT;

	if (clone->bi_op == REQ_OP_READ) /* what was read before a failure too */
		bio_copy(parent, offset, clone->bi_bounce, error ? clone->bi_good : clone->bi_size,
			 true);
	bio_chain_end_io(clone, error);
}

/* A clone of size bytes of bio from offset, its data in one page-aligned buffer. */
struct bio *blk_bounce_range(struct request_queue *q, struct bio *bio, size_t offset,
			     unsigned int size)
{
	struct bio *clone;
	void *buf;

	if (posix_memalign(&buf, BLK_PAGE_SIZE, size ? size : 1))
		return NULL;
	clone = bio_clone_range(bio, offset, size);
	if (!clone) {
		free(buf);
		return NULL;
	}
	if (bio->bi_op == REQ_OP_WRITE)
		bio_copy(bio, offset, buf, size, false);
	clone->bi_bounce = buf;
	clone->bi_io_vec[0] = (struct bio_vec){ buf, size };
	clone->bi_vcnt = 1;
	clone->bi_end_io = bounce_end_io;
	q->bounced++;
	blk_add_trace_bio(q, clone, BLK_TA_BOUNCE);
	return clone;
}
