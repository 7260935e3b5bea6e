/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_files.c - the states as the checkers see them: files of a FUSE mount, or copies. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash_run.h"

/* The next state to check; one folded into an earlier state is reported with that one's verdict. */
static int next_picked(struct run *r, struct crash_id *id, enum crash_class *cls)
{
	struct dedup_rep *rep;
	int ret;

	while ((ret = crash_pick_next(&r->pick, id, cls, &rep)) == 1) {
		count_past_gap(r, id);
		if (!rep)
			break;
		ret = dedup_fold(&r->dedup, rep, id, *cls);
		crash_id_free(id);
		if (ret)
			break;
	}
	return ret;
}

int next_state(void *ctx, struct crash_id *id, enum crash_class *cls)
{
	struct run *r = ctx;
	int ret;

	/* a state read from a truncated log is not one to report on: the run ends here */
	if (!log_intact(r))
		return -EIO;
	if (!r->o->state) {
		ret = next_picked(r, id, cls);
		if (ret < 0)
			fprintf(stderr, PROG ": out of memory\n");
		return ret;
	}
	if (r->single_done)
		return 0;
	r->single_done = true;
	*cls = r->single.torn ? CLASS_TORN : r->single.nr_drop ? CLASS_DROP : CLASS_PREFIX;
	return crash_id_copy(id, &r->single) ? -ENOMEM : 1;
}

/* The state as an overlay; shared says to build on (and advance) the run's durable layer. */
int build_ovl(struct run *r, const struct crash_id *id, struct ovl *ovl, bool shared)
{
	struct crash_spec spec;
	char why[512];
	int ret = crash_resolve(&r->log, id, &spec, why, sizeof(why));

	if (ret) {
		fprintf(stderr, PROG ": %s\n", why);
		return ret;
	}
	ret = shared ? ovl_layer_advance(&r->durable, &r->log, spec.pos) : 0;
	if (!ret)
		ret = ovl_build(ovl, &r->log, &spec, r->base_fd, r->size,
				shared ? r->durable : NULL);
	if (ret)
		fprintf(stderr, PROG ": out of memory\n");
	return ret;
}

/* The most one variable of a program's environment may hold, with its name, '=' and NUL. */
#define ENV_STRING_MAX (32 * 4096)

/* RQDISK_CRASH_MARKS of state id: the marks its point has passed, malloc'd; NULL (said). */
char *marks_of(void *ctx, const struct crash_id *id)
{
	struct run *r = ctx;
	struct crash_spec spec;
	char why[512], *text;

	if (crash_resolve(&r->log, id, &spec, why, sizeof(why))) {
		fprintf(stderr, PROG ": %s\n", why);
		return NULL;
	}
	text = crash_marks_text(&r->log, spec.pos);
	if (!text) {
		fprintf(stderr, PROG ": out of memory\n");
	} else if (strlen(text) + sizeof("RQDISK_CRASH_MARKS=") > ENV_STRING_MAX) {
		fprintf(stderr, PROG ": RQDISK_CRASH_MARKS would be %zu bytes, more than a "
			"program's environment variable may hold (%d): the log has too many "
			"mark names\n", strlen(text), ENV_STRING_MAX);
		free(text);
		text = NULL;
	}
	return text;
}

struct copy_state {
	char path[4096];
};

int build_state(void *ctx, const struct crash_id *id, char *path, size_t pathlen, void **st)
{
	struct run *r = ctx;
	struct ovl *ovl = malloc(sizeof(*ovl));
	struct copy_state *c;
	uint64_t handle;
	int fd, ret;

	if (!ovl || build_ovl(r, id, ovl, true)) {
		free(ovl);
		return -ENOMEM;
	}
	if (r->srv) {
		ret = server_add(r->srv, ovl, path, pathlen, &handle);
		if (ret) {
			ovl_free(ovl);
			free(ovl);
			return ret;
		}
		*st = (void *)(uintptr_t)handle;
		return 0;
	}
	c = malloc(sizeof(*c));
	ret = c ? 0 : -ENOMEM;
	if (c) {
		snprintf(c->path, sizeof(c->path), "%s/state.%llu", r->tmpdir,
			 (unsigned long long)r->serial++);
		fd = open(c->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		ret = fd < 0 ? -errno : ovl_write_image(ovl, fd);
		if (fd >= 0 && close(fd) && !ret)
			ret = -errno;
		if (ret) {
			/* a write from the map faults (EFAULT) once the log is truncated */
			if (log_intact(r))
				fprintf(stderr, PROG ": %s: %s\n", c->path, strerror(-ret));
			unlink(c->path);
			free(c);
		}
	}
	ovl_free(ovl);
	free(ovl);
	if (ret)
		return ret;
	snprintf(path, pathlen, "%s", c->path);
	*st = c;
	return 0;
}

void release_state(void *ctx, void *st)
{
	struct run *r = ctx;
	struct copy_state *c = st;

	if (r->srv) {
		server_remove(r->srv, (uint64_t)(uintptr_t)st);
		return;
	}
	unlink(c->path);
	free(c);
}

int make_tmpdir(struct run *r)
{
	const char *t = getenv("TMPDIR");

	if (asprintf(&r->tmpdir, "%s/rqdisk-crash.XXXXXX", t && *t ? t : "/tmp") < 0) {
		r->tmpdir = NULL;
		return -ENOMEM;
	}
	if (!mkdtemp(r->tmpdir)) {
		fprintf(stderr, PROG ": cannot make a directory %s: %s\n", r->tmpdir,
			strerror(errno));
		free(r->tmpdir);
		r->tmpdir = NULL;
		return -errno;
	}
	return 0;
}

/* The FUSE mount, or copies: auto falls back to copies, saying so in one line. */
int start_via(struct run *r, const char **via)
{
	char why[512];
	int ret, fd;

	*via = "copy";
	if (r->o->via == VIA_COPY)
		return 0;
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, sizeof(why), "/dev/fuse: %s", strerror(errno));
		ret = -ENODEV;
	} else {
		close(fd);
		ret = asprintf(&r->mnt, "%s/mnt", r->tmpdir) < 0 ? -ENOMEM : 0;
		if (ret)
			r->mnt = NULL;
		else if (mkdir(r->mnt, 0700))
			ret = -errno;
		if (!ret)
			ret = server_start(&r->srv, r->mnt, r->size, why, sizeof(why));
	}
	if (!ret) {
		*via = "fuse";
		return 0;
	}
	if (r->o->via == VIA_FUSE) {
		fprintf(stderr, PROG ": --via fuse: %s\n", why);
		return ret;
	}
	fprintf(stderr, PROG ": FUSE is not available (%s): states are written as copies (--via copy)\n",
		why);
	return 0;
}

void cleanup(struct run *r)
{
	if (r->srv)
		server_stop(r->srv);
	r->srv = NULL;
	if (r->mnt) {
		rmdir(r->mnt);
		free(r->mnt);
		r->mnt = NULL;
	}
	if (r->tmpdir) {
		if (rmdir(r->tmpdir))
			fprintf(stderr, PROG ": cannot remove %s: %s\n", r->tmpdir, strerror(errno));
		free(r->tmpdir);
		r->tmpdir = NULL;
	}
}
