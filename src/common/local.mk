# SPDX-License-Identifier: BSD-3-Clause
# What the programs share and no layer owns: the command line's numbers and
# lists (cli.c), the key=value,... walker of the filters' and backends'
# arguments (kv.c), and dm-log-writes' on-disk format (log_writes.c), which
# the log-writes filter writes and rqdisk-crash, linking no libdevice, reads;
# sets of sectors in the badblocks syntax (sector_ranges.c), which
# rqdisk-extents prints and rqdisk-crash's --only takes.
noinst_LTLIBRARIES += src/common/libcommon.la
src_common_libcommon_la_SOURCES = \
	src/common/cli.c \
	src/common/cli.h \
	src/common/kv.c \
	src/common/kv.h \
	src/common/log_order.c \
	src/common/log_order.h \
	src/common/log_writes.c \
	src/common/log_writes.h \
	src/common/sector_ranges.c \
	src/common/sector_ranges.h \
	$(NULL)
