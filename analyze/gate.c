// SPDX-License-Identifier: MIT
/* The regression gate's decisions. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errf.h"
#include "explain.h"
#include "gate.h"
#include "run.h"
#include "stats.h"

void gate_spec_defaults(struct gate_spec *g)
{
	memset(g, 0, sizeof(*g));
	g->default_threshold = GATE_DEFAULT_THRESHOLD;
	g->max_runs = GATE_DEFAULT_MAX_RUNS;
}

/* "10%", "2.5%": a percentage over 0 and at most 1000, as a fraction. */
static int parse_percent(const char *s, size_t len, double *out)
{
	char buf[32], *end;
	double v;

	if (len < 2 || len >= sizeof(buf) || s[len - 1] != '%')
		return -EINVAL;
	for (size_t i = 0; i + 1 < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
			return -EINVAL;
	memcpy(buf, s, len - 1);
	buf[len - 1] = '\0';
	v = strtod(buf, &end);
	if (*end || end == buf || !isfinite(v))
		return -EINVAL;
	if (v <= 0 || v > 1000)
		return -ERANGE;
	*out = v / 100;
	return 0;
}

/* Is s[0..len) a bare number (the percent sign forgotten)? */
static bool bare_number(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
			return false;
	return true;
}

int gate_parse_fail_over(struct gate_spec *g, const char *spec, char *err, size_t errlen)
{
	const char *p = spec;
	bool seen[METRIC_NR] = {false}, bare = false;

	if (!spec || !*spec)
		return errf(err, errlen,
			    "--fail-over: empty threshold (e.g. --fail-over 10%% or "
			    "cpu=5%%,wall=15%%)");
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len), *val = p;
		size_t vlen = len;
		double t;
		int m = -1, ret;

		if (!len)
			return errf(err, errlen, "--fail-over '%s': empty entry between commas",
				    spec);
		if (eq) {
			char name[32];
			size_t nlen = (size_t)(eq - p);

			if (!nlen || nlen >= sizeof(name))
				return errf(
				    err, errlen,
				    "--fail-over '%s': '%.*s' has no metric name before '='", spec,
				    (int)len, p);
			memcpy(name, p, nlen);
			name[nlen] = '\0';
			m = metric_by_name(name);
			if (m < 0)
				return errf(err, errlen,
					    "--fail-over '%s': unknown metric '%s' (one of: %s)",
					    spec, name, metric_names());
			if (seen[m])
				return errf(err, errlen,
					    "--fail-over '%s': '%s' is given more than once", spec,
					    name);
			val = eq + 1;
			vlen = len - nlen - 1;
			if (!vlen)
				return errf(
				    err, errlen,
				    "--fail-over '%s': '%s=' has no threshold (e.g. %s=5%%)", spec,
				    name, name);
		} else if (bare) {
			return errf(
			    err, errlen,
			    "--fail-over '%s': more than one threshold without a metric name",
			    spec);
		}
		ret = parse_percent(val, vlen, &t);
		if (ret == -ERANGE)
			return errf(err, errlen,
				    "--fail-over '%s': '%.*s' is out of range (more than 0%% and "
				    "at most 1000%%)",
				    spec, (int)vlen, val);
		if (ret && bare_number(val, vlen))
			return errf(err, errlen,
				    "--fail-over '%s': '%.*s' needs a percent sign (e.g. %.*s%%)",
				    spec, (int)vlen, val, (int)vlen, val);
		if (ret)
			return errf(err, errlen,
				    "--fail-over '%s': '%.*s' is not a percentage (e.g. 10%% or "
				    "cpu=5%%,wall=15%%)",
				    spec, (int)vlen, val);
		if (m >= 0) {
			seen[m] = true;
			g->named[m] = true;
			g->gated[m] = true;
			g->threshold[m] = t;
		} else {
			bare = true;
			g->default_threshold = t;
		}
		p += len;
		if (*p == ',') {
			p++;
			if (!*p)
				return errf(err, errlen, "--fail-over '%s': trailing comma", spec);
		}
	}
	return 0;
}

int gate_parse_metrics(struct gate_spec *g, const char *list, char *err, size_t errlen)
{
	const char *p = list;

	if (!list || !*list)
		return errf(err, errlen, "--metric: empty list (one or more of: %s)",
			    metric_names());
	while (*p) {
		size_t len = strcspn(p, ",");
		char name[32];
		int m;

		if (!len || len >= sizeof(name))
			return errf(err, errlen, "--metric '%s': '%.*s' is not a metric (%s)", list,
				    (int)len, p, metric_names());
		memcpy(name, p, len);
		name[len] = '\0';
		m = metric_by_name(name);
		if (m < 0)
			return errf(err, errlen, "--metric '%s': unknown metric '%s' (one of: %s)",
				    list, name, metric_names());
		g->gated[m] = true;
		g->listed = true;
		p += len;
		if (*p == ',') {
			p++;
			if (!*p) /* as --fail-over: "cpu," is a list with a piece missing */
				return errf(err, errlen, "--metric '%s': trailing comma", list);
		}
	}
	return 0;
}

void gate_spec_finish(struct gate_spec *g, bool paired)
{
	bool any = false;

	for (int m = 0; m < METRIC_NR; m++)
		any |= g->gated[m];
	if (!any) {
		g->gated[METRIC_CPU] = true;
		/* Interleaved in one job, wall time compares like with like: gate it too. */
		if (paired)
			g->gated[METRIC_WALL] = true;
	}
	for (int m = 0; m < METRIC_NR; m++)
		if (g->gated[m] && !g->named[m])
			g->threshold[m] = g->default_threshold;
}

int gate_side_init(struct gate_side *s, const struct run *runs, size_t n,
		   const struct host_info *host)
{
	size_t k = 0;

	memset(s, 0, sizeof(*s));
	s->host = host;
	for (int m = 0; m < METRIC_NR; m++) {
		s->v[m] = calloc(n ? n : 1, sizeof(double));
		if (!s->v[m])
			goto out_nomem;
		s->have[m] = true;
	}
	s->noise = calloc(n ? n : 1, sizeof(*s->noise));
	if (!s->noise)
		goto out_nomem;
	s->have_noise = true;
	for (size_t i = 0; i < n; i++) {
		const struct run *r = &runs[i];

		if (!metric_run_counts(r))
			continue;
		for (int m = 0; m < METRIC_NR; m++) {
			char why[192];

			if (metric_value(r, m, &s->v[m][k], why, sizeof(why))) {
				s->v[m][k] = NAN;
				if (s->have[m])
					snprintf(s->why[m], sizeof(s->why[m]), "%s", why);
				s->have[m] = false;
			}
		}
		if (metric_noise(r, &s->noise[k]))
			s->have_noise = false;
		k++;
	}
	s->n = k;
	s->runs = runs;
	s->nruns = n;
	if (!k) {
		for (int m = 0; m < METRIC_NR; m++) {
			s->have[m] = false;
			snprintf(s->why[m], sizeof(s->why[m]), "no measured run completed");
		}
		s->have_noise = false;
	}
	return 0;
out_nomem:
	gate_side_free(s);
	return -ENOMEM;
}

void gate_side_free(struct gate_side *s)
{
	for (int m = 0; m < METRIC_NR; m++) {
		free(s->v[m]);
		s->v[m] = NULL;
	}
	free(s->noise);
	s->noise = NULL;
	s->n = 0;
}

int gate_check_available(const struct gate_spec *g, const struct gate_side *s, const char *what,
			 char *err, size_t errlen)
{
	for (int m = 0; m < METRIC_NR; m++) {
		if (!g->gated[m] || s->have[m])
			continue;
		snprintf(err, errlen, "%s has no '%s' figures (%s)", what, metric_def(m)->name,
			 s->why[m][0] ? s->why[m] : "not measured");
		return -ENODATA;
	}
	return 0;
}

int gate_check_runs(const struct gate_side *s, const char *what, char *err, size_t errlen)
{
	if (s->n >= GATE_MIN_RUNS)
		return 0;
	snprintf(err, errlen,
		 "%s has %zu measured run%s that completed; a verdict needs at least %d (record "
		 "it with --runs 10)",
		 what, s->n, s->n == 1 ? "" : "s", GATE_MIN_RUNS);
	return -ERANGE;
}

static const char *mode_how(const char *mode)
{
	return !strcmp(mode, "bash")  ? "with --bash"
	       : !strcmp(mode, "run") ? "without --bash"
				      : mode;
}

int gate_check_mode(const char *base_mode, const char *new_mode, const char *base_what,
		    const char *new_what, char *err, size_t errlen)
{
	base_mode = base_mode ? base_mode : "run";
	new_mode = new_mode ? new_mode : "run";
	if (!strcmp(base_mode, new_mode))
		return 0;
	snprintf(err, errlen,
		 "%s (%s) and %s (%s) are not measured alike: bash profiling's traps cost CPU "
		 "and wall time that only one side would pay, so the verdict would measure the "
		 "profiler (record both the same way)",
		 base_what, mode_how(base_mode), new_what, mode_how(new_mode));
	return -EINVAL;
}

int gate_fingerprint_diff(const struct host_info *b, const struct host_info *n, char out[][160],
			  int max)
{
	int k = 0;

	if (k < max && strcmp(b->cpu_model, n->cpu_model))
		snprintf(out[k++], 160, "CPU model '%.60s' -> '%.60s'", b->cpu_model, n->cpu_model);
	if (k < max && b->cpus != n->cpus)
		snprintf(out[k++], 160, "CPUs %d -> %d", b->cpus, n->cpus);
	if (k < max && strcmp(b->kernel, n->kernel))
		snprintf(out[k++], 160, "kernel %.60s -> %.60s", b->kernel, n->kernel);
	if (k < max && strcmp(b->virtualized, n->virtualized))
		snprintf(out[k++], 160, "virtualisation %.30s -> %.30s", b->virtualized,
			 n->virtualized);
	return k;
}

const char *gate_verdict_name(enum gate_verdict v)
{
	switch (v) {
	case GATE_PASS:
		return "pass";
	case GATE_IMPROVED:
		return "improved";
	case GATE_INCONCLUSIVE:
		return "inconclusive";
	case GATE_REGRESSION:
		return "regression";
	}
	return "unknown";
}

const char *gate_outcome_name(enum gate_outcome o)
{
	switch (o) {
	case GATE_OK:
		return "ok";
	case GATE_WARN:
		return "warning";
	case GATE_FAIL:
		return "fail";
	}
	return "unknown";
}

const char *gate_fmt_change(double ratio, char *buf, size_t len)
{
	if (isnan(ratio))
		snprintf(buf, len, "n/a");
	else if (isinf(ratio))
		snprintf(buf, len, "+inf");
	else
		snprintf(buf, len, "%+.1f%%", (ratio - 1) * 100);
	return buf;
}

const char *gate_fmt_value_as(enum metric_id m, double v, double ref, char *buf, size_t len)
{
	const struct metric_def *d = metric_def(m);
	double a = fabs(ref);

	if (isnan(v) || isnan(ref) || !d || d->unit == UNIT_COUNT)
		return gate_fmt_value(m, v, buf, len);
	if (d->unit == UNIT_NS) {
		if (a >= 1e9)
			snprintf(buf, len, "%.3f s", v / 1e9);
		else if (a >= 1e6)
			snprintf(buf, len, "%.2f ms", v / 1e6);
		else if (a >= 1e3)
			snprintf(buf, len, "%.1f us", v / 1e3);
		else
			snprintf(buf, len, "%.0f ns", v);
	} else {
		if (a >= 1024 * 1024)
			snprintf(buf, len, "%.2f GiB", v / (1024.0 * 1024));
		else if (a >= 1024)
			snprintf(buf, len, "%.1f MiB", v / 1024);
		else
			snprintf(buf, len, "%.0f KiB", v);
	}
	return buf;
}

const char *gate_fmt_value(enum metric_id m, double v, char *buf, size_t len)
{
	const struct metric_def *d = metric_def(m);

	if (isnan(v)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	switch (d ? d->unit : UNIT_COUNT) {
	case UNIT_NS:
		if (v >= 1e9)
			snprintf(buf, len, "%.3f s", v / 1e9);
		else if (v >= 1e6)
			snprintf(buf, len, "%.2f ms", v / 1e6);
		else if (v >= 1e3)
			snprintf(buf, len, "%.1f us", v / 1e3);
		else
			snprintf(buf, len, "%.0f ns", v);
		break;
	case UNIT_KIB:
		if (v >= 1024 * 1024)
			snprintf(buf, len, "%.2f GiB", v / (1024.0 * 1024));
		else if (v >= 1024)
			snprintf(buf, len, "%.1f MiB", v / 1024);
		else
			snprintf(buf, len, "%.0f KiB", v);
		break;
	case UNIT_COUNT:
		if (v >= 1e9)
			snprintf(buf, len, "%.3g G", v / 1e9);
		else if (v >= 1e6)
			snprintf(buf, len, "%.3g M", v / 1e6);
		else
			snprintf(buf, len, v == floor(v) ? "%.0f" : "%.1f", v);
		break;
	}
	return buf;
}

static void vnote(struct comparison *c, int metric, const char *fmt, va_list ap)
{
	if (c->nnotes >= GATE_MAX_NOTES)
		return;
	c->note_metric[c->nnotes] = metric;
	vsnprintf(c->notes[c->nnotes++], GATE_NOTE_LEN, fmt, ap);
}

static void note(struct comparison *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(c, -1, fmt, ap);
	va_end(ap);
}

/* A note that explains metric m's verdict. */
static void note_m(struct comparison *c, int m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(c, m, fmt, ap);
	va_end(ap);
}

static double median_of(const double *x, size_t n)
{
	double *tmp, med;

	if (!n)
		return NAN;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return NAN;
	memcpy(tmp, x, n * sizeof(*tmp));
	med = stats_median_inplace(tmp, n);
	free(tmp);
	return med;
}

static double cv_of(const double *x, size_t n, bool robust)
{
	struct stats_summary s;

	if (n < 2 || stats_summarize(x, n, &s))
		return NAN;
	if (!robust)
		return s.cv;
	return s.median > 0 ? 1.4826 * s.mad / s.median : NAN;
}

static double *copy_values(const double *x, size_t n)
{
	double *c = malloc((n ? n : 1) * sizeof(*c));

	if (c && n)
		memcpy(c, x, n * sizeof(*c));
	return c;
}

/* The distribution-free interval of the median of x (stats_median_interval, on a copy it sorts). */
static bool median_interval_of(const double *x, size_t n, double confidence, double *lo, double *hi)
{
	double *tmp = copy_values(x, n), cov;
	bool ok;

	if (!tmp)
		return false;
	ok = n && !stats_median_interval(tmp, n, confidence, lo, hi, &cov);
	free(tmp);
	return ok;
}

/*
 * Could more new runs settle an inconclusive metric against a stored
 * baseline, which cannot grow? However many new runs there are, the
 * ratio's interval stays at least as wide as the baseline's own median
 * is uncertain: with the new median known exactly at m, it is about
 * [m / bhi, m / blo] ([blo, bhi]: the baseline median's interval). So a
 * pass needs a new median at most (1 + t) blo and a regression one above
 * (1 + t) bhi. When the new median's own interval [nlo, nhi] holds
 * neither, no number of new runs can decide: the baseline's noise forbids
 * it. gm->settle_low/high: the baseline's bound on the ratio at the new
 * median, [nm / bhi, nm / blo].
 */
static bool new_runs_can_settle(const struct gate_side *b, const struct gate_side *n,
				enum metric_id m, double t, double confidence,
				struct gate_metric *gm)
{
	double blo, bhi, nlo, nhi;

	if (!median_interval_of(b->v[m], b->n, confidence, &blo, &bhi) ||
	    !median_interval_of(n->v[m], n->n, confidence, &nlo, &nhi) || blo <= 0 || bhi <= 0)
		return true; /* nothing to tell it by: let the runs say */
	gm->settle_low = gm->new_median / bhi;
	gm->settle_high = gm->new_median / blo;
	return nlo <= (1 + t) * blo || nhi > (1 + t) * bhi;
}

/*
 * The median over a side's runs of runqueue wait + steal, less what the
 * given rates give for each run: per_wake for each of its wakeups,
 * per_cpu for each ns on a CPU. NAN without runs.
 */
static double noise_median(const struct gate_side *s, double per_wake, double per_cpu)
{
	double *x = calloc(s->n ? s->n : 1, sizeof(double)), m;

	if (!x)
		return NAN;
	for (size_t i = 0; i < s->n; i++)
		x[i] = s->noise[i].runq + s->noise[i].steal - per_wake * s->noise[i].wakes -
		       per_cpu * s->noise[i].oncpu;
	m = median_of(x, s->n);
	free(x);
	return m;
}

/*
 * What a run does itself makes it wait: a program that wakes up more often
 * waits for a CPU more often, each time as long (on an idle virtual CPU,
 * ~10 us here), and one that runs longer is preempted more, by whatever
 * else runs there, and loses more to steal. That is its own doing, not a
 * busier machine. So each run's runqueue wait and steal are weighed
 * against the baseline's rates: its wakeups at the baseline's wait per
 * wakeup (wakeup latency), and its on-CPU time at the baseline's
 * preemption wait (the rest of the runqueue wait) and steal per on-CPU ns.
 * The sentinel is the growth of the median of what is left. Preemptions
 * are not counted as the run's own waits: on a busier machine they are
 * what grows (two CPU hogs beside a baseline itself taken on a loaded
 * machine, at 4 ms a wait there, made the runs' own waits explain more
 * than all of the new runs' wait).
 */
static double excess_noise(const struct gate_side *b, const struct gate_side *n)
{
	double wait = 0, wakes = 0, preempt = 0, steal = 0, oncpu = 0, per_wake, per_cpu;

	for (size_t i = 0; i < b->n; i++) {
		const struct metric_noise *x = &b->noise[i];

		wait += x->wake_wait;
		wakes += x->wakes;
		preempt += x->runq > x->wake_wait ? x->runq - x->wake_wait : 0;
		steal += x->steal;
		oncpu += x->oncpu;
	}
	per_wake = wakes > 0 ? wait / wakes : 0;
	per_cpu = oncpu > 0 ? (preempt + steal) / oncpu : 0;
	return noise_median(n, per_wake, per_cpu) - noise_median(b, per_wake, per_cpu);
}

static void sentinel(const struct gate_spec *g, const struct gate_side *b,
		     const struct gate_side *n, struct gate_sentinel *s)
{
	memset(s, 0, sizeof(*s));
	s->base_median = s->new_median = NAN;
	if (!b->have_noise || !n->have_noise || !b->n || !n->n) {
		snprintf(s->why, sizeof(s->why),
			 "runqueue and steal time need the ebpf source on both sides (%s)",
			 !n->have_noise ? "not measured in the new runs"
					: "not measured in the baseline");
		return;
	}
	s->available = true;
	s->base_median = noise_median(b, 0, 0);
	s->new_median = noise_median(n, 0, 0);
	s->excess = excess_noise(b, n);
	/* It only acts on a wall verdict: without one there is no threshold, so no limit. */
	s->limit = NAN;
	if (g->gated[METRIC_WALL]) {
		s->limit = 0.5 * g->threshold[METRIC_WALL] * median_of(b->v[METRIC_WALL], b->n);
		s->fired = s->excess > s->limit;
	}
}

static int compare_metric(const struct gate_spec *g, const struct gate_side *b,
			  const struct gate_side *n, bool paired, const struct comparison *c,
			  enum metric_id m, struct gate_metric *gm)
{
	struct stats_boot_opts bo = {
	    .resamples = c->resamples,
	    .confidence = c->confidence,
	    .seed = c->seed,
	    .paired = paired && b->n == n->n,
	};
	struct stats_ratio_ci ci;
	double t = g->threshold[m];
	int ret;

	memset(gm, 0, sizeof(*gm));
	gm->metric = m;
	gm->threshold = t;
	gm->nb = b->n;
	gm->nn = n->n;
	gm->base_values = copy_values(b->v[m], b->n);
	gm->new_values = copy_values(n->v[m], n->n);
	if (!gm->base_values || !gm->new_values)
		return -ENOMEM;
	gm->base_median = median_of(b->v[m], b->n);
	gm->new_median = median_of(n->v[m], n->n);
	gm->base_cv = cv_of(b->v[m], b->n, false);
	gm->new_cv = cv_of(n->v[m], n->n, false);
	gm->base_rcv = cv_of(b->v[m], b->n, true);
	gm->new_rcv = cv_of(n->v[m], n->n, true);
	gm->ratio = b->n && n->n ? stats_ratio(gm->new_median, gm->base_median) : NAN;
	gm->ci_low = gm->ci_high = NAN;
	gm->settle_low = gm->settle_high = NAN;

	if (b->n < GATE_MIN_RUNS || n->n < GATE_MIN_RUNS) {
		gm->verdict = GATE_INCONCLUSIVE;
		/* A stored baseline cannot grow; in paired mode every added run adds a pair. */
		gm->more_helps = b->n >= GATE_MIN_RUNS || paired;
		snprintf(gm->note, sizeof(gm->note),
			 "too few runs to decide: %zu baseline, %zu new (at least %d each)", b->n,
			 n->n, GATE_MIN_RUNS);
	} else {
		ret = stats_ratio_of_medians(b->v[m], b->n, n->v[m], n->n, &bo, &ci);
		if (ret)
			return ret;
		gm->ratio = ci.ratio;
		gm->ci_low = ci.low;
		gm->ci_high = ci.high;
		if (ci.low > 1 + t) {
			gm->verdict = GATE_REGRESSION;
		} else if (ci.high <= 1 + t) {
			gm->verdict = ci.high < 1 / (1 + t) ? GATE_IMPROVED : GATE_PASS;
		} else {
			gm->verdict = GATE_INCONCLUSIVE;
			/* In paired mode the baseline grows too. */
			gm->more_helps =
			    paired || new_runs_can_settle(b, n, m, t, c->confidence, gm);
		}
	}
	gm->noisy = (!isnan(gm->base_rcv) && gm->base_rcv >= t) ||
		    (!isnan(gm->new_rcv) && gm->new_rcv >= t);

	switch (gm->verdict) {
	case GATE_REGRESSION:
		gm->outcome = GATE_FAIL;
		break;
	case GATE_INCONCLUSIVE:
		gm->outcome = g->inconclusive_fails ? GATE_FAIL : GATE_WARN;
		break;
	default:
		gm->outcome = GATE_OK;
		break;
	}
	if (gm->outcome == GATE_FAIL && metric_def(m)->time && c->nfingerprint_diff) {
		gm->outcome = GATE_WARN;
		snprintf(gm->note, sizeof(gm->note),
			 "a warning, not a failure: the baseline comes from another machine (%s)",
			 c->fingerprint_diff[0]);
	}
	if (gm->outcome == GATE_FAIL && m == METRIC_WALL && c->sentinel.fired) {
		gm->outcome = GATE_WARN;
		snprintf(gm->note, sizeof(gm->note),
			 "a warning, not a failure: runqueue wait + steal grew from %.2f to %.2f "
			 "ms per run, %.2f ms more than the runs' own waits and CPU time explain "
			 "(more than %.2f ms): the machine was busier",
			 c->sentinel.base_median / 1e6, c->sentinel.new_median / 1e6,
			 c->sentinel.excess / 1e6, c->sentinel.limit / 1e6);
	}
	return 0;
}

/* Where the change came from: every gated time metric, and wall always. */
static int explain_gate(const struct gate_spec *g, const struct gate_side *b,
			const struct gate_side *n, struct comparison *c)
{
	struct explain_opts eo = {.seed = c->seed};

	if (!b->runs || !n->runs)
		return 0;
	for (int m = 0; m < METRIC_NR; m++) {
		eo.want[m] = m == METRIC_WALL || (g->gated[m] && metric_def(m)->time);
		eo.threshold[m] = g->gated[m] ? g->threshold[m] : g->default_threshold;
	}
	c->explain = explain_compare(b->runs, b->nruns, n->runs, n->nruns, &eo);
	return c->explain ? 0 : -errno;
}

/* "./build/bench" and "/opt/old/bench" run the same program: compare the last path component. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int gate_compare(const struct gate_spec *g, const struct gate_side *b, const struct gate_side *n,
		 bool paired, struct comparison *c)
{
	char a[32], lo[32], hi[32], th[32], sl[32];
	int ret;

	comparison__free(c);
	c->nnotes = 0;
	c->paired = paired;
	if (!c->seed)
		c->seed = STATS_SEED;
	if (!c->resamples)
		c->resamples = STATS_RESAMPLES;
	if (!c->confidence)
		c->confidence = STATS_CONFIDENCE;
	c->max_runs = g->max_runs;
	c->runs_wall_ns = 0;
	for (size_t i = 0; n->have[METRIC_WALL] && i < n->n; i++)
		c->runs_wall_ns += (uint64_t)n->v[METRIC_WALL][i];
	for (size_t i = 0; paired && b->have[METRIC_WALL] && i < b->n; i++)
		c->runs_wall_ns += (uint64_t)b->v[METRIC_WALL][i];
	c->nfingerprint_diff = 0;
	if (!paired && b->host && n->host)
		c->nfingerprint_diff =
		    gate_fingerprint_diff(b->host, n->host, c->fingerprint_diff, 4);
	sentinel(g, b, n, &c->sentinel);
	if (c->nfingerprint_diff) {
		char all[4 * 160 + 8] = "";

		for (int i = 0; i < c->nfingerprint_diff; i++) {
			strcat(all, i ? "; " : "");
			strcat(all, c->fingerprint_diff[i]);
		}
		note(c,
		     "the baseline was measured on another machine (%s): time verdicts are "
		     "warnings; take the baseline on this machine, or use --baseline-cmd",
		     all);
	}
	if (!paired && c->base_command && c->new_command &&
	    strcmp(base_name(c->base_command), base_name(c->new_command)))
		note(c,
		     "the baseline ran '%.100s' and the new runs '%.100s': the verdict holds only "
		     "if both do the same work",
		     c->base_command, c->new_command);
	if (g->gated[METRIC_WALL] && !c->sentinel.available)
		note(c, "wall is gated without noise sentinels: %s", c->sentinel.why);
	c->nmetrics = 0;
	c->verdict = GATE_PASS;
	c->outcome = GATE_OK;
	for (int m = 0; m < METRIC_NR; m++) {
		struct gate_metric *gm;

		if (!g->gated[m])
			continue;
		if (!b->have[m] || !n->have[m])
			return -EINVAL;
		gm = &c->metrics[c->nmetrics++];
		ret = compare_metric(g, b, n, paired, c, m, gm);
		if (ret)
			return ret;
		if (gm->verdict > c->verdict)
			c->verdict = gm->verdict;
		if (gm->outcome > c->outcome)
			c->outcome = gm->outcome;
		snprintf(th, sizeof(th), "+%g%%", gm->threshold * 100);
		if (gm->noisy)
			note(c,
			     "%s: run-to-run noise (robust cv %.1f%% baseline, %.1f%% new; cv "
			     "%.1f%%, %.1f%%) is as large as the %s threshold: a change of that "
			     "size cannot be told from noise; reduce the noise or raise the "
			     "threshold",
			     metric_def(m)->name, gm->base_rcv * 100, gm->new_rcv * 100,
			     gm->base_cv * 100, gm->new_cv * 100, th);
		if (gm->verdict == GATE_IMPROVED)
			note_m(c, m, "%s improved: %s [%s, %s]; the baseline may be refreshed",
			       metric_def(m)->name, gate_fmt_change(gm->ratio, a, sizeof(a)),
			       gate_fmt_change(gm->ci_low, lo, sizeof(lo)),
			       gate_fmt_change(gm->ci_high, hi, sizeof(hi)));
		if (gm->verdict == GATE_INCONCLUSIVE && !isnan(gm->ci_low) && !gm->more_helps &&
		    !isnan(gm->settle_low))
			note_m(
			    c, m,
			    "%s: the interval [%s, %s] straddles the %s threshold after %zu "
			    "runs, and more runs cannot help: the baseline's own median (%zu runs, "
			    "robust cv %.1f%%) alone keeps it within [%s, %s]; use paired mode "
			    "(--baseline-cmd) or record the baseline with more runs",
			    metric_def(m)->name, gate_fmt_change(gm->ci_low, lo, sizeof(lo)),
			    gate_fmt_change(gm->ci_high, hi, sizeof(hi)), th, gm->nn, gm->nb,
			    gm->base_rcv * 100, gate_fmt_change(gm->settle_low, a, sizeof(a)),
			    gate_fmt_change(gm->settle_high, sl, sizeof(sl)));
		else if (gm->verdict == GATE_INCONCLUSIVE && !isnan(gm->ci_low))
			note_m(c, m,
			       "%s: the interval [%s, %s] straddles the %s threshold after %zu "
			       "runs: %s, reduce the noise, or choose a threshold the noise allows",
			       metric_def(m)->name, gate_fmt_change(gm->ci_low, lo, sizeof(lo)),
			       gate_fmt_change(gm->ci_high, hi, sizeof(hi)), th, gm->nn,
			       c->offline ? "record more runs (--runs)"
					  : "allow more runs (--max-runs)");
		/* Said once: in wall's own note when it turned a failure into a warning. */
		if (m == METRIC_WALL && c->sentinel.fired && !gm->note[0])
			note(
			    c,
			    "noise sentinels: runqueue wait + steal grew from %.2f to %.2f ms per "
			    "run, %.2f ms more than the runs' own waits and CPU time explain (more "
			    "than %.2f ms, half the wall threshold): the machine was busier, so a "
			    "wall verdict is a warning at most",
			    c->sentinel.base_median / 1e6, c->sentinel.new_median / 1e6,
			    c->sentinel.excess / 1e6, c->sentinel.limit / 1e6);
	}
	return explain_gate(g, b, n, c);
}

void comparison__free(struct comparison *c)
{
	if (!c)
		return;
	explain__free(c->explain);
	c->explain = NULL;
	for (int i = 0; i < c->nmetrics; i++) {
		free(c->metrics[i].base_values);
		free(c->metrics[i].new_values);
		c->metrics[i].base_values = c->metrics[i].new_values = NULL;
	}
	c->nmetrics = 0;
}

bool gate_wants_more(const struct comparison *c)
{
	/* A regression that fails the gate already decides it: more runs change nothing. */
	for (int i = 0; i < c->nmetrics; i++)
		if (c->metrics[i].verdict == GATE_REGRESSION && c->metrics[i].outcome == GATE_FAIL)
			return false;
	for (int i = 0; i < c->nmetrics; i++)
		if (c->metrics[i].verdict == GATE_INCONCLUSIVE && c->metrics[i].more_helps)
			return true;
	return false;
}
