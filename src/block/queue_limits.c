/* SPDX-License-Identifier: BSD-3-Clause */
/* queue_limits.c - queue limit defaults and the rules that keep them consistent. */
#include <errno.h>
#include <stdio.h>

#include "blkdev.h"
#include "queue_limits.h"

void blk_set_default_limits(struct queue_limits *lim)
{
	*lim = (struct queue_limits){
		.max_sectors = BLK_DEF_MAX_SECTORS,
		.max_hw_sectors = BLK_DEF_MAX_SECTORS,
		.max_discard_sectors = BLK_DEF_MAX_DISCARD_SECTORS,
		.max_write_zeroes_sectors = BLK_DEF_MAX_WRITE_ZEROES_SECTORS,
		.max_phys_segments = BLK_MAX_SEGMENTS,
		.max_hw_segments = BLK_MAX_SEGMENTS,
		.max_segment_size = BLK_MAX_SEGMENT_SIZE,
		.seg_boundary_mask = BLK_SEG_BOUNDARY_MASK,
		.logical_block_size = BLK_DEF_LOGICAL_BLOCK_SIZE,
		.dma_alignment = BLK_DEF_DMA_ALIGNMENT,
		.nr_requests = BLK_DEF_NR_REQUESTS,
		.nomerges = BLK_MERGES_ALL,
		.rotational = true,
	};
}

bool blk_queue_nonrot(const struct request_queue *q)
{
	return !q->limits.rotational;
}

static bool is_power_of_2(unsigned long n)
{
	return n && !(n & (n - 1));
}

#define REFUSE(...)                                    \
	do {                                           \
		snprintf(why, whylen, __VA_ARGS__);    \
		return -EINVAL;                        \
	} while (0)

/*
 * The 2.6 setters clamped bad values with a printk; a userspace tool is
 * better off refusing them with the reason.
 */
int blk_validate_limits(const struct queue_limits *lim, char *why, size_t whylen)
{
	unsigned int lbs = lim->logical_block_size;

	if (!why)
		whylen = 0;
	if (!is_power_of_2(lbs) || lbs < 512 || lbs > BLK_PAGE_SIZE)
		REFUSE("logical block size %u is not a power of two from 512 to 4096", lbs);
	if (lim->max_sectors < BLK_PAGE_SIZE >> 9)
		REFUSE("max sectors %u is below one page (8 sectors)", lim->max_sectors);
	if (lim->max_hw_sectors < lim->max_sectors)
		REFUSE("max sectors %u is above max hw sectors %u", lim->max_sectors,
		       lim->max_hw_sectors);
	if (lim->max_segment_size < BLK_PAGE_SIZE)
		REFUSE("max segment size %u is below one page (4096)", lim->max_segment_size);
	if (lim->seg_boundary_mask < BLK_PAGE_SIZE - 1 || !is_power_of_2(lim->seg_boundary_mask + 1))
		REFUSE("segment boundary 0x%lx is not a power of two minus one of at least 0xfff",
		       lim->seg_boundary_mask);
	if (lim->max_segment_size - 1 > lim->seg_boundary_mask)
		REFUSE("max segment size %u is above the segment boundary 0x%lx",
		       lim->max_segment_size, lim->seg_boundary_mask);
	if (!lim->max_phys_segments || !lim->max_hw_segments)
		REFUSE("max segments must be at least 1");
	if (lim->dma_alignment >= BLK_PAGE_SIZE || !is_power_of_2(lim->dma_alignment + 1))
		REFUSE("dma alignment 0x%x is not a power of two minus one below 4096",
		       lim->dma_alignment);
	/* a segment cut at max_segment_size must leave aligned memory behind it */
	if (lim->max_segment_size % SECTOR_SIZE || lim->max_segment_size % (lim->dma_alignment + 1))
		REFUSE("max segment size %u is not a multiple of 512 and of the dma alignment",
		       lim->max_segment_size);
	if (lim->physical_block_size &&
	    (!is_power_of_2(lim->physical_block_size) || lim->physical_block_size < lbs))
		REFUSE("physical block size %u is not a power of two of at least the logical block "
		       "size %u", lim->physical_block_size, lbs);
	if (!lim->nr_requests)
		REFUSE("nr requests must be at least 1");
	if (lim->nomerges > BLK_MERGES_NONE)
		REFUSE("nomerges %u is not 0, 1 or 2", lim->nomerges);
	/* 0 is a device that takes none, as in Linux */
	if (lim->max_discard_sectors && lim->max_discard_sectors < lbs >> 9)
		REFUSE("max discard sectors %u is below one logical block", lim->max_discard_sectors);
	if (lim->max_discard_sectors > BLK_MAX_DISCARD_SECTORS)
		REFUSE("max discard sectors %u is above %u: its bytes would not fit in 32 bits",
		       lim->max_discard_sectors, BLK_MAX_DISCARD_SECTORS);
	if (lim->max_write_zeroes_sectors && lim->max_write_zeroes_sectors < lbs >> 9)
		REFUSE("max write zeroes sectors %u is below one logical block",
		       lim->max_write_zeroes_sectors);
	if (lim->max_write_zeroes_sectors > BLK_MAX_DISCARD_SECTORS)
		REFUSE("max write zeroes sectors %u is above %u: its bytes would not fit in 32 bits",
		       lim->max_write_zeroes_sectors, BLK_MAX_DISCARD_SECTORS);
	return 0;
}

/* Limits in sectors, rounded down so no request breaks the logical block size. */
unsigned int queue_max_sectors(const struct queue_limits *lim, enum req_op op)
{
	unsigned int lbs_sectors = lim->logical_block_size >> 9;
	unsigned int max = op == REQ_OP_DISCARD	       ? lim->max_discard_sectors
			   : op == REQ_OP_WRITE_ZEROES ? lim->max_write_zeroes_sectors
						       : lim->max_sectors;

	return max - max % lbs_sectors;
}

unsigned int queue_max_segments(const struct queue_limits *lim)
{
	return lim->max_phys_segments < lim->max_hw_segments ? lim->max_phys_segments
							      : lim->max_hw_segments;
}

unsigned int queue_physical_block_size(const struct queue_limits *lim)
{
	return lim->physical_block_size > lim->logical_block_size ? lim->physical_block_size
								  : lim->logical_block_size;
}
