/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * model_hdd.c - a disk with one arm: seek by a Ruemmler-Wilkes curve, wait
 * for the platter to turn, transfer at the media rate.  The image is spread
 * over the whole stroke, so seek distances are those of a full disk.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

struct hdd_params {
	double cylinders;
	double rpm;
	double spt;       /* sectors per track: with rpm, the media rate */
	double seek_a;    /* ms: short seeks take a + b * sqrt(d) ... */
	double seek_b;
	double seek_knee; /* ... up to this many cylinders, ... */
	double seek_c;    /* ... and c + e * d beyond */
	double seek_e;
	double overhead;  /* ms the controller spends on every request */
	double depth;     /* requests the drive accepts at once (it serves one) */
};

/* 7200 rpm, 147 MB/s, about 8.5 ms average seek over random pairs of cylinders. */
static const struct hdd_params hdd_defaults = {
	.cylinders = 100000,
	.rpm = 7200,
	.spt = 2400,
	.seek_a = 1.0,
	.seek_b = 0.051,
	.seek_knee = 10000,
	.seek_c = 5.0,
	.seek_e = 0.00011,
	.overhead = 0.1,
	.depth = 1,
};

/* Ruemmler and Wilkes' figures for the HP 97560 (1994). */
static const struct hdd_params hdd_hp97560 = {
	.cylinders = 1962,
	.rpm = 4002,
	.spt = 72,
	.seek_a = 3.24,
	.seek_b = 0.400,
	.seek_knee = 383,
	.seek_c = 8.00,
	.seek_e = 0.008,
	.overhead = 2.2,
	.depth = 1,
};

#define HDD_KEY(key, u, lo, hi, h)                                                  \
	{                                                                           \
		.name = #key, .help = h,                                            \
		.data = &(const struct model_key){ u, lo, hi,                       \
						   offsetof(struct hdd_params, key) } \
	}

const struct dev_key hdd_keys[] = {
	HDD_KEY(cylinders, "", 1, 1e9, "cylinders of the disk"),
	HDD_KEY(rpm, "", 1, 1e6, "revolutions per minute"),
	HDD_KEY(spt, "sectors", 1, 1e9, "sectors per track"),
	HDD_KEY(seek_a, "ms", 0, 1e4, "ms of a short seek's fixed part"),
	HDD_KEY(seek_b, "ms", 0, 1e4, "ms times the square root of a short seek's cylinders"),
	HDD_KEY(seek_knee, "cylinders", 0, 1e9, "cylinders where a seek becomes a long one"),
	HDD_KEY(seek_c, "ms", 0, 1e4, "ms of a long seek's fixed part"),
	HDD_KEY(seek_e, "ms", 0, 1e4, "ms per cylinder of a long seek"),
	HDD_KEY(overhead, "ms", 0, 1e4, "ms of the controller per request"),
	HDD_KEY(depth, "", 1, 65536, "requests the drive accepts at once"),
	{ .name = "preset", .help = "hp97560: Ruemmler and Wilkes' HP 97560; keys after it change it" },
	{ .name = NULL },
};

struct hdd {
	struct disk_model m;
	struct hdd_params p;
	sector_t capacity;
	uint64_t rotation_ns;
	uint64_t free_at;     /* when the arm is done with what it has */
	uint64_t cylinder;    /* where the head is */
	sector_t next_sector; /* the sector after the last one transferred */
};

/* A sector past the capacity (a caller's bug) is on the last cylinder, not past the stroke. */
static uint64_t hdd_cylinder(const struct hdd *h, sector_t sector)
{
	if (sector >= h->capacity)
		return (uint64_t)h->p.cylinders - 1;
	return (uint64_t)((double)sector * h->p.cylinders / (double)h->capacity);
}

static uint64_t hdd_seek_ns(const struct hdd *h, uint64_t to)
{
	double d = (double)(to > h->cylinder ? to - h->cylinder : h->cylinder - to);
	double ms;

	if (d == 0)
		return 0;
	if (d <= h->p.seek_knee)
		ms = h->p.seek_a + h->p.seek_b * sqrt(d);
	else
		ms = h->p.seek_c + h->p.seek_e * d;
	return ns_of(ms * NSEC_PER_MSEC);
}

/* The platter turns from time 0 on; a sector passes under the head once a turn. */
static uint64_t hdd_rotate_ns(const struct hdd *h, sector_t sector, uint64_t at)
{
	uint64_t phase = at % h->rotation_ns;
	uint64_t target = (uint64_t)((double)(sector % (sector_t)h->p.spt) *
				     (double)h->rotation_ns / h->p.spt);

	return (target + h->rotation_ns - phase) % h->rotation_ns;
}

static uint64_t hdd_transfer_ns(const struct hdd *h, unsigned int nr_sectors)
{
	return ns_of((double)nr_sectors * (double)h->rotation_ns / h->p.spt);
}

/*
 * A request that starts where the last one ended streams from the drive's
 * track buffer: no seek, no turn to wait.  Anything else positions first.
 * Flushes and discards only cost the controller's time.
 */
static uint64_t hdd_service(struct disk_model *m, const struct model_io *io, uint64_t now)
{
	struct hdd *h = (struct hdd *)m;
	uint64_t t = add_ns(max_u64(now, h->free_at), ns_of(h->p.overhead * NSEC_PER_MSEC));

	if (op_has_data(io->op) && io->nr_sectors) {
		if (io->sector != h->next_sector) {
			uint64_t to = hdd_cylinder(h, io->sector);

			t = add_ns(t, hdd_seek_ns(h, to));
			t = add_ns(t, hdd_rotate_ns(h, io->sector, t));
			h->cylinder = to;
		}
		t = add_ns(t, hdd_transfer_ns(h, io->nr_sectors));
		h->next_sector = io->sector + io->nr_sectors;
		h->cylinder = hdd_cylinder(h, h->next_sector - 1);
	}
	h->free_at = t;
	return t;
}

static void hdd_destroy(struct disk_model *m)
{
	free(m);
}

static int hdd_preset(void *params, const char *name)
{
	if (strcmp(name, "hp97560"))
		return -EINVAL;
	*(struct hdd_params *)params = hdd_hp97560;
	return 0;
}

static struct disk_model *hdd_create(const void *params, sector_t capacity, char *why,
				     size_t whylen)
{
	struct hdd *h = calloc(1, sizeof(*h));

	if (!h) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	h->p = *(const struct hdd_params *)params;
	h->capacity = capacity;
	h->rotation_ns = (uint64_t)(60e9 / h->p.rpm);
	h->m.type = &hdd_model_type;
	h->m.depth = (unsigned int)h->p.depth;
	h->m.destroy = hdd_destroy;
	h->m.service = hdd_service;
	h->m.params = &h->p;
	return &h->m;
}

const struct model_type hdd_model_type = {
	.name = "hdd",
	.rotational = true,
	.keys = hdd_keys,
	.params_size = sizeof(struct hdd_params),
	.defaults = &hdd_defaults,
	.preset = hdd_preset,
	.create = hdd_create,
};
