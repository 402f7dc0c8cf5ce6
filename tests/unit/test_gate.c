// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "gate.h"
#include "metrics.h"
#include "run.h"
#include "stats.h"

#define MS 1000000.0

/* n runs whose cpu (and wall) follow cpu_ms[i], eBPF measured, runqueue as given. */
static struct run *runs_of(const double *cpu_ms, size_t n, double runq_ms, bool ebpf)
{
	struct run *r = calloc(n, sizeof(*r));

	for (size_t i = 0; i < n; i++) {
		r[i].index = (int)i;
		r[i].status = RUN_EXITED;
		r[i].ru.user_ns = (uint64_t)(cpu_ms[i] * MS * 0.9);
		r[i].ru.sys_ns = (uint64_t)(cpu_ms[i] * MS) - r[i].ru.user_ns;
		r[i].wall_ns = (uint64_t)(cpu_ms[i] * MS * 1.1);
		r[i].ru.max_rss_kb = 4096;
		if (ebpf) {
			run__source(&r[i], "ebpf", true, NULL);
			r[i].totals.state_ns[TSA_ST_ONCPU] = (uint64_t)(cpu_ms[i] * MS);
			r[i].totals.state_ns[TSA_ST_RUNQ] = (uint64_t)(runq_ms * MS);
		} else {
			run__source(&r[i], "ebpf", false, "not permitted (need CAP_BPF)");
		}
		run__source(&r[i], "perf", false, "no hardware PMU");
	}
	return r;
}

static void host(struct host_info *h, const char *model, int cpus)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->kernel, sizeof(h->kernel), "6.1.0");
	snprintf(h->cpu_model, sizeof(h->cpu_model), "%s", model);
	snprintf(h->virtualized, sizeof(h->virtualized), "kvm");
	h->cpus = cpus;
}

static const double base10[] = {100, 101, 99, 100.5, 99.5, 100, 100.2, 99.8, 100.1, 99.9};

/*
 * Run a comparison of base10 against base10 * factor with the given spec,
 * each run with the given runqueue wait (ms) and wakeups.
 */
static void compare_full(const char *spec, const char *metrics, double factor, double base_runq,
			 double new_runq, uint64_t base_waits, uint64_t new_waits,
			 const struct host_info *hb, const struct host_info *hn,
			 struct comparison *c)
{
	struct gate_spec g;
	struct gate_side b, n;
	struct run *rb, *rn;
	double x[10];
	char err[256];

	for (int i = 0; i < 10; i++)
		x[i] = base10[i] * factor;
	rb = runs_of(base10, 10, base_runq, true);
	rn = runs_of(x, 10, new_runq, true);
	/* With wakeups, all the wait is after them (wakeup latency); without, preemptions'. */
	for (int i = 0; i < 10; i++) {
		rb[i].totals.wakeups = rb[i].totals.wakeup_lat_count = base_waits;
		rn[i].totals.wakeups = rn[i].totals.wakeup_lat_count = new_waits;
		rb[i].totals.wakeup_lat_sum = base_waits ? (uint64_t)(base_runq * MS) : 0;
		rn[i].totals.wakeup_lat_sum = new_waits ? (uint64_t)(new_runq * MS) : 0;
	}
	gate_spec_defaults(&g);
	if (spec)
		assert_int_equal(gate_parse_fail_over(&g, spec, err, sizeof(err)), 0);
	if (metrics)
		assert_int_equal(gate_parse_metrics(&g, metrics, err, sizeof(err)), 0);
	gate_spec_finish(&g, false);
	assert_int_equal(gate_side_init(&b, rb, 10, hb), 0);
	assert_int_equal(gate_side_init(&n, rn, 10, hn), 0);
	memset(c, 0, sizeof(*c));
	c->baseline_kind = "artifact";
	c->baseline_name = "base.json";
	assert_int_equal(gate_compare(&g, &b, &n, false, c), 0);
	gate_side_free(&b);
	gate_side_free(&n);
	free(rb);
	free(rn);
}

/* Base runs with 1 ms of runqueue wait per run, new ones with new_runq, no wakeups counted. */
static void compare(const char *spec, const char *metrics, double factor, double new_runq,
		    const struct host_info *hb, const struct host_info *hn, struct comparison *c)
{
	compare_full(spec, metrics, factor, 1, new_runq, 0, 0, hb, hn, c);
}

static void test_spec_parsing(void **state)
{
	struct gate_spec g;
	char err[256];

	gate_spec_defaults(&g);
	assert_int_equal(gate_parse_fail_over(&g, "10%", err, sizeof(err)), 0);
	gate_spec_finish(&g, false);
	assert_true(g.gated[METRIC_CPU] && !g.gated[METRIC_WALL]);
	assert_true(fabs(g.threshold[METRIC_CPU] - 0.10) < 1e-12);

	gate_spec_defaults(&g);
	assert_int_equal(gate_parse_fail_over(&g, "cpu=5%,wall=15%", err, sizeof(err)), 0);
	gate_spec_finish(&g, false);
	assert_true(g.gated[METRIC_CPU] && g.gated[METRIC_WALL]);
	assert_true(fabs(g.threshold[METRIC_CPU] - 0.05) < 1e-12);
	assert_true(fabs(g.threshold[METRIC_WALL] - 0.15) < 1e-12);

	/* Naming wall alone gates wall alone. */
	gate_spec_defaults(&g);
	assert_int_equal(gate_parse_fail_over(&g, "wall=2.5%", err, sizeof(err)), 0);
	gate_spec_finish(&g, false);
	assert_true(!g.gated[METRIC_CPU] && g.gated[METRIC_WALL]);
	assert_true(fabs(g.threshold[METRIC_WALL] - 0.025) < 1e-12);

	/* A bare threshold applies to what --metric lists; named ones keep their own. */
	gate_spec_defaults(&g);
	assert_int_equal(gate_parse_fail_over(&g, "7%,wall=20%", err, sizeof(err)), 0);
	assert_int_equal(gate_parse_metrics(&g, "on_cpu,max_rss", err, sizeof(err)), 0);
	gate_spec_finish(&g, false);
	assert_true(!g.gated[METRIC_CPU] && g.gated[METRIC_ON_CPU] && g.gated[METRIC_MAX_RSS]);
	assert_true(fabs(g.threshold[METRIC_ON_CPU] - 0.07) < 1e-12);
	assert_true(fabs(g.threshold[METRIC_WALL] - 0.20) < 1e-12);

	/* Nothing given: cpu at 10%. */
	gate_spec_defaults(&g);
	gate_spec_finish(&g, false);
	assert_true(g.gated[METRIC_CPU] && fabs(g.threshold[METRIC_CPU] - 0.10) < 1e-12);
}

static void test_spec_errors(void **state)
{
	static const struct {
		const char *spec, *says;
	} bad[] = {
	    {"10", "'10' needs a percent sign"},
	    {"ten%", "'ten%' is not a percentage"},
	    {"cpu=", "'cpu=' has no threshold"},
	    {"cpu=ten%", "'ten%' is not a percentage"},
	    {"foo=5%", "unknown metric 'foo'"},
	    {"=5%", "no metric name"},
	    {"0%", "out of range"},
	    {"-5%", "is not a percentage"},
	    {"2000%", "out of range"},
	    {"cpu=5%,cpu=6%", "more than once"},
	    {"5%,6%", "more than one threshold"},
	    {"cpu=5%,", "trailing comma"},
	    {"cpu=5%,,wall=1%", "empty entry"},
	    {"", "empty threshold"},
	    {"1e1%", "is not a percentage"},
	};
	struct gate_spec g;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gate_spec_defaults(&g);
		err[0] = '\0';
		assert_int_equal(gate_parse_fail_over(&g, bad[i].spec, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("'%s': got '%s', expected it to say '%s'", bad[i].spec, err,
				 bad[i].says);
		assert_non_null(strstr(err, "--fail-over"));
	}
	gate_spec_defaults(&g);
	assert_int_equal(gate_parse_metrics(&g, "cpu,bogus", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown metric 'bogus'"));
	assert_int_equal(gate_parse_metrics(&g, "", err, sizeof(err)), -EINVAL);
}

static void test_verdicts(void **state)
{
	struct comparison c;

	compare("10%", NULL, 1.0, 1, NULL, NULL, &c);
	assert_int_equal(c.nmetrics, 1);
	assert_int_equal(c.metrics[0].metric, METRIC_CPU);
	assert_int_equal(c.metrics[0].verdict, GATE_PASS);
	assert_int_equal(c.outcome, GATE_OK);
	assert_true(c.metrics[0].ci_low <= 1 && c.metrics[0].ci_high >= 1);
	assert_true(c.seed == STATS_SEED && c.resamples == STATS_RESAMPLES);
	comparison__free(&c);

	compare("10%", NULL, 1.25, 1, NULL, NULL, &c);
	assert_int_equal(c.metrics[0].verdict, GATE_REGRESSION);
	assert_int_equal(c.outcome, GATE_FAIL);
	assert_int_equal(c.verdict, GATE_REGRESSION);
	assert_true(fabs(c.metrics[0].ratio - 1.25) < 0.002);
	assert_true(c.metrics[0].ci_low > 1.1);
	assert_true(c.metrics[0].base_values[3] == base10[3] * MS);
	comparison__free(&c);

	/* 10% slower against a 10% threshold: the interval straddles it. */
	compare("10%", NULL, 1.10, 1, NULL, NULL, &c);
	assert_int_equal(c.metrics[0].verdict, GATE_INCONCLUSIVE);
	assert_true(c.metrics[0].more_helps);
	assert_true(gate_wants_more(&c));
	assert_int_equal(c.outcome, GATE_WARN);
	assert_true(c.nnotes >= 1 && strstr(c.notes[c.nnotes - 1], "straddles"));
	comparison__free(&c);

	/* Improvements never fail, and say the baseline may be refreshed. */
	compare("10%", NULL, 0.5, 1, NULL, NULL, &c);
	assert_int_equal(c.metrics[0].verdict, GATE_IMPROVED);
	assert_int_equal(c.outcome, GATE_OK);
	assert_non_null(strstr(c.notes[0], "refreshed"));
	comparison__free(&c);

	/* cpu fails, wall straddles: no run is added, the gate is decided. */
	compare("cpu=10%,wall=25%", NULL, 1.25, 1, NULL, NULL, &c);
	assert_int_equal(c.metrics[0].verdict, GATE_INCONCLUSIVE); /* wall +25% against 25% */
	assert_true(c.metrics[0].more_helps);
	assert_int_equal(c.metrics[1].outcome, GATE_FAIL);
	assert_false(gate_wants_more(&c));
	comparison__free(&c);

	/* A small improvement is a pass. */
	compare("10%", NULL, 0.95, 1, NULL, NULL, &c);
	assert_int_equal(c.metrics[0].verdict, GATE_PASS);
	comparison__free(&c);
}

/*
 * A stored baseline whose own noise forbids a 10% verdict (robust cv about
 * 16%, as on a busy shared machine): its median's 95% interval is [80, 118]
 * around 99.5, so against it a pass needs a new median at most 88 and a
 * regression one above 129.8. Identical new runs that sit at 99-101 can
 * reach neither, however many there are: no run is added, and the note
 * says why and what to do instead. In paired mode the baseline grows, so
 * runs still help; and new runs too noisy to place their median still may.
 */
static const double noisy10[] = {80, 118, 95, 104, 127, 88, 100, 112, 76, 99};

static void gate_of(const double *bv, size_t nb, const double *nv, size_t nn, bool paired,
		    struct comparison *c)
{
	struct gate_spec g;
	struct gate_side b, n;
	struct run *rb = runs_of(bv, nb, 1, true), *rn = runs_of(nv, nn, 1, true);

	gate_spec_defaults(&g);
	gate_spec_finish(&g, paired);
	assert_int_equal(gate_side_init(&b, rb, nb, NULL), 0);
	assert_int_equal(gate_side_init(&n, rn, nn, NULL), 0);
	memset(c, 0, sizeof(*c));
	c->baseline_kind = "artifact";
	c->baseline_name = "base.json";
	assert_int_equal(gate_compare(&g, &b, &n, paired, c), 0);
	gate_side_free(&b);
	gate_side_free(&n);
	free(rb);
	free(rn);
}

static void test_noisy_baseline_stops_adding_runs(void **state)
{
	double quiet[30], wild[10];
	struct comparison c;
	bool said = false;

	(void)state;
	for (int i = 0; i < 30; i++)
		quiet[i] = 99 + (i % 5) * 0.5;
	gate_of(noisy10, 10, quiet, 30, false, &c);
	assert_int_equal(c.metrics[0].verdict, GATE_INCONCLUSIVE);
	assert_false(c.metrics[0].more_helps);
	assert_false(gate_wants_more(&c));
	/* With the new median known, the baseline alone keeps the ratio within about [0.84, 1.24]. */
	assert_true(c.metrics[0].settle_low < 0.9 && c.metrics[0].settle_high > 1.2);
	for (int i = 0; i < c.nnotes; i++)
		if (strstr(c.notes[i], "more runs cannot help") &&
		    strstr(c.notes[i], "paired mode") && strstr(c.notes[i], "--baseline-cmd"))
			said = true;
	assert_true(said);
	comparison__free(&c);

	/* Paired (the same noise, paired differently): both sides grow, so more runs help. */
	for (int i = 0; i < 10; i++)
		wild[i] = noisy10[(i + 3) % 10];
	gate_of(noisy10, 10, wild, 10, true, &c);
	assert_int_equal(c.metrics[0].verdict, GATE_INCONCLUSIVE);
	assert_true(c.metrics[0].more_helps);
	comparison__free(&c);

	/* New runs as noisy as the baseline: their median might yet sit low enough to pass. */
	for (int i = 0; i < 10; i++)
		wild[i] = noisy10[i] * (i % 2 ? 0.8 : 1.25);
	gate_of(noisy10, 10, wild, 10, false, &c);
	assert_int_equal(c.metrics[0].verdict, GATE_INCONCLUSIVE);
	assert_true(c.metrics[0].more_helps);
	assert_true(gate_wants_more(&c));
	comparison__free(&c);

	/* A regression beyond the baseline's noise is still told: 1.5x is a regression. */
	for (int i = 0; i < 30; i++)
		quiet[i] = 150 + (i % 5) * 0.5;
	gate_of(noisy10, 10, quiet, 30, false, &c);
	assert_int_equal(c.metrics[0].verdict, GATE_REGRESSION);
	comparison__free(&c);
}

static void test_inconclusive_policy_and_few_runs(void **state)
{
	struct gate_spec g;
	struct gate_side b, n;
	struct comparison c = {0};
	struct run *rb = runs_of(base10, 10, 1, true), *rn = runs_of(base10, 3, 1, true);
	char err[256];

	gate_spec_defaults(&g);
	g.inconclusive_fails = true;
	gate_spec_finish(&g, false);
	assert_int_equal(gate_side_init(&b, rb, 10, NULL), 0);
	assert_int_equal(gate_side_init(&n, rn, 3, NULL), 0);
	assert_int_equal(gate_compare(&g, &b, &n, false, &c), 0);
	assert_int_equal(c.metrics[0].verdict, GATE_INCONCLUSIVE);
	assert_int_equal(c.outcome, GATE_FAIL);
	assert_non_null(strstr(c.metrics[0].note, "too few runs"));
	assert_true(c.metrics[0].more_helps); /* the new side can grow */
	/* Swap: a short baseline cannot be helped by more new runs. */
	assert_int_equal(gate_compare(&g, &n, &b, false, &c), 0);
	assert_false(gate_wants_more(&c));
	comparison__free(&c);
	/* Paired (--baseline-cmd -r 3): each added run adds a pair, so both sides grow. */
	assert_int_equal(gate_compare(&g, &n, &n, true, &c), 0);
	assert_int_equal(c.metrics[0].verdict, GATE_INCONCLUSIVE);
	assert_true(c.metrics[0].more_helps);
	assert_true(gate_wants_more(&c));
	comparison__free(&c);

	/* A stored side too short for any verdict is refused up front. */
	assert_int_equal(gate_check_runs(&n, "baseline 'b.json'", err, sizeof(err)), -ERANGE);
	assert_string_equal(err, "baseline 'b.json' has 3 measured runs that completed; a verdict "
				 "needs at least 5 (record it with --runs 10)");
	assert_int_equal(gate_check_runs(&b, "baseline 'b.json'", err, sizeof(err)), 0);

	gate_side_free(&b);
	gate_side_free(&n);

	/* Warmups and failed runs do not count. */
	rb[0].warmup = true;
	rb[1].exit_code = 1;
	rb[2].status = RUN_INTERRUPTED;
	assert_int_equal(gate_side_init(&b, rb, 10, NULL), 0);
	assert_int_equal(b.n, 7);
	assert_true(b.v[METRIC_CPU][0] == base10[3] * MS);
	gate_side_free(&b);
	free(rb);
	free(rn);
}

/*
 * Wall gated with the runs' waits for a CPU given: base runs of ~110 ms
 * wall with 17 ms of runqueue wait over 2000 wakeups, new runs 30% slower
 * with new_waits wakeups and new_runq_ms of runqueue wait.
 */
static void compare_waits(uint64_t new_waits, double new_runq_ms, struct comparison *c)
{
	compare_full("wall=10%", NULL, 1.3, 17, new_runq_ms, 2000, new_waits, NULL, NULL, c);
}

static void test_noise_sentinel_weighs_own_waits(void **state)
{
	struct comparison c;

	/*
	 * A program that wakes up 2600 times instead of 2000 waits for a CPU
	 * 30% more at the same ~8.5 us a wait: 24.9 ms against 17 (7.9 ms
	 * more, past the 5.5 ms limit), yet only 2.8 ms more than its own
	 * waits explain. Its wall regression fails.
	 */
	compare_waits(2600, 24.9, &c);
	assert_true(c.sentinel.available);
	assert_true(fabs(c.sentinel.new_median - c.sentinel.base_median - 7.9 * MS) < 1e3);
	assert_true(fabs(c.sentinel.excess - 2.8 * MS) < 1e3);
	assert_false(c.sentinel.fired);
	assert_int_equal(c.metrics[0].verdict, GATE_REGRESSION);
	assert_int_equal(c.metrics[0].outcome, GATE_FAIL);
	comparison__free(&c);

	/* As many waits, each longer: 30 ms more waiting, the machine was busier. */
	compare_waits(2000, 47, &c);
	assert_true(fabs(c.sentinel.excess - 30 * MS) < 1e3);
	assert_true(c.sentinel.fired);
	assert_int_equal(c.metrics[0].outcome, GATE_WARN);
	assert_non_null(strstr(c.metrics[0].note, "30.00 ms more than the runs' own waits"));
	comparison__free(&c);
}

static void test_noise_sentinel_weighs_own_cpu_time(void **state)
{
	struct comparison c;

	/*
	 * A baseline taken on a loaded machine: 158 ms of preemption wait per
	 * run beside 100 ms on a CPU. Under the same load, a program that runs
	 * 25% longer is preempted 25% more: 197.5 ms, its own doing, and its
	 * wall regression fails.
	 */
	compare_full("wall=10%", NULL, 1.25, 158, 197.5, 0, 0, NULL, NULL, &c);
	assert_true(fabs(c.sentinel.excess) < 1e3);
	assert_false(c.sentinel.fired);
	assert_int_equal(c.metrics[0].outcome, GATE_FAIL);
	comparison__free(&c);

	/* Two more CPU hogs beside it: 260 ms, 62.5 more than its CPU time explains. */
	compare_full("wall=10%", NULL, 1.25, 158, 260, 0, 0, NULL, NULL, &c);
	assert_true(fabs(c.sentinel.excess - 62.5 * MS) < 1e3);
	assert_true(c.sentinel.fired);
	assert_int_equal(c.metrics[0].outcome, GATE_WARN);
	comparison__free(&c);
}

static void test_fingerprint_downgrades_time(void **state)
{
	struct host_info a, b;
	struct comparison c;

	host(&a, "Intel Xeon", 4);
	host(&b, "AMD EPYC", 2);
	compare("10%", "cpu,max_rss", 1.25, 1, &a, &b, &c);
	assert_int_equal(c.nfingerprint_diff, 2);
	assert_non_null(strstr(c.fingerprint_diff[0], "Intel Xeon"));
	assert_non_null(strstr(c.fingerprint_diff[1], "CPUs 4 -> 2"));
	assert_int_equal(c.metrics[0].metric, METRIC_CPU);
	assert_int_equal(c.metrics[0].verdict, GATE_REGRESSION);
	assert_int_equal(c.metrics[0].outcome, GATE_WARN);
	assert_non_null(strstr(c.metrics[0].note, "another machine"));
	assert_int_equal(c.outcome, GATE_WARN);
	assert_non_null(strstr(c.notes[0], "another machine"));
	comparison__free(&c);

	/* Same machine: the regression fails. */
	compare("10%", NULL, 1.25, 1, &a, &a, &c);
	assert_int_equal(c.nfingerprint_diff, 0);
	assert_int_equal(c.outcome, GATE_FAIL);
	comparison__free(&c);
}

static void test_noise_sentinel_downgrades_wall(void **state)
{
	struct comparison c;

	/* Wall 25% slower and 30 ms more runqueue wait per run (base wall 110 ms): a warning. */
	compare("wall=10%", NULL, 1.25, 31, NULL, NULL, &c);
	assert_int_equal(c.nmetrics, 1);
	assert_int_equal(c.metrics[0].metric, METRIC_WALL);
	assert_int_equal(c.metrics[0].verdict, GATE_REGRESSION);
	assert_true(c.sentinel.available && c.sentinel.fired);
	assert_true(fabs(c.sentinel.limit - 0.05 * 110 * MS) < 1e3);
	assert_int_equal(c.metrics[0].outcome, GATE_WARN);
	assert_non_null(strstr(c.metrics[0].note, "busier"));
	comparison__free(&c);

	/* Same wall regression, quiet machine: it fails. cpu is never downgraded by sentinels. */
	compare("wall=10%,cpu=10%", NULL, 1.25, 1, NULL, NULL, &c);
	assert_false(c.sentinel.fired);
	assert_int_equal(c.metrics[0].outcome, GATE_FAIL);
	assert_int_equal(c.metrics[1].outcome, GATE_FAIL);
	comparison__free(&c);
	compare("wall=10%,cpu=10%", NULL, 1.25, 31, NULL, NULL, &c);
	assert_int_equal(c.metrics[0].metric, METRIC_WALL);
	assert_int_equal(c.metrics[0].outcome, GATE_WARN);
	assert_int_equal(c.metrics[1].outcome, GATE_FAIL);
	comparison__free(&c);

	/*
	 * cpu alone gated on the same busier machine: the sentinel is measured,
	 * but with no wall threshold there is no limit, and nothing fired.
	 */
	compare("cpu=10%", NULL, 1.0, 31, NULL, NULL, &c);
	assert_true(c.sentinel.available);
	assert_true(fabs(c.sentinel.excess - 30 * MS) < 1e3);
	assert_true(isnan(c.sentinel.limit));
	assert_false(c.sentinel.fired);
	comparison__free(&c);

	/* Inconclusive wall on a busier machine: the sentinel is a note of its own (annotated). */
	compare("wall=10%", NULL, 1.10, 31, NULL, NULL, &c);
	assert_int_equal(c.metrics[0].verdict, GATE_INCONCLUSIVE);
	assert_true(c.sentinel.fired);
	assert_string_equal(c.metrics[0].note, "");
	{
		bool said = false;

		for (int i = 0; i < c.nnotes; i++)
			said |= c.note_metric[i] < 0 && strstr(c.notes[i], "machine was busier");
		assert_true(said);
	}
	comparison__free(&c);
}

static void test_noisy_warning(void **state)
{
	const double noisy[] = {80, 120, 95, 110, 70, 130, 100, 90, 115, 85};
	struct gate_spec g;
	struct gate_side b, n;
	struct comparison c = {0};
	struct run *rb = runs_of(noisy, 10, 1, true), *rn = runs_of(noisy, 10, 1, true);
	char err[256];

	gate_spec_defaults(&g);
	assert_int_equal(gate_parse_fail_over(&g, "5%", err, sizeof(err)), 0);
	gate_spec_finish(&g, false);
	assert_int_equal(gate_side_init(&b, rb, 10, NULL), 0);
	assert_int_equal(gate_side_init(&n, rn, 10, NULL), 0);
	assert_int_equal(gate_compare(&g, &b, &n, false, &c), 0);
	assert_true(c.metrics[0].noisy);
	assert_non_null(strstr(c.notes[0], "cannot be told from noise"));
	comparison__free(&c);
	gate_side_free(&b);
	gate_side_free(&n);
	free(rb);
	free(rn);

	/* Two outliers inflate the cv, not the medians: no noise warning. */
	{
		const double tight[] = {100, 100.5, 99.5, 100, 100.2, 99.8, 100.1, 99.9, 150, 160};

		rb = runs_of(tight, 10, 1, true);
		rn = runs_of(tight, 10, 1, true);
		assert_int_equal(gate_side_init(&b, rb, 10, NULL), 0);
		assert_int_equal(gate_side_init(&n, rn, 10, NULL), 0);
		assert_int_equal(gate_compare(&g, &b, &n, false, &c), 0);
		assert_true(c.metrics[0].base_cv > 0.05);
		assert_true(c.metrics[0].base_rcv < 0.01);
		assert_false(c.metrics[0].noisy);
		/*
		 * Not a pass either: 2 outliers in 10 put about 3% of resampled
		 * medians among them, which widens the interval past +5%. Whatever
		 * it is, it is not a regression.
		 */
		assert_int_not_equal(c.metrics[0].verdict, GATE_REGRESSION);
		comparison__free(&c);
		gate_side_free(&b);
		gate_side_free(&n);
		free(rb);
		free(rn);
	}
}

static void test_availability(void **state)
{
	struct gate_spec g;
	struct gate_side s;
	struct run *r = runs_of(base10, 5, 1, false);
	char err[256];

	gate_spec_defaults(&g);
	assert_int_equal(gate_parse_metrics(&g, "cpu,on_cpu", err, sizeof(err)), 0);
	gate_spec_finish(&g, false);
	assert_int_equal(gate_side_init(&s, r, 5, NULL), 0);
	assert_true(s.have[METRIC_CPU] && !s.have[METRIC_ON_CPU] && !s.have_noise);
	assert_int_equal(gate_check_available(&g, &s, "the baseline 'b.json'", err, sizeof(err)),
			 -ENODATA);
	assert_string_equal(err, "the baseline 'b.json' has no 'on_cpu' figures (ebpf "
				 "unavailable: not permitted (need CAP_BPF))");
	gate_side_free(&s);

	gate_spec_defaults(&g);
	assert_int_equal(gate_parse_fail_over(&g, "instructions=1%", err, sizeof(err)), 0);
	gate_spec_finish(&g, false);
	assert_int_equal(gate_side_init(&s, r, 5, NULL), 0);
	assert_int_equal(gate_check_available(&g, &s, "this machine", err, sizeof(err)), -ENODATA);
	assert_string_equal(err, "this machine has no 'instructions' figures (no instruction "
				 "counter: no hardware PMU)");
	gate_side_free(&s);
	free(r);
}

/* A --bash side and a plain side are not measured alike: refused, whichever way round. */
static void test_mode_mismatch(void **state)
{
	char err[512];

	assert_int_equal(
	    gate_check_mode("run", "run", "baseline 'b.json'", "this run", err, sizeof(err)), 0);
	assert_int_equal(
	    gate_check_mode("bash", "bash", "baseline 'b.json'", "this run", err, sizeof(err)), 0);
	/* An artifact without command.mode reads as a plain run. */
	assert_int_equal(
	    gate_check_mode(NULL, "run", "baseline 'b.json'", "this run", err, sizeof(err)), 0);
	assert_int_equal(
	    gate_check_mode("run", "bash", "baseline 'b.json'", "this run", err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "baseline 'b.json' (without --bash) and this run (with "
				    "--bash) are not measured alike"));
	assert_int_equal(gate_check_mode("bash", NULL, "baseline 'b.json'", "new artifact 'n.json'",
					 err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "baseline 'b.json' (with --bash) and new artifact 'n.json' "
				    "(without --bash)"));
}

/* A stored baseline of another program: the verdict stands, with a note saying so. */
static void test_command_differs_note(void **state)
{
	struct gate_spec g;
	struct gate_side b, n;
	struct run *r = runs_of(base10, 10, 1, true);
	struct comparison c = {0};
	bool said = false;

	gate_spec_defaults(&g);
	gate_spec_finish(&g, false);
	assert_int_equal(gate_side_init(&b, r, 10, NULL), 0);
	assert_int_equal(gate_side_init(&n, r, 10, NULL), 0);
	c.baseline_kind = "artifact";
	c.baseline_name = "b.json";
	/* The same program from another directory, other arguments aside: no note. */
	c.base_command = "/opt/old/bench";
	c.new_command = "./build/bench";
	assert_int_equal(gate_compare(&g, &b, &n, false, &c), 0);
	assert_int_equal(c.nnotes, 0);
	c.base_command = "sleep";
	c.new_command = "./build/bench";
	assert_int_equal(gate_compare(&g, &b, &n, false, &c), 0);
	assert_int_equal(c.verdict, GATE_PASS);
	for (int i = 0; i < c.nnotes; i++)
		said |=
		    c.note_metric[i] < 0 &&
		    strstr(c.notes[i], "the baseline ran 'sleep' and the new runs './build/bench'");
	assert_true(said);
	comparison__free(&c);
	gate_side_free(&b);
	gate_side_free(&n);
	free(r);
}

/* Offline (tsarun compare) no run can be added: the advice is to record more, not --max-runs. */
static void test_inconclusive_advice_offline(void **state)
{
	struct gate_spec g;
	struct gate_side b, n;
	double x[10];
	struct run *rb, *rn;
	struct comparison c = {.baseline_kind = "artifact", .baseline_name = "b.json"};

	for (int i = 0; i < 10; i++)
		x[i] = base10[i] * 1.10;
	rb = runs_of(base10, 10, 1, true);
	rn = runs_of(x, 10, 1, true);
	gate_spec_defaults(&g);
	gate_spec_finish(&g, false);
	assert_int_equal(gate_side_init(&b, rb, 10, NULL), 0);
	assert_int_equal(gate_side_init(&n, rn, 10, NULL), 0);
	assert_int_equal(gate_compare(&g, &b, &n, false, &c), 0);
	assert_int_equal(c.metrics[0].verdict, GATE_INCONCLUSIVE);
	assert_non_null(strstr(c.notes[c.nnotes - 1], "allow more runs (--max-runs)"));
	c.offline = true;
	assert_int_equal(gate_compare(&g, &b, &n, false, &c), 0);
	assert_non_null(strstr(c.notes[c.nnotes - 1], "after 10 runs: record more runs (--runs)"));
	assert_null(strstr(c.notes[c.nnotes - 1], "--max-runs"));
	comparison__free(&c);
	gate_side_free(&b);
	gate_side_free(&n);
	free(rb);
	free(rn);
}

static void test_formatting(void **state)
{
	char buf[32];

	assert_string_equal(gate_fmt_change(1.25, buf, sizeof(buf)), "+25.0%");
	assert_string_equal(gate_fmt_change(0.969, buf, sizeof(buf)), "-3.1%");
	assert_string_equal(gate_fmt_change(INFINITY, buf, sizeof(buf)), "+inf");
	assert_string_equal(gate_fmt_value(METRIC_CPU, 125.3e6, buf, sizeof(buf)), "125.30 ms");
	assert_string_equal(gate_fmt_value(METRIC_WALL, 2.5e9, buf, sizeof(buf)), "2.500 s");
	assert_string_equal(gate_fmt_value(METRIC_MAX_RSS, 5632, buf, sizeof(buf)), "5.5 MiB");
	assert_string_equal(gate_fmt_value(METRIC_VOLUNTARY, 760, buf, sizeof(buf)), "760");
	assert_string_equal(gate_fmt_value(METRIC_VOLUNTARY, 760.5, buf, sizeof(buf)), "760.5");
	assert_string_equal(gate_fmt_value(METRIC_CPU, NAN, buf, sizeof(buf)), "n/a");
}

/* DESIGN: wall is gated when asked, or in paired mode (both sides in one job). */
static void test_paired_gates_wall_by_default(void **state)
{
	struct gate_spec g;

	gate_spec_defaults(&g);
	gate_spec_finish(&g, true);
	assert_true(g.gated[METRIC_CPU]);
	assert_true(g.gated[METRIC_WALL]);
	gate_spec_defaults(&g);
	gate_spec_finish(&g, false);
	assert_true(g.gated[METRIC_CPU]);
	assert_false(g.gated[METRIC_WALL]);
	/* Named metrics win in paired mode too. */
	gate_spec_defaults(&g);
	{
		char err[128];

		assert_int_equal(gate_parse_fail_over(&g, "cpu=5%", err, sizeof(err)), 0);
	}
	gate_spec_finish(&g, true);
	assert_false(g.gated[METRIC_WALL]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_paired_gates_wall_by_default),
	    cmocka_unit_test(test_spec_parsing),
	    cmocka_unit_test(test_spec_errors),
	    cmocka_unit_test(test_verdicts),
	    cmocka_unit_test(test_inconclusive_policy_and_few_runs),
	    cmocka_unit_test(test_noisy_baseline_stops_adding_runs),
	    cmocka_unit_test(test_fingerprint_downgrades_time),
	    cmocka_unit_test(test_noise_sentinel_downgrades_wall),
	    cmocka_unit_test(test_noise_sentinel_weighs_own_waits),
	    cmocka_unit_test(test_noise_sentinel_weighs_own_cpu_time),
	    cmocka_unit_test(test_noisy_warning),
	    cmocka_unit_test(test_availability),
	    cmocka_unit_test(test_formatting),
	    cmocka_unit_test(test_mode_mismatch),
	    cmocka_unit_test(test_command_differs_note),
	    cmocka_unit_test(test_inconclusive_advice_offline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
