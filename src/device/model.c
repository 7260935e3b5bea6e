/* model.c - device timing models: "none", "hdd:..." or "ssd:..." parsed into a model. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

static const struct model_type *const model_types[] = { &hdd_model_type, &ssd_model_type };

static const struct model_type *model_type_find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(model_types) / sizeof(model_types[0]); i++)
		if (strlen(model_types[i]->name) == len && !strncmp(model_types[i]->name, name, len))
			return model_types[i];
	return NULL;
}

static const struct model_key *model_key_find(const struct model_type *t, const char *name,
					      size_t len)
{
	for (const struct model_key *k = t->keys; k->name; k++)
		if (strlen(k->name) == len && !strncmp(k->name, name, len))
			return k;
	return NULL;
}

static double *model_param(void *params, const struct model_key *k)
{
	return (double *)(void *)((char *)params + k->offset);
}

static int model_set_key(const struct model_type *t, void *params, const char *kv, size_t len,
			 char *why, size_t whylen)
{
	const char *eq = memchr(kv, '=', len);
	const struct model_key *k;
	char value[64], *end;
	size_t vlen;
	double v;

	if (!eq) {
		snprintf(why, whylen, "model: '%.*s' is not KEY=VALUE", (int)len, kv);
		return -EINVAL;
	}
	vlen = len - (size_t)(eq + 1 - kv);
	if (vlen >= sizeof(value)) { /* cut short, "1.000...0x" would read as 1 */
		snprintf(why, whylen, "model: the value of '%.*s' is longer than %zu characters",
			 (int)(eq - kv), kv, sizeof(value) - 1);
		return -EINVAL;
	}
	snprintf(value, sizeof(value), "%.*s", (int)vlen, eq + 1);
	if (eq - kv == 6 && !strncmp(kv, "preset", 6)) {
		if (t->preset && !t->preset(params, value))
			return 0;
		snprintf(why, whylen, "model: %s has no preset '%s'", t->name, value);
		return -EINVAL;
	}
	k = model_key_find(t, kv, (size_t)(eq - kv));
	if (!k) {
		snprintf(why, whylen, "model: %s has no key '%.*s' (see rqdisk(8))", t->name,
			 (int)(eq - kv), kv);
		return -EINVAL;
	}
	v = strtod(value, &end);
	if (!*value || *end || !(v >= k->min && v <= k->max)) {
		snprintf(why, whylen, "model: %s %s must be a number from %g to %g, not '%s'",
			 t->name, k->name, k->min, k->max, value);
		return -EINVAL;
	}
	*model_param(params, k) = v;
	return 0;
}

/* "key=value,key=value": applied in order, so a preset can be overridden after it. */
static int model_set_keys(const struct model_type *t, void *params, const char *s, char *why,
			  size_t whylen)
{
	while (*s) {
		size_t len = strcspn(s, ",");
		int ret = model_set_key(t, params, s, len, why, whylen);

		if (ret)
			return ret;
		s += len + (s[len] == ',');
	}
	return 0;
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

	for (const struct model_key *k = t->keys; k->name && n >= 0; k++) {
		used = (size_t)n < len ? (size_t)n : len;
		n += snprintf(buf + used, len - used, " %s=%g", k->name,
			      *model_param((void *)(uintptr_t)m->params, k));
	}
	return n;
}
