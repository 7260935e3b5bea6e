/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_module.c - the nbd and rbd backends as modules: a daemon serving
 * a file never maps libnbd or librbd, nor locks them with mlockall().
 */
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend_module.h"

#ifndef RQDISK_PKGLIBDIR
#error "RQDISK_PKGLIBDIR: where make install puts the backend modules"
#endif

/*
 * RQDISK_BACKEND_DIR is taken as --elevator PATH is: from whoever starts
 * the daemon, except where it runs with privileges they lack (setcap, as
 * rqdisk(8) suggests, or setuid): their module would run with them.  A
 * path with a slash is all dlopen() is ever given, so the loader's own
 * search (LD_LIBRARY_PATH) plays no part.
 */
static const char *backend_module_dir(void)
{
	const char *dir = secure_getenv(BACKEND_DIR_ENV);

	return dir && *dir ? dir : RQDISK_PKGLIBDIR;
}

const struct dev_ops *backend_module_load(const char *name, const char *symbol, char *why,
					  size_t whylen)
{
	const struct dev_ops *ops;
	char path[PATH_MAX];
	void *handle;

	if ((size_t)snprintf(path, sizeof(path), "%s/backend-%s.so", backend_module_dir(), name) >=
	    sizeof(path)) {
		snprintf(why, whylen, "the %s backend module: %s is too long", name,
			 BACKEND_DIR_ENV);
		return NULL;
	}
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		snprintf(why, whylen, "cannot load the %s backend module %s: %s", name, path,
			 dlerror());
		return NULL;
	}
	ops = dlsym(handle, symbol);
	if (!ops) {
		snprintf(why, whylen, "%s is not rqdisk's %s backend module: it has no %s", path,
			 name, symbol);
		goto refuse;
	}
	if (ops->api_version != DEV_API_VERSION) { /* a module left from another install */
		snprintf(why, whylen, "the %s backend module %s is built for device API %d, not %d",
			 name, path, ops->api_version, DEV_API_VERSION);
		goto refuse;
	}
	if (ops->size && ops->size < offsetof(struct dev_ops, submit) + sizeof(ops->submit)) {
		snprintf(why, whylen, "the %s backend module %s: its ops table is too small (%u bytes)",
			 name, path, ops->size);
		goto refuse;
	}
	return ops; /* the stack keeps the table: the module stays */
refuse:
	dlclose(handle);
	return NULL;
}
