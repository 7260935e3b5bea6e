/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ack-writer.c - numbered 4 KiB records written with many in flight, each
 * logged only once its write is acknowledged; and the check that every
 * acknowledged record is in an image.
 *
 *   ack-writer write FILE SLOTS DEPTH LOG
 *   ack-writer check IMAGE SLOTS LOG
 *
 * write: record n (from 1) goes to a random 4 KiB slot of FILE that no write
 * in flight holds, with Linux AIO on an O_DIRECT descriptor, DEPTH at a time.
 * When a write completes in full, "n slot" is appended to LOG.  The first
 * failed write (the disk went away) stops new submissions; the rest are
 * reaped and the program exits 0.
 *
 * check: for every slot in LOG, the slot in IMAGE holds a whole record for
 * that slot numbered at least the last one acknowledged there (a later one
 * may have been in flight and landed too).
 *
 * Exit 0: done or all present.  1: a record lost, or an error.  77: Linux
 * AIO or O_DIRECT is not available.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RECORD 4096u
#define WORDS (RECORD / sizeof(uint64_t))
#define MAGIC 0x44524f4345525152ull /* "RQRECORD" */

/* A record: magic, number, slot, then words that depend on all three. */
static void make_record(uint64_t *w, uint64_t n, uint64_t slot)
{
	w[0] = MAGIC;
	w[1] = n;
	w[2] = slot;
	for (size_t i = 3; i < WORDS; i++)
		w[i] = (n * 0x9e3779b97f4a7c15ull) ^ (slot << 20) ^ i;
}

static bool is_record(const uint64_t *w, uint64_t slot, uint64_t *n)
{
	uint64_t want[WORDS];

	if (w[0] != MAGIC || w[2] != slot)
		return false;
	make_record(want, w[1], slot);
	*n = w[1];
	return !memcmp(w, want, RECORD);
}

/* The writer's state: DEPTH buffers, and which slot each write in flight holds. */
struct writer {
	int fd, logfd;
	uint64_t slots;
	unsigned int depth;
	aio_context_t ctx;
	struct iocb *cbs;
	struct io_event *events;
	uint64_t *bufs;	    /* depth records, aligned for O_DIRECT */
	uint64_t *slot_of;  /* the slot of each buffer's write */
	bool *in_use;	    /* slots with a write in flight */
	unsigned int *free; /* buffers not in flight */
	unsigned int nfree;
	uint64_t n, acked; /* records submitted, and acknowledged */
	bool stop;	   /* a write failed: submit no more */
};

static int writer_init(struct writer *w, const char *path, uint64_t slots, unsigned int depth,
		       const char *log)
{
	w->slots = slots;
	w->depth = depth;
	w->fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (w->fd < 0) {
		fprintf(stderr, "ack-writer: %s: %s\n", path, strerror(errno));
		return errno == EINVAL ? 77 : 1;
	}
	w->logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (w->logfd < 0) {
		fprintf(stderr, "ack-writer: %s: %s\n", log, strerror(errno));
		return 1;
	}
	w->cbs = calloc(depth, sizeof(*w->cbs));
	w->events = calloc(depth, sizeof(*w->events));
	w->slot_of = calloc(depth, sizeof(*w->slot_of));
	w->in_use = calloc(slots, sizeof(*w->in_use));
	w->free = calloc(depth, sizeof(*w->free));
	if (!w->cbs || !w->events || !w->slot_of || !w->in_use || !w->free ||
	    posix_memalign((void **)&w->bufs, RECORD, (size_t)depth * RECORD)) {
		fprintf(stderr, "ack-writer: out of memory\n");
		return 1;
	}
	for (unsigned int i = 0; i < depth; i++)
		w->free[w->nfree++] = i;
	if (syscall(SYS_io_setup, depth, &w->ctx)) {
		fprintf(stderr, "ack-writer: io_setup: %s\n", strerror(errno));
		return 77;
	}
	return 0;
}

/* The next record, in buffer i, to a random slot no write in flight holds. */
static void submit_one(struct writer *w)
{
	unsigned int i = w->free[--w->nfree];
	struct iocb *cb = &w->cbs[i];
	uint64_t *buf = w->bufs + (size_t)i * WORDS, slot;

	do
		slot = (uint64_t)random() % w->slots;
	while (w->in_use[slot]);
	make_record(buf, ++w->n, slot);
	memset(cb, 0, sizeof(*cb));
	cb->aio_data = i;
	cb->aio_lio_opcode = IOCB_CMD_PWRITE;
	cb->aio_fildes = (uint32_t)w->fd;
	cb->aio_buf = (uint64_t)(uintptr_t)buf;
	cb->aio_nbytes = RECORD;
	cb->aio_offset = (int64_t)(slot * RECORD);
	if (syscall(SYS_io_submit, w->ctx, 1L, &cb) != 1) {
		fprintf(stderr, "ack-writer: record %llu: io_submit: %s: stopping\n",
			(unsigned long long)w->n, strerror(errno));
		w->free[w->nfree++] = i;
		w->n--;
		w->stop = true;
		return;
	}
	w->in_use[slot] = true;
	w->slot_of[i] = slot;
}

/* One completion: log the record if it was written in full, else stop. */
static int complete_one(struct writer *w, const struct io_event *ev)
{
	unsigned int i = (unsigned int)ev->data;
	unsigned long long rec = w->bufs[(size_t)i * WORDS + 1];
	char line[64];
	int len;

	w->in_use[w->slot_of[i]] = false;
	w->free[w->nfree++] = i;
	if (ev->res != RECORD) {
		if (!w->stop)
			fprintf(stderr, "ack-writer: record %llu: %s: stopping\n", rec,
				ev->res < 0 ? strerror((int)-ev->res) : "short write");
		w->stop = true;
		return 0;
	}
	len = snprintf(line, sizeof(line), "%llu %llu\n", rec, (unsigned long long)w->slot_of[i]);
	if (write(w->logfd, line, (size_t)len) != len) {
		fprintf(stderr, "ack-writer: the log: %s\n", strerror(errno));
		return -1;
	}
	w->acked++;
	return 0;
}

static void writer_free(struct writer *w)
{
	free(w->cbs);
	free(w->events);
	free(w->slot_of);
	free(w->in_use);
	free(w->free);
	free(w->bufs);
}

/* Writes until a write fails, then reaps what is in flight. */
static int writer_run(struct writer *w)
{
	srandom((unsigned int)getpid());
	for (;;) {
		long got;

		while (!w->stop && w->nfree)
			submit_one(w);
		if (w->nfree == w->depth)
			break; /* stopped, and nothing in flight */
		got = syscall(SYS_io_getevents, w->ctx, 1L, (long)w->depth, w->events, NULL);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			fprintf(stderr, "ack-writer: io_getevents: %s\n", strerror(errno));
			return 1;
		}
		for (long e = 0; e < got; e++)
			if (complete_one(w, &w->events[e]))
				return 1;
	}
	printf("ack-writer: %llu records submitted, %llu acknowledged\n", (unsigned long long)w->n,
	       (unsigned long long)w->acked);
	syscall(SYS_io_destroy, w->ctx);
	return 0;
}

static int do_write(const char *path, uint64_t slots, unsigned int depth, const char *log)
{
	struct writer w = {0};
	int ret = writer_init(&w, path, slots, depth, log);

	if (!ret)
		ret = writer_run(&w);
	writer_free(&w);
	return ret;
}

/* The newest acknowledged record of each slot (0: none) from the log; their count in acked. */
static int read_log(const char *log, uint64_t slots, uint64_t *last, uint64_t *acked)
{
	FILE *f = fopen(log, "r");
	uint64_t n, slot;
	int ret = 0;

	if (!f) {
		fprintf(stderr, "ack-writer: %s: %s\n", log, strerror(errno));
		return 1;
	}
	while (fscanf(f, "%llu %llu", (unsigned long long *)&n, (unsigned long long *)&slot) == 2) {
		if (slot >= slots) {
			fprintf(stderr, "ack-writer: %s: slot %llu out of range\n", log,
				(unsigned long long)slot);
			ret = 1;
			break;
		}
		if (n > last[slot])
			last[slot] = n;
		(*acked)++;
	}
	fclose(f);
	return ret;
}

/* Every slot holds its newest acknowledged record, or a newer one. */
static int check_image(const char *image, uint64_t slots, const uint64_t *last, uint64_t acked)
{
	uint64_t w[WORDS], n, places = 0, lost = 0;
	int fd = open(image, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "ack-writer: %s: %s\n", image, strerror(errno));
		return 1;
	}
	for (uint64_t slot = 0; slot < slots; slot++) {
		if (!last[slot])
			continue;
		places++;
		if (pread(fd, w, RECORD, (off_t)(slot * RECORD)) != RECORD) {
			fprintf(stderr, "ack-writer: %s: cannot read slot %llu\n", image,
				(unsigned long long)slot);
			close(fd);
			return 1;
		}
		if (!is_record(w, slot, &n) || n < last[slot]) {
			fprintf(stderr, "ack-writer: slot %llu lost acknowledged record %llu\n",
				(unsigned long long)slot, (unsigned long long)last[slot]);
			lost++;
		}
	}
	close(fd);
	printf("ack-writer: %llu acknowledged records in %llu places, %llu lost\n",
	       (unsigned long long)acked, (unsigned long long)places, (unsigned long long)lost);
	return lost ? 1 : 0;
}

static int do_check(const char *image, uint64_t slots, const char *log)
{
	uint64_t *last = calloc(slots, sizeof(*last)), acked = 0;
	int ret;

	if (!last) {
		fprintf(stderr, "ack-writer: out of memory\n");
		return 1;
	}
	ret = read_log(log, slots, last, &acked);
	if (!ret)
		ret = check_image(image, slots, last, acked);
	free(last);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned long long slots = argc > 3 ? strtoull(argv[3], NULL, 0) : 0;
	unsigned long depth = argc > 4 ? strtoul(argv[4], NULL, 0) : 0;

	if (argc == 6 && !strcmp(argv[1], "write") && slots && depth && depth <= 1024 &&
	    depth < slots)
		return do_write(argv[2], slots, (unsigned int)depth, argv[5]);
	if (argc == 5 && !strcmp(argv[1], "check") && slots)
		return do_check(argv[2], slots, argv[4]);
	fprintf(stderr, "usage: ack-writer write FILE SLOTS DEPTH LOG\n"
			"       ack-writer check IMAGE SLOTS LOG\n");
	return 2;
}
