/* SPDX-License-Identifier: MIT */
/*
 * The regression gate around a series of runs: the baseline is read (an
 * earlier artifact) or prepared (a command run alongside) and checked
 * before the command runs, so bad input costs no run; after the runs, the
 * comparison is made and runs are added while it is inconclusive.
 */
#ifndef TSARUN_GATING_H
#define TSARUN_GATING_H

#include <stdbool.h>
#include <stddef.h>
#include <wordexp.h>

#include "gate.h"
#include "run.h"

struct probeset;
struct series;

/* What the gate was given: --baseline or --baseline-cmd, and its spec. */
struct gating_opts {
	const char *baseline_path;    /* --baseline FILE, or NULL */
	const char *baseline_cmd;     /* --baseline-cmd CMD, or NULL */
	const struct gate_spec *spec; /* --fail-over, --metric, --max-runs, --inconclusive */
	bool bash;		      /* the run is a --bash profile */
	int verbose;
};

struct gating {
	struct gating_opts o;
	struct session base; /* --baseline: the artifact read back */
	struct gate_side bside;
	bool have_bside;
	/* --baseline-cmd: its argv, split like a shell would, or run by /bin/sh -c */
	wordexp_t we;
	bool have_we;
	char *sh_argv[4];
	char *const *base_argv;
	int base_argc;
	struct comparison cmp;
	bool compared;
	/* --baseline's bytes, read before the run, parsed confined */
	char *base_text;
	size_t base_len;
};

/*
 * Before anything runs: read the baseline (with the rights of the user
 * tsarun works for, never blocking on what is not a file or a pipe), or
 * split the baseline command. Returns 0, or -errno with a message (exit 125).
 */
int gating__prepare(struct gating *g, const struct gating_opts *o, char *err, size_t errlen);

/*
 * Parse and check the baseline read by gating__prepare(): the baseline is
 * a file anyone may have written, so this runs once the supervisor is
 * confined (sandbox.h) and before the command is released, so that a bad
 * baseline still costs no run. Returns 0, or -errno with a message.
 */
int gating__parse(struct gating *g, char *err, size_t errlen);

/* Can this machine measure every gated metric? Returns 0 or -ENODATA with a message. */
int gating__check_machine(const struct gating *g, const struct probeset *ps, char *err,
			  size_t errlen);

/*
 * After the series: compare, and while a metric is inconclusive and more
 * runs could settle it, run one more (a pair in paired mode) up to
 * --max-runs. s holds the new runs (and receives the paired baseline's).
 * Returns 0 (g->compared says whether a comparison was made: not when the
 * series was stopped by a failing run), or -errno with a message.
 */
int gating__run(struct gating *g, struct series *se, struct session *s, char *err, size_t errlen);

void gating__free(struct gating *g);

#endif /* TSARUN_GATING_H */
