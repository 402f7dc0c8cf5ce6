/* SPDX-License-Identifier: MIT */
/*
 * Exports for other tools, from a session (live or read back from its
 * artifact): the per-thread table and the runs as CSV (RFC 4180, times in
 * integer nanoseconds as in the artifact, an empty cell where the source
 * measured nothing), and the runs in hyperfine's --export-json layout
 * ("results": command, mean, stddev, median, user, system, min, max in
 * seconds, times, exit_codes) for the scripts hyperfine users already have.
 * Each returns 0, or -EIO when the stream failed.
 */
#ifndef TSARUN_EXPORT_H
#define TSARUN_EXPORT_H

#include <stdio.h>

struct run;
struct session;

/* One row per thread of r (its last run's detail), as the table has them. */
int export_threads_csv(FILE *f, const struct run *r);

/* One row per run, warmups included (marked), the baseline command's in paired mode. */
int export_runs_csv(FILE *f, const struct session *s);

/* hyperfine's layout: a result for the command, and one for the baseline command if paired. */
int export_hyperfine_json(FILE *f, const struct session *s);

#endif /* TSARUN_EXPORT_H */
