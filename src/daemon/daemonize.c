/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemonize.c - without --foreground the daemon forks, and the parent
 * returns only when the child says the mount is up, or that it failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/*
 * Without a terminal to hold: the parent waits until the child says the
 * mount is ready (or has failed, having said why on stderr) and exits
 * with that status.
 */
int daemonize_start(struct rqdisk_state *s)
{
	int pipefd[2];
	pid_t pid;
	char status = 1;

	if (pipe2(pipefd, O_CLOEXEC)) {
		die_msg("pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		die_msg("fork: %s", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		close(pipefd[1]);
		if (read(pipefd[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(pipefd[0]);
	s->ready_fd = pipefd[1];
	setsid();
	return 0;
}

void daemonize_finish(struct rqdisk_state *s, int status)
{
	char c = (char)status;
	int null;

	if (s->ready_fd < 0)
		return;
	if (!status) {
		/* stderr goes nowhere from here: what must be seen goes to syslog too (openlog in main) */
		null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
		if (chdir("/"))
			status = 0; /* nothing depends on the working directory */
	}
	if (write(s->ready_fd, &c, 1) != 1)
		status = 0;
	close(s->ready_fd);
	s->ready_fd = -1;
}
