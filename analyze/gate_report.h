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

#include "metrics.h"
#include "table.h"

struct comparison;
struct run;
struct session;

/*
 * The summary of a series, one line per metric: median, mean, stddev, cv,
 * min, max and outliers over the measured runs that completed; a metric
 * that was not measured says why. Width: the terminal's columns, to fit
 * (termwrap.h; 0: no limit).
 */
void gate_report_runs(FILE *f, const struct run *runs, size_t n, bool color, size_t width);

/*
 * The comparison: one line per gated metric with the baseline and new
 * medians, the change with its interval, the threshold and the verdict;
 * then the outcome and the notes. `command` names what was measured. Both
 * fit `width` columns as the thread table does (0: every column).
 */
void gate_report_comparison(FILE *f, const struct comparison *c, const char *command, bool color,
			    size_t width);

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

/*
 * Where the change came from (explain.h; explain_report.c), after the
 * verdict: for each explained metric that failed or warned, or that has a
 * part beyond noise, its top parts at the finest level both sides allow,
 * then by thread and by process, with what is within noise and the
 * remainder. Markdown: the same as tables.
 */
void gate_report_explain(FILE *f, const struct comparison *c, bool color);
void gate_report_explain_markdown(FILE *f, const struct comparison *c);

/*
 * "Where it moved (cpu +10.2 ms per run): +10.1 ms (99%) thread ...; ...": the
 * top three parts of metric m, for an annotation or a JUnit message ("" when
 * it was not explained).
 */
const char *gate_report_explain_gist(const struct comparison *c, enum metric_id m, char *buf,
				     size_t len);

#endif /* TSARUN_GATE_REPORT_H */
