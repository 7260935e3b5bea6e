/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd-holder.c - one open file description held by one process, driven
 * line by line: what several writers that each fsync their own
 * descriptor see.
 *
 *   fd-holder FILE
 *
 * FILE is opened once, O_RDWR | O_DIRECT, and kept open until stdin
 * ends.  Each line of stdin is a command on that descriptor, answered
 * with one line on stdout, "ok" or the error's strerror text:
 *
 *   write BLOCK        4 KiB of BLOCK's pattern at BLOCK * 4096
 *   dsync-write BLOCK  the same with RWF_DSYNC
 *   fsync              fsync(2)
 *   close              close(2), and exit 0
 *
 * The first line, before any command, is "ok" once FILE is open (or the
 * error, and the program exits 1).  Exit 0 at the end of stdin too; 2
 * for a command it does not know.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define BLOCK 4096

static void answer(int ret)
{
	printf("%s\n", ret < 0 ? strerror(errno) : "ok");
	fflush(stdout);
}

/* 4 KiB that say which block they are for, from aligned memory (O_DIRECT). */
static int write_block(int fd, long block, int flags)
{
	static char *buf;
	struct iovec iov;

	if (!buf && posix_memalign((void **)&buf, BLOCK, BLOCK))
		return -1;
	for (int i = 0; i < BLOCK; i++)
		buf[i] = (char)(block * 31 + i / 512 + 1);
	iov = (struct iovec){ buf, BLOCK };
	if (pwritev2(fd, &iov, 1, (off_t)block * BLOCK, flags) != BLOCK)
		return errno ? -1 : (errno = EIO, -1);
	return 0;
}

int main(int argc, char **argv)
{
	char line[128];
	long block;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: fd-holder FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_DIRECT);
	answer(fd);
	if (fd < 0)
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		errno = 0;
		if (sscanf(line, "write %ld", &block) == 1)
			answer(write_block(fd, block, 0));
		else if (sscanf(line, "dsync-write %ld", &block) == 1)
			answer(write_block(fd, block, RWF_DSYNC));
		else if (!strcmp(line, "fsync\n"))
			answer(fsync(fd));
		else if (!strcmp(line, "close\n"))
			break;
		else
			return 2;
	}
	answer(close(fd));
	return 0;
}
