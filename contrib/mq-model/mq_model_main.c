/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mq_model_main.c - mq-model: the multi-queue path's model, run for a list
 * of machine sizes (one hardware queue, one fio job and one CPU each, as
 * blk-mq gives a queue per CPU), printed as a table or CSV.  Its defaults
 * are the costs measured on a 2-core machine (doc/mq-model.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mq_model.h"

#define PROG "mq-model"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS]\n"
		"The multi-queue path's model on a virtual clock: IOPS, lock use and tag\n"
		"waits for each size in --sizes (that many CPUs, hardware queues and jobs).\n"
		"      --sizes N,N,...     machine sizes (default 1,2,4,8,16,32,64)\n"
		"      --hw-queues N       hardware queues, whatever the size (default: the size)\n"
		"      --jobs N            client threads, whatever the size (default: the size)\n"
		"      --iodepth N         I/Os in flight per job (default 32)\n"
		"      --tags N            driver tags per hardware queue (default 64)\n"
		"      --lock shared|hctx  one queue lock (a single-queue elevator; default)\n"
		"                          or one per hardware queue (per-queue lists)\n"
		"      --client-ns N       a job's CPU per I/O (default 4200)\n"
		"      --take-ns N         a queue thread's CPU to take a request (default 1300)\n"
		"      --submit-lock-ns N  ... to insert and dispatch it, locked (default 250)\n"
		"      --end-lock-ns N     ... to end it, locked (default 200)\n"
		"      --answer-ns N       ... to answer FUSE (default 1300)\n"
		"      --device-ns N       the device's time per I/O (default 0: --null)\n"
		"      --wake-ns N         a sleeping thread's wake-up latency (default 0)\n"
		"      --requests N        I/Os per size (default 200000)\n"
		"      --csv               comma-separated values\n"
		"  -h, --help              this help\n"
		"  -V, --version           the version\n");
}

enum { OPT_SIZES = 256, OPT_HWQ, OPT_JOBS, OPT_DEPTH, OPT_TAGS, OPT_LOCK, OPT_CLIENT, OPT_TAKE,
       OPT_SUBMIT, OPT_END, OPT_ANSWER, OPT_DEVICE, OPT_WAKE, OPT_REQUESTS, OPT_CSV };

static const struct option options[] = {
	{ "sizes", required_argument, NULL, OPT_SIZES },
	{ "hw-queues", required_argument, NULL, OPT_HWQ },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "iodepth", required_argument, NULL, OPT_DEPTH },
	{ "tags", required_argument, NULL, OPT_TAGS },
	{ "lock", required_argument, NULL, OPT_LOCK },
	{ "client-ns", required_argument, NULL, OPT_CLIENT },
	{ "take-ns", required_argument, NULL, OPT_TAKE },
	{ "submit-lock-ns", required_argument, NULL, OPT_SUBMIT },
	{ "end-lock-ns", required_argument, NULL, OPT_END },
	{ "answer-ns", required_argument, NULL, OPT_ANSWER },
	{ "device-ns", required_argument, NULL, OPT_DEVICE },
	{ "wake-ns", required_argument, NULL, OPT_WAKE },
	{ "requests", required_argument, NULL, OPT_REQUESTS },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

struct config {
	struct mq_model_params p;
	unsigned int sizes[64];
	unsigned int nr_sizes;
	unsigned long hw_queues, jobs; /* 0: the size */
	bool csv;
};

static int parse_sizes(struct config *c, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	c->nr_sizes = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		if (c->nr_sizes == 64) {
			fprintf(stderr, PROG ": --sizes: at most 64 sizes\n");
			ret = -EINVAL;
		} else if (!(ret = cli_number(PROG, "--sizes", tok, 1, 4096, &v))) {
			c->sizes[c->nr_sizes++] = (unsigned int)v;
		}
	}
	if (!ret && !c->nr_sizes) {
		fprintf(stderr, PROG ": --sizes: no size in '%s'\n", arg);
		ret = -EINVAL;
	}
	free(copy);
	return ret;
}

static int parse_ns(const char *opt, const char *arg, uint64_t *out)
{
	unsigned long v;
	int ret = cli_number(PROG, opt, arg, 0, 1000000000ul, &v);

	*out = v;
	return ret;
}

static int parse_count(const char *opt, const char *arg, unsigned long max, unsigned int *out)
{
	unsigned long v;
	int ret = cli_number(PROG, opt, arg, 1, max, &v);

	*out = (unsigned int)v;
	return ret;
}

static int parse_option(struct config *c, int opt, const char *arg)
{
	unsigned long v;
	int ret;

	switch (opt) {
	case OPT_SIZES:
		return parse_sizes(c, arg);
	case OPT_HWQ:
		return cli_number(PROG, "--hw-queues", arg, 1, 4096, &c->hw_queues);
	case OPT_JOBS:
		return cli_number(PROG, "--jobs", arg, 1, 4096, &c->jobs);
	case OPT_DEPTH:
		return parse_count("--iodepth", arg, 4096, &c->p.iodepth);
	case OPT_TAGS:
		return parse_count("--tags", arg, 1u << 20, &c->p.tags);
	case OPT_LOCK:
		if (strcmp(arg, "shared") && strcmp(arg, "hctx")) {
			fprintf(stderr, PROG ": --lock: '%s' is not shared or hctx\n", arg);
			return -EINVAL;
		}
		c->p.shared_lock = !strcmp(arg, "shared");
		return 0;
	case OPT_CLIENT:
		return parse_ns("--client-ns", arg, &c->p.client_ns);
	case OPT_TAKE:
		return parse_ns("--take-ns", arg, &c->p.take_ns);
	case OPT_SUBMIT:
		return parse_ns("--submit-lock-ns", arg, &c->p.submit_lock_ns);
	case OPT_END:
		return parse_ns("--end-lock-ns", arg, &c->p.end_lock_ns);
	case OPT_ANSWER:
		return parse_ns("--answer-ns", arg, &c->p.answer_ns);
	case OPT_DEVICE:
		return parse_ns("--device-ns", arg, &c->p.device_ns);
	case OPT_WAKE:
		return parse_ns("--wake-ns", arg, &c->p.wake_ns);
	case OPT_REQUESTS:
		ret = cli_number(PROG, "--requests", arg, 100, 4294967296ul, &v);
		c->p.requests = v;
		return ret;
	case OPT_CSV:
		c->csv = true;
		return 0;
	}
	return -EINVAL;
}

static void print_row(const struct config *c, const struct mq_model_params *p,
		      const struct mq_model_result *r, unsigned int size)
{
	if (c->csv) {
		printf("%u,%u,%u,%.0f,%.4f,%.1f,%.4f,%.4f\n", size, p->hw_queues, p->jobs, r->iops,
		       r->lock_utilisation, r->lock_wait_ns, r->tag_wait_fraction, r->cpu_utilisation);
		return;
	}
	printf("%5u %6u %5u %10.0f %9.1f%% %10.2f %9.1f%% %8.1f%%\n", size, p->hw_queues, p->jobs,
	       r->iops, r->lock_utilisation * 100, r->lock_wait_ns / 1000,
	       r->tag_wait_fraction * 100, r->cpu_utilisation * 100);
}

static int run(const struct config *c)
{
	char why[160];

	if (c->csv)
		printf("cpus,hw_queues,jobs,iops,lock_utilisation,lock_wait_ns,tag_wait_fraction,cpu_utilisation\n");
	else
		printf(" cpus queues  jobs       IOPS lock busy lock wait µs tag waits  cpu busy\n");
	for (unsigned int i = 0; i < c->nr_sizes; i++) {
		struct mq_model_params p = c->p;
		struct mq_model_result r;

		p.cpus = c->sizes[i];
		p.hw_queues = c->hw_queues ? (unsigned int)c->hw_queues : c->sizes[i];
		p.jobs = c->jobs ? (unsigned int)c->jobs : c->sizes[i];
		if (mq_model_check(&p, why, sizeof(why))) {
			fprintf(stderr, PROG ": %s\n", why);
			return 2;
		}
		if (mq_model_run(&p, &r)) {
			fprintf(stderr, PROG ": out of memory\n");
			return 1;
		}
		print_row(c, &p, &r, c->sizes[i]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct config c = {
		.p = { .iodepth = 32, .tags = 64, .shared_lock = true, .client_ns = 4200,
		       .take_ns = 1300, .submit_lock_ns = 250, .end_lock_ns = 200,
		       .answer_ns = 1300, .requests = 200000 },
		.sizes = { 1, 2, 4, 8, 16, 32, 64 },
		.nr_sizes = 7,
	};
	int opt;

	while ((opt = cli_getopt(PROG, argc, argv, ":hV", options)) != -1) {
		if (opt == '?')
			return 2;
		if (cli_help_version(PROG, opt, usage))
			return 0;
		if (parse_option(&c, opt, optarg))
			return 2;
	}
	if (optind < argc) {
		cli_usage_error(PROG, "takes no operand:", argv[optind]);
		return 2;
	}
	return run(&c);
}
