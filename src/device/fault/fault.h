/* SPDX-License-Identifier: BSD-3-Clause */
/* fault.h - the fault filter's rules (what "fault:KEY=VALUE,..." and fault/rules take) and its
 * bad-block list. */
#ifndef RQDISK_FAULT_H
#define RQDISK_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk_types.h"
#include "sector_ranges.h"

#define FAULT_PPM 1000000u	/* probabilities are parts per million */
#define FAULT_MAX_MS 3600000ull /* an hour */
/* Ranges in one of the filter's sets (its max): fewer than SECTOR_RANGES_MAX, for its I/O path. */
#define FAULT_MAX_BAD_RANGES 65536u
#define FAULT_MAX_SECTORS_FILE (4u << 20) /* bytes: 65536 ranges of long numbers fit */

/* One bit per enum req_op. */
#define FAULT_OP(op) (1u << (op))
#define FAULT_OPS_ALL                                                                              \
	(FAULT_OP(REQ_OP_READ) | FAULT_OP(REQ_OP_WRITE) | FAULT_OP(REQ_OP_FLUSH) |                 \
	 FAULT_OP(REQ_OP_DISCARD) | FAULT_OP(REQ_OP_WRITE_ZEROES))

struct fault_rules {
	/* The error rule: off while ops is 0 or enable is 0. */
	unsigned int ops; /* FAULT_OP() of what fails */
	int err;	  /* positive errno */
	uint32_t prob;	  /* ppm of the matching requests that fail */
	uint64_t seed;
	sector_t start, end; /* sectors [start, end); end 0: to the disk's end */
	uint64_t times;	     /* fail this many, then no more; 0: no limit */
	uint64_t interval;   /* every Nth matching request, 1: each */
	bool enable;
	char *error_file; /* the rule holds only while this path exists; NULL: always */
	/* Bad blocks: a write clears the bad sectors it covers unless sticky. */
	bool sticky;
	/* Flakey: up_ms up, then down_ms down, from when the rules were set; down_ms 0: never down.
	 */
	uint64_t up_ms, down_ms;
	bool error_reads, error_writes, drop_writes;
	uint64_t corrupt_bio_byte;  /* 1-based byte of each bio, 0: none */
	unsigned int corrupt_value; /* 0..255 */
	unsigned int corrupt_on;    /* FAULT_OP(READ) and/or FAULT_OP(WRITE) */
	uint32_t random_read_corrupt, random_write_corrupt; /* ppm of requests, one random byte */
	/* Delay: every read or write (flush, discard: write's), and now and then a spike on top. */
	uint64_t delay_read_ms, delay_write_ms, spike_ms;
	uint32_t spike_prob; /* ppm */
	/*
	 * Aimed (sectors=, sectors_file=): the error rule, flakey and the
	 * delays touch only requests that reach these sectors, from the first
	 * of them on; none: the whole disk.  Bad sectors are their own aim.
	 */
	struct sector_ranges sectors;
	char *sectors_file; /* where sectors came from, shown as the rules were written; NULL:
			       sectors= */
};

/* The defaults: no rule, EIO, always, each request, enabled. */
void fault_rules_init(struct fault_rules *r);
/* A deep copy; 0 or -ENOMEM. */
int fault_rules_copy(struct fault_rules *to, const struct fault_rules *from);
void fault_rules_free(struct fault_rules *r);
/*
 * Apply "KEY=VALUE,..." to r and bb (badblocks=S-E/S-E adds ranges), a
 * disk of capacity sectors.  0, or -EINVAL with a one-line reason; on an
 * error r and bb may be half changed: parse into copies.
 */
struct dev_key;
/* The keys fault_rules_parse takes, each with its help: the filter's key table. */
extern const struct dev_key fault_keys[];

int fault_rules_parse(struct fault_rules *r, struct sector_ranges *bb, const char *args,
		      sector_t capacity, char *why, size_t whylen);
/* Every key with its value, as fault_rules_parse takes them back. */
int fault_rules_format(const struct fault_rules *r, char *buf, size_t len);
/* "EIO" for EIO, NULL for an errno with no name here. */
const char *fault_errno_name(int err);

/* The offset in [pos, pos+n) of its first sector in bb, n for none. */
unsigned int fault_bb_first(const struct sector_ranges *bb, sector_t pos, unsigned int n);
/* The offset in [pos, pos+n) of its first sector in no range, n for none. */
unsigned int fault_bb_first_clear(const struct sector_ranges *bb, sector_t pos, unsigned int n);
/*
 * "+S-E", "-S-E" (inclusive sectors, "+S" for one, or more joined by /)
 * marks them bad or good; "clear" all good.  0, or -EINVAL, -ENOSPC,
 * -ENOMEM with nothing changed.
 */
int fault_bb_command(struct sector_ranges *bb, const char *cmd, sector_t capacity);
/* "S-E\n" a range (inclusive), as + takes them; what fits in len. */
int fault_bb_show(const struct sector_ranges *bb, char *buf, size_t len);
/*
 * "S-E/S-E/S" (badblocks=, sectors=, a line of sectors_file), as
 * sector_ranges_parse takes it, inside a disk of capacity sectors, added
 * to bb (up to its max); 0 or -EINVAL/-ENOSPC/-ENOMEM, bb maybe half changed.
 */
int fault_bb_parse(struct sector_ranges *bb, const char *v, size_t len, sector_t capacity);
/*
 * The ranges of a file, as sectors_file= takes it: lines of "S-E/S-E",
 * blank ones and "#" comments skipped.  A regular file of at most
 * FAULT_MAX_SECTORS_FILE bytes.  0 or -errno with a one-line reason in why
 * naming the path (and the line), bb unchanged.
 */
int fault_bb_read_file(struct sector_ranges *bb, const char *path, sector_t capacity, char *why,
		       size_t whylen);

#endif
