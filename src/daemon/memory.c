/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memory.c - what keeps the daemon out of reclaim's way: its I/O buffers,
 * heap, stack and pages locked, and PR_SET_IO_FLUSHER, so that reclaim
 * that waits on a loop device on this disk never waits on the daemon
 * serving it (MEMORY PRESSURE in rqdisk(8)).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "daemon.h"
#include "fuse_ring.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

/*
 * The I/O buffers, after the fork: a child inherits no memory locks, and
 * its first write to each page would copy it.  RQDISK_TEST_BUFPOOL=BYTES,
 * for the tests only, makes the arena that small with nothing past it;
 * not heeded by a privileged rqdisk, whose caller would size what it locks.
 */
int setup_memory(struct rqdisk_state *s)
{
	const char *test = secure_getenv("RQDISK_TEST_BUFPOOL");
	size_t pool = FE_POOL_SIZE;
	unsigned int flags = 0;

	if (test) {
		pool = (size_t)strtoull(test, NULL, 0);
		flags = BUFPOOL_NO_FALLBACK;
	}
	if (fe_buffers_init(&s->disk, pool, flags)) {
		die_msg("out of memory for %zu MiB of I/O buffers", pool >> 20);
		return -1;
	}
	return 0;
}

#define LOCK_HEAP (4u << 20)    /* free heap kept for the I/O path's small structures */
#define LOCK_STACK (256u << 10) /* stack faulted in for serving */

static void __attribute__((noinline)) grow_stack(void)
{
	char buf[LOCK_STACK];

	memset(buf, 0, sizeof(buf));
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/*
 * What serving touches beside the buffers, locked too: the heap its
 * requests and bios come from (grown by LOCK_HEAP, never trimmed), its
 * stack, the program's pages.  A request then faults in nothing; one
 * that did was seen waiting on reclaim.  Not under AddressSanitizer,
 * whose shadow is terabytes of address space.
 */
static bool lock_process(void)
{
	void *heap;

	mallopt(M_TRIM_THRESHOLD, -1);
	mallopt(M_MMAP_THRESHOLD, 2 * LOCK_HEAP); /* LOCK_HEAP from the heap, not mmap */
	heap = malloc(LOCK_HEAP);
	if (heap)
		*(volatile char *)heap = 0; /* a malloc freed unused may be left out */
	free(heap);
	grow_stack();
#ifdef __SANITIZE_ADDRESS__
	return true;
#else
	return !mlockall(MCL_CURRENT);
#endif
}

/* Everything the I/O path touches, locked; said once where that is refused. */
void lock_memory(struct rqdisk_state *s)
{
	/* where the arena could not be locked, mlockall would be refused too */
	bool all = s->disk.bufs.locked && lock_process();

	if ((all && (!s->ring || fuse_ring_locked(s->ring))) || s->index) /* said once a daemon */
		return;
	fprintf(stderr, "rqdisk: warning: mlock refused (no CAP_IPC_LOCK, or RLIMIT_MEMLOCK "
			"too low): I/O buffers may be reclaimed; see MEMORY PRESSURE in rqdisk(8)\n");
}

/*
 * Our own reclaim must not wait on the writeback of a loop device on this
 * disk.  Refused, it is said once, with what to do: the service unit puts
 * the daemon in a cgroup of its own (safe without the flag) and grants the
 * capability; or the capability given to the program.  The flag is the
 * calling thread's: each disk's thread sets its own, and disk0 alone says
 * a refusal (quiet for the others).
 */
void set_io_flusher(bool quiet)
{
	if (!prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) || quiet)
		return;
	if (errno == EPERM)
		fprintf(stderr,
			"rqdisk: warning: PR_SET_IO_FLUSHER needs CAP_SYS_RESOURCE: without it a loop "
			"device on this disk may hang under memory pressure; run rqdisk as the "
			"rqdisk@.service unit (contrib/systemd), or grant it: setcap "
			"cap_sys_resource,cap_ipc_lock+ep rqdisk (MEMORY PRESSURE in rqdisk(8))\n");
	else
		fprintf(stderr,
			"rqdisk: warning: PR_SET_IO_FLUSHER: %s (Linux 5.6 or later): a loop device "
			"on this disk may hang under memory pressure; run rqdisk as the "
			"rqdisk@.service unit (contrib/systemd) (MEMORY PRESSURE in rqdisk(8))\n",
			strerror(errno));
}
