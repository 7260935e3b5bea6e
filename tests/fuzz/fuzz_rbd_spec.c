/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_rbd_spec.c - fuzz target: the rbd backend's IMAGE parser on any
 * string after "rbd:".  What it takes has a pool and an image, no empty
 * or control-character name and no more options than it keeps; what it
 * refuses, it refuses in one line and keeps nothing.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "rbd_spec.h"

static bool clean(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size, 4096), why[256] = "";
	struct rbd_spec sp;
	int ret = rbd_spec_parse(s, &sp, why, sizeof(why));

	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL || ret == -ENOMEM);
		FUZZ_ASSERT(why[0] && !strchr(why, '\n') && strlen(why) < sizeof(why));
		FUZZ_ASSERT(!sp.buf);
		free(s);
		return 0;
	}
	FUZZ_ASSERT(sp.pool && *sp.pool && sp.image && *sp.image);
	FUZZ_ASSERT(!sp.ns || *sp.ns);
	FUZZ_ASSERT(!sp.snap || *sp.snap);
	FUZZ_ASSERT(clean(sp.pool) && clean(sp.ns) && clean(sp.image) && clean(sp.snap));
	FUZZ_ASSERT(clean(sp.conf) && clean(sp.id));
	FUZZ_ASSERT(sp.nr_opts <= RBD_SPEC_MAX_OPTS);
	for (unsigned int i = 0; i < sp.nr_opts; i++)
		FUZZ_ASSERT(*sp.keys[i] && clean(sp.keys[i]) && clean(sp.vals[i]));
	rbd_spec_free(&sp);
	free(s);
	return 0;
}
