/* SPDX-License-Identifier: MIT */
/*
 * Interval streaming of a command's run (--interval DUR, --stream FILE):
 * every DUR, where each thread's time went in that interval. Pure: the
 * caller reads the threads' running accounts (struct thread_acct, each
 * cumulative from the thread's start: eBPF snapshots and exit records, or
 * procfs accounts) and this module keeps, per thread, what it reported so
 * far, and makes the differences.
 *
 * The intervals of a thread telescope: its figures summed over every
 * interval are the last account given for it, exactly, because each
 * interval reports the account minus what was reported before. When the
 * last interval is made from the run's folded threads (the artifact's
 * closing account), the stream sums to the artifact. A later account can
 * move time from one state to another that an earlier read had put
 * elsewhere (a wakeup the kernel stamped a few microseconds before the
 * read that still saw the thread asleep): the later interval then holds a
 * negative correction, so figures are signed.
 *
 * Ownership: a stream owns its table of threads; an interval owns its
 * threads[] and procs[] (stream_interval__free()).
 */
#ifndef TSARUN_STREAM_H
#define TSARUN_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tsarun.h"

struct thread_acct;
struct source_status;

/* What changed in an interval, for a thread, a process or the whole tree. */
struct stream_figures {
	int64_t lifetime_ns; /* the part of its life in the interval */
	int64_t state_ns[TSA_ST_NR];
	int64_t residual_ns;
	int64_t slices;
	int64_t voluntary;
	int64_t involuntary;
	int64_t wakeups;
	uint32_t unmeasured; /* enum acct_unmeasured: written as null */
};

struct stream_thread {
	uint32_t tid;
	uint32_t pid;
	char comm[TSA_COMM_LEN];
	bool alive;	  /* alive at the interval's end (else it ended in it) */
	bool born;	  /* it started in the interval */
	int64_t start_ns; /* its start and (ended) its end, from the run's start */
	int64_t end_ns;
	struct stream_figures f;
};

struct stream_proc {
	uint32_t pid;
	char comm[TSA_COMM_LEN];
	uint32_t threads; /* threads in the interval */
	struct stream_figures f;
};

struct stream_interval {
	uint32_t run; /* the run's index, and whether it is a warmup */
	bool warmup;
	uint64_t index; /* 1, 2, ... */
	bool last;	/* closed by the run's end: made from its closing account */
	int64_t start_ns;
	int64_t end_ns;
	uint32_t root_pid;
	const char *source; /* where the threads' figures come from: "ebpf", "procfs", NULL: none */
	const char *no_threads_reason; /* source NULL: why no thread can be reported */
	uint32_t source_unmeasured;    /* what the source never measures (enum acct_unmeasured) */
	int64_t lost_records;	       /* exit records lost in the interval; -1: not known (null) */
	uint64_t dropped_lines; /* lines dropped since the line before (the writer's backlog) */
	const struct source_status *sources;
	int nsources;
	struct stream_thread *threads;
	size_t nthreads;
	struct stream_proc *procs;
	size_t nprocs;
	struct stream_figures totals;
	uint32_t threads_born;
	uint32_t threads_ended;
};

struct stream;

struct stream *stream__new(void);
void stream__free(struct stream *s);

/* A new run: nothing reported yet; intervals numbered from 1 again. */
void stream__reset(struct stream *s);

/*
 * One interval from the threads' running accounts (times relative to the
 * run's start). Threads not given keep what was reported of them; a
 * thread given again after an account of its end (not alive) that brings
 * nothing new is left out; a thread given twice in one read counts with
 * its first account (give exit records before snapshots). iv's header fields (run, sources, source,
 * start_ns, end_ns, last, ...) are the caller's; this fills index,
 * threads, procs and totals. Returns 0 or -ENOMEM.
 */
int stream__interval(struct stream *s, const struct thread_acct *acct, size_t n,
		     struct stream_interval *iv);

void stream_interval__free(struct stream_interval *iv);

/*
 * One interval as one line of JSON ending in a newline, in a malloc'd
 * string (analyze/artifact_stream.c); NULL when out of memory. The format
 * is doc/tsarun-stream.schema.json.
 */
char *stream_json_line(const struct stream_interval *iv);

#endif /* TSARUN_STREAM_H */
