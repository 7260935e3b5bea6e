/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_iolog.c - fuzz target: the fio iolog reader (v2 and v3) on any bytes.
 * What it loads must be replayable: times that never go back, every I/O
 * inside the capacity, whole sectors, sizes the engine can hold.
 */
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay_trace t = {0};
	char why[256] = "";
	FILE *f;
	int ret;

	if (!size)
		return 0;
	f = fmemopen((void *)(uintptr_t)data, size, "r");
	if (!f)
		return 0;
	ret = replay_load_iolog(f, "fuzz", &t, why, sizeof(why));
	fclose(f);
	if (ret) {
		/* one line that names the input */
		FUZZ_ASSERT(!strncmp(why, "fuzz", 4) || !strcmp(why, "out of memory"));
		FUZZ_ASSERT(!strchr(why, '\n'));
	} else {
		fuzz_check_trace(&t);
	}
	replay_trace_free(&t);
	return 0;
}
