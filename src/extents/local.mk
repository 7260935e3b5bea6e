# SPDX-License-Identifier: BSD-3-Clause
# rqdisk-extents: the sectors files hold on the disk below their file system
# (FIEMAP through the loop device), in the ranges rqdisk-crash's --only and
# the fault filter's badblocks take.  It links libcommon alone.
bin_PROGRAMS += src/extents/rqdisk-extents
src_extents_rqdisk_extents_SOURCES = src/extents/extents.c
src_extents_rqdisk_extents_LDADD = src/common/libcommon.la
