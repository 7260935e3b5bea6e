/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_crash_log.c - fuzz target: rqdisk-crash's log parser on any bytes
 * (the first byte picks the image's size).  A log it takes has every entry
 * inside the image and its data inside the log, and its gap (if any) is
 * between two of its marks; the states of its first points, past the gap
 * too, resolve, and their IDs read back the same; every --at is taken or
 * refused in one line; the marks each state has passed are told in one line.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "crash_log.h"
#include "crash_state.h"

#define MAX_STATES 200

static void check_states(const struct crash_log *log)
{
	struct crash_gen_opts o = { .drop = 1, .sample = 2, .torn = true, .atomic = 512,
				    .past_gaps = true };
	struct crash_at at = { .kinds = AT_FLUSH | AT_FUA, .every = 3 };
	struct crash_gen g;
	struct crash_id id, back;
	struct crash_spec spec;
	enum crash_class cls;
	char why[256];

	if (crash_at_check(log, &at, why, sizeof(why)))
		FUZZ_ASSERT(why[0] && !strchr(why, '\n'));
	if (crash_gen_init(&g, log, &at, &o))
		return;
	for (int n = 0; n < MAX_STATES && crash_gen_next(&g, &id, &cls) == 1; n++) {
		char *text = crash_id_format(&id), *again, *marks;

		FUZZ_ASSERT(text);
		FUZZ_ASSERT(!crash_resolve(log, &id, &spec, why, sizeof(why)));
		FUZZ_ASSERT(spec.pos <= log->nr);
		marks = crash_marks_text(log, spec.pos);
		FUZZ_ASSERT(marks && !strchr(marks, '\n'));
		free(marks);
		FUZZ_ASSERT(!crash_id_parse(text, &back, why, sizeof(why)));
		again = crash_id_format(&back);
		FUZZ_ASSERT(again && !strcmp(again, text));
		free(again);
		free(text);
		crash_id_free(&back);
		crash_id_free(&id);
	}
	crash_gen_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct crash_log log;
	uint64_t image;
	char why[256] = "";
	int ret;

	if (!size)
		return 0;
	image = (uint64_t)data[0] << 12;
	ret = crash_log_parse(data + 1, size - 1, image, &log, why, sizeof(why));
	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL || ret == -ENOMEM);
		FUZZ_ASSERT(why[0] && !strchr(why, '\n'));
		return 0;
	}
	for (size_t i = 0; i < log.nr; i++) {
		const struct crash_entry *e = &log.e[i];

		FUZZ_ASSERT(e->off <= image && e->len <= image - e->off);
		if (e->data)
			FUZZ_ASSERT(e->data >= data + 1 && e->data + e->len <= data + size);
		if (e->mark)
			FUZZ_ASSERT((const uint8_t *)e->mark + e->mark_len <= data + size);
	}
	FUZZ_ASSERT(log.gap_off < 0 ||
		    ((size_t)log.gap_off < log.gap_on && log.gap_on <= log.nr &&
		     (log.e[log.gap_off].flags & LOG_MARK_FLAG)));
	check_states(&log);
	crash_log_free(&log);
	return 0;
}
