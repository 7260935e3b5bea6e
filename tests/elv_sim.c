/* SPDX-License-Identifier: BSD-3-Clause */
/* elv_sim.c - scenario tests: processes reading through an elevator over a device model. */
#include <stdlib.h>

#include "elv_sim.h"

#define SIM_CAPACITY 8388608 /* sectors: 4 GiB */

static struct elv_sim *sim_of(struct fake_disk *fd)
{
	return fd->priv;
}

/* The model says when the request completes; the driver takes no more than the model's depth. */
static void sim_dispatch(struct fake_disk *fd, struct request *rq)
{
	struct elv_sim *s = sim_of(fd);
	struct model_io io = {rq->cmd_op, rq->cmd_flags, blk_rq_pos(rq), blk_rq_sectors(rq)};

	ck_assert_uint_lt(s->nr_out, ELV_SIM_MAX_OUT);
	s->out[s->nr_out++] = (struct elv_sim_io){rq, disk_model_service(s->m, &io, elv_now(fd))};
	if (s->nr_out >= s->depth)
		fd->stopped = true;
	/* the sim never looks back at what went out: keep the record from filling */
	if (fd->nr_events > FAKE_MAX_EVENTS / 2)
		fd->nr_events = 0;
}

struct elv_sim *elv_sim_new(const char *elevator, const char *model)
{
	struct elv_sim *s = calloc(1, sizeof(*s));
	char why[256];

	ck_assert_ptr_nonnull(s);
	s->fd = fake_disk_new(elevator);
	s->fd->q->limits.nr_requests = 1024;
	s->fd->priv = s;
	s->fd->on_dispatch = sim_dispatch;
	ck_assert_int_eq(disk_model_new(model, SIM_CAPACITY, &s->m, why, sizeof(why)), 0);
	s->depth = disk_model_depth(s->m);
	s->fd->q->limits.rotational = disk_model_rotational(s->m); /* as the model filter says it */
	s->t0 = elv_now(s->fd);
	if (s->depth > ELV_SIM_MAX_OUT)
		s->depth = ELV_SIM_MAX_OUT;
	return s;
}

struct elv_sim_proc *elv_sim_add(struct elv_sim *s, pid_t pid, sector_t start, unsigned int sectors,
				 unsigned int depth, uint64_t think_ns, uint64_t start_ns)
{
	struct elv_sim_proc *p = &s->procs[s->nr_procs++];

	ck_assert_uint_le(s->nr_procs, ELV_SIM_MAX_PROCS);
	ck_assert_uint_le(depth, ELV_SIM_MAX_DEPTH);
	ck_assert_uint_le(sectors, ELV_BUF_SECTORS);
	p->pid = pid;
	p->next = start;
	p->sectors = sectors;
	p->stride = sectors;
	p->depth = depth;
	p->think_ns = think_ns;
	for (unsigned int i = 0; i < depth; i++)
		p->due[i] = s->t0 + start_ns;
	return p;
}

static bool proc_done(const struct elv_sim_proc *p)
{
	return p->limit && p->reads_done >= p->limit;
}

/* Reads that ended are counted; reads that are due go out. */
static void sim_procs(struct elv_sim *s)
{
	uint64_t now = elv_now(s->fd);

	for (unsigned int i = 0; i < s->nr_procs; i++) {
		struct elv_sim_proc *p = &s->procs[i];

		for (unsigned int j = 0; j < p->depth; j++) {
			if (p->out[j] && p->tb[j].ended) {
				uint64_t lat = now - p->sent_at[j];

				ck_assert_int_eq(p->tb[j].error, 0);
				p->out[j] = false;
				p->reads_done++;
				p->sectors_done += p->sectors;
				p->lat_sum_ns += lat;
				if (lat > p->lat_max_ns)
					p->lat_max_ns = lat;
				if (proc_done(p))
					p->end_ns = now;
				p->due[j] = now + p->think_ns;
			}
			if (p->out[j] || now < p->due[j] || (p->limit && p->sent >= p->limit))
				continue;
			p->out[j] = true;
			p->sent++;
			p->sent_at[j] = now;
			elv_submit_cg(s->fd, &p->tb[j], REQ_OP_READ, p->next, p->sectors, p->pid,
				      IOPRIO_DEFAULT, p->blkcg);
			p->next = (p->next + p->stride) % (SIM_CAPACITY - p->sectors);
		}
	}
}

/* The next thing to happen: a completion, a process's read, the elevator's wake-up. */
static uint64_t sim_next_event(const struct elv_sim *s)
{
	uint64_t next = UINT64_MAX, now = elv_now(s->fd);

	for (unsigned int i = 0; i < s->nr_out; i++)
		if (s->out[i].done_at < next)
			next = s->out[i].done_at;
	for (unsigned int i = 0; i < s->nr_procs; i++) {
		const struct elv_sim_proc *p = &s->procs[i];

		for (unsigned int j = 0; j < p->depth && !(p->limit && p->sent >= p->limit); j++)
			if (!p->out[j] && p->due[j] < next)
				next = p->due[j];
	}
	/* a wake-up while the device is full waits for a completion */
	if (s->nr_out < s->depth && s->fd->q->dispatch_at && s->fd->q->dispatch_at < next)
		next = s->fd->q->dispatch_at;
	return next > now ? next : now;
}

/* Complete the earliest request due by now, if any. */
static bool sim_complete_one(struct elv_sim *s)
{
	unsigned int first = s->nr_out;
	struct request *rq;

	for (unsigned int i = 0; i < s->nr_out; i++)
		if (s->out[i].done_at <= elv_now(s->fd) &&
		    (first == s->nr_out || s->out[i].done_at < s->out[first].done_at))
			first = i;
	if (first == s->nr_out)
		return false;
	rq = s->out[first].rq;
	s->out[first] = s->out[--s->nr_out];
	s->fd->stopped = false;
	fake_complete(s->fd, rq, 0, blk_rq_sectors(rq));
	return true;
}

static bool sim_all_done(const struct elv_sim *s)
{
	bool any = false;

	for (unsigned int i = 0; i < s->nr_procs; i++) {
		if (s->procs[i].limit && !proc_done(&s->procs[i]))
			return false;
		any |= s->procs[i].limit != 0;
	}
	return any;
}

void elv_sim_run(struct elv_sim *s, uint64_t for_ns)
{
	struct fake_disk *fd = s->fd;
	uint64_t until_ns = elv_now(fd) + for_ns;

	sim_procs(s);
	for (unsigned int guard = 0; elv_now(fd) < until_ns && !sim_all_done(s); guard++) {
		uint64_t next = sim_next_event(s);

		ck_assert_uint_lt(guard, 50000000);
		ck_assert_msg(next != UINT64_MAX, "nothing out, nothing due and no wake-up");
		fd->clock.virtual_ns = next;
		while (sim_complete_one(s))
			;
		if (s->nr_out < s->depth && fd->q->dispatch_at &&
		    fd->q->dispatch_at <= elv_now(fd)) {
			fd->stopped = false;
			blk_run_queue(fd->q);
		}
		sim_procs(s);
	}
}

void elv_sim_free(struct elv_sim *s)
{
	struct fake_disk *fd = s->fd;

	for (unsigned int i = 0; i < s->nr_procs; i++)
		s->procs[i].limit = s->procs[i].sent ? s->procs[i].sent : 1;
	fd->on_dispatch = NULL;
	fd->stopped = false;
	s->nr_out = 0;
	blk_run_queue(fd->q);
	for (unsigned int guard = 0; !blk_queue_idle(fd->q); guard++) {
		ck_assert_uint_lt(guard, 100000);
		if (fd->nr_dispatched)
			fake_complete_all(fd);
		else
			elv_wake(fd);
	}
	fake_disk_free(fd);
	blkcg_table_free(&s->cgroups);
	disk_model_free(s->m);
	free(s);
}
