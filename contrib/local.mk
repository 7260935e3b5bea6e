# The scripts around the programs: setting up, CI, benchmarks, the crash
# lab's checkers and workloads, fuzzing, the service unit, an elevator built
# outside the tree.
EXTRA_DIST += \
	contrib/bench/peers \
	contrib/ceph-single-node.sh \
	contrib/compare-elevators \
	contrib/crash/check-fs \
	contrib/crash/check-rename \
	contrib/crash/experiments \
	contrib/crash/workload-meta \
	contrib/elevator-example/Makefile \
	contrib/elevator-example/README.md \
	contrib/elevator-example/lifo.c \
	contrib/fio/mixed-random.fio \
	contrib/fuzz.sh \
	contrib/install-deps.sh \
	contrib/quickstart.sh \
	contrib/run-tests.sh \
	contrib/systemd/example.conf \
	contrib/systemd/rqdisk@.service \
	contrib/unconfigure-tree.sh \
	$(NULL)
