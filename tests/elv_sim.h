/* SPDX-License-Identifier: BSD-3-Clause */
/* elv_sim.h - scenario tests: processes reading through an elevator over a device model. */
#ifndef RQDISK_ELV_SIM_H
#define RQDISK_ELV_SIM_H

#include "elv_harness.h"
#include "blkcg.h"
#include "model.h"

#define ELV_SIM_MAX_PROCS 32
#define ELV_SIM_MAX_DEPTH 8 /* reads one process keeps out at once */
#define ELV_SIM_MAX_OUT 64  /* requests the modelled device holds at once */

/*
 * One process: it keeps depth reads of sectors each out, and after each
 * one ends thinks think_ns before it sends the next.  Its reads go on
 * from start, stride sectors apart (stride == sectors: sequential).
 */
struct elv_sim_proc {
	pid_t pid;
	const struct blkcg *blkcg; /* its cgroup (elv_sim_cgroup), NULL for the root */
	sector_t next;
	unsigned int sectors, depth;
	uint64_t stride, think_ns;
	uint64_t limit; /* reads it does, then stops; 0: no end */
	/* what it got */
	uint64_t reads_done, sectors_done, lat_sum_ns, lat_max_ns;
	uint64_t end_ns; /* its last read (of limit) ended then */
	/* its slots: a read out, or the next one's due time */
	struct test_bio tb[ELV_SIM_MAX_DEPTH];
	uint64_t sent_at[ELV_SIM_MAX_DEPTH], due[ELV_SIM_MAX_DEPTH];
	bool out[ELV_SIM_MAX_DEPTH];
	uint64_t sent;
};

struct elv_sim_io {
	struct request *rq;
	uint64_t done_at;
};

struct elv_sim {
	struct fake_disk *fd;
	struct disk_model *m;
	unsigned int depth; /* the model's: the driver holds no more */
	uint64_t t0;	    /* the clock when it was made */
	struct elv_sim_io out[ELV_SIM_MAX_OUT];
	unsigned int nr_out;
	struct elv_sim_proc procs[ELV_SIM_MAX_PROCS];
	unsigned int nr_procs;
	struct blkcg_table cgroups; /* what procs' blkcg point at */
};

/* elevator over the model spec ("hdd", "ssd") on a 4 GiB disk; nr_requests 1024. */
struct elv_sim *elv_sim_new(const char *elevator, const char *model);
/* A process that starts start_ns after the sim was made; returns it, to read its results. */
struct elv_sim_proc *elv_sim_add(struct elv_sim *s, pid_t pid, sector_t start, unsigned int sectors,
				 unsigned int depth, uint64_t think_ns, uint64_t start_ns);
/* The cgroup path, interned in the sim, for a process's blkcg: as the frontend resolves one. */
static inline const struct blkcg *elv_sim_cgroup(struct elv_sim *s, const char *path)
{
	return blkcg_intern(&s->cgroups, path, 0);
}
/* Run the virtual clock for for_ns more, or until every process with a limit is done. */
void elv_sim_run(struct elv_sim *s, uint64_t for_ns);
/* Stop every process, let what is queued complete, free it all. */
void elv_sim_free(struct elv_sim *s);

#endif
