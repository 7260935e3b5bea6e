# SPDX-License-Identifier: BSD-3-Clause
# rqdisk-crash: the crash states of a dm-log-writes log, each checked; its
# library (the log, the states, the overlay, the report) is what the unit
# tests and the fuzz targets reach too.  It links libfuse, not liburing.
noinst_LTLIBRARIES += src/crash/libcrash.la
src_crash_libcrash_la_SOURCES = \
	src/crash/crash_aim.c \
	src/crash/crash_aim.h \
	src/crash/crash_dedup.c \
	src/crash/crash_dedup.h \
	src/crash/crash_guard.c \
	src/crash/crash_guard.h \
	src/crash/crash_id.c \
	src/crash/crash_id.h \
	src/crash/crash_joint.c \
	src/crash/crash_joint.h \
	src/crash/crash_joint_id.c \
	src/crash/crash_joint_id.h \
	src/crash/crash_log.c \
	src/crash/crash_log.h \
	src/crash/crash_marks.c \
	src/crash/crash_marks.h \
	src/crash/crash_overlay.c \
	src/crash/crash_overlay.h \
	src/crash/crash_report.c \
	src/crash/crash_report.h \
	src/crash/crash_shard.c \
	src/crash/crash_shard.h \
	src/crash/crash_state.c \
	src/crash/crash_state.h \
	$(NULL)
src_crash_libcrash_la_LIBADD = src/common/libcommon.la $(PTHREAD_LIBS)
bin_PROGRAMS += src/crash/rqdisk-crash
src_crash_rqdisk_crash_SOURCES = \
	src/crash/crash_checker.c \
	src/crash/crash_checker.h \
	src/crash/crash_files.c \
	src/crash/crash_joint_run.c \
	src/crash/crash_joint_run.h \
	src/crash/crash_loop.c \
	src/crash/crash_loop.h \
	src/crash/crash_main.c \
	src/crash/crash_options.c \
	src/crash/crash_options.h \
	src/crash/crash_run.h \
	src/crash/crash_server.c \
	src/crash/crash_server.h \
	$(NULL)
src_crash_rqdisk_crash_CFLAGS = $(AM_CFLAGS) $(FUSE_CFLAGS)
src_crash_rqdisk_crash_LDADD = src/common/libcommon.la src/crash/libcrash.la $(FUSE_LIBS) \
	$(PTHREAD_LIBS)
