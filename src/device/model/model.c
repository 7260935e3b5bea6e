/* SPDX-License-Identifier: BSD-3-Clause */
/* model.c - device timing models: "none", "hdd:..." or "ssd:..." parsed into a model. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv.h"
#include "model_impl.h"

/* The models: what the model filter's spec starts with, and its key table (filter_model.c). */
const struct dev_key model_types[] = {
	{ .name = "hdd", .help = "a disk with an arm that seeks and a platter that turns",
	  .data = &hdd_model_type, .sub = hdd_keys },
	{ .name = "ssd", .help = "flash: a latency per operation, the bandwidth shared by channels",
	  .data = &ssd_model_type, .sub = ssd_keys },
	{ .name = NULL },
};

static const struct model_type *model_type_find(const char *name, size_t len)
{
	for (const struct dev_key *k = model_types; k->name; k++)
		if (strlen(k->name) == len && !strncmp(k->name, name, len))
			return k->data;
	return NULL;
}

/* A key with a value of its own (not preset). */
static const struct dev_key *model_key_find(const struct model_type *t, const char *name,
					    size_t len)
{
	for (const struct dev_key *k = t->keys; k->name; k++)
		if (k->data && strlen(k->name) == len && !strncmp(k->name, name, len))
			return k;
	return NULL;
}

static double *model_param(void *params, const struct dev_key *k)
{
	const struct model_key *mk = k->data;

	return (double *)(void *)((char *)params + mk->offset);
}

struct model_walk {
	const struct model_type *t;
	void *params;
	char *why;
	size_t whylen;
};

static int model_set_key(void *opaque, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct model_walk *w = opaque;
	const struct model_type *t = w->t;
	const struct dev_key *k;
	const struct model_key *mk;
	char value[64], *end;
	double v;

	if (!val) {
		snprintf(w->why, w->whylen, "model: '%.*s' is not KEY=VALUE", (int)klen, key);
		return -EINVAL;
	}
	if (vlen >= sizeof(value)) { /* cut short, "1.000...0x" would read as 1 */
		snprintf(w->why, w->whylen, "model: the value of '%.*s' is longer than %zu characters",
			 (int)klen, key, sizeof(value) - 1);
		return -EINVAL;
	}
	snprintf(value, sizeof(value), "%.*s", (int)vlen, val);
	if (kv_key_is(key, klen, "preset")) {
		if (t->preset && !t->preset(w->params, value))
			return 0;
		snprintf(w->why, w->whylen, "model: %s has no preset '%s'", t->name, value);
		return -EINVAL;
	}
	k = model_key_find(t, key, klen);
	if (!k) {
		snprintf(w->why, w->whylen,
			 "model: %s has no key '%.*s' (see rqdisk-model-filter(8))", t->name,
			 (int)klen, key);
		return -EINVAL;
	}
	mk = k->data;
	v = strtod(value, &end);
	if (!*value || *end || !(v >= mk->min && v <= mk->max)) {
		snprintf(w->why, w->whylen, "model: %s %s must be a number from %g to %g, not '%s'",
			 t->name, k->name, mk->min, mk->max, value);
		return -EINVAL;
	}
	*model_param(w->params, k) = v;
	return 0;
}

/* "key=value,key=value": applied in order, so a preset can be overridden after it. */
static int model_set_keys(const struct model_type *t, void *params, const char *s, char *why,
			  size_t whylen)
{
	struct model_walk w = { t, params, why, whylen };

	return kv_walk(s, model_set_key, &w);
}

int disk_model_new(const char *spec, sector_t capacity, struct disk_model **out, char *why,
		   size_t whylen)
{
	size_t len = strcspn(spec, ":");
	const struct model_type *t;
	void *params;
	int ret;

	*out = NULL;
	if (!strcmp(spec, "none"))
		return 0;
	t = model_type_find(spec, len);
	if (!t) {
		snprintf(why, whylen, "model: '%.*s' is not none, hdd or ssd", (int)len, spec);
		return -EINVAL;
	}
	if (!capacity) {
		snprintf(why, whylen, "model: the disk has no sectors");
		return -EINVAL;
	}
	params = malloc(t->params_size);
	if (!params) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	memcpy(params, t->defaults, t->params_size);
	ret = model_set_keys(t, params, spec[len] ? spec + len + 1 : "", why, whylen);
	if (!ret) {
		*out = t->create(params, capacity, why, whylen);
		ret = *out ? 0 : -EINVAL;
	}
	free(params);
	return ret;
}

void disk_model_free(struct disk_model *m)
{
	if (m)
		m->destroy(m);
}

unsigned int disk_model_depth(const struct disk_model *m)
{
	return m->depth;
}

bool disk_model_rotational(const struct disk_model *m)
{
	return m->type->rotational;
}

uint64_t disk_model_service(struct disk_model *m, const struct model_io *io, uint64_t now)
{
	return m->service(m, io, now);
}

int disk_model_describe(const struct disk_model *m, char *buf, size_t len)
{
	const struct model_type *t = m->type;
	size_t used;
	int n = snprintf(buf, len, "%s", t->name);

	for (const struct dev_key *k = t->keys; k->name && n >= 0; k++) {
		if (!k->data)
			continue; /* preset: what it set is in the keys */
		used = (size_t)n < len ? (size_t)n : len;
		n += snprintf(buf + used, len - used, " %s=%g", k->name,
			      *model_param((void *)(uintptr_t)m->params, k));
	}
	return n;
}
