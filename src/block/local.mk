# SPDX-License-Identifier: BSD-3-Clause
# The block core: bios, requests, the queue and its limits, the elevator
# switch, barriers; no liburing, no FUSE.  The built-in elevators join it
# from sched/local.mk.
noinst_LTLIBRARIES += src/block/libblock.la
src_block_libblock_la_SOURCES = \
	src/block/bio.c \
	src/block/blkcg.c \
	src/block/blkcg.h \
	src/block/blk_mq.c \
	src/block/blk_mq.h \
	src/block/blk_mq_dispatch.c \
	src/block/blk_mq_sched.c \
	src/block/blk_mq_tag.c \
	src/block/blkdev.h \
	src/block/blktrace.c \
	src/block/blktrace.h \
	src/block/bounce.c \
	src/block/clock.c \
	src/block/elevator.c \
	src/block/elevator_switch.c \
	src/block/flush.c \
	src/block/lock_stats.c \
	src/block/lock_stats.h \
	src/block/merge.c \
	src/block/queue.c \
	src/block/queue_limits.c \
	src/block/queue_limits.h \
	src/block/queue_stack.c \
	src/block/queue_stack.h \
	src/block/request.c \
	src/block/stats.c \
	src/block/stats.h \
	$(NULL)
src_block_libblock_la_CPPFLAGS = $(AM_CPPFLAGS) -DELV_BUILTIN
src_block_libblock_la_LIBADD = $(PTHREAD_LIBS) -ldl -lm

# Elevators from shared objects call back into the core: a program that
# loads them exports the API to them.
ELV_EXPORTS = -Wl,--dynamic-list=$(top_srcdir)/src/block/elevator.syms
EXTRA_DIST += src/block/elevator.syms
