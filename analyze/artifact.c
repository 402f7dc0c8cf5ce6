// SPDX-License-Identifier: MIT
/* The JSON artifact writer. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "outfile.h"

#include "artifact.h"
#include "artifact_fields.h"
#include "artifact_json.h"
#include "artifact_timeline.h"
#include "gate.h"
#include "jsonw.h"
#include "metrics.h"
#include "bashprof.h"
#include "explain.h"
#include "parts.h"
#include "run.h"
#include "stacks.h"
#include "status.h"

static void add_str(cJSON *o, const char *name, const char *s)
{
	cJSON_AddStringToObject(o, name, s ? s : "");
}

/*
 * v with the fewest significant digits, from prec, that read back as v: the
 * report of an artifact prints what the run printed. Six digits were not
 * enough: the table rounds again (%.3f), so a residual of 11.8314878% was
 * stored as 11.8315 and reported as 11.832% (11.831% live); a percent
 * drawn evenly below 30 came back different 3.5% of the time, and under
 * load a procfs run's residual is several percent.
 */
static void fmt_exact(char *buf, size_t len, double v, int prec)
{
	for (; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}

static void add_frac(cJSON *o, const char *name, double v)
{
	char buf[40];

	fmt_exact(buf, sizeof(buf), v, 6);
	cJSON_AddRawToObject(o, name, buf);
}

static void add_u64_or_null(cJSON *o, const char *name, uint64_t v, bool null)
{
	if (null)
		cJSON_AddNullToObject(o, name);
	else
		add_u64(o, name, v);
}

/* Off-CPU time a source did not split by state is null there, and in the residual. */
static cJSON *states_json(cJSON *o, const uint64_t *st, uint64_t residual, uint32_t unmeasured)
{
	for (size_t i = 0; i < artifact_nstate_fields; i++) {
		const struct artifact_state_field *f = &artifact_state_fields[i];

		add_u64_or_null(o, f->name, st[f->state], unmeasured & f->unmeasured);
	}
	add_u64(o, "residual_ns", residual);
	return o;
}

/*
 * A row's counts, in the table's order (artifact_fields.h): null where the
 * row's source could not count them. A sum over threads one of which could
 * not count it is no count either.
 */
static void counts_json(cJSON *o, enum artifact_row kind, const void *row, uint32_t unmeasured,
			bool ebpf)
{
	for (size_t i = 0; i < artifact_ncount_fields; i++) {
		const struct artifact_count_field *f = &artifact_count_fields[i];
		size_t off = artifact_field_off(f, kind);

		if (off == ARTIFACT_FIELD_NONE)
			continue;
		add_u64_or_null(o, f->name, *(const uint64_t *)((const char *)row + off),
				(unmeasured & f->unmeasured) || (f->ebpf_only && !ebpf));
	}
}

static cJSON *latency_json(uint64_t sum, uint64_t n, uint64_t max)
{
	cJSON *o = cJSON_CreateObject();

	if (n)
		add_u64(o, "avg", sum / n);
	else
		cJSON_AddNullToObject(o, "avg");
	if (n)
		add_u64(o, "max", max);
	else
		cJSON_AddNullToObject(o, "max");
	add_u64(o, "count", n);
	return o;
}

static cJSON *hist_json(const uint32_t hist[TSA_HIST_STATES][TSA_HIST_SLOTS])
{
	static const int states[TSA_HIST_STATES] = {TSA_ST_RUNQ, TSA_ST_SLEEP, TSA_ST_DISK,
						    TSA_ST_STOPPED};
	cJSON *o = cJSON_CreateObject();

	for (int h = 0; h < TSA_HIST_STATES; h++) {
		cJSON *a = cJSON_CreateArray();
		int last = -1;

		for (int i = 0; i < TSA_HIST_SLOTS; i++)
			if (hist[h][i])
				last = i;
		for (int i = 0; i <= last; i++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(hist[h][i]));
		cJSON_AddItemToObject(o, state_name(states[h]), a);
	}
	return o;
}

static cJSON *exit_json(int ws, bool exited)
{
	cJSON *o = cJSON_CreateObject();
	char sig[32];

	if (!exited) {
		cJSON_AddNullToObject(o, "code");
		cJSON_AddNullToObject(o, "signal");
		return o;
	}
	if ((ws & 0x7f) == 0) {
		cJSON_AddNumberToObject(o, "code", (ws >> 8) & 0xff);
		cJSON_AddNullToObject(o, "signal");
	} else {
		cJSON_AddNullToObject(o, "code");
		cJSON_AddNumberToObject(o, "signal", ws & 0x7f);
		add_str(o, "signal_name", status_signame(ws & 0x7f, sig, sizeof(sig)));
		cJSON_AddBoolToObject(o, "core_dumped", (ws & 0x80) != 0);
	}
	return o;
}

static const char *acct_source_name(int src)
{
	switch (src) {
	case ACCT_SRC_EBPF:
		return "ebpf";
	case ACCT_SRC_PROC:
		return "procfs";
	case ACCT_SRC_TASKSTATS:
		return "taskstats";
	}
	return "unknown";
}

/* What /proc samples said of the thread: its figures (procfs source) or a cross-check. */
static cJSON *sampled_json(const struct thread_acct *t)
{
	const struct thread_sampled *s = &t->sampled;
	cJSON *o;

	if (!t->have_sampled)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	add_u64(o, "on_cpu_ns", s->on_cpu_ns);
	add_u64(o, "runqueue_ns", s->runqueue_ns);
	add_u64(o, "slices", s->slices);
	cJSON_AddStringToObject(o, "counters_from", s->from_birth ? "birth" : "first_sample");
	cJSON_AddBoolToObject(o, "counters_final", s->final);
	add_u64(o, "unobserved_max_ns", s->unobserved_max_ns);
	add_u64(o, "samples", s->samples);
	add_i64(o, "first_sample_ns", s->first_ns);
	add_i64(o, "last_sample_ns", s->last_ns);
	add_sampled_states(o, s);
	return o;
}

static cJSON *thread_json(const struct thread_acct *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "tid", t->tid);
	if (t->tid_before_exec)
		cJSON_AddNumberToObject(o, "tid_before_exec", t->tid_before_exec);
	cJSON_AddNumberToObject(o, "pid", t->pid);
	cJSON_AddNumberToObject(o, "ppid", t->ppid);
	add_str(o, "comm", t->comm);
	add_i64(o, "start_ns", t->start_ns);
	add_i64(o, "end_ns", t->end_ns);
	add_u64(o, "lifetime_ns", t->lifetime_ns);
	states_json(o, t->state_ns, t->residual_ns, t->unmeasured);
	add_str(o, "accounting_source", acct_source_name(t->source));
	/* What the source could not measure is null, never 0. */
	counts_json(o, ARTIFACT_ROW_THREAD, t, t->unmeasured, t->source == ACCT_SRC_EBPF);
	if (t->unmeasured & ACCT_NO_WAKEUPS)
		cJSON_AddNullToObject(o, "wakeup_latency_ns");
	else
		cJSON_AddItemToObject(
		    o, "wakeup_latency_ns",
		    latency_json(t->wakeup_lat_sum, t->wakeup_lat_count, t->wakeup_lat_max));
	if (t->unmeasured & ACCT_NO_HIST)
		cJSON_AddNullToObject(o, "offcpu_hist_log2_us");
	else
		cJSON_AddItemToObject(o, "offcpu_hist_log2_us", hist_json(t->hist));
	cJSON_AddItemToObject(o, "sampled", sampled_json(t));
	if (t->source == ACCT_SRC_PROC)
		cJSON_AddBoolToObject(o, "counters_from_exit_record", t->counters_from_exit);
	if (t->have_delays) {
		cJSON *d = cJSON_CreateObject();

		for (int i = 0; i < DELAY_NR; i++) {
			cJSON *c;

			if (!t->delays[i].available) {
				cJSON_AddNullToObject(d, delay_name(i));
				continue;
			}
			c = cJSON_CreateObject();
			add_u64(c, "count", t->delays[i].count);
			add_u64(c, "total_ns", t->delays[i].total_ns);
			if (t->delays[i].have_extremes) {
				add_u64(c, "max_ns", t->delays[i].max_ns);
				add_u64(c, "min_ns", t->delays[i].min_ns);
			}
			if (t->delays[i].dropped)
				cJSON_AddNumberToObject(c, "dropped", t->delays[i].dropped);
			if (t->delays[i].from_ebpf)
				cJSON_AddStringToObject(c, "measured_by", "ebpf");
			cJSON_AddItemToObject(d, delay_name(i), c);
		}
		for (int i = 0; i < DELAY_NR; i++) {
			cJSON *refused = cJSON_GetObjectItem(d, "refused");

			if (!t->delays[i].refused)
				continue;
			if (!refused)
				refused = cJSON_AddArrayToObject(d, "refused");
			cJSON_AddItemToArray(refused, cJSON_CreateString(delay_name(i)));
		}
		cJSON_AddNumberToObject(d, "version", t->delays_version);
		cJSON_AddBoolToObject(d, "final", t->delays_final);
		cJSON_AddItemToObject(o, "delays", d);
	} else {
		cJSON_AddNullToObject(o, "delays");
		if (t->tid_before_exec)
			add_str(
			    o, "delays_reason",
			    "an exec from a thread other than the main one gave this thread the "
			    "main thread's tid and start time: no taskstats exit record can be "
			    "proven to be its");
	}
	if (t->have_below) {
		cJSON *b = cJSON_CreateObject();

		add_u64(b, "count", t->below_count);
		add_u64(b, "total_ns", t->below_ns);
		add_u64(b, "uninterruptible_ns", t->below_disk_ns);
		cJSON_AddItemToObject(o, "below_threshold", b);
	} else {
		cJSON_AddNullToObject(o, "below_threshold");
	}
	if (t->have_kernel) {
		cJSON *k = cJSON_CreateObject();

		add_u64(k, "sum_exec_runtime_ns", t->k_sum_exec_ns);
		add_u64(k, "run_delay_ns", t->k_run_delay_ns);
		add_u64(k, "pcount", t->k_pcount);
		add_u64(k, "nvcsw", t->k_nvcsw);
		add_u64(k, "nivcsw", t->k_nivcsw);
		{
			cJSON *l = cJSON_CreateObject();

			add_u64(l, "out_runnable_ns", t->klag_out_run_ns);
			add_u64(l, "out_blocked_ns", t->klag_out_blocked_ns);
			add_u64(l, "in_ns", t->klag_in_ns);
			add_u64(l, "switches", t->klag_switches);
			cJSON_AddItemToObject(k, "clock_lag", l);
		}
		cJSON_AddItemToObject(o, "kernel", k);
	} else {
		cJSON_AddNullToObject(o, "kernel");
	}
	add_u64(o, "task_start_ns", t->task_start_ns);
	add_u64(o, "boot_start_ns", t->boot_start_ns);
	cJSON_AddBoolToObject(o, "first_state_known", t->first_state_known);
	cJSON_AddBoolToObject(o, "alive_at_end", (t->flags & TSA_F_SURVIVOR) != 0);
	cJSON_AddNumberToObject(o, "execs", t->execs);
	return o;
}

static cJSON *proc_json(const struct proc_acct *p)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "pid", p->pid);
	cJSON_AddNumberToObject(o, "ppid", p->ppid);
	add_str(o, "comm", p->comm);
	add_i64(o, "start_ns", p->start_ns);
	add_i64(o, "end_ns", p->end_ns);
	cJSON_AddItemToObject(o, "exit", exit_json(p->exit_status, p->exited));
	cJSON_AddBoolToObject(o, "alive_at_end", p->alive);
	cJSON_AddNumberToObject(o, "threads", p->threads);
	cJSON_AddNumberToObject(o, "execs", p->execs);
	add_u64(o, "thread_lifetime_ns", p->thread_lifetime_ns);
	states_json(o, p->state_ns, p->residual_ns, p->unmeasured);
	return o;
}

static cJSON *totals_json(const struct run_totals *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "processes", t->processes);
	cJSON_AddNumberToObject(o, "threads", t->threads);
	add_u64(o, "lifetime_ns", t->lifetime_ns);
	states_json(o, t->state_ns, t->residual_ns, t->unmeasured);
	counts_json(o, ARTIFACT_ROW_TOTALS, t, t->unmeasured, true);
	if (t->unmeasured & ACCT_NO_WAKEUPS)
		cJSON_AddNullToObject(o, "wakeup_latency_ns");
	else
		cJSON_AddItemToObject(
		    o, "wakeup_latency_ns",
		    latency_json(t->wakeup_lat_sum, t->wakeup_lat_count, t->wakeup_lat_max));
	add_u64(o, "max_threads_alive", t->max_threads_alive);
	add_u64_or_null(o, "before_tracking_cpu_ns", t->before_tracking_cpu_ns,
			!t->before_tracking_known);
	return o;
}

static cJSON *check_json(const struct cross_check *c, const char *unit)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "available", c->available);
	if (!c->available) {
		add_str(o, "reason", c->reason);
		return o;
	}
	cJSON_AddNumberToObject(o, "compared", c->compared);
	cJSON_AddNumberToObject(o, "short_lived", c->short_lived);
	add_frac(o, "total_fraction", c->total);
	add_u64(o, "sum_ebpf", c->sum_ebpf);
	add_u64(o, "sum_kernel", c->sum_kernel);
	add_frac(o, "worst_fraction", c->worst);
	add_u64(o, unit, c->worst_abs);
	if (c->worst_tid)
		cJSON_AddNumberToObject(o, "worst_tid", c->worst_tid);
	if (c->directional) {
		add_frac(o, "unseen_fraction", c->unseen);
		add_u64(o, "excess_ns", c->excess_ns);
	}
	return o;
}

static cJSON *taskstats_json(const struct taskstats_quality *t)
{
	cJSON *o;

	if (!t->active)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	add_u64(o, "exit_records", t->exit_records);
	add_u64(o, "queried", t->queried);
	add_u64(o, "attached", t->attached);
	add_u64(o, "identity_mismatches", t->identity_mismatches);
	add_u64(o, "unmatched_records", t->unmatched_records);
	add_u64(o, "threads_without_delays", t->threads_without);
	add_u64(o, "unreadable_records", t->unreadable);
	add_u64(o, "implausible_counters", t->implausible);
	add_u64(o, "dropped_waits", t->dropped_waits);
	add_u64(o, "block_io_from_ebpf", t->blkio_from_ebpf);
	add_u64(o, "overruns", t->overruns);
	add_u64(o, "foreign_records", t->foreign);
	if (t->cpu_after_exit_threads) {
		add_u64(o, "cpu_after_exit_records_ns", t->cpu_after_exit_ns);
		add_u64(o, "cpu_after_exit_records_threads", t->cpu_after_exit_threads);
	} else {
		cJSON_AddNullToObject(o, "cpu_after_exit_records_ns");
		cJSON_AddNullToObject(o, "cpu_after_exit_records_threads");
	}
	if (t->version_max) {
		cJSON_AddNumberToObject(o, "version_min", t->version_min);
		cJSON_AddNumberToObject(o, "version_max", t->version_max);
	}
	return o;
}

static void add_tristate(cJSON *o, const char *name, int v)
{
	if (v < 0)
		cJSON_AddNullToObject(o, name);
	else
		cJSON_AddBoolToObject(o, name, v > 0);
}

static cJSON *delayacct_json(const struct delayacct_quality *d)
{
	cJSON *o;

	if (!d->known)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	add_tristate(o, "before", d->before);
	add_tristate(o, "during", d->during);
	cJSON_AddBoolToObject(o, "switched_on", d->switched_on);
	cJSON_AddBoolToObject(o, "non_cpu_live", d->non_cpu_live);
	if (!d->non_cpu_live)
		add_str(o, "reason", d->reason);
	return o;
}

static cJSON *procfs_json(const struct procfs_quality *p)
{
	cJSON *o;

	if (!p->active)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	add_u64(o, "sample_interval_ns", p->sample_ns);
	add_u64(o, "scans", p->scans);
	add_u64(o, "max_scan_ns", p->max_scan_ns);
	add_u64(o, "max_gap_ns", p->max_gap_ns);
	add_u64(o, "threads_seen", p->threads_seen);
	add_u64(o, "threads_new", p->threads_new);
	add_u64(o, "threads_gone", p->threads_gone);
	add_u64(o, "identity_changes", p->identity_changes);
	add_u64(o, "unreadable", p->unreadable);
	add_u64(o, "unseen_cpu_ns", p->unseen_cpu_ns);
	add_str(o, "discovery", p->discovery);
	return o;
}

static cJSON *quality_json(const struct run_quality *q, bool ebpf)
{
	cJSON *o = cJSON_CreateObject(), *act = cJSON_CreateArray(), *un = cJSON_CreateArray();
	cJSON *cc, *lost, *notes;

	for (int i = 0; i < q->nsources; i++) {
		if (q->sources[i].active) {
			cJSON_AddItemToArray(act, cJSON_CreateString(q->sources[i].name));
		} else {
			cJSON *u = cJSON_CreateObject();

			add_str(u, "source", q->sources[i].name);
			add_str(u, "reason", q->sources[i].reason);
			cJSON_AddItemToArray(un, u);
		}
	}
	cJSON_AddItemToObject(o, "sources_active", act);
	cJSON_AddItemToObject(o, "sources_unavailable", un);
	if (q->ebpf_load.failed) {
		cJSON *f = cJSON_CreateObject();

		add_str(f, "object", q->ebpf_load.object);
		add_str(f, "kind", q->ebpf_load.is_map ? "map" : "program");
		add_str(f, "message", q->ebpf_load.message);
		cJSON_AddItemToObject(o, "ebpf_load_failure", f);
	} else {
		cJSON_AddNullToObject(o, "ebpf_load_failure");
	}
	add_u64(o, "lost_events", q->lost_events);
	add_u64(o, "map_full_drops", q->map_full_drops);
	add_u64(o, "stack_drops", q->stack_drops);
	add_u64(o, "taskstats_drops", q->taskstats_drops);
	add_u64(o, "unexpected_transitions", q->unexpected_transitions);
	add_u64(o, "untraced_switch_ins", q->untraced_switch_ins);
	add_u64(o, "unsettled_threads", q->unsettled);
	add_frac(o, "residual_percent", q->residual_percent);
	lost = cJSON_CreateObject();
	add_u64(lost, "records", q->lost.records);
	add_u64(lost, "lifetime_ns", q->lost.lifetime_ns);
	states_json(lost, (const uint64_t *)q->lost.state_ns, 0, 0);
	cJSON_DeleteItemFromObject(lost, "residual_ns");
	cJSON_AddItemToObject(o, "lost_threads", lost);
	cc = cJSON_CreateObject();
	cJSON_AddItemToObject(cc, "runnable_vs_kernel", check_json(&q->runnable, "worst_ns"));
	cJSON_AddItemToObject(cc, "on_cpu_vs_sum_exec_runtime", check_json(&q->on_cpu, "worst_ns"));
	cJSON_AddItemToObject(cc, "runqueue_vs_run_delay", check_json(&q->runqueue, "worst_ns"));
	cJSON_AddItemToObject(cc, "slices_vs_pcount", check_json(&q->slices, "worst_count"));
	cJSON_AddItemToObject(cc, "switches_vs_nvcsw_nivcsw",
			      check_json(&q->switches, "worst_count"));
	cJSON_AddItemToObject(cc, "tree_cpu_vs_rusage", check_json(&q->tree_cpu, "worst_ns"));
	{
		cJSON *ts = check_json(&q->ts_cpu, "worst_ns");

		if (q->ts_cpu.available)
			add_u64(ts, "after_record_ns", q->ts_cpu_after_ns);
		cJSON_AddItemToObject(cc, "taskstats_cpu_vs_runqueue", ts);
	}
	/* Measured from scheduler events: nothing to say without eBPF (procfs, taskstats). */
	if (ebpf) {
		add_i64(cc, "kernel_shift_ns", q->kernel_shift_ns);
		add_u64(cc, "kernel_clock_lag_ns", q->klag_ns);
		add_u64(cc, "kernel_clock_lag_switches", q->klag_switches);
		add_u64(cc, "unstamped_wait_ns", q->unstamped_wait_ns);
	} else {
		cJSON_AddNullToObject(cc, "kernel_shift_ns");
		cJSON_AddNullToObject(cc, "kernel_clock_lag_ns");
		cJSON_AddNullToObject(cc, "kernel_clock_lag_switches");
		cJSON_AddNullToObject(cc, "unstamped_wait_ns");
	}
	cJSON_AddItemToObject(o, "cross_check", cc);
	cJSON_AddItemToObject(cc, "procfs_on_cpu_vs_ebpf",
			      check_json(&q->procfs_on_cpu, "worst_ns"));
	cJSON_AddItemToObject(cc, "procfs_runqueue_vs_ebpf",
			      check_json(&q->procfs_runqueue, "worst_ns"));
	cJSON_AddItemToObject(o, "taskstats", taskstats_json(&q->ts));
	cJSON_AddItemToObject(o, "procfs", procfs_json(&q->procfs));
	cJSON_AddItemToObject(o, "delayacct", delayacct_json(&q->delayacct));
	notes = cJSON_CreateArray();
	for (int i = 0; i < q->nnotes; i++)
		cJSON_AddItemToArray(notes, cJSON_CreateString(q->notes[i]));
	cJSON_AddItemToObject(o, "notes", notes);
	return o;
}

static cJSON *frames_json(const struct run_stacks *s, uint32_t idx)
{
	cJSON *a = cJSON_CreateArray();

	if (idx >= s->ntraces)
		return a;
	for (uint32_t i = 0; i < s->traces[idx].nframes; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(s->traces[idx].frames[i]));
	return a;
}

static const char *trace_status(const struct run_stacks *s, uint32_t idx)
{
	return idx < s->ntraces ? stack_status_name(s->traces[idx].status) : "unknown";
}

static void add_stack_pair(cJSON *o, const struct run_stacks *s, uint32_t u, uint32_t k)
{
	cJSON_AddItemToObject(o, "user", frames_json(s, u));
	cJSON_AddItemToObject(o, "kernel", frames_json(s, k));
	add_str(o, "user_status", trace_status(s, u));
	add_str(o, "kernel_status", trace_status(s, k));
	bool ut = u < s->ntraces && s->traces[u].truncated;
	bool kt = k < s->ntraces && s->traces[k].truncated;

	cJSON_AddBoolToObject(o, "truncated", ut || kt);
	/* Each half's own, so that a reader marks the half that was cut (artifact_read.c). */
	cJSON_AddBoolToObject(o, "user_truncated", ut);
	cJSON_AddBoolToObject(o, "kernel_truncated", kt);
	cJSON_AddNumberToObject(o, "repaired_frames", u < s->ntraces ? s->traces[u].repaired : 0);
}

static cJSON *stacks_json(const struct run *r)
{
	const struct run_stacks *s = r->stacks;
	cJSON *o, *d, *sym, *off, *on;

	if (!s)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "offcpu", s->offcpu);
	cJSON_AddBoolToObject(o, "oncpu", s->oncpu);
	cJSON_AddBoolToObject(o, "waker", s->waker);
	add_u64(o, "offcpu_min_ns", s->offcpu_min_ns);
	if (s->oncpu) {
		cJSON_AddNumberToObject(o, "oncpu_freq_hz", s->freq);
		add_u64(o, "oncpu_period_ns", s->oncpu_period_ns);
		add_u64(o, "oncpu_samples", s->oncpu_samples);
	} else {
		cJSON_AddNullToObject(o, "oncpu_freq_hz");
		if (s->oncpu_reason[0])
			add_str(o, "oncpu_reason", s->oncpu_reason);
	}
	sym = cJSON_AddObjectToObject(o, "symbols");
	if (s->kernel_symbols[0])
		add_str(sym, "kernel", s->kernel_symbols);
	else
		cJSON_AddNullToObject(sym, "kernel");
	if (s->user_symbols[0])
		add_str(sym, "user", s->user_symbols);
	else
		cJSON_AddNullToObject(sym, "user");
	d = cJSON_AddObjectToObject(o, "drops");
	add_u64(d, "kernel_stack_failed", s->drops.kstack_fail);
	add_u64(d, "user_stack_failed", s->drops.ustack_fail);
	add_u64(d, "stack_map_full", s->drops.map_full);
	add_u64(d, "truncated", s->drops.truncated);
	add_u64(d, "aggregate_full", s->drops.agg_full);
	add_u64(d, "aggregate_full_ns", s->drops.agg_full_ns);
	add_u64(d, "pending_lost", s->drops.pending_lost);
	add_u64(d, "waker_missed", s->drops.waker_missed);
	add_u64(d, "oncpu_full", s->drops.oncpu_full);
	add_u64(d, "mapping_records_lost", s->drops.perf_lost);
	add_u64(d, "unresolved_user_frames", s->drops.unresolved);
	add_u64(d, "unwind_incomplete", s->drops.cut);
	off = cJSON_AddArrayToObject(o, "offcpu_stacks");
	on = cJSON_AddArrayToObject(o, "oncpu_stacks");
	for (size_t i = 0; i < s->naggs; i++) {
		const struct stack_agg *a = &s->aggs[i];
		cJSON *e = cJSON_CreateObject();

		cJSON_AddNumberToObject(e, "pid", a->pid);
		cJSON_AddNumberToObject(e, "tid", a->tid);
		add_str(e, "comm", stack_agg_comm(r, a));
		if (a->kind == STACK_OFFCPU)
			add_str(e, "state", a->state == TSA_ST_DISK ? "D" : "S");
		add_u64(e, "count", a->count);
		if (a->kind == STACK_OFFCPU)
			add_u64(e, "total_ns", a->total_ns);
		add_stack_pair(e, s, a->ustack, a->kstack);
		if (a->kind == STACK_OFFCPU && a->has_waker) {
			cJSON *w = cJSON_CreateObject();

			cJSON_AddNumberToObject(w, "pid", a->waker_pid);
			cJSON_AddNumberToObject(w, "tid", a->waker_tid);
			add_str(w, "comm", a->waker_comm);
			add_stack_pair(w, s, a->waker_ustack, a->waker_kstack);
			cJSON_AddItemToObject(e, "waker", w);
		}
		cJSON_AddItemToArray(a->kind == STACK_OFFCPU ? off : on, e);
	}
	return o;
}

/*
 * points: each interval's totals as compact rows, one raw JSON text (up to
 * RUN_STREAM_POINTS_MAX rows: a few MB, not a cJSON node per number).
 */
static cJSON *stream_points_json(const struct run_stream *st)
{
	static const char *const row[] = {"start_ns",	 "end_ns",	"on_cpu_ns",
					  "runqueue_ns", "sleeping_ns", "uninterruptible_ns",
					  "stopped_ns"};
	cJSON *o = cJSON_CreateObject(), *r = cJSON_CreateArray();
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	for (size_t i = 0; i < sizeof(row) / sizeof(row[0]); i++)
		cJSON_AddItemToArray(r, cJSON_CreateString(row[i]));
	cJSON_AddItemToObject(o, "row", r);
	f = open_memstream(&text, &len);
	if (!f) {
		cJSON_Delete(o);
		return NULL;
	}
	fputc('[', f);
	for (size_t i = 0; i < st->npoints; i++) {
		const struct run_stream_point *p = &st->points[i];

		fprintf(f, "%s[%" PRId64 ",%" PRId64, i ? "," : "", p->start_ns, p->end_ns);
		for (int k = 0; k < TSA_ST_NR; k++)
			fprintf(f, ",%" PRId64, p->state_ns[k]);
		fputc(']', f);
	}
	fputc(']', f);
	if (fclose(f)) {
		free(text);
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddItemToObject(o, "intervals", cJSON_CreateRaw(text));
	free(text);
	add_u64(o, "not_kept", st->points_beyond);
	return o;
}

/* --interval: what became of the run's lines; null without --interval. */
static cJSON *stream_json(const struct run *r)
{
	const struct run_stream *st = &r->stream;
	cJSON *o, *pts;

	if (!st->on)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "nonblocking", st->nonblocking);
	if (st->nonblocking)
		cJSON_AddNullToObject(o, "blocking_reason");
	else
		add_str(o, "blocking_reason", st->blocking_reason);
	add_u64(o, "lines", st->lines);
	add_u64(o, "written", st->written);
	add_u64(o, "dropped", st->dropped);
	add_u64(o, "unsent", st->unsent);
	cJSON_AddBoolToObject(o, "partial_line", st->partial);
	if (st->nonblocking) {
		add_u64(o, "backlog_limit_bytes", st->backlog_limit);
		add_u64(o, "backlog_peak_bytes", st->backlog_peak);
		add_u64(o, "final_wait_ns", st->final_wait_ns);
		add_u64(o, "final_wait_limit_ns", st->final_wait_limit_ns);
	} else {
		cJSON_AddNullToObject(o, "backlog_limit_bytes");
		cJSON_AddNullToObject(o, "backlog_peak_bytes");
		cJSON_AddNullToObject(o, "final_wait_ns");
		cJSON_AddNullToObject(o, "final_wait_limit_ns");
	}
	if (st->error[0])
		add_str(o, "error", st->error);
	else
		cJSON_AddNullToObject(o, "error");
	/* The tree's states per interval: detail, kept for the last run only. */
	if (r->detailed && (pts = stream_points_json(st)))
		cJSON_AddItemToObject(o, "totals", pts);
	else
		cJSON_AddNullToObject(o, "totals");
	return o;
}

/* runs[].parts (parts.h): the run's time by thread, state, stack and bash command. */
static cJSON *parts_json(const struct run_parts *p)
{
	static const char *const lists[] = {"threads", "stacks", "bash"};
	cJSON *o, *a[3];

	if (!p)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (p->root)
		add_str(o, "root_thread", p->root);
	else
		cJSON_AddNullToObject(o, "root_thread");
	for (int l = 0; l < 3; l++) {
		bool have = l == 0 || (l == 1 ? p->stacks : p->bash);

		a[l] = have ? cJSON_AddArrayToObject(o, lists[l]) : NULL;
		if (!have)
			cJSON_AddNullToObject(o, lists[l]);
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct part *x = &p->v[i];
		cJSON *e;

		if (!a[x->kind])
			continue;
		e = cJSON_CreateObject();
		if (x->kind != PART_BASH) {
			add_str(e, "thread", x->thread);
			add_str(e, "state", parts_state_name(x->state));
		}
		if (x->kind == PART_STACK)
			add_str(e, "stack", x->stack);
		if (x->kind == PART_BASH)
			add_str(e, "command", x->stack);
		add_u64(e, "ns", x->ns);
		/* A command's CPU time; an on-CPU part's, less steal (what the cpu metric counts). */
		if (x->kind == PART_BASH || x->state == TSA_ST_ONCPU)
			add_u64(e, "cpu_ns", x->cpu_ns);
		cJSON_AddItemToArray(a[x->kind], e);
	}
	return o;
}

static cJSON *run_json(const struct run *r)
{
	static const char *const policy[] = {"wait", "leave", "kill"};
	cJSON *o = cJSON_CreateObject(), *ex, *ru, *d;
	char sig[32];

	cJSON_AddNumberToObject(o, "index", r->index);
	cJSON_AddBoolToObject(o, "warmup", r->warmup);
	add_str(o, "status", run_status_name(r->status));
	ex = cJSON_CreateObject();
	if (r->term_signal) {
		cJSON_AddNullToObject(ex, "code");
		cJSON_AddNumberToObject(ex, "signal", r->term_signal);
		add_str(ex, "signal_name", status_signame(r->term_signal, sig, sizeof(sig)));
	} else {
		cJSON_AddNumberToObject(ex, "code", r->exit_code);
		cJSON_AddNullToObject(ex, "signal");
	}
	cJSON_AddBoolToObject(ex, "core_dumped", r->core_dumped);
	cJSON_AddItemToObject(o, "exit", ex);
	if (r->interrupt_signal)
		add_str(o, "interrupted_by", status_signame(r->interrupt_signal, sig, sizeof(sig)));
	else
		cJSON_AddNullToObject(o, "interrupted_by");
	cJSON_AddNumberToObject(o, "root_pid", r->root_pid);
	add_u64(o, "wall_ns", r->wall_ns);
	add_u64(o, "user_ns", r->ru.user_ns);
	add_u64(o, "sys_ns", r->ru.sys_ns);
	cJSON_AddNumberToObject(o, "max_rss_kb", (double)r->ru.max_rss_kb);
	if (r->have_instructions)
		add_u64(o, "instructions", r->instructions);
	else
		cJSON_AddNullToObject(o, "instructions");
	ru = cJSON_CreateObject();
	cJSON_AddNumberToObject(ru, "minor_faults", (double)r->ru.minflt);
	cJSON_AddNumberToObject(ru, "major_faults", (double)r->ru.majflt);
	cJSON_AddNumberToObject(ru, "voluntary_switches", (double)r->ru.nvcsw);
	cJSON_AddNumberToObject(ru, "involuntary_switches", (double)r->ru.nivcsw);
	cJSON_AddNumberToObject(ru, "inblock", (double)r->ru.inblock);
	cJSON_AddNumberToObject(ru, "oublock", (double)r->ru.oublock);
	cJSON_AddItemToObject(o, "rusage", ru);
	d = cJSON_CreateObject();
	add_str(d, "policy",
		policy[r->desc.policy >= 0 && r->desc.policy < 3 ? r->desc.policy : 0]);
	cJSON_AddNumberToObject(d, "running_at_exit", r->desc.running_at_exit);
	cJSON_AddNumberToObject(d, "reaped_orphans", r->desc.reaped_orphans);
	cJSON_AddNumberToObject(d, "killed", r->desc.killed);
	cJSON_AddNumberToObject(d, "left_running", r->desc.left_running);
	add_u64(d, "waited_ns", r->desc.waited_ns);
	cJSON_AddItemToObject(o, "descendants", d);
	cJSON_AddItemToObject(o, "stream", stream_json(r));
	cJSON_AddBoolToObject(o, "detailed", r->detailed);
	/* Placeholders: the elements are streamed by emit_run(), one at a time. */
	cJSON_AddArrayToObject(o, "processes");
	cJSON_AddArrayToObject(o, "threads");
	cJSON_AddItemToObject(o, "totals", totals_json(&r->totals));
	cJSON_AddItemToObject(o, "quality",
			      quality_json(&r->quality, run_source_active(r, "ebpf")));
	cJSON_AddItemToObject(o, "stacks", stacks_json(r));
	cJSON_AddItemToObject(o, "parts", parts_json(r->parts));
	/* --timeline: streamed by emit_run() (artifact_timeline.c). */
	if (r->critpath)
		cJSON_AddNullToObject(o, "critical_path"); /* streamed too */
	if (r->timeline) {
		cJSON_AddNullToObject(o, "timeline");
		cJSON_AddItemToObject(cJSON_GetObjectItem(o, "quality"), "timeline",
				      artifact_timeline_quality(r->timeline));
	}
	return o;
}

/* The bash profile (--bash): the call tree, flattened with parent ids. */
static cJSON *bash_json(const struct bashprof *bp, const char *folded)
{
	const struct bash_quality *q = bashprof__quality(bp);
	const struct bash_total *t = bashprof__total(bp);
	cJSON *o = cJSON_CreateObject(), *tot, *cost, *qj, *cmds;

	add_str(o, "recorder", q->fallback ? "pure-bash" : "builtin");
	if (q->fallback)
		add_str(o, "recorder_limits", BASHPROF_FALLBACK_LIMITS);
	else
		cJSON_AddNullToObject(o, "recorder_limits");
	if (folded)
		add_str(o, "folded", folded);
	else
		cJSON_AddNullToObject(o, "folded");
	tot = cJSON_AddObjectToObject(o, "total");
	add_u64(tot, "self_wall_ns", t->self_wall_ns);
	add_u64(tot, "total_wall_ns", t->total_wall_ns);
	add_u64(tot, "cpu_ns", t->cpu_ns);
	add_u64(tot, "commands", t->commands);
	add_u64(tot, "raw_self_wall_ns", t->raw_self_wall_ns);
	add_u64(tot, "raw_cpu_ns", t->raw_cpu_ns);
	if (q->calibrated) {
		cJSON *tail;

		double st = q->stretch_milli / 1000.0;

		/* Wall figures are what was removed: the CPU cost, stretched (bashprof.h). */
		cost = cJSON_AddObjectToObject(o, "trap_cost");
		add_u64(cost, "cpu_ns", q->cal[BASH_COST_BASE].cpu_ns);
		add_u64(cost, "wall_ns", (uint64_t)(q->cal[BASH_COST_BASE].cpu_ns * st + 0.5));
		add_u64(cost, "start_up_wall_ns", q->cal[BASH_COST_BASE].wall_ns);
		add_frac(cost, "runnable_stretch", st);
		add_frac(cost, "before_clock_fraction", q->cal_pre_permille / 1000.0);
		add_str(cost, "calibration",
			q->cal_cached	 ? "cached"
			: q->cal_respeed ? "remeasured"
					 : "measured");
		add_u64(cost, "calibration_cpu_ns", q->cal_spent_cpu_ns);
		tail = cJSON_AddObjectToObject(cost, "terminal_tail");
		add_u64(tail, "cpu_ns", q->cal[BASH_COST_TTY].cpu_ns);
		add_u64(tail, "wall_ns", (uint64_t)(q->cal[BASH_COST_TTY].cpu_ns * st + 0.5));
		tail = cJSON_AddObjectToObject(cost, "job_table_tail");
		add_u64(tail, "cpu_ns", q->cal[BASH_COST_JOBS].cpu_ns);
		add_u64(tail, "wall_ns", (uint64_t)(q->cal[BASH_COST_JOBS].cpu_ns * st + 0.5));
		if (q->timed_runs) {
			cJSON *tm = cJSON_AddObjectToObject(cost, "timed");

			add_u64(tm, "runs", q->timed_runs);
			add_u64(tm, "total_ns", q->timed_ns);
			add_u64(tm, "avg_ns", q->timed_ns / q->timed_runs);
			add_u64(tm, "guessed_parts", q->guessed_parts);
			add_u64(tm, "stalls_ns", q->stall_ns);
		} else {
			cJSON_AddNullToObject(cost, "timed");
			add_str(cost, "timed_reason",
				"the builtin could not time its trap runs (no sigprocmask() hook, "
				"or no steady count of its calls): the start-up figures are the "
				"whole cost");
		}
	} else {
		cJSON_AddNullToObject(o, "trap_cost");
		add_str(o, "trap_cost_reason",
			q->fallback ? "the pure-bash trap does not measure its cost"
				    : "no calibration record arrived");
	}
	qj = cJSON_AddObjectToObject(o, "quality");
	add_u64(qj, "datagrams", q->datagrams);
	add_u64(qj, "records", q->records);
	add_u64(qj, "lost_records", q->lost_records);
	add_u64(qj, "bad_records", q->bad_records);
	add_u64(qj, "bad_datagrams", q->bad_datagrams);
	add_u64(qj, "unknown_streams", q->unknown_streams);
	add_u64(qj, "streams", q->streams);
	add_u64(qj, "unterminated_streams", q->unterminated);
	add_u64(qj, "orphan_streams", q->orphan_streams);
	add_u64(qj, "placed_streams", q->placed_streams);
	add_u64(qj, "attached_processes", q->attached_processes);
	add_u64(qj, "unattached_processes", q->unattached_processes);
	add_u64(qj, "trap_lost_streams", q->trap_lost_streams);
	add_u64(qj, "functrace_off_streams", q->functrace_off_streams);
	add_u64(qj, "deep_streams", q->deep_streams);
	add_u64(qj, "silent_bash_processes", q->silent_bash);
	add_u64(qj, "limit_drops", q->limit_drops);
	add_u64(qj, "memory_bytes", q->mem_bytes);
	cmds = cJSON_AddArrayToObject(o, "commands");
	for (size_t i = 0; i < bashprof__nodes(bp); i++) {
		const struct bash_node *n = bashprof__node(bp, i);
		cJSON *c = cJSON_CreateObject(), *procs;

		add_u64(c, "id", n->id);
		if (n->parent)
			add_u64(c, "parent", n->parent->id);
		else
			cJSON_AddNullToObject(c, "parent");
		add_str(c, "kind", bash_kind_name(n->kind));
		add_str(c, "source", n->file);
		add_u64(c, "line", n->line);
		add_str(c, "text", n->text);
		add_u64(c, "depth", n->depth);
		add_u64(c, "count", n->count);
		add_u64(c, "wall_ns", n->wall_ns);
		add_u64(c, "cpu_ns", n->cpu_ns);
		add_u64(c, "raw_wall_ns", n->raw_wall_ns);
		add_u64(c, "raw_cpu_ns", n->raw_cpu_ns);
		cJSON_AddBoolToObject(c, "pipeline_part", n->pipe_part);
		procs = cJSON_AddArrayToObject(c, "processes");
		for (uint32_t k = 0; k < n->nprocs; k++) {
			const struct bash_procs *p = &n->procs[k];
			cJSON *pj = cJSON_CreateObject();

			add_str(pj, "comm", p->comm);
			add_u64(pj, "count", p->count);
			add_u64(pj, "first_pid", p->first_pid);
			add_u64(pj, "wall_ns", p->wall_ns);
			add_u64(pj, "on_cpu_ns", p->state_ns[TSA_ST_ONCPU]);
			add_u64(pj, "runqueue_ns", p->state_ns[TSA_ST_RUNQ]);
			add_u64_or_null(pj, "sleeping_ns", p->state_ns[TSA_ST_SLEEP],
					p->unmeasured & ACCT_NO_STATES);
			add_u64_or_null(pj, "uninterruptible_ns", p->state_ns[TSA_ST_DISK],
					p->unmeasured & ACCT_NO_STATES);
			add_u64_or_null(pj, "stopped_ns", p->state_ns[TSA_ST_STOPPED],
					p->unmeasured & ACCT_NO_STATES);
			add_u64(pj, "with_bash_before_exec", p->with_bash);
			cJSON_AddItemToArray(procs, pj);
		}
		cJSON_AddItemToArray(cmds, c);
	}
	return o;
}

/*
 * The artifact is written as a stream: each thread and process object is
 * built, printed and freed in turn, so the memory a run with 10,000 threads
 * needs stays that of one thread, not of a tree of all of them. Top-level
 * keys, runs and array elements each start a line (grep-friendly; jq . for
 * an indented view).
 */
static int emit_item(FILE *f, const cJSON *item)
{
	char *text = json_print(item, false);

	if (!text)
		return -ENOMEM;
	fputs(text, f);
	free(text);
	return 0;
}

static int emit_key(FILE *f, const char *key, bool first)
{
	/* Keys are this module's own identifiers: no escaping needed. */
	return fprintf(f, "%s\"%s\":", first ? "" : ",\n", key) < 0 ? -EIO : 0;
}

static int emit_array(FILE *f, size_t n, cJSON *(*make)(const void *), const void *base,
		      size_t size)
{
	int ret = 0;

	fputc('[', f);
	for (size_t i = 0; i < n && !ret; i++) {
		cJSON *o = make((const char *)base + i * size);

		if (!o)
			return -ENOMEM;
		fputs(i ? ",\n" : "\n", f);
		ret = emit_item(f, o);
		cJSON_Delete(o);
	}
	fputc(']', f);
	return ret;
}

static cJSON *make_thread(const void *p)
{
	return thread_json(p);
}

static cJSON *make_proc(const void *p)
{
	return proc_json(p);
}

/* A value written through lib/jsonw (artifact_timeline.c), straight into f. */
static int emit_jsonw(FILE *f, void (*write)(struct jsonw *, const struct run *),
		      const struct run *r)
{
	struct jsonw *w = jsonw__new(f, JSONW_KEEP_COLONS);
	int ret;

	if (!w)
		return -ENOMEM;
	write(w, r);
	ret = jsonw__finish(w);
	jsonw__free(w);
	return ret;
}

static int emit_run(FILE *f, const struct run *r)
{
	cJSON *o = run_json(r), *c;
	bool first = true;
	int ret = 0;

	if (!o)
		return -ENOMEM;
	fputc('{', f);
	cJSON_ArrayForEach(c, o)
	{
		ret = emit_key(f, c->string, first);
		if (ret)
			break;
		first = false;
		if (!strcmp(c->string, "threads"))
			ret = emit_array(f, r->nthreads, make_thread, r->threads,
					 sizeof(*r->threads));
		else if (!strcmp(c->string, "processes"))
			ret = emit_array(f, r->nprocs, make_proc, r->procs, sizeof(*r->procs));
		else if (!strcmp(c->string, "timeline") && r->timeline)
			ret = emit_jsonw(f, artifact_timeline_json, r);
		else if (!strcmp(c->string, "critical_path") && r->critpath)
			ret = emit_jsonw(f, artifact_critpath_json, r);
		else
			ret = emit_item(f, c);
		if (ret)
			break;
	}
	fputc('}', f);
	cJSON_Delete(o);
	return ret;
}

/* A statistic: integral values as integers, others as they read back exactly; NAN is null. */
static cJSON *num_item(double v)
{
	char buf[40];

	if (!isfinite(v))
		return cJSON_CreateNull();
	if (v == floor(v) && fabs(v) < 9e15)
		snprintf(buf, sizeof(buf), "%.0f", v);
	else
		fmt_exact(buf, sizeof(buf), v, 15);
	return cJSON_CreateRaw(buf);
}

static void add_num(cJSON *o, const char *name, double v)
{
	cJSON_AddItemToObject(o, name, num_item(v));
}

/*
 * summary{<metric>}: each metric over the measured runs that completed, or
 * null; the reasons for the nulls go to summary_unavailable{<metric>}.
 */
static void add_summary(cJSON *root, const struct session *s)
{
	struct metric_summary ms[METRIC_NR];
	cJSON *sum, *why;

	if (metrics_summarize(s->runs, s->nruns, ms) < 0)
		return;
	sum = cJSON_AddObjectToObject(root, "summary");
	why = cJSON_AddObjectToObject(root, "summary_unavailable");
	for (int m = 0; m < METRIC_NR; m++) {
		const struct metric_def *d = metric_def(m);
		cJSON *o;

		if (!ms[m].available) {
			cJSON_AddNullToObject(sum, d->name);
			add_str(why, d->name, ms[m].why);
			continue;
		}
		o = cJSON_AddObjectToObject(sum, d->name);
		add_str(o, "unit", metric_unit_name(d->unit));
		cJSON_AddNumberToObject(o, "n", (double)ms[m].n);
		add_num(o, "median", ms[m].median);
		add_num(o, "mean", ms[m].mean);
		add_num(o, "stddev", ms[m].stddev);
		add_num(o, "cv", ms[m].cv);
		add_num(o, "min", ms[m].min);
		add_num(o, "max", ms[m].max);
		add_num(o, "mad", ms[m].mad);
		cJSON_AddNumberToObject(o, "outliers", (double)ms[m].outliers);
	}
}

static cJSON *values_json(const double *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, num_item(v[i]));
	return a;
}

/* A ratio or a bound: null when it is not finite (a zero baseline median). */
static void add_ratio(cJSON *o, const char *name, double v)
{
	char buf[32];

	if (!isfinite(v)) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	snprintf(buf, sizeof(buf), "%.6f", v);
	cJSON_AddRawToObject(o, name, buf);
}

static cJSON *gate_metric_json(const struct gate_metric *gm)
{
	const struct metric_def *d = metric_def(gm->metric);
	cJSON *o = cJSON_CreateObject();

	add_str(o, "name", d->name);
	add_str(o, "unit", metric_unit_name(d->unit));
	add_num(o, "base_median", gm->base_median);
	add_num(o, "new_median", gm->new_median);
	add_ratio(o, "ratio", gm->ratio);
	add_ratio(o, "ci_low", gm->ci_low);
	add_ratio(o, "ci_high", gm->ci_high);
	add_ratio(o, "threshold", gm->threshold);
	add_str(o, "verdict", gate_verdict_name(gm->verdict));
	add_str(o, "outcome", gate_outcome_name(gm->outcome));
	if (gm->note[0])
		add_str(o, "note", gm->note);
	else
		cJSON_AddNullToObject(o, "note");
	cJSON_AddNumberToObject(o, "base_n", (double)gm->nb);
	cJSON_AddNumberToObject(o, "new_n", (double)gm->nn);
	add_ratio(o, "base_cv", gm->base_cv);
	add_ratio(o, "new_cv", gm->new_cv);
	add_ratio(o, "base_robust_cv", gm->base_rcv);
	add_ratio(o, "new_robust_cv", gm->new_rcv);
	cJSON_AddBoolToObject(o, "noisy", gm->noisy);
	cJSON_AddItemToObject(o, "base_values", values_json(gm->base_values, gm->nb));
	cJSON_AddItemToObject(o, "new_values", values_json(gm->new_values, gm->nn));
	return o;
}

#define EXPLAIN_JSON_OTHERS 50 /* parts within noise written per level, the largest */

static cJSON *explain_part_json(const struct explain_part *p, enum explain_level l)
{
	cJSON *o = cJSON_CreateObject();

	if (l == EXPLAIN_PROCESS)
		add_str(o, "process", p->thread);
	else if (l != EXPLAIN_BASH)
		add_str(o, "thread", p->thread);
	if (l == EXPLAIN_THREAD || l == EXPLAIN_STACK)
		add_str(o, "state", parts_state_name(p->state));
	if (l == EXPLAIN_STACK)
		add_str(o, "stack", p->stack);
	if (l == EXPLAIN_BASH)
		add_str(o, "command", p->stack);
	add_num(o, "base_ns", p->base);
	add_num(o, "new_ns", p->new);
	add_num(o, "change_ns", p->delta);
	add_num(o, "ci_low_ns", p->low);
	add_num(o, "ci_high_ns", p->high);
	add_ratio(o, "p_value", p->p);
	add_ratio(o, "share", p->share);
	cJSON_AddBoolToObject(o, "blamed", p->blamed);
	return o;
}

static cJSON *explain_level_json(const struct explain_metric *em, enum explain_level l)
{
	const struct explain_levelset *ls = &em->level[l];
	cJSON *o = cJSON_CreateObject(), *a;
	size_t others = 0, omitted = 0;

	cJSON_AddBoolToObject(o, "available", ls->available);
	if (!ls->available) {
		add_str(o, "reason", ls->why);
		return o;
	}
	cJSON_AddNumberToObject(o, "parts_total", (double)ls->nparts);
	cJSON_AddNumberToObject(o, "tested", (double)ls->tested);
	cJSON_AddNumberToObject(o, "compared", (double)ls->compared);
	add_ratio(o, "confidence", ls->confidence);
	cJSON_AddNumberToObject(o, "blamed", (double)ls->nblamed);
	add_num(o, "blamed_ns", ls->blamed_ns);
	add_num(o, "within_noise_ns", ls->noise_ns);
	cJSON_AddNumberToObject(o, "within_noise_parts", (double)ls->nnoise);
	add_num(o, "remainder_ns", ls->remainder_ns);
	add_str(o, "remainder", explain_remainder_name(em->metric));
	a = cJSON_AddArrayToObject(o, "parts");
	for (size_t i = 0; i < ls->nparts; i++) {
		const struct explain_part *p = &ls->parts[i];

		if (!p->blamed && (p->delta == 0 || others++ >= EXPLAIN_JSON_OTHERS)) {
			omitted += p->delta != 0;
			continue;
		}
		cJSON_AddItemToArray(a, explain_part_json(p, l));
	}
	cJSON_AddNumberToObject(o, "parts_omitted", (double)omitted);
	return o;
}

/* comparison.explanation: where each explained metric's change came from (explain.h). */
static cJSON *explain_json(const struct explain *e)
{
	cJSON *o, *a;

	if (!e)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	add_str(o, "method",
		"difference of medians per part (new - baseline, per run); a part is blamed when "
		"its percentile bootstrap interval lies wholly beyond the floor (at least floor_ns "
		"from 0, and never reaching 0) and a rank-sum test of its values run by run "
		"rejects no change, both at "
		"the confidence corrected for the parts that moved (Bonferroni)");
	add_frac(o, "confidence", e->confidence);
	cJSON_AddNumberToObject(o, "resamples", e->resamples);
	add_u64(o, "seed", e->seed);
	cJSON_AddNumberToObject(o, "min_runs", EXPLAIN_MIN_RUNS);
	a = cJSON_AddArrayToObject(o, "metrics");
	for (int i = 0; i < e->n; i++) {
		const struct explain_metric *em = &e->m[i];
		cJSON *m = cJSON_CreateObject(), *lv;

		add_str(m, "name", metric_def(em->metric)->name);
		cJSON_AddBoolToObject(m, "available", em->available);
		if (!em->available) {
			add_str(m, "reason", em->why);
			cJSON_AddItemToArray(a, m);
			continue;
		}
		add_str(m, "scope", em->scope);
		if (em->root)
			add_str(m, "root_thread", em->root);
		else
			cJSON_AddNullToObject(m, "root_thread");
		cJSON_AddNumberToObject(m, "base_n", (double)em->nb);
		cJSON_AddNumberToObject(m, "new_n", (double)em->nn);
		add_num(m, "base_median_ns", em->base_median);
		add_num(m, "new_median_ns", em->new_median);
		add_num(m, "change_ns", em->total);
		add_num(m, "floor_ns", em->floor_ns);
		cJSON_AddBoolToObject(m, "judged", em->judged);
		lv = cJSON_AddObjectToObject(m, "levels");
		for (int l = 0; l < EXPLAIN_NLEVELS; l++)
			cJSON_AddItemToObject(lv, explain_level_name(l), explain_level_json(em, l));
		cJSON_AddItemToArray(a, m);
	}
	return o;
}

/*
 * comparison: the baseline, the statistic (enough to recompute every
 * interval from base_values and new_values), each gated metric, the noise
 * sentinel and the notes. The baseline command's runs (paired mode) are
 * kept here, figures only, so the artifact's runs[] stay the command's.
 */
static cJSON *comparison_json(const struct session *s)
{
	const struct comparison *c = s->cmp;
	cJSON *o = cJSON_CreateObject(), *b, *st, *a, *sn;

	b = cJSON_AddObjectToObject(o, "baseline");
	add_str(b, "kind", c->baseline_kind);
	if (!strcmp(c->baseline_kind, "artifact")) {
		add_str(b, "path", c->baseline_name);
	} else {
		add_str(b, "command", c->baseline_name);
		a = cJSON_AddArrayToObject(b, "argv");
		for (int i = 0; i < s->base_argc; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(s->base_argv[i]));
	}
	a = cJSON_AddArrayToObject(b, "fingerprint_differences");
	for (int i = 0; i < c->nfingerprint_diff; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(c->fingerprint_diff[i]));
	if (s->base_runs) {
		a = cJSON_AddArrayToObject(b, "runs");
		for (size_t i = 0; i < s->nbase_runs; i++)
			cJSON_AddItemToArray(a, run_json(&s->base_runs[i]));
	}
	st = cJSON_AddObjectToObject(o, "statistic");
	add_str(st, "method", "ratio of medians (new / baseline), percentile bootstrap");
	add_frac(st, "confidence", c->confidence);
	cJSON_AddNumberToObject(st, "resamples", c->resamples);
	add_u64(st, "seed", c->seed);
	add_str(st, "generator", "xoshiro256** seeded by splitmix64");
	cJSON_AddBoolToObject(st, "paired", c->paired);
	cJSON_AddNumberToObject(st, "min_runs", GATE_MIN_RUNS);
	add_str(o, "verdict", gate_verdict_name(c->verdict));
	add_str(o, "outcome", gate_outcome_name(c->outcome));
	cJSON_AddNumberToObject(o, "runs_added", c->runs_added);
	cJSON_AddNumberToObject(o, "max_runs", c->max_runs);
	a = cJSON_AddArrayToObject(o, "metrics");
	for (int i = 0; i < c->nmetrics; i++)
		cJSON_AddItemToArray(a, gate_metric_json(&c->metrics[i]));
	sn = cJSON_AddObjectToObject(o, "noise_sentinel");
	cJSON_AddBoolToObject(sn, "available", c->sentinel.available);
	if (c->sentinel.available) {
		add_num(sn, "base_median_ns", c->sentinel.base_median);
		add_num(sn, "new_median_ns", c->sentinel.new_median);
		add_num(sn, "excess_ns", c->sentinel.excess);
		/* Only a wall verdict has a threshold to derive a limit from. */
		if (!isnan(c->sentinel.limit)) {
			add_num(sn, "limit_ns", c->sentinel.limit);
			cJSON_AddBoolToObject(sn, "fired", c->sentinel.fired);
		}
	} else {
		add_str(sn, "reason", c->sentinel.why);
	}
	a = cJSON_AddArrayToObject(o, "notes");
	for (int i = 0; i < c->nnotes; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(c->notes[i]));
	cJSON_AddItemToObject(o, "explanation", explain_json(c->explain));
	return o;
}

/* The session's top level as a tree; "runs" is a placeholder streamed by artifact_emit(). */
static cJSON *session_json(const struct session *s)
{
	cJSON *root = cJSON_CreateObject(), *tool, *cmd, *argv;

	if (!root)
		return NULL;
	add_str(root, "schema", ARTIFACT_SCHEMA);
	tool = cJSON_AddObjectToObject(root, "tool");
	add_str(tool, "name", "tsarun");
	add_str(tool, "version", s->tool_version);
	if (s->supervisor_max_rss_kb)
		cJSON_AddNumberToObject(tool, "supervisor_max_rss_kb",
					(double)s->supervisor_max_rss_kb);
	if (s->sandbox_known) {
		cJSON *sb = cJSON_AddObjectToObject(tool, "sandbox");

		cJSON_AddBoolToObject(sb, "active", s->sandboxed);
		if (s->sandboxed || !s->sandbox_reason)
			cJSON_AddNullToObject(sb, "reason");
		else
			add_str(sb, "reason", s->sandbox_reason);
		if (s->landlock_known) {
			cJSON *ll = cJSON_AddObjectToObject(sb, "landlock");

			cJSON_AddBoolToObject(ll, "active", !s->landlock_reason);
			if (s->landlock_reason)
				add_str(ll, "reason", s->landlock_reason);
			else
				cJSON_AddNullToObject(ll, "reason");
		}
		if (s->privileges_known) {
			cJSON *pv = cJSON_AddObjectToObject(sb, "privileges");

			cJSON_AddBoolToObject(pv, "dropped", s->privileges_dropped);
			cJSON_AddNumberToObject(pv, "uid", s->privileges_uid);
			if (s->privileges_reason)
				add_str(pv, "reason", s->privileges_reason);
			else
				cJSON_AddNullToObject(pv, "reason");
		}
	}
	cJSON_AddNullToObject(root, "host"); /* streamed by artifact_emit() */
	cmd = cJSON_AddObjectToObject(root, "command");
	argv = cJSON_AddArrayToObject(cmd, "argv");
	for (int i = 0; i < s->argc; i++)
		cJSON_AddItemToArray(argv, cJSON_CreateString(s->argv[i]));
	add_str(cmd, "mode", s->mode ? s->mode : "run");
	cJSON_AddArrayToObject(root, "runs");
	add_summary(root, s);
	if (s->nruns && s->runs[s->nruns - 1].bash)
		cJSON_AddItemToObject(root, "bash",
				      bash_json(s->runs[s->nruns - 1].bash, s->bash_folded));
	if (s->cmp)
		cJSON_AddItemToObject(root, "comparison", comparison_json(s));
	else
		cJSON_AddNullToObject(root, "comparison");
	return root;
}

int artifact_emit(const struct session *s, FILE *f)
{
	cJSON *root = session_json(s), *c;
	bool first = true;
	int ret = 0, werr;

	if (!root)
		return -ENOMEM;
	errno = 0; /* a failed write leaves its reason (ENOSPC, EROFS, ...) here */
	fputc('{', f);
	cJSON_ArrayForEach(c, root)
	{
		ret = emit_key(f, c->string, first);
		if (ret)
			break;
		first = false;
		if (!strcmp(c->string, "runs")) {
			fputc('[', f);
			for (size_t i = 0; i < s->nruns && !ret; i++) {
				fputs(i ? ",\n" : "\n", f);
				ret = emit_run(f, &s->runs[i]);
			}
			fputc(']', f);
		} else if (!strcmp(c->string, "host")) {
			struct jsonw *w = jsonw__new(f, JSONW_KEEP_COLONS);

			if (w)
				artifact_host_json(w, &s->host);
			ret = w ? jsonw__finish(w) : -ENOMEM;
			jsonw__free(w);
		} else {
			ret = emit_item(f, c);
		}
		if (ret)
			break;
	}
	fputs("}\n", f);
	werr = errno;
	cJSON_Delete(root);
	if ((!ret || ret == -EIO) && ferror(f))
		ret = werr ? -werr : -EIO;
	return ret;
}

char *artifact_render(const struct session *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (artifact_emit(s, f)) {
		fclose(f);
		free(text);
		return NULL;
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

char *artifact_render_comparison(const struct session *s)
{
	cJSON *o = s->cmp ? comparison_json(s) : NULL;
	char *text = o ? json_print(o, false) : NULL;

	cJSON_Delete(o);
	return text;
}

int artifact_write(const struct session *s, struct outfile *of, char *err, size_t errlen)
{
	FILE *f = outfile__open(of, err, errlen);
	int ret;

	if (!f)
		return -EIO;
	ret = artifact_emit(s, f);
	if (ret) {
		outfile__abort(of);
		snprintf(err, errlen, "cannot write '%s': %s", outfile__path(of), strerror(-ret));
		return ret;
	}
	/* Flushed, fsynced, renamed over the path, the directory fsynced. */
	ret = outfile__commit(of, err, errlen);
	if (ret)
		snprintf(err, errlen, "cannot write '%s': %s", outfile__path(of), strerror(-ret));
	return ret;
}

char *artifact_render_doctor(const struct doctor_check *c, int n, const struct host_info *h)
{
	/* cJSON_Print()'s layout, which doctor --json always had. */
	struct jsonw *w = jsonw__new(NULL, JSONW_TABS | JSONW_KEEP_COLONS);
	char *text;

	if (!w)
		return NULL;
	jsonw__obj_open(w);
	jsonw__str_field(w, "schema", "tsarun-doctor/1");
	jsonw__key(w, "tool");
	jsonw__obj_open(w);
	jsonw__str_field(w, "name", "tsarun");
	jsonw__str_field(w, "version", TSARUN_VERSION);
	jsonw__obj_close(w);
	jsonw__key(w, "host");
	artifact_host_json(w, h);
	jsonw__key(w, "checks");
	jsonw__arr_open(w);
	for (int i = 0; i < n; i++) {
		jsonw__obj_open(w);
		jsonw__str_field(w, "name", c[i].name);
		jsonw__bool_field(w, "available", c[i].available);
		jsonw__str_field(w, "status", c[i].status);
		jsonw__str_field(w, "detail", c[i].detail);
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
	jsonw__obj_close(w);
	text = jsonw__take(w, NULL);
	jsonw__free(w);
	return text;
}
