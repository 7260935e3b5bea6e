/* SPDX-License-Identifier: BSD-3-Clause */
/* backend_rbd.h - the rbd backend: a Ceph RBD image or snapshot as the disk, through librbd. */
#ifndef RQDISK_BACKEND_RBD_H
#define RQDISK_BACKEND_RBD_H

#include "backend.h"
#include "rbd_spec.h"

#ifdef HAVE_LIBRBD
/* Opened with the spec after "rbd:"; polls librbd's eventfd through host_ops.watch_fd. */
extern const struct dev_ops dev_rbd_ops;
#endif

#endif
