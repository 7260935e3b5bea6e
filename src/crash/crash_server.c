/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_server.c - the FUSE server of rqdisk-crash (libfuse's low-level API,
 * multithreaded loop): a directory of states, each file a state of its own
 * inode, so the page cache never shows a state what another one held.
 * Reads come from the state's overlay, writes go to its COW map.
 */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bsd/sys/tree.h>

#include "crash_server.h"

#define SRV_MAX_IO (1u << 20)
#define SRV_ATTR_TIMEOUT 60.0 /* a state's size never changes, and inodes are never reused */
#define SRV_JOIN_WAIT_S 5     /* for the loop to end after the unmount, before aborting the connection */
#define SRV_FIRST_INO 2

struct srv_file {
	RB_ENTRY(srv_file) node;
	uint64_t ino;
	int refs; /* the table's, and each open handle's */
	struct ovl *ovl;
};
RB_HEAD(srv_files, srv_file);

struct crash_server {
	struct fuse_session *se;
	pthread_t thread;
	bool running;
	char *mnt;
	dev_t dev;
	uint64_t size;
	pthread_mutex_t lock; /* files, refs */
	struct srv_files files;
	uint64_t next_ino;
	_Atomic uint64_t read_ns;
	time_t mtime;
};

static int file_cmp(const struct srv_file *a, const struct srv_file *b)
{
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}
RB_GENERATE_INTERNAL(srv_files, srv_file, node, file_cmp, __attribute__((unused)) static)

static struct crash_server *srv(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct srv_file *file_get(struct crash_server *s, fuse_ino_t ino)
{
	struct srv_file key = { .ino = ino }, *f;

	pthread_mutex_lock(&s->lock);
	f = RB_FIND(srv_files, &s->files, &key);
	if (f)
		f->refs++;
	pthread_mutex_unlock(&s->lock);
	return f;
}

static void file_put(struct crash_server *s, struct srv_file *f)
{
	bool last;

	pthread_mutex_lock(&s->lock);
	last = !--f->refs;
	pthread_mutex_unlock(&s->lock);
	if (last) {
		ovl_free(f->ovl);
		free(f->ovl);
		free(f);
	}
}

static void file_attr(const struct crash_server *s, uint64_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_nlink = 1;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_mtime = st->st_ctime = st->st_atime = s->mtime;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0700;
		st->st_nlink = 2;
		return;
	}
	st->st_mode = S_IFREG | 0600;
	st->st_size = (off_t)s->size;
	st->st_blksize = OVL_COW_BLOCK;
	st->st_blocks = (blkcnt_t)(s->size / 512);
}

static int attr_of(struct crash_server *s, fuse_ino_t ino, struct stat *st)
{
	struct srv_file *f;

	if (ino != FUSE_ROOT_ID) {
		f = file_get(s, ino);
		if (!f)
			return ENOENT;
		file_put(s, f);
	}
	file_attr(s, ino, st);
	return 0;
}

static void srv_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->max_write = SRV_MAX_IO;
	conn->max_read = SRV_MAX_IO;
	conn->max_readahead = SRV_MAX_IO;
}

static void srv_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct crash_server *s = srv(req);
	struct fuse_entry_param e = { 0 };
	char *end;
	unsigned long long ino;

	errno = 0;
	ino = strtoull(name, &end, 10);
	if (parent != FUSE_ROOT_ID || errno || *end || end == name || ino < SRV_FIRST_INO ||
	    attr_of(s, (fuse_ino_t)ino, &e.attr)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = (fuse_ino_t)ino;
	e.attr_timeout = e.entry_timeout = SRV_ATTR_TIMEOUT;
	fuse_reply_entry(req, &e);
}

static void srv_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int err = attr_of(srv(req), ino, &st);

	(void)fi;
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, SRV_ATTR_TIMEOUT);
}

/* A state's size is the image's: truncating it is refused, as on a disk. */
static void srv_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			struct fuse_file_info *fi)
{
	struct crash_server *s = srv(req);
	struct stat st;
	int err = attr_of(s, ino, &st);

	(void)fi;
	if (!err && (to_set & FUSE_SET_ATTR_SIZE) && (uint64_t)attr->st_size != s->size)
		err = ino == FUSE_ROOT_ID ? EISDIR : EINVAL;
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, SRV_ATTR_TIMEOUT);
}

static void srv_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct crash_server *s = srv(req);
	struct srv_file *f = ino == FUSE_ROOT_ID ? NULL : file_get(s, ino);

	if (!f) {
		fuse_reply_err(req, ino == FUSE_ROOT_ID ? EISDIR : ENOENT);
		return;
	}
	fi->fh = (uintptr_t)f;
	fi->keep_cache = 0;
	if (fuse_reply_open(req, fi))
		file_put(s, f); /* the open was interrupted: no release will come */
}

static void srv_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	file_put(srv(req), (struct srv_file *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void srv_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct srv_file *f = (struct srv_file *)(uintptr_t)fi->fh;
	struct crash_server *s = srv(req); /* req is gone once answered */
	uint64_t t0 = now_ns();
	char *buf = malloc(size ? size : 1);
	ssize_t n;

	(void)ino;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = ovl_read(f->ovl, buf, size, (uint64_t)off);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
	atomic_fetch_add(&s->read_ns, now_ns() - t0);
}

static void srv_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct srv_file *f = (struct srv_file *)(uintptr_t)fi->fh;
	ssize_t n = ovl_write(f->ovl, buf, size, (uint64_t)off);

	(void)ino;
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

/* A loop device's discard and write-zeroes: zeros in the state's COW map. */
static void srv_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			  struct fuse_file_info *fi)
{
	struct srv_file *f = (struct srv_file *)(uintptr_t)fi->fh;
	int zero = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;
	ssize_t n = 0;

	(void)ino;
	if (off < 0 || len <= 0 || (mode & ~(zero | FALLOC_FL_KEEP_SIZE)) ||
	    (mode & zero) == zero || ((mode & FALLOC_FL_PUNCH_HOLE) && !(mode & FALLOC_FL_KEEP_SIZE))) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (mode & zero)
		n = ovl_write(f->ovl, NULL, (size_t)len, (uint64_t)off);
	else if ((uint64_t)off > f->ovl->size || (uint64_t)len > f->ovl->size - (uint64_t)off)
		n = -ENOSPC;
	fuse_reply_err(req, n < 0 ? (int)-n : 0);
}

static void srv_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void srv_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	srv_fsync(req, ino, 0, fi);
}

static void srv_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	struct crash_server *s = srv(req);
	char *buf = malloc(size ? size : 1), name[32];
	struct srv_file *f;
	struct stat st;
	size_t used = 0;
	off_t i = 0;

	(void)fi;
	if (ino != FUSE_ROOT_ID || !buf) {
		fuse_reply_err(req, buf ? ENOTDIR : ENOMEM);
		free(buf);
		return;
	}
	pthread_mutex_lock(&s->lock);
	RB_FOREACH(f, srv_files, &s->files) {
		size_t n;

		if (i++ < off)
			continue;
		snprintf(name, sizeof(name), "%" PRIu64, f->ino);
		file_attr(s, f->ino, &st);
		n = fuse_add_direntry(req, buf + used, size - used, name, &st, i);
		if (n > size - used)
			break;
		used += n;
	}
	pthread_mutex_unlock(&s->lock);
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void srv_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = { .f_bsize = OVL_COW_BLOCK, .f_frsize = OVL_COW_BLOCK,
			      .f_namemax = 255 };

	(void)ino;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops srv_ops = {
	.init = srv_init,
	.lookup = srv_lookup,
	.getattr = srv_getattr,
	.setattr = srv_setattr,
	.open = srv_open,
	.release = srv_release,
	.read = srv_read,
	.write = srv_write,
	.fallocate = srv_fallocate,
	.fsync = srv_fsync,
	.flush = srv_flush,
	.readdir = srv_readdir,
	.statfs = srv_statfs,
};

/*
 * libfuse's own messages: kept while mounting, so that a mount that fails
 * is told in the one line that says why; said on stderr after that.
 */
static char srv_log_last[256];
static bool srv_log_keep;

static void srv_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char msg[sizeof(srv_log_last)];

	if (level > FUSE_LOG_ERR)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	if (srv_log_keep)
		memcpy(srv_log_last, msg, sizeof(msg));
	else
		fprintf(stderr, "rqdisk-crash: %s\n", msg);
}

static void *srv_loop(void *arg)
{
	struct crash_server *s = arg;
	struct fuse_loop_config cfg = { .clone_fd = 0, .max_idle_threads = 8 };

	fuse_session_loop_mt(s->se, &cfg);
	return NULL;
}

static int srv_mount(struct crash_server *s, char *why, size_t whylen)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	char opts[256];

	snprintf(opts, sizeof(opts),
		 "fsname=rqdisk-crash,subtype=rqdisk-crash,default_permissions,max_read=%u",
		 SRV_MAX_IO);
	if (fuse_opt_add_arg(&args, "rqdisk-crash") || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, opts)) {
		fuse_opt_free_args(&args);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	fuse_set_log_func(srv_log);
	srv_log_keep = true;
	srv_log_last[0] = '\0';
	s->se = fuse_session_new(&args, &srv_ops, sizeof(srv_ops), s);
	fuse_opt_free_args(&args);
	if (!s->se) {
		snprintf(why, whylen, "cannot set up a FUSE session%s%s",
			 srv_log_last[0] ? ": " : "", srv_log_last);
		srv_log_keep = false;
		return -EIO;
	}
	if (fuse_session_mount(s->se, s->mnt)) {
		snprintf(why, whylen, "cannot mount FUSE%s%s", srv_log_last[0] ? ": " : "",
			 srv_log_last);
		srv_log_keep = false;
		fuse_session_destroy(s->se);
		s->se = NULL;
		return -EIO;
	}
	srv_log_keep = false;
	return 0;
}

int server_start(struct crash_server **out, const char *mnt, uint64_t size, char *why,
		 size_t whylen)
{
	struct crash_server *s = calloc(1, sizeof(*s));
	struct stat st;
	int ret;

	if (!s || !(s->mnt = strdup(mnt))) {
		free(s);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	RB_INIT(&s->files);
	s->next_ino = SRV_FIRST_INO;
	s->size = size;
	s->mtime = time(NULL);
	ret = srv_mount(s, why, whylen);
	if (!ret && pthread_create(&s->thread, NULL, srv_loop, s)) {
		snprintf(why, whylen, "cannot start the FUSE thread");
		ret = -EAGAIN;
	}
	if (ret) {
		if (s->se) {
			fuse_session_unmount(s->se);
			fuse_session_destroy(s->se);
		}
		free(s->mnt);
		free(s);
		return ret;
	}
	s->running = true;
	/* the connection's number, to abort it at the end if need be; the loop answers the stat */
	if (!stat(s->mnt, &st))
		s->dev = st.st_dev;
	*out = s;
	return 0;
}

int server_add(struct crash_server *s, struct ovl *o, char *path, size_t pathlen,
	       uint64_t *handle)
{
	struct srv_file *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->ovl = o;
	f->refs = 1;
	pthread_mutex_lock(&s->lock);
	f->ino = s->next_ino++;
	RB_INSERT(srv_files, &s->files, f);
	pthread_mutex_unlock(&s->lock);
	snprintf(path, pathlen, "%s/%" PRIu64, s->mnt, f->ino);
	*handle = f->ino;
	return 0;
}

void server_remove(struct crash_server *s, uint64_t handle)
{
	struct srv_file key = { .ino = handle }, *f;

	pthread_mutex_lock(&s->lock);
	f = RB_FIND(srv_files, &s->files, &key);
	if (f)
		RB_REMOVE(srv_files, &s->files, f);
	pthread_mutex_unlock(&s->lock);
	if (f)
		file_put(s, f);
}

uint64_t server_read_ns(struct crash_server *s)
{
	return atomic_load(&s->read_ns);
}

/* A connection whose mount a checker still holds (a loop device left behind): cut it. */
static void srv_abort(struct crash_server *s)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort", minor(s->dev));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			(void)0;
		close(fd);
	}
}

void server_stop(struct crash_server *s)
{
	struct timespec ts;
	struct srv_file *f, *n;
	bool joined;

	if (!s)
		return;
	fuse_session_exit(s->se);
	fuse_session_unmount(s->se);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += SRV_JOIN_WAIT_S;
	joined = !pthread_timedjoin_np(s->thread, NULL, &ts);
	if (!joined) {
		srv_abort(s);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += SRV_JOIN_WAIT_S;
		joined = !pthread_timedjoin_np(s->thread, NULL, &ts);
	}
	if (!joined)
		return; /* the threads still hold it: the process's exit ends them */
	fuse_session_destroy(s->se);
	RB_FOREACH_SAFE(f, srv_files, &s->files, n) {
		RB_REMOVE(srv_files, &s->files, f);
		file_put(s, f);
	}
	free(s->mnt);
	free(s);
}
