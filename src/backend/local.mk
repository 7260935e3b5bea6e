# SPDX-License-Identifier: BSD-3-Clause
# The backends, the disk at the bottom of the stack, in one library: the
# registry, the module loader, and the backends built in - file and null,
# whose I/O the host's loop carries out, and the simulated disk of
# rqdisk-replay - all reaching their host through device.h alone (no
# liburing, nothing of the daemon).  nbd and rbd are modules in
# $(pkglibdir), loaded only for an image that needs one: a daemon serving
# a file maps (and mlockall()s) neither libnbd nor librbd.  Each module
# exports its dev_ops table alone; the daemon exports what they call
# (backend.syms).
noinst_LTLIBRARIES += src/backend/libbackend.la
src_backend_libbackend_la_SOURCES = \
	src/backend/backend.c \
	src/backend/backend.h \
	src/backend/backend_file.c \
	src/backend/backend_module.c \
	src/backend/backend_module.h \
	src/backend/backend_nbd.h \
	src/backend/backend_null.c \
	src/backend/backend_rbd.h \
	src/backend/backend_sim.c \
	src/backend/backend_uring.h \
	src/backend/nbd_conn.h \
	src/backend/nbd_export.h \
	src/backend/nbd_impl.h \
	src/backend/nbd_lost.h \
	src/backend/rbd_spec.c \
	src/backend/rbd_spec.h \
	$(NULL)
src_backend_libbackend_la_CPPFLAGS = $(AM_CPPFLAGS) -DRQDISK_PKGLIBDIR='"$(pkglibdir)"'
src_backend_libbackend_la_LIBADD = -ldl

BACKEND_MODULE_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared
NBD_BACKEND_SOURCES = src/backend/backend_nbd.c src/backend/nbd_conn.c src/backend/nbd_export.c \
	src/backend/nbd_reconnect.c src/backend/nbd_request.c
if HAVE_LIBNBD
pkglib_LTLIBRARIES += src/backend/backend-nbd.la
src_backend_backend_nbd_la_SOURCES = $(NBD_BACKEND_SOURCES)
src_backend_backend_nbd_la_CFLAGS = $(AM_CFLAGS) $(LIBNBD_CFLAGS)
src_backend_backend_nbd_la_LIBADD = $(LIBNBD_LIBS)
src_backend_backend_nbd_la_LDFLAGS = $(BACKEND_MODULE_LDFLAGS) \
	-export-symbols-regex '^dev_nbd_ops$$'
endif
if HAVE_LIBRBD
pkglib_LTLIBRARIES += src/backend/backend-rbd.la
src_backend_backend_rbd_la_SOURCES = src/backend/backend_rbd.c
src_backend_backend_rbd_la_CFLAGS = $(AM_CFLAGS) $(LIBRBD_CFLAGS)
src_backend_backend_rbd_la_LIBADD = $(LIBRBD_LIBS)
src_backend_backend_rbd_la_LDFLAGS = $(BACKEND_MODULE_LDFLAGS) \
	-export-symbols-regex '^dev_rbd_ops$$'
endif
EXTRA_DIST += src/backend/backend.syms
