/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * image.c - the image: which backend serves it (the registry, by its
 * scheme) and with what args; a file here made if asked (--create), its
 * time the disk's; and the disk's size and mode as the backend found them
 * (the backend opens the image itself).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "backend_nbd.h"
#include "backend_rbd.h"
#include "daemon.h"

/* Make the image: exclusively, so an existing file is never touched. */
static int create_image(struct rqdisk_state *s)
{
	int fd = open(s->opt.image, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0) {
		die_msg("%s: cannot create: %s", s->opt.image, strerror(errno));
		return -1;
	}
	s->created = true;
	if (ftruncate(fd, (off_t)s->opt.create_size)) {
		die_msg("%s: cannot make it %llu bytes: %s", s->opt.image,
			(unsigned long long)s->opt.create_size, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * --create on an image that is there: used as it is when it has the size
 * asked for; another size is refused, not served silently.
 */
static int check_create_size(const struct rqdisk_state *s, const struct stat *st)
{
	if (!s->opt.create_size || !S_ISREG(st->st_mode) ||
	    (uint64_t)st->st_size == s->opt.create_size)
		return 0;
	die_msg("image %s exists with %lld bytes: --create %llu would not make it that size",
		s->opt.image, (long long)st->st_size, (unsigned long long)s->opt.create_size);
	return -1;
}

/* Whether the registry gave the image to the backend of that scheme. */
static bool backend_is(const struct rqdisk_state *s, const char *scheme)
{
	return !strcmp(s->backend->scheme, scheme);
}

/* The URI and the NBD options, as the nbd backend opens them (NULL: no memory). */
static char *nbd_backend_args(const struct rqdisk_options *o)
{
	char *args = NULL;

	if (asprintf(&args, "%s timeout=%u,connections=%u", o->image,
		     o->nbd_timeout ? o->nbd_timeout : NBD_DEFAULT_TIMEOUT,
		     o->connections ? o->connections : 1) < 0)
		return NULL;
	return args;
}

/* The null backend's keys, then the image's absolute path, as it opens them. */
static char *null_backend_args(const struct rqdisk_options *o)
{
	char *path = absolute_path(o->image), *args = NULL;

	if (!path || !o->null_keys)
		return path;
	if (asprintf(&args, "%s %s", o->null_keys, path) < 0)
		args = NULL;
	free(path);
	return args;
}

/*
 * An image on a server (an NBD export, an RBD image), not a file here:
 * its size and mode come from the backend.
 */
bool image_is_remote(const struct rqdisk_state *s)
{
	return s->backend->remote;
}

/*
 * Over a network every request is a round trip: unless the user chose,
 * a remote image's requests carry up to 1 MiB (the most one FUSE request
 * brings) in one segment, as Linux's nbd driver takes requests of up to
 * 1280 KiB, where a local file keeps 2.6's 255 sectors.  The server's own
 * maximum still bounds them (the stack tightens the queue's limits).
 */
#define REMOTE_MAX_SECTORS 2048

void remote_request_size(struct rqdisk_state *s)
{
	struct queue_limits *lim = &s->opt.limits;

	if (!image_is_remote(s) || s->opt.request_size_set)
		return;
	lim->max_sectors = lim->max_hw_sectors = REMOTE_MAX_SECTORS;
	lim->max_segment_size = REMOTE_MAX_SECTORS << SECTOR_SHIFT;
}

/* A file here: made if asked and missing; its time is the disk's.  The backend opens it. */
int open_image(struct rqdisk_state *s)
{
	struct stat st;

	if (image_is_remote(s)) {
		clock_gettime(CLOCK_REALTIME, &s->disk.mtime);
		return 0;
	}
	if (stat(s->opt.image, &st)) {
		if (errno != ENOENT || !s->opt.create_size) {
			die_msg("image %s: %s", s->opt.image, strerror(errno));
			return -1;
		}
		if (create_image(s) || stat(s->opt.image, &st))
			return -1;
	}
	if (check_create_size(s, &st))
		return -1;
	s->disk.mtime = st.st_mtim;
	return 0;
}

/* The image's backend's ops: built in, or (nbd, rbd) loaded from its module only now. */
int backend_of(const struct rqdisk_state *s, const struct dev_ops **ops)
{
	char why[PATH_MAX + 256];

	*ops = backend_ops(s->backend, why, sizeof(why));
	if (!*ops)
		die_msg("IMAGE %s: %s", s->opt.image, why);
	return *ops ? 0 : -1;
}

/* The disk's size and whether it takes writes, as the backend found them. */
void take_export(struct rqdisk_state *s)
{
	const struct dev_limits *lim = &s->disk.stack->limits;

	s->disk.size = (uint64_t)lim->capacity << SECTOR_SHIFT;
	if (lim->read_only && !s->opt.read_only) {
		fprintf(stderr, "rqdisk: %s: the export is read-only: so is the disk\n",
			s->opt.image);
		s->opt.read_only = s->disk.read_only = true;
	}
}

/* The backend the registry gives the image, and the path or arguments it opens. */
int choose_backend(struct rqdisk_state *s)
{
	s->backend = backend_for_image(s->opt.image, s->opt.null);
	/* device/stack shows it */
	if (backend_is(s, "rbd")) /* the backend gets the text after "rbd:" */
		s->image_path = strdup(s->opt.image + strlen(RBD_SPEC_PREFIX));
	else if (backend_is(s, "nbd"))
		s->image_path = nbd_backend_args(&s->opt);
	else if (backend_is(s, "null"))
		s->image_path = null_backend_args(&s->opt);
	else
		s->image_path = absolute_path(s->opt.image);
	if (!s->image_path) {
		die_msg("image %s: %s", s->opt.image, strerror(errno));
		return -1;
	}
	return 0;
}
