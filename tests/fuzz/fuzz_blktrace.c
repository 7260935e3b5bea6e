/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_blktrace.c - fuzz target: the blktrace reader on any bytes, as one to
 * three per-cpu files NAME.blktrace.N (the first byte says how many), then the
 * replay's reading of the same trace.  The merged records must come out in
 * time order, and what replay loads must be replayable.
 */
#include <string.h>
#include <unistd.h>

#include "blktrace_read.h"
#include "fuzz.h"

static char dir[] = "/tmp/fuzz-blktrace.XXXXXX";
static char name[sizeof(dir) + 8];

static void remove_files(void)
{
	char path[sizeof(name) + 32];

	for (int cpu = 0; cpu < 3; cpu++) {
		snprintf(path, sizeof(path), "%s.blktrace.%d", name, cpu);
		unlink(path);
	}
}

static void remove_dir(void)
{
	remove_files();
	rmdir(dir);
}

static void write_file(int cpu, const uint8_t *data, size_t size)
{
	char path[sizeof(name) + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s.blktrace.%d", name, cpu);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
}

static void check_events(const struct bt_trace *bt)
{
	for (size_t i = 1; i < bt->nr; i++)
		FUZZ_ASSERT(bt->ev[i - 1].time <= bt->ev[i].time);
	for (size_t i = 0; i < bt->nr; i++)
		FUZZ_ASSERT(memchr(bt->ev[i].comm, '\0', sizeof(bt->ev[i].comm)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay_trace t;
	struct bt_trace bt;
	char why[512] = "";
	size_t nr_files, part;

	if (!size)
		return 0;
	if (!name[0]) {
		if (!mkdtemp(dir))
			abort();
		snprintf(name, sizeof(name), "%s/t", dir);
		atexit(remove_dir);
	}
	remove_files();
	nr_files = data[0] % 3 + 1;
	data++;
	size--;
	part = size / nr_files;
	for (size_t i = 0; i < nr_files; i++)
		write_file((int)i, data + i * part, i == nr_files - 1 ? size - i * part : part);

	if (!bt_trace_load(name, &bt, why, sizeof(why))) {
		check_events(&bt);
		bt_trace_free(&bt);
	} else {
		FUZZ_ASSERT(why[0] && !strchr(why, '\n'));
	}
	if (!replay_load(name, &t, why, sizeof(why))) {
		fuzz_check_trace(&t);
		replay_trace_free(&t);
	}
	return 0;
}
