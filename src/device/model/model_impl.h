/* SPDX-License-Identifier: BSD-3-Clause */
/* model_impl.h - what the hdd and ssd models share with the model front end. */
#ifndef RQDISK_MODEL_IMPL_H
#define RQDISK_MODEL_IMPL_H

#include <stdbool.h>

#include "device.h"
#include "model.h"

#define NSEC_PER_MSEC 1000000.0
#define NSEC_PER_USEC 1000.0

/*
 * What a model keeps of each of its keys (struct dev_key's data): what it
 * means, and where its value lives.  A key with none (preset) is the
 * model's own to read.
 */
struct model_key {
	const char *unit;
	double min, max; /* the value must lie in [min, max] */
	size_t offset;   /* of the double in the model's parameter struct */
};

/* Each model's keys, in model_types[]. */
extern const struct dev_key hdd_keys[];
extern const struct dev_key ssd_keys[];

struct model_type {
	const char *name;
	bool rotational; /* what queue/rotational shows */
	const struct dev_key *keys; /* its KEY=VALUE keys, each with its help */
	size_t params_size;
	const void *defaults;
	/* Apply a named preset ("preset=NAME"); -EINVAL if there is none by that name. */
	int (*preset)(void *params, const char *name);
	/* Check the parameters together and build the device; NULL with why on error. */
	struct disk_model *(*create)(const void *params, sector_t capacity, char *why,
				     size_t whylen);
};

/* Every model starts with this. */
struct disk_model {
	const struct model_type *type;
	unsigned int depth;
	void (*destroy)(struct disk_model *m);
	uint64_t (*service)(struct disk_model *m, const struct model_io *io, uint64_t now);
	const void *params; /* the model's parameter struct, for describe */
};

extern const struct model_type hdd_model_type;
extern const struct model_type ssd_model_type;

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * Times only add up: the slowest parameters give about 1e19 ns a request,
 * so a sum stops at UINT64_MAX rather than wrap to before the request began.
 */
static inline uint64_t add_ns(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ns as a whole number, UINT64_MAX past it (a cast of a larger double is undefined). */
static inline uint64_t ns_of(double ns)
{
	return ns < 18446744073709549568.0 ? (uint64_t)ns : UINT64_MAX;
}

#endif
