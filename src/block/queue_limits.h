/* SPDX-License-Identifier: BSD-3-Clause */
/* queue_limits.h - queue limits: what a request may look like on this device. */
#ifndef RQDISK_QUEUE_LIMITS_H
#define RQDISK_QUEUE_LIMITS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "blk_types.h"

/* Defaults of the 2.6 block layer, as the LWN "Request Queues" article gives them. */
#define BLK_DEF_MAX_SECTORS 255u           /* 512-byte sectors per request */
#define BLK_MAX_SEGMENTS 128u              /* phys and hw segments per request */
#define BLK_MAX_SEGMENT_SIZE 65536u        /* bytes in one scatter/gather entry */
#define BLK_SEG_BOUNDARY_MASK 0xffffffffUL /* no entry crosses such a boundary */
#define BLK_DEF_LOGICAL_BLOCK_SIZE 512u
#define BLK_DEF_DMA_ALIGNMENT 511u         /* mask: memory not on it is bounced */
#define BLK_DEF_NR_REQUESTS 128u
/*
 * A discard or zeroing request's bytes must fit in 32 bits, as a bio's
 * bi_size and a blktrace record's bytes do: the kernel's cap, UINT_MAX >> 9
 * sectors (4 GiB less 512 bytes).  One more sector and 4 GiB is traced as 0.
 */
#define BLK_MAX_DISCARD_SECTORS (UINT_MAX >> 9)
#define BLK_DEF_MAX_DISCARD_SECTORS BLK_MAX_DISCARD_SECTORS
#define BLK_DEF_MAX_WRITE_ZEROES_SECTORS BLK_MAX_DISCARD_SECTORS

enum blk_nomerges {
	BLK_MERGES_ALL = 0,      /* every merge the limits allow */
	BLK_MERGES_ONE_HIT = 1,  /* only the last-merge cache */
	BLK_MERGES_NONE = 2,
};

struct queue_limits {
	unsigned int max_sectors;
	unsigned int max_hw_sectors;
	unsigned int max_discard_sectors;      /* 0: the device takes no discard */
	unsigned int max_write_zeroes_sectors; /* 0: nor any write-zeroes */
	unsigned short max_phys_segments;
	unsigned short max_hw_segments;
	unsigned int max_segment_size;
	unsigned long seg_boundary_mask;
	unsigned int logical_block_size;
	unsigned int physical_block_size; /* 0: the logical block size */
	unsigned int io_opt;              /* bytes the device prefers per I/O, 0: none said */
	unsigned int dma_alignment;
	unsigned int nr_requests;
	unsigned int nomerges;
	bool rotational; /* the device seeks (queue/rotational); Linux 2.6's default, as NONROT is opt-in */
};

void blk_set_default_limits(struct queue_limits *lim);
int blk_validate_limits(const struct queue_limits *lim, char *why, size_t whylen);
unsigned int queue_max_sectors(const struct queue_limits *lim, enum req_op op);
unsigned int queue_max_segments(const struct queue_limits *lim);
unsigned int queue_physical_block_size(const struct queue_limits *lim);

#endif
