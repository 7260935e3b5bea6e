/*
 * check_log_writes_limit.c - the log-writes filter's bound on what waits
 * for its writer: built here with a 4 KiB bound and a pwrite the test
 * holds, so that the writer is behind exactly when the test says.  Past the
 * bound the stack takes no request; once the writer has caught up it wakes
 * the host through its eventfd, and the stack takes requests again.
 */
#include <check.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <unistd.h>

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open;
static unsigned int held_writes;

/* The writer's pwrite: it waits here until the test opens the gate. */
static ssize_t gated_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	pthread_mutex_lock(&gate_lock);
	held_writes++;
	pthread_cond_broadcast(&gate_cond);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	return pwrite(fd, buf, len, off);
}

/* The filter itself, with the test's bound and pwrite. */
#define LW_QUEUE_MAX 4096u
#define pwrite gated_pwrite
#include "filter_log_writes.c"
#undef pwrite

/* A backend the test ends by hand, and a host that records the watched fd. */
static struct request *below;

static int hand_open(struct blk_dev *dev, const char *args, struct dev_limits *lim, char *why,
		     size_t whylen)
{
	lim->capacity = 1 << 21;
	lim->logical_block_size = SECTOR_SIZE;
	return 0;
}

static void hand_submit(struct blk_dev *dev, struct request *rq)
{
	below = rq;
}

static const struct dev_ops hand_ops = {
	.api_version = DEV_API_VERSION,
	.name = "hand",
	.backend = true,
	.open = hand_open,
	.submit = hand_submit,
};

static int watched_fd = -1;
static void (*watched_ready)(void *arg);
static void *watched_arg;

static int fake_watch(void *host, int fd, void (*ready)(void *arg), void *arg)
{
	watched_fd = fd;
	watched_ready = ready;
	watched_arg = arg;
	return 0;
}

static void fake_unwatch(void *host, int fd)
{
	watched_fd = -1;
}

static const struct dev_host_ops fake_host = { .watch_fd = fake_watch, .unwatch_fd = fake_unwatch };

static void no_request_fn(struct request_queue *q)
{
}

static void end_io(struct bio *bio, int error)
{
	*(int *)bio->bi_private = 1;
}

/* The watched fd has input within ms milliseconds. */
static bool readable(int ms)
{
	struct pollfd p = { .fd = watched_fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

START_TEST(stack_waits_for_the_writer_and_is_woken)
{
	char dir[] = "/tmp/check_log_writes_limit.XXXXXX", path[64], spec[96], why[256] = "";
	static unsigned char buf[16 * SECTOR_SIZE];
	struct dev_limits lim = { .capacity = 1 << 21 };
	struct bio_vec vec = { buf, sizeof(buf) };
	struct blk_clock clock;
	struct request_queue *q;
	struct dev_stack s = { .host_ops = &fake_host };
	const char *specp = spec;
	struct request *rq;
	struct bio bio;
	int ended = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/log", dir);
	snprintf(spec, sizeof(spec), "log-writes:file=%s", path);
	blk_virtual_clock_init(&clock, 1000);
	q = blk_init_queue(no_request_fn, NULL, &clock);
	ck_assert_msg(!dev_stack_open(&s, q, &specp, 1, &hand_ops, NULL, &lim, why, sizeof(why)),
		      "%s", why);
	blk_queue_set_pdu_size(q, dev_stack_pdu_size(&s));

	/* the writer holds the empty log's super block at the gate */
	pthread_mutex_lock(&gate_lock);
	while (!held_writes)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	blk_queue_lock(q);
	ck_assert(dev_can_take(s.top));

	/* a FUA write of 8 KiB goes to the writer at once: past the bound */
	bio_init(&bio, REQ_OP_WRITE, 64, sizeof(buf), &vec, 1);
	bio.bi_flags = REQ_FUA;
	bio.bi_end_io = end_io;
	bio.bi_private = &ended;
	bio.bi_remaining = 1;
	rq = blk_alloc_request(q, &bio);
	rq->rq_flags |= RQF_STARTED;
	q->in_flight++;
	q->epoch_count++;
	dev_submit(s.top, rq);
	dev_end(s.bottom, below, 0, 16);
	ck_assert(ended);
	ck_assert(!dev_can_take(s.top));
	blk_queue_unlock(q);
	ck_assert(!readable(0));

	/* the writer catches up and wakes the host; the host's ready empties the fd */
	pthread_mutex_lock(&gate_lock);
	gate_open = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	ck_assert_msg(readable(5000), "the writer did not wake the host in 5 s");
	blk_queue_lock(q);
	watched_ready(watched_arg);
	ck_assert(dev_can_take(s.top));
	blk_queue_unlock(q);
	ck_assert(!readable(0));

	dev_stack_close(&s);
	blk_cleanup_queue(q);
	unlink(path);
	rmdir(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log_writes_limit");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, stack_waits_for_the_writer_and_is_woken);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
