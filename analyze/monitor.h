/* SPDX-License-Identifier: MIT */
/*
 * Monitor mode's pure side (tsarun -p PID): which threads an interval
 * shows, in what order, and how they print. Each interval is a set of
 * thread accounts (run.h) over the interval, made from procfs samples
 * (sampling.h) and taskstats queries.
 */
#ifndef TSARUN_MONITOR_H
#define TSARUN_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "table.h" /* enum sort_key */

struct thread_acct;
struct source_status;

/* One report: an interval, or (final) the whole attach. */
struct monitor_report {
	uint32_t pid;
	char comm[16];	  /* the process's */
	uint64_t index;	  /* 1, 2, ... (the final report: the number of intervals) */
	bool final;	  /* the whole attach, after Ctrl-C or the process's end */
	bool exited;	  /* the process ended */
	int64_t start_ns; /* since the attach */
	int64_t end_ns;
	uint64_t sample_ns;
	uint64_t samples;    /* scans in the report */
	uint64_t max_gap_ns; /* the largest gap between two scans */
	const struct source_status *sources;
	int nsources;
	const struct thread_acct *threads; /* every thread, shown or not */
	size_t nthreads;
	const size_t *shown; /* indices of the threads shown, in order */
	size_t nshown;
};

struct monitor_filter {
	uint32_t tid;	  /* 0: any */
	const char *comm; /* NULL: any */
	bool show_idle;
	enum sort_key sort;
};

/* --comm: a glob when the pattern has * ? or [, otherwise a substring. */
bool monitor_comm_match(const char *pattern, const char *comm);

/* A thread that did nothing: no CPU, no runqueue wait, only ever seen asleep (S). */
bool monitor_idle(const struct thread_acct *t);

/* Fill idx with the threads f shows, sorted; returns how many. */
size_t monitor_select(const struct monitor_filter *f, const struct thread_acct *threads, size_t n,
		      size_t *idx);

/* The table of one report (stderr in monitor mode). */
void monitor_print_table(FILE *out, const struct monitor_report *m, bool header);

/*
 * One report as one line of JSON (no newline inside, one at the end), in
 * a malloc'd string (analyze/artifact_monitor.c); NULL when out of memory.
 */
char *monitor_json_line(const struct monitor_report *m);

#endif /* TSARUN_MONITOR_H */
