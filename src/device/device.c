/* SPDX-License-Identifier: BSD-3-Clause */
/* device.c - the stack below the queue: building it from specs, and the calls between its layers. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "kv.h"

/*
 * The registry of filters, in the order --help and rqdisk --list show them:
 * one line each, DEV_REGISTER's symbol in src/device/NAME/, the one place a
 * filter is named outside its folder.
 */
#define DEV_FILTERS(FILTER) \
	FILTER(model)       \
	FILTER(delay)       \
	FILTER(write_cache) \
	FILTER(log_writes)  \
	FILTER(fault)

#define DEV_FILTER_DECLARE(symbol) extern const struct dev_ops dev_##symbol##_ops;
#define DEV_FILTER_ENTRY(symbol) &dev_##symbol##_ops,
DEV_FILTERS(DEV_FILTER_DECLARE)

static const struct dev_ops *const dev_filters[] = { DEV_FILTERS(DEV_FILTER_ENTRY) NULL };
#define NR_FILTERS (sizeof(dev_filters) / sizeof(dev_filters[0]) - 1)

const struct dev_ops *const *dev_filter_list(void)
{
	return dev_filters;
}

const struct dev_ops *dev_find_filter(const char *name, size_t len)
{
	for (size_t i = 0; i < NR_FILTERS; i++)
		if (strlen(dev_filters[i]->name) == len && !strncmp(dev_filters[i]->name, name, len))
			return dev_filters[i];
	return NULL;
}

const char *const *dev_filter_names(void)
{
	static const char *names[NR_FILTERS + 1];

	for (size_t i = 0; i < NR_FILTERS; i++)
		names[i] = dev_filters[i]->name;
	return names;
}

/* "model, delay, log-writes": what --filter takes, for the refusal of another name. */
static void dev_list_filters(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NR_FILTERS && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 dev_filters[i]->name);
}

static const struct dev_ops *dev_spec_filter(const char *spec, const char **args, char *why,
					     size_t whylen)
{
	size_t len = strcspn(spec, ":");
	const struct dev_ops *ops = dev_find_filter(spec, len);
	char names[128];

	if (!ops) {
		dev_list_filters(names, sizeof(names));
		snprintf(why, whylen, "no filter '%.*s' (there are: %s)", (int)len, spec, names);
		return NULL;
	}
	*args = spec[len] ? spec + len + 1 : NULL;
	return ops;
}

int dev_ops_copy(struct dev_ops *out, const struct dev_ops *ops, const char *what, char *why,
		 size_t whylen)
{
	/* the required ops, open and submit, lie before this */
	const size_t least = offsetof(struct dev_ops, submit) + sizeof(ops->submit);

	if (ops->api_version != DEV_API_VERSION) {
		snprintf(why, whylen, "%s is built for device API %d, not %d", what,
			 ops->api_version, DEV_API_VERSION);
		return -EINVAL;
	}
	if (ops->size < least) {
		snprintf(why, whylen, "%s: its ops table is too small (%u bytes, at least %zu)", what,
			 ops->size, least);
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, ops, ops->size < sizeof(*out) ? ops->size : sizeof(*out));
	out->size = sizeof(*out);
	return 0;
}

static int dev_layer_open(struct dev_stack *s, struct blk_dev *dev, const struct dev_ops *ops,
			  const char *args, struct dev_limits *lim, char *why, size_t whylen)
{
	int ret;

	if (ops->api_version != DEV_API_VERSION) {
		snprintf(why, whylen, "%s: built for device API %d, not %d", ops->name,
			 ops->api_version, DEV_API_VERSION);
		return -EINVAL;
	}
	dev->ops = ops;
	dev->stack = s;
	dev->args = args ? strdup(args) : NULL;
	if (args && !dev->args) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ret = ops->open(dev, args, lim, why, whylen);
	if (ret) {
		free(dev->args);
		dev->args = NULL;
		dev->ops = NULL;
	}
	return ret;
}

static void dev_layer_close(struct blk_dev *dev)
{
	if (!dev->ops)
		return;
	if (dev->ops->close)
		dev->ops->close(dev);
	free(dev->args);
	memset(dev, 0, sizeof(*dev));
}

/* Link the layers top to bottom and give each its part of the request's pdu. */
static void dev_stack_link(struct dev_stack *s)
{
	size_t off = 0;

	for (unsigned int i = 0; i < s->nr_layers; i++) {
		struct blk_dev *dev = &s->layers[i];

		dev->upper = i ? &s->layers[i - 1] : NULL;
		dev->lower = i + 1 < s->nr_layers ? &s->layers[i + 1] : NULL;
		dev->pdu_offset = off;
		off += (dev->ops->rq_pdu_size + 15) & ~(size_t)15;
	}
	s->top = &s->layers[0];
	s->bottom = &s->layers[s->nr_layers - 1];
}

/*
 * The backend opens first, since it says what the disk is; then the
 * filters from the bottom up, each seeing what the layers below impose.
 */
int dev_stack_open(struct dev_stack *s, const char *const *specs, unsigned int nr,
		   const struct dev_ops *backend, const char *backend_args,
		   struct dev_limits *lim, char *why, size_t whylen)
{
	const struct dev_host_ops *host_ops = s->host_ops;
	void *host = s->host;
	const struct dev_queue_ops *queue_ops = s->queue_ops;
	void *queue = s->queue;
	bool to_syslog = s->syslog, read_only = s->read_only, direct = s->direct;
	unsigned int disk = s->disk;
	int ret;

	memset(s, 0, sizeof(*s));
	/* what the caller set: layers find the host and the queue above there */
	s->host_ops = host_ops;
	s->host = host;
	s->queue_ops = queue_ops;
	s->queue = queue;
	s->syslog = to_syslog;
	s->read_only = read_only;
	s->direct = direct;
	s->disk = disk;
	if (nr + 1 > DEV_MAX_LAYERS) {
		snprintf(why, whylen, "more than %d filters", DEV_MAX_LAYERS - 1);
		return -EINVAL;
	}
	s->nr_layers = nr + 1;
	ret = dev_layer_open(s, &s->layers[nr], backend, backend_args, lim, why, whylen);
	for (unsigned int i = nr; !ret && i-- > 0;) {
		const char *args;
		const struct dev_ops *ops = dev_spec_filter(specs[i], &args, why, whylen);

		ret = ops ? dev_layer_open(s, &s->layers[i], ops, args, lim, why, whylen) : -EINVAL;
	}
	if (ret) {
		s->aborted = true; /* the layers opened take back what they made */
		dev_stack_close(s);
		return ret;
	}
	s->limits = *lim;
	dev_stack_link(s);
	return 0;
}

int dev_stack_close(struct dev_stack *s)
{
	int ret;

	for (unsigned int i = 0; i < s->nr_layers; i++)
		dev_layer_close(&s->layers[i]);
	s->nr_layers = 0;
	s->top = s->bottom = NULL;
	ret = s->close_error;
	s->close_error = 0; /* said once: a stack opened again starts clean */
	return ret;
}

/* A backend of a 1 TiB disk that takes nothing: what a filter's open is checked over. */
static int dev_check_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
			  size_t whylen)
{
	lim->capacity = (sector_t)1 << 31;
	lim->logical_block_size = 512;
	return 0;
}

static void dev_check_submit(struct blk_dev *dev, struct request *rq)
{
}

static const struct dev_ops dev_check_backend = {
	.api_version = DEV_API_VERSION,
	.name = "check",
	.backend = true,
	.open = dev_check_open,
	.submit = dev_check_submit,
};

int dev_check_filter(const char *spec, char *why, size_t whylen)
{
	struct dev_stack s = { 0 };
	struct dev_limits lim = { 0 };
	int ret = dev_stack_open(&s, &spec, 1, &dev_check_backend, NULL, &lim, why, whylen);

	if (!ret)
		dev_stack_close(&s);
	return ret;
}

size_t dev_stack_pdu_size(const struct dev_stack *s)
{
	const struct blk_dev *b = s->bottom;

	return b ? b->pdu_offset + b->ops->rq_pdu_size : 0;
}

/* One layer as NAME or NAME:WHAT, where WHAT is its description or the args it was opened from. */
static int dev_describe_layer(const struct blk_dev *dev, char *buf, size_t len)
{
	bool what = dev->ops->describe || dev->args;
	int n = snprintf(buf, len, "%s%s", dev->ops->name, what ? ":" : "");
	size_t used = (size_t)n < len ? (size_t)n : len; /* cut short: NUL-ended already */

	if (dev->ops->describe)
		return n + dev->ops->describe(dev, buf + used, len - used);
	if (dev->args)
		return n + snprintf(buf + used, len - used, "%s", dev->args);
	return n;
}

int dev_stack_describe(const struct dev_stack *s, char *buf, size_t len)
{
	int n = 0;

	if (len)
		buf[0] = 0;
	for (unsigned int i = 0; i < s->nr_layers && n >= 0; i++) {
		size_t used = (size_t)n < len ? (size_t)n : len;

		if (i)
			n += snprintf(buf + used, len - used, " -> ");
		used = (size_t)n < len ? (size_t)n : len;
		n += dev_describe_layer(&s->layers[i], buf + used, len - used);
	}
	return n;
}

int dev_layer_name(const struct blk_dev *dev, char *buf, size_t len)
{
	const struct dev_stack *s = dev->stack;
	unsigned int nth = 1;

	for (const struct blk_dev *l = s->layers; l < dev; l++)
		nth += !strcmp(l->ops->name, dev->ops->name);
	if (nth == 1)
		return snprintf(buf, len, "%s", dev->ops->name);
	return snprintf(buf, len, "%s.%u", dev->ops->name, nth);
}

bool dev_can_take(struct blk_dev *dev)
{
	while (dev && !dev->ops->can_take)
		dev = dev->lower;
	return !dev || dev->ops->can_take(dev);
}

void dev_submit(struct blk_dev *dev, struct request *rq)
{
	if (dev->ops->rq_pdu_size)
		memset(dev_rq_pdu(dev, rq), 0, dev->ops->rq_pdu_size);
	dev->ops->submit(dev, rq);
}

/* The first layer above dev that looks at ends; NULL: the queue. */
void dev_end(struct blk_dev *dev, struct request *rq, int error, unsigned int nr_sectors)
{
	struct blk_dev *up = dev->upper;

	while (up && !up->ops->end)
		up = up->upper;
	if (up) {
		up->ops->end(up, rq, error, nr_sectors);
		return;
	}
	dev->stack->ended++;
	dev->stack->queue_ops->end_request(dev->stack->queue, rq, error, nr_sectors);
}

struct request *dev_alloc_request(struct blk_dev *dev, enum req_op op, unsigned int flags,
				  sector_t sector, void *buf, unsigned int len)
{
	const struct dev_stack *s = dev->stack;

	return s->queue_ops->alloc_request(s->queue, op, flags, sector, buf, len);
}

void dev_free_request(struct request *rq)
{
	free(rq);
}

void dev_set_timer(struct blk_dev *dev, uint64_t at)
{
	assert(!at || dev->ops->timer); /* a layer that sets a timer has a timer op */
	dev->timer_at = at;
}

uint64_t dev_now(const struct blk_dev *dev)
{
	return dev->stack->queue_ops->now(dev->stack->queue);
}

bool dev_has_queue(const struct blk_dev *dev)
{
	return dev->stack->queue_ops;
}

unsigned int dev_depth(const struct blk_dev *dev)
{
	return dev->stack->queue_ops->depth(dev->stack->queue);
}

unsigned int dev_max_segments(const struct blk_dev *dev)
{
	return dev->stack->queue_ops->max_segments(dev->stack->queue);
}

unsigned int dev_max_hw_sectors(const struct blk_dev *dev)
{
	return dev->stack->queue_ops->max_hw_sectors(dev->stack->queue);
}

int dev_map_sg(const struct blk_dev *dev, struct request *rq, struct iovec *sg)
{
	return dev->stack->queue_ops->map_sg(dev->stack->queue, rq, sg);
}

void dev_kick(struct blk_dev *dev)
{
	dev->stack->queue_ops->kick(dev->stack->queue);
}

uint64_t dev_stack_next_timer(const struct dev_stack *s)
{
	uint64_t at = 0;

	for (unsigned int i = 0; i < s->nr_layers; i++) {
		uint64_t t = s->layers[i].timer_at;

		if (t && (!at || t < at))
			at = t;
	}
	return at;
}

/* Bottom up: what a lower layer passes up is there for the one above in the same run. */
bool dev_stack_run_timers(struct dev_stack *s, uint64_t now)
{
	bool ran = false;

	for (unsigned int i = s->nr_layers; i-- > 0;) {
		struct blk_dev *dev = &s->layers[i];

		if (dev->timer_at && dev->timer_at <= now) {
			dev->timer_at = 0;
			dev->ops->timer(dev, now);
			ran = true;
		}
	}
	return ran;
}

/* One whole number, decimal, nothing before or after it. */
static int dev_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (!len || len > 20)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int dev_parse_value(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;

	if (dev_parse_u64(s, strlen(s), &v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

struct dev_keys_walk {
	const char *layer;
	const struct dev_key *keys;
	uint64_t *vals;
	char *why;
	size_t whylen;
};

static int dev_parse_key(void *opaque, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct dev_keys_walk *w = opaque;
	const struct dev_key *keys = w->keys;
	uint64_t v;

	for (size_t i = 0; keys[i].name; i++) {
		if (!kv_key_is(key, klen, keys[i].name))
			continue;
		if (!val || dev_parse_u64(val, vlen, &v) || v < keys[i].min || v > keys[i].max) {
			snprintf(w->why, w->whylen,
				 "%s: %s must be a whole number from %llu to %llu, not '%.*s'",
				 w->layer, keys[i].name, (unsigned long long)keys[i].min,
				 (unsigned long long)keys[i].max, (int)vlen, val ? val : "");
			return -EINVAL;
		}
		w->vals[i] = v;
		return 0;
	}
	snprintf(w->why, w->whylen, "%s: no key '%.*s'", w->layer, (int)klen, key);
	return -EINVAL;
}

int dev_parse_keys(const char *layer, const char *args, const struct dev_key *keys,
		   uint64_t *vals, char *why, size_t whylen)
{
	struct dev_keys_walk w = { layer, keys, vals, why, whylen };

	return kv_walk(args, dev_parse_key, &w);
}

void dev_lost_writes(struct blk_dev *dev, uint64_t writes, uint64_t sectors, const char *fmt, ...)
{
	struct dev_stack *s = dev->stack;
	char text[512];
	va_list ap;

	dev->losses++;
	s->lost.events++;
	s->lost.writes += writes;
	s->lost.sectors += sectors;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rqdisk: %s\n", text);
	if (s->host_ops && s->host_ops->lost_writes)
		s->host_ops->lost_writes(s->host, text);
}

void dev_dropped_write(struct blk_dev *dev)
{
	dev->losses++;
	dev->stack->lost.dropped++;
}

void dev_trace_msg(struct blk_dev *dev, const char *fmt, ...)
{
	const struct dev_stack *s = dev->stack;
	char name[64], text[128];
	int n;
	va_list ap;

	if (!s->queue_ops || !s->queue_ops->tracing(s->queue))
		return;
	dev_layer_name(dev, name, sizeof(name));
	n = snprintf(text, sizeof(text), "%s: ", name); /* under 66 of the 128 */
	va_start(ap, fmt);
	vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
	va_end(ap);
	s->queue_ops->trace_msg(s->queue, text);
}
