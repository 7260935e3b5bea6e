/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_module.c - the nbd and rbd backends as modules: a daemon serving
 * a file never maps libnbd or librbd, nor locks them with mlockall().
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * The tables of the modules loaded, copied as dev_ops_copy() says: a
 * module built before a field was added reads as not having it.  A module
 * stays loaded, and a second load of a name gives the same table.
 */
#define BACKEND_MODULES_MAX 8

static struct backend_module {
	char name[32];
	struct dev_ops ops;
} backend_modules[BACKEND_MODULES_MAX];
static unsigned int nr_backend_modules;
static pthread_mutex_t backend_modules_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct dev_ops *backend_module_loaded(const char *name)
{
	for (unsigned int i = 0; i < nr_backend_modules; i++)
		if (!strcmp(backend_modules[i].name, name))
			return &backend_modules[i].ops;
	return NULL;
}

static const struct dev_ops *backend_module_open(const char *name, const char *symbol, char *why,
						 size_t whylen)
{
	struct backend_module *m;
	const struct dev_ops *ops;
	char path[PATH_MAX], what[PATH_MAX + 64];
	void *handle;

	if (nr_backend_modules == BACKEND_MODULES_MAX ||
	    strlen(name) >= sizeof(backend_modules[0].name)) {
		snprintf(why, whylen, "the %s backend module: too many modules, or too long a name",
			 name);
		return NULL;
	}
	m = &backend_modules[nr_backend_modules];
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
	/* a module left from another install, or built before DEV_REGISTER filled the size */
	snprintf(what, sizeof(what), "the %s backend module %s", name, path);
	if (dev_ops_copy(&m->ops, ops, what, why, whylen))
		goto refuse;
	snprintf(m->name, sizeof(m->name), "%s", name);
	nr_backend_modules++;
	return &m->ops; /* the stack keeps the table: the module stays */
refuse:
	dlclose(handle);
	return NULL;
}

const struct dev_ops *backend_module_load(const char *name, const char *symbol, char *why,
					  size_t whylen)
{
	const struct dev_ops *ops;

	pthread_mutex_lock(&backend_modules_lock);
	ops = backend_module_loaded(name);
	if (!ops)
		ops = backend_module_open(name, symbol, why, whylen);
	pthread_mutex_unlock(&backend_modules_lock);
	return ops;
}
