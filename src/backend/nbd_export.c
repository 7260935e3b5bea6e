/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nbd_export.c - what an NBD export says of itself once connected, as the
 * disk's limits: its size, read-only flag, flush, FUA, trim and zero, and
 * its block size constraints; and whether a new connection reached the
 * same export.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

#include "nbd_export.h"

/* A preferred block size above this is no physical block size (the protocol's 32 MiB). */
#define NBD_MAX_PREFERRED (32u << 20)

void nbd_export_flags(struct nbd_export *ex, struct nbd_handle *h)
{
	ex->can_flush = nbd_can_flush(h) == 1;
	ex->can_fua = nbd_can_fua(h) == 1;
}

/*
 * What the server states about block sizes, into the queue's limits, as
 * a client aligns to them: its minimum is the logical block size (raised
 * to it, up to a page), its preferred size the physical block size and
 * io_opt, its maximum what one read or write carries (max_sectors).
 */
static int nbd_block_sizes(struct nbd_export *ex, struct nbd_handle *h, struct dev_limits *lim,
			   char *why, size_t whylen)
{
	int64_t min = nbd_get_block_size(h, LIBNBD_SIZE_MINIMUM);
	int64_t pref = nbd_get_block_size(h, LIBNBD_SIZE_PREFERRED);
	int64_t max = nbd_get_block_size(h, LIBNBD_SIZE_MAXIMUM);
	unsigned int lbs = lim->logical_block_size;

	if (min > BLK_PAGE_SIZE) {
		snprintf(why, whylen,
			 "nbd: the export takes I/O in blocks of %" PRId64 " bytes, above a page",
			 min);
		return -EINVAL;
	}
	if (min > (int64_t)lbs)
		lbs = lim->logical_block_size = (unsigned int)min;
	if (pref > (int64_t)lbs && pref <= NBD_MAX_PREFERRED)
		lim->physical_block_size = lim->io_opt = (unsigned int)pref;
	ex->max_io = UINT32_MAX - (UINT32_MAX % lbs);
	if (max > 0)
		ex->max_io = (uint64_t)max - (uint64_t)max % lbs;
	if (ex->max_io < BLK_PAGE_SIZE) {
		snprintf(why, whylen, "nbd: the export's largest I/O, %" PRId64
			 " bytes, is below a page", max);
		return -EINVAL;
	}
	if (ex->max_io >> SECTOR_SHIFT < UINT_MAX)
		lim->max_sectors = (unsigned int)(ex->max_io >> SECTOR_SHIFT);
	return 0;
}

int nbd_export_limits(struct nbd_export *ex, struct nbd_handle *h, struct dev_limits *lim, char *why,
		      size_t whylen)
{
	unsigned int lbs;
	int ret;

	ex->size = nbd_get_size(h);
	if (ex->size < 0) {
		snprintf(why, whylen, "nbd: %s", nbd_get_error());
		return -EIO;
	}
	ret = nbd_block_sizes(ex, h, lim, why, whylen);
	if (ret)
		return ret;
	lbs = lim->logical_block_size;
	if (!ex->size || ex->size % lbs) {
		snprintf(why, whylen,
			 "nbd: the export's size %" PRId64
			 " is not a non-zero multiple of the logical block size %u",
			 ex->size, lbs);
		return -EINVAL;
	}
	lim->capacity = (sector_t)(ex->size >> SECTOR_SHIFT);
	ex->block = lbs;
	ex->read_only = nbd_is_read_only(h) == 1;
	nbd_export_flags(ex, h);
	lim->read_only = ex->read_only;
	lim->has_cache = ex->can_flush;
	/* what the export does not take, the queue refuses before it comes here */
	lim->discard = !ex->read_only && nbd_can_trim(h) == 1;
	lim->write_zeroes = !ex->read_only && nbd_can_zero(h) == 1;
	lim->rotational = false;
	return 0;
}

/*
 * The disk's commands, aligned to ex->block and at most ex->max_io long,
 * must still be ones the server takes: libnbd refuses the others.
 */
static bool nbd_blocks_fit(const struct nbd_export *ex, struct nbd_handle *h)
{
	int64_t min = nbd_get_block_size(h, LIBNBD_SIZE_MINIMUM);
	int64_t max = nbd_get_block_size(h, LIBNBD_SIZE_MAXIMUM);

	return (min <= 0 || ex->block % (uint64_t)min == 0) &&
	       (max <= 0 || (uint64_t)max >= ex->max_io);
}

bool nbd_export_same(const struct nbd_export *ex, struct nbd_handle *h, const char *uri)
{
	int64_t size = nbd_get_size(h);

	if (size == ex->size && (nbd_is_read_only(h) == 1) == ex->read_only &&
	    nbd_blocks_fit(ex, h))
		return true;
	fprintf(stderr,
		"rqdisk: nbd: %s: the export came back changed (%" PRId64
		" bytes%s, blocks of %" PRId64 " to %" PRId64 " bytes)\n",
		uri, size, nbd_is_read_only(h) == 1 ? ", read-only" : "",
		nbd_get_block_size(h, LIBNBD_SIZE_MINIMUM),
		nbd_get_block_size(h, LIBNBD_SIZE_MAXIMUM));
	return false;
}
