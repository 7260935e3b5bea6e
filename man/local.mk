# SPDX-License-Identifier: BSD-3-Clause
# A page per program, per filter and per backend; rqdisk(8) is their index.
# Each page is made from its source, man/PAGE.in, with configure's version
# on its .TH line; the tarball ships both, and the made pages are installed.
dist_man_MANS += \
	man/rqdisk.8 \
	man/rqdisk-checkorder.1 \
	man/rqdisk-crash.1 \
	man/rqdisk-extents.1 \
	man/rqdisk-replay.1 \
	man/rqdisk-elevator.3 \
	man/rqdisk-elevators.7 \
	man/rqdisk-delay-filter.8 \
	man/rqdisk-fault-filter.8 \
	man/rqdisk-log-writes-filter.8 \
	man/rqdisk-model-filter.8 \
	man/rqdisk-write-cache-filter.8 \
	man/rqdisk-file-backend.8 \
	man/rqdisk-nbd-backend.8 \
	man/rqdisk-null-backend.8 \
	man/rqdisk-rbd-backend.8 \
	$(NULL)
EXTRA_DIST += $(dist_man_MANS:=.in)
# Made again when configure runs (the version may have changed) or a source
# changes; into the build directory, so a build of the tarball (whose pages
# sit in the read-only sources) makes its own, which distclean removes.
$(dist_man_MANS): $(dist_man_MANS:=.in) $(top_builddir)/config.status
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	sed -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' $(srcdir)/$@.in >$@-t && mv $@-t $@
DISTCLEANFILES = $(dist_man_MANS)
