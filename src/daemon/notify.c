/* SPDX-License-Identifier: BSD-3-Clause */
/* notify.c - sd_notify's protocol in a few lines: one datagram to $NOTIFY_SOCKET. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

/*
 * The address in $NOTIFY_SOCKET: a path, or an abstract name written with
 * a leading '@'.  Its length, or -EAFNOSUPPORT for what we do not speak
 * (systemd's vsock: addresses, for a service manager outside a VM).
 */
static int notify_address(const char *name, struct sockaddr_un *sun)
{
	size_t len = strlen(name);

	if ((name[0] != '/' && name[0] != '@') || len < 2)
		return -EAFNOSUPPORT;
	if (len > sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, name, len);
	if (name[0] == '@')
		sun->sun_path[0] = '\0';
	else if (len == sizeof(sun->sun_path))
		return -ENAMETOOLONG; /* a path needs its terminating NUL */
	return (int)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '/'));
}

int notify_service(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun;
	int fd, len, ret = 0;

	if (!name || !*name)
		return 0;
	len = notify_address(name, &sun);
	if (len < 0) {
		ret = len;
		goto out;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sun,
		   (socklen_t)len) < 0)
		ret = -errno;
	close(fd);
out:
	if (ret)
		fprintf(stderr, "rqdisk: warning: NOTIFY_SOCKET %s: %s\n", name, strerror(-ret));
	return ret;
}

int notify_ready(void)
{
	char state[64];

	/* MAINPID: started without -f, the daemon is the child, not what was started */
	snprintf(state, sizeof(state), "READY=1\nMAINPID=%ld", (long)getpid());
	return notify_service(state);
}

int notify_stopping(void)
{
	return notify_service("STOPPING=1");
}
