/* SPDX-License-Identifier: BSD-3-Clause */
/* backend_module.h - the nbd and rbd backends, loaded as modules for the images that need them. */
#ifndef RQDISK_BACKEND_MODULE_H
#define RQDISK_BACKEND_MODULE_H

#include <stddef.h>

#include "device.h"

/* Where the modules are looked for instead of the installed directory (the build tree's). */
#define BACKEND_DIR_ENV "RQDISK_BACKEND_DIR"

/*
 * The dev_ops table SYMBOL of backend-NAME.so, opened once and never
 * closed; NULL with a one-line reason, naming the module, in why.
 */
const struct dev_ops *backend_module_load(const char *name, const char *symbol, char *why,
					  size_t whylen);

#endif
