/* SPDX-License-Identifier: MIT */
/*
 * Reports of a series of runs and of the gate: the per-metric summary of
 * the runs and the comparison table on stderr. Pure: writes to the FILE it
 * is given.
 */
#ifndef TSARUN_GATE_REPORT_H
#define TSARUN_GATE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct run;

/*
 * The summary of a series, one line per metric: median, mean, stddev, cv,
 * min, max and outliers over the measured runs that completed; a metric
 * that was not measured says why.
 */
void gate_report_runs(FILE *f, const struct run *runs, size_t n, bool color);

#endif /* TSARUN_GATE_REPORT_H */
