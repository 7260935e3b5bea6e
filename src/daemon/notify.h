/* SPDX-License-Identifier: BSD-3-Clause */
/* notify.h - tell a service manager (systemd's $NOTIFY_SOCKET) that the mount is up, or going. */
#ifndef RQDISK_NOTIFY_H
#define RQDISK_NOTIFY_H

/*
 * Send STATE ("READY=1", "STOPPING=1", newline-separated assignments) to
 * the socket $NOTIFY_SOCKET names, as sd_notify(3) does.  Without the
 * variable nothing is sent and 0 is returned; a socket that cannot be
 * reached is said once on stderr and -errno returned: the daemon goes on,
 * and the service manager's own timeout says the rest.
 */
int notify_service(const char *state);

/* The mount is up and answers: READY=1, with our pid (we may have forked). */
int notify_ready(void);

/* The mount is going away: STOPPING=1. */
int notify_stopping(void);

#endif
