/* SPDX-License-Identifier: MIT */
/*
 * The report on stderr: a summary of the run, then per-process and
 * per-thread accounting, the concurrency view and a quality line. Thousands
 * of threads still make a readable table: the top rows are shown and the
 * rest folded into one line that points to the artifact.
 */
#ifndef TSARUN_TABLE_H
#define TSARUN_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct run;

enum sort_key {
	SORT_WALL = 0, /* lifetime (share of the run's wall time), ties by on-CPU */
	SORT_CPU,
	SORT_RUNQ,
	SORT_SLEEP,
	SORT_DISK,
	SORT_OFFCPU, /* S + D + stopped */
	SORT_SWITCHES,
	SORT_WAKEUP_LAT,
	SORT_TID,
};

struct table_opts {
	enum sort_key sort;
	int top; /* thread rows before folding */
	bool color;
	const char *command;	 /* argv[0], for the summary line */
	const char *artifact;	 /* where the full detail went, or NULL */
	bool artifact_keeps_old; /* the artifact it replaces stays as ARTIFACT.old */
	size_t width;		 /* the terminal's columns to fit (0: no limit, every column) */
};

void table_print(FILE *f, const struct run *r, const struct table_opts *o);

struct thread_acct;
/* The value a sort key orders a thread by: larger first (tid: its negation). */
double sort_key_thread(const struct thread_acct *t, enum sort_key k);

/* The indexes of r's threads in the table's order for k (malloc'd; NULL when out of memory). */
size_t *table_thread_order(const struct run *r, enum sort_key k);

/* What a sort key orders by, for a heading: "lifetime", "on-CPU time", ... */
const char *sort_key_label(enum sort_key k);

/* Durations for people: "1.234 s", "12.3 ms", "456 us", "789 ns", "0". */
const char *fmt_dur(uint64_t ns, char *buf, unsigned long len);

/* Milliseconds for a table column, precision by magnitude: "1234.5", "12.34", "0.123". */
const char *fmt_ms(uint64_t ns, char *buf, unsigned long len);

#endif /* TSARUN_TABLE_H */
