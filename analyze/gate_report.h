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

#include "table.h"

struct comparison;
struct run;
struct session;

/*
 * The summary of a series, one line per metric: median, mean, stddev, cv,
 * min, max and outliers over the measured runs that completed; a metric
 * that was not measured says why.
 */
void gate_report_runs(FILE *f, const struct run *runs, size_t n, bool color);

/*
 * The comparison: one line per gated metric with the baseline and new
 * medians, the change with its interval, the threshold and the verdict;
 * then the outcome and the notes. `command` names what was measured.
 */
void gate_report_comparison(FILE *f, const struct comparison *c, const char *command, bool color);

/* "fail: cpu +25.0% [+24.6%, +25.4%] is over the +10% threshold": the one-line gist. */
void gate_report_headline(const struct comparison *c, char *buf, size_t len);

/*
 * The comparison as Markdown: a heading with the outcome, a table, the
 * gist and the notes (for $GITHUB_STEP_SUMMARY and --markdown). Text that
 * comes from outside (the command, file names, CPU models) is escaped.
 */
void gate_report_markdown(FILE *f, const struct comparison *c, const char *command);

/*
 * The comparison as JUnit XML (--junit): one test case per gated metric,
 * with a failure element when its outcome is fail, and the warning in
 * system-out when it is a warning.
 */
void gate_report_junit(FILE *f, const struct comparison *c, const char *command);

/*
 * GitHub Actions workflow commands: ::error for a failing metric,
 * ::warning for a warning and for each note that is not a restatement,
 * ::notice for an improvement. A handful at most (one per gated metric and
 * note), escaped as the runner requires. Returns how many were written.
 */
int gate_report_annotations(FILE *f, const struct comparison *c, const char *command);

/*
 * A stored session as Markdown (tsarun report --format markdown): the
 * command and its status, the summary per metric, the `top` threads of
 * the last run by lifetime, and the comparison when there is one.
 */
void gate_report_session_markdown(FILE *f, const struct session *s, int top, enum sort_key sort);

#endif /* TSARUN_GATE_REPORT_H */
