/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_loop.h - a state on a loop device of its own, for checkers that
 * want a block device: with --loop, {} is /dev/loopN, not the state's file.
 */
#ifndef RQDISK_CRASH_LOOP_H
#define RQDISK_CRASH_LOOP_H

#include <stddef.h>

/*
 * Attach path to a free loop device; its name into dev.  Returns an fd
 * that holds the device (close it with crash_loop_detach), or -errno with
 * a one-line reason in why.
 */
int crash_loop_attach(const char *path, char *dev, size_t devlen, char *why, size_t whylen);
/* Detach the device held by fd (at once, or when its last user closes it). */
void crash_loop_detach(int fd);

#endif
