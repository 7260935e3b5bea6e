/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_writes_files.c - the files the log-writes filter writes: the log
 * (file=) and the copy of the image it starts from (base=), each made new
 * or a device, never through a symlink nor over the image itself; and the
 * copy, a clone where the file system can make one.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log_writes_impl.h"

/* What a copy of the image moves at a time when it cannot clone it. */
#define LW_COPY_CHUNK (1u << 20)

/* path names the same file as image: it must not be made (truncated) over it. */
bool lw_same_file(const char *path, const char *image)
{
	struct stat a, b;

	return image && !stat(path, &a) && !stat(image, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* Copy the image as it is to base: a clone where the file system can, else copies. */
int lw_copy_image(const char *image, int to, char *why, size_t whylen)
{
	int from = open(image, O_RDONLY | O_CLOEXEC);
	struct stat st;
	off_t left;
	char *buf = NULL;
	int ret = 0;

	if (from < 0 || fstat(from, &st)) {
		ret = -errno;
		snprintf(why, whylen, "log-writes: base: reading the image %s: %s", image,
			 strerror(errno));
		goto out;
	}
	if (!ioctl(to, FICLONE, from))
		goto out;
	for (left = st.st_size; left > 0;) {
		ssize_t n = copy_file_range(from, NULL, to, NULL, (size_t)left, 0);

		if (n <= 0)
			break;
		left -= n;
	}
	if (left > 0) { /* no copy_file_range here (or a short one): read and write the rest */
		off_t off = st.st_size - left;

		buf = malloc(LW_COPY_CHUNK);
		if (!buf) {
			ret = -ENOMEM;
			snprintf(why, whylen, "out of memory");
			goto out;
		}
		while (left > 0) {
			size_t want = left < LW_COPY_CHUNK ? (size_t)left : LW_COPY_CHUNK;
			ssize_t n = pread(from, buf, want, off);

			if (n <= 0 || lw_pwrite_all(to, buf, (size_t)n, (uint64_t)off)) {
				ret = n < 0 ? -errno : -EIO;
				snprintf(why, whylen, "log-writes: base: copying the image: %s",
					 n < 0 ? strerror(errno) : "short read or write");
				goto out;
			}
			off += n;
			left -= n;
		}
	}
	if (ftruncate(to, st.st_size)) {
		ret = -errno;
		snprintf(why, whylen, "log-writes: base: %s", strerror(errno));
	}
out:
	free(buf);
	if (from >= 0)
		close(from);
	return ret;
}

/*
 * An existing path: taken only if it is a device (a log device, as
 * dm-log-writes logs to), opened through no symlink.  A file that is
 * there may be another user's, made in a shared directory to read what
 * the daemon writes; a symlink would have it write wherever it points.
 */
static int lw_open_device(const char *what, const char *path, char *why, size_t whylen)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0 && errno == ELOOP) {
		snprintf(why, whylen, "log-writes: %s=%s is a symbolic link: name a new file", what,
			 path);
		return -ELOOP;
	}
	if (fd < 0 && errno != EISDIR) {
		int err = errno;

		/* a device or file that is there, but not ours to write: say why, not "exists" */
		snprintf(why, whylen, "log-writes: %s=%s: %s", what, path, strerror(err));
		return -err;
	}
	if (fd >= 0 && !fstat(fd, &st) && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)) &&
	    !fcntl(fd, F_SETFL, 0))
		return fd;
	if (fd >= 0)
		close(fd);
	snprintf(why, whylen, "log-writes: %s=%s exists: name a new file, or a device", what, path);
	return -EEXIST;
}

/*
 * Make path new, mode 0600, or open the device it names, and say where it
 * is.  *made: it was made here, and is taken away again if the open fails
 * later.
 */
int lw_create(const char *what, const char *path, char **abs, bool *made, char *why,
		     size_t whylen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	*made = fd >= 0;
	if (fd < 0 && errno == EEXIST) {
		fd = lw_open_device(what, path, why, whylen);
		if (fd < 0)
			return fd;
	}
	if (fd < 0) {
		snprintf(why, whylen, "log-writes: %s=%s: %s", what, path, strerror(errno));
		return -errno;
	}
	*abs = realpath(path, NULL);
	if (!*abs) {
		snprintf(why, whylen, "log-writes: %s=%s: %s", what, path, strerror(errno));
		close(fd);
		if (*made)
			unlink(path);
		return -ENOMEM;
	}
	return fd;
}
