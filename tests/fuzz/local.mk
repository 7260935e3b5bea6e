# SPDX-License-Identifier: BSD-3-Clause
# Fuzz targets, one file each with LLVMFuzzerTestOneInput (tests/fuzz/fuzz.h).
# With --enable-fuzzing they link clang's libFuzzer and contrib/fuzz.sh runs
# them; otherwise tests/fuzz/standalone.c is their main and make check runs each
# over tests/fuzz/corpus/NAME/: seeds and every input that ever crashed or hung.
FUZZ_TARGETS = \
	tests/fuzz/fuzz-blktrace \
	tests/fuzz/fuzz-iolog \
	tests/fuzz/fuzz-cli \
	tests/fuzz/fuzz-model \
	tests/fuzz/fuzz-replay \
	tests/fuzz/fuzz-control \
	tests/fuzz/fuzz-crash-log \
	tests/fuzz/fuzz-crash-id \
	tests/fuzz/fuzz-ranges \
	tests/fuzz/fuzz-log-order \
	tests/fuzz/fuzz-crash-joint \
	tests/fuzz/fuzz-rbd-spec \
	tests/fuzz/fuzz-differential \
	$(NULL)
FUZZ_LIBS = src/common/libcommon.la src/tools/libreplay.la src/tools/libtraceread.la \
	src/backend/libbackend.la src/device/libdevice.la src/block/libblock.la $(PTHREAD_LIBS)
if FUZZING
noinst_PROGRAMS += $(FUZZ_TARGETS)
FUZZ_MAIN =
FUZZ_LINK_FLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
else
UNIT_TESTS += $(FUZZ_TARGETS)
FUZZ_MAIN = tests/fuzz/standalone.c
FUZZ_LINK_FLAGS = $(AM_LDFLAGS)
endif
tests_fuzz_fuzz_blktrace_SOURCES = tests/fuzz/fuzz_blktrace.c tests/fuzz/fuzz.h $(FUZZ_MAIN)
tests_fuzz_fuzz_blktrace_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_blktrace_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_iolog_SOURCES = tests/fuzz/fuzz_iolog.c tests/fuzz/fuzz.h $(FUZZ_MAIN)
tests_fuzz_fuzz_iolog_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_iolog_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_cli_SOURCES = tests/fuzz/fuzz_cli.c tests/fuzz/fuzz.h $(FUZZ_MAIN)
tests_fuzz_fuzz_cli_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_cli_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_model_SOURCES = tests/fuzz/fuzz_model.c tests/fuzz/fuzz.h $(FUZZ_MAIN)
tests_fuzz_fuzz_model_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_model_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_replay_SOURCES = tests/fuzz/fuzz_replay.c tests/fuzz/fuzz.h $(FUZZ_MAIN)
tests_fuzz_fuzz_replay_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_replay_LDFLAGS = $(FUZZ_LINK_FLAGS)
# The control tree's writes: its own files, their libfuse replies stubbed in the target.
tests_fuzz_fuzz_control_SOURCES = tests/fuzz/fuzz_control.c tests/fuzz/fuzz.h \
	src/daemon/control_attrs.c src/daemon/control_fs.c src/daemon/control_inode.c \
	src/daemon/control_mq.c $(FUZZ_MAIN)
tests_fuzz_fuzz_control_CFLAGS = $(AM_CFLAGS) $(FUSE_CFLAGS)
tests_fuzz_fuzz_control_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_control_LDFLAGS = $(FUZZ_LINK_FLAGS)
# rqdisk-crash's log parser and state IDs.
tests_fuzz_fuzz_crash_log_SOURCES = tests/fuzz/fuzz_crash_log.c tests/fuzz/fuzz.h $(FUZZ_MAIN)
tests_fuzz_fuzz_crash_log_LDADD = src/crash/libcrash.la $(FUZZ_LIBS)
tests_fuzz_fuzz_crash_log_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_crash_id_SOURCES = tests/fuzz/fuzz_crash_id.c tests/fuzz/fuzz.h $(FUZZ_MAIN)
tests_fuzz_fuzz_crash_id_LDADD = src/crash/libcrash.la $(FUZZ_LIBS)
tests_fuzz_fuzz_crash_id_LDFLAGS = $(FUZZ_LINK_FLAGS)
# The order file of several disks' logs (log-writes' order=).
tests_fuzz_fuzz_log_order_SOURCES = tests/fuzz/fuzz_log_order.c tests/fuzz/fuzz.h $(FUZZ_MAIN)
tests_fuzz_fuzz_log_order_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_log_order_LDFLAGS = $(FUZZ_LINK_FLAGS)
# Several disks' logs read with their order (rqdisk-crash's library).
tests_fuzz_fuzz_crash_joint_SOURCES = tests/fuzz/fuzz_crash_joint.c tests/fuzz/fuzz.h $(FUZZ_MAIN)
tests_fuzz_fuzz_crash_joint_LDADD = src/crash/libcrash.la $(FUZZ_LIBS)
tests_fuzz_fuzz_crash_joint_LDFLAGS = $(FUZZ_LINK_FLAGS)
# rqdisk-crash's --only ranges, as rqdisk-extents prints them.
tests_fuzz_fuzz_ranges_SOURCES = tests/fuzz/fuzz_ranges.c tests/fuzz/fuzz.h $(FUZZ_MAIN)
tests_fuzz_fuzz_ranges_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_ranges_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_rbd_spec_SOURCES = tests/fuzz/fuzz_rbd_spec.c tests/fuzz/fuzz.h \
	src/backend/rbd_spec.c $(FUZZ_MAIN)
tests_fuzz_fuzz_rbd_spec_LDADD = $(FUZZ_LIBS)
tests_fuzz_fuzz_rbd_spec_LDFLAGS = $(FUZZ_LINK_FLAGS)
# The differential test of the crash lab: the stack, its log and libcrash against the model.
tests_fuzz_fuzz_differential_SOURCES = tests/fuzz/fuzz_differential.c tests/fuzz/fuzz.h \
	$(DIFF_SOURCES) $(FUZZ_MAIN)
tests_fuzz_fuzz_differential_LDADD = src/crash/libcrash.la src/daemon/librqdaemon.la $(FUZZ_LIBS) \
	$(URING_LIBS)
tests_fuzz_fuzz_differential_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_fuzz_fuzz_differential_LDFLAGS = $(FUZZ_LINK_FLAGS)
EXTRA_DIST += tests/fuzz/README.md tests/fuzz/corpus
