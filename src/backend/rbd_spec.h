/* SPDX-License-Identifier: BSD-3-Clause */
/* rbd_spec.h - the rbd backend's IMAGE parsed: rbd:POOL[/NAMESPACE]/IMAGE[@SNAP][:KEY=VALUE...]. */
#ifndef RQDISK_RBD_SPEC_H
#define RQDISK_RBD_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define RBD_SPEC_PREFIX "rbd:"
/* Options after the image, conf and id included. */
#define RBD_SPEC_MAX_OPTS 16

/*
 * The spec as QEMU's rbd: filename takes it: options follow the image
 * after ':' (or ','), each KEY=VALUE; a backslash takes the next character
 * as it is (":", ",", "/", "@", "=", "\").  conf names a ceph.conf, id the
 * client's name (admin when not given); any other key is a Ceph option
 * (mon_host, keyring, ...) set on the client as it is.
 */
struct rbd_spec {
	char *buf;         /* holds every string below */
	const char *pool;
	const char *ns;    /* NULL: the default namespace */
	const char *image;
	const char *snap;  /* NULL: the image itself */
	const char *conf;  /* NULL: Ceph's default search */
	const char *id;    /* NULL: admin */
	unsigned int nr_opts; /* the other keys */
	const char *keys[RBD_SPEC_MAX_OPTS];
	const char *vals[RBD_SPEC_MAX_OPTS];
};

/* Whether IMAGE names an RBD image for this backend. */
static inline bool rbd_is_spec(const char *image)
{
	return !strncmp(image, RBD_SPEC_PREFIX, strlen(RBD_SPEC_PREFIX));
}

/*
 * Parse args, the text after "rbd:".  0, or -EINVAL with a one-line reason
 * in why (-ENOMEM: no memory); nothing is kept on failure.
 */
int rbd_spec_parse(const char *args, struct rbd_spec *sp, char *why, size_t whylen);
void rbd_spec_free(struct rbd_spec *sp);

#endif
