/* SPDX-License-Identifier: BSD-3-Clause */
/* ioprio_cache.c - the I/O priority and cgroup of each process the disk serves, asked once a while per pid. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ioprio_cache.h"

#ifndef IOPRIO_WHO_PROCESS
#define IOPRIO_WHO_PROCESS 1
#endif

static int sys_get_ioprio(void *arg, pid_t pid)
{
	long ret = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, (int)pid);

	(void)arg;
	return ret < 0 ? -errno : (int)ret;
}

static int sys_get_nice(void *arg, pid_t pid, int *nice)
{
	(void)arg;
	errno = 0; /* -1 is a nice value as well as the error return */
	*nice = getpriority(PRIO_PROCESS, (id_t)pid);
	return *nice == -1 && errno ? -errno : 0;
}

static uint64_t sys_now(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Where the cgroup v2 hierarchy is mounted, which /proc/PID/cgroup's
 * paths are under: /sys/fs/cgroup on a unified system, but
 * /sys/fs/cgroup/unified on a hybrid one (v1 controllers beside it), so
 * it is looked up, not assumed; false where none is mounted.
 */
static bool cgroup2_mount(char *dir, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	bool found = false;

	if (!f)
		return false;
	while (!found && (m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2") && strlen(m->mnt_dir) < len) {
			strcpy(dir, m->mnt_dir);
			found = true;
		}
	endmntent(f);
	return found;
}

/*
 * The v2 path, "0::PATH", of a /proc/PID/cgroup read from f: wherever it
 * is, after any number of v1 hierarchies' lines of any length (a hybrid
 * system lists a dozen).  0, -ENOENT for none (v1 alone), -ENAMETOOLONG
 * for a path of len bytes or more.
 */
int ioprio_cgroup_v2_path(FILE *f, char *path, size_t len)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = -ENOENT;

	while (ret == -ENOENT && (n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (strncmp(line, "0::/", 4))
			continue;
		ret = (size_t)n - 3 < len ? 0 : -ENAMETOOLONG;
		if (!ret)
			memcpy(path, line + 3, (size_t)n - 2);
	}
	free(line);
	return ret;
}

/* pid's v2 cgroup path, and its directory's inode: the cgroup's id. */
static int sys_get_cgroup(void *arg, pid_t pid, char *path, size_t len, uint64_t *id)
{
	char file[PATH_MAX + BLKCG_PATH_MAX], mnt[PATH_MAX];
	struct stat st;
	FILE *f;
	int ret;

	(void)arg;
	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	f = fopen(file, "re");
	if (!f)
		return -errno;
	ret = ioprio_cgroup_v2_path(f, path, len);
	fclose(f);
	if (ret)
		return ret;
	*id = 0;
	if (cgroup2_mount(mnt, sizeof(mnt))) {
		snprintf(file, sizeof(file), "%s%s", mnt, path);
		*id = stat(file, &st) ? 0 : (uint64_t)st.st_ino;
	}
	return 0;
}

static const struct ioprio_source sys_source = {sys_get_ioprio, sys_get_nice, sys_now, NULL,
						sys_get_cgroup};

void ioprio_cache_init(struct ioprio_cache *c, const struct ioprio_source *src)
{
	memset(c, 0, sizeof(*c));
	c->src = src ? *src : sys_source;
	c->refresh_ns = IOPRIO_CACHE_REFRESH_NS;
	c->cgroups_owner = c;
	pthread_mutex_init(&c->cgroups_lock, NULL);
}

void ioprio_cache_share_cgroups(struct ioprio_cache *c, struct ioprio_cache *owner)
{
	c->cgroups_owner = owner;
}

/* Linux's task_nice_ioprio(): nice -20..19 to best-effort levels 0..7. */
static unsigned short ioprio_from_nice(int nice)
{
	int level = (nice + 20) / 5;

	if (level < 0)
		level = 0;
	if (level >= IOPRIO_NR_LEVELS)
		level = IOPRIO_NR_LEVELS - 1;
	return IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, level);
}

/* Ask the source; a process that is gone, or any failure, is served at the default. */
static unsigned short ioprio_lookup(const struct ioprio_source *src, pid_t pid)
{
	int value = src->get_ioprio(src->arg, pid);
	int nice;

	if (value < 0)
		return IOPRIO_DEFAULT;
	switch (IOPRIO_PRIO_CLASS(value)) {
	case IOPRIO_CLASS_NONE:
		if (src->get_nice(src->arg, pid, &nice))
			return IOPRIO_DEFAULT;
		return ioprio_from_nice(nice);
	case IOPRIO_CLASS_RT:
	case IOPRIO_CLASS_BE:
		if (IOPRIO_PRIO_DATA(value) >= IOPRIO_NR_LEVELS)
			return IOPRIO_DEFAULT;
		return (unsigned short)value;
	case IOPRIO_CLASS_IDLE:
		return IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, IOPRIO_NR_LEVELS - 1);
	default:
		return IOPRIO_DEFAULT;
	}
}

/* pid's slot, or the one it should take: a free one, else the least recently used. */
static struct ioprio_cache_entry *ioprio_cache_slot(struct ioprio_cache *c, pid_t pid)
{
	struct ioprio_cache_entry *victim = &c->slot[0];

	for (unsigned int i = 0; i < IOPRIO_CACHE_SLOTS; i++) {
		struct ioprio_cache_entry *e = &c->slot[i];

		if (e->pid == pid)
			return e;
		if (victim->pid && (!e->pid || e->used < victim->used))
			victim = e;
	}
	victim->pid = 0;
	return victim;
}

/* Ask the source for pid's cgroup; a process that is gone, or any failure, is the root's. */
static const struct blkcg *blkcg_lookup(struct ioprio_cache *c, pid_t pid)
{
	char path[BLKCG_PATH_MAX];
	uint64_t id = 0;

	struct ioprio_cache *owner = c->cgroups_owner;
	const struct blkcg *cg;

	if (!c->src.get_cgroup || c->src.get_cgroup(c->src.arg, pid, path, sizeof(path), &id))
		return NULL;
	/* a lookup is at most one a pid a second: the lock is not on the I/O path */
	pthread_mutex_lock(&owner->cgroups_lock);
	cg = blkcg_intern(&owner->cgroups, path, id);
	pthread_mutex_unlock(&owner->cgroups_lock);
	return cg;
}

/* pid's entry, asked again if it is new or older than the refresh; NULL for no process. */
static const struct ioprio_cache_entry *ioprio_cache_entry(struct ioprio_cache *c, pid_t pid)
{
	struct ioprio_cache_entry *e;
	uint64_t now;

	/* 0 is no process (I/O the kernel started), and would ask about ourselves */
	if (pid <= 0)
		return NULL;
	e = ioprio_cache_slot(c, pid);
	e->used = ++c->uses;
	now = c->src.now(c->src.arg);
	if (e->pid != pid || now - e->looked_up >= c->refresh_ns) {
		e->pid = pid;
		e->ioprio = ioprio_lookup(&c->src, pid);
		e->blkcg = blkcg_lookup(c, pid);
		e->looked_up = now;
	}
	return e;
}

unsigned short ioprio_cache_get(struct ioprio_cache *c, pid_t pid)
{
	const struct ioprio_cache_entry *e = ioprio_cache_entry(c, pid);

	return e ? e->ioprio : IOPRIO_DEFAULT;
}

const struct blkcg *ioprio_cache_blkcg(struct ioprio_cache *c, pid_t pid)
{
	const struct ioprio_cache_entry *e = ioprio_cache_entry(c, pid);

	return e ? e->blkcg : NULL;
}

void ioprio_cache_lookup(struct ioprio_cache *c, pid_t pid, unsigned short *ioprio,
			 const struct blkcg **blkcg)
{
	const struct ioprio_cache_entry *e = ioprio_cache_entry(c, pid);

	*ioprio = e ? e->ioprio : IOPRIO_DEFAULT;
	*blkcg = e ? e->blkcg : NULL;
}

void ioprio_cache_exit(struct ioprio_cache *c)
{
	for (unsigned int i = 0; i < IOPRIO_CACHE_SLOTS; i++)
		c->slot[i] = (struct ioprio_cache_entry){ 0 };
	blkcg_table_free(&c->cgroups);
	pthread_mutex_destroy(&c->cgroups_lock);
}
