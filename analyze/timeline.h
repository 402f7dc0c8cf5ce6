/* SPDX-License-Identifier: MIT */
/*
 * --timeline: every tracked thread's state intervals, in time order.
 *
 * The eBPF probe sends each interval when it closes, with the times the
 * thread's closing account adds up (bpf/sched.bpf.c, tl_interval()), so a
 * thread's intervals sum, state by state, to its account, less what the
 * ring buffer had no room for (thread_acct.tl_lost_ns). A timeline_builder
 * collects them during a run, keeping at most max_intervals (the rest is
 * counted, with the earliest end among them, and not kept); after the fold
 * timeline_attach() matches them to the run's threads by identity and hands
 * the run a struct run_timeline (run.timeline, owned by the run).
 *
 * Pure logic: no BPF, no I/O. Times in the run_timeline are relative to
 * the run's start, like every other point in time of the run.
 */
#ifndef TSARUN_TIMELINE_H
#define TSARUN_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tsarun.h"

struct run;

#define TIMELINE_MAX_DEFAULT	1000000ull   /* intervals kept per run (--timeline-max) */
#define TIMELINE_BUFFER_DEFAULT (8ull << 20) /* the ring buffer (--timeline-buffer) */
#define TIMELINE_NO_CPU		(-1)

struct tl_interval {
	int64_t start_ns; /* from the run's start */
	uint64_t dur_ns;
	uint16_t kind; /* enum tsa_tl_kind */
	int16_t cpu;   /* on-CPU intervals: the CPU; TIMELINE_NO_CPU otherwise */
};

/* A thread's name from at_ns on: when first seen, and after each exec. */
struct tl_name {
	int64_t at_ns;
	uint32_t execs; /* execs before this name */
	char comm[TSA_COMM_LEN];
};

/*
 * Who woke a thread that was asleep (S, D or stopped), or created it
 * (TSA_WKF_NEW), at at_ns: for the critical path (critpath.h).
 */
struct tl_wake {
	int64_t at_ns;
	uint64_t waker_task_start_ns; /* TSA_WK_TRACKED: the waker's identity, with waker_tid */
	uint32_t waker_tid;
	uint32_t waker_pid;
	uint8_t ctx;   /* enum tsa_wake_ctx */
	uint8_t flags; /* enum tsa_wake_flags */
	int16_t cpu;   /* the waker's */
	char comm[TSA_COMM_LEN];
	/* TSA_WKF_FRAMES: what the interrupt was, from its kernel frames ("" not known) */
	char irq[32];
};

/*
 * One thread's part, by identity (as the run's threads are matched: the
 * tid it had when tracking began, tid_before_exec when an exec changed it,
 * and its own start time), not by index: the threads may be reordered.
 */
struct tl_thread {
	uint32_t tid;
	uint64_t task_start_ns;
	size_t first, n;	   /* iv[first..first+n), in time order */
	size_t first_name, nnames; /* names[...], in time order */
	size_t first_wake, nwakes; /* wakes[...], in time order */
};

struct run_timeline {
	struct tl_thread *threads; /* sorted by (tid, task_start_ns) */
	size_t nthreads;
	struct tl_interval *iv;
	size_t n;
	struct tl_name *names;
	size_t nnames;
	struct tl_wake *wakes;
	size_t nwakes;
	uint64_t max_intervals; /* the bound */
	uint64_t buffer_bytes;	/* the kernel's ring buffer */
	uint64_t sent;		/* events the kernel sent (intervals and names) */
	uint64_t lost_events;	/* events the ring buffer had no room for */
	uint64_t lost_ns;	/* the time of the intervals among them */
	uint64_t beyond_bound;	/* intervals received past max_intervals: not kept */
	uint64_t beyond_bound_ns;
	int64_t truncated_at_ns; /* with beyond_bound: every interval that ended before is kept */
	uint64_t unmatched;	 /* intervals of no thread of the run (its record was lost) */
};

/* What the timeline says of itself: complete (every interval kept) or not. */
static inline bool timeline_complete(const struct run_timeline *t)
{
	return !t->lost_events && !t->beyond_bound && !t->unmatched;
}

/* The kind's name in the artifact and the trace ("on_cpu", "runqueue_wakeup", ...). */
const char *timeline_kind_name(unsigned kind);
/* The account state a kind adds to (TSA_ST_*). */
int timeline_kind_state(unsigned kind);

struct timeline_builder;

struct timeline_builder *timeline_builder__new(uint64_t max_intervals, uint64_t buffer_bytes);
void timeline_builder__free(struct timeline_builder *b);
/* Forget what was collected (a new run). */
void timeline_builder__reset(struct timeline_builder *b);
/* One event from the ring buffer (struct tsa_tl_event, or tsa_tl_name). 0 or -ENOMEM. */
int timeline_builder__add(struct timeline_builder *b, const void *data, size_t size);

/*
 * Match what b collected to r's threads (after the fold) and give r its
 * timeline; sent and lost_events are the kernel's counts for the run.
 * origin: CLOCK_MONOTONIC of the run's start. sym (or NULL: not named)
 * names the interrupts that woke threads from their kernel frames. b is
 * reset. 0 or -ENOMEM.
 */
struct symbolizer;
int timeline_attach(struct run *r, struct timeline_builder *b, uint64_t origin, uint64_t sent,
		    uint64_t lost_events, struct symbolizer *sym);
/* Whether b holds wakeups from interrupts, to be named by their frames. */
bool timeline_builder__has_irq_wakes(const struct timeline_builder *b);
/*
 * What an interrupt was, from its kernel frames (innermost first, named
 * "func_[k]" or "func"): "timer", "block I/O completion", "network",
 * "softirq", "interrupt". Pure, for tests.
 */
const char *timeline_irq_name(const char *const *frames, size_t n, bool iowait);

void timeline__free(struct run_timeline *t);

struct thread_acct;
/* A thread's part of the timeline (NULL: none). */
const struct tl_thread *timeline_thread(const struct run_timeline *t, const struct thread_acct *th);

#endif /* TSARUN_TIMELINE_H */
