/* SPDX-License-Identifier: MIT */
/*
 * The figures a series of runs is summarised and gated on, one value per
 * run each: their names (the artifact's `summary` keys and what --metric
 * and --fail-over accept), units, and where each comes from in a run.
 * Pure: reads a struct run, no I/O.
 */
#ifndef TSARUN_METRICS_H
#define TSARUN_METRICS_H

#include <stdbool.h>
#include <stddef.h>

struct run;

enum metric_id {
	METRIC_WALL = 0,	/* the command's wall time (release to its exit) */
	METRIC_CPU,		/* user + sys of the tree, from rusage */
	METRIC_ON_CPU,		/* the tree's on-CPU time (eBPF) */
	METRIC_RUNQUEUE,	/* time the tree's threads waited for a CPU (eBPF) */
	METRIC_BLOCKED,		/* sleeping (S) + uninterruptible (D) (eBPF) */
	METRIC_UNINTERRUPTIBLE, /* D (eBPF) */
	METRIC_VOLUNTARY,	/* voluntary context switches (eBPF) */
	METRIC_INVOLUNTARY,	/* involuntary context switches (eBPF) */
	METRIC_MAX_RSS,		/* largest max RSS of a process of the tree, KiB */
	METRIC_INSTRUCTIONS,	/* user-space instructions of the tree (PMU) */
	METRIC_NR,
};

enum metric_unit {
	UNIT_NS = 0,
	UNIT_COUNT,
	UNIT_KIB,
};

struct metric_def {
	const char *name; /* "wall", "cpu", ... */
	enum metric_unit unit;
	bool time; /* a time: a verdict on it depends on the machine */
};

const struct metric_def *metric_def(enum metric_id m);

/* The metric with that name, or -1. */
int metric_by_name(const char *name);

/* "wall, cpu, on_cpu, ...": for messages that list what is accepted. */
const char *metric_names(void);

/* "ns", "count", "KiB" */
const char *metric_unit_name(enum metric_unit u);

/*
 * The value of metric m in run r. Returns 0, or -ENODATA with the reason
 * in why (e.g. "ebpf unavailable: ..."): a figure that was not measured is
 * never 0.
 */
int metric_value(const struct run *r, enum metric_id m, double *v, char *why, size_t whylen);

/*
 * What the noise sentinel weighs in one run: the time its threads waited
 * for a CPU, the time the hypervisor stole from them, how many waits and
 * how much on-CPU time (eBPF). -ENODATA when not measured.
 */
struct metric_noise {
	double runq;	  /* runqueue wait, ns */
	double steal;	  /* steal time, ns */
	double wakes;	  /* wakeups timed to their switch-in */
	double wake_wait; /* the runqueue wait after them (wakeup latency), ns */
	double oncpu;	  /* on-CPU time, steal included, ns */
};
int metric_noise(const struct run *r, struct metric_noise *p);

struct stats_summary;

/* One metric summarised over a series. */
struct metric_summary {
	bool available; /* measured in every run that counts */
	char why[192];	/* when not */
	size_t n;
	double median, mean, stddev, cv, min, max, mad; /* see stats.h */
	size_t outliers;
};

/*
 * Summarise every metric over the runs of runs[0..n) that count
 * (metric_run_counts). Returns how many counted, or -ENOMEM.
 */
int metrics_summarize(const struct run *runs, size_t n, struct metric_summary out[METRIC_NR]);

/* A measured run that completed: not a warmup, exited with status 0. */
bool metric_run_counts(const struct run *r);

/* Is the named source active in the run? */
bool run_source_active(const struct run *r, const char *name);

#endif /* TSARUN_METRICS_H */
