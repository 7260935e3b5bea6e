/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * model.h - device timing models: when a request would complete on a
 * modelled disk.  The daemon holds each completion back until then (real
 * clock); rqdisk-replay advances its virtual clock to it.  A model is pure
 * arithmetic on what it is given: the same requests at the same times give
 * the same answers.
 */
#ifndef RQDISK_MODEL_H
#define RQDISK_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk_types.h"
#include "device.h"

struct disk_model;

/* What a model needs to know of a request. */
struct model_io {
	enum req_op op;
	unsigned int flags; /* REQ_* */
	sector_t sector;
	unsigned int nr_sectors;
};

/*
 * The models, each a word a spec starts with and the keys that may follow
 * it (its sub): hdd, ssd.  The model filter's key table.
 */
extern const struct dev_key model_types[];

/*
 * spec is "none", "hdd[:key=value,...]" or "ssd[:key=value,...]" (rqdisk-model-filter(8)
 * lists the keys); capacity is the disk's size in sectors.  "none" gives 0
 * and *out NULL.  A bad spec gives -EINVAL with a one-line reason in why.
 */
int disk_model_new(const char *spec, sector_t capacity, struct disk_model **out, char *why,
		   size_t whylen);
void disk_model_free(struct disk_model *m);

/* How many requests the device serves at once (a driver keeps no more in flight). */
unsigned int disk_model_depth(const struct disk_model *m);

/* Whether the device seeks: what queue/rotational says. */
bool disk_model_rotational(const struct disk_model *m);

/*
 * io is handed to the device at now (ns); returns the time it completes.
 * Calls come in dispatch order, at non-decreasing now.
 */
uint64_t disk_model_service(struct disk_model *m, const struct model_io *io, uint64_t now);

/* The model and every parameter, "hdd rpm=7200 ...", for headers and the control tree. */
int disk_model_describe(const struct disk_model *m, char *buf, size_t len);

#endif
