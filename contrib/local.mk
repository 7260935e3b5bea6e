# SPDX-License-Identifier: BSD-3-Clause
# The scripts around the programs: setting up, CI, benchmarks, the crash
# lab's checkers and workloads, fuzzing, the service unit, an elevator built
# outside the tree.
EXTRA_DIST += \
	contrib/bench/instructions \
	contrib/bench/peers \
	contrib/mq-model/measure \
	contrib/ceph-single-node.sh \
	contrib/compare-elevators \
	contrib/crash/btrfs-raid1 \
	contrib/crash/check-btrfs-raid1 \
	contrib/crash/check-durability \
	contrib/crash/check-fs \
	contrib/crash/check-rename \
	contrib/crash/check-sqlite \
	contrib/crash/commit-records \
	contrib/crash/experiments \
	contrib/crash/fuse-unmount.sh \
	contrib/crash/generic-482 \
	contrib/crash/parallel-shards \
	contrib/crash/slurm-shards.sbatch \
	contrib/crash/sqlite-journal \
	contrib/crash/workload-meta \
	contrib/elevator-example/Makefile \
	contrib/elevator-example/README.md \
	contrib/elevator-example/lifo.c \
	contrib/fio/comm_startup_lat.fio \
	contrib/fio/interleaved_io.fio \
	contrib/fio/mixed-random.fio \
	contrib/fio/seq_readers.fio \
	contrib/fuzz.sh \
	contrib/install-deps.sh \
	contrib/quickstart.sh \
	contrib/run-tests.sh \
	contrib/skip-reason-driver \
	contrib/systemd/example.conf \
	contrib/systemd/rqdisk@.service \
	contrib/unconfigure-tree.sh \
	$(NULL)

# Bash completion for the daemon and the tools: one file, which the tools'
# names link to, where bash-completion looks (its completionsdir under this
# prefix), else the usual place.  tests/test-completion.sh tries it.
BASH_COMPLETION_FILE = contrib/bash-completion/rqdisk
BASH_COMPLETION_LINKS = rqdisk-checkorder rqdisk-crash rqdisk-extents rqdisk-replay
bashcompletiondir = `$(PKG_CONFIG) --define-variable=prefix='$(prefix)' \
	--define-variable=datadir='$(datadir)' --variable=completionsdir bash-completion \
	2>/dev/null | grep . || echo '$(datadir)/bash-completion/completions'`
EXTRA_DIST += $(BASH_COMPLETION_FILE)
install-data-local: install-bash-completion
uninstall-local: uninstall-bash-completion
install-bash-completion:
	dir=$(bashcompletiondir); \
	$(MKDIR_P) "$(DESTDIR)$$dir" && \
	$(INSTALL_DATA) $(srcdir)/$(BASH_COMPLETION_FILE) "$(DESTDIR)$$dir/rqdisk" && \
	for name in $(BASH_COMPLETION_LINKS); do \
		(cd "$(DESTDIR)$$dir" && rm -f $$name && $(LN_S) rqdisk $$name) || exit 1; \
	done
uninstall-bash-completion:
	dir=$(bashcompletiondir); \
	for name in rqdisk $(BASH_COMPLETION_LINKS); do rm -f "$(DESTDIR)$$dir/$$name"; done
.PHONY: install-bash-completion uninstall-bash-completion
