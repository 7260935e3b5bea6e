/* SPDX-License-Identifier: BSD-3-Clause */
/* kv.h - "KEY=VALUE,KEY=VALUE": the one walk over a layer's spec that its parsers share. */
#ifndef RQDISK_KV_H
#define RQDISK_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * One item of a spec: key (klen bytes) and, after its first '=', val
 * (vlen bytes, perhaps none); val is NULL where the item has no '='.
 * Neither is NUL-ended.  Return 0 to go on, anything else (a -errno,
 * with why filled) to stop the walk there with it.
 */
typedef int (*kv_fn)(void *opaque, const char *key, size_t klen, const char *val, size_t vlen);

/*
 * Each item of spec, what lies before, between and after its commas, in
 * order, handed to fn; repeated keys are handed each time, for the caller
 * to let the last win.  A NULL or empty spec has no items, nor has what
 * follows a comma at the end.  Any other empty item (",," or a leading
 * ',') goes to fn as an empty key with no value, for fn to refuse as it
 * refuses a key it does not know.  Returns the first nonzero fn returned,
 * or 0.
 */
int kv_walk(const char *spec, kv_fn fn, void *opaque);

/* key (klen bytes, not NUL-ended) is name. */
static inline bool kv_key_is(const char *key, size_t klen, const char *name)
{
	return strlen(name) == klen && !strncmp(name, key, klen);
}

#endif
