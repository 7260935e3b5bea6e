/* backend_nbd.h - the nbd backend: an NBD server's export as the disk, through libnbd. */
#ifndef RQDISK_BACKEND_NBD_H
#define RQDISK_BACKEND_NBD_H

#include <stdbool.h>
#include <string.h>

#include "device.h"

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
/* Opened with the URI; polls libnbd's socket through host_ops.watch_fd_events. */
extern const struct dev_ops dev_nbd_ops;
#endif

#endif
