/* SPDX-License-Identifier: BSD-3-Clause */
/* replay_main.c - rqdisk-replay: a trace through every elevator on a virtual clock. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "device.h"
#include "model.h"
#include "replay.h"
#include "replay_mq.h"

#define PROG "rqdisk-replay"
#define MAX_ELEVATORS 64

/* The filters of the stack, top first: every --filter, and --model's where it stood. */
struct replay_stack_opts {
	const char *filters[DEV_MAX_LAYERS]; /* --filter, in the order given */
	unsigned int nr_filters;
	const char *model;     /* the last --model, or NULL */
	unsigned int model_at; /* --filter options before it */
	bool model_filter;     /* a --filter model:... stands for --model */
	char model_spec[DEV_SPEC_MAX];
	const char *specs[DEV_MAX_LAYERS]; /* the whole stack, what replay_run is given */
};

struct replay_options {
	struct replay_config cfg;
	struct replay_stack_opts stack;
	const char *elevators;
	const char *latencies;
	const char *trace;
	const char *queue_mode; /* --queue-mode as given, or NULL */
	bool csv;
	bool quiet;
};

enum {
	OPT_CSV = 256,
	OPT_LATENCIES,
	OPT_CAPACITY,
	OPT_NR_REQUESTS,
	OPT_MAX_SECTORS,
	OPT_FILTER,
	OPT_QUEUE_MODE,
	OPT_HW_QUEUES,
	OPT_HW_QUEUE_DEPTH,
};

static const struct option long_options[] = {
	{ "elevator", required_argument, NULL, 'e' },
	{ "model", required_argument, NULL, 'm' },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "depth", required_argument, NULL, 'd' },
	{ "capacity", required_argument, NULL, OPT_CAPACITY },
	{ "nr-requests", required_argument, NULL, OPT_NR_REQUESTS },
	{ "max-sectors", required_argument, NULL, OPT_MAX_SECTORS },
	{ "queue-mode", required_argument, NULL, OPT_QUEUE_MODE },
	{ "hw-queues", required_argument, NULL, OPT_HW_QUEUES },
	{ "hw-queue-depth", required_argument, NULL, OPT_HW_QUEUE_DEPTH },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "latencies", required_argument, NULL, OPT_LATENCIES },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

#define USAGE_INDENT 26 /* where an option's text starts */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rqdisk-replay [OPTIONS] TRACE\n"
		"Replay TRACE (blktrace's NAME.blktrace.N files, or a fio iolog v2/v3)\n"
		"through the request queue, each elevator and a device model, on a\n"
		"virtual clock; print one row of numbers per elevator.\n"
		"\n"
		"  -e, --elevator LIST     elevators, comma-separated, or all (the default):");
	cli_usage_list(f, USAGE_INDENT, USAGE_INDENT + 49, "", elevator_builtin_names(), NULL,
		       "none");
	fprintf(f,
		"  -m, --model SPEC        none, hdd[:KEY=VALUE,...] or ssd[:...] (default hdd)\n"
		"      --filter SPEC       NAME[:ARGS]: a filter of the device, top first,\n"
		"                          repeated for a stack:");
	cli_usage_list(f, USAGE_INDENT, USAGE_INDENT + 21, "", dev_filter_names(), NULL,
		       "each with its ARGS in rqdisk-NAME-filter(8); one that needs the data "
		       "refuses, as the replay moves none");
	fprintf(f,
		"  -d, --depth N           keep N I/Os outstanding instead of the trace's times\n"
		"      --capacity SIZE     disk size (K, M, G, T; default: the trace's extent)\n"
		"      --nr-requests N     requests the queue lets out at once (default 128)\n"
		"      --max-sectors N     512-byte sectors per request (default 255)\n"
		"      --queue-mode MODE   rq (default): the 2.6 request queue; mq:\n"
		"                          software queues onto hardware queues\n"
		"      --hw-queues N       mq (implied): N hardware queues (default 1);\n"
		"                          an I/O's CPU modulo N picks its queue\n"
		"      --hw-queue-depth N  mq (implied): driver tags per hardware queue\n"
		"                          (default 64)\n"
		"      --csv               comma-separated values\n"
		"      --latencies FILE    every I/O's latency: elevator,read|write,ms\n"
		"  -q, --quiet             no progress line\n"
		"  -h, --help              show this help\n"
		"  -V, --version           show the version\n");
}

static int parse_number(const char *opt, const char *s, unsigned long max, unsigned long *out)
{
	return cli_number(PROG, opt, s, 1, max, out);
}

/* rqdisk's own size syntax (cli.c), in whole sectors. */
static int parse_capacity(const char *s, sector_t *out)
{
	uint64_t bytes;

	if (parse_size(s, &bytes) || !bytes || bytes % SECTOR_SIZE) {
		fprintf(stderr, PROG ": --capacity: '%s' is not a size in whole sectors\n",
			s);
		return -EINVAL;
	}
	*out = bytes >> SECTOR_SHIFT;
	return 0;
}

/* A --filter checked on its own (the whole stack is, once the trace's size is known). */
static int parse_filter(const char *spec, struct replay_stack_opts *so)
{
	char why[256];

	if (so->nr_filters == DEV_MAX_LAYERS - 1) {
		fprintf(stderr, PROG ": --filter: more than %d filters\n", DEV_MAX_LAYERS - 1);
		return -EINVAL;
	}
	if (dev_check_filter(spec, why, sizeof(why))) {
		fprintf(stderr, PROG ": --filter: %s\n", why);
		return -EINVAL;
	}
	if (strcspn(spec, ":") == strlen("model") && !strncmp(spec, "model", strlen("model")))
		so->model_filter = true;
	so->filters[so->nr_filters++] = spec;
	return 0;
}

static int parse_queue_mode(const char *arg, struct replay_options *o)
{
	if (strcmp(arg, "rq") && strcmp(arg, "mq")) {
		fprintf(stderr, PROG ": --queue-mode: '%s' is not rq or mq\n", arg);
		return -EINVAL;
	}
	o->queue_mode = arg;
	return 0;
}

/*
 * --queue-mode against --hw-queues and --hw-queue-depth, as rqdisk takes
 * them, but that either implies mq here: the multi-queue queue with
 * cfg.hw_queues hardware queues (1 unless given), or the 2.6 queue (0).
 */
static int check_queue_mode(struct replay_options *o)
{
	bool mq_opts = o->cfg.hw_queues || o->cfg.hw_queue_depth;

	if (o->queue_mode && !strcmp(o->queue_mode, "rq") && mq_opts) {
		fprintf(stderr, PROG ": %s is for --queue-mode=mq\n",
			o->cfg.hw_queues ? "--hw-queues" : "--hw-queue-depth");
		return -EINVAL;
	}
	if ((o->queue_mode && !strcmp(o->queue_mode, "mq")) || mq_opts) {
		if (!o->cfg.hw_queues)
			o->cfg.hw_queues = 1;
		if (!o->cfg.hw_queue_depth)
			o->cfg.hw_queue_depth = REPLAY_DEF_HW_QUEUE_DEPTH;
	}
	return 0;
}

static int parse_one(int opt, const char *arg, struct replay_options *o)
{
	unsigned long v;
	int ret = 0;

	switch (opt) {
	case 'e': o->elevators = arg; break;
	case 'm':
		o->stack.model = arg;
		o->stack.model_at = o->stack.nr_filters;
		break;
	case OPT_FILTER: ret = parse_filter(arg, &o->stack); break;
	case 'q': o->quiet = true; break;
	case OPT_CSV: o->csv = true; break;
	case OPT_LATENCIES: o->latencies = arg; break;
	case OPT_CAPACITY: ret = parse_capacity(arg, &o->cfg.capacity); break;
	case 'd':
		ret = parse_number("--depth", arg, 65536, &v);
		o->cfg.depth = (unsigned int)v;
		break;
	case OPT_NR_REQUESTS:
		ret = parse_number("--nr-requests", arg, 65536, &v);
		o->cfg.limits.nr_requests = (unsigned int)v;
		break;
	case OPT_QUEUE_MODE:
		ret = parse_queue_mode(arg, o);
		break;
	case OPT_HW_QUEUES:
		ret = parse_number("--hw-queues", arg, REPLAY_MAX_HW_QUEUES, &v);
		o->cfg.hw_queues = (unsigned int)v;
		break;
	case OPT_HW_QUEUE_DEPTH:
		ret = parse_number("--hw-queue-depth", arg, REPLAY_MAX_HW_QUEUE_DEPTH, &v);
		o->cfg.hw_queue_depth = (unsigned int)v;
		break;
	default: /* OPT_MAX_SECTORS */
		ret = parse_number("--max-sectors", arg, UINT_MAX >> 1, &v);
		o->cfg.limits.max_sectors = (unsigned int)v;
		if (o->cfg.limits.max_hw_sectors < o->cfg.limits.max_sectors)
			o->cfg.limits.max_hw_sectors = o->cfg.limits.max_sectors;
		break;
	}
	return ret;
}

/* 0: go on; 1: exit 0 (help, version); -1: exit 2. */
static int parse_options(int argc, char **argv, struct replay_options *o)
{
	int opt;

	memset(o, 0, sizeof(*o));
	o->elevators = "all";
	blk_set_default_limits(&o->cfg.limits);
	while ((opt = cli_getopt(PROG, argc, argv, ":e:m:d:qhV", long_options)) != -1) {
		if (cli_help_version(PROG, opt, usage))
			return 1;
		if (opt == '?')
			return -1;
		if (parse_one(opt, optarg, o))
			return -1;
	}
	if (check_queue_mode(o))
		return -1;
	o->trace = cli_one_operand(PROG, argc, argv, "TRACE");
	return o->trace ? 0 : -1;
}

/* On the multi-queue queue, each elevator of names it can run, or a line saying why not. */
static int check_mq_elevators(const struct replay_options *o, const char **names)
{
	char why[512];

	for (size_t i = 0; o->cfg.hw_queues && names[i]; i++) {
		if (replay_mq_check_elevator(names[i], why, sizeof(why))) {
			fprintf(stderr, PROG ": %s\n", why);
			return -EINVAL;
		}
	}
	return 0;
}

/* "all", or the names given, each one checked before anything runs. */
static int elevator_list(const char *spec, char *buf, size_t len, const char **names)
{
	char why[512];
	size_t n = 0;

	if (!strcmp(spec, "all")) {
		for (const char *const *e = elevator_names(); *e && n < MAX_ELEVATORS; e++)
			names[n++] = *e;
		names[n] = NULL;
		return 0;
	}
	snprintf(buf, len, "%s", spec);
	for (char *save, *e = strtok_r(buf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		if (n == MAX_ELEVATORS || (strcmp(e, "none") && !elevator_get(e, why, sizeof(why)))) {
			fprintf(stderr, PROG ": %s\n",
				n == MAX_ELEVATORS ? "too many elevators" : why);
			return -EINVAL;
		}
		names[n++] = e;
	}
	names[n] = NULL;
	return n ? 0 : -EINVAL;
}

static void show_progress(void *arg, size_t done, size_t total)
{
	fprintf(stderr, "\r" PROG ": %s %3zu%%", (const char *)arg, done * 100 / total);
}

/*
 * The stack, top first: the --filter options in their order, with --model's
 * filter where --model stood among them.  With neither --model nor a
 * --filter model:..., it is as if --model hdd came last: the disk below
 * the filters.  --model none adds none.
 */
static int build_stack(struct replay_options *o)
{
	struct replay_stack_opts *so = &o->stack;
	const char *model = so->model ? so->model : so->model_filter ? "none" : "hdd";
	unsigned int at = so->model ? so->model_at : so->nr_filters, nr = 0;
	bool with_model = strcmp(model, "none") != 0;

	if (with_model && so->nr_filters == DEV_MAX_LAYERS - 1) {
		fprintf(stderr, PROG ": --filter: more than %d filters with --model's\n",
			DEV_MAX_LAYERS - 1);
		return -EINVAL;
	}
	if (with_model && (size_t)snprintf(so->model_spec, sizeof(so->model_spec), "model:%s",
					   model) >= sizeof(so->model_spec)) {
		fprintf(stderr, PROG ": --model: longer than %d bytes\n", DEV_SPEC_MAX - 7);
		return -EINVAL;
	}
	for (unsigned int i = 0; i <= so->nr_filters; i++) {
		if (i == at && with_model)
			so->specs[nr++] = so->model_spec;
		if (i < so->nr_filters)
			so->specs[nr++] = so->filters[i];
	}
	o->cfg.model = NULL;
	o->cfg.filters = so->specs;
	o->cfg.nr_filters = nr;
	return 0;
}

/* The model alone, as --model refused it before there were filters. */
static int check_model_spec(const struct replay_options *o, sector_t capacity)
{
	struct disk_model *m;
	char why[256];

	if (!o->stack.model)
		return 0;
	if (disk_model_new(o->stack.model, capacity, &m, why, sizeof(why))) {
		fprintf(stderr, PROG ": --model: %s\n", why);
		return -EINVAL;
	}
	disk_model_free(m);
	return 0;
}

/* "model hdd rpm=..." (or "model none"), then the whole stack if it is more than that. */
static void describe_device(const struct dev_stack *s, char *buf, size_t len)
{
	const struct disk_model *model = s->limits.model;
	int n = snprintf(buf, len, "model ");

	if (n < 0 || (size_t)n >= len)
		return;
	if (model)
		n += disk_model_describe(model, buf + n, len - (size_t)n);
	else
		n += snprintf(buf + n, len - (size_t)n, "none");
	if (n < 0 || (size_t)n >= len || s->nr_layers <= (model ? 2u : 1u))
		return;
	n += snprintf(buf + n, len - (size_t)n, "; device ");
	if (n > 0 && (size_t)n < len)
		dev_stack_describe(s, buf + n, len - (size_t)n);
}

/* Nothing for the 2.6 queue, or "; queue mq, 2 hardware queues of 64 tags". */
static void describe_queue(const struct replay_options *o, char *buf, size_t len)
{
	buf[0] = '\0';
	if (o->cfg.hw_queues)
		snprintf(buf, len, "; queue mq, %u hardware queue%s of %u tags", o->cfg.hw_queues,
			 o->cfg.hw_queues == 1 ? "" : "s", o->cfg.hw_queue_depth);
}

/* The stack checked once, up front, on the disk's size, and described in the table's heading. */
static int check_device(struct replay_options *o, const struct replay_trace *t)
{
	sector_t capacity = o->cfg.capacity ? o->cfg.capacity : t->capacity;
	struct dev_limits lim = { .capacity = capacity ? capacity : 1 };
	struct dev_stack s = { 0 };
	char why[256], desc[1024], queue[96];

	if (check_model_spec(o, capacity) || build_stack(o))
		return -EINVAL;
	if (dev_stack_open(&s, o->cfg.filters, o->cfg.nr_filters, &dev_sim_ops, NULL, &lim,
			   why, sizeof(why))) {
		fprintf(stderr, PROG ": --filter: %s\n", why);
		return -EINVAL;
	}
	describe_device(&s, desc, sizeof(desc));
	describe_queue(o, queue, sizeof(queue));
	dev_stack_close(&s);
	if (o->cfg.capacity && o->cfg.capacity < t->capacity) {
		fprintf(stderr, PROG ": --capacity is below the trace's extent (%llu sectors)\n",
			(unsigned long long)t->capacity);
		return -EINVAL;
	}
	if (!o->csv)
		printf("# %s: %zu I/Os, %s; %s%s\n", o->trace, t->nr,
		       o->cfg.depth ? "fixed depth" : "issued at the trace's times", desc, queue);
	return 0;
}

static int replay_one(struct replay_options *o, const struct replay_trace *t, const char *elv,
		      FILE *lat)
{
	struct replay_result res;
	char why[256];
	int ret;

	o->cfg.elevator = elv;
	o->cfg.progress = o->quiet || !isatty(STDERR_FILENO) ? NULL : show_progress;
	o->cfg.progress_arg = (void *)(uintptr_t)elv;
	ret = replay_run(t, &o->cfg, &res, why, sizeof(why));
	if (o->cfg.progress)
		fprintf(stderr, "\r%40s\r", "");
	if (ret) {
		fprintf(stderr, PROG ": %s: %s\n", o->trace, why);
		return ret;
	}
	if (lat)
		replay_print_latencies(lat, elv, &res);
	ret = replay_print_row(stdout, o->csv, elv, &res);
	replay_result_free(&res);
	return ret;
}

int main(int argc, char **argv)
{
	struct replay_options o;
	const char *names[MAX_ELEVATORS + 1];
	char buf[1024], why[512];
	struct replay_trace t;
	FILE *lat = NULL;
	int ret = parse_options(argc, argv, &o);

	if (ret)
		return ret > 0 ? 0 : 2;
	if (elevator_list(o.elevators, buf, sizeof(buf), names) || check_mq_elevators(&o, names))
		return 2;
	if (replay_load(o.trace, &t, why, sizeof(why))) {
		fprintf(stderr, PROG ": %s\n", why);
		return 2;
	}
	if (check_device(&o, &t) || (o.latencies && !(lat = fopen(o.latencies, "w")))) {
		if (o.latencies && !lat)
			fprintf(stderr, PROG ": %s: %s\n", o.latencies, strerror(errno));
		replay_trace_free(&t);
		return 2;
	}
	replay_print_header(stdout, o.csv, o.cfg.hw_queues);
	for (size_t i = 0; names[i] && !ret; i++)
		ret = replay_one(&o, &t, names[i], lat);
	if (lat && fclose(lat) && !ret) {
		fprintf(stderr, PROG ": %s: %s\n", o.latencies, strerror(errno));
		ret = -EIO;
	}
	replay_trace_free(&t);
	return ret ? 1 : 0;
}
