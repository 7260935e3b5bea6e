/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nbd_impl.h - what the nbd backend's files share: its state and its
 * requests', and the calls between its arguments, open and close
 * (backend_nbd.c), its request path (nbd_request.c) and its server gone
 * and back (nbd_reconnect.c).
 */
#ifndef RQDISK_NBD_IMPL_H
#define RQDISK_NBD_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include "backend_nbd.h"
#include "nbd_conn.h"
#include "nbd_export.h"
#include "nbd_lost.h"

#define NS_PER_S ((uint64_t)1000000000)

struct nbd_backend;

/* Kept with each request. */
struct nbd_rq {
	struct nbd_backend *nb;
	struct request *rq;
	TAILQ_ENTRY(nbd_rq) link; /* on the done list or the held one */
	TAILQ_ENTRY(nbd_rq) out;  /* on outstanding, from submit to end */
	uint64_t deadline;        /* it ends by then, done or EIO */
	struct nbd_lost_mark flush_covers; /* its flush, once answered, covers the writes acked then */
	unsigned int lost_sample; /* the losses reported when it came (nbd_lost_sample) */
	unsigned int pending;     /* commands out */
	unsigned int conn;        /* the connection its data went on */
	int error;                /* the first command's failure, -errno */
	bool issuing;             /* submit is still issuing its commands */
	bool flush_after;         /* FUA on a server without it: a flush once the data is there */
	bool lost;                /* a command died with its connection: to send again */
	bool on_done, held;
};

TAILQ_HEAD(nbd_rq_list, nbd_rq);

struct nbd_backend {
	struct blk_dev *dev;
	char *uri;
	uint64_t timeout_ns;
	unsigned int nr_conns, next_conn;
	struct nbd_conn conns[NBD_MAX_CONNECTIONS];
	bool up;             /* every connection is UP */
	bool need_drop;      /* a command found its connection dead */
	uint64_t down_since; /* the server went away then; 0 while up */
	uint64_t retry_at;   /* the next attempt to reconnect, 0: none due */
	struct nbd_export ex; /* what the export said of itself */
	struct nbd_lost lost; /* writes a drop may have lost, for the flushes to report */
	struct iovec *iov;   /* a request's memory, mapped at submit */
	struct nbd_rq_list done;        /* to end, outside libnbd */
	struct nbd_rq_list held;        /* waiting for the server to come back */
	struct nbd_rq_list outstanding; /* every request taken and not ended */
};

/* nbd_request.c: the requests, from submit to their end */
void nbd_to_done(struct nbd_backend *nb, struct nbd_rq *r);
void nbd_issue_request(struct nbd_backend *nb, struct nbd_rq *r);
bool nbd_flush_owed(const struct nbd_rq *r);
void nbd_hold(struct nbd_backend *nb, struct nbd_rq *r);
void nbd_end_done(struct nbd_backend *nb);
void nbd_update_events(struct nbd_backend *nb);
void nbd_rearm(struct nbd_backend *nb);
bool nbd_can_take(struct blk_dev *dev);
void nbd_submit(struct blk_dev *dev, struct request *rq);

/* nbd_reconnect.c: the connections dropped, made again, and the timer */
void nbd_lost(struct nbd_backend *nb, const char *what);
void nbd_ready(void *arg, unsigned int revents);
void nbd_timer(struct blk_dev *dev, uint64_t now);

#endif
