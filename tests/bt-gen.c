/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bt-gen.c - writes a blktrace trace from a text description, for the tests
 * of the trace tools.  Usage: bt-gen [-s] [-c CPU] FILE < DESCRIPTION
 *
 * One record a line, 1 us after the one before, sequence numbers from 1:
 *
 *   ACTION RWBS SECTOR+COUNT [SPLIT]
 *
 * ACTION is blkparse's letter (Q M F G I D C R X B), RWBS its column (F for
 * a flush first, then W, R, D or N, then F for FUA and S for sync), COUNT in
 * 512-byte sectors, SPLIT where an X record's second part starts.  Blank
 * lines and lines starting with # are skipped.  -s writes the other byte
 * order, as a host of the other endianness would; -c names CPU (default 0)
 * in every record, as the file NAME.blktrace.CPU of a trace holds.
 */
#include <byteswap.h>
#include <endian.h>
#include <inttypes.h>
#include <linux/blktrace_api.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define US 1000u
#define PID 1000 /* the same every run, so that two traces of one description compare */

static int action_of(char letter, uint32_t *action)
{
	static const char letters[] = "?QMFGSRDCPUTIXBA";
	const char *p = letter ? strchr(letters + 1, letter) : NULL;

	if (!p)
		return -1;
	*action = (uint32_t)(p - letters);
	return 0;
}

static int category_of(const char *rwbs, uint32_t *cat)
{
	const char *p = rwbs;

	*cat = 0;
	if (p[0] == 'F' && p[1]) {
		*cat |= BLK_TC_FLUSH;
		p++;
	}
	switch (*p++) {
	case 'W':
		*cat |= BLK_TC_WRITE;
		break;
	case 'R':
		*cat |= BLK_TC_READ;
		break;
	case 'D':
		*cat |= BLK_TC_WRITE | BLK_TC_DISCARD;
		break;
	case 'N':
		break;
	default:
		return -1;
	}
	if (*p == 'F') {
		*cat |= BLK_TC_FUA;
		p++;
	}
	if (*p == 'S') {
		*cat |= BLK_TC_SYNC;
		p++;
	}
	return *p ? -1 : 0;
}

static void swap_record(struct blk_io_trace *t)
{
	t->magic = bswap_32(t->magic);
	t->sequence = bswap_32(t->sequence);
	t->time = bswap_64(t->time);
	t->sector = bswap_64(t->sector);
	t->bytes = bswap_32(t->bytes);
	t->action = bswap_32(t->action);
	t->pid = bswap_32(t->pid);
	t->device = bswap_32(t->device);
	t->cpu = bswap_32(t->cpu);
	t->error = bswap_16(t->error);
	t->pdu_len = bswap_16(t->pdu_len);
}

/* One line into a record; its pdu (a split's sector) in *pdu. */
static int parse_line(const char *line, uint32_t seq, uint32_t cpu, struct blk_io_trace *t,
		      uint64_t *pdu)
{
	char act[4], rwbs[8];
	uint64_t sector, count, split;
	uint32_t action, cat;
	int n = sscanf(line, "%3s %7s %" SCNu64 "+%" SCNu64 " %" SCNu64, act, rwbs, &sector,
		       &count, &split);

	if (n < 4 || act[1] || action_of(act[0], &action) || category_of(rwbs, &cat) ||
	    count > UINT32_MAX >> 9 || (n == 5) != (action == __BLK_TA_SPLIT))
		return -1;
	*t = (struct blk_io_trace){
		.magic = BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION,
		.sequence = seq,
		.time = (uint64_t)seq * US,
		.sector = sector,
		.bytes = (uint32_t)(count << 9),
		.action = action | BLK_TC_ACT(cat),
		.pid = PID,
		.device = 240u << 20,
		.cpu = cpu,
	};
	if (n == 5) {
		*pdu = htobe64(split);
		t->pdu_len = sizeof(*pdu);
	}
	return 0;
}

int main(int argc, char **argv)
{
	bool swap = false;
	char line[256];
	uint32_t seq = 0, cpu = 0;
	unsigned long lineno = 0;
	FILE *out;
	int opt;

	while ((opt = getopt(argc, argv, "sc:")) != -1) {
		if (opt == 's')
			swap = true;
		else if (opt == 'c')
			cpu = (uint32_t)strtoul(optarg, NULL, 10);
		else
			break;
	}
	if (opt != -1 || optind != argc - 1) {
		fprintf(stderr, "usage: bt-gen [-s] [-c CPU] FILE < DESCRIPTION\n");
		return 2;
	}
	out = fopen(argv[argc - 1], "w");
	if (!out) {
		perror(argv[argc - 1]);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		struct blk_io_trace t;
		uint64_t pdu;
		size_t len;

		lineno++;
		if (line[strspn(line, " \t")] == '#' || strspn(line, " \t\n") == strlen(line))
			continue;
		if (parse_line(line, ++seq, cpu, &t, &pdu)) {
			fprintf(stderr, "bt-gen: line %lu: not ACTION RWBS SECTOR+COUNT [SPLIT]\n",
				lineno);
			return 1;
		}
		len = t.pdu_len;
		if (swap)
			swap_record(&t);
		if (fwrite(&t, sizeof(t), 1, out) != 1 || (len && fwrite(&pdu, len, 1, out) != 1))
			break;
	}
	if (ferror(out) | fclose(out)) {
		perror(argv[argc - 1]);
		return 1;
	}
	return 0;
}
