/* SPDX-License-Identifier: MIT */
/*
 * Differential flame graphs of a comparison: the baseline's runs and the
 * new runs, each side's stacks (runs[].parts, parts.h) averaged per run, as
 * a folded diff (FlameGraph's difffolded.pl format: "frames BASE NEW", in
 * nanoseconds per run) and as an SVG that colours what grew and what
 * shrank (flame.h, flame__add_diff). Stacks are rooted at the thread's
 * stable name, its process path split into frames, so the same thread
 * meets itself across runs and sides. Views: off-CPU (sleeping and
 * uninterruptible stacks, under "[S]"/"[D]"), on-CPU (sampled stacks,
 * their time spread over the thread's on-CPU time), wall (both, and
 * everything else of the threads' lives). Pure: writes to a FILE.
 */
#ifndef TSARUN_FLAMEDIFF_H
#define TSARUN_FLAMEDIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct run;

enum flamediff_view {
	FLAMEDIFF_OFFCPU = 0,
	FLAMEDIFF_ONCPU,
	FLAMEDIFF_WALL,
	FLAMEDIFF_NVIEWS,
};

/* "offcpu", "oncpu", "wall" */
const char *flamediff_view_name(enum flamediff_view v);

/*
 * Can the two sides be drawn: every run that counts, on both sides, has
 * stack parts? Returns 0, or -ENODATA with the reason.
 */
int flamediff_check(const struct run *b, size_t nb, const struct run *n, size_t nn, char *why,
		    size_t whylen);

enum flamediff_format {
	FLAMEDIFF_FOLDED = 0, /* "frames BASE NEW" lines */
	FLAMEDIFF_SVG,	      /* the graph, titled for command */
	FLAMEDIFF_JSON,	      /* the graph as data for a page (flame__write_json) */
};

/* Write the view in format fmt. Returns 0 or -errno (-ENODATA: a side has no run that counts). */
int flamediff_write(FILE *f, const struct run *b, size_t nb, const struct run *n, size_t nn,
		    enum flamediff_view v, enum flamediff_format fmt, const char *command);

#endif /* TSARUN_FLAMEDIFF_H */
