// SPDX-License-Identifier: MIT
/* --interval for a command's run: the JSON Lines stream (streamprobe.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "probe.h"
#include "procprobe.h"
#include "run.h"
#include "sched.h"
#include "stream.h"
#include "streamprobe.h"

enum stream_src {
	SRC_NONE = 0,
	SRC_EBPF,
	SRC_PROCFS,
};

struct stream_probe {
	int fd;
	char name[256];
	uint64_t interval_ns;
	struct sched_probe *sched;
	struct proc_probe *proc;
	struct stream *st;
	struct run *r; /* the run being streamed (between arm and collect) */
	enum stream_src src;
	int64_t last_end; /* where the previous interval ended, from the run's start */
	size_t recs_seen; /* exit records already given to the stream */
	int err;	  /* a write failed: streaming stopped */
	uint64_t drops;	  /* the eBPF probe's ring buffer drops at the last line */
	/* The tick's arrays, kept from one tick to the next. */
	struct thread_acct *snap, *all;
	size_t snap_cap, all_cap;
};

static const char no_source_reason[] =
    "no source sees live threads: taskstats reports a thread only when it exits "
    "(per-interval figures need eBPF or procfs: --backend ebpf or proc)";

struct stream_probe *stream_probe__new(int fd, const char *name, uint64_t interval_ns,
				       struct sched_probe *sched, struct proc_probe *proc)
{
	struct stream_probe *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->st = stream__new();
	if (!sp->st) {
		free(sp);
		errno = ENOMEM;
		return NULL;
	}
	sp->fd = fd;
	snprintf(sp->name, sizeof(sp->name), "%s", name);
	sp->interval_ns = interval_ns;
	sp->sched = sched;
	sp->proc = proc;
	return sp;
}

void stream_probe__free(struct stream_probe *sp)
{
	if (!sp)
		return;
	if (sp->fd > 2)
		close(sp->fd);
	stream__free(sp->st);
	free(sp->snap);
	free(sp->all);
	free(sp);
}

int stream_probe__error(const struct stream_probe *sp)
{
	return sp ? sp->err : 0;
}

/* One line, whole, now: a reader following the file sees complete lines only. */
static void emit(struct stream_probe *sp, const char *line)
{
	size_t len = strlen(line), off = 0;

	while (off < len) {
		ssize_t w = write(sp->fd, line + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			sp->err = w < 0 ? -errno : -EIO;
			fprintf(stderr,
				"tsarun: cannot write the interval stream '%s': %s; streaming "
				"stopped\n",
				sp->name, strerror(-sp->err));
			return;
		}
		off += (size_t)w;
	}
}

/* Make, write and free one interval from the accounts given (none without a source). */
static void interval(struct stream_probe *sp, const struct thread_acct *a, size_t n, int64_t end_ns,
		     bool last)
{
	struct run *r = sp->r;
	struct stream_interval iv = {
	    .run = (uint32_t)r->index,
	    .warmup = r->warmup,
	    .last = last,
	    .start_ns = sp->last_end,
	    .end_ns = end_ns > sp->last_end ? end_ns : sp->last_end,
	    .root_pid = r->root_pid,
	    .sources = r->quality.sources,
	    .nsources = r->quality.nsources,
	};
	char *line;
	int ret;

	iv.source = sp->src == SRC_EBPF ? "ebpf" : sp->src == SRC_PROCFS ? "procfs" : NULL;
	iv.no_threads_reason = no_source_reason;
	iv.lost_records = -1;
	if (sp->src == SRC_EBPF) {
		uint64_t drops = sched_probe__counter(sp->sched, TSA_C_RB_DROPS);

		iv.lost_records = (int64_t)(drops - sp->drops);
		sp->drops = drops;
	}
	if (sp->src == SRC_PROCFS)
		iv.source_unmeasured = ACCT_NO_SWITCHES | ACCT_NO_WAKEUPS;
	ret = stream__interval(sp->st, a, iv.source ? n : 0, &iv);
	line = ret ? NULL : stream_json_line(&iv);
	if (line)
		emit(sp, line);
	else if (!sp->err)
		run__note(r, "stream: an interval was lost: out of memory");
	free(line);
	stream_interval__free(&iv);
	sp->last_end = iv.end_ns;
}

static int st_arm(struct probe *pr, const struct spawn *child, struct run *r)
{
	struct stream_probe *sp = pr->ctx;

	(void)child;
	stream__reset(sp->st);
	sp->r = r;
	sp->last_end = 0;
	sp->recs_seen = 0;
	/* The probes before this one are armed: which one's threads are streamed. */
	if (sp->sched && run_source_active(r, "ebpf"))
		sp->src = SRC_EBPF;
	else if (sp->proc && run_source_active(r, "procfs"))
		sp->src = SRC_PROCFS;
	else
		sp->src = SRC_NONE;
	if (sp->src == SRC_EBPF)
		sp->drops = sched_probe__counter(sp->sched, TSA_C_RB_DROPS);
	return 0;
}

static int st_tick(struct probe *pr, uint64_t now)
{
	struct stream_probe *sp = pr->ctx;
	const struct thread_acct *recs;
	size_t nsnap = 0, nrecs = 0, n = 0;
	int64_t end;
	int ret = 0;

	if (!sp->r || sp->err)
		return 0;
	end = (int64_t)(now - sp->r->start_mono_ns);
	if (sp->src == SRC_EBPF) {
		/*
		 * Snapshots first, then the exit records: a thread that exits
		 * between the two has both, and its exit record (given first)
		 * counts, so that no thread's end slips to the next interval.
		 */
		ret = sched_probe__snapshot(sp->sched, &sp->snap, &sp->snap_cap, &nsnap);
		sched_probe__drain(sp->sched);
		recs = sched_probe__records(sp->sched, &nrecs);
		if (!ret && nrecs < sp->recs_seen)
			ret = -EINVAL; /* the records were taken: not this run's */
		n = nrecs - sp->recs_seen + nsnap;
		if (!ret && n > sp->all_cap) {
			struct thread_acct *a = realloc(sp->all, n * sizeof(*a));

			if (a) {
				sp->all = a;
				sp->all_cap = n;
			} else {
				ret = -ENOMEM;
			}
		}
		if (!ret) {
			/* (No memcpy from an array not allocated yet, even of nothing.) */
			if (nrecs > sp->recs_seen)
				memcpy(sp->all, recs + sp->recs_seen,
				       (nrecs - sp->recs_seen) * sizeof(*recs));
			if (nsnap)
				memcpy(sp->all + nrecs - sp->recs_seen, sp->snap,
				       nsnap * sizeof(*recs));
			sp->recs_seen = nrecs;
		}
	} else if (sp->src == SRC_PROCFS) {
		ret = proc_probe__accounts(sp->proc, sp->r->start_mono_ns, &sp->all, &sp->all_cap,
					   &n);
	}
	if (ret) {
		/* The interval is skipped: the next one covers its time (it starts where this did). */
		run__note(sp->r, "stream: cannot read the threads at an interval: %s",
			  strerror(-ret));
	} else {
		/* The snapshots are taken a moment after the tick: the interval ends with them. */
		for (size_t i = 0; i < n; i++)
			if (sp->all[i].end_ns > end)
				end = sp->all[i].end_ns;
		interval(sp, sp->all, n, end, false);
	}
	return 0;
}

/* After every other source: the run's threads as the artifact has them. */
static int st_collect(struct probe *pr, struct run *r)
{
	struct stream_probe *sp = pr->ctx;
	int64_t end = sp->last_end;

	if (sp->r != r || sp->err) {
		sp->r = NULL;
		return 0;
	}
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].end_ns > end)
			end = r->threads[i].end_ns;
	interval(sp, r->threads, r->nthreads, end, true);
	sp->r = NULL;
	return 0;
}

void stream_probe__as_probe(struct stream_probe *sp, struct probe *out)
{
	memset(out, 0, sizeof(*out));
	out->name = "stream";
	out->ctx = sp;
	out->arm = st_arm;
	out->tick_ns = sp->interval_ns;
	out->on_tick = st_tick;
	out->collect = st_collect;
}
