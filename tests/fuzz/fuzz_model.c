/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_model.c - fuzz target: the --model spec parser, then the model it
 * builds on a few requests.  The input is CAPACITY (8 bytes), a few requests
 * (16 bytes each: sector, size, op, a time step) up to a NUL, then the spec.
 * A request never completes before it was handed over, and describe's text
 * reads back as the same model.
 */
#include <string.h>

#include "fuzz.h"
#include "model.h"

#define MAX_SPEC 256
#define MAX_IOS 16

static uint64_t take_u64(const uint8_t **data, size_t *size)
{
	uint64_t v = 0;
	size_t n = *size < sizeof(v) ? *size : sizeof(v);

	memcpy(&v, *data, n);
	*data += n;
	*size -= n;
	return v;
}

static void run_ios(struct disk_model *m, sector_t capacity, const uint8_t *ios, size_t nr)
{
	uint64_t now = 0;

	for (size_t i = 0; i < nr; i++, ios += 16) {
		struct model_io io;
		uint64_t sector, step, done;

		memcpy(&sector, ios, sizeof(sector));
		memcpy(&step, ios + 8, sizeof(step));
		io.op = (enum req_op)(ios[12] % 5);
		io.flags = ios[13] & 1 ? REQ_FUA : 0;
		io.sector = sector % capacity;
		/* up to what one request may hold, and inside the disk */
		io.nr_sectors = (unsigned int)((step & 0xffff) % (capacity - io.sector) + 1);
		if (!op_has_data(io.op) && io.op != REQ_OP_DISCARD)
			io.nr_sectors = 0;
		now += step >> 24 > UINT64_MAX - now ? 0 : step >> 24;
		done = disk_model_service(m, &io, now);
		FUZZ_ASSERT(done >= now);
	}
}

/* describe's "hdd rpm=7200 ..." as a spec, "hdd:rpm=7200,...", to build the model again. */
static void check_describe(const struct disk_model *m, sector_t capacity)
{
	char desc[1024], spec[1024], again[1024], why[256];
	struct disk_model *m2;
	int n = disk_model_describe(m, desc, sizeof(desc));

	FUZZ_ASSERT(n > 0 && (size_t)n < sizeof(desc));
	memcpy(spec, desc, (size_t)n + 1);
	for (char *p = strchr(spec, ' '), sep = ':'; p; p = strchr(p, ' '), sep = ',')
		*p = sep;
	FUZZ_ASSERT(!disk_model_new(spec, capacity, &m2, why, sizeof(why)));
	disk_model_describe(m2, again, sizeof(again));
	FUZZ_ASSERT(!strcmp(desc, again));
	disk_model_free(m2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sector_t capacity = take_u64(&data, &size);
	const uint8_t *ios = data, *nul = memchr(data, '\0', size);
	size_t nr = nul ? (size_t)(nul - data) / 16 : 0;
	struct disk_model *m;
	char why[256] = "", *spec;

	if (nul) {
		size -= (size_t)(nul - data) + 1;
		data = nul + 1;
	}
	spec = fuzz_string(data, size, MAX_SPEC);
	if (disk_model_new(spec, capacity, &m, why, sizeof(why))) {
		FUZZ_ASSERT(why[0]); /* it may echo a newline the spec holds */
	} else if (m) {
		FUZZ_ASSERT(disk_model_depth(m) >= 1);
		check_describe(m, capacity);
		run_ios(m, capacity, ios, nr < MAX_IOS ? nr : MAX_IOS);
		disk_model_free(m);
	}
	free(spec);
	return 0;
}
