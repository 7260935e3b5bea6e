/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend.c - the daemon's registry of backends, one line each: file and
 * null live on the io_uring loop and are linked in; nbd and rbd are
 * modules, so that a daemon serving a file never maps libnbd or librbd.
 * rqdisk-replay's sim backend is not here: the replay links neither the
 * loop nor the modules, and opens its stack over dev_sim_ops itself.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "backend_module.h"
#include "backend_nbd.h"
#include "backend_uring.h"
#include "rbd_spec.h"

/*
 * First match wins: the backends that claim an image by its scheme come
 * first.  One line each, the one place a backend is named outside its files.
 */
static const struct backend_type backends[] = {
#ifdef HAVE_LIBNBD
	{ .scheme = "nbd", .claims = nbd_is_uri, .remote = true },
#endif
#ifdef HAVE_LIBRBD
	{ .scheme = "rbd", .claims = rbd_is_spec, .remote = true },
#endif
	{ .scheme = "null", .ops = &dev_null_ops },
	{ .scheme = "file", .ops = &dev_file_ops },
	{ .scheme = NULL },
};
#define NR_BACKENDS (sizeof(backends) / sizeof(backends[0]) - 1)

const struct backend_type *backend_list(void)
{
	return backends;
}

const struct backend_type *backend_find(const char *scheme)
{
	for (size_t i = 0; i < NR_BACKENDS; i++)
		if (!strcmp(backends[i].scheme, scheme))
			return &backends[i];
	return NULL;
}

const struct backend_type *backend_for_image(const char *image, bool null)
{
	for (size_t i = 0; i < NR_BACKENDS; i++)
		if (backends[i].claims && backends[i].claims(image))
			return &backends[i];
	return backend_find(null ? "null" : "file");
}

const struct dev_ops *backend_ops(const struct backend_type *b, char *why, size_t whylen)
{
	char symbol[64];

	if (b->ops)
		return b->ops;
	snprintf(symbol, sizeof(symbol), "dev_%s_ops", b->scheme); /* BACKEND_REGISTER's */
	return backend_module_load(b->scheme, symbol, why, whylen);
}
