/* SPDX-License-Identifier: BSD-3-Clause */
/* check_ioprio_cache.c - callers' I/O priorities and cgroups: Linux's mapping, the refresh, the bound. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake_driver.h"
#include "ioprio_cache.h"

#define SEC 1000000000ull
#define MAX_PID 256

/* A process table the test writes, a clock it moves, and a count of the questions asked. */
struct fake_procs {
	int ioprio[MAX_PID]; /* -ESRCH: no such process */
	int nice[MAX_PID];
	uint64_t now;
	unsigned int lookups;
	const char *cgroup[MAX_PID]; /* NULL: the root; "-": no such process */
	unsigned int cgroup_lookups;
};

static int fake_get_ioprio(void *arg, pid_t pid)
{
	struct fake_procs *p = arg;

	ck_assert_int_gt(pid, 0); /* 0 would be the daemon itself */
	ck_assert_int_lt(pid, MAX_PID);
	p->lookups++;
	return p->ioprio[pid];
}

static int fake_get_nice(void *arg, pid_t pid, int *nice)
{
	struct fake_procs *p = arg;

	if (p->ioprio[pid] == -ESRCH)
		return -ESRCH;
	*nice = p->nice[pid];
	return 0;
}

static uint64_t fake_now(void *arg)
{
	return ((struct fake_procs *)arg)->now;
}

/* The cgroup's id is made up from its path's first letter, to see it carried. */
static int fake_get_cgroup(void *arg, pid_t pid, char *path, size_t len, uint64_t *id)
{
	struct fake_procs *p = arg;
	const char *cg = p->cgroup[pid] ? p->cgroup[pid] : "/";

	p->cgroup_lookups++;
	if (!strcmp(cg, "-"))
		return -ESRCH;
	snprintf(path, len, "%s", cg);
	*id = 1000 + (uint64_t)(unsigned char)cg[1];
	return 0;
}

static struct fake_procs procs;
static struct ioprio_cache cache;

static void setup(void)
{
	const struct ioprio_source src = {fake_get_ioprio, fake_get_nice, fake_now, &procs,
					  fake_get_cgroup};

	for (int i = 0; i < MAX_PID; i++) {
		procs.ioprio[i] = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_NONE, 0);
		procs.nice[i] = 0;
	}
	procs.now = 5 * SEC;
	procs.lookups = 0;
	procs.cgroup_lookups = 0;
	memset(procs.cgroup, 0, sizeof(procs.cgroup));
	ioprio_cache_init(&cache, &src);
}

static void teardown(void)
{
	ioprio_cache_exit(&cache);
}

#define BE(level) IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, level)
#define RT(level) IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, level)

/* No class set: best effort at (nice + 20) / 5, as Linux's task_nice_ioprio(). */
START_TEST(test_none_maps_from_nice)
{
	static const struct {
		int nice, level;
	} cases[] = {{-20, 0}, {-16, 0}, {-15, 1}, {-1, 3}, {0, 4}, {4, 4}, {5, 5}, {19, 7}};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		procs.nice[10 + i] = cases[i].nice;
		ck_assert_msg(ioprio_cache_get(&cache, 10 + (pid_t)i) == BE(cases[i].level),
			      "nice %d: got %#x, expected best effort %d", cases[i].nice,
			      ioprio_cache_get(&cache, 10 + (pid_t)i), cases[i].level);
	}
}
END_TEST

/* A class that was set is carried as it is; idle is idle at the lowest level. */
START_TEST(test_set_classes_kept)
{
	procs.ioprio[1] = RT(0);
	procs.ioprio[2] = BE(6);
	procs.ioprio[3] = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0);
	procs.nice[2] = -20; /* nice matters only without a class */
	ck_assert_uint_eq(ioprio_cache_get(&cache, 1), RT(0));
	ck_assert_uint_eq(ioprio_cache_get(&cache, 2), BE(6));
	ck_assert_uint_eq(ioprio_cache_get(&cache, 3), IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 7));
}
END_TEST

/* A process that is gone (ESRCH), or was never one, is served at the default. */
START_TEST(test_gone_is_default)
{
	procs.ioprio[7] = -ESRCH;
	ck_assert_uint_eq(ioprio_cache_get(&cache, 7), IOPRIO_DEFAULT);
	procs.ioprio[8] = RT(9); /* no such level */
	ck_assert_uint_eq(ioprio_cache_get(&cache, 8), IOPRIO_DEFAULT);
	ck_assert_uint_eq(ioprio_cache_get(&cache, 0), IOPRIO_DEFAULT);
	ck_assert_uint_eq(ioprio_cache_get(&cache, -1), IOPRIO_DEFAULT);
	ck_assert_uint_eq(procs.lookups, 2); /* pid 0 is not asked about: it would mean us */
}
END_TEST

/* Asked once per refresh interval: a change shows after it, not before. */
START_TEST(test_refresh_after_interval)
{
	procs.ioprio[5] = BE(2);
	ck_assert_uint_eq(ioprio_cache_get(&cache, 5), BE(2));
	ck_assert_uint_eq(procs.lookups, 1);
	procs.ioprio[5] = RT(1); /* ionice -p while it runs */
	procs.now += SEC - 1;
	ck_assert_uint_eq(ioprio_cache_get(&cache, 5), BE(2));
	ck_assert_uint_eq(procs.lookups, 1);
	procs.now += 1;
	ck_assert_uint_eq(ioprio_cache_get(&cache, 5), RT(1));
	ck_assert_uint_eq(procs.lookups, 2);
	ck_assert_uint_eq(ioprio_cache_get(&cache, 5), RT(1));
	ck_assert_uint_eq(procs.lookups, 2);
}
END_TEST

/* A pid that vanished is asked about again after the interval: it may be another process by then.
 */
START_TEST(test_gone_refreshed)
{
	procs.ioprio[9] = -ESRCH;
	ck_assert_uint_eq(ioprio_cache_get(&cache, 9), IOPRIO_DEFAULT);
	procs.ioprio[9] = IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0);
	procs.now += SEC;
	ck_assert_uint_eq(ioprio_cache_get(&cache, 9), IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 7));
}
END_TEST

/*
 * At most IOPRIO_CACHE_SLOTS pids are kept: a new one takes the least
 * recently used one's place, and the others stay without a new lookup.
 */
START_TEST(test_bound_evicts_least_recent)
{
	for (pid_t pid = 1; pid <= IOPRIO_CACHE_SLOTS + 1; pid++)
		procs.ioprio[pid] = BE(pid % 8);
	for (pid_t pid = 1; pid <= IOPRIO_CACHE_SLOTS; pid++)
		ioprio_cache_get(&cache, pid);
	ck_assert_uint_eq(procs.lookups, IOPRIO_CACHE_SLOTS);
	ioprio_cache_get(&cache, 1); /* now 2 is the least recent */
	ck_assert_uint_eq(procs.lookups, IOPRIO_CACHE_SLOTS);

	ioprio_cache_get(&cache, IOPRIO_CACHE_SLOTS + 1);
	ck_assert_uint_eq(procs.lookups, IOPRIO_CACHE_SLOTS + 1);
	for (pid_t pid = 1; pid <= IOPRIO_CACHE_SLOTS + 1; pid++)
		if (pid != 2)
			ck_assert_uint_eq(ioprio_cache_get(&cache, pid), BE(pid % 8));
	ck_assert_uint_eq(procs.lookups, IOPRIO_CACHE_SLOTS + 1);
	ck_assert_uint_eq(ioprio_cache_get(&cache, 2), BE(2));
	ck_assert_uint_eq(procs.lookups, IOPRIO_CACHE_SLOTS + 2);
}
END_TEST

/*
 * A caller's cgroup, as its bios carry it: one object per cgroup (two
 * processes of /a get the same), the root's is NULL, asked with the
 * priority and trusted as long: a process moved to /b shows in /b once
 * the interval is over, not before.
 */
START_TEST(test_cgroup_interned_and_refreshed)
{
	const struct blkcg *a;

	procs.cgroup[5] = "/a";
	procs.cgroup[6] = "/a";
	a = ioprio_cache_blkcg(&cache, 5);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(blkcg_path(a), "/a");
	ck_assert_uint_eq(a->id, 1000 + 'a');
	ck_assert_ptr_eq(ioprio_cache_blkcg(&cache, 6), a);
	ck_assert_ptr_null(ioprio_cache_blkcg(&cache, 7));
	ck_assert_uint_eq(procs.cgroup_lookups, 3);
	ioprio_cache_get(&cache, 5); /* the priority comes with it: no new question */
	ck_assert_uint_eq(procs.cgroup_lookups, 3);
	ck_assert_uint_eq(procs.lookups, 3);

	procs.cgroup[5] = "/b"; /* echo 5 > /sys/fs/cgroup/b/cgroup.procs */
	procs.now += SEC - 1;
	ck_assert_ptr_eq(ioprio_cache_blkcg(&cache, 5), a);
	procs.now += 1;
	ck_assert_str_eq(blkcg_path(ioprio_cache_blkcg(&cache, 5)), "/b");
	ck_assert_ptr_eq(ioprio_cache_blkcg(&cache, 6), a); /* /a lives on for 6 */
	procs.cgroup[5] = "/a";
	procs.now += SEC;
	ck_assert_ptr_eq(ioprio_cache_blkcg(&cache, 5), a); /* back: the same object */
}
END_TEST

/*
 * A pid that is gone, was never a process, or whose cgroup cannot be
 * read is the root's (NULL), and is asked about again after the interval:
 * by then it may be another process, in another cgroup.
 */
START_TEST(test_cgroup_gone_is_root)
{
	procs.cgroup[9] = "-";
	ck_assert_ptr_null(ioprio_cache_blkcg(&cache, 9));
	ck_assert_ptr_null(ioprio_cache_blkcg(&cache, 0));
	ck_assert_ptr_null(ioprio_cache_blkcg(&cache, -1));
	procs.cgroup[9] = "/reused";
	procs.now += SEC;
	ck_assert_str_eq(blkcg_path(ioprio_cache_blkcg(&cache, 9)), "/reused");
}
END_TEST

/* What a bio takes, both in one look: the same as asked one at a time, and the defaults for no process. */
START_TEST(test_lookup_gives_both)
{
	unsigned short ioprio;
	const struct blkcg *cg;

	procs.ioprio[5] = RT(2);
	procs.cgroup[5] = "/a";
	ioprio_cache_lookup(&cache, 5, &ioprio, &cg);
	ck_assert_uint_eq(ioprio, RT(2));
	ck_assert_str_eq(blkcg_path(cg), "/a");
	ck_assert_ptr_eq(ioprio_cache_blkcg(&cache, 5), cg);
	ck_assert_uint_eq(ioprio_cache_get(&cache, 5), ioprio);
	ck_assert_uint_eq(procs.lookups, 1);
	ioprio_cache_lookup(&cache, 0, &ioprio, &cg);
	ck_assert_uint_eq(ioprio, IOPRIO_DEFAULT);
	ck_assert_ptr_null(cg);
}
END_TEST

/*
 * Each hardware queue's thread has a cache of its own (--queue-mode=mq
 * over FUSE's ring); they share the disk's cgroups, so that one cgroup is
 * one object, which groups and the merge rule compare by pointer, whichever
 * thread met it first.
 */
START_TEST(test_thread_caches_share_the_disks_cgroups)
{
	const struct ioprio_source src = {fake_get_ioprio, fake_get_nice, fake_now, &procs,
					  fake_get_cgroup};
	struct ioprio_cache thread0, thread1;
	const struct blkcg *a;

	ioprio_cache_init(&thread0, &src);
	ioprio_cache_init(&thread1, &src);
	ioprio_cache_share_cgroups(&thread0, &cache);
	ioprio_cache_share_cgroups(&thread1, &cache);
	procs.cgroup[5] = "/a";
	procs.cgroup[6] = "/a";
	a = ioprio_cache_blkcg(&thread0, 5);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_eq(ioprio_cache_blkcg(&thread1, 6), a);
	ck_assert_ptr_eq(ioprio_cache_blkcg(&cache, 5), a);
	ioprio_cache_exit(&thread0); /* a thread's cache going frees none of the disk's */
	ioprio_cache_exit(&thread1);
	ck_assert_str_eq(blkcg_path(a), "/a");
}
END_TEST

/* The "0::PATH" line of /proc/self/cgroup, or "" on a system without cgroup v2. */
static void own_cgroup(char *path, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "r");

	path[0] = '\0';
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::/", 4)) {
			size_t n = strcspn(line + 3, "\n");

			ck_assert_uint_lt(n, len);
			memcpy(path, line + 3, n);
			path[n] = '\0';
		}
	fclose(f);
}

/* The kernel's own source: this process, at its nice value, has a priority. */
START_TEST(test_system_source)
{
	struct ioprio_cache sys;

	ioprio_cache_init(&sys, NULL);
	ck_assert_int_ne(IOPRIO_PRIO_CLASS(ioprio_cache_get(&sys, getpid())), IOPRIO_CLASS_NONE);
	ck_assert_uint_eq(ioprio_cache_get(&sys, 0), IOPRIO_DEFAULT);
	ioprio_cache_exit(&sys);
}
END_TEST

/* parse TEXT as /proc/PID/cgroup: ioprio_cgroup_v2_path's answer, the path in path */
static int v2_path_of(const char *text, char *path, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	ck_assert_ptr_nonnull(f);
	ret = ioprio_cgroup_v2_path(f, path, len);
	fclose(f);
	return ret;
}

/*
 * The v2 line is found wherever it is: after 12 v1 hierarchies' lines of
 * 400 bytes each (4.8 KB; one 4 KiB read missed it), at the end without
 * a newline; none in a v1-only file; one too long for the buffer is said.
 */
START_TEST(test_cgroup_v2_line_anywhere)
{
	static char text[8192];
	char path[BLKCG_PATH_MAX], dir[401];
	size_t n = 0;

	memset(dir, 'd', 400);
	dir[400] = '\0';
	for (int i = 1; i <= 12; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%d:ctl%d:/%s\n", i, i, dir);
	ck_assert_int_eq(v2_path_of(text, path, sizeof(path)), -ENOENT);
	snprintf(text + n, sizeof(text) - n, "0::/system.slice/a.service");
	ck_assert_int_eq(v2_path_of(text, path, sizeof(path)), 0);
	ck_assert_str_eq(path, "/system.slice/a.service");
	ck_assert_int_eq(v2_path_of("0::/\n", path, sizeof(path)), 0);
	ck_assert_str_eq(path, "/");
	ck_assert_int_eq(v2_path_of("0::/abc\n", path, 4), -ENAMETOOLONG);
	ck_assert_int_eq(v2_path_of("0::/abc\n", path, 5), 0);
	ck_assert_str_eq(path, "/abc");
	ck_assert_int_eq(v2_path_of("", path, sizeof(path)), -ENOENT);
}
END_TEST

/* ... and a cgroup: /proc/self/cgroup's v2 path, the root's (NULL) where it is "/" or none. */
START_TEST(test_system_source_cgroup)
{
	struct ioprio_cache sys;
	const struct blkcg *cg;
	char want[BLKCG_PATH_MAX];

	own_cgroup(want, sizeof(want));
	ioprio_cache_init(&sys, NULL);
	cg = ioprio_cache_blkcg(&sys, getpid());
	if (!want[0] || !strcmp(want, "/")) {
		ck_assert_ptr_null(cg);
	} else {
		ck_assert_ptr_nonnull(cg);
		ck_assert_str_eq(blkcg_path(cg), want);
	}
	ioprio_cache_exit(&sys);
}
END_TEST

static Suite *ioprio_cache_suite(void)
{
	Suite *s = suite_create("ioprio_cache");
	TCase *tc = tcase_create("cache");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_none_maps_from_nice);
	tcase_add_test(tc, test_set_classes_kept);
	tcase_add_test(tc, test_gone_is_default);
	tcase_add_test(tc, test_refresh_after_interval);
	tcase_add_test(tc, test_gone_refreshed);
	tcase_add_test(tc, test_bound_evicts_least_recent);
	tcase_add_test(tc, test_system_source);
	tcase_add_test(tc, test_cgroup_interned_and_refreshed);
	tcase_add_test(tc, test_cgroup_gone_is_root);
	tcase_add_test(tc, test_thread_caches_share_the_disks_cgroups);
	tcase_add_test(tc, test_lookup_gives_both);
	tcase_add_test(tc, test_system_source_cgroup);
	tcase_add_test(tc, test_cgroup_v2_line_anywhere);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fake_run_suite(ioprio_cache_suite());
}
