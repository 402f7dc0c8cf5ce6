// SPDX-License-Identifier: MIT
/* Per-run figures for summaries and the gate. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "run.h"
#include "stats.h"

static const struct metric_def defs[METRIC_NR] = {
    [METRIC_WALL] = {"wall", UNIT_NS, true},
    [METRIC_CPU] = {"cpu", UNIT_NS, true},
    [METRIC_ON_CPU] = {"on_cpu", UNIT_NS, true},
    [METRIC_RUNQUEUE] = {"runqueue", UNIT_NS, true},
    [METRIC_BLOCKED] = {"blocked", UNIT_NS, true},
    [METRIC_UNINTERRUPTIBLE] = {"uninterruptible", UNIT_NS, true},
    [METRIC_VOLUNTARY] = {"voluntary_switches", UNIT_COUNT, false},
    [METRIC_INVOLUNTARY] = {"involuntary_switches", UNIT_COUNT, false},
    [METRIC_MAX_RSS] = {"max_rss", UNIT_KIB, false},
    [METRIC_INSTRUCTIONS] = {"instructions", UNIT_COUNT, false},
};

const struct metric_def *metric_def(enum metric_id m)
{
	return m < METRIC_NR ? &defs[m] : NULL;
}

int metric_by_name(const char *name)
{
	for (int i = 0; i < METRIC_NR; i++)
		if (!strcmp(name, defs[i].name))
			return i;
	return -1;
}

const char *metric_names(void)
{
	return "wall, cpu, on_cpu, runqueue, blocked, uninterruptible, voluntary_switches, "
	       "involuntary_switches, max_rss, instructions";
}

const char *metric_unit_name(enum metric_unit u)
{
	switch (u) {
	case UNIT_NS:
		return "ns";
	case UNIT_COUNT:
		return "count";
	case UNIT_KIB:
		return "KiB";
	}
	return "?";
}

bool run_source_active(const struct run *r, const char *name)
{
	for (int i = 0; i < r->quality.nsources; i++)
		if (!strcmp(r->quality.sources[i].name, name))
			return r->quality.sources[i].active;
	return false;
}

static const char *source_reason(const struct run *r, const char *name)
{
	for (int i = 0; i < r->quality.nsources; i++)
		if (!strcmp(r->quality.sources[i].name, name) && !r->quality.sources[i].active)
			return r->quality.sources[i].reason;
	return NULL;
}

bool metric_run_counts(const struct run *r)
{
	return !r->warmup && r->status == RUN_EXITED && r->exit_code == 0 && !r->term_signal;
}

int metric_value(const struct run *r, enum metric_id m, double *v, char *why, size_t whylen)
{
	const struct run_totals *t = &r->totals;

	if (why && whylen)
		why[0] = '\0';
	switch (m) {
	case METRIC_WALL:
		*v = (double)r->wall_ns;
		return 0;
	case METRIC_CPU:
		*v = (double)(r->ru.user_ns + r->ru.sys_ns);
		return 0;
	case METRIC_MAX_RSS:
		*v = (double)r->ru.max_rss_kb;
		return 0;
	case METRIC_INSTRUCTIONS:
		if (r->have_instructions) {
			*v = (double)r->instructions;
			return 0;
		}
		if (why && source_reason(r, "perf"))
			snprintf(why, whylen, "no instruction counter: %s",
				 source_reason(r, "perf"));
		else if (why)
			snprintf(why, whylen, "no instruction counter in this run");
		return -ENODATA;
	case METRIC_ON_CPU:
	case METRIC_RUNQUEUE:
	case METRIC_BLOCKED:
	case METRIC_UNINTERRUPTIBLE:
	case METRIC_VOLUNTARY:
	case METRIC_INVOLUNTARY:
		break;
	default:
		return -EINVAL;
	}
	if (!run_source_active(r, "ebpf")) {
		if (why && source_reason(r, "ebpf"))
			snprintf(why, whylen, "ebpf unavailable: %s", source_reason(r, "ebpf"));
		else if (why)
			snprintf(why, whylen, "the ebpf source was not used in this run");
		return -ENODATA;
	}
	/* Lost records' times are in the totals (account.c); a thread with no record is not. */
	if (r->quality.unsettled) {
		if (why)
			snprintf(
			    why, whylen,
			    "%llu thread%s without a final record in run %d: its totals lack %s",
			    (unsigned long long)r->quality.unsettled,
			    r->quality.unsettled == 1 ? "" : "s", r->index + 1,
			    r->quality.unsettled == 1 ? "it" : "them");
		return -ENODATA;
	}
	switch (m) {
	case METRIC_ON_CPU:
		*v = (double)t->state_ns[TSA_ST_ONCPU];
		break;
	case METRIC_RUNQUEUE:
		*v = (double)t->state_ns[TSA_ST_RUNQ];
		break;
	case METRIC_BLOCKED:
		*v = (double)(t->state_ns[TSA_ST_SLEEP] + t->state_ns[TSA_ST_DISK]);
		break;
	case METRIC_UNINTERRUPTIBLE:
		*v = (double)t->state_ns[TSA_ST_DISK];
		break;
	case METRIC_VOLUNTARY:
		*v = (double)t->voluntary;
		break;
	default:
		*v = (double)t->involuntary;
		break;
	}
	return 0;
}

int metric_noise(const struct run *r, struct metric_noise *p)
{
	if (!run_source_active(r, "ebpf"))
		return -ENODATA;
	p->runq = (double)r->totals.state_ns[TSA_ST_RUNQ];
	p->steal = (double)r->totals.steal_ns;
	p->wakes = (double)r->totals.wakeup_lat_count;
	p->wake_wait = (double)r->totals.wakeup_lat_sum;
	p->oncpu = (double)r->totals.state_ns[TSA_ST_ONCPU];
	return 0;
}

int metrics_summarize(const struct run *runs, size_t n, struct metric_summary out[METRIC_NR])
{
	double *v = malloc((n ? n : 1) * sizeof(*v));
	size_t counted = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		counted += metric_run_counts(&runs[i]);
	for (int m = 0; m < METRIC_NR; m++) {
		struct metric_summary *ms = &out[m];
		struct stats_summary st;
		size_t k = 0;

		memset(ms, 0, sizeof(*ms));
		ms->available = counted > 0;
		if (!counted)
			snprintf(ms->why, sizeof(ms->why), "no measured run completed");
		for (size_t i = 0; i < n && ms->available; i++) {
			if (!metric_run_counts(&runs[i]))
				continue;
			if (metric_value(&runs[i], m, &v[k], ms->why, sizeof(ms->why)))
				ms->available = false;
			k++;
		}
		if (!ms->available || stats_summarize(v, k, &st)) {
			ms->available = false;
			continue;
		}
		ms->n = st.n;
		ms->median = st.median;
		ms->mean = st.mean;
		ms->stddev = st.stddev;
		ms->cv = st.cv;
		ms->min = st.min;
		ms->max = st.max;
		ms->mad = st.mad;
		ms->outliers = st.outliers;
	}
	free(v);
	return (int)counted;
}
