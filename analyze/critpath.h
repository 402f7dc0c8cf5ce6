/* SPDX-License-Identifier: MIT */
/*
 * The critical path (--critical-path, and --timeline): the chain of
 * threads, states and outside wakers that the command's wall time waited
 * for, found by walking back from the command's end along the timeline.
 *
 * While the thread on the path runs, the path is that thread on a CPU;
 * while it waits in the runqueue, it is that thread waiting for a CPU;
 * while it is blocked, the path jumps to whoever woke it, at the wakeup's
 * time, and goes on back from there. A waker outside the tree (an
 * interrupt: a timer, a block I/O completion; a kernel thread; another
 * process) ends the jump: the blocked time is a segment named for it, and
 * the path goes on in the sleeper before it slept. A thread's beginning is
 * an edge to the thread that created it, at its creation; an exit that
 * wakes a parent in wait() or a joiner is the exiting thread's wakeup. The
 * segments cover the run from its start to its end, so they sum to the
 * wall time exactly; where the timeline cannot say (an interval lost, a
 * wakeup not recorded), the segment says so (CP_UNKNOWN) instead.
 *
 * Pure logic over struct run (its threads and timeline): no I/O but the
 * printer's FILE. The result is owned by the run (run.critpath).
 */
#ifndef TSARUN_CRITPATH_H
#define TSARUN_CRITPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tsarun.h"

struct run;

enum cp_kind {
	CP_ONCPU = 0, /* the thread on a CPU */
	CP_RUNQ,      /* the thread waiting for a CPU */
	CP_BLOCKED,   /* the thread blocked on something outside the tree: what names it */
	CP_OUTSIDE,   /* before the command's first event or after its end: tsarun itself */
	CP_UNKNOWN,   /* the timeline cannot say: what says why */
	CP_NKINDS,
};

#define CP_WHAT_LEN 48

struct cp_segment {
	int64_t start_ns; /* from the run's start */
	uint64_t dur_ns;
	uint32_t tid; /* the thread on the path (0: none, CP_OUTSIDE) */
	uint32_t pid;
	uint8_t kind; /* enum cp_kind */
	int8_t state; /* CP_BLOCKED: TSA_ST_SLEEP, _DISK or _STOPPED; else -1 */
	bool woke;    /* the segment ends in this thread's wakeup of next_tid (an edge) */
	uint32_t next_tid;
	uint32_t group; /* index into groups[] */
	char comm[TSA_COMM_LEN];
	char what[CP_WHAT_LEN]; /* CP_BLOCKED: the waker; CP_UNKNOWN, CP_OUTSIDE: why */
};

/* The path's time by thread, kind and waker: what the wall time would lose at most without it. */
struct cp_group {
	uint32_t tid;
	uint32_t pid;
	uint8_t kind;
	int8_t state;
	char comm[TSA_COMM_LEN];
	char what[CP_WHAT_LEN];
	uint64_t total_ns; /* also the what-if bound: the wall time drops by at most this */
	uint64_t segments;
	uint32_t order; /* (while summarizing) */
};

struct run_critpath {
	struct cp_segment *seg; /* in time order, covering [0, wall_ns] */
	size_t nseg;
	struct cp_group *groups; /* by total_ns, descending */
	size_t ngroups;
	uint64_t wall_ns;
	uint64_t jumps;	     /* wakeup and creation edges followed */
	uint64_t unknown_ns; /* the CP_UNKNOWN segments' time */
	bool complete;	     /* the timeline was complete and every jump had its waker */
};

/* "on-CPU", "runqueue", "blocked", "outside", "unknown"; the artifact's names. */
const char *critpath_kind_name(unsigned kind);
int critpath_kind_from_name(const char *name);

/*
 * Walk r's timeline back from r's end and give r its critical path
 * (r->critpath). 0; -ENOENT when r has no timeline; -ENOMEM.
 */
int critpath_compute(struct run *r);

/* Groups from the segments (the artifact reader rebuilds them so). 0 or -ENOMEM. */
int critpath_summarize(struct run_critpath *cp);

void critpath__free(struct run_critpath *cp);

/* A group's label: "worker-2 (1235) on-CPU", "block I/O completion (dd 1240, D)". */
void critpath_group_label(const struct cp_group *g, char *buf, size_t len);

/*
 * The terminal's part, after the table: the top groups and their what-if
 * bounds, within width columns.
 */
void critpath_print(FILE *f, const struct run_critpath *cp, int width);

/* The path as a folded profile (thread;state;what ns), for the flame graph. */
int critpath_write_folded(FILE *f, const struct run_critpath *cp);

struct flame;
/* The same into a flame graph (flame.h). 0 or -ENOMEM. */
int critpath_flame(struct flame *fl, const struct run_critpath *cp);

#endif /* TSARUN_CRITPATH_H */
