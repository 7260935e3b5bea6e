/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * extents.c - rqdisk-extents: the sectors of the disk below a file system
 * that files hold, found with FIEMAP through the loop device the file
 * system is mounted from, printed as the fault filter's badblocks and
 * rqdisk-crash's --only take them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli.h"
#include "sector_ranges.h"

#define PROG "rqdisk-extents"
#define FIEMAP_BATCH 256

/* What FIEMAP cannot place on the disk's sectors for sure: such an extent is refused. */
#define EXTENT_UNPLACED                                                                            \
	(FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED |                  \
	 FIEMAP_EXTENT_DATA_ENCRYPTED | FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE |    \
	 FIEMAP_EXTENT_DATA_TAIL)

/* The disk below a file system: the loop device's backing file, where the file system starts. */
struct disk {
	dev_t dev;
	char loop[32];		/* "loop3" */
	char backing[PATH_MAX]; /* the rqdisk disk */
	uint64_t offset;	/* bytes of the disk before the loop device's first */
	uint64_t sectors;	/* of the disk */
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: " PROG " [--metadata] FILE...\n"
		   "Print the sectors (512 bytes, of the disk a loop device shows) that FILEs\n"
		   "hold, as S-E/S-E/S (inclusive): what the fault filter's badblocks= and\n"
		   "rqdisk-crash's --only take.  The file system must be mounted from a loop\n"
		   "device; its offset into the disk is counted.  FILEs are synced first.\n"
		   "\n"
		   "  --metadata     the sectors of the disk that are no FILE's data instead\n"
		   "  -h, --help     show this help\n"
		   "  -V, --version  show the version\n"
		   "\n"
		   "Exit status: 0 printed, 1 a FILE cannot be mapped, 2 bad usage.\n");
}

/* A line of a sysfs file, its newline cut: 0, -errno. */
static int read_sys(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The loop device of dev (the device a file's st_dev names): 0, or -1 after one line. */
static int find_loop(const char *file, dev_t dev, struct disk *d)
{
	char path[PATH_MAX], link[PATH_MAX], num[32];
	const char *name;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		fprintf(stderr, PROG ": %s: on device %u:%u, which is no block device (%s)\n", file,
			major(dev), minor(dev), strerror(errno));
		return -1;
	}
	link[n] = '\0';
	name = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	snprintf(path, sizeof(path), "/sys/block/%.31s/loop/backing_file", name);
	if (strncmp(name, "loop", 4) || strlen(name) >= sizeof(d->loop) ||
	    read_sys(path, d->backing, sizeof(d->backing))) {
		fprintf(stderr,
			PROG ": %s: on /dev/%s, which is not an attached loop device: "
			     "its sectors are no disk file's\n",
			file, name);
		return -1;
	}
	snprintf(path, sizeof(path), "/sys/block/%.31s/loop/offset", name);
	if (read_sys(path, num, sizeof(num)) || sscanf(num, "%" SCNu64, &d->offset) != 1) {
		fprintf(stderr, PROG ": %s: cannot read %s\n", file, path);
		return -1;
	}
	if (d->offset % 512) {
		fprintf(stderr,
			PROG ": %s: /dev/%s starts at byte %" PRIu64 " of %s, not at a "
			     "sector\n",
			file, name, d->offset, d->backing);
		return -1;
	}
	snprintf(d->loop, sizeof(d->loop), "%.31s", name);
	d->dev = dev;
	return 0;
}

/* The size of the disk, for --metadata: the backing file's (or device's). */
static int disk_size(struct disk *d)
{
	int fd = open(d->backing, O_RDONLY | O_CLOEXEC);
	uint64_t bytes = 0;
	struct stat st;
	int ret = -1;

	if (fd >= 0 && !fstat(fd, &st)) {
		ret = 0;
		if (S_ISBLK(st.st_mode))
			ret = ioctl(fd, BLKGETSIZE64, &bytes);
		else
			bytes = (uint64_t)st.st_size;
	}
	if (ret)
		fprintf(stderr, PROG ": %s (the disk of /dev/%s): %s\n", d->backing, d->loop,
			strerror(errno));
	if (fd >= 0)
		close(fd);
	d->sectors = bytes / 512;
	return ret ? -1 : 0;
}

/* Names the flags that keep an extent off the map. */
static const char *unplaced_why(uint32_t flags)
{
	if (flags & FIEMAP_EXTENT_DELALLOC)
		return "delayed allocation, still unwritten after a sync";
	if (flags & FIEMAP_EXTENT_UNKNOWN)
		return "at an unknown place";
	if (flags & (FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_ENCRYPTED))
		return "encoded (compressed or encrypted): its sectors are not its bytes";
	if (flags & (FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL))
		return "stored inline with metadata";
	return "not block-aligned";
}

/* Adds the extents of fd (file, on disk d) to s: 0, or -1 after one line. */
static int map_file(const char *file, int fd, const struct disk *d, struct sector_ranges *s)
{
	size_t size = sizeof(struct fiemap) + FIEMAP_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(size);
	uint64_t start = 0;
	bool last = false;
	int ret = 0;

	if (!fm) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	while (!ret && !last) {
		memset(fm, 0, size);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		/* the sync places delayed allocations: their sectors are known after it */
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm)) {
			fprintf(stderr, PROG ": %s: FIEMAP: %s\n", file, strerror(errno));
			ret = -1;
			break;
		}
		if (!fm->fm_mapped_extents)
			break;
		for (uint32_t i = 0; !ret && i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];
			uint64_t a = e->fe_physical + d->offset, b = a + e->fe_length;

			if (e->fe_flags & EXTENT_UNPLACED) {
				fprintf(stderr, PROG ": %s: the extent at byte %llu is %s\n", file,
					(unsigned long long)e->fe_logical,
					unplaced_why(e->fe_flags));
				ret = -1;
			} else if (b / 512 >= SECTOR_RANGES_LIMIT || b < a) {
				fprintf(stderr,
					PROG ": %s: the extent at byte %llu lies past 2^54 "
					     "sectors\n",
					file, (unsigned long long)e->fe_logical);
				ret = -1;
			} else if (sector_ranges_add(s, a / 512, (b + 511) / 512)) {
				fprintf(stderr, PROG ": %s: too many extents\n", file);
				ret = -1;
			}
			last = e->fe_flags & FIEMAP_EXTENT_LAST;
			start = e->fe_logical + e->fe_length;
		}
	}
	free(fm);
	return ret;
}

/* One FILE: synced, on the same disk as those before, mapped into s.  0, or -1 after one line. */
static int add_file(const char *file, struct disk *d, struct sector_ranges *s)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	int ret = -1;

	if (fd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", file, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st)) {
		fprintf(stderr, PROG ": %s: %s\n", file, strerror(errno));
	} else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		fprintf(stderr, PROG ": %s: not a regular file or a directory\n", file);
	} else if (d->loop[0] && st.st_dev != d->dev) {
		fprintf(stderr, PROG ": %s: on another file system than the FILEs before it\n",
			file);
	} else if (!d->loop[0] && find_loop(file, st.st_dev, d)) {
		/* said */
	} else if (fsync(fd) && errno != EINVAL) {
		fprintf(stderr, PROG ": %s: fsync: %s\n", file, strerror(errno));
	} else {
		ret = map_file(file, fd, d, s);
	}
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"metadata", no_argument, NULL, 'm'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct sector_ranges s = {0}, out = {0};
	struct disk d = {0};
	bool metadata = false;
	int opt, status = 1;

	while ((opt = cli_getopt(PROG, argc, argv, ":hV", longopts)) != -1) {
		if (opt == 'm')
			metadata = true;
		else if (opt == 'h' || opt == 'V')
			return cli_help_version(PROG, opt, usage) ? 0 : 2;
		else
			return 2;
	}
	if (optind == argc) {
		cli_usage_error(PROG, "a FILE is needed", NULL);
		return 2;
	}
	for (int i = optind; i < argc; i++)
		if (add_file(argv[i], &d, &s))
			goto out;
	if (metadata && (disk_size(&d) || sector_ranges_complement(&s, d.sectors, &out))) {
		if (d.sectors)
			fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	if (sector_ranges_print(metadata ? &out : &s, stdout) || fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": cannot write: %s\n", strerror(errno));
		goto out;
	}
	if (!(metadata ? out : s).nr)
		fprintf(stderr, PROG ": %s\n",
			metadata ? "the FILEs hold the whole disk"
				 : "the FILEs hold no sectors (empty, or all inline)");
	status = 0;
out:
	sector_ranges_free(&s);
	sector_ranges_free(&out);
	return status;
}
