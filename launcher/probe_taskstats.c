// SPDX-License-Identifier: MIT
/* The taskstats source (see probe_taskstats.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "delays.h"
#include "account.h"
#include "metrics.h"
#include "pidset.h"
#include "probe.h"
#include "procfs.h"
#include "run.h"
#include "sampling.h"
#include "spawn.h"
#include "taskstats_client.h"
#include "tree.h"
#include "probe_taskstats.h"

/*
 * A process found not to descend from the command is remembered for this
 * long: its children's exits then cost nothing. Not forever, because its
 * pid could be reused by a process of the tree once the pid space wraps.
 */
#define FOREIGN_TTL_NS 1000000000ull

/*
 * Records are kept in blocks that never move: a growing array would copy
 * itself as it doubles, and the copies stay resident (thousands of
 * threads, hundreds of bytes each).
 */
#define BLOCK_RECS 512

struct ts_probe {
	struct ts_client *c;
	struct ts_record **blocks;
	size_t nblocks, n;
	struct pidset tree;    /* tgids of the tree */
	struct pidset foreign; /* pid -> when it was found foreign */
	uint32_t self;
	uint64_t foreign_records;
	uint64_t drops0, overruns0, unreadable0;
	int err;
	struct delays_opts dopts;
};

struct ts_probe *ts_probe__new(char *err, size_t errlen)
{
	struct ts_probe *p = calloc(1, sizeof(*p));
	int ret;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->self = (uint32_t)getpid();
	p->c = ts_client__new(err, errlen);
	if (!p->c) {
		ret = -errno;
		goto out_free;
	}
	ret = ts_client__listen(p->c, TS_PROBE_RCVBUF, err, errlen);
	if (ret)
		goto out_free;
	return p;

out_free:
	ts_probe__free(p);
	errno = -ret;
	return NULL;
}

void ts_probe__free(struct ts_probe *p)
{
	if (!p)
		return;
	ts_client__free(p->c);
	pidset_free(&p->tree);
	pidset_free(&p->foreign);
	for (size_t i = 0; i < p->nblocks; i++)
		free(p->blocks[i]);
	free(p->blocks);
	free(p);
}

void ts_probe__set_live(struct ts_probe *p, bool live, bool live_preexisting)
{
	p->dopts.non_cpu_live = live;
	p->dopts.non_cpu_live_preexisting = live_preexisting;
}

void ts_probe__set_create_missing(struct ts_probe *p, bool create)
{
	p->dopts.create_missing = create;
}

struct ts_client *ts_probe__client(struct ts_probe *p)
{
	return p->c;
}

static bool is_foreign(struct ts_probe *p, uint32_t pid, uint64_t now)
{
	uint64_t when;

	return pidset_get(&p->foreign, pid, &when) && when && now - when < FOREIGN_TTL_NS;
}

/*
 * Does the process tgid, child of ppid, descend from the command? ppid is
 * tsarun itself for orphans it reaped. Walks up /proc from ppid when the
 * parent is new; every process on the way is remembered either way.
 */
static bool in_tree(struct ts_probe *p, uint32_t tgid, uint32_t ppid)
{
	uint32_t chain[64];
	size_t depth = 0;
	uint64_t now;
	uint32_t pid;
	bool yes = false;

	if (pidset_get(&p->tree, tgid, NULL))
		return true;
	if (!ppid || ppid == tgid)
		return false;
	if (ppid == p->self || pidset_get(&p->tree, ppid, NULL)) {
		pidset_put(&p->tree, tgid, 1);
		return true;
	}
	now = mono_ns();
	for (pid = ppid; pid > 1 && depth < sizeof(chain) / sizeof(chain[0]);) {
		struct procfs_stat st;

		if (is_foreign(p, pid, now))
			break;
		if (tree_read_stat((pid_t)pid, &st))
			break;
		chain[depth++] = pid;
		if ((uint32_t)st.ppid == p->self || pidset_get(&p->tree, (uint32_t)st.ppid, NULL)) {
			yes = true;
			break;
		}
		pid = (uint32_t)st.ppid;
	}
	for (size_t i = 0; i < depth; i++)
		pidset_put(yes ? &p->tree : &p->foreign, chain[i], yes ? 1 : now);
	if (yes)
		pidset_put(&p->tree, tgid, 1);
	return yes;
}

static int keep(struct ts_probe *p, const struct ts_record *rec)
{
	if (p->n == p->nblocks * BLOCK_RECS) {
		struct ts_record **b = realloc(p->blocks, (p->nblocks + 1) * sizeof(*b));

		if (!b)
			return -ENOMEM;
		p->blocks = b;
		b[p->nblocks] = malloc(BLOCK_RECS * sizeof(**b));
		if (!b[p->nblocks])
			return -ENOMEM;
		p->nblocks++;
	}
	p->blocks[p->n / BLOCK_RECS][p->n % BLOCK_RECS] = *rec;
	p->n++;
	return 0;
}

/* Give back the blocks (a large run's records are not needed once attached). */
static void forget(struct ts_probe *p)
{
	for (size_t i = 0; i < p->nblocks; i++)
		free(p->blocks[i]);
	free(p->blocks);
	p->blocks = NULL;
	p->nblocks = p->n = 0;
}

static int on_record(void *ctx, const struct ts_record *rec)
{
	struct ts_probe *p = ctx;
	uint32_t tgid = rec->have_tgid ? rec->tgid : rec->tid;

	if (!in_tree(p, tgid, rec->ppid)) {
		p->foreign_records++;
		return 0;
	}
	return keep(p, rec);
}

static int tp_arm(struct probe *pr, const struct spawn *child, struct run *r)
{
	struct ts_probe *p = pr->ctx;

	/* Exits from before this run are not the command's. */
	ts_client__drain(p->c, NULL, NULL);
	forget(p);
	p->foreign_records = 0;
	p->err = 0;
	pidset_clear(&p->tree);
	pidset_put(&p->tree, (uint32_t)child->pid, 1);
	p->drops0 = ts_client__drops(p->c);
	p->overruns0 = ts_client__overruns(p->c);
	p->unreadable0 = ts_client__unreadable(p->c);
	run__source(r, "taskstats", true, NULL);
	r->quality.ts.active = true;
	return 0;
}

static int tp_fd(struct probe *pr)
{
	struct ts_probe *p = pr->ctx;

	return ts_client__fd(p->c);
}

static int tp_ready(struct probe *pr)
{
	struct ts_probe *p = pr->ctx;
	int ret = ts_client__drain(p->c, on_record, p);

	/* Running out of memory loses records, not the run. */
	if (ret < 0 && !p->err)
		p->err = ret;
	return 0;
}

static int tp_collect(struct probe *pr, struct run *r)
{
	struct ts_probe *p = pr->ctx;
	struct taskstats_quality *q = &r->quality.ts;
	size_t nthreads = r->nthreads;
	const struct ts_record **recs;
	int ret;

	tp_ready(pr);
	/* Threads still alive: their counters so far. */
	for (size_t i = 0; i < nthreads; i++) {
		struct ts_record rec;

		if (!(r->threads[i].flags & TSA_F_SURVIVOR))
			continue;
		if (!ts_client__query(p->c, r->threads[i].tid, &rec))
			keep(p, &rec);
	}
	recs = malloc((p->n ? p->n : 1) * sizeof(*recs));
	if (!recs) {
		forget(p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n; i++)
		recs[i] = &p->blocks[i / BLOCK_RECS][i % BLOCK_RECS];
	ret = delays_attach(r, recs, p->n, &p->dopts);
	free(recs);
	if (!ret && r->quality.procfs.active && !run_source_active(r, "ebpf")) {
		/*
		 * procfs made the threads: exit records completed their counters
		 * and added the threads no sample saw. Totals and the tree check again.
		 */
		ret = fold_finish(r);
		if (!ret)
			smp_run_checks(r);
	} else if (!ret && r->nthreads != nthreads) {
		ret = fold_finish(r);
	}
	r->quality.taskstats_drops += ts_client__drops(p->c) - p->drops0;
	q->overruns = ts_client__overruns(p->c) - p->overruns0;
	q->unreadable = ts_client__unreadable(p->c) - p->unreadable0;
	q->foreign = p->foreign_records;
	if (p->err)
		run__note(r, "taskstats: records were lost: %s", strerror(-p->err));
	forget(p);
	return ret;
}

void ts_probe__as_probe(struct ts_probe *p, struct probe *out)
{
	memset(out, 0, sizeof(*out));
	out->name = "taskstats";
	out->ctx = p;
	out->arm = tp_arm;
	out->fd = tp_fd;
	out->on_ready = tp_ready;
	out->collect = tp_collect;
}
