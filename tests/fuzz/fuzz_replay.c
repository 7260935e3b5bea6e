/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_replay.c - fuzz target: the replay engine on a small parsed trace.
 * The input is ELEVATOR, MODEL, DEPTH (a byte each) and then a fio iolog;
 * the models include extreme ones whose times run far out.  DEPTH / 9 picks
 * delay filters below the model too.  Every run must
 * end (a hang is libFuzzer's timeout, or the standalone driver's), with
 * every I/O either timed or counted as an error.
 */
#include <string.h>

#include "fuzz.h"

#define MAX_IOS 256
#define MAX_BYTES (1u << 20)

/* "none", then every built-in elevator, from the registry: a new one is fuzzed with no edit. */
static const char *fuzz_elevator(uint8_t pick)
{
    const char *const *names = elevator_names();
    size_t n = 0;

    while (names[n])
        n++;
    return names[pick % n];
}

static const char *const models[] = {
    "none",
    "hdd",
    "ssd",
    "hdd:preset=hp97560",
    "ssd:channels=1,depth=1",
    /* the slowest each model can be: an hdd's request takes up to about 1e19 ns */
    "hdd:rpm=1,cylinders=1e9,seek_knee=0,seek_c=1e4,seek_e=1e4,overhead=1e4,depth=4",
    "ssd:bandwidth=0.001,read_us=1e9,write_us=1e9,flush_us=1e9,channels=1",
};

/* Filters below the model's (replay_config.model is the top), by DEPTH / 9. */
static const char *const below_model[][2] = {
    {NULL, NULL},
    {"delay:ms=1", NULL},
    {"delay:read=0,write=5", NULL},
    {"delay:ms=100", "delay:read=3,write=0"},
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

static void check_result(const struct replay_trace *t, const struct replay_result *res)
{
	size_t data = 0, timed = res->lat[0].nr + res->lat[1].nr;

	for (size_t i = 0; i < t->nr; i++)
		data += op_has_data(t->ios[i].op);
	FUZZ_ASSERT(timed <= data);
	FUZZ_ASSERT(timed + res->errors >= data);
	FUZZ_ASSERT(res->errors <= t->nr);
	FUZZ_ASSERT(res->end_ns >= res->start_ns);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay_config cfg = {0};
	struct replay_trace t = {0};
	struct replay_result res;
	char why[256] = "";
	FILE *f;
	int ret;

	if (size < 4)
		return 0;
	cfg.elevator = fuzz_elevator(data[0]);
	cfg.model = models[data[1] % NR(models)];
	cfg.depth = data[2] % 9;
	cfg.filters = below_model[data[2] / 9 % NR(below_model)];
	cfg.nr_filters = (unsigned int)(!!cfg.filters[0] + !!cfg.filters[1]);
	blk_set_default_limits(&cfg.limits);
	f = fmemopen((void *)(uintptr_t)(data + 3), size - 3, "r");
	if (!f)
		return 0;
	ret = replay_load_iolog(f, "fuzz", &t, why, sizeof(why));
	fclose(f);
	if (!ret && t.nr && t.nr <= MAX_IOS && t.max_bytes <= MAX_BYTES) {
		ret = replay_run(&t, &cfg, &res, why, sizeof(why));
		if (ret)
			fprintf(stderr, "replay: %s\n", why);
		FUZZ_ASSERT(ret == 0);
		check_result(&t, &res);
		replay_result_free(&res);
	}
	replay_trace_free(&t);
	return 0;
}
