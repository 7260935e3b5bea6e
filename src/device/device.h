/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device.h - the device below the request queue: a stack of filters over
 * one backend, each a small versioned ops table in a file of its own, as
 * nbdkit stacks filters over a plugin and QEMU stacks block nodes.
 *
 *   request queue --request_fn--> filter ... filter --> backend
 *        ^                          |          |          |
 *        +-- queue_ops->end_request +----------+----------+   (partial completion)
 *
 * The host (the daemon's io_uring loop, or rqdisk-replay's virtual clock)
 * fetches a request from the queue only when dev_can_take() says the top of
 * the stack takes one, and hands it down with dev_submit().  Whatever a
 * layer does with it, the request's sectors end through dev_end(), which
 * gives them to the layer above, or to the queue's partial-completion path
 * (dev_queue_ops.end_request) from the top: every sector ends once, in
 * order, and an error after a good prefix is the prefix ended as done,
 * then the error.  A layer knows only the layer below it: what it needs of
 * the queue above (its clock, depth, limits, a kick) are calls of this
 * file, which the host answers through the dev_queue_ops it gives; no
 * layer sees the queue's type.
 * Every op runs with the queue lock held, on the host's loop thread (or, in
 * rqdisk's mq mode, on the thread of the hardware queue that dispatched
 * the request: several threads, one at a time by the lock); none may
 * sleep.  A stack with no filter is the backend alone: nothing is paid for
 * a filter that is not there.
 *
 * How the layers use these ops:
 *  - fault (fail at a sector, drop writes, corrupt bytes, delay): submit
 *    passes down, or holds with a timer; end passes the good prefix up
 *    with dev_end(.., 0, n) first, then the error for the rest; it
 *    corrupts data by walking the request's bios (rq_for_each_bio) in end,
 *    before passing up.
 *  - log-writes: submit sees when a flush is issued; end sees each
 *    write's data and the completion order of writes, flushes and FUA
 *    writes.  A thread of its own writes the log; can_take says no while
 *    too much waits for it, and it wakes the loop through an eventfd
 *    (dev_host_ops.watch_fd) when it has caught up.
 *  - write-cache: has_cache in its limits; it copies a write into its
 *    cache in submit and ends it from its timer, set to now (no op ends a
 *    request from inside submit, where the queue is dispatching).  It
 *    writes back with requests of its own that it submits below and
 *    recognises in end by its pdu (the pdu covers every layer of any
 *    request of the queue); a flush or FUA write ends only when what it
 *    covers is durable below; a power cut (a control-tree write, attrs)
 *    drops what is not.
 *  - nbd, rbd backends: an async library; dev_host_ops.watch_fd polls its
 *    fd or eventfd in the host's loop and calls back on the loop's thread,
 *    where the backend ends requests: no hand-off per I/O.
 *  - file backend: each request becomes I/O on the image that the host's
 *    loop carries out (dev_host_ops.submit_io, struct dev_io), its
 *    completion called back on the loop's thread; it opens the image
 *    itself, from its args (the path), as the stack's read_only and
 *    direct say.
 *  - null backend: null_blk's completion modes: a NOP through the host's
 *    loop (softirq, the default), its own timer (timer), or, to measure
 *    the core alone, the end inside submit (none), which the queue's
 *    dispatch tolerates.
 */
#ifndef RQDISK_DEVICE_H
#define RQDISK_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk_types.h"

struct iovec;

/*
 * 2: dev_map_sg() takes the layer, as every call that reaches the queue
 * above does.  3: struct request grew (the multi-queue fields, elv_ns), so
 * a layer's per-request data (dev_rq_pdu) moved: a module built before
 * would find it in the wrong place.  4: it grew again (the cgroup).
 */
#define DEV_API_VERSION 4

/* The longest spec a layer is opened from, and the deepest stack. */
#define DEV_SPEC_MAX 512
#define DEV_MAX_LAYERS 8

struct blk_dev;
struct dev_stack;
struct disk_model;

/*
 * A file in the layer's own directory of the control tree, device/NAME/
 * (NAME.2, NAME.3 ... for a second and third layer of the same name).
 * show writes the text, newline included, and returns its length; store
 * takes what was written (a trailing newline stripped) and returns 0 or
 * -errno (EINVAL for a bad value).  Both run with the queue lock held.
 */
struct dev_attr {
	const char *name;
	int (*show)(struct blk_dev *dev, char *buf, size_t len);
	int (*store)(struct blk_dev *dev, const char *buf); /* NULL: read-only */
};

/*
 * What a backend imposes on the queue above, and what filters may change.
 * A layer learns what is below it from these alone, as each open gets
 * them from the layers opened before it (below), never from the names of
 * the layers below; the host reads them from the stack's top.
 */
struct dev_limits {
	sector_t capacity;          /* sectors */
	unsigned int logical_block_size;
	bool discard;               /* takes REQ_OP_DISCARD */
	bool write_zeroes;          /* takes REQ_OP_WRITE_ZEROES */
	bool has_cache;             /* volatile: a flush makes it durable */
	bool rotational;            /* what queue/rotational shows */
	bool read_only;             /* takes no writes: the disk is read-only */
	/* What the device says of its I/O sizes (0: nothing), raised into the queue's limits. */
	unsigned int physical_block_size; /* bytes it writes at once, a power of two */
	unsigned int io_opt;              /* bytes it prefers per I/O */
	unsigned int max_sectors;         /* a read or write's sectors at most */
	/*
	 * The requests' bytes are nobody's (rqdisk-replay's sim: a trace
	 * records no data, and nothing below keeps any): nothing to cache,
	 * log or corrupt, and no file to watch.
	 */
	bool no_data;
	/*
	 * A layer below cuts its power while the disk runs on (write-cache's
	 * power/cut): writes it ended as done that no flush covered are gone.
	 */
	bool power_cuts;
	/*
	 * The local file that holds the disk's sectors below, the image as it
	 * is (the file backend's), for a layer that copies it; NULL: none.
	 * Valid while the stack is open.
	 */
	const char *image_file;
	/* The timing model nearest the queue (the model filter's), for queue/model; NULL: none. */
	const struct disk_model *model;
	/* The alignment an I/O's memory needs, a mask (511: 512 bytes), raised into the queue's. */
	unsigned int dma_alignment;
};

/*
 * One key of a layer's "key=value,..." arguments: the one table a layer
 * parses (dev_parse_keys, or its own walk) and rqdisk --help-filter and
 * --help-backend print, so the keys a layer takes and the keys it says it
 * takes cannot differ.  A table ends with a NULL name.
 */
struct dev_key {
	const char *name;
	uint64_t min, max; /* the value's bounds, for dev_parse_keys */
	const char *help;  /* one line: what the key sets, and what it takes */
	/* What a layer that reads the key itself keeps of it (NULL with dev_parse_keys). */
	const void *data;
	/* The keys a word takes after it, "WORD:KEY=V,..." (the model filter's models). */
	const struct dev_key *sub;
};

struct dev_ops {
	int api_version; /* DEV_API_VERSION */
	/*
	 * sizeof(struct dev_ops) where the table was built, as DEV_REGISTER
	 * fills it.  New fields only ever go at the end: a loader copies the
	 * table up to this size and zeroes the rest (dev_ops_copy()).
	 */
	unsigned int size;
	const char *name;
	bool backend; /* a backend is the stack's bottom; a filter is not */
	/* Bytes the layer keeps with each request (dev_rq_pdu()), zeroed at submit. */
	size_t rq_pdu_size;

	/*
	 * Open from args, the text after "NAME:" (NULL: none), for a disk of
	 * lim->capacity sectors (a backend sets it).  0, or -errno with a
	 * one-line reason in why.  Required.
	 */
	int (*open)(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		    size_t whylen);
	/*
	 * The stack is idle.  A layer whose data may not be durable (its
	 * last flush failed or could not be sent) says so in one line and
	 * sets stack->close_error.  Optional.
	 */
	void (*close)(struct blk_dev *dev);
	/*
	 * Whether one more request may come down now.  NULL: what the layer
	 * below says (a backend: yes).  Asked before the host takes a request
	 * out of the elevator, so one the device cannot take stays there.
	 */
	bool (*can_take)(struct blk_dev *dev);
	/* Take rq: pass it down (dev_submit), hold it, or end it.  Required. */
	void (*submit)(struct blk_dev *dev, struct request *rq);
	/*
	 * nr_sectors of rq from its completion position ended below with error.
	 * NULL: passed up as they are.  A filter passes them up with dev_end().
	 */
	void (*end)(struct blk_dev *dev, struct request *rq, int error, unsigned int nr_sectors);
	/* The time set with dev_set_timer() has come.  Optional. */
	void (*timer)(struct blk_dev *dev, uint64_t now);
	/* The layer and its parameters, one line, for device/stack.  Optional. */
	int (*describe)(const struct blk_dev *dev, char *buf, size_t len);
	/* Its files in the control tree, ending with a NULL name.  Optional. */
	const struct dev_attr *attrs;
	/*
	 * Where users look for those files besides device/NAME/: a directory
	 * at the top of the control tree ("log", "power"), for the layer of
	 * this name nearest the queue.  NULL: device/NAME/ only.
	 */
	const char *ctl_dir;

	/* One line saying what the layer is, for rqdisk --list.  Optional. */
	const char *description;
	/* Its keys, for rqdisk --help-filter and --help-backend.  NULL: it takes none. */
	const struct dev_key *keys;
};

/*
 * A layer's one ops table, dev_SYMBOL_ops, as ELEVATOR_REGISTER makes an
 * elevator's: the version and the size the table was built with are filled
 * here, and the name; the rest are the table's fields.  A backend built
 * as a module exports the symbol, which its loader looks for:
 *
 *   DEV_REGISTER(write_cache, "write-cache", .open = wc_open, ...);
 */
#define DEV_REGISTER(symbol, layer_name, ...)                                              \
	__attribute__((visibility("default"))) const struct dev_ops dev_##symbol##_ops = { \
		.api_version = DEV_API_VERSION,                                            \
		.size = sizeof(struct dev_ops),                                            \
		.name = layer_name,                                                        \
		__VA_ARGS__                                                                \
	}

/*
 * The loader's rule for a table built elsewhere (a module, or a binary of
 * another version): another API version, or a size that ends before the
 * required ops, is refused with one line in why naming what (-EINVAL);
 * else the table is copied into out up to its size and the rest zeroed,
 * so a field added later reads as absent.  what names the table ("the nbd
 * backend module PATH").
 */
int dev_ops_copy(struct dev_ops *out, const struct dev_ops *ops, const char *what, char *why,
		 size_t whylen);

/* One layer of a stack. */
struct blk_dev {
	const struct dev_ops *ops;
	struct dev_stack *stack;
	struct blk_dev *lower; /* NULL: this is the backend */
	struct blk_dev *upper; /* NULL: this is the top, its ends go to the queue */
	void *priv;            /* the layer's */
	size_t pdu_offset;     /* where its bytes lie in each request's pdu */
	uint64_t timer_at;     /* when ops->timer runs next, 0 for never */
	char *args;            /* what it was opened from */
	uint64_t losses;       /* times it lost writes it had ended (dev_lost_writes, _dropped_write) */
};

/*
 * One I/O a backend has its host carry out (dev_host_ops.submit_io): what
 * the system call of that name would do, its result (bytes moved, 0, or
 * -errno) given to done.
 */
enum dev_io_op {
	DEV_IO_NOP,       /* nothing: done(io, 0) from the loop (the null backend) */
	DEV_IO_READV,     /* preadv(fd, iov, nr_iov, offset) */
	DEV_IO_WRITEV,    /* pwritev2(fd, iov, nr_iov, offset, flags): RWF_DSYNC for FUA */
	DEV_IO_FDATASYNC, /* fdatasync(fd) */
	DEV_IO_FALLOCATE, /* fallocate(fd, flags (the mode), offset, len) */
};

struct dev_io {
	/* The result, on the host's thread with the queue lock held.  Required. */
	void (*done)(struct dev_io *io, int res);
	enum dev_io_op op;
	int fd;
	int flags; /* pwritev2's for a write, fallocate's mode */
	unsigned int nr_iov;
	const struct iovec *iov;
	uint64_t offset; /* bytes */
	uint64_t len;    /* fallocate's */
};

/* What the stack runs on. */
struct dev_host_ops {
	/* Poll fd for input in the host's loop; ready(arg) runs on its thread, lock held. */
	int (*watch_fd)(void *host, int fd, void (*ready)(void *arg), void *arg);
	void (*unwatch_fd)(void *host, int fd);
	/*
	 * The same for a socket that must also be polled for output (libnbd's
	 * while it has bytes to send): events are POLLIN and POLLOUT, and
	 * ready gets those that came (0: the poll was taken back to change
	 * them).  set_fd_events changes what the watch of fd polls for from
	 * then on.  NULL in a host that has no such watch.
	 */
	int (*watch_fd_events)(void *host, int fd, unsigned int events,
			       void (*ready)(void *arg, unsigned int revents), void *arg);
	void (*set_fd_events)(void *host, int fd, unsigned int events);
	/*
	 * A layer lost writes it had ended as done (dev_lost_writes): msg,
	 * one line, goes where the user of a daemon in the background hears
	 * it (the system log).  NULL: stderr alone says it.
	 */
	void (*lost_writes)(void *host, const char *msg);
	/*
	 * I/O on a file of the backend's own, carried out by the host's loop
	 * (the daemon's io_uring ring) as the file and null backends do: the
	 * backend keeps a struct dev_io per I/O in flight (in its slot or its
	 * pdu), so nothing is allocated or handed to another thread per I/O.
	 * io_room says whether need more may go now (a full batch goes out to
	 * make room); submit_io, after io_room said yes, sends io, whose done
	 * runs later on the loop's thread, lock held.  set_io_kick has kick(arg)
	 * run after each batch of completions, before the queue runs again
	 * (NULL: none): I/O that waits for room goes out before new requests.
	 * NULL in a host that has no such loop.
	 */
	bool (*io_room)(void *host, unsigned int need);
	void (*submit_io)(void *host, struct dev_io *io);
	void (*set_io_kick)(void *host, void (*kick)(void *arg), void *arg);
	/*
	 * The queues the host carries I/O on, each with a thread and a ring
	 * of its own (a multi-queue queue's hardware queues), and the one of
	 * the calling thread, from 0 (a thread of none: 0): a backend may keep
	 * a file per queue, so that no two threads share one.  Asked at open
	 * and at each submit_io.  NULL: one queue.
	 */
	unsigned int (*nr_io_queues)(void *host);
	unsigned int (*io_queue)(void *host);
};

/*
 * What the stack lost of the writes it had ended as done, not by a rule
 * or a power cut: each loss fails the next fsync of every file open on
 * the disk (the host's, as the kernel's errseq), and device/lost_writes
 * shows the counts.
 */
struct dev_lost {
	uint64_t events;  /* losses: a server gone with writes no flush covered */
	uint64_t writes;  /* the writes they may have taken with them, all told */
	uint64_t sectors; /* and those writes' sectors */
	uint64_t dropped; /* writes a layer ended unwritten on purpose (dev_dropped_write) */
};

/*
 * What a layer asks of the queue above it, answered by the host that runs
 * the queue (blk_stack_set_queue() for the block core's), queue being the
 * host's pointer to it: the stack never sees the queue's type.  A stack
 * with none (dev_has_queue() false) is only checked or described, and no
 * layer calls these.  Every one is required.
 */
struct dev_queue_ops {
	uint64_t (*now)(void *queue);               /* the queue's clock, ns */
	unsigned int (*depth)(void *queue);         /* requests it lets out at once */
	unsigned int (*max_segments)(void *queue);  /* of one request */
	unsigned int (*max_hw_sectors)(void *queue);
	/* rq's memory as an iovec under the queue's segment limits; its entries. */
	int (*map_sg)(void *queue, struct request *rq, struct iovec *sg);
	/* Dispatch again: a layer takes requests again. */
	void (*kick)(void *queue);
	/* nr_sectors of rq, from its completion position, end with error. */
	void (*end_request)(void *queue, struct request *rq, int error, unsigned int nr_sectors);
	/*
	 * One block of memory (dev_free_request frees it): a request of no
	 * queue's with room for the queue's pdu, as dev_alloc_request says.
	 */
	struct request *(*alloc_request)(void *queue, enum req_op op, unsigned int flags,
					 sector_t sector, void *buf, unsigned int len);
	/* Whether the queue traces now, and a message into its trace. */
	bool (*tracing)(void *queue);
	void (*trace_msg)(void *queue, const char *text);
};

struct dev_stack {
	/* The queue above, set by the host before dev_stack_open (NULL: none). */
	const struct dev_queue_ops *queue_ops;
	void *queue;
	struct blk_dev *top;    /* the first filter, or the backend */
	struct blk_dev *bottom; /* the backend */
	unsigned int nr_layers;
	struct blk_dev layers[DEV_MAX_LAYERS]; /* top first */
	struct dev_limits limits;
	const struct dev_host_ops *host_ops;
	void *host;
	uint64_t ended; /* requests (or parts) ended to the queue: a host runs it after */
	/*
	 * Set by the host before dev_stack_close when the disk never served
	 * (its start failed after the stack opened): a layer removes the
	 * files it made (a log, a copy of the image), as a failed start
	 * leaves nothing behind.
	 */
	bool aborted;
	/*
	 * Set by a layer's close: -errno, its data may not all be durable
	 * (the flush at exit failed).  The host's exit status says so, as
	 * it does for an image whose fdatasync at exit fails.
	 */
	int close_error;
	struct dev_lost lost; /* counted by dev_lost_writes */
	/*
	 * Set by the host before the stack opens: it runs detached, and its
	 * standard error goes nowhere.  A layer's word that must be seen (a
	 * log that stopped) goes to syslog too (LOG_DAEMON).
	 */
	bool syslog;
	/*
	 * Set by the host before the stack opens: how a backend that opens a
	 * file here (the file backend) opens it.  read_only: the disk takes
	 * no writes; direct: with O_DIRECT, around the host's page cache.
	 */
	bool read_only;
	bool direct;
	/*
	 * Set by the host before the stack opens: the disk's number among the
	 * disks one daemon serves (rqdisk --disk), 0 for a lone disk.  The
	 * log-writes filter's shared order (order=) says which disk's log
	 * each entry went to.
	 */
	unsigned int disk;
};

/*
 * A layer ended a write without writing it, on purpose (a lying disk, as
 * dm-flakey's drop_writes): nobody is told, but a layer above that records
 * writes (log-writes) must not call it durable.  Counted in lost.dropped.
 */
void dev_dropped_write(struct blk_dev *dev);

/* The registry of filters: every one built in.  Backends are the host's. */
const struct dev_ops *dev_find_filter(const char *name, size_t len);
/* Every filter's name, NULL-terminated, for --help and errors. */
const char *const *dev_filter_names(void);
/* Every built-in filter's ops, in registry order, NULL-terminated: for --list and tests. */
const struct dev_ops *const *dev_filter_list(void);

/*
 * Build a stack: the filters from specs "NAME[:ARGS]", top first, over the
 * backend the host chose, opened with backend_args.  lim comes in with what
 * the host knows (capacity: the image's size, or 0 for the backend to find)
 * and leaves with what the stack imposes, which the host then makes its
 * queue's limits follow (blk_queue_stack_limits()).  s->host, s->host_ops,
 * s->queue, s->queue_ops, s->syslog, s->read_only and s->direct are the
 * caller's, set before (a layer finds its host and the queue above there).  0, or -errno with a one-line reason in why
 * (nothing kept).
 */
int dev_stack_open(struct dev_stack *s, const char *const *specs, unsigned int nr,
		   const struct dev_ops *backend, const char *backend_args,
		   struct dev_limits *lim, char *why, size_t whylen);
/*
 * Close every layer, top first: the queue is idle.  0, or the first
 * close_error a layer set: what it held may not be durable.
 */
int dev_stack_close(struct dev_stack *s);
/* Check a filter spec as --filter takes it (a 1 TiB disk), keeping nothing. */
int dev_check_filter(const char *spec, char *why, size_t whylen);
/* Bytes of pdu each request needs: what the host gives blk_queue_set_pdu_size. */
size_t dev_stack_pdu_size(const struct dev_stack *s);
/* "model:hdd rpm=7200 ... -> file:/path": the stack as device/stack shows it. */
int dev_stack_describe(const struct dev_stack *s, char *buf, size_t len);
/*
 * The layer's name in the control tree and in trace notes: NAME for the
 * first layer of that name from the top, NAME.2 for the second, and so on.
 * Returns what snprintf returns.
 */
int dev_layer_name(const struct blk_dev *dev, char *buf, size_t len);

/* The host's side, lock held. */
bool dev_can_take(struct blk_dev *dev);
void dev_submit(struct blk_dev *dev, struct request *rq);
/* The earliest timer of the stack, 0 for none. */
uint64_t dev_stack_next_timer(const struct dev_stack *s);
/* Run every layer's timer that is due by now; true if one ran. */
bool dev_stack_run_timers(struct dev_stack *s, uint64_t now);

/* A layer's side, lock held. */
void dev_end(struct blk_dev *dev, struct request *rq, int error, unsigned int nr_sectors);
/*
 * A note in the queue's blktrace, when it is tracing: blkparse shows it as
 * a message ("m N NAME: TEXT"), between the requests' own events.
 */
void dev_trace_msg(struct blk_dev *dev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Writes the layer had ended as done are lost (not by a rule or a power
 * cut: an NBD server gone with writes no flush covered), at most writes
 * of them, of sectors in all: counted in stack->lost, and the line the
 * format makes (what was lost, where) said on stderr as "rqdisk: LINE"
 * and to the host (dev_host_ops.lost_writes).
 */
void dev_lost_writes(struct blk_dev *dev, uint64_t writes, uint64_t sectors, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Call ops->timer at (0: never); a later call replaces an earlier one. */
void dev_set_timer(struct blk_dev *dev, uint64_t at);
uint64_t dev_now(const struct blk_dev *dev);
/* Whether a queue runs the stack (not one only checked or described, as rqdisk-replay's). */
bool dev_has_queue(const struct blk_dev *dev);
/* Requests the queue above lets out at once (nr_requests): how deep a layer may hold. */
unsigned int dev_depth(const struct blk_dev *dev);
/* The most segments a request of the queue above maps to: what dev_map_sg fills at most. */
unsigned int dev_max_segments(const struct blk_dev *dev);
/* The largest request the queue above may send down, in sectors (max_hw_sectors). */
unsigned int dev_max_hw_sectors(const struct blk_dev *dev);
/* rq's memory as an iovec (blk_rq_map_sg); its number of entries. */
int dev_map_sg(const struct blk_dev *dev, struct request *rq, struct iovec *sg);
/* Ask the queue above to dispatch again (a layer that can take requests again). */
void dev_kick(struct blk_dev *dev);

/*
 * A request of a layer's own for the layers below it (a write cache's
 * writeback), as blk-mq's internal requests: op over len bytes at buf
 * (len 0 and buf NULL for a flush), from sector, in one bio, with room
 * for the queue's pdu.  It is no request of the queue's: nothing counts
 * it, no elevator or trace sees it, and it never ends through the queue.
 * The layer submits it with dev_submit(dev->lower, ..), knows it in its
 * end by what it put in its own pdu, never passes it up, and frees it
 * with dev_free_request once its sectors have all ended.  NULL: no memory.
 */
struct request *dev_alloc_request(struct blk_dev *dev, enum req_op op, unsigned int flags,
				  sector_t sector, void *buf, unsigned int len);
void dev_free_request(struct request *rq);

/* The queue's pdu follows the request (blk_rq_pdu); the layer's part lies at its offset. */
static inline void *dev_rq_pdu(const struct blk_dev *dev, const struct request *rq)
{
	return (char *)rq + sizeof(*rq) + dev->pdu_offset;
}

/*
 * "key=value,key=value" for a layer that takes numbers: each key in keys,
 * each value a whole decimal number in [min, max].  Sets
 * vals[i] for keys[i] given; others keep their value.
 */
int dev_parse_keys(const char *layer, const char *args, const struct dev_key *keys,
		   uint64_t *vals, char *why, size_t whylen);
/*
 * One value as a key takes it: a whole number in [min, max], decimal,
 * nothing before or after it (a store of a dev_attr).  0 or -EINVAL.
 */
int dev_parse_value(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * rqdisk-replay's backend: it ends each request whole at the time it came
 * (from its timer, set to now), and counts what the device was given.
 */
extern const struct dev_ops dev_sim_ops;

struct dev_sim_stats {
	uint64_t requests;     /* taken */
	uint64_t seek_sectors; /* head travel between consecutive data requests */
};

const struct dev_sim_stats *dev_sim_stats(const struct blk_dev *dev);

#endif
