/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log-writes-dump.c - a reader of dm-log-writes logs for the tests, written
 * from the format's description alone (not from rqdisk's header):
 *
 *   log-writes-dump LOG                  check the log, one line per entry:
 *                                        INDEX FLAGS SECTOR NR_SECTORS DATA
 *                                        (DATA: fnv1a-64 of the data, the mark's
 *                                        name, or -)
 *   log-writes-dump replay LOG IMAGE [N | @MARK]
 *                                        apply entries 0..N-1 (all; up to and with
 *                                        the first mark MARK) to IMAGE
 *
 * The format: block 0 (sectorsize bytes) holds the super block, little
 * endian: magic u64 0x6a736677736872, version u64 1, nr_entries u64,
 * sectorsize u32.  Then each entry: one block with sector, nr_sectors, flags,
 * data_len (u64 each; a mark's name of data_len bytes right after, the
 * rest of the block zero), then nr_sectors blocks of data unless the entry
 * is a discard.  Sectors count sectorsize blocks.  Exit 0, or 1 with a line
 * on stderr for a log that breaks the format.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F_FLUSH 1u
#define F_FUA 2u
#define F_DISCARD 4u
#define F_MARK 8u
#define F_META 16u

struct reader {
	int fd;
	uint64_t nr, ss, pos;
	unsigned char *blk;
};

static uint64_t le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static int bad(const char *fmt, const char *what, unsigned long long v)
{
	fprintf(stderr, "log-writes-dump: ");
	fprintf(stderr, fmt, what, v);
	fputc('\n', stderr);
	return 1;
}

static int read_at(struct reader *r, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(r->fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int open_log(struct reader *r, const char *path)
{
	unsigned char super[32];

	r->fd = open(path, O_RDONLY);
	if (r->fd < 0)
		return bad("%s: %llu", strerror(errno), 0);
	if (read_at(r, super, sizeof(super), 0))
		return bad("%s (%llu): short super block", path, 0);
	if (le(super, 8) != 0x6a736677736872ull)
		return bad("%s: bad magic %#llx", path, le(super, 8));
	if (le(super + 8, 8) != 1)
		return bad("%s: version %llu, not 1", path, le(super + 8, 8));
	r->nr = le(super + 16, 8);
	r->ss = le(super + 24, 4);
	if (r->ss < 512 || r->ss > 65536 || (r->ss & (r->ss - 1)))
		return bad("%s: sectorsize %llu", path, r->ss);
	r->blk = malloc(r->ss);
	if (!r->blk)
		return bad("%s%llu: out of memory", "", 0);
	r->pos = r->ss;
	return 0;
}

static uint64_t fnv1a(const unsigned char *p, size_t n, uint64_t h)
{
	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

static void flag_names(uint64_t f, char *buf, size_t len)
{
	static const char *const names[] = { "FLUSH", "FUA", "DISCARD", "MARK", "META" };
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < 5; i++)
		if (f & (1ull << i))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "|" : "",
						 names[i]);
	if (f >> 5)
		snprintf(buf + used, len - used, "%sUNKNOWN", used ? "|" : "");
	if (!buf[0])
		snprintf(buf, len, "WRITE");
}

/*
 * The entry at r->pos into *e (sector, nr, flags, data_len) and its mark
 * name; r->pos moves to its data.  0, or 1 for a broken entry.
 */
static int next_entry(struct reader *r, uint64_t i, uint64_t e[4], char *name)
{
	if (read_at(r, r->blk, r->ss, r->pos))
		return bad("entry %s%llu: past the end of the log", "", i);
	for (int k = 0; k < 4; k++)
		e[k] = le(r->blk + 8 * k, 8);
	name[0] = 0;
	if (e[2] & F_MARK) {
		if (e[3] == 0 || e[3] >= r->ss - 32)
			return bad("entry %s%llu: mark of a bad length", "", i);
		memcpy(name, r->blk + 32, e[3]);
		name[e[3]] = 0;
		if (strlen(name) != e[3])
			return bad("entry %s%llu: NUL in a mark's name", "", i);
	} else if (e[3]) {
		return bad("entry %s%llu: data_len set on an entry that is not a mark", "", i);
	}
	for (uint64_t k = 32 + ((e[2] & F_MARK) ? e[3] : 0); k < r->ss; k++)
		if (r->blk[k])
			return bad("entry %s%llu: its block is not zero past the entry", "", i);
	if (!e[2] && !e[1])
		return bad("entry %s%llu: a write of no sectors", "", i);
	r->pos += r->ss;
	return 0;
}

static uint64_t data_blocks(const uint64_t e[4])
{
	return (e[2] & F_DISCARD) ? 0 : e[1];
}

static int dump(struct reader *r)
{
	unsigned char *buf;
	char flags[64], name[65536];
	uint64_t e[4];

	buf = malloc(r->ss);
	if (!buf)
		return 1;
	printf("sectorsize %llu entries %llu\n", (unsigned long long)r->ss,
	       (unsigned long long)r->nr);
	for (uint64_t i = 0; i < r->nr; i++) {
		uint64_t h = 0xcbf29ce484222325ull;

		if (next_entry(r, i, e, name))
			return 1;
		for (uint64_t b = 0; b < data_blocks(e); b++) {
			if (read_at(r, buf, r->ss, r->pos))
				return bad("entry %s%llu: data past the end of the log", "", i);
			h = fnv1a(buf, r->ss, h);
			r->pos += r->ss;
		}
		flag_names(e[2], flags, sizeof(flags));
		printf("%llu %s %llu %llu ", (unsigned long long)i, flags,
		       (unsigned long long)e[0], (unsigned long long)e[1]);
		if (e[2] & F_MARK)
			printf("%s\n", name);
		else if (data_blocks(e))
			printf("%016llx\n", (unsigned long long)h);
		else
			printf("-\n");
	}
	free(buf);
	return 0;
}

/* Entries 0..limit-1, or up to and with the mark named mark, onto image. */
static int replay(struct reader *r, const char *image, uint64_t limit, const char *mark)
{
	int out = open(image, O_WRONLY);
	unsigned char *buf = calloc(1, r->ss);
	char name[65536];
	uint64_t e[4];

	if (out < 0 || !buf)
		return bad("%s: %s", image, (unsigned long long)errno);
	for (uint64_t i = 0; i < r->nr && i < limit; i++) {
		if (next_entry(r, i, e, name))
			return 1;
		for (uint64_t b = 0; b < e[1]; b++) {
			if (!(e[2] & F_DISCARD)) {
				if (read_at(r, buf, r->ss, r->pos))
					return bad("entry %s%llu: data past the end", "", i);
				r->pos += r->ss;
			} else {
				memset(buf, 0, r->ss); /* a discarded range reads zeros here */
			}
			if (pwrite(out, buf, r->ss, (off_t)((e[0] + b) * r->ss)) != (ssize_t)r->ss)
				return bad("%s: write: %llu", image, (unsigned long long)errno);
		}
		if (mark && (e[2] & F_MARK) && !strcmp(name, mark)) {
			mark = NULL;
			break;
		}
	}
	if (mark)
		return bad("no mark '%s'%.0llu", mark, 0);
	if (fsync(out) || close(out))
		return bad("%s: %llu", image, (unsigned long long)errno);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct reader r;

	if (argc == 2)
		return open_log(&r, argv[1]) || dump(&r);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "replay")) {
		const char *mark = argc == 5 && argv[4][0] == '@' ? argv[4] + 1 : NULL;
		uint64_t limit = argc == 5 && !mark ? strtoull(argv[4], NULL, 10) : UINT64_MAX;

		return open_log(&r, argv[2]) || replay(&r, argv[3], limit, mark);
	}
	fprintf(stderr, "usage: log-writes-dump LOG | replay LOG IMAGE [N | @MARK]\n");
	return 2;
}
