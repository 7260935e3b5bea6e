/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon_util.c - what every file of the daemon uses as it starts: its
 * one-line message on stderr, and a name made absolute before the daemon
 * leaves its working directory for /.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

void die_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("rqdisk: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* NAME from the working directory at start: the daemon leaves it for /. */
char *absolute_path(const char *name)
{
	char cwd[PATH_MAX], *path;

	if (name[0] == '/')
		return strdup(name);
	if (!getcwd(cwd, sizeof(cwd)) || asprintf(&path, "%s/%s", cwd, name) < 0)
		return NULL;
	return path;
}
