# SPDX-License-Identifier: BSD-3-Clause
# The tests: Check unit tests against a fake driver that completes on
# command, shell integration tests that mount the disk, and what they share.

# What the unit tests share, built once into one library every test links:
# the fake driver, the elevator harness, the device stack harness, the
# tunables' checks, the io_uring driver's harness.
check_LTLIBRARIES += tests/libtestharness.la
tests_libtestharness_la_SOURCES = \
	tests/elv_harness.c \
	tests/elv_harness.h \
	tests/elv_sim.c \
	tests/elv_sim.h \
	tests/fake_driver.c \
	tests/fake_driver.h \
	tests/fake_mq.c \
	tests/fake_mq.h \
	tests/stack_harness.c \
	tests/stack_harness.h \
	tests/tunable_test.c \
	tests/tunable_test.h \
	tests/uring_harness.c \
	tests/uring_harness.h \
	$(NULL)

# Every unit test links these, and is built with AM_CFLAGS (which holds
# Check's flags); a test names only what it adds, as check_nbd does.
TEST_LDADD = tests/libtestharness.la src/tools/libtraceread.la src/daemon/librqdaemon.la \
	src/backend/libbackend.la src/device/libdevice.la src/block/libblock.la $(CHECK_LIBS) \
	$(URING_LIBS) $(PTHREAD_LIBS)
LDADD = $(TEST_LDADD)

UNIT_TESTS = \
	tests/check_limits \
	tests/check_merge \
	tests/check_segments \
	tests/check_request \
	tests/check_barrier \
	tests/check_noop \
	tests/check_deadline \
	tests/check_as \
	tests/check_cfq \
	tests/check_bfq \
	tests/check_sstf \
	tests/check_clook \
	tests/check_kyber \
	tests/check_property \
	tests/check_uring_io \
	tests/check_uring_flush \
	tests/check_uring_errors \
	tests/check_uring_timers \
	tests/check_uring_backend \
	tests/check_null_backend \
	tests/check_uring_loop \
	tests/check_uring_mq \
	tests/check_switch \
	tests/check_loader \
	tests/check_blktrace \
	tests/check_model \
	tests/check_device \
	tests/check_blktrace_read \
	tests/check_checkorder \
	tests/check_replay \
	tests/check_bufpool \
	tests/check_cli \
	tests/check_filter_attrs \
	tests/check_control_queue \
	tests/check_write_cache \
	tests/check_fault \
	tests/check_log_writes \
	tests/check_log_writes_limit \
	tests/check_ioprio_cache \
	tests/check_wb_err \
	tests/check_rbd_spec \
	tests/check_kv \
	tests/check_crash \
	tests/check_differential \
	tests/check_mq \
	tests/check_mq_barrier \
	tests/check_mq_threads \
	tests/check_lock_stats \
	tests/check_mq_model \
	$(NULL)
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
tests_check_checkorder_LDADD = src/tools/libcheckorder.la $(TEST_LDADD)
tests_check_cli_LDADD = src/common/libcommon.la $(TEST_LDADD)
tests_check_crash_LDADD = src/crash/libcrash.la $(TEST_LDADD)
# the control tree's fixed files, shown over a stack of the test's
tests_check_control_queue_SOURCES = tests/check_control_queue.c src/daemon/control_attrs.c
tests_check_control_queue_CFLAGS = $(AM_CFLAGS) $(FUSE_CFLAGS)
# The reference disk and the differential run, which the fuzz target shares.
DIFF_SOURCES = tests/ref_disk.c tests/ref_disk.h tests/diff_stack.c tests/diff_stack.h \
	tests/diff_case.c
tests_check_differential_SOURCES = tests/check_differential.c $(DIFF_SOURCES)
tests_check_differential_LDADD = src/crash/libcrash.la $(TEST_LDADD)
tests_check_replay_LDADD = src/tools/libreplay.la $(TEST_LDADD)
tests_check_mq_model_CPPFLAGS = $(AM_CPPFLAGS) -iquote $(top_srcdir)/contrib/mq-model
tests_check_mq_model_LDADD = contrib/mq-model/libmqmodel.la $(TEST_LDADD) -lm
# a clone that fails as memory running out would; error_file's look that hangs as on a dead mount
tests_check_fault_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=bio_clone_range -Wl,--wrap=stat
# the elevators built as shared objects below, loaded
tests_check_loader_LDFLAGS = $(AM_LDFLAGS) $(ELV_EXPORTS)
EXTRA_tests_check_loader_DEPENDENCIES = src/block/elevator.syms $(ELV_MODULES)
if HAVE_LIBNBD
UNIT_TESTS += tests/check_nbd
tests_check_nbd_SOURCES = tests/check_nbd.c $(NBD_BACKEND_SOURCES)
tests_check_nbd_CFLAGS = $(AM_CFLAGS) $(LIBNBD_CFLAGS)
tests_check_nbd_LDADD = $(TEST_LDADD) $(LIBNBD_LIBS)
endif
# The unit tests alone: CI runs them again under the sanitizers.
check-unit:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(UNIT_TESTS)"
.PHONY: check-unit

# Elevators as shared objects, for check_loader and test-plugin.sh: the
# contrib example, one that idles, broken ones the loader refuses, and one
# built before a field was added at the end of the table.  They
# include <rqdisk/elevator.h> as an elevator built outside the tree does,
# from include/, laid out as the installed $(includedir).
ELV_MODULES = \
	tests/lifo.la \
	tests/idler.la \
	tests/sorted.la \
	tests/broken-version.la \
	tests/broken-nohook.la \
	tests/broken-nosymbol.la \
	tests/broken-small.la \
	tests/broken-none.la \
	tests/broken-alias.la \
	tests/broken-tunable.la \
	tests/old-table.la \
	tests/prev.la \
	tests/mqfifo.la \
	$(NULL)
check_LTLIBRARIES += $(ELV_MODULES)
ELV_MODULE_CPPFLAGS = -I$(top_srcdir)/include
ELV_MODULE_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_lifo_la_SOURCES = contrib/elevator-example/lifo.c
tests_lifo_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS)
tests_lifo_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_idler_la_SOURCES = tests/elv-idler.c
tests_idler_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS)
tests_idler_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_sorted_la_SOURCES = tests/elv-sorted.c
tests_sorted_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS)
tests_sorted_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_broken_version_la_SOURCES = tests/elv-broken.c
tests_broken_version_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS) -DBROKEN_VERSION
tests_broken_version_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_broken_nohook_la_SOURCES = tests/elv-broken.c
tests_broken_nohook_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS) -DBROKEN_NOHOOK
tests_broken_nohook_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_broken_nosymbol_la_SOURCES = tests/elv-broken.c
tests_broken_nosymbol_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS) -DBROKEN_NOSYMBOL
tests_broken_nosymbol_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_broken_small_la_SOURCES = tests/elv-broken.c
tests_broken_small_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS) -DBROKEN_SMALL
tests_broken_small_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_broken_none_la_SOURCES = tests/elv-broken.c
tests_broken_none_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS) -DBROKEN_NONE
tests_broken_none_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_broken_alias_la_SOURCES = tests/elv-broken.c
tests_broken_alias_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS) -DBROKEN_ALIAS
tests_broken_alias_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_broken_tunable_la_SOURCES = tests/elv-broken.c
tests_broken_tunable_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS) -DBROKEN_TUNABLE
tests_broken_tunable_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_old_table_la_SOURCES = tests/elv-broken.c
tests_old_table_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS) -DOLD_TABLE
tests_old_table_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_prev_la_SOURCES = tests/elv-prev.c
tests_prev_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS)
tests_prev_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)
tests_mqfifo_la_SOURCES = tests/elv-mqfifo.c
tests_mqfifo_la_CPPFLAGS = $(ELV_MODULE_CPPFLAGS)
tests_mqfifo_la_LDFLAGS = $(ELV_MODULE_LDFLAGS)

# Integration tests: shell scripts that mount the disk, loop-attach it, mkfs
# and fsck it.  They need root, /dev/fuse and loop devices, and skip (77)
# without them.
INTEGRATION_TESTS = \
	tests/test-mount-dir.sh \
	tests/test-mount-file.sh \
	tests/test-mkfs-fsck.sh \
	tests/test-mkfs-fsck-none.sh \
	tests/test-mkfs-fsck-4k.sh \
	tests/test-mkfs-fsck-uring.sh \
	tests/test-mkfs-fsck-mq.sh \
	tests/test-elevators-mq.sh \
	tests/test-fio-verify.sh \
	tests/test-fio-verify-uring.sh \
	tests/test-mq.sh \
	tests/test-mq-barrier.sh \
	tests/test-mq-uring.sh \
	tests/test-mq-barrier-uring.sh \
	tests/test-mq-uring-cpu.sh \
	tests/test-mq-poll-usec.sh \
	tests/test-mq-idle-poll.sh \
	tests/test-mkfs-fsck-mq-uring.sh \
	tests/test-sigterm-mq-uring.sh \
	tests/test-rmw-concurrent.sh \
	tests/test-sigterm.sh \
	tests/test-sigterm-uring.sh \
	tests/test-sigterm-mq.sh \
	tests/test-fuse-uring.sh \
	tests/test-fuse-uring-auto.sh \
	tests/test-fuse-uring-depth.sh \
	tests/test-bad-input.sh \
	tests/test-block-semantics.sh \
	tests/test-options.sh \
	tests/test-compare-live.sh \
	tests/test-control.sh \
	tests/test-lock-stats.sh \
	tests/test-other-users.sh \
	tests/test-switch-pending.sh \
	tests/test-switch-fio.sh \
	tests/test-switch-fio-uring.sh \
	tests/test-elevators.sh \
	tests/test-plugin.sh \
	tests/test-plugin-mq.sh \
	tests/test-trace.sh \
	tests/test-trace-model.sh \
	tests/test-trace-mq.sh \
	tests/test-checkorder-elevators.sh \
	tests/test-model.sh \
	tests/test-null.sh \
	tests/test-null-irqmode.sh \
	tests/test-filter.sh \
	tests/test-filter-control.sh \
	tests/test-fault.sh \
	tests/test-fault-sectors.sh \
	tests/test-fault-ext4.sh \
	tests/test-write-cache.sh \
	tests/test-disks.sh \
	tests/test-disks-power.sh \
	tests/test-disks-log-order.sh \
	tests/test-crash-joint.sh \
	tests/test-crash-btrfs-raid1.sh \
	tests/test-crash-rename-cut.sh \
	tests/test-crash-ext4.sh \
	tests/test-crash-aim.sh \
	tests/test-crash-sqlite.sh \
	tests/test-crash-rename.sh \
	tests/test-log-writes.sh \
	tests/test-log-writes-syslog.sh \
	tests/test-direct-align.sh \
	tests/test-memory.sh \
	tests/test-memcg.sh \
	tests/test-ioprio.sh \
	tests/test-cgroup-groups.sh \
	tests/test-trace-cgroup.sh \
	tests/test-nbd.sh \
	tests/test-nbd-failures.sh \
	tests/test-nbd-multiconn.sh \
	tests/test-mq-nbd.sh \
	tests/test-mq-nbd-uring.sh \
	tests/test-nbd-lost-writes.sh \
	tests/test-nbd-lost-writes-files.sh \
	tests/test-log-writes-nbd.sh \
	tests/test-nbd-io.sh \
	tests/test-nbd-mkfs.sh \
	tests/test-rbd.sh \
	tests/test-backend-modules.sh \
	tests/test-setcap.sh \
	tests/test-crash.sh \
	tests/test-crash-checkers.sh \
	tests/test-crash-trust.sh \
	tests/test-crash-marks.sh \
	tests/test-crash-output.sh \
	tests/test-notify.sh \
	tests/test-crash-482.sh \
	tests/test-readme.sh \
	$(NULL)
TESTS += $(INTEGRATION_TESTS)
# The tests that need neither root nor FUSE: rqdisk-checkorder, the replay
# and compare-elevators on generated traces, the man pages against the code,
# the device stack's files against the queue's, rqdisk-crash's shards and
# folded states, the bash completion, the registries against the code.
TESTS += \
	tests/test-checkorder.sh \
	tests/test-replay.sh \
	tests/test-replay-mq.sh \
	tests/test-compare.sh \
	tests/test-man-pages.sh \
	tests/test-layering.sh \
	tests/test-licence.sh \
	tests/test-crash-scale.sh \
	tests/test-completion.sh \
	tests/test-registry.sh \
	$(NULL)
AM_TESTS_ENVIRONMENT = \
	RQDISK=$(abs_top_builddir)/src/daemon/rqdisk; export RQDISK; \
	top_srcdir=$(abs_top_srcdir); export top_srcdir; \
	top_builddir=$(abs_top_builddir); export top_builddir; \
	CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-$(CK_TIMEOUT_SCALE)}; \
	export CK_TIMEOUT_MULTIPLIER;

# The integration tests' helpers, programs of their own: writers that check
# what is acknowledged, a blktrace generator, a dm-log-writes log generator
# and reader.  They link nothing of rqdisk (crash-gen-log takes only the log
# format's header).
check_PROGRAMS += \
	tests/ack-writer \
	tests/bt-gen \
	tests/crash-gen-log \
	tests/fd-holder \
	tests/log-writes-dump \
	tests/rmw-writers \
	$(NULL)
tests_ack_writer_LDADD =
tests_bt_gen_LDADD =
tests_crash_gen_log_LDADD =
tests_fd_holder_LDADD =
tests_log_writes_dump_LDADD =
tests_rmw_writers_LDADD = $(PTHREAD_LIBS)

EXTRA_DIST += \
	$(INTEGRATION_TESTS) \
	tests/crash-functions.sh \
	tests/disks-functions.sh \
	tests/replay-functions.sh \
	tests/fault-functions.sh \
	tests/functions.sh \
	tests/nbd-functions.sh \
	tests/replay-expected.csv \
	tests/test-checkorder.sh \
	tests/test-compare.sh \
	tests/test-completion.sh \
	tests/test-crash-scale.sh \
	tests/test-layering.sh \
	tests/test-licence.sh \
	tests/test-man-pages.sh \
	tests/test-registry.sh \
	tests/test-replay.sh \
	tests/test-replay-mq.sh \
	$(NULL)
