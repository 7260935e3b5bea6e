/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_guard.c - a fault on the mapped log (truncated under us) reads zeros and is remembered, not SIGBUS. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crash_guard.h"

/*
 * A signal handler has no context but what is global: the one map guarded
 * (rqdisk-crash reads one log), and whether it faulted.  Atomics, since the
 * fault may come on a FUSE thread.
 */
static _Atomic uintptr_t guard_start, guard_end;
static atomic_bool guard_tripped;
static uintptr_t guard_page;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, start = atomic_load(&guard_start);
	uintptr_t end = atomic_load(&guard_end), page = a & ~(guard_page - 1);

	(void)uc;
	/*
	 * The rest of the map becomes zeros, so that the access, run again on
	 * return, succeeds; mmap is a plain system call, safe here.
	 */
	if (si->si_code > 0 && a >= start && a < end &&
	    mmap((void *)page, end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
		 0) != MAP_FAILED) {
		atomic_store(&guard_tripped, true);
		return;
	}
	/* not the log's: what SIGBUS would have done without us */
	signal(sig, SIG_DFL);
	if (si->si_code <= 0)
		raise(sig);
}

int crash_guard_watch(const void *map, size_t len)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	long page = sysconf(_SC_PAGESIZE);

	guard_page = page > 0 ? (uintptr_t)page : 4096;
	atomic_store(&guard_tripped, false);
	atomic_store(&guard_start, (uintptr_t)map);
	atomic_store(&guard_end, ((uintptr_t)map + len + guard_page - 1) & ~(guard_page - 1));
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL) ? -errno : 0;
}

void crash_guard_unwatch(void)
{
	atomic_store(&guard_start, 0);
	atomic_store(&guard_end, 0);
}

bool crash_guard_tripped(void)
{
	return atomic_load(&guard_tripped);
}
