/* SPDX-License-Identifier: MIT */
/*
 * Where a change came from: a comparison's difference between the baseline
 * and the new runs, metric by metric, broken into parts (parts.h) that are
 * matched across runs and sides by their stable names, never by pid.
 * Pure: takes runs (with their parts) and the gate's figures, gives parts.
 *
 * For a metric, each part's change is the difference of its medians over
 * the runs that count (metric_run_counts), new less baseline, per run; the
 * total is the metric's own difference of medians. Levels:
 *   process  the process's time in the metric's states, its threads summed;
 *   thread   a thread's time in one state;
 *   stack    a thread's time in one state at one stack (on-CPU samples
 *            spread over its on-CPU time, off-CPU stacks with their time),
 *            when every run on both sides has stacks;
 *   bash     a bash command's own time (wall, or CPU for the CPU metrics),
 *            when every run on both sides was profiled with --bash.
 * The metric decides which time: cpu and on_cpu the threads' on-CPU time,
 * runqueue their runqueue time, blocked S + D, uninterruptible D, and wall
 * the life of the command's first thread (the thread whose end ends the
 * wall time) in every state: a wait for another thread or process is its
 * sleep at that wait's stack. Counts, RSS and instructions are not split.
 *
 * Noise: with at least EXPLAIN_MIN_RUNS runs a side, a part is tested when
 * its change is at least the floor (a tenth of the metric's threshold, of
 * the baseline median: 1% at the default 10%) and, at the stack level, its
 * thread's state is blamed. It is blamed when, at a level of significance
 * (1% unless told otherwise: EXPLAIN_CONFIDENCE) divided by the number of
 * parts at its level that moved at all (Bonferroni:
 * any of them could have been the one past the floor), both a
 * rank-sum test of its values run by run (stats_rank_sum_p) rejects "no
 * change" and its percentile bootstrap interval of that difference lies
 * wholly beyond the floor, not only beyond zero (the gate's generator and
 * seed): the bootstrap alone is too narrow with a handful of runs, the
 * permutation test is exact whatever the distribution, and a part whose
 * interval reaches back inside the floor may have moved by less than the
 * floor, which is no cause. An unchanged command is then blamed far less
 * often than the level says: its parts must move by the floor first.
 * A stack part splits a blamed thread's state: its interval is corrected
 * for every stack below blamed states that moved, its rank-sum test only for
 * the stacks of its thread's state past the floor (the thread's own test
 * stands for the rest: corrected for every stack, a rank-sum test of five
 * runs a side could reject nothing).
 * Every other part is "within noise", summed, never a cause. The remainder is what the parts do not hold: the total less the
 * sum of every part's change (medians do not add; for cpu, rusage's CPU
 * time that no thread's CPU time (on-CPU less steal) holds; for wall, the time outside the
 * first thread's life). Shares are of the total, so blamed parts, the noise
 * and the remainder sum to 100%.
 *
 * Ownership: an explain owns its strings; explain__free() accepts NULL.
 */
#ifndef TSARUN_EXPLAIN_H
#define TSARUN_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

struct run;

#define EXPLAIN_MIN_RUNS   3
/*
 * A part is blamed at a level of 1%, before the correction: a comparison
 * looks at many parts, and 20 comparisons of identical runs must blame none.
 */
#define EXPLAIN_CONFIDENCE 0.99
#define EXPLAIN_RESAMPLES  4000
#define EXPLAIN_WHY_LEN	   192

enum explain_level {
	EXPLAIN_PROCESS = 0,
	EXPLAIN_THREAD,
	EXPLAIN_STACK,
	EXPLAIN_BASH,
	EXPLAIN_NLEVELS,
};

struct explain_part {
	char *thread;	  /* process: its path; thread, stack: the thread's name; bash: NULL */
	char *stack;	  /* stack: folded frames, root first; bash: the command's path */
	int state;	  /* TSA_ST_* or PARTS_ST_RESIDUAL; -1 for process and bash parts */
	double base, new; /* medians per run, ns */
	double delta;	  /* new - base */
	double low, high; /* its interval; NAN when not tested (below the floor, few runs) */
	double p;	  /* rank-sum test of the change; NAN when not tested */
	double share;	  /* delta / total; NAN when the total is 0 */
	bool blamed;	  /* beyond its noise */
};

struct explain_levelset {
	bool available;
	char why[EXPLAIN_WHY_LEN];  /* when not */
	struct explain_part *parts; /* blamed first, then by change in the total's direction */
	size_t nparts;
	size_t nblamed;
	double blamed_ns;    /* sum of the blamed parts' changes */
	double noise_ns;     /* sum of the others' */
	size_t nnoise;	     /* parts within noise that changed at all */
	double remainder_ns; /* total - sum of every part's change */
	double confidence;   /* of each part's interval (corrected) */
	size_t tested;	     /* parts at or above the floor, given an interval */
	size_t compared;     /* parts that moved at all: what the confidence is corrected for */
};

struct explain_metric {
	enum metric_id metric;
	bool available;
	char why[EXPLAIN_WHY_LEN];
	char scope[EXPLAIN_WHY_LEN]; /* "on-CPU time of every thread", ... */
	char *root;		     /* wall: the first thread's name */
	size_t nb, nn;
	double base_median, new_median, total; /* the metric, per run */
	double floor_ns;
	bool judged; /* enough runs a side to tell a part from noise */
	struct explain_levelset level[EXPLAIN_NLEVELS];
};

struct explain {
	struct explain_metric m[METRIC_NR];
	int n;
	double confidence; /* before correction */
	unsigned resamples;
	uint64_t seed;
};

struct explain_opts {
	bool want[METRIC_NR];	     /* metrics to explain */
	double threshold[METRIC_NR]; /* their thresholds (fractions) */
	double confidence;	     /* default EXPLAIN_CONFIDENCE */
	uint64_t seed;		     /* default STATS_SEED */
	unsigned resamples;	     /* default EXPLAIN_RESAMPLES */
};

/*
 * Explain the difference between runs b[0..nb) and n[0..nn) (the runs
 * that count are picked out). Returns a new explain, or NULL with errno
 * (ENOMEM). A metric that cannot be explained is there, unavailable with
 * the reason.
 */
struct explain *explain_compare(const struct run *b, size_t nb, const struct run *n, size_t nn,
				const struct explain_opts *o);
struct explain *explain__new(void);
void explain__free(struct explain *e);

/* The metric's explanation, or NULL. */
const struct explain_metric *explain_find(const struct explain *e, enum metric_id m);

/*
 * The finest level worth leading with: bash, else stack, else thread
 * (-1: none available).
 */
int explain_lead_level(const struct explain_metric *em);

const char *explain_level_name(enum explain_level l);

/*
 * One part for people, on one line: "thread worker#2 in burn: on-CPU at
 * …;spin_more;spin_cpu_ms", "process burn/sh", "bash line 3: sleep 0.08".
 * Frames are shortened to the innermost few. Returns buf.
 */
const char *explain_part_label(const struct explain_part *p, enum explain_level l, char *buf,
			       size_t len);

/*
 * "+40.3 ms (97.8%) thread waiter in lock_wait: sleeping at ...": a part with its
 * change and share, for headlines, annotations and JUnit. Returns buf.
 */
const char *explain_part_line(const struct explain_metric *em, const struct explain_part *p,
			      enum explain_level l, char *buf, size_t len);

/*
 * The gist of a metric's explanation: its top blamed parts (at most top) at the
 * lead level, "; "-separated, or why there are none. Returns buf.
 */
const char *explain_gist(const struct explain_metric *em, int top, char *buf, size_t len);

/* What the parts of metric m do not hold, named ("remainder: ..."). */
const char *explain_remainder_name(enum metric_id m);

#endif /* TSARUN_EXPLAIN_H */
