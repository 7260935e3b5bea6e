# SPDX-License-Identifier: BSD-3-Clause
# The daemon, rqdisk: the FUSE front end, the control tree, the io_uring
# loop.  librqdaemon is what of it the unit tests reach too: the io_uring
# driver, the buffer pool, the range lock, the I/O priority cache.  The
# backends and their registry are src/backend's library.
noinst_LTLIBRARIES += src/daemon/librqdaemon.la
src_daemon_librqdaemon_la_SOURCES = \
	src/daemon/bufpool.c \
	src/daemon/bufpool.h \
	src/daemon/driver_uring.c \
	src/daemon/driver_uring.h \
	src/daemon/driver_uring_host.c \
	src/daemon/driver_uring_impl.h \
	src/daemon/driver_uring_mq.c \
	src/daemon/driver_uring_setup.c \
	src/daemon/ioprio_cache.c \
	src/daemon/ioprio_cache.h \
	src/daemon/rangelock.c \
	src/daemon/rangelock.h \
	src/daemon/wb_err.c \
	src/daemon/wb_err.h \
	$(NULL)
src_daemon_librqdaemon_la_CFLAGS = $(AM_CFLAGS) $(URING_CFLAGS)
src_daemon_librqdaemon_la_LIBADD = $(URING_LIBS) $(PTHREAD_LIBS)

sbin_PROGRAMS += src/daemon/rqdisk
src_daemon_rqdisk_SOURCES = \
	src/daemon/control.h \
	src/daemon/control_attrs.c \
	src/daemon/control_fs.c \
	src/daemon/control_impl.h \
	src/daemon/control_inode.c \
	src/daemon/control_mq.c \
	src/daemon/daemon.h \
	src/daemon/daemon_util.c \
	src/daemon/daemonize.c \
	src/daemon/disk_files.c \
	src/daemon/disks.c \
	src/daemon/disk_files.h \
	src/daemon/frontend.c \
	src/daemon/frontend.h \
	src/daemon/frontend_impl.h \
	src/daemon/frontend_io.c \
	src/daemon/fuse_ring.c \
	src/daemon/fuse_ring.h \
	src/daemon/image.c \
	src/daemon/memory.c \
	src/daemon/notify.c \
	src/daemon/notify.h \
	src/daemon/options.c \
	src/daemon/options.h \
	src/daemon/power.c \
	src/daemon/power_domain.c \
	src/daemon/privilege.c \
	src/daemon/registry_help.c \
	src/daemon/registry_help.h \
	src/daemon/rqdisk.c \
	$(NULL)
src_daemon_rqdisk_CFLAGS = $(AM_CFLAGS) $(FUSE_CFLAGS) $(URING_CFLAGS)
src_daemon_rqdisk_LDADD = src/common/libcommon.la src/daemon/librqdaemon.la \
	src/backend/libbackend.la src/device/libdevice.la src/block/libblock.la \
	$(FUSE_LIBS) $(URING_LIBS) $(PTHREAD_LIBS) $(SAN_RQDISK_LIBS)
# What elevator and backend modules call back into.
src_daemon_rqdisk_LDFLAGS = $(AM_LDFLAGS) $(ELV_EXPORTS) \
	-Wl,--dynamic-list=$(top_srcdir)/src/backend/backend.syms
EXTRA_src_daemon_rqdisk_DEPENDENCIES = src/block/elevator.syms src/backend/backend.syms
