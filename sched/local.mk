# SPDX-License-Identifier: BSD-3-Clause
# The elevators: plugins that touch only their ops table, built into the
# block core (ELV_BUILTIN); rq_rbtree.h and rq_merge.h are what they share.
src_block_libblock_la_SOURCES += \
	sched/noop.c \
	sched/deadline.c \
	sched/elv_cgroup.c \
	sched/elv_cgroup.h \
	sched/as.c \
	sched/cfq.c \
	sched/cfq_group.c \
	sched/cfq_impl.h \
	sched/cfq_iocontext.c \
	sched/cfq_queue.c \
	sched/cfq_service.c \
	sched/cfq_group.c \
	sched/cfq_impl.h \
	sched/cfq_iocontext.c \
	sched/cfq_queue.c \
	sched/cfq_service.c \
	sched/bfq.c \
	sched/bfq_burst.c \
	sched/bfq_coop.c \
	sched/bfq_group.c \
	sched/bfq.h \
	sched/bfq_impl.h \
	sched/bfq_inject.c \
	sched/bfq_service.c \
	sched/bfq_weight.c \
	sched/bfq_wf2q.c \
	sched/sweep.c \
	sched/sweep.h \
	sched/sstf.c \
	sched/clook.c \
	sched/kyber.c \
	sched/rq_merge.h \
	sched/rq_rbtree.h \
	$(NULL)
