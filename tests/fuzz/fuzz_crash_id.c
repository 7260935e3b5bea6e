/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_crash_id.c - fuzz target: rqdisk-crash's state ID parsers, of one
 * disk's states and of joint states (--order), on any string.  What each
 * takes prints back as the same text (one spelling per state); what it
 * refuses, it refuses in one line.  No string is both.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "crash_joint_id.h"
#include "crash_state.h"

/* s as a joint ID: taken, it prints back as s and parses again the same. */
static bool joint_id(const char *s)
{
	char why[256] = "", text[CRASH_JOINT_ID_MAX];
	struct crash_joint_state st, back;
	int ret = crash_joint_id_parse(s, &st, why, sizeof(why));

	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL);
		FUZZ_ASSERT(why[0] && !strchr(why, '\n'));
		return false;
	}
	FUZZ_ASSERT(st.nr_drop <= CRASH_JOINT_MAX_DROP);
	crash_joint_id_format(&st, text, sizeof(text));
	FUZZ_ASSERT(!strcmp(text, s));
	FUZZ_ASSERT(!crash_joint_id_parse(text, &back, why, sizeof(why)));
	FUZZ_ASSERT(back.n == st.n && back.nr_drop == st.nr_drop && back.torn == st.torn);
	for (unsigned int i = 0; i < st.nr_drop; i++)
		FUZZ_ASSERT(back.drop[i].disk == st.drop[i].disk &&
			    back.drop[i].entry == st.drop[i].entry && st.drop[i].disk < 16);
	FUZZ_ASSERT(back.torn_w.disk == st.torn_w.disk && back.torn_w.entry == st.torn_w.entry);
	FUZZ_ASSERT(back.torn_a == st.torn_a && back.torn_k == st.torn_k);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size, 4096), *text, why[256] = "";
	bool joint = joint_id(s);
	struct crash_id id, back;
	int ret = crash_id_parse(s, &id, why, sizeof(why));

	FUZZ_ASSERT(!joint || ret);
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
