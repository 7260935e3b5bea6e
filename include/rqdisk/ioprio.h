/* SPDX-License-Identifier: BSD-3-Clause */
/* ioprio.h - I/O priority classes and levels, encoded as Linux's ioprio_get(2) returns them. */
#ifndef RQDISK_IOPRIO_H
#define RQDISK_IOPRIO_H

/*
 * The class in the top bits, the level (0 highest .. 7 lowest) in the
 * low ones: the value ioprio_get(2) and ionice(1) use, so a priority read
 * from the kernel is carried unchanged.
 */
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_PRIO_MASK ((1u << IOPRIO_CLASS_SHIFT) - 1)
#define IOPRIO_PRIO_CLASS(ioprio) (((ioprio) >> IOPRIO_CLASS_SHIFT) & 0x7)
#define IOPRIO_PRIO_DATA(ioprio) ((ioprio) & IOPRIO_PRIO_MASK)
#define IOPRIO_PRIO_VALUE(class, data) \
	((unsigned short)(((class) << IOPRIO_CLASS_SHIFT) | ((data) & IOPRIO_PRIO_MASK)))

enum {
	IOPRIO_CLASS_NONE, /* not set: best effort, level from the nice value */
	IOPRIO_CLASS_RT,   /* real time: served before anything else */
	IOPRIO_CLASS_BE,   /* best effort */
	IOPRIO_CLASS_IDLE, /* only when nothing else wants the disk */
};

#define IOPRIO_NR_LEVELS 8
#define IOPRIO_BE_NORM 4 /* the level of a process at nice 0 */

/* What a bio carries when nobody said: best effort at the normal level. */
#define IOPRIO_DEFAULT IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, IOPRIO_BE_NORM)

/* The class a priority is served in: NONE is best effort. */
static inline int ioprio_class(unsigned short ioprio)
{
	int class = IOPRIO_PRIO_CLASS(ioprio);

	return class == IOPRIO_CLASS_NONE || class > IOPRIO_CLASS_IDLE ? IOPRIO_CLASS_BE : class;
}

/* The level within the class, clamped to 0..7; NONE is the normal level. */
static inline int ioprio_level(unsigned short ioprio)
{
	int level = (int)IOPRIO_PRIO_DATA(ioprio);

	if (IOPRIO_PRIO_CLASS(ioprio) == IOPRIO_CLASS_NONE)
		return IOPRIO_BE_NORM;
	return level < IOPRIO_NR_LEVELS ? level : IOPRIO_NR_LEVELS - 1;
}

#endif
