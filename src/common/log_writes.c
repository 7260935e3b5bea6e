/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_writes.c - the blocks of a dm-log-writes log (log_writes.h) encoded
 * and decoded, field by field, for the filter that writes logs and for
 * rqdisk-crash, which reads them.
 */
#include <endian.h>
#include <stddef.h>
#include <string.h>

#include "log_writes.h"

static void put64(unsigned char *blk, size_t off, uint64_t v)
{
	v = htole64(v);
	memcpy(blk + off, &v, sizeof(v));
}

static uint64_t get64(const unsigned char *blk, size_t off)
{
	uint64_t v;

	memcpy(&v, blk + off, sizeof(v));
	return le64toh(v);
}

void log_write_super_encode(void *blk, const struct log_write_super *s)
{
	uint32_t ss = htole32(s->sectorsize);

	put64(blk, offsetof(struct log_write_super, magic), s->magic);
	put64(blk, offsetof(struct log_write_super, version), s->version);
	put64(blk, offsetof(struct log_write_super, nr_entries), s->nr_entries);
	memcpy((unsigned char *)blk + offsetof(struct log_write_super, sectorsize), &ss,
	       sizeof(ss));
}

void log_write_super_decode(const void *blk, struct log_write_super *s)
{
	uint32_t ss;

	s->magic = get64(blk, offsetof(struct log_write_super, magic));
	s->version = get64(blk, offsetof(struct log_write_super, version));
	s->nr_entries = get64(blk, offsetof(struct log_write_super, nr_entries));
	memcpy(&ss, (const unsigned char *)blk + offsetof(struct log_write_super, sectorsize),
	       sizeof(ss));
	s->sectorsize = le32toh(ss);
}

static void put32(unsigned char *blk, size_t off, uint32_t v)
{
	v = htole32(v);
	memcpy(blk + off, &v, sizeof(v));
}

static uint32_t get32(const unsigned char *blk, size_t off)
{
	uint32_t v;

	memcpy(&v, blk + off, sizeof(v));
	return le32toh(v);
}

void log_write_super_rqdisk_encode(void *blk, const struct log_write_super_rqdisk *r)
{
	put64(blk, LOG_WRITES_RQDISK_OFF, LOG_WRITES_RQDISK_MAGIC);
	put32(blk, LOG_WRITES_RQDISK_OFF + 8, r->flags);
	put32(blk, LOG_WRITES_RQDISK_OFF + 12, r->error);
}

bool log_write_super_rqdisk_decode(const void *blk, struct log_write_super_rqdisk *r)
{
	if (get64(blk, LOG_WRITES_RQDISK_OFF) != LOG_WRITES_RQDISK_MAGIC)
		return false;
	r->flags = get32(blk, LOG_WRITES_RQDISK_OFF + 8);
	r->error = get32(blk, LOG_WRITES_RQDISK_OFF + 12);
	return true;
}

void log_write_entry_encode(void *blk, const struct log_write_entry *e)
{
	put64(blk, offsetof(struct log_write_entry, sector), e->sector);
	put64(blk, offsetof(struct log_write_entry, nr_sectors), e->nr_sectors);
	put64(blk, offsetof(struct log_write_entry, flags), e->flags);
	put64(blk, offsetof(struct log_write_entry, data_len), e->data_len);
}

void log_write_entry_decode(const void *blk, struct log_write_entry *e)
{
	e->sector = get64(blk, offsetof(struct log_write_entry, sector));
	e->nr_sectors = get64(blk, offsetof(struct log_write_entry, nr_sectors));
	e->flags = get64(blk, offsetof(struct log_write_entry, flags));
	e->data_len = get64(blk, offsetof(struct log_write_entry, data_len));
}
