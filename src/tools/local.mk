# SPDX-License-Identifier: BSD-3-Clause
# The programs with no FUSE and no io_uring, and the libraries they and the
# tests share: blktrace's binary format read, the replay and the order
# checker.
noinst_LTLIBRARIES += src/tools/libtraceread.la
src_tools_libtraceread_la_SOURCES = src/tools/blktrace_read.c src/tools/blktrace_read.h

# Replays traces on a virtual clock: the core, the elevators and the models.
noinst_LTLIBRARIES += src/tools/libreplay.la
src_tools_libreplay_la_SOURCES = \
	src/tools/replay.c \
	src/tools/replay.h \
	src/tools/replay_input.c \
	src/tools/replay_mq.c \
	src/tools/replay_mq.h \
	src/tools/replay_report.c \
	$(NULL)
bin_PROGRAMS += src/tools/rqdisk-replay
src_tools_rqdisk_replay_SOURCES = src/tools/replay_main.c
src_tools_rqdisk_replay_LDADD = src/common/libcommon.la src/tools/libreplay.la \
	src/tools/libtraceread.la src/backend/libbackend.la src/device/libdevice.la \
	src/block/libblock.la $(PTHREAD_LIBS)
src_tools_rqdisk_replay_LDFLAGS = $(AM_LDFLAGS) $(ELV_EXPORTS)
EXTRA_src_tools_rqdisk_replay_DEPENDENCIES = src/block/elevator.syms

# Checks the barrier order in a trace.
noinst_LTLIBRARIES += src/tools/libcheckorder.la
src_tools_libcheckorder_la_SOURCES = src/tools/checkorder_core.c src/tools/checkorder.h
bin_PROGRAMS += src/tools/rqdisk-checkorder
src_tools_rqdisk_checkorder_SOURCES = src/tools/checkorder.c
src_tools_rqdisk_checkorder_LDADD = src/common/libcommon.la src/tools/libcheckorder.la \
	src/tools/libtraceread.la src/block/libblock.la $(PTHREAD_LIBS)
