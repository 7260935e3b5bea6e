/* SPDX-License-Identifier: BSD-3-Clause */
/* options.c - rqdisk's command line: parsed, checked, and explained in one line when wrong. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "backend_nbd.h"
#include "backend_uring.h"
#include "blkdev.h"
#include "cli.h"
#include "device.h"
#include "rbd_spec.h"
#include "options.h"
#include "registry_help.h"

enum {
	OPT_LBS = 256,
	OPT_MAX_SECTORS,
	OPT_MAX_SEGMENTS,
	OPT_MAX_SEGMENT_SIZE,
	OPT_SEGMENT_BOUNDARY,
	OPT_DMA_ALIGNMENT,
	OPT_NR_REQUESTS,
	OPT_DIRECT,
	OPT_FUSE_URING,
	OPT_NULL,
	OPT_IDLE_POLL,
	OPT_POLL_USEC,
	OPT_CREATE,
	OPT_ALLOW_OTHER,
	OPT_TRACE,
	OPT_FILTER,
	OPT_NBD_TIMEOUT,
	OPT_CONNECTIONS,
	OPT_QUEUE_MODE,
	OPT_HW_QUEUES,
	OPT_HW_QUEUE_DEPTH,
	OPT_DISK,
	OPT_LIST,
	OPT_HELP_FILTER,
	OPT_HELP_BACKEND,
};

static const struct option long_options[] = {
	{ "elevator", required_argument, NULL, 'e' },
	{ "logical-block-size", required_argument, NULL, OPT_LBS },
	{ "max-sectors", required_argument, NULL, OPT_MAX_SECTORS },
	{ "max-segments", required_argument, NULL, OPT_MAX_SEGMENTS },
	{ "max-segment-size", required_argument, NULL, OPT_MAX_SEGMENT_SIZE },
	{ "segment-boundary", required_argument, NULL, OPT_SEGMENT_BOUNDARY },
	{ "dma-alignment", required_argument, NULL, OPT_DMA_ALIGNMENT },
	{ "nr-requests", required_argument, NULL, OPT_NR_REQUESTS },
	{ "direct", no_argument, NULL, OPT_DIRECT },
	{ "fuse-uring", optional_argument, NULL, OPT_FUSE_URING },
	{ "null", optional_argument, NULL, OPT_NULL },
	{ "idle-poll", required_argument, NULL, OPT_IDLE_POLL },
	{ "poll-usec", required_argument, NULL, OPT_POLL_USEC },
	{ "read-only", no_argument, NULL, 'r' },
	{ "create", required_argument, NULL, OPT_CREATE },
	{ "allow-other", no_argument, NULL, OPT_ALLOW_OTHER },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "model", required_argument, NULL, 'm' },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "nbd-timeout", required_argument, NULL, OPT_NBD_TIMEOUT },
	{ "connections", required_argument, NULL, OPT_CONNECTIONS },
	{ "queue-mode", required_argument, NULL, OPT_QUEUE_MODE },
	{ "hw-queues", required_argument, NULL, OPT_HW_QUEUES },
	{ "hw-queue-depth", required_argument, NULL, OPT_HW_QUEUE_DEPTH },
	{ "disk", required_argument, NULL, OPT_DISK },
	{ "foreground", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "list", required_argument, NULL, OPT_LIST },
	{ "help-filter", required_argument, NULL, OPT_HELP_FILTER },
	{ "help-backend", required_argument, NULL, OPT_HELP_BACKEND },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

#define USAGE_INDENT 31 /* where an option's text starts */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rqdisk [OPTIONS] [--disk IMAGE2...] IMAGE MOUNTPOINT\n"
		"Expose IMAGE as a disk file: MOUNTPOINT/disk for a directory, or\n"
		"MOUNTPOINT itself for a regular file.  With --disk, one daemon serves\n"
		"several images, disk N on the directory MOUNTPOINT/diskN (IMAGE is disk0).\n"
#ifdef HAVE_LIBNBD
		"IMAGE may be an NBD server's export: nbd://HOST[:PORT]/EXPORT or\n"
		"nbd+unix:///EXPORT?socket=PATH.\n"
#endif
#ifdef HAVE_LIBRBD
		"IMAGE may be a Ceph RBD image or snapshot:\n"
		"rbd:POOL/IMAGE[@SNAP][:conf=PATH][:id=NAME][:KEY=VALUE...].\n"
#endif
		"\n"
		"  -e, --elevator NAME          I/O scheduler:");
	cli_usage_list(f, USAGE_INDENT, USAGE_INDENT + 14, "deadline (default), none,",
		       elevator_builtin_names(), "deadline", "or a .so path");
	fprintf(f,
		"      --logical-block-size N   512..4096, a power of two (default 512)\n"
		"      --max-sectors N          512-byte sectors per request (default 255; remote 2048)\n"
		"      --max-segments N         segments per request (default 128)\n"
		"      --max-segment-size N     bytes per segment (default 65536; remote 1048576)\n"
		"      --segment-boundary MASK  no segment crosses it (default 0xffffffff)\n"
		"      --dma-alignment MASK     memory alignment, else bounced (default 511)\n"
		"      --nr-requests N          requests in flight (default 128)\n"
		"      --direct                 open IMAGE with O_DIRECT\n"
		"      --fuse-uring[=WHEN]      FUSE requests on io_uring (Linux 6.14+, fuse\n"
		"                               module enable_uring=Y): auto (the default)\n"
		"                               where the kernel offers it, on (the bare\n"
		"                               option) or refuse to start, off never\n"
		"      --null[=KEY=VALUE,...]   no I/O on IMAGE: each request ends at once, as\n"
		"                               on null_blk (reads undefined, writes dropped);\n"
		"                               keys irqmode=none|softirq|timer and\n"
		"                               completion_nsec=N (rqdisk --help-backend null)\n"
		"      --idle-poll USEC         with no I/O in flight, poll for the next\n"
		"                               request this long before sleeping, in the\n"
		"                               loop and (mq) each hardware queue's thread\n"
		"                               (default 50; 0: never)\n"
		"      --queue-mode MODE        rq (default): the 2.6 request queue; mq:\n"
		"                               software queues onto hardware queues\n"
		"      --hw-queues N            mq: hardware queues, a thread each (default:\n"
		"                               the CPUs online, at most 64)\n"
		"      --hw-queue-depth N       mq: driver tags per hardware queue (default 64)\n"
		"      --poll-usec USEC         mq: each hardware queue's thread spins this long\n"
		"                               for its next completion or request before it\n"
		"                               sleeps, I/O in flight or not (default 0)\n"
		"      --disk IMAGE2            serve IMAGE2 too, as the next diskN, with the\n"
		"                               same options; %%d in a --filter or --trace is\n"
		"                               the disk's number (repeatable, up to 15)\n"
		"  -r, --read-only              refuse writes\n"
		"      --create SIZE            create IMAGE of SIZE (K, M, G, T) if missing\n"
		"      --allow-other            let other users read the disk and the tree\n"
		"                               (writes stay the owner's and root's)\n"
		"      --trace NAME             blktrace the queue to NAME.blktrace.0 (mq:\n"
		"                               NAME.blktrace.N, one per hardware queue)\n"
		"  -m, --model SPEC             time completions as a device would: none\n"
		"                               (default), hdd[:KEY=V,...], ssd[:KEY=V,...];\n"
		"                               short for --filter model:SPEC\n"
		"      --filter NAME[:ARGS]     stack a filter below the queue:");
	cli_usage_list(f, USAGE_INDENT, USAGE_INDENT + 31, "", dev_filter_names(), NULL,
		       "each with its ARGS in rqdisk-NAME-filter(8) (repeatable; the first is "
		       "nearest the queue)");
	fprintf(f,
#ifdef HAVE_LIBNBD
		"      --nbd-timeout SECONDS    an NBD request fails with EIO when the server\n"
		"                               has not answered it in this time (default 30)\n"
		"      --connections N          connections to an NBD server that offers\n"
		"                               multi-conn (default 1, at most 16)\n"
#endif
		"  -f, --foreground             stay in the foreground\n"
		"  -h, --help                   show this help\n"
		"      --list WHAT              list the elevators, filters or backends, with\n"
		"                               what each is\n"
		"      --help-filter NAME       the keys of filter NAME, each with its help\n"
		"      --help-backend NAME      the keys of backend NAME, each with its help\n"
		"  -V, --version                show the version\n");
}

/* An unsigned number, decimal or 0x hex, up to max. */
static int parse_uint(const char *name, const char *s, unsigned long max, unsigned long *out)
{
	return cli_number("rqdisk", name, s, 0, max, out);
}

static int set_limit(int opt, const char *arg, struct queue_limits *lim)
{
	unsigned long v;
	int ret;

	switch (opt) {
	case OPT_LBS:
		ret = parse_uint("--logical-block-size", arg, UINT_MAX, &v);
		lim->logical_block_size = (unsigned int)v;
		return ret;
	case OPT_MAX_SECTORS:
		ret = parse_uint("--max-sectors", arg, UINT_MAX >> 1, &v);
		lim->max_sectors = (unsigned int)v;
		if (lim->max_hw_sectors < lim->max_sectors)
			lim->max_hw_sectors = lim->max_sectors;
		return ret;
	case OPT_MAX_SEGMENTS:
		ret = parse_uint("--max-segments", arg, USHRT_MAX, &v);
		lim->max_phys_segments = lim->max_hw_segments = (unsigned short)v;
		return ret;
	case OPT_MAX_SEGMENT_SIZE:
		ret = parse_uint("--max-segment-size", arg, UINT_MAX, &v);
		lim->max_segment_size = (unsigned int)v;
		return ret;
	case OPT_SEGMENT_BOUNDARY:
		return parse_uint("--segment-boundary", arg, ULONG_MAX, &lim->seg_boundary_mask);
	case OPT_DMA_ALIGNMENT:
		ret = parse_uint("--dma-alignment", arg, UINT_MAX, &v);
		lim->dma_alignment = (unsigned int)v;
		return ret;
	default: /* OPT_NR_REQUESTS */
		ret = parse_uint("--nr-requests", arg, 65536, &v);
		lim->nr_requests = (unsigned int)v;
		return ret;
	}
}

/*
 * A bad filter is refused here, before any mount: dev_check_filter opens
 * it over a stand-in disk, since the image's size is not known yet.
 */
static int check_filter(const char *opt, const char *spec)
{
	char why[256];

	if (!dev_check_filter(spec, why, sizeof(why)))
		return 0;
	fprintf(stderr, "rqdisk: %s: %s\n", opt, why);
	return -EINVAL;
}

static int add_filter(struct rqdisk_options *o, const char *spec)
{
	if (o->nr_filters == RQDISK_MAX_FILTERS) {
		fprintf(stderr, "rqdisk: --filter: no more than %d filters\n", RQDISK_MAX_FILTERS);
		return -EINVAL;
	}
	o->filters[o->nr_filters++] = spec;
	return check_filter("--filter", spec);
}

/*
 * The text of --model's filter: the process keeps it to the end, here
 * where a leak checker sees it held, and frees it when a later --model
 * replaces it.
 */
static char *model_filter_text;

/* --model SPEC is the model filter where it stands; a later --model replaces it, none drops it. */
static int set_model(struct rqdisk_options *o, const char *spec)
{
	char *filter;

	o->model = spec;
	if (o->model_filter >= 0) {
		memmove(&o->filters[o->model_filter], &o->filters[o->model_filter + 1],
			(o->nr_filters - (unsigned int)o->model_filter - 1) * sizeof(o->filters[0]));
		o->nr_filters--;
		o->model_filter = -1;
	}
	free(model_filter_text);
	model_filter_text = NULL;
	if (!strcmp(spec, "none"))
		return 0;
	if (asprintf(&filter, "model:%s", spec) < 0) {
		fprintf(stderr, "rqdisk: out of memory\n");
		return -ENOMEM;
	}
	o->model_filter = (int)o->nr_filters;
	if (o->nr_filters == RQDISK_MAX_FILTERS) {
		free(filter);
		fprintf(stderr, "rqdisk: --model: no more than %d filters\n", RQDISK_MAX_FILTERS);
		return -EINVAL;
	}
	o->filters[o->nr_filters++] = model_filter_text = filter;
	return check_filter("--model", filter);
}

/* --idle-poll or --poll-usec: microseconds, 0 to a second. */
static int parse_poll_us(const char *name, const char *arg, unsigned int *us)
{
	unsigned long v;
	int ret = cli_number("rqdisk", name, arg, 0, RQDISK_IDLE_POLL_MAX_US, &v);

	*us = (unsigned int)v;
	return ret;
}

/* An NBD option's number, 1 to max. */
static int parse_nbd_number(const char *name, const char *arg, unsigned long max,
			    unsigned int *out)
{
	unsigned long v;
	int ret = cli_number("rqdisk", name, arg, 1, max, &v);

	*out = (unsigned int)v;
	return ret;
}

static int parse_queue_mode(const char *arg, enum queue_mode *mode)
{
	if (!strcmp(arg, "rq"))
		*mode = QUEUE_MODE_RQ;
	else if (!strcmp(arg, "mq"))
		*mode = QUEUE_MODE_MQ;
	else {
		fprintf(stderr, "rqdisk: --queue-mode: '%s' is not rq or mq\n", arg);
		return -EINVAL;
	}
	return 0;
}

/* --hw-queues and --hw-queue-depth: 1 to max. */
static int parse_mq_number(const char *name, const char *arg, unsigned long max,
			   unsigned int *out)
{
	unsigned long v;
	int ret = cli_number("rqdisk", name, arg, 1, max, &v);

	*out = (unsigned int)v;
	return ret;
}

/* --disk IMAGE: one more disk, served as IMAGE is. */
static int add_disk(struct rqdisk_options *o, const char *image)
{
	if (o->nr_disks == RQDISK_MAX_DISKS - 1) {
		fprintf(stderr, "rqdisk: --disk: no more than %d disks in all\n", RQDISK_MAX_DISKS);
		return -EINVAL;
	}
	if (!*image) {
		fprintf(stderr, "rqdisk: --disk: the IMAGE is empty\n");
		return -EINVAL;
	}
	o->disks[o->nr_disks++] = image;
	return 0;
}

/* No argument is "on", as the option was before it took one. */
/* --null=KEYS: the null backend's, checked now as it will open them. */
static int parse_null_keys(const char *arg, const char **keys)
{
	char why[DEV_SPEC_MAX + 64];

	if (arg && *arg && null_check_keys(arg, why, sizeof(why))) {
		fprintf(stderr, "rqdisk: --%s\n", why);
		return -EINVAL;
	}
	*keys = arg && *arg ? arg : NULL;
	return 0;
}

static int parse_fuse_uring(const char *arg, enum fuse_uring_mode *mode)
{
	if (!arg || !strcmp(arg, "on"))
		*mode = FUSE_URING_ON;
	else if (!strcmp(arg, "auto"))
		*mode = FUSE_URING_AUTO;
	else if (!strcmp(arg, "off"))
		*mode = FUSE_URING_OFF;
	else {
		fprintf(stderr, "rqdisk: --fuse-uring: '%s' is not auto, on or off\n", arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_one(int opt, const char *arg, struct rqdisk_options *o)
{
	switch (opt) {
	case 'e':
		o->elevator = arg;
		return 0;
	case OPT_DIRECT:
		o->direct = true;
		return 0;
	case OPT_FUSE_URING:
		return parse_fuse_uring(arg, &o->fuse_uring);
	case OPT_NULL:
		o->null = true;
		return parse_null_keys(arg, &o->null_keys);
	case OPT_IDLE_POLL:
		return parse_poll_us("--idle-poll", arg, &o->idle_poll_us);
	case OPT_POLL_USEC:
		return parse_poll_us("--poll-usec", arg, &o->poll_us);
	case 'r':
		o->read_only = true;
		return 0;
	case OPT_ALLOW_OTHER:
		o->allow_other = true;
		return 0;
	case 'f':
		o->foreground = true;
		return 0;
	case OPT_TRACE:
		if (!*arg) {
			fprintf(stderr, "rqdisk: --trace: the NAME is empty\n");
			return -EINVAL;
		}
		o->trace = arg;
		return 0;
	case 'm':
		return set_model(o, arg);
	case OPT_FILTER:
		return add_filter(o, arg);
	case OPT_NBD_TIMEOUT:
		return parse_nbd_number("--nbd-timeout", arg, NBD_MAX_TIMEOUT, &o->nbd_timeout);
	case OPT_CONNECTIONS:
		return parse_nbd_number("--connections", arg, NBD_MAX_CONNECTIONS, &o->connections);
	case OPT_QUEUE_MODE:
		return parse_queue_mode(arg, &o->queue_mode);
	case OPT_HW_QUEUES:
		return parse_mq_number("--hw-queues", arg, RQDISK_MAX_HW_QUEUES, &o->hw_queues);
	case OPT_HW_QUEUE_DEPTH:
		return parse_mq_number("--hw-queue-depth", arg, RQDISK_MAX_HW_QUEUE_DEPTH,
				       &o->hw_queue_depth);
	case OPT_DISK:
		return add_disk(o, arg);
	case OPT_CREATE:
		if (parse_size(arg, &o->create_size) || !o->create_size) {
			fprintf(stderr, "rqdisk: --create: '%s' is not a size (like 64M or 2G)\n", arg);
			return -EINVAL;
		}
		return 0;
	default:
		if (opt == OPT_MAX_SECTORS || opt == OPT_MAX_SEGMENT_SIZE)
			o->request_size_set = true;
		return set_limit(opt, arg, &o->limits);
	}
}

/* A name or path that no elevator answers to is a bad command line, as a bad model is. */
static int check_elevator(const char *name)
{
	char why[512];

	if (!strcmp(name, "none") || elevator_get(name, why, sizeof(why)))
		return 0;
	fprintf(stderr, "rqdisk: %s\n", why);
	return -EINVAL;
}

/* The NBD options are for an NBD export only. */
static int check_not_nbd(const struct rqdisk_options *o)
{
	if (!o->nbd_timeout && !o->connections)
		return 0;
	fprintf(stderr, "rqdisk: IMAGE %s: %s is for an NBD export, not an image file\n",
		o->image, o->nbd_timeout ? "--nbd-timeout" : "--connections");
	return -EINVAL;
}

/*
 * rbd:POOL/IMAGE... is an RBD image where librbd was there to build the rbd
 * backend: the spec is checked here, before anything starts.  A file whose
 * name begins so is given as ./rbd:...
 */
static int check_rbd_image(const struct rqdisk_options *o)
{
#ifdef HAVE_LIBRBD
	struct rbd_spec sp;
	char why[DEV_SPEC_MAX];

	if (o->create_size || o->direct || o->null) {
		fprintf(stderr, "rqdisk: IMAGE %s: %s is for an image file, not an RBD image\n",
			o->image, o->create_size ? "--create" : o->direct ? "--direct" : "--null");
		return -EINVAL;
	}
	if (getauxval(AT_SECURE)) {
		/* conf=, CEPH_CONF and any key reach librados, which loads plugins they name */
		fprintf(stderr, "rqdisk: IMAGE %s: a privileged (setcap or setuid) rqdisk opens no RBD "
			"image: Ceph's configuration can name code to load\n", o->image);
		return -EPERM;
	}
	if (rbd_spec_parse(o->image + strlen(RBD_SPEC_PREFIX), &sp, why, sizeof(why))) {
		fprintf(stderr, "rqdisk: IMAGE %s: %s\n", o->image, why);
		return -EINVAL;
	}
	rbd_spec_free(&sp);
	return 0;
#else
	fprintf(stderr, "rqdisk: IMAGE %s: this rqdisk was built without librbd (no rbd backend); "
		"a file of that name is ./%s\n", o->image, o->image);
	return -EINVAL;
#endif
}

/*
 * IMAGE is a path for the file backend, or an NBD URI for the nbd one
 * (where libnbd was there to build it).  Another URI, "SCHEME://...", is
 * left for the backends that will claim one (rbd://).
 */
static int check_image(const struct rqdisk_options *o)
{
	const char *image = o->image;
	size_t scheme = strspn(image, "abcdefghijklmnopqrstuvwxyz0123456789+.-");

	if (rbd_is_spec(image))
		return check_rbd_image(o);

	if (!scheme || strncmp(image + scheme, "://", 3))
		return check_not_nbd(o);
#ifdef HAVE_LIBNBD
	if (nbd_is_uri(image)) {
		if (!o->create_size && !o->direct && !o->null)
			return 0;
		fprintf(stderr, "rqdisk: IMAGE %s: %s is for an image file, not an NBD export\n",
			image, o->create_size ? "--create" : o->direct ? "--direct" : "--null");
		return -EINVAL;
	}
#endif
	fprintf(stderr, "rqdisk: IMAGE %s: no backend takes %.*s:// URIs; give a path\n", image,
		(int)scheme, image);
	return -EINVAL;
}

/*
 * The hardware-queue options shape the mq queue alone; the mq queue runs
 * on the image file, --null (its threads carry out the file backend's
 * I/O) or an NBD export (its threads send on the connections, the loop's
 * thread polls them).  Not on RBD: librbd's completions have not been
 * tried from the hardware queues' threads.
 */
static int check_mq(const struct rqdisk_options *o)
{
	if (o->queue_mode == QUEUE_MODE_RQ && (o->hw_queues || o->hw_queue_depth || o->poll_us)) {
		fprintf(stderr, "rqdisk: %s is for --queue-mode=mq\n",
			o->hw_queues ? "--hw-queues" : o->hw_queue_depth ? "--hw-queue-depth" :
									"--poll-usec");
		return -EINVAL;
	}
	return 0;
}

/*
 * Several disks: each checked as IMAGE is, and the files the disks write
 * told apart, since every disk gets the same options: a log and its base
 * (log-writes' file= and base=) and a trace name need %d, each disk's
 * number.
 */
static int check_disks(struct rqdisk_options *o)
{
	const char *first = o->image;
	int ret = 0;

	if (!o->nr_disks)
		return 0;
	if (o->trace && !strstr(o->trace, "%d")) {
		fprintf(stderr, "rqdisk: --trace %s: with several disks the NAME needs %%d, each "
			"disk's number\n", o->trace);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < o->nr_filters; i++) {
		if (!strncmp(o->filters[i], "log-writes", 10) && !strstr(o->filters[i], "%d")) {
			fprintf(stderr, "rqdisk: --filter %s: with several disks the log's file "
				"needs %%d, each disk's number\n", o->filters[i]);
			return -EINVAL;
		}
	}
	for (unsigned int i = 0; i < o->nr_disks && !ret; i++) {
		o->image = o->disks[i];
		ret = check_image(o) || check_mq(o) ? -EINVAL : 0;
	}
	o->image = first;
	return ret;
}

/* What the options say together, once each is known. */
static int check_together(const struct rqdisk_options *o)
{
	unsigned int lbs = o->limits.logical_block_size;
	char why[160];

	if (blk_validate_limits(&o->limits, why, sizeof(why))) {
		fprintf(stderr, "rqdisk: %s\n", why);
		return -EINVAL;
	}
	if (o->create_size % lbs) {
		fprintf(stderr,
			"rqdisk: --create: %llu bytes is not a multiple of the logical block size %u\n",
			(unsigned long long)o->create_size, lbs);
		return -EINVAL;
	}
	if (check_mq(o))
		return -EINVAL;
	return check_elevator(o->elevator);
}

/* --list, --help-filter, --help-backend: said at once, as --help is. */
static int registry_help(int opt, const char *arg)
{
	if (opt == OPT_LIST)
		return registry_list(arg);
	if (opt == OPT_HELP_FILTER)
		return registry_help_filter(arg);
	return registry_help_backend(arg);
}

enum parse_result rqdisk_parse_options(int argc, char **argv, struct rqdisk_options *o)
{
	int opt;

	memset(o, 0, sizeof(*o));
	o->elevator = "deadline";
	o->model = "none";
	o->model_filter = -1;
	o->idle_poll_us = RQDISK_IDLE_POLL_US;
	o->fuse_uring = FUSE_URING_AUTO;
	blk_set_default_limits(&o->limits);
	while ((opt = cli_getopt("rqdisk", argc, argv, "+:e:m:rfhV", long_options)) != -1) {
		if (cli_help_version("rqdisk", opt, usage))
			return PARSE_EXIT_OK;
		if (opt == OPT_LIST || opt == OPT_HELP_FILTER || opt == OPT_HELP_BACKEND)
			return registry_help(opt, optarg) ? PARSE_ERROR : PARSE_EXIT_OK;
		if (opt == '?')
			return PARSE_ERROR;
		if (parse_one(opt, optarg, o))
			return PARSE_ERROR;
	}
	if (argc - optind != 2) {
		cli_usage_error("rqdisk", argc - optind < 2 ? "an IMAGE and a MOUNTPOINT are needed"
							    : "too many arguments: only IMAGE and MOUNTPOINT",
				NULL);
		return PARSE_ERROR;
	}
	o->image = argv[optind];
	o->mountpoint = argv[optind + 1];
	return check_together(o) || check_image(o) || check_disks(o) ? PARSE_ERROR : PARSE_OK;
}
