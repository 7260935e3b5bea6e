/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_loop.c - a state attached to a loop device for its checker, and detached after. */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "crash_loop.h"

/* Another attach may take the device LOOP_CTL_GET_FREE named: ask again, a few times. */
#define LOOP_TRIES 16

/*
 * Autoclear: the device lets go of the state when its last user closes
 * it, so a checker that left it mounted, or an rqdisk-crash killed, leaves
 * no attached device behind once the users are gone.
 */
static int loop_configure(int lfd, int ffd)
{
	struct loop_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = (unsigned int)ffd;
	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	return ioctl(lfd, LOOP_CONFIGURE, &cfg) ? -errno : 0;
}

int crash_loop_attach(const char *path, char *dev, size_t devlen, char *why, size_t whylen)
{
	int ctl, ffd, lfd = -1, ret = -EBUSY;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		ret = -errno;
		snprintf(why, whylen, "--loop: /dev/loop-control: %s", strerror(-ret));
		return ret;
	}
	ffd = open(path, O_RDWR | O_CLOEXEC);
	if (ffd < 0) {
		ret = -errno;
		snprintf(why, whylen, "--loop: %s: %s", path, strerror(-ret));
		close(ctl);
		return ret;
	}
	for (int i = 0; i < LOOP_TRIES && ret == -EBUSY; i++) {
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);

		if (n < 0) {
			ret = -errno;
			break;
		}
		snprintf(dev, devlen, "/dev/loop%d", n);
		lfd = open(dev, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			ret = -errno;
			break;
		}
		ret = loop_configure(lfd, ffd);
		if (ret) {
			close(lfd);
			lfd = -1;
		}
	}
	close(ffd); /* the device holds the file now */
	close(ctl);
	if (ret)
		snprintf(why, whylen, "--loop: no loop device for the state: %s", strerror(-ret));
	return ret ? ret : lfd;
}

void crash_loop_detach(int fd)
{
	if (fd < 0)
		return;
	/* EBUSY while a checker's mount holds it: autoclear lets go when that goes */
	(void)ioctl(fd, LOOP_CLR_FD, 0);
	close(fd);
}
