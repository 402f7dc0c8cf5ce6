/* SPDX-License-Identifier: MIT */
/*
 * The regression gate: what is gated (--metric, --fail-over), and the
 * comparison of a baseline series of runs with a new one, metric by metric.
 * Pure: takes runs and host facts, gives verdicts and notes; the launcher
 * decides when to add runs, the renderers (gate_report.h) print it.
 *
 * The statistic is the ratio of medians, new / baseline, with a 95%
 * percentile bootstrap interval from a fixed seed. With threshold T:
 *   regression    the whole interval is above 1 + T;
 *   pass          the whole interval is at or below 1 + T;
 *   improved      a pass whose whole interval is below 1 / (1 + T), the
 *                 mirror of the threshold (the baseline may be refreshed);
 *   inconclusive  the interval straddles 1 + T, or either side has fewer
 *                 than GATE_MIN_RUNS runs.
 * Each verdict has an outcome: ok, warn or fail. A regression fails and an
 * inconclusive verdict warns (fails with --inconclusive fail), except that
 * time metrics only warn when the baseline comes from another machine
 * fingerprint, and wall time only warns when the noise sentinels (runqueue
 * wait + steal) grew by half the threshold's worth of wall time more than
 * the runs' own waits and CPU time explain at the baseline's rates.
 */
#ifndef TSARUN_GATE_H
#define TSARUN_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

struct host_info;
struct run;

#define GATE_MIN_RUNS	       5
#define GATE_DEFAULT_THRESHOLD 0.10
#define GATE_DEFAULT_MAX_RUNS  30
#define GATE_NOTE_LEN	       320
#define GATE_MAX_NOTES	       12

enum gate_verdict {
	GATE_PASS = 0,
	GATE_IMPROVED,
	GATE_INCONCLUSIVE,
	GATE_REGRESSION,
};

enum gate_outcome {
	GATE_OK = 0,
	GATE_WARN,
	GATE_FAIL,
};

struct gate_spec {
	bool gated[METRIC_NR];
	double threshold[METRIC_NR]; /* a fraction: 0.10 for 10% */
	bool named[METRIC_NR];	     /* given a threshold of its own (cpu=5%) */
	double default_threshold;    /* a bare SPEC (10%), else GATE_DEFAULT_THRESHOLD */
	bool listed;		     /* --metric was given */
	bool inconclusive_fails;     /* --inconclusive fail */
	unsigned max_runs;
};

void gate_spec_defaults(struct gate_spec *g);

/*
 * --fail-over SPEC: "10%" (the default threshold: for the metrics --metric
 * lists, else cpu), "cpu=5%,wall=15%" (those metrics, those thresholds), or
 * both ("10%,wall=15%"). Thresholds are percentages from 0 (exclusive) to
 * 1000. Returns 0 or -EINVAL with a message naming what is wrong.
 */
int gate_parse_fail_over(struct gate_spec *g, const char *spec, char *err, size_t errlen);

/* --metric LIST: comma-separated metric names to gate. */
int gate_parse_metrics(struct gate_spec *g, const char *list, char *err, size_t errlen);

/*
 * After parsing: a metric named in the SPEC or listed by --metric is gated;
 * when none is, cpu is, and wall too in paired mode (--baseline-cmd: both
 * commands interleaved in one job, where wall times are comparable). Gated
 * metrics without a threshold of their own take the default one.
 */
void gate_spec_finish(struct gate_spec *g, bool paired);

/* One side's measured runs, metric by metric. */
struct gate_side {
	size_t n; /* runs that count (metric_run_counts) */
	double *v[METRIC_NR];
	bool have[METRIC_NR]; /* measured in every run that counts */
	char why[METRIC_NR][192];
	struct metric_noise *noise; /* what the noise sentinel weighs, per run */
	const struct run *runs;	    /* all of them (explain.h picks the ones that count) */
	size_t nruns;
	bool have_noise;
	const struct host_info *host; /* NULL: unknown */
};

/* Collect from runs[0..n) the runs that count. Returns 0 or -ENOMEM. */
int gate_side_init(struct gate_side *s, const struct run *runs, size_t n,
		   const struct host_info *host);
void gate_side_free(struct gate_side *s);

struct gate_metric {
	enum metric_id metric;
	double threshold;
	size_t nb, nn;
	double base_median, new_median;
	double ratio, ci_low, ci_high; /* +INFINITY when the base median is 0 */
	double base_cv, new_cv;	       /* stddev / mean; NAN with fewer than 2 runs */
	double base_rcv, new_rcv;      /* robust: 1.4826 MAD / median; NAN as above */
	enum gate_verdict verdict;
	enum gate_outcome outcome;
	bool noisy;	 /* run-to-run noise (cv) at or above the threshold */
	bool more_helps; /* inconclusive, and more new runs could settle it */
	/*
	 * Against a stored baseline: the ratio's interval with the new median
	 * known exactly (the baseline's own uncertainty alone); NAN when not
	 * computed (decided, paired, too few runs).
	 */
	double settle_low, settle_high;
	char note[GATE_NOTE_LEN]; /* why the outcome is not what the verdict says, or "" */
	double *base_values;	  /* the samples, so the verdict can be recomputed */
	double *new_values;
};

struct gate_sentinel {
	bool available;
	char why[192];			/* when not available */
	double base_median, new_median; /* runqueue + steal per run, ns */
	/*
	 * How much more the new runs waited than their own waits explain: the
	 * median of runqueue + steal less what the baseline's rates give for
	 * the run (its runqueue wait per wait times the run's waits, its steal
	 * per on-CPU ns times the run's on-CPU time), new side less baseline.
	 */
	double excess;
	double limit; /* excess that fires it: half the wall threshold of base wall; */
	bool fired;   /* NAN and false when wall is not gated (nothing for it to act on) */
};

struct comparison {
	/* the baseline */
	const char *baseline_kind; /* "artifact" or "command" */
	const char *baseline_name; /* the file, or the command line */
	/*
	 * What each side ran (session_command()), set by the caller for a stored
	 * baseline: when the programs differ, a note says so. NULL: not checked.
	 */
	const char *base_command;
	const char *new_command;
	char kind_buf[16]; /* where they point in a comparison read back */
	char name_buf[512];
	bool paired;
	char fingerprint_diff[4][160];
	int nfingerprint_diff;

	/* the statistic */
	uint64_t seed;
	unsigned resamples;
	double confidence;

	struct gate_metric metrics[METRIC_NR];
	int nmetrics;
	struct gate_sentinel sentinel;

	unsigned runs_added; /* by the launcher while inconclusive */
	unsigned max_runs;
	bool offline; /* tsarun compare: no run can be added, --max-runs means nothing */

	/*
	 * For JUnit's time, timestamp and hostname: the wall time of the runs
	 * compared (the command's, and in paired mode the baseline command's;
	 * set by gate_compare), when the comparison was made (Unix seconds,
	 * UTC) and where (set by the caller; 0 and "" leave them out).
	 */
	uint64_t runs_wall_ns;
	int64_t judged_at;
	char hostname[65];

	enum gate_verdict verdict;
	enum gate_outcome outcome;
	char notes[GATE_MAX_NOTES][GATE_NOTE_LEN];
	/* The metric a note only restates (its verdict's explanation), or -1. */
	int note_metric[GATE_MAX_NOTES];
	int nnotes;

	/*
	 * Where the change came from (explain.h), for each gated time metric
	 * and for wall; NULL when the sides have no runs to explain with
	 * (owned: comparison__free()).
	 */
	struct explain *explain;
};

/*
 * Compare. c starts zeroed (with baseline_kind/_name set, and seed,
 * resamples, confidence when not the defaults); comparing again into the
 * same c replaces the previous result. Every gated metric must be measured
 * on both sides (check with gate_check_available() first). Returns 0,
 * -EINVAL, -ENOMEM.
 */
int gate_compare(const struct gate_spec *g, const struct gate_side *base,
		 const struct gate_side *new, bool paired, struct comparison *c);
void comparison__free(struct comparison *c);

/*
 * Would more new runs settle an inconclusive metric? Not when a regression
 * already fails the gate: the outcome is decided.
 */
bool gate_wants_more(const struct comparison *c);

/*
 * Is every gated metric measured on this side? Returns 0, or -ENODATA with a
 * message "the baseline has no 'instructions' figures (...)" built from
 * `what` ("the baseline 'base.json'", "this machine").
 */
int gate_check_available(const struct gate_spec *g, const struct gate_side *s, const char *what,
			 char *err, size_t errlen);

/*
 * Does a stored side have enough runs for a verdict (GATE_MIN_RUNS)? A
 * baseline with fewer could only ever be inconclusive. Returns 0 or
 * -ERANGE with a message built from `what`.
 */
int gate_check_runs(const struct gate_side *s, const char *what, char *err, size_t errlen);

/*
 * Were both sides measured the same way? A --bash run's traps cost CPU and
 * wall time that a plain run of the same command does not pay (the reason
 * --baseline-cmd refuses --bash): a verdict across modes would measure the
 * profiler, not the change. Modes are the artifact's command.mode ("run",
 * "bash"; NULL reads as "run"). Returns 0, or -EINVAL with a message built
 * from `base_what` and `new_what` ("baseline 'base.json'", "this run").
 */
int gate_check_mode(const char *base_mode, const char *new_mode, const char *base_what,
		    const char *new_what, char *err, size_t errlen);

/*
 * Differences between two machine fingerprints (CPU model, CPU count,
 * kernel, virtualisation), one "cpus: 4 -> 2" line each. Returns how many.
 */
int gate_fingerprint_diff(const struct host_info *base, const struct host_info *new,
			  char out[][160], int max);

const char *gate_verdict_name(enum gate_verdict v);
const char *gate_outcome_name(enum gate_outcome o);

/* "+25.0%", "-3.1%", "+inf": a ratio as a change. */
const char *gate_fmt_change(double ratio, char *buf, size_t len);

/* A metric value for people: "125.3 ms", "1.2 MiB", "12,345". */
const char *gate_fmt_value(enum metric_id m, double v, char *buf, size_t len);
/* The same in the unit gate_fmt_value picks for ref: a row of figures in one unit. */
const char *gate_fmt_value_as(enum metric_id m, double v, double ref, char *buf, size_t len);

#endif /* TSARUN_GATE_H */
