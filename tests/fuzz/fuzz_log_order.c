/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_log_order.c - fuzz target: the order file of several disks' logs
 * (log_order.h) on any bytes, NULs too; the first byte says how many disks
 * (1 to 16).  A refusal is one line and keeps nothing; a take names only
 * disks below the count, and printed back is the text it came from (the
 * format has one spelling for each order).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "log_order.h"

#define TEXT_MAX 65536

static void check_taken(const char *text, size_t len, unsigned int nr_disks,
			const uint8_t *disks, size_t nr)
{
	size_t hlen = strlen(LOG_ORDER_HEADER), at = hlen;
	char *back = malloc(hlen + 3 * nr + 1);

	FUZZ_ASSERT(back);
	memcpy(back, LOG_ORDER_HEADER, hlen);
	for (size_t i = 0; i < nr; i++) {
		FUZZ_ASSERT(disks[i] < nr_disks);
		at += (size_t)sprintf(back + at, "%u\n", disks[i]);
	}
	FUZZ_ASSERT(at == len && !memcmp(back, text, len));
	free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int nr_disks;
	const char *text;
	uint8_t *disks = (uint8_t *)"";
	char why[256] = "";
	size_t n, nr = 1;
	int ret;

	if (!size)
		return 0;
	nr_disks = 1 + data[0] % LOG_ORDER_MAX_DISKS;
	text = (const char *)data + 1;
	n = size - 1 < TEXT_MAX ? size - 1 : TEXT_MAX;
	ret = log_order_parse(text, n, nr_disks, &disks, &nr, why, sizeof(why));
	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL || ret == -ENOMEM);
		FUZZ_ASSERT(ret == -ENOMEM || (why[0] && !strchr(why, '\n')));
		FUZZ_ASSERT(!disks && !nr);
	} else {
		check_taken(text, n, nr_disks, disks, nr);
	}
	free(disks);
	return 0;
}
