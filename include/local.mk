# SPDX-License-Identifier: BSD-3-Clause
# The elevator API, installed for elevators built outside the tree
# (rqdisk-elevator(3)); pkg-config --cflags rqdisk finds it.
rqdiskincludedir = $(includedir)/rqdisk
rqdiskinclude_HEADERS = \
	include/rqdisk/blk_types.h \
	include/rqdisk/elevator.h \
	include/rqdisk/ioprio.h \
	$(NULL)
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = rqdisk.pc
