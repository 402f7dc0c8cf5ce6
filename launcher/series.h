/* SPDX-License-Identifier: MIT */
/*
 * A series of runs: warmups, then measured runs, and in paired mode
 * (--baseline-cmd) the baseline command's runs interleaved with them. Each
 * run goes through supervise_run() with every probe armed for it, exactly
 * as a single run is.
 *
 * Memory: the last run of each side keeps its thread and process detail;
 * every earlier run keeps its totals, rusage and quality and drops the rest
 * (run__free_detail) as soon as the next run of its side has started, so a
 * series holds at most one run's threads per side however many runs it has.
 *
 * A run that cannot start, fails (non-zero exit, killed by a signal) or is
 * interrupted ends the series; `stopped` says which one.
 */
#ifndef TSARUN_SERIES_H
#define TSARUN_SERIES_H

#include <stdbool.h>
#include <stddef.h>

struct probeset;
struct run;
struct supervisor;

enum series_side {
	SERIES_NEW = 0,	 /* the command */
	SERIES_BASE = 1, /* the baseline command (paired mode) */
};

struct series {
	struct supervisor *sv[2]; /* sv[SERIES_BASE] is NULL unless paired */
	const struct probeset *ps;
	bool verbose;
	bool quiet;
	/*
	 * A progress line on stderr, a terminal (never in a pipe or a log):
	 * the run under way, the estimate so far and the time left, rewritten
	 * in place before each run and cleared when series_run() returns. The
	 * gate, adding runs, says why in `added_why` and up to what in
	 * `max_runs`.
	 */
	bool progress;
	bool progress_shown; /* a line is on the terminal, to be cleared */
	char added_why[160];
	unsigned max_runs;

	struct run *runs[2]; /* owned until handed to a session */
	size_t n[2], cap[2];
	unsigned measured[2];
	unsigned planned; /* runs series_run() was asked for, warmups included */

	bool stopped;
	int stop_side;
	size_t stop_index; /* runs[stop_side][stop_index] ended the series */
};

/*
 * Run `warmup` warmups and then `n` measured runs (pairs in paired mode:
 * ABBA order, the baseline first in even pairs, so drift and order effects
 * hit both sides alike). Stops early when a run ends the series. Returns 0,
 * or -errno with a message in err when tsarun itself failed.
 */
int series_run(struct series *se, unsigned warmup, unsigned n, char *err, size_t errlen);

/* Free every run of both sides. */
void series__free(struct series *se);

#endif /* TSARUN_SERIES_H */
