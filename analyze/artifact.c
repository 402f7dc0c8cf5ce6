// SPDX-License-Identifier: MIT
/* The JSON artifact writer. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/*
 * Every writer here writes a value (or, named *_members, members of an
 * open object) into w; w's errors are sticky, and artifact_emit() reads
 * them once at the end. The strings keep a leading "::"
 * (JSONW_KEEP_COLONS): what the cJSON writer wrote.
 */

/* A string, or null when s is NULL. */
static void str_or_null(struct jsonw *w, const char *key, const char *s)
{
	jsonw__key(w, key);
	if (s)
		jsonw__str(w, s);
	else
		jsonw__null(w);
}

/*
 * v with the fewest significant digits, from 6, that read back as v: the
 * report of an artifact prints what the run printed. Six digits were not
 * enough: the table rounds again (%.3f), so a residual of 11.8314878% was
 * stored as 11.8315 and reported as 11.832% (11.831% live); a percent
 * drawn evenly below 30 came back different 3.5% of the time, and under
 * load a procfs run's residual is several percent.
 */
static void frac_field(struct jsonw *w, const char *key, double v)
{
	jsonw__key(w, key);
	jsonw__exact(w, v, 6);
}

/* A count as cJSON wrote a double: for the long and size_t counts it held. */
static void count_field(struct jsonw *w, const char *key, double v)
{
	jsonw__key(w, key);
	jsonw__cjson(w, v);
}

static void u64_or_null(struct jsonw *w, const char *key, uint64_t v, bool null)
{
	jsonw__key(w, key);
	if (null)
		jsonw__null(w);
	else
		jsonw__uint(w, v);
}

/* Off-CPU time by state: null where a source did not split it by state. */
static void states_members(struct jsonw *w, const uint64_t *st, uint32_t unmeasured)
{
	for (size_t i = 0; i < artifact_nstate_fields; i++) {
		const struct artifact_state_field *f = &artifact_state_fields[i];

		u64_or_null(w, f->name, st[f->state], unmeasured & f->unmeasured);
	}
}

/* ... and what no state holds. */
static void states_residual_members(struct jsonw *w, const uint64_t *st, uint64_t residual,
				    uint32_t unmeasured)
{
	states_members(w, st, unmeasured);
	jsonw__uint_field(w, "residual_ns", residual);
}

/*
 * A row's counts, in the table's order (artifact_fields.h): null where the
 * row's source could not count them. A sum over threads one of which could
 * not count it is no count either.
 */
static void counts_members(struct jsonw *w, enum artifact_row kind, const void *row,
			   uint32_t unmeasured, bool ebpf)
{
	for (size_t i = 0; i < artifact_ncount_fields; i++) {
		const struct artifact_count_field *f = &artifact_count_fields[i];
		size_t off = artifact_field_off(f, kind);

		if (off == ARTIFACT_FIELD_NONE)
			continue;
		u64_or_null(w, f->name, *(const uint64_t *)((const char *)row + off),
			    (unmeasured & f->unmeasured) || (f->ebpf_only && !ebpf));
	}
}

static void latency_json(struct jsonw *w, uint64_t sum, uint64_t n, uint64_t max)
{
	jsonw__obj_open(w);
	u64_or_null(w, "avg", n ? sum / n : 0, !n);
	u64_or_null(w, "max", max, !n);
	jsonw__uint_field(w, "count", n);
	jsonw__obj_close(w);
}

static void hist_json(struct jsonw *w, const uint32_t hist[TSA_HIST_STATES][TSA_HIST_SLOTS])
{
	static const int states[TSA_HIST_STATES] = {TSA_ST_RUNQ, TSA_ST_SLEEP, TSA_ST_DISK,
						    TSA_ST_STOPPED};

	jsonw__obj_open(w);
	for (int h = 0; h < TSA_HIST_STATES; h++) {
		int last = -1;

		for (int i = 0; i < TSA_HIST_SLOTS; i++)
			if (hist[h][i])
				last = i;
		jsonw__key(w, state_name(states[h]));
		jsonw__arr_open(w);
		for (int i = 0; i <= last; i++)
			jsonw__uint(w, hist[h][i]);
		jsonw__arr_close(w);
	}
	jsonw__obj_close(w);
}

static void exit_json(struct jsonw *w, int ws, bool exited)
{
	char sig[32];

	jsonw__obj_open(w);
	if (!exited) {
		jsonw__null_field(w, "code");
		jsonw__null_field(w, "signal");
	} else if ((ws & 0x7f) == 0) {
		jsonw__int_field(w, "code", (ws >> 8) & 0xff);
		jsonw__null_field(w, "signal");
	} else {
		jsonw__null_field(w, "code");
		jsonw__int_field(w, "signal", ws & 0x7f);
		jsonw__str_field(w, "signal_name", status_signame(ws & 0x7f, sig, sizeof(sig)));
		jsonw__bool_field(w, "core_dumped", (ws & 0x80) != 0);
	}
	jsonw__obj_close(w);
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
static void sampled_json(struct jsonw *w, const struct thread_acct *t)
{
	const struct thread_sampled *s = &t->sampled;

	if (!t->have_sampled) {
		jsonw__null(w);
		return;
	}
	jsonw__obj_open(w);
	jsonw__uint_field(w, "on_cpu_ns", s->on_cpu_ns);
	jsonw__uint_field(w, "runqueue_ns", s->runqueue_ns);
	jsonw__uint_field(w, "slices", s->slices);
	jsonw__str_field(w, "counters_from", s->from_birth ? "birth" : "first_sample");
	jsonw__bool_field(w, "counters_final", s->final);
	jsonw__uint_field(w, "unobserved_max_ns", s->unobserved_max_ns);
	jsonw__uint_field(w, "samples", s->samples);
	jsonw__int_field(w, "first_sample_ns", s->first_ns);
	jsonw__int_field(w, "last_sample_ns", s->last_ns);
	artifact_sampled_states_json(w, s);
	jsonw__obj_close(w);
}

static void thread_json(struct jsonw *w, const struct thread_acct *t)
{
	jsonw__obj_open(w);
	jsonw__uint_field(w, "tid", t->tid);
	if (t->tid_before_exec)
		jsonw__uint_field(w, "tid_before_exec", t->tid_before_exec);
	jsonw__uint_field(w, "pid", t->pid);
	jsonw__uint_field(w, "ppid", t->ppid);
	jsonw__str_field(w, "comm", t->comm);
	jsonw__int_field(w, "start_ns", t->start_ns);
	jsonw__int_field(w, "end_ns", t->end_ns);
	jsonw__uint_field(w, "lifetime_ns", t->lifetime_ns);
	states_residual_members(w, t->state_ns, t->residual_ns, t->unmeasured);
	jsonw__str_field(w, "accounting_source", acct_source_name(t->source));
	/* What the source could not measure is null, never 0. */
	counts_members(w, ARTIFACT_ROW_THREAD, t, t->unmeasured, t->source == ACCT_SRC_EBPF);
	jsonw__key(w, "wakeup_latency_ns");
	if (t->unmeasured & ACCT_NO_WAKEUPS)
		jsonw__null(w);
	else
		latency_json(w, t->wakeup_lat_sum, t->wakeup_lat_count, t->wakeup_lat_max);
	jsonw__key(w, "offcpu_hist_log2_us");
	if (t->unmeasured & ACCT_NO_HIST)
		jsonw__null(w);
	else
		hist_json(w, t->hist);
	jsonw__key(w, "sampled");
	sampled_json(w, t);
	if (t->source == ACCT_SRC_PROC)
		jsonw__bool_field(w, "counters_from_exit_record", t->counters_from_exit);
	jsonw__key(w, "delays");
	artifact_delays_json(w, t, true);
	if (!t->have_delays && t->tid_before_exec)
		jsonw__str_field(w, "delays_reason",
				 "an exec from a thread other than the main one gave this thread "
				 "the main thread's tid and start time: no taskstats exit record "
				 "can be proven to be its");
	jsonw__key(w, "below_threshold");
	if (t->have_below) {
		jsonw__obj_open(w);
		jsonw__uint_field(w, "count", t->below_count);
		jsonw__uint_field(w, "total_ns", t->below_ns);
		jsonw__uint_field(w, "uninterruptible_ns", t->below_disk_ns);
		jsonw__obj_close(w);
	} else {
		jsonw__null(w);
	}
	jsonw__key(w, "kernel");
	if (t->have_kernel) {
		jsonw__obj_open(w);
		jsonw__uint_field(w, "sum_exec_runtime_ns", t->k_sum_exec_ns);
		jsonw__uint_field(w, "run_delay_ns", t->k_run_delay_ns);
		jsonw__uint_field(w, "pcount", t->k_pcount);
		jsonw__uint_field(w, "nvcsw", t->k_nvcsw);
		jsonw__uint_field(w, "nivcsw", t->k_nivcsw);
		jsonw__key(w, "clock_lag");
		jsonw__obj_open(w);
		jsonw__uint_field(w, "out_runnable_ns", t->klag_out_run_ns);
		jsonw__uint_field(w, "out_blocked_ns", t->klag_out_blocked_ns);
		jsonw__uint_field(w, "in_ns", t->klag_in_ns);
		jsonw__uint_field(w, "switches", t->klag_switches);
		jsonw__obj_close(w);
		jsonw__obj_close(w);
	} else {
		jsonw__null(w);
	}
	jsonw__uint_field(w, "task_start_ns", t->task_start_ns);
	jsonw__uint_field(w, "boot_start_ns", t->boot_start_ns);
	jsonw__bool_field(w, "first_state_known", t->first_state_known);
	jsonw__bool_field(w, "alive_at_end", (t->flags & TSA_F_SURVIVOR) != 0);
	jsonw__uint_field(w, "execs", t->execs);
	jsonw__obj_close(w);
}

static void proc_json(struct jsonw *w, const struct proc_acct *p)
{
	jsonw__obj_open(w);
	jsonw__uint_field(w, "pid", p->pid);
	jsonw__uint_field(w, "ppid", p->ppid);
	jsonw__str_field(w, "comm", p->comm);
	jsonw__int_field(w, "start_ns", p->start_ns);
	jsonw__int_field(w, "end_ns", p->end_ns);
	jsonw__key(w, "exit");
	exit_json(w, p->exit_status, p->exited);
	jsonw__bool_field(w, "alive_at_end", p->alive);
	jsonw__uint_field(w, "threads", p->threads);
	jsonw__uint_field(w, "execs", p->execs);
	jsonw__uint_field(w, "thread_lifetime_ns", p->thread_lifetime_ns);
	states_residual_members(w, p->state_ns, p->residual_ns, p->unmeasured);
	jsonw__obj_close(w);
}

static void totals_json(struct jsonw *w, const struct run_totals *t)
{
	jsonw__obj_open(w);
	jsonw__uint_field(w, "processes", t->processes);
	jsonw__uint_field(w, "threads", t->threads);
	jsonw__uint_field(w, "lifetime_ns", t->lifetime_ns);
	states_residual_members(w, t->state_ns, t->residual_ns, t->unmeasured);
	counts_members(w, ARTIFACT_ROW_TOTALS, t, t->unmeasured, true);
	jsonw__key(w, "wakeup_latency_ns");
	if (t->unmeasured & ACCT_NO_WAKEUPS)
		jsonw__null(w);
	else
		latency_json(w, t->wakeup_lat_sum, t->wakeup_lat_count, t->wakeup_lat_max);
	jsonw__uint_field(w, "max_threads_alive", t->max_threads_alive);
	u64_or_null(w, "before_tracking_cpu_ns", t->before_tracking_cpu_ns,
		    !t->before_tracking_known);
	jsonw__obj_close(w);
}

/* A cross-check's members; false (and its reason) when it was not available. */
static bool check_members(struct jsonw *w, const struct cross_check *c, const char *unit)
{
	jsonw__bool_field(w, "available", c->available);
	if (!c->available) {
		jsonw__str_field(w, "reason", c->reason);
		return false;
	}
	jsonw__uint_field(w, "compared", c->compared);
	jsonw__uint_field(w, "short_lived", c->short_lived);
	frac_field(w, "total_fraction", c->total);
	jsonw__uint_field(w, "sum_ebpf", c->sum_ebpf);
	jsonw__uint_field(w, "sum_kernel", c->sum_kernel);
	frac_field(w, "worst_fraction", c->worst);
	jsonw__uint_field(w, unit, c->worst_abs);
	if (c->worst_tid)
		jsonw__uint_field(w, "worst_tid", c->worst_tid);
	if (c->directional) {
		frac_field(w, "unseen_fraction", c->unseen);
		jsonw__uint_field(w, "excess_ns", c->excess_ns);
	}
	return true;
}

static void check_json(struct jsonw *w, const char *key, const struct cross_check *c,
		       const char *unit)
{
	jsonw__key(w, key);
	jsonw__obj_open(w);
	check_members(w, c, unit);
	jsonw__obj_close(w);
}

static void taskstats_json(struct jsonw *w, const struct taskstats_quality *t)
{
	if (!t->active) {
		jsonw__null(w);
		return;
	}
	jsonw__obj_open(w);
	jsonw__uint_field(w, "exit_records", t->exit_records);
	jsonw__uint_field(w, "queried", t->queried);
	jsonw__uint_field(w, "attached", t->attached);
	jsonw__uint_field(w, "identity_mismatches", t->identity_mismatches);
	jsonw__uint_field(w, "unmatched_records", t->unmatched_records);
	jsonw__uint_field(w, "threads_without_delays", t->threads_without);
	jsonw__uint_field(w, "unreadable_records", t->unreadable);
	jsonw__uint_field(w, "implausible_counters", t->implausible);
	jsonw__uint_field(w, "dropped_waits", t->dropped_waits);
	jsonw__uint_field(w, "block_io_from_ebpf", t->blkio_from_ebpf);
	jsonw__uint_field(w, "overruns", t->overruns);
	jsonw__uint_field(w, "foreign_records", t->foreign);
	u64_or_null(w, "cpu_after_exit_records_ns", t->cpu_after_exit_ns,
		    !t->cpu_after_exit_threads);
	u64_or_null(w, "cpu_after_exit_records_threads", t->cpu_after_exit_threads,
		    !t->cpu_after_exit_threads);
	if (t->version_max) {
		jsonw__uint_field(w, "version_min", t->version_min);
		jsonw__uint_field(w, "version_max", t->version_max);
	}
	jsonw__obj_close(w);
}

static void tristate_field(struct jsonw *w, const char *key, int v)
{
	jsonw__key(w, key);
	if (v < 0)
		jsonw__null(w);
	else
		jsonw__bool(w, v > 0);
}

static void delayacct_json(struct jsonw *w, const struct delayacct_quality *d)
{
	if (!d->known) {
		jsonw__null(w);
		return;
	}
	jsonw__obj_open(w);
	tristate_field(w, "before", d->before);
	tristate_field(w, "during", d->during);
	jsonw__bool_field(w, "switched_on", d->switched_on);
	jsonw__bool_field(w, "non_cpu_live", d->non_cpu_live);
	if (!d->non_cpu_live)
		jsonw__str_field(w, "reason", d->reason);
	jsonw__obj_close(w);
}

static void procfs_json(struct jsonw *w, const struct procfs_quality *p)
{
	if (!p->active) {
		jsonw__null(w);
		return;
	}
	jsonw__obj_open(w);
	jsonw__uint_field(w, "sample_interval_ns", p->sample_ns);
	jsonw__uint_field(w, "scans", p->scans);
	jsonw__uint_field(w, "max_scan_ns", p->max_scan_ns);
	jsonw__uint_field(w, "max_gap_ns", p->max_gap_ns);
	jsonw__uint_field(w, "threads_seen", p->threads_seen);
	jsonw__uint_field(w, "threads_new", p->threads_new);
	jsonw__uint_field(w, "threads_gone", p->threads_gone);
	jsonw__uint_field(w, "identity_changes", p->identity_changes);
	jsonw__uint_field(w, "unreadable", p->unreadable);
	jsonw__uint_field(w, "unseen_cpu_ns", p->unseen_cpu_ns);
	jsonw__str_field(w, "discovery", p->discovery);
	jsonw__obj_close(w);
}

/* quality; its "timeline" (--timeline, tl not NULL) comes last, after the notes. */
static void quality_json(struct jsonw *w, const struct run_quality *q, bool ebpf,
			 const struct run_timeline *tl)
{
	jsonw__obj_open(w);
	artifact_sources_json(w, q->sources, q->nsources);
	jsonw__key(w, "ebpf_load_failure");
	if (q->ebpf_load.failed) {
		jsonw__obj_open(w);
		jsonw__str_field(w, "object", q->ebpf_load.object);
		jsonw__str_field(w, "kind", q->ebpf_load.is_map ? "map" : "program");
		jsonw__str_field(w, "message", q->ebpf_load.message);
		jsonw__obj_close(w);
	} else {
		jsonw__null(w);
	}
	jsonw__uint_field(w, "lost_events", q->lost_events);
	jsonw__uint_field(w, "map_full_drops", q->map_full_drops);
	jsonw__uint_field(w, "stack_drops", q->stack_drops);
	jsonw__uint_field(w, "taskstats_drops", q->taskstats_drops);
	jsonw__uint_field(w, "unexpected_transitions", q->unexpected_transitions);
	jsonw__uint_field(w, "untraced_switch_ins", q->untraced_switch_ins);
	jsonw__uint_field(w, "unsettled_threads", q->unsettled);
	frac_field(w, "residual_percent", q->residual_percent);
	/* The threads whose records were lost: no residual, nothing measured them. */
	jsonw__key(w, "lost_threads");
	jsonw__obj_open(w);
	jsonw__uint_field(w, "records", q->lost.records);
	jsonw__uint_field(w, "lifetime_ns", q->lost.lifetime_ns);
	states_members(w, (const uint64_t *)q->lost.state_ns, 0);
	jsonw__obj_close(w);
	jsonw__key(w, "cross_check");
	jsonw__obj_open(w);
	check_json(w, "runnable_vs_kernel", &q->runnable, "worst_ns");
	check_json(w, "on_cpu_vs_sum_exec_runtime", &q->on_cpu, "worst_ns");
	check_json(w, "runqueue_vs_run_delay", &q->runqueue, "worst_ns");
	check_json(w, "slices_vs_pcount", &q->slices, "worst_count");
	check_json(w, "switches_vs_nvcsw_nivcsw", &q->switches, "worst_count");
	check_json(w, "tree_cpu_vs_rusage", &q->tree_cpu, "worst_ns");
	jsonw__key(w, "taskstats_cpu_vs_runqueue");
	jsonw__obj_open(w);
	if (check_members(w, &q->ts_cpu, "worst_ns"))
		jsonw__uint_field(w, "after_record_ns", q->ts_cpu_after_ns);
	jsonw__obj_close(w);
	/* Measured from scheduler events: nothing to say without eBPF (procfs, taskstats). */
	if (ebpf) {
		jsonw__int_field(w, "kernel_shift_ns", q->kernel_shift_ns);
		jsonw__uint_field(w, "kernel_clock_lag_ns", q->klag_ns);
		jsonw__uint_field(w, "kernel_clock_lag_switches", q->klag_switches);
		jsonw__uint_field(w, "unstamped_wait_ns", q->unstamped_wait_ns);
	} else {
		jsonw__null_field(w, "kernel_shift_ns");
		jsonw__null_field(w, "kernel_clock_lag_ns");
		jsonw__null_field(w, "kernel_clock_lag_switches");
		jsonw__null_field(w, "unstamped_wait_ns");
	}
	check_json(w, "procfs_on_cpu_vs_ebpf", &q->procfs_on_cpu, "worst_ns");
	check_json(w, "procfs_runqueue_vs_ebpf", &q->procfs_runqueue, "worst_ns");
	jsonw__obj_close(w);
	jsonw__key(w, "taskstats");
	taskstats_json(w, &q->ts);
	jsonw__key(w, "procfs");
	procfs_json(w, &q->procfs);
	jsonw__key(w, "delayacct");
	delayacct_json(w, &q->delayacct);
	jsonw__key(w, "notes");
	jsonw__arr_open(w);
	for (int i = 0; i < q->nnotes; i++)
		jsonw__str(w, q->notes[i]);
	jsonw__arr_close(w);
	if (tl) {
		jsonw__key(w, "timeline");
		artifact_timeline_quality_json(w, tl);
	}
	jsonw__obj_close(w);
}

static void frames_json(struct jsonw *w, const char *key, const struct run_stacks *s, uint32_t idx)
{
	jsonw__key(w, key);
	jsonw__arr_open(w);
	for (uint32_t i = 0; idx < s->ntraces && i < s->traces[idx].nframes; i++)
		jsonw__str(w, s->traces[idx].frames[i]);
	jsonw__arr_close(w);
}

static const char *trace_status(const struct run_stacks *s, uint32_t idx)
{
	return idx < s->ntraces ? stack_status_name(s->traces[idx].status) : "unknown";
}

static void stack_pair_members(struct jsonw *w, const struct run_stacks *s, uint32_t u, uint32_t k)
{
	bool ut = u < s->ntraces && s->traces[u].truncated;
	bool kt = k < s->ntraces && s->traces[k].truncated;

	frames_json(w, "user", s, u);
	frames_json(w, "kernel", s, k);
	jsonw__str_field(w, "user_status", trace_status(s, u));
	jsonw__str_field(w, "kernel_status", trace_status(s, k));
	jsonw__bool_field(w, "truncated", ut || kt);
	/* Each half's own, so that a reader marks the half that was cut (artifact_read.c). */
	jsonw__bool_field(w, "user_truncated", ut);
	jsonw__bool_field(w, "kernel_truncated", kt);
	jsonw__uint_field(w, "repaired_frames", u < s->ntraces ? s->traces[u].repaired : 0);
}

static void stack_agg_json(struct jsonw *w, const struct run *r, const struct stack_agg *a)
{
	const struct run_stacks *s = r->stacks;

	jsonw__obj_open(w);
	jsonw__uint_field(w, "pid", a->pid);
	jsonw__uint_field(w, "tid", a->tid);
	jsonw__str_field(w, "comm", stack_agg_comm(r, a));
	if (a->kind == STACK_OFFCPU)
		jsonw__str_field(w, "state", a->state == TSA_ST_DISK ? "D" : "S");
	jsonw__uint_field(w, "count", a->count);
	if (a->kind == STACK_OFFCPU)
		jsonw__uint_field(w, "total_ns", a->total_ns);
	stack_pair_members(w, s, a->ustack, a->kstack);
	if (a->kind == STACK_OFFCPU && a->has_waker) {
		jsonw__key(w, "waker");
		jsonw__obj_open(w);
		jsonw__uint_field(w, "pid", a->waker_pid);
		jsonw__uint_field(w, "tid", a->waker_tid);
		jsonw__str_field(w, "comm", a->waker_comm);
		stack_pair_members(w, s, a->waker_ustack, a->waker_kstack);
		jsonw__obj_close(w);
	}
	jsonw__obj_close(w);
}

static void stacks_json(struct jsonw *w, const struct run *r)
{
	const struct run_stacks *s = r->stacks;

	if (!s) {
		jsonw__null(w);
		return;
	}
	jsonw__obj_open(w);
	jsonw__bool_field(w, "offcpu", s->offcpu);
	jsonw__bool_field(w, "oncpu", s->oncpu);
	jsonw__bool_field(w, "waker", s->waker);
	jsonw__uint_field(w, "offcpu_min_ns", s->offcpu_min_ns);
	if (s->oncpu) {
		jsonw__uint_field(w, "oncpu_freq_hz", s->freq);
		jsonw__uint_field(w, "oncpu_period_ns", s->oncpu_period_ns);
		jsonw__uint_field(w, "oncpu_samples", s->oncpu_samples);
	} else {
		jsonw__null_field(w, "oncpu_freq_hz");
		if (s->oncpu_reason[0])
			jsonw__str_field(w, "oncpu_reason", s->oncpu_reason);
	}
	jsonw__key(w, "symbols");
	jsonw__obj_open(w);
	str_or_null(w, "kernel", s->kernel_symbols[0] ? s->kernel_symbols : NULL);
	str_or_null(w, "user", s->user_symbols[0] ? s->user_symbols : NULL);
	jsonw__obj_close(w);
	jsonw__key(w, "drops");
	jsonw__obj_open(w);
	jsonw__uint_field(w, "kernel_stack_failed", s->drops.kstack_fail);
	jsonw__uint_field(w, "user_stack_failed", s->drops.ustack_fail);
	jsonw__uint_field(w, "stack_map_full", s->drops.map_full);
	jsonw__uint_field(w, "truncated", s->drops.truncated);
	jsonw__uint_field(w, "aggregate_full", s->drops.agg_full);
	jsonw__uint_field(w, "aggregate_full_ns", s->drops.agg_full_ns);
	jsonw__uint_field(w, "pending_lost", s->drops.pending_lost);
	jsonw__uint_field(w, "waker_missed", s->drops.waker_missed);
	jsonw__uint_field(w, "oncpu_full", s->drops.oncpu_full);
	jsonw__uint_field(w, "mapping_records_lost", s->drops.perf_lost);
	jsonw__uint_field(w, "unresolved_user_frames", s->drops.unresolved);
	jsonw__uint_field(w, "unwind_incomplete", s->drops.cut);
	jsonw__obj_close(w);
	/* The off-CPU aggregates, then the others (on-CPU samples), each in s->aggs' order. */
	jsonw__key(w, "offcpu_stacks");
	jsonw__arr_open(w);
	for (size_t i = 0; i < s->naggs; i++)
		if (s->aggs[i].kind == STACK_OFFCPU)
			stack_agg_json(w, r, &s->aggs[i]);
	jsonw__arr_close(w);
	jsonw__key(w, "oncpu_stacks");
	jsonw__arr_open(w);
	for (size_t i = 0; i < s->naggs; i++)
		if (s->aggs[i].kind != STACK_OFFCPU)
			stack_agg_json(w, r, &s->aggs[i]);
	jsonw__arr_close(w);
	jsonw__obj_close(w);
}

/* points: each interval's totals as compact rows (up to RUN_STREAM_POINTS_MAX of them). */
static void stream_points_json(struct jsonw *w, const struct run_stream *st)
{
	static const char *const row[] = {"start_ns",	 "end_ns",	"on_cpu_ns",
					  "runqueue_ns", "sleeping_ns", "uninterruptible_ns",
					  "stopped_ns"};

	jsonw__obj_open(w);
	jsonw__key(w, "row");
	jsonw__arr_open(w);
	for (size_t i = 0; i < sizeof(row) / sizeof(row[0]); i++)
		jsonw__str(w, row[i]);
	jsonw__arr_close(w);
	jsonw__key(w, "intervals");
	jsonw__arr_open(w);
	for (size_t i = 0; i < st->npoints; i++) {
		const struct run_stream_point *p = &st->points[i];

		jsonw__arr_open(w);
		jsonw__int(w, p->start_ns);
		jsonw__int(w, p->end_ns);
		for (int k = 0; k < TSA_ST_NR; k++)
			jsonw__int(w, p->state_ns[k]);
		jsonw__arr_close(w);
	}
	jsonw__arr_close(w);
	jsonw__uint_field(w, "not_kept", st->points_beyond);
	jsonw__obj_close(w);
}

/* --interval: what became of the run's lines; null without --interval. */
static void stream_json(struct jsonw *w, const struct run *r)
{
	const struct run_stream *st = &r->stream;

	if (!st->on) {
		jsonw__null(w);
		return;
	}
	jsonw__obj_open(w);
	jsonw__bool_field(w, "nonblocking", st->nonblocking);
	str_or_null(w, "blocking_reason", st->nonblocking ? NULL : st->blocking_reason);
	jsonw__uint_field(w, "lines", st->lines);
	jsonw__uint_field(w, "written", st->written);
	jsonw__uint_field(w, "dropped", st->dropped);
	jsonw__uint_field(w, "unsent", st->unsent);
	jsonw__bool_field(w, "partial_line", st->partial);
	u64_or_null(w, "backlog_limit_bytes", st->backlog_limit, !st->nonblocking);
	u64_or_null(w, "backlog_peak_bytes", st->backlog_peak, !st->nonblocking);
	u64_or_null(w, "final_wait_ns", st->final_wait_ns, !st->nonblocking);
	u64_or_null(w, "final_wait_limit_ns", st->final_wait_limit_ns, !st->nonblocking);
	str_or_null(w, "error", st->error[0] ? st->error : NULL);
	/* The tree's states per interval: detail, kept for the last run only. */
	jsonw__key(w, "totals");
	if (r->detailed)
		stream_points_json(w, st);
	else
		jsonw__null(w);
	jsonw__obj_close(w);
}

static void part_json(struct jsonw *w, const struct part *x)
{
	jsonw__obj_open(w);
	if (x->kind != PART_BASH) {
		jsonw__str_field(w, "thread", x->thread);
		jsonw__str_field(w, "state", parts_state_name(x->state));
	}
	if (x->kind == PART_STACK)
		jsonw__str_field(w, "stack", x->stack);
	if (x->kind == PART_BASH)
		jsonw__str_field(w, "command", x->stack);
	jsonw__uint_field(w, "ns", x->ns);
	/* A command's CPU time; an on-CPU part's, less steal (what the cpu metric counts). */
	if (x->kind == PART_BASH || x->state == TSA_ST_ONCPU)
		jsonw__uint_field(w, "cpu_ns", x->cpu_ns);
	jsonw__obj_close(w);
}

/* runs[].parts (parts.h): the run's time by thread, state, stack and bash command. */
static void parts_json(struct jsonw *w, const struct run_parts *p)
{
	static const char *const lists[] = {
	    [PART_THREAD] = "threads", [PART_STACK] = "stacks", [PART_BASH] = "bash"};

	if (!p) {
		jsonw__null(w);
		return;
	}
	jsonw__obj_open(w);
	str_or_null(w, "root_thread", p->root);
	for (int l = 0; l < 3; l++) {
		jsonw__key(w, lists[l]);
		if ((l == PART_STACK && !p->stacks) || (l == PART_BASH && !p->bash)) {
			jsonw__null(w);
			continue;
		}
		jsonw__arr_open(w);
		/* Each list's parts in p->v's order. */
		for (size_t i = 0; i < p->n; i++)
			if (p->v[i].kind == l)
				part_json(w, &p->v[i]);
		jsonw__arr_close(w);
	}
	jsonw__obj_close(w);
}

/*
 * A run. The artifact's own (rows true): a member a line, the processes
 * and threads an element a line, with the timeline and the critical path.
 * A paired baseline's, in comparison.baseline.runs: figures only, its
 * processes and threads empty, its timeline and critical path null.
 */
static void run_json(struct jsonw *w, const struct run *r, bool rows)
{
	static const char *const policy[] = {"wait", "leave", "kill"};
	char sig[32];

	if (rows)
		jsonw__obj_open_rows(w);
	else
		jsonw__obj_open(w);
	jsonw__int_field(w, "index", r->index);
	jsonw__bool_field(w, "warmup", r->warmup);
	jsonw__str_field(w, "status", run_status_name(r->status));
	jsonw__key(w, "exit");
	jsonw__obj_open(w);
	if (r->term_signal) {
		jsonw__null_field(w, "code");
		jsonw__int_field(w, "signal", r->term_signal);
		jsonw__str_field(w, "signal_name",
				 status_signame(r->term_signal, sig, sizeof(sig)));
	} else {
		jsonw__int_field(w, "code", r->exit_code);
		jsonw__null_field(w, "signal");
	}
	jsonw__bool_field(w, "core_dumped", r->core_dumped);
	jsonw__obj_close(w);
	str_or_null(w, "interrupted_by",
		    r->interrupt_signal ? status_signame(r->interrupt_signal, sig, sizeof(sig))
					: NULL);
	jsonw__uint_field(w, "root_pid", r->root_pid);
	jsonw__uint_field(w, "wall_ns", r->wall_ns);
	jsonw__uint_field(w, "user_ns", r->ru.user_ns);
	jsonw__uint_field(w, "sys_ns", r->ru.sys_ns);
	count_field(w, "max_rss_kb", (double)r->ru.max_rss_kb);
	u64_or_null(w, "instructions", r->instructions, !r->have_instructions);
	jsonw__key(w, "rusage");
	jsonw__obj_open(w);
	count_field(w, "minor_faults", (double)r->ru.minflt);
	count_field(w, "major_faults", (double)r->ru.majflt);
	count_field(w, "voluntary_switches", (double)r->ru.nvcsw);
	count_field(w, "involuntary_switches", (double)r->ru.nivcsw);
	count_field(w, "inblock", (double)r->ru.inblock);
	count_field(w, "oublock", (double)r->ru.oublock);
	jsonw__obj_close(w);
	jsonw__key(w, "descendants");
	jsonw__obj_open(w);
	jsonw__str_field(w, "policy",
			 policy[r->desc.policy >= 0 && r->desc.policy < 3 ? r->desc.policy : 0]);
	jsonw__uint_field(w, "running_at_exit", r->desc.running_at_exit);
	jsonw__uint_field(w, "reaped_orphans", r->desc.reaped_orphans);
	jsonw__uint_field(w, "killed", r->desc.killed);
	jsonw__uint_field(w, "left_running", r->desc.left_running);
	jsonw__uint_field(w, "waited_ns", r->desc.waited_ns);
	jsonw__obj_close(w);
	jsonw__key(w, "stream");
	stream_json(w, r);
	jsonw__bool_field(w, "detailed", r->detailed);
	jsonw__key(w, "processes");
	if (rows)
		jsonw__arr_open_rows(w);
	else
		jsonw__arr_open(w);
	for (size_t i = 0; rows && i < r->nprocs; i++)
		proc_json(w, &r->procs[i]);
	jsonw__arr_close(w);
	jsonw__key(w, "threads");
	if (rows)
		jsonw__arr_open_rows(w);
	else
		jsonw__arr_open(w);
	for (size_t i = 0; rows && i < r->nthreads; i++)
		thread_json(w, &r->threads[i]);
	jsonw__arr_close(w);
	jsonw__key(w, "totals");
	totals_json(w, &r->totals);
	jsonw__key(w, "quality");
	quality_json(w, &r->quality, run_source_active(r, "ebpf"), r->timeline);
	jsonw__key(w, "stacks");
	stacks_json(w, r);
	jsonw__key(w, "parts");
	parts_json(w, r->parts);
	/* --timeline (artifact_timeline.c); the critical path before the timeline. */
	if (r->critpath) {
		jsonw__key(w, "critical_path");
		if (rows)
			artifact_critpath_json(w, r);
		else
			jsonw__null(w);
	}
	if (r->timeline) {
		jsonw__key(w, "timeline");
		if (rows)
			artifact_timeline_json(w, r);
		else
			jsonw__null(w);
	}
	jsonw__obj_close(w);
}

static void tail_json(struct jsonw *w, const char *key, uint64_t cpu_ns, double stretch)
{
	jsonw__key(w, key);
	jsonw__obj_open(w);
	jsonw__uint_field(w, "cpu_ns", cpu_ns);
	jsonw__uint_field(w, "wall_ns", (uint64_t)(cpu_ns * stretch + 0.5));
	jsonw__obj_close(w);
}

/* The bash profile's trap_cost (or its null and trap_cost_reason). */
static void trap_cost_members(struct jsonw *w, const struct bash_quality *q)
{
	double st = q->stretch_milli / 1000.0;

	if (!q->calibrated) {
		jsonw__null_field(w, "trap_cost");
		jsonw__str_field(w, "trap_cost_reason",
				 q->fallback ? "the pure-bash trap does not measure its cost"
					     : "no calibration record arrived");
		return;
	}
	/* Wall figures are what was removed: the CPU cost, stretched (bashprof.h). */
	jsonw__key(w, "trap_cost");
	jsonw__obj_open(w);
	jsonw__uint_field(w, "cpu_ns", q->cal[BASH_COST_BASE].cpu_ns);
	jsonw__uint_field(w, "wall_ns", (uint64_t)(q->cal[BASH_COST_BASE].cpu_ns * st + 0.5));
	jsonw__uint_field(w, "start_up_wall_ns", q->cal[BASH_COST_BASE].wall_ns);
	frac_field(w, "runnable_stretch", st);
	frac_field(w, "before_clock_fraction", q->cal_pre_permille / 1000.0);
	jsonw__str_field(w, "calibration",
			 q->cal_cached	  ? "cached"
			 : q->cal_respeed ? "remeasured"
					  : "measured");
	jsonw__uint_field(w, "calibration_cpu_ns", q->cal_spent_cpu_ns);
	tail_json(w, "terminal_tail", q->cal[BASH_COST_TTY].cpu_ns, st);
	tail_json(w, "job_table_tail", q->cal[BASH_COST_JOBS].cpu_ns, st);
	if (q->timed_runs) {
		jsonw__key(w, "timed");
		jsonw__obj_open(w);
		jsonw__uint_field(w, "runs", q->timed_runs);
		jsonw__uint_field(w, "total_ns", q->timed_ns);
		jsonw__uint_field(w, "avg_ns", q->timed_ns / q->timed_runs);
		jsonw__uint_field(w, "guessed_parts", q->guessed_parts);
		jsonw__uint_field(w, "stalls_ns", q->stall_ns);
		jsonw__obj_close(w);
	} else {
		jsonw__null_field(w, "timed");
		jsonw__str_field(w, "timed_reason",
				 "the builtin could not time its trap runs (no sigprocmask() hook, "
				 "or no steady count of its calls): the start-up figures are the "
				 "whole cost");
	}
	jsonw__obj_close(w);
}

static void bash_node_json(struct jsonw *w, const struct bash_node *n)
{
	jsonw__obj_open(w);
	jsonw__uint_field(w, "id", n->id);
	u64_or_null(w, "parent", n->parent ? n->parent->id : 0, !n->parent);
	jsonw__str_field(w, "kind", bash_kind_name(n->kind));
	jsonw__str_field(w, "source", n->file);
	jsonw__uint_field(w, "line", n->line);
	jsonw__str_field(w, "text", n->text);
	jsonw__uint_field(w, "depth", n->depth);
	jsonw__uint_field(w, "count", n->count);
	jsonw__uint_field(w, "wall_ns", n->wall_ns);
	jsonw__uint_field(w, "cpu_ns", n->cpu_ns);
	jsonw__uint_field(w, "raw_wall_ns", n->raw_wall_ns);
	jsonw__uint_field(w, "raw_cpu_ns", n->raw_cpu_ns);
	jsonw__bool_field(w, "pipeline_part", n->pipe_part);
	jsonw__key(w, "processes");
	jsonw__arr_open(w);
	for (uint32_t k = 0; k < n->nprocs; k++) {
		const struct bash_procs *p = &n->procs[k];
		bool no_states = p->unmeasured & ACCT_NO_STATES;

		jsonw__obj_open(w);
		jsonw__str_field(w, "comm", p->comm);
		jsonw__uint_field(w, "count", p->count);
		jsonw__uint_field(w, "first_pid", p->first_pid);
		jsonw__uint_field(w, "wall_ns", p->wall_ns);
		jsonw__uint_field(w, "on_cpu_ns", p->state_ns[TSA_ST_ONCPU]);
		jsonw__uint_field(w, "runqueue_ns", p->state_ns[TSA_ST_RUNQ]);
		u64_or_null(w, "sleeping_ns", p->state_ns[TSA_ST_SLEEP], no_states);
		u64_or_null(w, "uninterruptible_ns", p->state_ns[TSA_ST_DISK], no_states);
		u64_or_null(w, "stopped_ns", p->state_ns[TSA_ST_STOPPED], no_states);
		jsonw__uint_field(w, "with_bash_before_exec", p->with_bash);
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
	jsonw__obj_close(w);
}

/* The bash profile (--bash): the call tree, flattened with parent ids. */
static void bash_json(struct jsonw *w, const struct bashprof *bp, const char *folded)
{
	const struct bash_quality *q = bashprof__quality(bp);
	const struct bash_total *t = bashprof__total(bp);

	jsonw__obj_open(w);
	jsonw__str_field(w, "recorder", q->fallback ? "pure-bash" : "builtin");
	str_or_null(w, "recorder_limits", q->fallback ? BASHPROF_FALLBACK_LIMITS : NULL);
	str_or_null(w, "folded", folded);
	jsonw__key(w, "total");
	jsonw__obj_open(w);
	jsonw__uint_field(w, "self_wall_ns", t->self_wall_ns);
	jsonw__uint_field(w, "total_wall_ns", t->total_wall_ns);
	jsonw__uint_field(w, "cpu_ns", t->cpu_ns);
	jsonw__uint_field(w, "commands", t->commands);
	jsonw__uint_field(w, "raw_self_wall_ns", t->raw_self_wall_ns);
	jsonw__uint_field(w, "raw_cpu_ns", t->raw_cpu_ns);
	jsonw__obj_close(w);
	trap_cost_members(w, q);
	jsonw__key(w, "quality");
	jsonw__obj_open(w);
	jsonw__uint_field(w, "datagrams", q->datagrams);
	jsonw__uint_field(w, "records", q->records);
	jsonw__uint_field(w, "lost_records", q->lost_records);
	jsonw__uint_field(w, "bad_records", q->bad_records);
	jsonw__uint_field(w, "bad_datagrams", q->bad_datagrams);
	jsonw__uint_field(w, "unknown_streams", q->unknown_streams);
	jsonw__uint_field(w, "streams", q->streams);
	jsonw__uint_field(w, "unterminated_streams", q->unterminated);
	jsonw__uint_field(w, "orphan_streams", q->orphan_streams);
	jsonw__uint_field(w, "placed_streams", q->placed_streams);
	jsonw__uint_field(w, "attached_processes", q->attached_processes);
	jsonw__uint_field(w, "unattached_processes", q->unattached_processes);
	jsonw__uint_field(w, "trap_lost_streams", q->trap_lost_streams);
	jsonw__uint_field(w, "functrace_off_streams", q->functrace_off_streams);
	jsonw__uint_field(w, "deep_streams", q->deep_streams);
	jsonw__uint_field(w, "silent_bash_processes", q->silent_bash);
	jsonw__uint_field(w, "limit_drops", q->limit_drops);
	jsonw__uint_field(w, "memory_bytes", q->mem_bytes);
	jsonw__obj_close(w);
	jsonw__key(w, "commands");
	jsonw__arr_open(w);
	for (size_t i = 0; i < bashprof__nodes(bp); i++)
		bash_node_json(w, bashprof__node(bp, i));
	jsonw__arr_close(w);
	jsonw__obj_close(w);
}

/* A statistic: integral values as integers, others as they read back exactly; NAN is null. */
static void num(struct jsonw *w, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 9e15)
		jsonw__fixed(w, v, 0);
	else
		jsonw__exact(w, v, 15);
}

static void num_field(struct jsonw *w, const char *key, double v)
{
	jsonw__key(w, key);
	num(w, v);
}

/* A ratio or a bound: null when it is not finite (a zero baseline median). */
static void ratio_field(struct jsonw *w, const char *key, double v)
{
	jsonw__key(w, key);
	jsonw__fixed(w, v, 6);
}

/*
 * summary{<metric>}: each metric over the measured runs that completed, or
 * null; the reasons for the nulls go to summary_unavailable{<metric>}.
 */
static void summary_members(struct jsonw *w, const struct session *s)
{
	struct metric_summary ms[METRIC_NR];

	if (metrics_summarize(s->runs, s->nruns, ms) < 0)
		return;
	jsonw__key(w, "summary");
	jsonw__obj_open(w);
	for (int m = 0; m < METRIC_NR; m++) {
		const struct metric_def *d = metric_def(m);

		jsonw__key(w, d->name);
		if (!ms[m].available) {
			jsonw__null(w);
			continue;
		}
		jsonw__obj_open(w);
		jsonw__str_field(w, "unit", metric_unit_name(d->unit));
		count_field(w, "n", (double)ms[m].n);
		num_field(w, "median", ms[m].median);
		num_field(w, "mean", ms[m].mean);
		num_field(w, "stddev", ms[m].stddev);
		num_field(w, "cv", ms[m].cv);
		num_field(w, "min", ms[m].min);
		num_field(w, "max", ms[m].max);
		num_field(w, "mad", ms[m].mad);
		count_field(w, "outliers", (double)ms[m].outliers);
		jsonw__obj_close(w);
	}
	jsonw__obj_close(w);
	jsonw__key(w, "summary_unavailable");
	jsonw__obj_open(w);
	for (int m = 0; m < METRIC_NR; m++)
		if (!ms[m].available)
			jsonw__str_field(w, metric_def(m)->name, ms[m].why);
	jsonw__obj_close(w);
}

static void values_json(struct jsonw *w, const char *key, const double *v, size_t n)
{
	jsonw__key(w, key);
	jsonw__arr_open(w);
	for (size_t i = 0; i < n; i++)
		num(w, v[i]);
	jsonw__arr_close(w);
}

static void gate_metric_json(struct jsonw *w, const struct gate_metric *gm)
{
	const struct metric_def *d = metric_def(gm->metric);

	jsonw__obj_open(w);
	jsonw__str_field(w, "name", d->name);
	jsonw__str_field(w, "unit", metric_unit_name(d->unit));
	num_field(w, "base_median", gm->base_median);
	num_field(w, "new_median", gm->new_median);
	ratio_field(w, "ratio", gm->ratio);
	ratio_field(w, "ci_low", gm->ci_low);
	ratio_field(w, "ci_high", gm->ci_high);
	ratio_field(w, "threshold", gm->threshold);
	jsonw__str_field(w, "verdict", gate_verdict_name(gm->verdict));
	jsonw__str_field(w, "outcome", gate_outcome_name(gm->outcome));
	str_or_null(w, "note", gm->note[0] ? gm->note : NULL);
	count_field(w, "base_n", (double)gm->nb);
	count_field(w, "new_n", (double)gm->nn);
	ratio_field(w, "base_cv", gm->base_cv);
	ratio_field(w, "new_cv", gm->new_cv);
	ratio_field(w, "base_robust_cv", gm->base_rcv);
	ratio_field(w, "new_robust_cv", gm->new_rcv);
	jsonw__bool_field(w, "noisy", gm->noisy);
	values_json(w, "base_values", gm->base_values, gm->nb);
	values_json(w, "new_values", gm->new_values, gm->nn);
	jsonw__obj_close(w);
}

#define EXPLAIN_JSON_OTHERS 50 /* parts within noise written per level, the largest */

static void explain_part_json(struct jsonw *w, const struct explain_part *p, enum explain_level l)
{
	jsonw__obj_open(w);
	if (l == EXPLAIN_PROCESS)
		jsonw__str_field(w, "process", p->thread);
	else if (l != EXPLAIN_BASH)
		jsonw__str_field(w, "thread", p->thread);
	if (l == EXPLAIN_THREAD || l == EXPLAIN_STACK)
		jsonw__str_field(w, "state", parts_state_name(p->state));
	if (l == EXPLAIN_STACK)
		jsonw__str_field(w, "stack", p->stack);
	if (l == EXPLAIN_BASH)
		jsonw__str_field(w, "command", p->stack);
	num_field(w, "base_ns", p->base);
	num_field(w, "new_ns", p->new);
	num_field(w, "change_ns", p->delta);
	num_field(w, "ci_low_ns", p->low);
	num_field(w, "ci_high_ns", p->high);
	ratio_field(w, "p_value", p->p);
	ratio_field(w, "share", p->share);
	jsonw__bool_field(w, "blamed", p->blamed);
	jsonw__obj_close(w);
}

static void explain_level_json(struct jsonw *w, const struct explain_metric *em,
			       enum explain_level l)
{
	const struct explain_levelset *ls = &em->level[l];
	size_t others = 0, omitted = 0;

	jsonw__obj_open(w);
	jsonw__bool_field(w, "available", ls->available);
	if (!ls->available) {
		jsonw__str_field(w, "reason", ls->why);
		jsonw__obj_close(w);
		return;
	}
	count_field(w, "parts_total", (double)ls->nparts);
	count_field(w, "tested", (double)ls->tested);
	count_field(w, "compared", (double)ls->compared);
	ratio_field(w, "confidence", ls->confidence);
	count_field(w, "blamed", (double)ls->nblamed);
	num_field(w, "blamed_ns", ls->blamed_ns);
	num_field(w, "within_noise_ns", ls->noise_ns);
	count_field(w, "within_noise_parts", (double)ls->nnoise);
	num_field(w, "remainder_ns", ls->remainder_ns);
	jsonw__str_field(w, "remainder", explain_remainder_name(em->metric));
	jsonw__key(w, "parts");
	jsonw__arr_open(w);
	for (size_t i = 0; i < ls->nparts; i++) {
		const struct explain_part *p = &ls->parts[i];

		if (!p->blamed && (p->delta == 0 || others++ >= EXPLAIN_JSON_OTHERS)) {
			omitted += p->delta != 0;
			continue;
		}
		explain_part_json(w, p, l);
	}
	jsonw__arr_close(w);
	count_field(w, "parts_omitted", (double)omitted);
	jsonw__obj_close(w);
}

static void explain_metric_json(struct jsonw *w, const struct explain_metric *em)
{
	jsonw__obj_open(w);
	jsonw__str_field(w, "name", metric_def(em->metric)->name);
	jsonw__bool_field(w, "available", em->available);
	if (!em->available) {
		jsonw__str_field(w, "reason", em->why);
		jsonw__obj_close(w);
		return;
	}
	jsonw__str_field(w, "scope", em->scope);
	str_or_null(w, "root_thread", em->root);
	count_field(w, "base_n", (double)em->nb);
	count_field(w, "new_n", (double)em->nn);
	num_field(w, "base_median_ns", em->base_median);
	num_field(w, "new_median_ns", em->new_median);
	num_field(w, "change_ns", em->total);
	num_field(w, "floor_ns", em->floor_ns);
	jsonw__bool_field(w, "judged", em->judged);
	jsonw__key(w, "levels");
	jsonw__obj_open(w);
	for (int l = 0; l < EXPLAIN_NLEVELS; l++) {
		jsonw__key(w, explain_level_name(l));
		explain_level_json(w, em, l);
	}
	jsonw__obj_close(w);
	jsonw__obj_close(w);
}

/* comparison.explanation: where each explained metric's change came from (explain.h). */
static void explain_json(struct jsonw *w, const struct explain *e)
{
	if (!e) {
		jsonw__null(w);
		return;
	}
	jsonw__obj_open(w);
	jsonw__str_field(
	    w, "method",
	    "difference of medians per part (new - baseline, per run); a part is blamed when "
	    "its percentile bootstrap interval lies wholly beyond the floor (at least floor_ns "
	    "from 0, and never reaching 0) and a rank-sum test of its values run by run "
	    "rejects no change, both at "
	    "the confidence corrected for the parts that moved (Bonferroni)");
	frac_field(w, "confidence", e->confidence);
	jsonw__uint_field(w, "resamples", e->resamples);
	jsonw__uint_field(w, "seed", e->seed);
	jsonw__int_field(w, "min_runs", EXPLAIN_MIN_RUNS);
	jsonw__key(w, "metrics");
	jsonw__arr_open(w);
	for (int i = 0; i < e->n; i++)
		explain_metric_json(w, &e->m[i]);
	jsonw__arr_close(w);
	jsonw__obj_close(w);
}

static void argv_json(struct jsonw *w, char *const *argv, int argc)
{
	jsonw__key(w, "argv");
	jsonw__arr_open(w);
	for (int i = 0; i < argc; i++)
		jsonw__str(w, argv[i]);
	jsonw__arr_close(w);
}

/*
 * comparison: the baseline, the statistic (enough to recompute every
 * interval from base_values and new_values), each gated metric, the noise
 * sentinel and the notes. The baseline command's runs (paired mode) are
 * kept here, figures only, so the artifact's runs[] stay the command's.
 */
static void comparison_json(struct jsonw *w, const struct session *s)
{
	const struct comparison *c = s->cmp;

	jsonw__obj_open(w);
	jsonw__key(w, "baseline");
	jsonw__obj_open(w);
	jsonw__str_field(w, "kind", c->baseline_kind);
	if (!strcmp(c->baseline_kind, "artifact")) {
		jsonw__str_field(w, "path", c->baseline_name);
	} else {
		jsonw__str_field(w, "command", c->baseline_name);
		argv_json(w, s->base_argv, s->base_argc);
	}
	jsonw__key(w, "fingerprint_differences");
	jsonw__arr_open(w);
	for (int i = 0; i < c->nfingerprint_diff; i++)
		jsonw__str(w, c->fingerprint_diff[i]);
	jsonw__arr_close(w);
	if (s->base_runs) {
		jsonw__key(w, "runs");
		jsonw__arr_open(w);
		for (size_t i = 0; i < s->nbase_runs; i++)
			run_json(w, &s->base_runs[i], false);
		jsonw__arr_close(w);
	}
	jsonw__obj_close(w);
	jsonw__key(w, "statistic");
	jsonw__obj_open(w);
	jsonw__str_field(w, "method", "ratio of medians (new / baseline), percentile bootstrap");
	frac_field(w, "confidence", c->confidence);
	jsonw__uint_field(w, "resamples", c->resamples);
	jsonw__uint_field(w, "seed", c->seed);
	jsonw__str_field(w, "generator", "xoshiro256** seeded by splitmix64");
	jsonw__bool_field(w, "paired", c->paired);
	jsonw__int_field(w, "min_runs", GATE_MIN_RUNS);
	jsonw__obj_close(w);
	jsonw__str_field(w, "verdict", gate_verdict_name(c->verdict));
	jsonw__str_field(w, "outcome", gate_outcome_name(c->outcome));
	jsonw__uint_field(w, "runs_added", c->runs_added);
	jsonw__uint_field(w, "max_runs", c->max_runs);
	jsonw__key(w, "metrics");
	jsonw__arr_open(w);
	for (int i = 0; i < c->nmetrics; i++)
		gate_metric_json(w, &c->metrics[i]);
	jsonw__arr_close(w);
	jsonw__key(w, "noise_sentinel");
	jsonw__obj_open(w);
	jsonw__bool_field(w, "available", c->sentinel.available);
	if (c->sentinel.available) {
		num_field(w, "base_median_ns", c->sentinel.base_median);
		num_field(w, "new_median_ns", c->sentinel.new_median);
		num_field(w, "excess_ns", c->sentinel.excess);
		/* Only a wall verdict has a threshold to derive a limit from. */
		if (!isnan(c->sentinel.limit)) {
			num_field(w, "limit_ns", c->sentinel.limit);
			jsonw__bool_field(w, "fired", c->sentinel.fired);
		}
	} else {
		jsonw__str_field(w, "reason", c->sentinel.why);
	}
	jsonw__obj_close(w);
	jsonw__key(w, "notes");
	jsonw__arr_open(w);
	for (int i = 0; i < c->nnotes; i++)
		jsonw__str(w, c->notes[i]);
	jsonw__arr_close(w);
	jsonw__key(w, "explanation");
	explain_json(w, c->explain);
	jsonw__obj_close(w);
}

static void sandbox_json(struct jsonw *w, const struct session *s)
{
	jsonw__key(w, "sandbox");
	jsonw__obj_open(w);
	jsonw__bool_field(w, "active", s->sandboxed);
	str_or_null(w, "reason", s->sandboxed ? NULL : s->sandbox_reason);
	if (s->landlock_known) {
		jsonw__key(w, "landlock");
		jsonw__obj_open(w);
		jsonw__bool_field(w, "active", !s->landlock_reason);
		str_or_null(w, "reason", s->landlock_reason);
		jsonw__obj_close(w);
	}
	if (s->privileges_known) {
		jsonw__key(w, "privileges");
		jsonw__obj_open(w);
		jsonw__bool_field(w, "dropped", s->privileges_dropped);
		jsonw__uint_field(w, "uid", s->privileges_uid);
		str_or_null(w, "reason", s->privileges_reason);
		jsonw__obj_close(w);
	}
	jsonw__obj_close(w);
}

/*
 * The artifact is written as a stream: a thread is written out once the
 * writer's buffer fills, so the memory a run with 10,000 threads needs is
 * the buffer's, not that of a tree of all of them. Top-level members, runs,
 * a run's members and its threads and processes each start a line
 * (grep-friendly; jq . for an indented view).
 */
static void session_json(struct jsonw *w, const struct session *s)
{
	jsonw__obj_open_rows(w);
	jsonw__str_field(w, "schema", ARTIFACT_SCHEMA);
	jsonw__key(w, "tool");
	jsonw__obj_open(w);
	jsonw__str_field(w, "name", "tsarun");
	jsonw__str_field(w, "version", s->tool_version);
	if (s->supervisor_max_rss_kb)
		count_field(w, "supervisor_max_rss_kb", (double)s->supervisor_max_rss_kb);
	if (s->sandbox_known)
		sandbox_json(w, s);
	jsonw__obj_close(w);
	jsonw__key(w, "host");
	artifact_host_json(w, &s->host);
	jsonw__key(w, "command");
	jsonw__obj_open(w);
	argv_json(w, s->argv, s->argc);
	jsonw__str_field(w, "mode", s->mode ? s->mode : "run");
	jsonw__obj_close(w);
	jsonw__key(w, "runs");
	jsonw__arr_open_rows(w);
	for (size_t i = 0; i < s->nruns; i++)
		run_json(w, &s->runs[i], true);
	jsonw__arr_close(w);
	summary_members(w, s);
	if (s->nruns && s->runs[s->nruns - 1].bash) {
		jsonw__key(w, "bash");
		bash_json(w, s->runs[s->nruns - 1].bash, s->bash_folded);
	}
	jsonw__key(w, "comparison");
	if (s->cmp)
		comparison_json(w, s);
	else
		jsonw__null(w);
	jsonw__obj_close(w);
}

int artifact_emit(const struct session *s, FILE *f)
{
	struct jsonw *w = jsonw__new(f, JSONW_KEEP_COLONS | JSONW_NEWLINE);
	int ret, werr;

	if (!w)
		return -ENOMEM;
	errno = 0; /* a failed write leaves its reason (ENOSPC, EROFS, ...) here */
	session_json(w, s);
	ret = jsonw__finish(w);
	werr = errno;
	jsonw__free(w);
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
	struct jsonw *w;
	char *text;

	if (!s->cmp)
		return NULL;
	w = jsonw__new(NULL, JSONW_KEEP_COLONS);
	if (!w)
		return NULL;
	comparison_json(w, s);
	text = jsonw__take(w, NULL);
	jsonw__free(w);
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
