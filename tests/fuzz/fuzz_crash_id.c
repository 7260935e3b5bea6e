/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_crash_id.c - fuzz target: rqdisk-crash's state ID parser on any
 * string.  What it takes prints back as the same text (one spelling per
 * state); what it refuses, it refuses in one line.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "crash_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size, 4096), *text, why[256] = "";
	struct crash_id id, back;
	int ret = crash_id_parse(s, &id, why, sizeof(why));

	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL || ret == -ENOMEM);
		FUZZ_ASSERT(why[0] && !strchr(why, '\n'));
		free(s);
		return 0;
	}
	text = crash_id_format(&id);
	FUZZ_ASSERT(text && !strcmp(text, s));
	FUZZ_ASSERT(!crash_id_parse(text, &back, why, sizeof(why)));
	FUZZ_ASSERT(back.kind == id.kind && back.k == id.k && back.nr_drop == id.nr_drop);
	FUZZ_ASSERT(back.name_len == id.name_len);
	for (size_t i = 1; i < id.nr_drop; i++)
		FUZZ_ASSERT(id.drop[i] > id.drop[i - 1]);
	crash_id_free(&back);
	crash_id_free(&id);
	free(text);
	free(s);
	return 0;
}
