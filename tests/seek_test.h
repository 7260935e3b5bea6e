/* seek_test.h - the textbook head-scheduling example and the checks the seek elevators' tests share. */
#ifndef RQDISK_SEEK_TEST_H
#define RQDISK_SEEK_TEST_H

#include "fake_driver.h"

/* The textbook queue (cylinders), in arrival order; the head starts at 53. */
#define NR_TEXTBOOK 8
#define TEXTBOOK_HEAD 53
extern const sector_t textbook[NR_TEXTBOOK];

struct fake_disk *stopped_disk(const char *elevator);
void submit(struct fake_disk *fd, struct test_bio *tb, enum req_op op, sector_t sector,
	    unsigned int sectors);
void assert_dispatched(const struct fake_disk *fd, unsigned int i, sector_t sector,
		       unsigned int nr_sectors);
void assert_order_from(const struct fake_disk *fd, unsigned int from, const sector_t *want,
		       unsigned int n);
sector_t head_movement(const struct fake_disk *fd, unsigned int from, sector_t head);
void complete_one(struct fake_disk *fd);
void finish(struct fake_disk *fd, struct test_bio *tb, unsigned int n);
struct fake_disk *run_textbook(const char *elevator, struct test_bio *tb, sector_t scale,
			       bool one_at_a_time);

/* The core's merges through the elevator's tree: back, gap fill, front. */
TCase *seek_merge_tests(const char *elevator);

#endif
