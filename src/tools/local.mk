# SPDX-License-Identifier: BSD-3-Clause
# The programs with no FUSE and no io_uring, and the libraries they and the
# tests share: the command line, blktrace's binary format read, the replay,
# the order checker and rqdisk-crash's core.
noinst_LTLIBRARIES += src/tools/libcli.la
src_tools_libcli_la_SOURCES = src/tools/cli.c src/tools/cli.h

noinst_LTLIBRARIES += src/tools/libtraceread.la
src_tools_libtraceread_la_SOURCES = src/tools/blktrace_read.c src/tools/blktrace_read.h

# Replays traces on a virtual clock: the core, the elevators and the models.
noinst_LTLIBRARIES += src/tools/libreplay.la
src_tools_libreplay_la_SOURCES = \
	src/tools/replay.c \
	src/tools/replay.h \
	src/tools/replay_input.c \
	src/tools/replay_report.c \
	$(NULL)
bin_PROGRAMS += src/tools/rqdisk-replay
src_tools_rqdisk_replay_SOURCES = src/tools/replay_main.c
src_tools_rqdisk_replay_LDADD = src/tools/libcli.la src/tools/libreplay.la \
	src/tools/libtraceread.la src/device/libdevice.la src/block/libblock.la $(PTHREAD_LIBS)
src_tools_rqdisk_replay_LDFLAGS = $(AM_LDFLAGS) $(ELV_EXPORTS)
EXTRA_src_tools_rqdisk_replay_DEPENDENCIES = src/block/elevator.syms

# Checks the barrier order in a trace.
noinst_LTLIBRARIES += src/tools/libcheckorder.la
src_tools_libcheckorder_la_SOURCES = src/tools/checkorder_core.c src/tools/checkorder.h
bin_PROGRAMS += src/tools/rqdisk-checkorder
src_tools_rqdisk_checkorder_SOURCES = src/tools/checkorder.c
src_tools_rqdisk_checkorder_LDADD = src/tools/libcli.la src/tools/libcheckorder.la \
	src/tools/libtraceread.la src/block/libblock.la $(PTHREAD_LIBS)

# rqdisk-crash: the crash states of a dm-log-writes log, each checked; its
# library (the log, the states, the overlay, the report) is what the unit
# tests and the fuzz targets reach too.  It links libfuse, not liburing.
noinst_LTLIBRARIES += src/tools/libcrash.la
src_tools_libcrash_la_SOURCES = \
	src/tools/crash_dedup.c \
	src/tools/crash_dedup.h \
	src/tools/crash_guard.c \
	src/tools/crash_guard.h \
	src/tools/crash_log.c \
	src/tools/crash_log.h \
	src/tools/crash_marks.c \
	src/tools/crash_marks.h \
	src/tools/crash_overlay.c \
	src/tools/crash_overlay.h \
	src/tools/crash_report.c \
	src/tools/crash_report.h \
	src/tools/crash_shard.c \
	src/tools/crash_shard.h \
	src/tools/crash_state.c \
	src/tools/crash_state.h \
	$(NULL)
src_tools_libcrash_la_LIBADD = src/device/liblogwrites.la $(PTHREAD_LIBS)
bin_PROGRAMS += src/tools/rqdisk-crash
src_tools_rqdisk_crash_SOURCES = \
	src/tools/crash_checker.c \
	src/tools/crash_checker.h \
	src/tools/crash_loop.c \
	src/tools/crash_loop.h \
	src/tools/crash_main.c \
	src/tools/crash_server.c \
	src/tools/crash_server.h \
	$(NULL)
src_tools_rqdisk_crash_CFLAGS = $(AM_CFLAGS) $(FUSE_CFLAGS)
src_tools_rqdisk_crash_LDADD = src/tools/libcli.la src/tools/libcrash.la $(FUSE_LIBS) \
	$(PTHREAD_LIBS)
