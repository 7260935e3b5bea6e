/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * power_domain.c - the disks of one daemon (--disk) are one power domain:
 * a cut of the write cache, written to any disk's power/cut or sent as
 * SIGPWR, cuts every disk's at one instant, as a machine's power failing
 * takes every disk in it at once.
 *
 * No thread cuts another's disk: a disk's ring takes submissions from its
 * own thread alone (IORING_SETUP_SINGLE_ISSUER), and only its own loop
 * sees the timer a cut sets.  So the cut is a rendezvous.  The disk asked
 * wakes every other through its cut_fd; each comes on its own thread with
 * its own queue lock held, and waits there until every disk still serving
 * has come.  Then none of them can move (each holds its lock and sleeps):
 * that moment is the instant, and each cuts what its cache held then.  A
 * disk that had not come could not have changed since (it waits for its
 * lock, or sleeps in its loop).  No lock of one disk is ever taken by
 * another's thread, so no order among them is needed.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "device.h"

const struct dev_attr *power_attr(struct blk_dev *dev, const char *name)
{
	const struct dev_attr *a = dev ? dev->ops->attrs : NULL;

	while (a && a->name && strcmp(a->name, name))
		a++;
	return a && a->name ? a : NULL;
}

/* HOW is one of the words power/cut shows (all random torn). */
static bool cut_takes(struct blk_dev *dev, const struct dev_attr *cut, const char *how)
{
	size_t n = strlen(how);
	char list[64];
	const char *p;

	if (!n || !cut->show || cut->show(dev, list, sizeof(list)) < 0)
		return false;
	for (p = list; (p = strstr(p, how)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/*
 * dm->lock held: this disk has come to the cut under way; back once every
 * disk serving has (or has stopped serving), with the cut's HOW.
 */
static void join_cut(struct rqdisk_domain *dm, struct rqdisk_state *s, char *how, size_t len)
{
	uint64_t gen = dm->cut_gen;

	s->cut_gen = gen;
	snprintf(how, len, "%s", dm->cut_how);
	dm->cut_arrived++;
	while (dm->cutting && dm->cut_gen == gen && dm->cut_arrived < dm->live)
		pthread_cond_wait(&dm->cond, &dm->lock);
	if (dm->cutting && dm->cut_gen == gen) {
		dm->cutting = false; /* the last to come lets them all go */
		pthread_cond_broadcast(&dm->cond);
	}
}

/* This disk's queue lock held, on its thread: its own cache cut (none: nothing to lose). */
static int cut_here(struct rqdisk_state *s, const char *how)
{
	struct blk_dev *dev = power_layer(s->disk.stack);
	const struct dev_attr *cut = power_attr(dev, "cut");

	return cut && cut->store ? cut->store(dev, how) : 0;
}

int domain_cut(struct rqdisk_state *s, const char *how)
{
	struct rqdisk_domain *dm = s->domain;
	struct blk_dev *dev = power_layer(s->disk.stack);
	const struct dev_attr *cut = power_attr(dev, "cut");
	char mine[sizeof(dm->cut_how)];
	uint64_t one = 1;

	if (!cut || !cut_takes(dev, cut, how) || strlen(how) >= sizeof(dm->cut_how))
		return -EINVAL;
	pthread_mutex_lock(&dm->lock);
	if (!dm->cutting) { /* else one is under way: this disk comes to it, whatever its HOW */
		dm->cutting = true;
		dm->cut_gen++;
		dm->cut_arrived = 0;
		snprintf(dm->cut_how, sizeof(dm->cut_how), "%s", how);
		for (unsigned int i = 0; i < dm->nr; i++)
			if (i != s->index && dm->disks[i].cut_fd >= 0 &&
			    write(dm->disks[i].cut_fd, &one, sizeof(one)) < 0) {
				/* full: that disk has a wake-up on its way */
			}
	}
	join_cut(dm, s, mine, sizeof(mine));
	pthread_mutex_unlock(&dm->lock);
	return cut_here(s, mine);
}

/* On a disk's loop thread, its lock held: the domain cuts; come to it. */
void domain_cut_ready(void *arg)
{
	struct rqdisk_state *s = arg;
	struct rqdisk_domain *dm = s->domain;
	char how[sizeof(dm->cut_how)];
	bool join;
	uint64_t n;

	if (read(s->cut_fd, &n, sizeof(n)) != sizeof(n))
		return;
	pthread_mutex_lock(&dm->lock);
	join = dm->cutting && s->cut_gen != dm->cut_gen;
	if (join)
		join_cut(dm, s, how, sizeof(how));
	pthread_mutex_unlock(&dm->lock);
	if (join)
		cut_here(s, how);
}

/* The control tree's power/cut, on a disk of the domain (frontend.h's cut_all). */
int domain_cut_write(struct rqdisk *d, const char *how)
{
	struct rqdisk_state *s = (struct rqdisk_state *)((char *)d - offsetof(struct rqdisk_state, disk));

	return domain_cut(s, how);
}
