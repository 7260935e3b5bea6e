/* SPDX-License-Identifier: BSD-3-Clause */
/* kv.c - the walk over "KEY=VALUE,KEY=VALUE" specs that the layers' parsers share. */
#include "kv.h"

int kv_walk(const char *spec, kv_fn fn, void *opaque)
{
	const char *s = spec ? spec : "";

	while (*s) {
		size_t len = strcspn(s, ",");
		const char *eq = memchr(s, '=', len);
		size_t klen = eq ? (size_t)(eq - s) : len;
		int ret = fn(opaque, s, klen, eq ? eq + 1 : NULL, eq ? len - klen - 1 : 0);

		if (ret)
			return ret;
		s += len + (s[len] == ',');
	}
	return 0;
}
