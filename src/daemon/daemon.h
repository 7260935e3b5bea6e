/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon.h - one running daemon's state, shared by the files of the
 * program: the image and its backend (image.c), the power signal and the
 * write cache's flush at exit (power.c), locked memory (memory.c), the
 * fork that waits for the mount (daemonize.c), the one-line message and
 * the absolute path every file uses (daemon_util.c), and the serve loop
 * (rqdisk.c).
 */
#ifndef RQDISK_DAEMON_H
#define RQDISK_DAEMON_H

#include <stdbool.h>

#include "blk_mq.h"
#include "frontend.h"
#include "options.h"

struct backend_type;
struct dev_ops;
struct fuse_ring;
struct uring_driver;

struct rqdisk_state {
	struct rqdisk_options opt;
	const struct backend_type *backend; /* what serves the image, from the registry */
	struct rqdisk disk;
	bool created; /* the image is ours to remove on failure */
	char *image_path; /* absolute */
	struct uring_driver *driver;
	struct blk_mq_tag_set tag_set; /* --queue-mode=mq: the hardware queues */
	struct fuse_session *se;
	struct fuse_ring *ring; /* --fuse-uring, or NULL */
	char *mountpoint; /* opt.mountpoint from /: the daemon unmounts it after chdir("/") */
	bool mounted;
	bool signals; /* FUSE's signal handlers set, to be removed */
	bool said_fallback; /* the arena ran short once: said so */
	bool blocked; /* serve waits for requests to end before reading more */
	int ready_fd; /* the waiting parent's pipe, or -1 */
	int serve_error; /* why reading the FUSE device stopped, or 0 */
	int power_fd;    /* SIGPWR's eventfd, watched by the loop, or -1 */
	struct bio exit_flush; /* the write cache's, before the loop ends */
	bool exit_flushed;
	int exit_flush_error; /* the cache's data did not all reach the image */
};

/* daemon_util.c: "rqdisk: " and the message, a line on stderr. */
void __attribute__((format(printf, 1, 2))) die_msg(const char *fmt, ...);

/* daemon_util.c: NAME from the working directory at start (malloc'd, NULL on failure). */
char *absolute_path(const char *name);

/* image.c */
int choose_backend(struct rqdisk_state *s);
int open_image(struct rqdisk_state *s);
bool image_is_remote(const struct rqdisk_state *s);
void remote_request_size(struct rqdisk_state *s);
int backend_of(const struct rqdisk_state *s, const struct dev_ops **ops);
void take_export(struct rqdisk_state *s);

/* privilege.c: a privileged rqdisk becomes its caller; -1 (said) if it cannot */
int drop_privilege(void);
/* Before the memory is set up: a privileged rqdisk's kept capabilities made effective. */
int raise_setup_privilege(void);
/* After the memory is set up: a privileged rqdisk holds no capability any more. */
int drop_setup_privilege(void);

/* power.c */
int setup_power(struct rqdisk_state *s);
void flush_at_exit(struct rqdisk_state *s);
void teardown_power(struct rqdisk_state *s);

/* memory.c */
int setup_memory(struct rqdisk_state *s);
void lock_memory(struct rqdisk_state *s);
void set_io_flusher(void);

/* daemonize.c */
int daemonize_start(struct rqdisk_state *s);
void daemonize_finish(struct rqdisk_state *s, int status);

#endif
