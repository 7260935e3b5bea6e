/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash-gen-log.c - writes a dm-log-writes log from a small script, for
 * rqdisk-crash's tests; and, with --expect, the image a state ID names,
 * by a naive replay of the same script onto a copy of BASE.
 *
 *   crash-gen-log [-s SECTORSIZE] < SCRIPT > LOG
 *   crash-gen-log [-s SECTORSIZE] --expect ID BASE < SCRIPT > IMAGE
 *
 * SCRIPT, one command a line ('#' starts a comment); sectors count
 * SECTORSIZE blocks, as in the log:
 *
 *   write SECTOR COUNT PATTERN [fua] [flush] [meta]
 *                        block i of the write holds bytes (PATTERN + i) & 0xff
 *   writefile SECTOR FILE
 *                        FILE's bytes (zero-padded to whole blocks)
 *   flush                an empty flush
 *   discard SECTOR COUNT
 *   mark NAME
 *   rqdisk [stopped ERRNO]
 *                        the super block has rqdisk's record: the log ends
 *                        in an end mark when whole; stopped: logging stopped
 *                        with ERRNO (log_writes.h)
 *
 * Written from the format in src/common/log_writes.h alone: it shares no
 * code with rqdisk-crash, so that each checks the other.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_writes.h"

struct cmd {
	uint64_t sector, count, flags;
	int pattern;
	uint8_t *data; /* writefile's, or NULL */
	char name[256];
};

static struct cmd *cmds;
static size_t nr_cmds;
static uint32_t ss = 512;
static bool rqdisk_record;
static uint32_t rqdisk_flags, rqdisk_error;

static void die(const char *what)
{
	fprintf(stderr, "crash-gen-log: %s\n", what);
	exit(2);
}

static void add(const struct cmd *c)
{
	cmds = realloc(cmds, (nr_cmds + 1) * sizeof(*cmds));
	if (!cmds)
		die("out of memory");
	cmds[nr_cmds++] = *c;
}

static void parse_line(char *line)
{
	struct cmd c = { 0 };
	char *word = strtok(line, " \t\n");
	char *w;

	if (!word || word[0] == '#')
		return;
	if (!strcmp(word, "rqdisk")) {
		w = strtok(NULL, " \t\n");
		rqdisk_record = true;
		rqdisk_flags = LOG_RQDISK_ENDS;
		if (w && !strcmp(w, "stopped") && (w = strtok(NULL, " \t\n"))) {
			rqdisk_flags |= LOG_RQDISK_STOPPED;
			rqdisk_error = (uint32_t)strtoul(w, NULL, 0);
		} else if (w) {
			die("rqdisk: only 'stopped ERRNO' may follow");
		}
		return;
	} else if (!strcmp(word, "flush")) {
		c.flags = LOG_FLUSH_FLAG;
	} else if (!strcmp(word, "mark")) {
		w = strtok(NULL, "\n");
		c.flags = LOG_MARK_FLAG;
		snprintf(c.name, sizeof(c.name), "%s", w ? w : "");
	} else if (!strcmp(word, "writefile")) {
		char *sec = strtok(NULL, " \t\n"), *path = strtok(NULL, " \t\n");
		FILE *f = path ? fopen(path, "rb") : NULL;
		long size;

		if (!sec || !f || fseek(f, 0, SEEK_END) || (size = ftell(f)) <= 0)
			die("writefile needs SECTOR and a FILE that is not empty");
		rewind(f);
		c.sector = strtoull(sec, NULL, 0);
		c.count = ((uint64_t)size + ss - 1) / ss;
		c.data = calloc(c.count, ss);
		if (!c.data || fread(c.data, 1, (size_t)size, f) != (size_t)size)
			die("writefile: cannot read the FILE");
		fclose(f);
	} else if (!strcmp(word, "write") || !strcmp(word, "discard")) {
		char *s = strtok(NULL, " \t\n"), *n = strtok(NULL, " \t\n");

		if (!s || !n)
			die("write and discard need SECTOR COUNT");
		c.sector = strtoull(s, NULL, 0);
		c.count = strtoull(n, NULL, 0);
		if (!strcmp(word, "discard")) {
			c.flags = LOG_DISCARD_FLAG;
		} else {
			w = strtok(NULL, " \t\n");
			if (!w)
				die("write needs a PATTERN");
			c.pattern = (int)strtol(w, NULL, 0);
			while ((w = strtok(NULL, " \t\n"))) {
				if (!strcmp(w, "fua"))
					c.flags |= LOG_FUA_FLAG;
				else if (!strcmp(w, "flush"))
					c.flags |= LOG_FLUSH_FLAG;
				else if (!strcmp(w, "meta"))
					c.flags |= LOG_METADATA_FLAG;
				else
					die("write: unknown word");
			}
		}
	} else {
		die("unknown command");
	}
	add(&c);
}

static void put(const void *p, size_t n)
{
	if (fwrite(p, 1, n, stdout) != n)
		die("cannot write the log");
}

static void fill(uint8_t *buf, const struct cmd *c, uint64_t block)
{
	if (c->data)
		memcpy(buf, c->data + block * ss, ss);
	else
		memset(buf, (c->pattern + (int)block) & 0xff, ss);
}

static void write_log(void)
{
	struct log_write_super super = {
		.magic = htole64(LOG_WRITES_MAGIC),
		.version = htole64(LOG_WRITES_VERSION),
		.nr_entries = htole64(nr_cmds),
		.sectorsize = htole32(ss),
	};
	uint8_t *buf = malloc(ss);

	if (!buf)
		die("out of memory");
	memset(buf, 0, ss);
	memcpy(buf, &super, sizeof(super));
	if (rqdisk_record) {
		uint64_t magic = htole64(LOG_WRITES_RQDISK_MAGIC);
		uint32_t flags = htole32(rqdisk_flags), error = htole32(rqdisk_error);

		memcpy(buf + LOG_WRITES_RQDISK_OFF, &magic, sizeof(magic));
		memcpy(buf + LOG_WRITES_RQDISK_OFF + 8, &flags, sizeof(flags));
		memcpy(buf + LOG_WRITES_RQDISK_OFF + 12, &error, sizeof(error));
	}
	put(buf, ss);
	for (size_t i = 0; i < nr_cmds; i++) {
		const struct cmd *c = &cmds[i];
		struct log_write_entry e = {
			.sector = htole64(c->sector),
			.nr_sectors = htole64(c->count),
			.flags = htole64(c->flags),
		};
		size_t len = strlen(c->name);

		memset(buf, 0, ss);
		if (c->flags & LOG_MARK_FLAG)
			e.data_len = htole64(len);
		memcpy(buf, &e, sizeof(e));
		memcpy(buf + sizeof(e), c->name, len);
		put(buf, ss);
		if (c->flags & (LOG_DISCARD_FLAG | LOG_MARK_FLAG))
			continue;
		for (uint64_t b = 0; b < c->count; b++) {
			fill(buf, c, b);
			put(buf, ss);
		}
	}
	free(buf);
}

/* ------------------------------------------------------------ --expect */

static unsigned long long number(const char **p)
{
	char *end;
	unsigned long long v = strtoull(*p, &end, 10);

	if (end == *p)
		die("--expect: a number is missing in the ID");
	*p = end;
	return v;
}

static size_t nth(uint64_t flag, unsigned long long k)
{
	for (size_t i = 0; i < nr_cmds; i++)
		if ((cmds[i].flags & flag) && !--k)
			return i;
	die("--expect: no such point");
	return 0;
}

static size_t mark_pos(const char **p)
{
	char name[256];
	size_t n = 0;
	unsigned long long k = 1;

	while (**p && **p != '+' && **p != '#' && n < sizeof(name) - 1) {
		unsigned int x;

		if (**p == '%' && sscanf(*p + 1, "%2X", &x) == 1) {
			name[n++] = (char)x;
			*p += 3;
		} else {
			name[n++] = *(*p)++;
		}
	}
	name[n] = '\0';
	if (**p == '#') {
		++*p;
		k = number(p);
	}
	for (size_t i = 0; i < nr_cmds; i++)
		if ((cmds[i].flags & LOG_MARK_FLAG) && !strcmp(cmds[i].name, name) && !--k)
			return i + 1;
	die("--expect: no such mark");
	return 0;
}

static void expect(const char *id, const char *base)
{
	FILE *f = fopen(base, "rb");
	uint8_t *img, *blk = malloc(ss);
	bool drop[4096] = { 0 };
	long long torn_e = -1;
	uint64_t torn_a = 1, torn_k = 0;
	size_t pos, size;
	const char *p = id;

	if (!f || fseek(f, 0, SEEK_END))
		die("--expect: cannot open BASE");
	size = (size_t)ftell(f);
	rewind(f);
	img = malloc(size + 1);
	if (!img || !blk || fread(img, 1, size, f) != size)
		die("--expect: cannot read BASE");
	fclose(f);
	if (!strncmp(p, "flush:", 6) && (p += 6))
		pos = nth(LOG_FLUSH_FLAG, number(&p));
	else if (!strncmp(p, "fua:", 4) && (p += 4))
		pos = nth(LOG_FUA_FLAG, number(&p)) + 1;
	else if (!strncmp(p, "entry:", 6) && (p += 6))
		pos = number(&p);
	else if (!strncmp(p, "mark:", 5) && (p += 5))
		pos = mark_pos(&p);
	else if (!strncmp(p, "end", 3) && (p += 3))
		pos = nr_cmds;
	else
		die("--expect: bad ID");
	if (!strncmp(p, "+drop:", 6)) {
		p += 5;
		do {
			p++;
			unsigned long long d = number(&p);

			if (d >= 4096)
				die("--expect: drop index too large");
			drop[d] = true;
		} while (*p == ',');
	}
	if (!strncmp(p, "+torn:", 6)) {
		unsigned long long a, k;

		p += 6;
		torn_e = (long long)number(&p);
		p++;
		a = number(&p);
		p++;
		k = number(&p);
		/* the first k of the disk's units of a bytes that the write touches */
		torn_a = a;
		torn_k = k;
	}
	for (size_t i = 0; i < pos && i < nr_cmds; i++) {
		const struct cmd *c = &cmds[i];
		uint64_t off = c->sector * ss, len = c->count * ss;

		if ((i < 4096 && drop[i]) || (c->flags & LOG_MARK_FLAG))
			continue;
		if ((long long)i == torn_e && off / torn_a * torn_a + torn_k * torn_a - off < len)
			len = off / torn_a * torn_a + torn_k * torn_a - off;
		if (off + len > size)
			die("--expect: a write past BASE");
		if (c->flags & LOG_DISCARD_FLAG) {
			memset(img + off, 0, len);
			continue;
		}
		for (uint64_t b = 0; b * ss < len; b++) {
			uint64_t n = len - b * ss < ss ? len - b * ss : ss;

			fill(blk, c, b);
			memcpy(img + off + b * ss, blk, n);
		}
	}
	put(img, size);
	free(img);
	free(blk);
}

int main(int argc, char **argv)
{
	char line[1024];
	const char *id = NULL, *base = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			ss = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--expect") && i + 2 < argc) {
			id = argv[++i];
			base = argv[++i];
		} else
			die("usage: crash-gen-log [-s SECTORSIZE] [--expect ID BASE] < SCRIPT");
	}
	if (ss < 512 || ss > 65536)
		die("-s: 512 to 65536");
	while (fgets(line, sizeof(line), stdin))
		parse_line(line);
	if (id)
		expect(id, base);
	else
		write_log();
	return fflush(stdout) ? 2 : 0;
}
