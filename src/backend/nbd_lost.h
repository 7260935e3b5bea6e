/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nbd_lost.h - writes a dropped connection may have lost: counted, and
 * reported to the flushes after it.
 *
 * A write the server has answered may sit in its cache until a flush:
 * a server killed then (nbdkit's cache filter in writeback mode, kill -9)
 * loses it, and a new connection cannot tell.  So the backend counts the
 * writes it has acknowledged (and their sectors) and how many of them a
 * successful flush covered; a drop while the two differ is a loss, of
 * the difference.  The loss is not kept to resend (the data is the
 * caller's again once acknowledged).  The backend tells the stack
 * (dev_lost_writes), whose host fails the next fsync of every open file,
 * as the kernel's errseq does; and it fails with EIO every flush and FUA
 * write that was submitted before a flush reported it, the one in flight
 * at the drop included, for whatever sent them without a file (the ones
 * submitted after that succeed again).
 *
 * One count for all the connections: several are used only with
 * multi-conn, where a flush on any of them covers the writes completed on
 * every one (the protocol's consistency), and a drop closes them all.
 */
#ifndef RQDISK_NBD_LOST_H
#define RQDISK_NBD_LOST_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

/* Running totals of the writes acknowledged, in the order they were: a flush covers a prefix. */
struct nbd_lost_mark {
	uint64_t writes;
	uint64_t sectors;
};

struct nbd_lost {
	struct nbd_lost_mark acked;   /* writes acknowledged that wait for a flush */
	struct nbd_lost_mark flushed; /* of acked, what a successful flush covered */
	unsigned int drops; /* drops that lost writes */
	unsigned int told;  /* of drops, how many a flush has reported */
};

/* A write of sectors was acknowledged: durable only once a flush covers it.  The hot path. */
static inline void nbd_lost_acked(struct nbd_lost *l, uint64_t sectors)
{
	l->acked.writes++;
	l->acked.sectors += sectors;
}

/* A flush is sent: what it will cover once answered (writes answered before it went). */
static inline struct nbd_lost_mark nbd_lost_flush_covers(const struct nbd_lost *l)
{
	return l->acked;
}

/* A flush sent when nbd_lost_flush_covers said covers succeeded. */
static inline void nbd_lost_flushed(struct nbd_lost *l, struct nbd_lost_mark covers)
{
	if (covers.writes > l->flushed.writes)
		l->flushed = covers;
}

/* Whether writes wait for a flush: a drop now would lose them. */
static inline bool nbd_lost_unflushed(const struct nbd_lost *l)
{
	return l->acked.writes != l->flushed.writes;
}

/*
 * The connections dropped: true if that lost writes, what it lost in
 * *lost (counted once, not at the next drop).
 */
static inline bool nbd_lost_drop(struct nbd_lost *l, struct nbd_lost_mark *lost)
{
	if (!nbd_lost_unflushed(l))
		return false;
	lost->writes = l->acked.writes - l->flushed.writes;
	lost->sectors = l->acked.sectors - l->flushed.sectors;
	l->drops++;
	l->flushed = l->acked;
	return true;
}

/* Taken by a flush or FUA write when it comes: the losses already reported. */
static inline unsigned int nbd_lost_sample(const struct nbd_lost *l)
{
	return l->told;
}

/* Whether a loss no flush has reported yet is there. */
static inline bool nbd_lost_untold(const struct nbd_lost *l)
{
	return l->drops != l->told;
}

/*
 * A flush or FUA write that took sample when it came ends with error:
 * -EIO in its place if a loss came after sample (an error of its own
 * stays); either way the loss counts as reported.
 */
static inline int nbd_lost_report(struct nbd_lost *l, unsigned int sample, int error)
{
	if (l->drops == sample)
		return error;
	l->told = l->drops;
	return error ? error : -EIO;
}

#endif
