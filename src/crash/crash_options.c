/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_options.c - rqdisk-crash's options: parsed, checked against each other, and its usage. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "crash_options.h"

#define MAX_JOBS 256

enum {
	OPT_AT = 256,
	OPT_DROP,
	OPT_SAMPLE,
	OPT_SEED,
	OPT_TORN,
	OPT_ATOMIC,
	OPT_STATE,
	OPT_VIA,
	OPT_TIMEOUT,
	OPT_PROGRESS,
	OPT_CSV,
	OPT_LOOP,
	OPT_PAST_GAPS,
	OPT_LIST,
	OPT_SHARD,
	OPT_NO_DEDUP,
	OPT_ONLY,
	OPT_EXCEPT,
};

static const struct option long_options[] = {
	{ "at", required_argument, NULL, OPT_AT },
	{ "drop", required_argument, NULL, OPT_DROP },
	{ "sample", required_argument, NULL, OPT_SAMPLE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "torn", no_argument, NULL, OPT_TORN },
	{ "atomic", required_argument, NULL, OPT_ATOMIC },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "output", required_argument, NULL, 'o' },
	{ "via", required_argument, NULL, OPT_VIA },
	{ "jobs", required_argument, NULL, 'j' },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "loop", no_argument, NULL, OPT_LOOP },
	{ "past-gaps", no_argument, NULL, OPT_PAST_GAPS },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "shard", required_argument, NULL, OPT_SHARD },
	{ "no-dedup", no_argument, NULL, OPT_NO_DEDUP },
	{ "only", required_argument, NULL, OPT_ONLY },
	{ "except", required_argument, NULL, OPT_EXCEPT },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS] BASE LOG -- CHECK [ARGS...]\n"
		"       " PROG " [OPTIONS] --state ID [-o FILE] BASE LOG [-- CHECK [ARGS...]]\n"
		"       " PROG " [OPTIONS] --list BASE LOG\n"
		"       " PROG " --order ORDER [--drop K] [--torn] [--state ID [-o DIR]]\n"
		"              BASE0 LOG0 BASE1 LOG1... -- CHECK [ARGS...]\n"
		"Build the states a power failure could leave of BASE after the writes of LOG\n"
		"(dm-log-writes' format) and run CHECK on each: {} in ARGS is the state's\n"
		"path, RQDISK_CRASH_STATE its ID, RQDISK_CRASH_MARKS the marks passed\n"
		"(NAME=COUNT ...); exit 0 means consistent.\n"
		"\n"
		"  --at flush|fua|mark:NAME|N  points: before each flush, after each FUA write,\n"
		"                        after each mark NAME, every N entries (default flush;\n"
		"                        repeatable); the end of the log always\n"
		"  --drop K              also every subset of up to K volatile writes lost\n"
		"  --sample N            also N random subsets lost per point (--seed S)\n"
		"  --seed S              the seed of --sample (default 1)\n"
		"  --torn                also each volatile write torn after 1, n/2, n-1 units\n"
		"  --atomic BYTES        the atomic unit of --torn (default: the log's sectorsize)\n"
		"  --past-gaps           also the points past a gap in the log (logging was off)\n"
		"  --only RANGES         only writes touching these sectors may be lost or torn:\n"
		"                        S-E/S-E/S (512-byte sectors, inclusive), or @FILE of\n"
		"                        them (what rqdisk-extents prints); repeatable\n"
		"  --except RANGES       only writes touching other sectors may be lost or torn\n"
		"  --state ID            that state alone; -o FILE writes it as a whole image\n"
		"  -o, --output FILE     with --state: where the image goes\n"
		"  --via fuse|copy|auto  states as files of a FUSE mount, or as copies (auto)\n"
		"  -j, --jobs N          checkers at a time (default 1)\n"
		"  --timeout SEC         a checker running longer fails (default 60)\n"
		"  --loop                {} is the state on a loop device of its own\n"
		"  --progress            a progress line on stderr (default: when it is a tty)\n"
		"  --csv FILE            one row per state: id,class,result,exit,seconds,same_as\n"
		"  --list                print the IDs of the run's states, one a line; no check\n"
		"  --order ORDER         several disks' logs (rqdisk --disk, log-writes order=):\n"
		"                        their joint states, RQDISK_CRASH_IMAGE0... each disk's;\n"
		"                        --state ID -o DIR writes DIR/disk0...\n"
		"  --shard K/N           only the K-th of N shares of the states (K from 1)\n"
		"  --no-dedup            check each state; by default a state of the same bytes\n"
		"                        and marks passed as an earlier one takes its verdict\n"
		"  -h, --help            show this help\n"
		"  -V, --version         show the version\n"
		"\n"
		"Exit status: 0 every state consistent, 1 some failed, 2 bad usage or input,\n"
		"3 none failed but not all was checked: points past a gap in the log (also\n"
		"with --past-gaps: their states miss writes), or writes after the end of a\n"
		"log that was cut short.\n");
}

static int parse_at(struct options *o, const char *s)
{
	unsigned long n;

	if (!strcmp(s, "flush")) {
		o->at.kinds |= AT_FLUSH;
	} else if (!strcmp(s, "fua")) {
		o->at.kinds |= AT_FUA;
	} else if (!strcmp(s, "mark:")) {
		cli_usage_error(PROG, "--at mark: needs a NAME", NULL);
		return -EINVAL;
	} else if (!strncmp(s, "mark:", 5)) {
		char **m = realloc(o->at.marks, (o->at.nr_marks + 1) * sizeof(*m));
		size_t *l = realloc(o->at.mark_lens, (o->at.nr_marks + 1) * sizeof(*l));

		if (m)
			o->at.marks = m;
		if (l)
			o->at.mark_lens = l;
		if (!m || !l)
			return -ENOMEM;
		m[o->at.nr_marks] = (char *)s + 5;
		l[o->at.nr_marks++] = strlen(s + 5);
	} else if (s[0] >= '0' && s[0] <= '9') {
		if (cli_number(PROG, "--at", s, 1, 1ul << 40, &n))
			return -EINVAL;
		o->at.every = n;
	} else {
		cli_usage_error(PROG, "--at takes flush, fua, mark:NAME or a number, not", s);
		return -EINVAL;
	}
	return 0;
}

static int parse_via(struct options *o, const char *s)
{
	if (!strcmp(s, "fuse"))
		o->via = VIA_FUSE;
	else if (!strcmp(s, "copy"))
		o->via = VIA_COPY;
	else if (!strcmp(s, "auto"))
		o->via = VIA_AUTO;
	else {
		cli_usage_error(PROG, "--via takes fuse, copy or auto, not", s);
		return -EINVAL;
	}
	return 0;
}

static int parse_aim(struct options *o, bool except, const char *s)
{
	char why[512];
	int ret = crash_aim_add(&o->aim, except, s, why, sizeof(why));

	if (ret == -EINVAL)
		fprintf(stderr, PROG ": %s\n", why);
	else if (ret)
		fprintf(stderr, PROG ": out of memory\n");
	return ret;
}

static int parse_shard(struct options *o, const char *s)
{
	char why[128];

	if (!crash_shard_parse(s, &o->shard, why, sizeof(why)))
		return 0;
	cli_usage_error(PROG, why, s);
	return -EINVAL;
}

/* One option: 0, 1 when main should exit 0 (help, version), <0 bad usage (said). */
static int parse_one(struct options *o, int opt, const char *arg)
{
	unsigned long n;
	int ret = 0;

	switch (opt) {
	case OPT_AT:
		return parse_at(o, arg);
	case OPT_DROP:
		ret = cli_number(PROG, "--drop", arg, 0, 64, &n);
		o->gen.drop = (unsigned int)n;
		break;
	case OPT_SAMPLE:
		ret = cli_number(PROG, "--sample", arg, 0, 1000000, &n);
		o->gen.sample = (unsigned int)n;
		break;
	case OPT_SEED:
		ret = cli_number(PROG, "--seed", arg, 0, ~0ul, &n);
		o->gen.seed = n;
		break;
	case OPT_TORN:
		o->gen.torn = true;
		break;
	case OPT_ATOMIC:
		ret = cli_number(PROG, "--atomic", arg, 512, 65536, &n);
		if (!ret && (n & (n - 1))) {
			cli_usage_error(PROG, "--atomic must be a power of two, not", arg);
			ret = -EINVAL;
		}
		o->gen.atomic = (uint32_t)n;
		o->atomic_set = true;
		break;
	case OPT_STATE:
		o->state = arg;
		break;
	case 'o':
		o->output = arg;
		break;
	case OPT_VIA:
		return parse_via(o, arg);
	case 'j':
		ret = cli_number(PROG, "--jobs", arg, 1, MAX_JOBS, &n);
		o->jobs = (unsigned int)n;
		break;
	case OPT_TIMEOUT:
		ret = cli_number(PROG, "--timeout", arg, 1, 1u << 24, &n);
		o->timeout_s = (unsigned int)n;
		break;
	case OPT_PROGRESS:
		o->progress = true;
		break;
	case OPT_LOOP:
		o->loop = true;
		break;
	case OPT_PAST_GAPS:
		o->gen.past_gaps = true;
		break;
	case OPT_CSV:
		o->csv = arg;
		break;
	case OPT_LIST:
		o->list = true;
		break;
	case OPT_SHARD:
		return parse_shard(o, arg);
	case OPT_NO_DEDUP:
		o->no_dedup = true;
		break;
	case OPT_ONLY:
	case OPT_EXCEPT:
		return parse_aim(o, opt == OPT_EXCEPT, arg);
	case 'h':
	case 'V':
		return cli_help_version(PROG, opt, usage);
	default:
		return -EINVAL;
	}
	return ret;
}

/* --state ID: its syntax, before any file is read; -EINVAL (said) when it is wrong. */
static int check_state_syntax(const char *s)
{
	struct crash_id id;
	char why[512];
	int ret = crash_id_parse(s, &id, why, sizeof(why));

	if (ret)
		fprintf(stderr, PROG ": %s\n", why);
	crash_id_free(&id);
	return ret;
}

/* No CHECK where one is needed (all but --list and --state -o): said. */
bool check_missing(const struct options *o)
{
	if (o->check || o->list || (o->state && o->output))
		return false;
	cli_usage_error(PROG, "a CHECK is needed (after --)", NULL);
	return true;
}

/* Options before "--", CHECK after it.  0, 1 (exit 0) or <0 (exit 2; said). */
int parse_options(int argc, char **argv, struct options *o)
{
	int end = 1, opt, ret;

	while (end < argc && strcmp(argv[end], "--"))
		end++;
	if (end < argc && end + 1 < argc)
		o->check = argv + end + 1;
	else if (end < argc) {
		cli_usage_error(PROG, "a CHECK is needed after --", NULL);
		return -EINVAL;
	}
	while ((opt = cli_getopt(PROG, end, argv, ":j:o:hV", long_options)) != -1) {
		ret = parse_one(o, opt, optarg);
		if (ret)
			return ret;
	}
	if (end - optind != 2) {
		cli_usage_error(PROG, end - optind < 2 ? "BASE and LOG are needed" :
				"only BASE and LOG before --, not", end - optind < 2 ? NULL :
				argv[optind + 2]);
		return -EINVAL;
	}
	o->base = argv[optind];
	o->log = argv[optind + 1];
	if (o->state && (o->list || o->shard.n || o->aim.given.nr)) {
		cli_usage_error(PROG, o->list ? "--list does not go with --state" :
				o->shard.n ? "--shard does not go with --state" :
				"--only and --except do not go with --state (its ID says what is lost)",
				NULL);
		return -EINVAL;
	}
	/*
	 * A wrong ID is what to fix first: its syntax is checked here, and
	 * whether the log has that state before a missing CHECK is said (main).
	 */
	if (o->state && check_state_syntax(o->state))
		return -EINVAL;
	if (!o->state && check_missing(o))
		return -EINVAL;
	if (o->output && !o->state) {
		cli_usage_error(PROG, "-o needs --state", NULL);
		return -EINVAL;
	}
	if (!o->at.kinds && !o->at.nr_marks && !o->at.every) {
		o->at.kinds = AT_FLUSH;
		o->at.flush_by_default = true;
	}
	return 0;
}
