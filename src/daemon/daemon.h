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

#include <pthread.h>
#include <stdbool.h>

#include "blk_mq.h"
#include "frontend.h"
#include "options.h"

struct backend_type;
struct rqdisk_domain;
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
	/* --disk: the disks this one shares a daemon with, or NULL (disks.c) */
	struct rqdisk_domain *domain;
	unsigned int index;     /* diskN */
	int stop_fd;            /* the domain says stop: the loop stops serving (fuse_session_exit) */
	int cut_fd;             /* the domain says cut: the loop joins the cut */
	uint64_t cut_gen;       /* the last cut of the domain's this disk took part in */
	pthread_t thread;
	bool thread_started;
	bool started;           /* set up and mounted */
	char *dir;              /* MOUNTPOINT/diskN */
	bool made_dir;          /* and ours to remove */
	int status;             /* the thread's: 0, or -1 */
	char *trace_name;       /* --trace with %d replaced, or NULL */
	char *filter_specs[RQDISK_MAX_FILTERS]; /* --filter with %d replaced */
};

/* rqdisk.c: the steps of a start, and the serve loop, as each disk's thread runs them */
int check_fuse_device(void);
int start_paths(struct rqdisk_state *s);
int start_disk(struct rqdisk_state *s);
int serve(struct rqdisk_state *s);
int sync_image(struct rqdisk_state *s);
int teardown(struct rqdisk_state *s, bool failed);

/* disks.c: several disks, a thread and a mount each; the process's exit status */
int run_disks(struct rqdisk_state *first);
/* On the disk's thread at its setup: the domain's stop and cut fds watched by its loop. */
int domain_watch_stop(struct rqdisk_state *s);

/* power_domain.c: a cut of the write cache on any disk cuts them all at one instant */
struct blk_dev *power_layer(const struct dev_stack *st);
const struct dev_attr *power_attr(struct blk_dev *dev, const char *name);
int domain_cut(struct rqdisk_state *s, const char *how);
void domain_cut_ready(void *arg);
int domain_cut_write(struct rqdisk *d, const char *how);

/*
 * The disks one daemon serves (--disk): started together, stopped
 * together, and one power domain.  Under lock.
 */
struct rqdisk_domain {
	struct rqdisk_state *disks;
	unsigned int nr;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int reported; /* threads that have said how their start went */
	bool failed;           /* a disk did not start: none serves */
	bool decided, go;
	unsigned int live; /* disks serving: what a cut waits for */
	bool cutting;      /* a cut waits for every live disk to stop where it is */
	uint64_t cut_gen;  /* cuts begun */
	unsigned int cut_arrived;
	char cut_how[16];
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
void set_io_flusher(bool quiet);

/* daemonize.c */
int daemonize_start(struct rqdisk_state *s);
void daemonize_finish(struct rqdisk_state *s, int status);

#endif
