/* SPDX-License-Identifier: BSD-3-Clause */
/* log_order.c - the shared order file of several disks' logs read back (log_order.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_order.h"

/* One line's disk number: decimal, no sign, no leading zero, below nr_disks; else -1. */
static int order_disk(const char *p, size_t n, unsigned int nr_disks)
{
	unsigned int d = 0;

	if (!n || n > 2 || (n > 1 && p[0] == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		d = d * 10 + (unsigned int)(p[i] - '0');
	}
	return d < nr_disks ? (int)d : -1;
}

int log_order_parse(const char *text, size_t len, unsigned int nr_disks, uint8_t **disks,
		    size_t *nr, char *why, size_t whylen)
{
	size_t hlen = strlen(LOG_ORDER_HEADER), line = 1, n = 0;
	const char *p = text + hlen, *end = text + len;
	uint8_t *out;

	*disks = NULL;
	*nr = 0;
	if (len < hlen || memcmp(text, LOG_ORDER_HEADER, hlen)) {
		snprintf(why, whylen, "line 1: not an rqdisk log order (no \"rqdisk-log-order 1\")");
		return -EINVAL;
	}
	out = malloc(len - hlen ? (len - hlen + 1) / 2 : 1); /* at least 2 bytes a line */
	if (!out) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		int d;

		line++;
		if (!nl) {
			snprintf(why, whylen, "line %zu: cut short (no newline at the end)", line);
			goto bad;
		}
		d = order_disk(p, (size_t)(nl - p), nr_disks);
		if (d < 0) {
			snprintf(why, whylen, "line %zu: '%.*s' is not a disk number below %u", line,
				 (int)(nl - p < 20 ? nl - p : 20), p, nr_disks);
			goto bad;
		}
		out[n++] = (uint8_t)d;
		p = nl + 1;
	}
	*disks = out;
	*nr = n;
	return 0;
bad:
	free(out);
	return -EINVAL;
}
