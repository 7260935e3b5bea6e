/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_writes.h - the on-disk format of a write log: dm-log-writes' format
 * (the kernel's Documentation/admin-guide/device-mapper/log-writes.rst),
 * so that xfstests' replay-log and rqdisk-crash read the same logs.
 *
 * Every field is little-endian.  The log is a sequence of blocks of
 * sectorsize bytes (the disk's logical block size):
 *
 *   block 0      struct log_write_super, the rest zeroed
 *   block 1      struct log_write_entry of entry 0; a MARK's name follows
 *                the entry in the same block (data_len bytes, no NUL)
 *   block 2...   a WRITE's data: nr_sectors blocks, when it has any
 *   ...          the next entry, and so on, nr_entries of them
 *
 * sector and nr_sectors count sectorsize blocks, not 512-byte sectors.
 * A FLUSH, a DISCARD and a MARK carry no data blocks: a reader skips
 * nr_sectors blocks after an entry unless it is a DISCARD (a FLUSH and a
 * MARK have nr_sectors 0).  data_len is the MARK's name length and 0 for
 * every other entry, a write's included.  Past the entry (and a name) the
 * block is zero: replay-log refuses an entry whose block is not, and one
 * with neither flags nor sectors.  nr_entries is rewritten as the log
 * grows (after FUA writes, flushes and marks), so a log cut short is
 * read up to the last super block written.
 *
 * rqdisk adds a record of its own to block 0, at LOG_WRITES_RQDISK_OFF,
 * in what dm-log-writes leaves zero and replay-log and QEMU never read:
 * that the log ends in an end mark when whole (a log that has none was
 * cut short: its writer was killed, or stopped logging), and that and
 * why logging stopped.  A log without it (the kernel's, QEMU's) is read
 * as it always was.
 */
#ifndef RQDISK_LOG_WRITES_H
#define RQDISK_LOG_WRITES_H

#include <stdbool.h>
#include <stdint.h>

#define LOG_WRITES_MAGIC 0x6a736677736872ULL
#define LOG_WRITES_VERSION 1ULL

/* log_write_entry.flags */
#define LOG_FLUSH_FLAG (1ULL << 0)    /* a flush completed: what came before is durable */
#define LOG_FUA_FLAG (1ULL << 1)      /* a FUA write: durable when it completed */
#define LOG_DISCARD_FLAG (1ULL << 2)  /* the range was discarded: no data */
#define LOG_MARK_FLAG (1ULL << 3)     /* a name, set by the user */
#define LOG_METADATA_FLAG (1ULL << 4) /* a write of file system metadata (REQ_META) */

/* The mark dm-log-writes appends when the log is closed. */
#define LOG_WRITES_END_MARK "dm-log-writes-end"

/*
 * The marks rqdisk's log-writes filter sets when log/enable is written 0,
 * and once it is 1 again and every write submitted meanwhile has ended:
 * writes that completed in between are missing from the log.
 */
#define LOG_WRITES_GAP_MARK "rqdisk-log-disabled"
#define LOG_WRITES_GAP_END_MARK "rqdisk-log-enabled"

/*
 * The mark rqdisk's log-writes filter sets when a flush failed below: the
 * writes before it that no flush covered may be lost (a server that lost
 * its cache when its connection dropped, a disk that failed its cache),
 * though they are in the log and a later flush would call them durable.
 */
#define LOG_WRITES_FLUSH_FAILED_MARK "rqdisk-flush-failed"

struct log_write_super {
	uint64_t magic;
	uint64_t version;
	uint64_t nr_entries;
	uint32_t sectorsize;
} __attribute__((packed));

struct log_write_entry {
	uint64_t sector;
	uint64_t nr_sectors;
	uint64_t flags;
	uint64_t data_len;
} __attribute__((packed));

/* rqdisk's record in block 0 (every field little-endian, as the rest). */
#define LOG_WRITES_RQDISK_OFF 32
#define LOG_WRITES_RQDISK_MAGIC 0x574c6b7369647172ULL /* the bytes "rqdiskLW" */
#define LOG_RQDISK_ENDS (1u << 0)    /* whole, the log ends with LOG_WRITES_END_MARK */
#define LOG_RQDISK_STOPPED (1u << 1) /* logging stopped: writes after the last entry are not in it */

struct log_write_super_rqdisk {
	uint32_t flags; /* LOG_RQDISK_* */
	uint32_t error; /* LOG_RQDISK_STOPPED: the errno that stopped it */
};

/*
 * A super block or an entry to and from the start of the log block blk
 * (any alignment): the structs hold host-order values, the block
 * little-endian ones.  The filter encodes, rqdisk-crash decodes.
 */
void log_write_super_encode(void *blk, const struct log_write_super *s);
void log_write_super_decode(const void *blk, struct log_write_super *s);
/* rqdisk's record into block 0 of sectorsize bytes; decode: false when block 0 has none. */
void log_write_super_rqdisk_encode(void *blk, const struct log_write_super_rqdisk *r);
bool log_write_super_rqdisk_decode(const void *blk, struct log_write_super_rqdisk *r);
void log_write_entry_encode(void *blk, const struct log_write_entry *e);
void log_write_entry_decode(const void *blk, struct log_write_entry *e);

#endif
