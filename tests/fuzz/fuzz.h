/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz.h - what every fuzz target shares: libFuzzer's entry point, and a way
 * to fail loudly that both libFuzzer and the standalone driver report.
 */
#ifndef RQDISK_FUZZ_H
#define RQDISK_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "replay.h"

/*
 * One input, any bytes.  Returns 0; a bug is a crash, a sanitizer report or
 * FUZZ_ASSERT failing.  libFuzzer calls it in a loop; without --enable-fuzzing
 * tests/fuzz/standalone.c calls it once for every file of the target's corpus.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property of the code under test that no input may break: abort, which the fuzzer keeps. */
#define FUZZ_ASSERT(cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: fuzz property broken: %s\n", __FILE__, __LINE__,   \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The input as a NUL-terminated string of at most max bytes: the caller frees it. */
static inline char *fuzz_string(const uint8_t *data, size_t size, size_t max)
{
	size_t n = size < max ? size : max;
	char *s = malloc(n + 1);

	if (!s)
		abort();
	for (size_t i = 0; i < n; i++)
		s[i] = data[i] ? (char)data[i] : ' '; /* a NUL would hide the rest */
	s[n] = '\0';
	return s;
}

/* What any loaded trace must be for the engine: times that never go back, I/Os inside it. */
static inline void fuzz_check_trace(const struct replay_trace *t)
{
	uint64_t prev = 0;

	for (size_t i = 0; i < t->nr; i++) {
		const struct replay_io *io = &t->ios[i];

		FUZZ_ASSERT(io->time >= prev);
		FUZZ_ASSERT(io->time <= REPLAY_MAX_NS);
		prev = io->time;
		FUZZ_ASSERT(io->sector <= REPLAY_MAX_SECTOR - io->nr_sectors);
		FUZZ_ASSERT(io->sector + io->nr_sectors <= t->capacity);
		if (op_has_data(io->op))
			FUZZ_ASSERT((uint64_t)io->nr_sectors << SECTOR_SHIFT <= t->max_bytes);
	}
}

#endif
