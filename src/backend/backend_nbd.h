/* SPDX-License-Identifier: BSD-3-Clause */
/* backend_nbd.h - the nbd backend: an NBD server's export as the disk, through libnbd. */
#ifndef RQDISK_BACKEND_NBD_H
#define RQDISK_BACKEND_NBD_H

#include <stdbool.h>
#include <string.h>

#include "backend.h"

/* --nbd-timeout: seconds a request waits for the server (Linux's nbd default, 30 s). */
#define NBD_DEFAULT_TIMEOUT 30
#define NBD_MAX_TIMEOUT 86400
/* --connections: at most this many to one server (with multi-conn). */
#define NBD_MAX_CONNECTIONS 16

/* Whether IMAGE is a URI for this backend: nbd://, nbds://, nbd+unix://, nbds+unix://. */
static inline bool nbd_is_uri(const char *image)
{
	static const char *const schemes[] = { "nbd://", "nbds://", "nbd+unix://",
					       "nbds+unix://" };

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		if (!strncmp(image, schemes[i], strlen(schemes[i])))
			return true;
	}
	return false;
}

#ifdef HAVE_LIBNBD
/*
 * Opened with "URI[ timeout=SECONDS,connections=N]"; polls libnbd's
 * sockets through host_ops.watch_fd_events.
 */
extern const struct dev_ops dev_nbd_ops;
#endif

#endif
