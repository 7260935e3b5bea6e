/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * privilege.c - a privileged rqdisk (set-user-ID, set-group-ID or given
 * file capabilities) made its caller again before it reaches any path,
 * keeping only the capabilities MEMORY PRESSURE in rqdisk(8) asks for.
 */
#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon.h"

/* Locking memory, and PR_SET_IO_FLUSHER (both in the first word of the sets). */
#define KEPT_CAPS ((1u << CAP_IPC_LOCK) | (1u << CAP_SYS_RESOURCE))

/*
 * Of the capabilities held, only the kept ones stay, and not effective:
 * the threads the device stack starts before the memory is set up (the
 * log's writer, a fault rule's watcher) inherit the calling thread's sets,
 * and must not write their files past quotas.  The main thread makes them
 * effective for the setup alone (raise_setup_privilege).
 */
static int keep_only_kept_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[0].permitted &= KEPT_CAPS;
	data[0].effective = 0;
	data[0].inheritable &= KEPT_CAPS;
	for (size_t i = 1; i < _LINUX_CAPABILITY_U32S_3; i++)
		data[i] = (struct __user_cap_data_struct){ 0 };
	return syscall(SYS_capset, &hdr, data) ? -1 : 0;
}

/*
 * Every path rqdisk opens, makes, removes or mounts on is its caller's
 * word: IMAGE, --create, --trace and trace/name, the log-writes filter's
 * file= and base=, the mount point.  Reached with more rights than the
 * caller's, they would let a user have rqdisk read /etc/shadow as an
 * image, make or remove files in root's directories, or mount over a file
 * root reads.  So all of rqdisk's ids become the real ones, the saved
 * ones too (never to come back), and the mount goes through fusermount3,
 * which checks the mount point and allow_other as for any user.  Done
 * first, before any thread, so that every thread is the caller.
 */
int drop_privilege(void)
{
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (!getauxval(AT_SECURE))
		return 0;
	/* keeps the permitted set across the change of ids: the kept ones are taken from it */
	prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0);
	if (setresgid(gid, gid, gid) || setresuid(uid, uid, uid) || keep_only_kept_caps()) {
		die_msg("a privileged rqdisk cannot become its caller (uid %u, gid %u): %s",
			(unsigned int)uid, (unsigned int)gid, strerror(errno));
		return -1;
	}
	prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	return 0;
}

/*
 * The memory is about to be set up (buffers locked, mlockall,
 * PR_SET_IO_FLUSHER): the kept capabilities made effective, in this thread
 * alone, until drop_setup_privilege.
 */
int raise_setup_privilege(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (!getauxval(AT_SECURE))
		return 0;
	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[0].effective = data[0].permitted;
	if (syscall(SYS_capset, &hdr, data)) {
		die_msg("a privileged rqdisk cannot use its capabilities: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Set up: the memory is locked and PR_SET_IO_FLUSHER set, the two things
 * the kept capabilities were for.  Kept longer, CAP_SYS_RESOURCE would let
 * every file rqdisk writes for its caller (the image, a log, a trace) pass
 * disk quotas and the blocks a file system reserves for root.  So this
 * thread, the one that serves, holds none from here on (the threads
 * started before hold them, never effective).
 */
int drop_setup_privilege(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	if (!getauxval(AT_SECURE))
		return 0;
	if (syscall(SYS_capset, &hdr, none)) {
		die_msg("a privileged rqdisk cannot give up its capabilities: %s", strerror(errno));
		return -1;
	}
	return 0;
}
