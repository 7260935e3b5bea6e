/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * model_ssd.c - flash: no positioning, a fixed latency per operation, and
 * the bandwidth shared by channels that work in parallel.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "model_impl.h"

struct ssd_params {
	double read_us;   /* latency of a read, before its transfer */
	double write_us;
	double flush_us;  /* a flush waits for every channel, then this */
	double bandwidth; /* MB/s over all channels */
	double channels;
	double depth;     /* requests the device accepts at once */
};

static const struct ssd_params ssd_defaults = {
	.read_us = 80,
	.write_us = 20,
	.flush_us = 500,
	.bandwidth = 500,
	.channels = 8,
	.depth = 32,
};

#define SSD_KEY(key, u, lo, hi, h)                                                  \
	{                                                                           \
		.name = #key, .help = h,                                            \
		.data = &(const struct model_key){ u, lo, hi,                       \
						   offsetof(struct ssd_params, key) } \
	}

const struct dev_key ssd_keys[] = {
	SSD_KEY(read_us, "us", 0, 1e9, "microseconds before a read's transfer"),
	SSD_KEY(write_us, "us", 0, 1e9, "microseconds before a write's transfer"),
	SSD_KEY(flush_us, "us", 0, 1e9, "microseconds of a flush"),
	SSD_KEY(bandwidth, "MB/s", 0.001, 1e9, "MB/s over all channels"),
	SSD_KEY(channels, "", 1, 1024, "channels that work in parallel"),
	SSD_KEY(depth, "", 1, 65536, "requests the drive accepts at once"),
	{ .name = NULL },
};

struct ssd {
	struct disk_model m;
	struct ssd_params p;
	unsigned int nr_channels;
	double ns_per_byte; /* on one channel */
	uint64_t free_at[];  /* per channel */
};

static unsigned int ssd_first_free(const struct ssd *s)
{
	unsigned int best = 0;

	for (unsigned int i = 1; i < s->nr_channels; i++)
		if (s->free_at[i] < s->free_at[best])
			best = i;
	return best;
}

static uint64_t ssd_flush(struct ssd *s, uint64_t now)
{
	uint64_t t = now;

	for (unsigned int i = 0; i < s->nr_channels; i++)
		t = max_u64(t, s->free_at[i]);
	t = add_ns(t, ns_of(s->p.flush_us * NSEC_PER_USEC));
	for (unsigned int i = 0; i < s->nr_channels; i++)
		s->free_at[i] = t;
	return t;
}

static uint64_t ssd_service(struct disk_model *m, const struct model_io *io, uint64_t now)
{
	struct ssd *s = (struct ssd *)m;
	unsigned int ch;
	double us;
	uint64_t t;

	if (io->op == REQ_OP_FLUSH)
		return ssd_flush(s, now);
	ch = ssd_first_free(s);
	us = io->op == REQ_OP_READ ? s->p.read_us : s->p.write_us;
	t = add_ns(max_u64(now, s->free_at[ch]), ns_of(us * NSEC_PER_USEC));
	if (op_has_data(io->op))
		t = add_ns(t, ns_of((double)io->nr_sectors * SECTOR_SIZE * s->ns_per_byte));
	s->free_at[ch] = t;
	if (io->flags & REQ_FUA)
		t = ssd_flush(s, t);
	return t;
}

static void ssd_destroy(struct disk_model *m)
{
	free(m);
}

static struct disk_model *ssd_create(const void *params, sector_t capacity, char *why,
				     size_t whylen)
{
	const struct ssd_params *p = params;
	unsigned int n = (unsigned int)p->channels;
	struct ssd *s = calloc(1, sizeof(*s) + n * sizeof(s->free_at[0]));

	(void)capacity;
	if (!s) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	s->p = *p;
	s->nr_channels = n;
	/* MB/s is bytes per microsecond */
	s->ns_per_byte = NSEC_PER_USEC * n / p->bandwidth;
	s->m.type = &ssd_model_type;
	s->m.depth = (unsigned int)p->depth;
	s->m.destroy = ssd_destroy;
	s->m.service = ssd_service;
	s->m.params = &s->p;
	return &s->m;
}

const struct model_type ssd_model_type = {
	.name = "ssd",
	.rotational = false,
	.keys = ssd_keys,
	.params_size = sizeof(struct ssd_params),
	.defaults = &ssd_defaults,
	.preset = NULL,
	.create = ssd_create,
};
