/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend.h - the backends: one table of them, keyed by the scheme of the
 * image each serves, and the macro a backend describes itself with.
 */
#ifndef RQDISK_BACKEND_H
#define RQDISK_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "device.h"

/*
 * A backend's one ops table: DEV_REGISTER's (device.h), with the scheme
 * as both its name and its symbol's, dev_SCHEME_ops, the one a backend
 * built as a module exports and the loader looks for:
 *
 *   BACKEND_REGISTER(nbd, .rq_pdu_size = sizeof(struct nbd_rq), .open = nbd_open, ...);
 */
#define BACKEND_REGISTER(scheme, ...) DEV_REGISTER(scheme, #scheme, .backend = true, __VA_ARGS__)

/* One line of the daemon's registry (backend.c). */
struct backend_type {
	const char *scheme; /* the backend's name, and its IMAGE scheme where it claims one */
	/* Built in; NULL: built as a module, backend-SCHEME.so, loaded when an image needs it. */
	const struct dev_ops *ops;
	/* Whether IMAGE is this backend's (a URI, a spec).  NULL: chosen by name alone. */
	bool (*claims)(const char *image);
	bool remote; /* no file here: the disk's size and mode come from the backend */
};

/* Every backend this rqdisk was built with, in registry order, ending with a NULL scheme. */
const struct backend_type *backend_list(void);
/* The backend of that scheme this rqdisk was built with, or NULL. */
const struct backend_type *backend_find(const char *scheme);
/*
 * The backend that serves IMAGE: the one that claims it, else "null" for
 * --null and "file" for a path.
 */
const struct backend_type *backend_for_image(const char *image, bool null);
/*
 * Its ops table: the built-in one, or the module's, loaded now (and never
 * unloaded).  NULL with a one-line reason, naming the module, in why.
 */
const struct dev_ops *backend_ops(const struct backend_type *b, char *why, size_t whylen);

#endif
