/* SPDX-License-Identifier: BSD-3-Clause */
/* fault_watch.c - the fault filter's error_file watcher: a thread that stats the path. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fault_impl.h"

#define FAULT_FILE_POLL_MS 10 /* how often error_file is looked at */

/* Drop a reference, the lock held (and released); the last frees the watch. */
static void fault_watch_put(struct fault_watch *w)
{
	bool last = !--w->refs;

	pthread_mutex_unlock(&w->lock);
	if (!last)
		return;
	free(w->path);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

static void *fault_watcher(void *arg)
{
	struct fault_watch *w = arg;
	char *path = NULL;

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		uint64_t gen = w->gen;
		struct timespec ts;
		struct stat st;
		bool seen;

		free(path);
		path = w->path ? strdup(w->path) : NULL;
		pthread_mutex_unlock(&w->lock);
		seen = path && !stat(path, &st);
		pthread_mutex_lock(&w->lock);
		if (gen != w->gen)
			continue; /* a look at a path no longer watched: look at the new one */
		atomic_store(&w->exists, seen);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += FAULT_FILE_POLL_MS * NSEC_PER_MS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (!w->stop)
			pthread_cond_timedwait(&w->wake, &w->lock, &ts);
	}
	free(path);
	fault_watch_put(w);
	return NULL;
}

static struct fault_watch *fault_watch_start(char *path)
{
	struct fault_watch *w = calloc(1, sizeof(*w));
	pthread_attr_t attr;
	pthread_t thread;
	int ret;

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	w->path = path;
	w->refs = 2;
	atomic_store(&w->exists, false);
	ret = pthread_attr_init(&attr);
	if (!ret) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ret = pthread_create(&thread, &attr, fault_watcher, w);
		pthread_attr_destroy(&attr);
	}
	if (ret) {
		pthread_cond_destroy(&w->wake);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL;
	}
	return w;
}

/* Watch path (NULL: none) from now on; the thread starts with the first path. */
int fault_watch_set(struct fault_filter *ff, const char *path)
{
	char *copy = path ? strdup(path) : NULL;
	struct fault_watch *w = ff->w;

	if (path && !copy)
		return -ENOMEM;
	if (!w && !path)
		return 0;
	if (!w) {
		ff->w = fault_watch_start(copy);
		if (!ff->w) {
			free(copy);
			return -EAGAIN;
		}
		return 0;
	}
	pthread_mutex_lock(&w->lock);
	free(w->path);
	w->path = copy;
	w->gen++;
	atomic_store(&w->exists, false); /* until the watcher has looked */
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/* The thread ends after its look in progress, if one is; nothing waits for it. */
void fault_watch_stop(struct fault_filter *ff)
{
	struct fault_watch *w = ff->w;

	if (!w)
		return;
	ff->w = NULL;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	fault_watch_put(w);
}
