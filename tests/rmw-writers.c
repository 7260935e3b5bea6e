/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmw-writers.c - threads that write different bytes of the same sectors, to
 * catch a read-modify-write that loses another writer's bytes.
 *
 *   rmw-writers FILE OFFSET SECTORS ITERATIONS
 *
 * Eight threads share the SECTORS 512-byte sectors from byte OFFSET of FILE.
 * Every sector is cut into eight pieces of uneven, unaligned sizes (1 to 139
 * bytes); thread t owns piece t of every sector.  In each iteration a thread
 * first reads the region and checks that its pieces still hold what it wrote
 * last (nobody else may change them), then writes new values to all its
 * pieces at once: with Linux AIO on an O_DIRECT descriptor, so that all of
 * them are in flight together and the disk sees every thread's writes to a
 * sector at the same time.  (Plain pwrite would not do: the kernel takes
 * synchronous writes to one FUSE file one at a time, so they never race.)
 * At the end every byte must hold its owner's last value.
 *
 * Exit 0: every byte right.  1: a lost update, or an I/O error.  77: Linux
 * AIO or O_DIRECT is not available.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SECTOR 512
#define THREADS 8

/* Piece t of a sector is [piece_start[t], piece_start[t + 1]). */
static const unsigned int piece_start[THREADS + 1] = {0, 1, 8, 67, 128, 200, 339, 450, SECTOR};

static const char *path;
static uint64_t region; /* byte offset of the first sector */
static unsigned int sectors;
static unsigned int iterations;

struct writer {
	pthread_t thread;
	unsigned int t;
	int fd;
	int failed;
};

/* The byte that thread t puts at byte k of sector s in iteration i (from 1). */
static uint8_t value(unsigned int t, unsigned int i, unsigned int s, unsigned int k)
{
	return (uint8_t)(i * 151u + s * 17u + t * 37u + k * 3u + 1u);
}

static int read_region(int fd, uint8_t *buf)
{
	size_t len = (size_t)sectors * SECTOR, done = 0;

	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, (off_t)(region + done));

		if (n <= 0) {
			fprintf(stderr, "rmw-writers: pread %s: %s\n", path,
				n ? strerror(errno) : "unexpected end of file");
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

/* Whether thread t's pieces in buf hold iteration i's values; says where not. */
static bool check_pieces(const uint8_t *buf, unsigned int t, unsigned int i, const char *when)
{
	for (unsigned int s = 0; s < sectors; s++) {
		for (unsigned int k = piece_start[t]; k < piece_start[t + 1]; k++) {
			uint8_t got = buf[(size_t)s * SECTOR + k], want = value(t, i, s, k);

			if (got != want) {
				fprintf(stderr,
					"rmw-writers: %s: sector %u byte %u (thread %u's, "
					"iteration %u): "
					"0x%02x, not 0x%02x: an update was lost\n",
					when, s, k, t, i, got, want);
				return false;
			}
		}
	}
	return true;
}

static long aio_setup(unsigned int nr, aio_context_t *ctx)
{
	return syscall(SYS_io_setup, nr, ctx);
}

/* All of thread w's pieces for iteration i, in flight at once. */
static int write_pieces(struct writer *w, aio_context_t ctx, uint8_t *data, struct iocb *cbs,
			struct iocb **ptrs, struct io_event *events, unsigned int i)
{
	unsigned int t = w->t, len = piece_start[t + 1] - piece_start[t], done = 0;

	for (unsigned int s = 0; s < sectors; s++) {
		uint8_t *p = data + (size_t)s * len;

		for (unsigned int k = 0; k < len; k++)
			p[k] = value(t, i, s, piece_start[t] + k);
		memset(&cbs[s], 0, sizeof(cbs[s]));
		cbs[s].aio_lio_opcode = IOCB_CMD_PWRITE;
		cbs[s].aio_fildes = (uint32_t)w->fd;
		cbs[s].aio_buf = (uint64_t)(uintptr_t)p;
		cbs[s].aio_nbytes = len;
		cbs[s].aio_offset = (int64_t)(region + (uint64_t)s * SECTOR + piece_start[t]);
		ptrs[s] = &cbs[s];
	}
	while (done < sectors) {
		long n = syscall(SYS_io_submit, ctx, (long)(sectors - done), ptrs + done);

		if (n <= 0) {
			fprintf(stderr, "rmw-writers: io_submit: %s\n",
				n ? strerror(errno) : "none taken");
			return -1;
		}
		done += (unsigned int)n;
	}
	for (done = 0; done < sectors;) {
		long n = syscall(SYS_io_getevents, ctx, 1L, (long)(sectors - done), events, NULL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "rmw-writers: io_getevents: %s\n", strerror(errno));
			return -1;
		}
		for (long e = 0; e < n; e++) {
			if (events[e].res != (int64_t)len) {
				fprintf(stderr, "rmw-writers: write of %u bytes: %s\n", len,
					events[e].res < 0 ? strerror((int)-events[e].res)
							  : "short");
				return -1;
			}
		}
		done += (unsigned int)n;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	unsigned int len = piece_start[w->t + 1] - piece_start[w->t];
	uint8_t *region_buf = malloc((size_t)sectors * SECTOR);
	uint8_t *data = malloc((size_t)sectors * len);
	struct iocb *cbs = calloc(sectors, sizeof(*cbs));
	struct iocb **ptrs = calloc(sectors, sizeof(*ptrs));
	struct io_event *events = calloc(sectors, sizeof(*events));
	aio_context_t ctx = 0;
	char when[64];

	w->failed = 1;
	if (!region_buf || !data || !cbs || !ptrs || !events) {
		fprintf(stderr, "rmw-writers: out of memory\n");
		goto out;
	}
	if (aio_setup(sectors, &ctx)) {
		fprintf(stderr, "rmw-writers: io_setup: %s\n", strerror(errno));
		goto out;
	}
	for (unsigned int i = 1; i <= iterations; i++) {
		if (i > 1) {
			snprintf(when, sizeof(when), "thread %u before iteration %u", w->t, i);
			if (read_region(w->fd, region_buf) ||
			    !check_pieces(region_buf, w->t, i - 1, when))
				goto out;
		}
		if (write_pieces(w, ctx, data, cbs, ptrs, events, i))
			goto out;
	}
	w->failed = 0;
out:
	if (ctx)
		syscall(SYS_io_destroy, ctx);
	free(events);
	free(ptrs);
	free(cbs);
	free(data);
	free(region_buf);
	return NULL;
}

static int parse(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end || *out > max ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct writer w[THREADS];
	unsigned long long v[3];
	int ret = 0;
	uint8_t *buf;
	aio_context_t probe = 0;

	if (argc != 5 || parse(argv[2], UINT64_MAX, &v[0]) || parse(argv[3], 1u << 16, &v[1]) ||
	    parse(argv[4], 1u << 20, &v[2]) || !v[1] || !v[2]) {
		fprintf(stderr, "usage: rmw-writers FILE OFFSET SECTORS ITERATIONS\n");
		return 2;
	}
	path = argv[1];
	region = v[0];
	sectors = (unsigned int)v[1];
	iterations = (unsigned int)v[2];
	if (aio_setup(1, &probe)) {
		fprintf(stderr, "rmw-writers: Linux AIO is not available: %s\n", strerror(errno));
		return 77;
	}
	syscall(SYS_io_destroy, probe);
	for (unsigned int t = 0; t < THREADS; t++) {
		w[t].t = t;
		w[t].fd = open(path, O_RDWR | O_CLOEXEC | O_DIRECT);
		if (w[t].fd < 0) {
			fprintf(stderr, "rmw-writers: %s: %s\n", path, strerror(errno));
			return errno == EINVAL ? 77 : 1;
		}
	}
	for (unsigned int t = 0; t < THREADS; t++) {
		if (pthread_create(&w[t].thread, NULL, writer_main, &w[t])) {
			fprintf(stderr, "rmw-writers: cannot start a thread\n");
			return 1;
		}
	}
	for (unsigned int t = 0; t < THREADS; t++) {
		pthread_join(w[t].thread, NULL);
		ret |= w[t].failed;
	}
	if (ret)
		return 1;
	buf = malloc((size_t)sectors * SECTOR);
	if (!buf || read_region(w[0].fd, buf))
		return 1;
	for (unsigned int t = 0; t < THREADS; t++)
		if (!check_pieces(buf, t, iterations, "at the end"))
			ret = 1;
	if (!ret)
		printf("rmw-writers: %u threads x %u iterations x %u sectors: no update lost\n",
		       THREADS, iterations, sectors);
	free(buf);
	for (unsigned int t = 0; t < THREADS; t++)
		close(w[t].fd);
	return ret;
}
