/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_module.c - the nbd and rbd backends as modules: a daemon serving
 * a file never maps libnbd or librbd, nor locks them with mlockall().
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend_module.h"

#ifndef RQDISK_PKGLIBDIR
#error "RQDISK_PKGLIBDIR: where make install puts the backend modules"
#endif

/*
 * Whether path (a module) and every directory above it can be changed by
 * nobody but root and the user who runs rqdisk: owned by one of them, and
 * writable by no group or other (a sticky directory, as /tmp, lets no one
 * else rename what is not theirs).
 */
static bool trusted_path(const char *path)
{
	char p[PATH_MAX];
	struct stat st;
	char *slash;

	if (!realpath(path, p))
		return false;
	for (;;) {
		if (stat(p, &st) || (st.st_uid && st.st_uid != getuid()))
			return false;
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
		    !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX)))
			return false;
		if (!strcmp(p, "/"))
			return true;
		slash = strrchr(p, '/');
		slash[slash == p] = '\0'; /* "/usr" goes to "/" */
	}
}

/*
 * An rqdisk run from its build tree (BUILD/src/daemon/rqdisk) takes the
 * module that build made, BUILD/src/backend/.libs/backend-NAME.so, without
 * being told: never one that runs with privileges its caller lacks
 * (setuid, setcap: AT_SECURE), and only a module no one but root and its
 * caller can change.  Installed, it is in no "daemon" directory beside a
 * "backend" one with the module: that one uses $(pkglibdir).
 */
static bool build_tree_dir(const char *name, char *dir, size_t len)
{
	char exe[PATH_MAX], module[PATH_MAX + 32], *slash;
	ssize_t n;

	if (getauxval(AT_SECURE))
		return false;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0'; /* BUILD/src/daemon */
	slash = strrchr(exe, '/');
	if (!slash || strcmp(slash, "/daemon"))
		return false;
	*slash = '\0'; /* BUILD/src */
	if ((size_t)snprintf(dir, len, "%s/backend/.libs", exe) >= len)
		return false;
	snprintf(module, sizeof(module), "%s/backend-%s.so", dir, name);
	return !access(module, R_OK) && trusted_path(module);
}

/*
 * RQDISK_BACKEND_DIR is taken as --elevator PATH is: from whoever starts
 * the daemon, except where it runs with privileges they lack (setcap, as
 * rqdisk(8) suggests, or setuid): their module would run with them.  Then
 * the build tree's, then the installed directory.  A path with a slash is
 * all dlopen() is ever given, so the loader's own search (LD_LIBRARY_PATH)
 * plays no part.
 */
static const char *backend_module_dir(const char *name, char *buf, size_t len)
{
	const char *dir = secure_getenv(BACKEND_DIR_ENV);

	if (dir && *dir)
		return dir;
	return build_tree_dir(name, buf, len) ? buf : RQDISK_PKGLIBDIR;
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
	char path[PATH_MAX], dir[PATH_MAX], what[PATH_MAX + 64];
	void *handle;

	if (nr_backend_modules == BACKEND_MODULES_MAX ||
	    strlen(name) >= sizeof(backend_modules[0].name)) {
		snprintf(why, whylen, "the %s backend module: too many modules, or too long a name",
			 name);
		return NULL;
	}
	m = &backend_modules[nr_backend_modules];
	if ((size_t)snprintf(path, sizeof(path), "%s/backend-%s.so",
			     backend_module_dir(name, dir, sizeof(dir)), name) >= sizeof(path)) {
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
