// SPDX-License-Identifier: MIT
/* The stderr report. */
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "stacks.h"
#include "status.h"
#include "table.h"
#include "timeline.h"

#define C_BOLD	 "\033[1m"
#define C_DIM	 "\033[2m"
#define C_YELLOW "\033[33m"
#define C_RED	 "\033[31m"
#define C_RESET	 "\033[0m"

const char *fmt_dur(uint64_t ns, char *buf, unsigned long len)
{
	if (ns >= 1000000000ull)
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, len, "%.0f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	return buf;
}

const char *fmt_ms(uint64_t ns, char *buf, unsigned long len)
{
	double ms = (double)ns / 1e6;

	if (ns == 0)
		snprintf(buf, len, "0");
	else if (ms >= 100)
		snprintf(buf, len, "%.1f", ms);
	else if (ms >= 1)
		snprintf(buf, len, "%.2f", ms);
	else
		snprintf(buf, len, "%.3f", ms);
	return buf;
}

static const char *fmt_kb(long kb, char *buf, unsigned long len)
{
	if (kb >= 1024 * 1024)
		snprintf(buf, len, "%.2f GiB", (double)kb / (1024.0 * 1024));
	else if (kb >= 1024)
		snprintf(buf, len, "%.1f MiB", (double)kb / 1024.0);
	else
		snprintf(buf, len, "%ld KiB", kb);
	return buf;
}

static uint64_t other_ns(const uint64_t *st, uint64_t residual)
{
	return st[TSA_ST_STOPPED] + residual;
}

double sort_key_thread(const struct thread_acct *t, enum sort_key k)
{
	switch (k) {
	case SORT_CPU:
		return (double)t->state_ns[TSA_ST_ONCPU];
	case SORT_RUNQ:
		return (double)t->state_ns[TSA_ST_RUNQ];
	case SORT_SLEEP:
		return (double)t->state_ns[TSA_ST_SLEEP];
	case SORT_DISK:
		return (double)t->state_ns[TSA_ST_DISK];
	case SORT_OFFCPU:
		return (double)(t->state_ns[TSA_ST_SLEEP] + t->state_ns[TSA_ST_DISK] +
				t->state_ns[TSA_ST_STOPPED]);
	case SORT_SWITCHES:
		return (double)(t->voluntary + t->involuntary);
	case SORT_WAKEUP_LAT:
		return (double)t->wakeup_lat_max;
	case SORT_TID:
		return -(double)t->tid;
	case SORT_WALL:
	default:
		return (double)t->lifetime_ns + (double)t->state_ns[TSA_ST_ONCPU] * 1e-9;
	}
}

static double key_proc(const struct proc_acct *p, enum sort_key k)
{
	switch (k) {
	case SORT_CPU:
		return (double)p->state_ns[TSA_ST_ONCPU];
	case SORT_RUNQ:
		return (double)p->state_ns[TSA_ST_RUNQ];
	case SORT_SLEEP:
		return (double)p->state_ns[TSA_ST_SLEEP];
	case SORT_DISK:
		return (double)p->state_ns[TSA_ST_DISK];
	case SORT_OFFCPU:
		return (double)(p->state_ns[TSA_ST_SLEEP] + p->state_ns[TSA_ST_DISK] +
				p->state_ns[TSA_ST_STOPPED]);
	case SORT_TID:
		return -(double)p->pid;
	case SORT_SWITCHES:
	case SORT_WAKEUP_LAT:
	case SORT_WALL:
	default:
		return (double)(p->end_ns - p->start_ns) + (double)p->state_ns[TSA_ST_ONCPU] * 1e-9;
	}
}

struct sort_ctx {
	const struct run *r;
	enum sort_key key;
};

static struct sort_ctx g_sort; /* qsort has no context argument in C11 */

static int cmp_thread_idx(const void *a, const void *b)
{
	const struct thread_acct *x = &g_sort.r->threads[*(const size_t *)a];
	const struct thread_acct *y = &g_sort.r->threads[*(const size_t *)b];
	double kx = sort_key_thread(x, g_sort.key), ky = sort_key_thread(y, g_sort.key);

	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

size_t *table_thread_order(const struct run *r, enum sort_key k)
{
	size_t *v = malloc((r->nthreads ? r->nthreads : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < r->nthreads; i++)
		v[i] = i;
	g_sort.r = r;
	g_sort.key = k;
	qsort(v, r->nthreads, sizeof(*v), cmp_thread_idx);
	return v;
}

const char *sort_key_label(enum sort_key k)
{
	static const char *const labels[] = {
	    [SORT_WALL] = "lifetime",
	    [SORT_CPU] = "on-CPU time",
	    [SORT_RUNQ] = "runqueue time",
	    [SORT_SLEEP] = "sleeping time",
	    [SORT_DISK] = "D time",
	    [SORT_OFFCPU] = "off-CPU time",
	    [SORT_SWITCHES] = "switches",
	    [SORT_WAKEUP_LAT] = "wakeup latency",
	    [SORT_TID] = "tid",
	};

	return (unsigned)k < sizeof(labels) / sizeof(labels[0]) && labels[k] ? labels[k]
									     : "lifetime";
}

static int cmp_proc_idx(const void *a, const void *b)
{
	const struct proc_acct *x = &g_sort.r->procs[*(const size_t *)a];
	const struct proc_acct *y = &g_sort.r->procs[*(const size_t *)b];
	double kx = key_proc(x, g_sort.key), ky = key_proc(y, g_sort.key);

	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Does thread t belong to process p? (pid reuse is told apart by time) */
static bool in_proc(const struct thread_acct *t, const struct proc_acct *p)
{
	return t->pid == p->pid && t->start_ns >= p->start_ns && t->end_ns <= p->end_ns;
}

struct cols {
	char life[16], cpu[16], rq[16], s[16], d[16], other[16], wake[24], sw[24];
};

/* What the run's sources could not count (switches under procfs): shown as "-". */
static uint32_t g_unmeasured;

/* unmeasured: of the row's threads (ACCT_NO_STATES: S and D shown as "-", in OTHER). */
static void fill_cols(struct cols *c, uint64_t life, const uint64_t *st, uint64_t residual,
		      uint64_t lat_sum, uint64_t lat_n, uint64_t lat_max, uint64_t vol,
		      uint64_t invol, uint32_t unmeasured)
{
	fmt_ms(life, c->life, sizeof(c->life));
	fmt_ms(st[TSA_ST_ONCPU], c->cpu, sizeof(c->cpu));
	fmt_ms(st[TSA_ST_RUNQ], c->rq, sizeof(c->rq));
	if (unmeasured & ACCT_NO_STATES) {
		snprintf(c->s, sizeof(c->s), "-");
		snprintf(c->d, sizeof(c->d), "-");
	} else {
		fmt_ms(st[TSA_ST_SLEEP], c->s, sizeof(c->s));
		fmt_ms(st[TSA_ST_DISK], c->d, sizeof(c->d));
	}
	fmt_ms(other_ns(st, residual), c->other, sizeof(c->other));
	/*
	 * The average in whole nanoseconds, as the artifact keeps it, so that
	 * `tsarun report` prints what the run printed: from the exact sum, an
	 * average within a nanosecond of a half microsecond rounded the other
	 * way once in CI (77 against 76 us).
	 */
	if (lat_n)
		snprintf(c->wake, sizeof(c->wake), "%.0f/%.0f", (double)(lat_sum / lat_n) / 1e3,
			 (double)lat_max / 1e3);
	else
		snprintf(c->wake, sizeof(c->wake), "-");
	if (g_unmeasured & ACCT_NO_SWITCHES)
		snprintf(c->sw, sizeof(c->sw), "-");
	else
		snprintf(c->sw, sizeof(c->sw), "%llu/%llu", (unsigned long long)vol,
			 (unsigned long long)invol);
}

static void print_row(FILE *f, const struct table_opts *o, bool bold, const char *pid,
		      const char *tid, const char *comm, const struct cols *c)
{
	fprintf(f, "%s%7s %7s  %-16.16s %9s %9s %9s %9s %9s %8s %11s %13s%s\n",
		bold && o->color ? C_BOLD : "", pid, tid, comm, c->life, c->cpu, c->rq, c->s, c->d,
		c->other, c->wake, c->sw, bold && o->color ? C_RESET : "");
}

/*
 * A thread's TID column: its tid, marked '*' when it took the main thread's
 * tid by calling exec from another thread (the note under the table gives
 * the tid it had before).
 */
static void tid_text(char *buf, size_t len, const struct thread_acct *t)
{
	snprintf(buf, len, "%u%s", t->tid, t->tid_before_exec ? "*" : "");
}

static void thread_row(FILE *f, const struct table_opts *o, const struct thread_acct *t)
{
	struct cols c;
	char tid[16];

	fill_cols(&c, t->lifetime_ns, t->state_ns, t->residual_ns, t->wakeup_lat_sum,
		  t->wakeup_lat_count, t->wakeup_lat_max, t->voluntary, t->involuntary,
		  t->unmeasured);
	tid_text(tid, sizeof(tid), t);
	print_row(f, o, false, "", tid, t->comm, &c);
}

static void print_summary(FILE *f, const struct run *r, const struct table_opts *o)
{
	char st[96], wall[32], cpu[32], user[32], sys[32], rss[32];

	status_describe(r, st, sizeof(st));
	fprintf(f, "%stsarun: %s: %s%s\n", o->color ? C_BOLD : "", o->command ? o->command : "", st,
		o->color ? C_RESET : "");
	fprintf(f, "  wall %s   cpu %s (user %s + sys %s)   max RSS %s\n",
		fmt_dur(r->wall_ns, wall, sizeof(wall)),
		fmt_dur(r->ru.user_ns + r->ru.sys_ns, cpu, sizeof(cpu)),
		fmt_dur(r->ru.user_ns, user, sizeof(user)), fmt_dur(r->ru.sys_ns, sys, sizeof(sys)),
		fmt_kb(r->ru.max_rss_kb, rss, sizeof(rss)));
	fprintf(f,
		"  page faults %ld minor, %ld major   context switches %ld voluntary, %ld "
		"involuntary\n",
		r->ru.minflt, r->ru.majflt, r->ru.nvcsw, r->ru.nivcsw);
	if (r->desc.running_at_exit) {
		char waited[32];
		const char *what = r->desc.policy == 1	 ? "left running"
				   : r->desc.policy == 2 ? "killed"
							 : "waited for";

		fprintf(f, "  %u process%s of the tree still ran when the command exited: %s",
			r->desc.running_at_exit, r->desc.running_at_exit == 1 ? "" : "es", what);
		if (r->desc.policy == 0 || r->desc.policy == 2)
			fprintf(f, " (%s)", fmt_dur(r->desc.waited_ns, waited, sizeof(waited)));
		if (r->desc.left_running && r->desc.policy != 1)
			fprintf(f, "; %u still running", r->desc.left_running);
		fputc('\n', f);
	}
	if (r->desc.reaped_orphans)
		fprintf(f, "  %u orphaned process%s reaped by tsarun\n", r->desc.reaped_orphans,
			r->desc.reaped_orphans == 1 ? "" : "es");
}

/* Delay counters summed over the threads that have them (taskstats). */
static void print_delays(FILE *f, const struct run *r)
{
	static const char *const label[DELAY_NR] = {
	    "cpu", "block I/O", "swap-in", "reclaim", "thrashing", "compaction", "wp-copy", "irq",
	};
	const struct taskstats_quality *q = &r->quality.ts;
	const struct delayacct_quality *da = &r->quality.delayacct;
	uint64_t count[DELAY_NR] = {0}, total[DELAY_NR] = {0}, with = 0;
	bool avail[DELAY_NR] = {false};
	char d[32];

	if (!q->active)
		return;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct thread_acct *t = &r->threads[i];

		if (!t->have_delays)
			continue;
		with++;
		for (int k = 0; k < DELAY_NR; k++) {
			if (!t->delays[k].available)
				continue;
			avail[k] = true;
			count[k] += t->delays[k].count;
			total[k] += t->delays[k].total_ns;
		}
	}
	fprintf(f, "  delays (taskstats, %llu of %zu threads):", (unsigned long long)with,
		r->nthreads);
	for (int k = 0, first = 1; k < DELAY_NR; k++) {
		if (!avail[k] || (k != DELAY_CPU && !count[k]))
			continue;
		fprintf(f, "%s %s %s (%llu)", first ? "" : ",", label[k],
			fmt_dur(total[k], d, sizeof(d)), (unsigned long long)count[k]);
		first = 0;
	}
	if (da->known && !da->non_cpu_live)
		fprintf(f, "; other delays not counted: %s", da->reason);
	else if (avail[DELAY_BLOCK_IO])
		fprintf(f, "; no other delay");
	fputc('\n', f);
	if (q->dropped_waits || q->implausible)
		fprintf(f,
			"  note: the kernel timed %llu waits from an unset start (left out of the "
			"delays) and %llu delay counters were impossible (shown as null)\n",
			(unsigned long long)q->dropped_waits, (unsigned long long)q->implausible);
	if (q->identity_mismatches || q->unmatched_records)
		fprintf(
		    f,
		    "  note: %llu taskstats records matched a thread's tid but not its identity; "
		    "%llu matched no thread\n",
		    (unsigned long long)q->identity_mismatches,
		    (unsigned long long)q->unmatched_records);
}

/*
 * Threads that exec'd from a thread other than the main one took its tid:
 * their rows are marked '*', and the tids they had before are listed here
 * (the first few; every one is in the artifact's tid_before_exec).
 */
static void print_renamed(FILE *f, const struct run *r)
{
	enum { LISTED = 3 };
	size_t n = 0, listed = 0;

	for (size_t i = 0; i < r->nthreads; i++)
		n += r->threads[i].tid_before_exec != 0;
	if (!n)
		return;
	fprintf(f,
		"  note: * %zu thread%s called exec from a thread other than the main one and "
		"took the main thread's tid and start time (",
		n, n == 1 ? "" : "s");
	for (size_t i = 0; i < r->nthreads && listed < LISTED; i++) {
		const struct thread_acct *t = &r->threads[i];

		if (t->tid_before_exec)
			fprintf(f, "%s%u became %u, %s", listed++ ? "; " : "", t->tid_before_exec,
				t->tid, t->comm);
	}
	if (n > listed)
		fprintf(f, "; %zu more in the artifact's tid_before_exec", n - listed);
	fprintf(f, "): %s; no taskstats record can be proven to be %s\n",
		n == 1 ? "its row, under the new tid, covers its whole life"
		       : "their rows, under the new tids, cover their whole lives",
		n == 1 ? "its" : "theirs");
}

/* --timeline: how many intervals, and what it lacks, never left unsaid. */
static void print_timeline(FILE *f, const struct run_timeline *t, const char *warn,
			   const char *reset)
{
	char d[32], at[32];

	if (timeline_complete(t)) {
		fprintf(f, "  timeline: %zu intervals, complete\n", t->n);
		return;
	}
	fprintf(f, "%s  warning: timeline incomplete: %zu intervals kept", warn, t->n);
	if (t->lost_events)
		fprintf(f, "; %llu events lost (%s; ring buffer full: raise --timeline-buffer)",
			(unsigned long long)t->lost_events, fmt_dur(t->lost_ns, d, sizeof(d)));
	if (t->beyond_bound)
		fprintf(f, "; %llu intervals (%s) beyond --timeline-max, cut at %s",
			(unsigned long long)t->beyond_bound,
			fmt_dur(t->beyond_bound_ns, d, sizeof(d)),
			fmt_dur(t->truncated_at_ns > 0 ? (uint64_t)t->truncated_at_ns : 0, at,
				sizeof(at)));
	if (t->unmatched)
		fprintf(f, "; %llu of threads whose record was lost",
			(unsigned long long)t->unmatched);
	fprintf(f, "%s\n", reset);
}

static void print_quality(FILE *f, const struct run *r, const struct table_opts *o)
{
	const struct run_quality *q = &r->quality;
	const char *warn = o->color ? C_YELLOW : "", *reset = o->color ? C_RESET : "";

	print_renamed(f, r);
	fprintf(f, "  sources:");
	for (int i = 0; i < q->nsources; i++)
		if (q->sources[i].active)
			fprintf(f, " %s", q->sources[i].name);
	for (int i = 0; i < q->nsources; i++)
		/* A source left out by choice (--backend, or not needed) is in the artifact. */
		if (!q->sources[i].active && strncmp(q->sources[i].reason, "not selected", 12) &&
		    strncmp(q->sources[i].reason, "not used", 8))
			fprintf(f, "   %s unavailable: %s", q->sources[i].name,
				q->sources[i].reason);
	fputc('\n', f);
	print_delays(f, r);
	if (q->procfs.active) {
		char iv[32], gap[32], unseen[32];

		fmt_dur(q->procfs.sample_ns, iv, sizeof(iv));
		fmt_dur(q->procfs.max_gap_ns, gap, sizeof(gap));
		fmt_dur(q->procfs.unseen_cpu_ns, unseen, sizeof(unseen));
		fprintf(
		    f,
		    "  procfs: %llu scans every %s (largest gap %s), %llu threads seen; on-CPU, "
		    "runqueue and slices are the kernel's counters between samples, S/D/T are "
		    "sampled",
		    (unsigned long long)q->procfs.scans, iv, gap,
		    (unsigned long long)q->procfs.threads_seen);
		if (q->procfs_on_cpu.available)
			fprintf(f, "; against eBPF: on-CPU %.3f%%, runqueue %.3f%%",
				100 * q->procfs_on_cpu.total, 100 * q->procfs_runqueue.total);
		else if (q->tree_cpu.available)
			fprintf(f, "; CPU time no sample saw: %s", unseen);
		fputc('\n', f);
	}
	fprintf(f, "  quality: residual %.3f%%   lost records %llu", q->residual_percent,
		(unsigned long long)q->lost_events);
	if (q->runnable.available)
		fprintf(f, "   kernel cross-check %.3f%% (worst thread %.3f%%)",
			100 * q->runnable.total, 100 * q->runnable.worst);
	/*
	 * rusage against the kernel's counters of the threads seen: CPU time
	 * in rusage that no seen thread has is a missed thread; the other way
	 * is each exiting thread's last microseconds, which rusage never gets.
	 */
	if (q->tree_cpu.available) {
		char d[32];

		fprintf(f, "   vs rusage: %.3f%% unseen", 100 * q->tree_cpu.unseen);
		if (q->tree_cpu.excess_ns)
			fprintf(f, ", +%s of thread exits it lacks",
				fmt_dur(q->tree_cpu.excess_ns, d, sizeof(d)));
	}
	if (r->totals.steal_ns) {
		char d[32];

		fprintf(f, "   steal %s (in on-CPU)", fmt_dur(r->totals.steal_ns, d, sizeof(d)));
	}
	fputc('\n', f);
	if (q->taskstats_drops)
		fprintf(f,
			"%s  warning: %llu taskstats exit records were dropped (listener buffer "
			"full); %llu threads have no delays%s\n",
			warn, (unsigned long long)q->taskstats_drops,
			(unsigned long long)q->ts.threads_without, reset);
	if (q->runnable.available && q->kernel_shift_ns > 1000000) {
		char d[32];

		fprintf(f,
			"  note: the kernel's own counters charge %s of wakeup latency as CPU time "
			"(its clock is not re-read at a wakeup preemption); tsarun counts it as "
			"runqueue\n",
			fmt_dur((uint64_t)q->kernel_shift_ns, d, sizeof(d)));
	}
	/* Throttled time is runnable time the kernel counts as run_delay: say what it was. */
	if (r->totals.throttled_ns) {
		char d[32];

		fprintf(f,
			"  note: %s of RUNQ was throttling: the task group had spent its CPU quota "
			"(cgroup cpu.max), no wait for a free CPU\n",
			fmt_dur(r->totals.throttled_ns, d, sizeof(d)));
	}
	if (r->totals.rt_throttled_ns) {
		char d[32];

		fprintf(
		    f,
		    "  note: %s of RUNQ was real-time throttling: SCHED_FIFO/SCHED_RR threads were "
		    "held off by the RT bandwidth limit (fair server, sched_rt_runtime_us) while "
		    "lower classes ran, no wait for a free CPU\n",
		    fmt_dur(r->totals.rt_throttled_ns, d, sizeof(d)));
	}
	if (q->lost_events)
		fprintf(f,
			"%s  warning: %llu thread records were lost (ring buffer full; raise "
			"--ringbuf);"
			" their times are in the totals, not in the thread rows%s\n",
			warn, (unsigned long long)q->lost_events, reset);
	if (q->map_full_drops)
		fprintf(f,
			"%s  warning: %llu tasks could not be tracked (task storage allocation "
			"failed)%s\n",
			warn, (unsigned long long)q->map_full_drops, reset);
	if (r->timeline)
		print_timeline(f, r->timeline, warn, reset);
	if (q->untraced_switch_ins == 1)
		fprintf(f, "  note: 1 switch-in had no scheduler event; it was timed from the "
			   "thread's sum_exec_runtime\n");
	else if (q->untraced_switch_ins)
		fprintf(f,
			"  note: %llu switch-ins had no scheduler event; each was timed from the "
			"thread's sum_exec_runtime\n",
			(unsigned long long)q->untraced_switch_ins);
	if (q->unexpected_transitions)
		fprintf(f,
			"%s  warning: %llu scheduler events arrived in an impossible order; "
			"some time may be in the wrong state%s\n",
			warn, (unsigned long long)q->unexpected_transitions, reset);
	if (q->unsettled)
		fprintf(f, "%s  warning: %llu thread%s never delivered %s final record%s\n", warn,
			(unsigned long long)q->unsettled, q->unsettled == 1 ? "" : "s",
			q->unsettled == 1 ? "its" : "their", reset);
	if (q->residual_percent > 1.0 && (r->totals.unmeasured & ACCT_NO_STATES)) {
		/* Threads known only by their exit record: no state to put the rest in. */
		uint64_t life = 0, res = 0;

		for (size_t i = 0; i < r->nthreads; i++) {
			if (r->threads[i].unmeasured & ACCT_NO_STATES)
				continue;
			life += r->threads[i].lifetime_ns;
			res += r->threads[i].residual_ns;
		}
		fprintf(f,
			"  note: %.2f%% of thread time is unattributed: threads known only by "
			"their taskstats record have on-CPU and runqueue time, the rest of their "
			"lives is not split by state\n",
			q->residual_percent);
		if (life && (double)res * 100.0 / (double)life > 1.0)
			fprintf(f,
				"%s  warning: %.2f%% of the other threads' time is unattributed: "
				"their figures may not add up%s\n",
				warn, (double)res * 100.0 / (double)life, reset);
	} else if (q->residual_percent > 1.0) {
		fprintf(f,
			"%s  warning: %.2f%% of thread time is unattributed: the other figures may "
			"not add up%s\n",
			warn, q->residual_percent, reset);
	}
	for (int i = 0; i < q->nnotes; i++)
		fprintf(f, "  note: %s\n", q->notes[i]);
}

#define STACK_ROWS  8
#define STACK_WIDTH 96

/* The stack in a line: the innermost user frames, then where the kernel waited. */
static void short_stack(const struct run_stacks *s, const struct stack_agg *a, char *buf,
			size_t len)
{
	const struct stack_trace *u = a->ustack < s->ntraces ? &s->traces[a->ustack] : NULL;
	const struct stack_trace *k = a->kstack < s->ntraces ? &s->traces[a->kstack] : NULL;
	char tmp[1024] = "";
	size_t n = 0, from;
	uint32_t first = 0;

	if (u && u->nframes)
		first = u->nframes > 4 ? u->nframes - 4 : 0;
	for (uint32_t i = first; u && i < u->nframes; i++)
		n += (size_t)snprintf(tmp + n, n < sizeof(tmp) ? sizeof(tmp) - n : 0, "%s%s",
				      n ? " > " : "", u->frames[i]);
	if (k && k->nframes && n < sizeof(tmp)) {
		const char *leaf = k->frames[k->nframes - 1];
		size_t l = strlen(leaf);

		/* The kernel frame without its "_[k]" mark: the column says it. */
		n += (size_t)snprintf(tmp + n, n < sizeof(tmp) ? sizeof(tmp) - n : 0, "%s[k] %.*s",
				      n ? " > " : "", (int)(l > 4 ? l - 4 : l), leaf);
	}
	if (n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	from = n > len - 1 ? n - (len - 4) : 0;
	snprintf(buf, len, "%s%s", from ? "..." : "", tmp + from);
}

/* The stacks section: where the tree blocked most, and what the stacks leave out. */
static void print_stacks(FILE *f, const struct run *r, const struct table_opts *o)
{
	const struct run_stacks *s = r->stacks;
	const char *warn = o->color ? C_YELLOW : "", *reset = o->color ? C_RESET : "";
	uint64_t blocked = 0, below = 0, below_n = 0, charged = 0, drops;
	size_t shown = 0;
	char d1[32], d2[32], d3[32], d4[32];

	for (size_t i = 0; i < r->nthreads; i++) {
		blocked +=
		    r->threads[i].state_ns[TSA_ST_SLEEP] + r->threads[i].state_ns[TSA_ST_DISK];
		below += r->threads[i].below_ns;
		below_n += r->threads[i].below_count;
	}
	for (size_t i = 0; i < s->naggs; i++)
		if (s->aggs[i].kind == STACK_OFFCPU)
			charged += s->aggs[i].total_ns;
	fprintf(f, "\n%s  top blocking stacks%s (of %s blocked: %s on stacks, %s in sleeps < %s)\n",
		o->color ? C_BOLD : "", o->color ? C_RESET : "", fmt_dur(blocked, d1, sizeof(d1)),
		fmt_dur(charged, d2, sizeof(d2)), fmt_dur(below, d3, sizeof(d3)),
		fmt_dur(s->offcpu_min_ns, d4, sizeof(d4)));
	for (size_t i = 0; i < s->naggs && shown < STACK_ROWS; i++) {
		const struct stack_agg *a = &s->aggs[i];
		const char *comm = stack_agg_comm(r, a);
		char st[STACK_WIDTH + 8];

		if (a->kind != STACK_OFFCPU)
			continue;
		short_stack(s, a, st, sizeof(st));
		fprintf(f, "  %9s ms %s %-16.16s %7u %6llux  %s\n",
			fmt_ms(a->total_ns, d1, sizeof(d1)), a->state == TSA_ST_DISK ? "D" : "S",
			comm, a->tid, (unsigned long long)a->count, st);
		if (a->has_waker && a->waker_tid)
			fprintf(f, "  %9s      woken by %s (%u)\n", "", a->waker_comm,
				a->waker_tid);
		else if (a->has_waker)
			fprintf(f, "  %9s      woken by %s\n", "", a->waker_comm);
		shown++;
	}
	if (!shown)
		fprintf(f, "  (no sleep reached --offcpu-min)\n");
	/* A profile of the tail must not pass for the total. */
	if (below && below * 10 > charged + below)
		fprintf(
		    f,
		    "%s  warning: %.0f%% of the charged blocked time (%s in %llu sleeps) was in "
		    "sleeps shorter than --offcpu-min %s and is on no stack; --offcpu-min 0 "
		    "charges every sleep%s\n",
		    warn, 100.0 * (double)below / (double)(charged + below),
		    fmt_dur(below, d1, sizeof(d1)), (unsigned long long)below_n,
		    fmt_dur(s->offcpu_min_ns, d2, sizeof(d2)), reset);
	drops = stack_drops_total(&s->drops);
	if (drops)
		fprintf(
		    f,
		    "%s  warning: %llu stacks could not be taken or stored in full (%llu kernel, "
		    "%llu user, %llu map full, %llu truncated, %llu sleeps lost); see "
		    "stacks.drops in the artifact%s\n",
		    warn, (unsigned long long)drops, (unsigned long long)s->drops.kstack_fail,
		    (unsigned long long)s->drops.ustack_fail, (unsigned long long)s->drops.map_full,
		    (unsigned long long)s->drops.truncated, (unsigned long long)s->drops.agg_full,
		    reset);
	if (s->drops.cut)
		fprintf(
		    f,
		    "  note: %llu sleeps or samples have a user stack that ends before its "
		    "outermost frames (the top of the stack kept to unwind it, at most %u bytes, "
		    "ran out): those stacks are marked [truncated]\n",
		    (unsigned long long)s->drops.cut, TSA_REGION_BYTES);
	if (s->kernel_symbols[0])
		fprintf(f, "  note: kernel frames are addresses: %s\n", s->kernel_symbols);
	if (s->user_symbols[0])
		fprintf(f, "  note: %s\n", s->user_symbols);
	if (s->oncpu_reason[0])
		fprintf(f, "%s  warning: no on-CPU samples: %s%s\n", warn, s->oncpu_reason, reset);
}

void table_print(FILE *f, const struct run *r, const struct table_opts *o)
{
	const struct run_totals *tot = &r->totals;
	size_t *pidx = NULL, *tidx = NULL, shown = 0, tcount = 0;
	uint64_t rest_st[TSA_ST_NR] = {0}, rest_life = 0, rest_res = 0;
	uint32_t rest_unm = 0;
	int64_t span_lo = 0, span_hi = 0;
	struct cols c;

	g_unmeasured = tot->unmeasured;
	print_summary(f, r, o);
	if (!r->detailed || !r->nthreads) {
		if (r->quality.nsources)
			print_quality(f, r, o);
		return;
	}
	pidx = malloc(r->nprocs * sizeof(*pidx));
	tidx = malloc(r->nthreads * sizeof(*tidx));
	if (!pidx || !tidx)
		goto out;
	for (size_t i = 0; i < r->nprocs; i++)
		pidx[i] = i;
	g_sort.r = r;
	g_sort.key = o->sort;
	qsort(pidx, r->nprocs, sizeof(*pidx), cmp_proc_idx);

	fprintf(f, "\n%s%7s %7s  %-16s %9s %9s %9s %9s %9s %8s %11s %13s%s\n",
		o->color ? C_BOLD : "", "PID", "TID", "COMM", "WALL ms", "ON-CPU", "RUNQ", "SLEEP",
		"D", "OTHER", "WAKE us", "SWITCHES", o->color ? C_RESET : "");
	fprintf(f, "%s%7s %7s  %-16s %9s %9s %9s %9s %9s %8s %11s %13s%s\n", o->color ? C_DIM : "",
		"", "", "", "", "", "", "(S)", "(D)", "", "avg/max", "vol/invol",
		o->color ? C_RESET : "");
	for (size_t pi = 0; pi < r->nprocs; pi++) {
		const struct proc_acct *p = &r->procs[pidx[pi]];
		uint64_t lat_sum = 0, lat_n = 0, lat_max = 0, vol = 0, invol = 0;
		char pid[16];
		size_t n = 0;

		for (size_t i = 0; i < r->nthreads; i++) {
			const struct thread_acct *t = &r->threads[i];

			if (!in_proc(t, p))
				continue;
			tidx[n++] = i;
			lat_sum += t->wakeup_lat_sum;
			lat_n += t->wakeup_lat_count;
			if (t->wakeup_lat_max > lat_max)
				lat_max = t->wakeup_lat_max;
			vol += t->voluntary;
			invol += t->involuntary;
		}
		if (shown >= (size_t)o->top) {
			for (size_t k = 0; k < n; k++) {
				const struct thread_acct *t = &r->threads[tidx[k]];

				rest_life += t->lifetime_ns;
				rest_res += t->residual_ns;
				rest_unm |= t->unmeasured;
				for (int s = 0; s < TSA_ST_NR; s++)
					rest_st[s] += t->state_ns[s];
				tcount++;
			}
			continue;
		}
		qsort(tidx, n, sizeof(*tidx), cmp_thread_idx);
		snprintf(pid, sizeof(pid), "%u", p->pid);
		if (n == 1) {
			/* A single-threaded process is one row: its thread. */
			const struct thread_acct *t = &r->threads[tidx[0]];
			char tid[16];

			fill_cols(&c, t->lifetime_ns, t->state_ns, t->residual_ns,
				  t->wakeup_lat_sum, t->wakeup_lat_count, t->wakeup_lat_max,
				  t->voluntary, t->involuntary, t->unmeasured);
			tid_text(tid, sizeof(tid), t);
			print_row(f, o, false, pid, tid, t->comm, &c);
			shown++;
			continue;
		}
		/* Process row: the process's own span, its threads' sums. */
		fill_cols(&c, (uint64_t)(p->end_ns - p->start_ns), p->state_ns, p->residual_ns,
			  lat_sum, lat_n, lat_max, vol, invol, p->unmeasured);
		print_row(f, o, true, pid, "", p->comm, &c);
		for (size_t k = 0; k < n; k++) {
			const struct thread_acct *t = &r->threads[tidx[k]];

			if (shown < (size_t)o->top) {
				thread_row(f, o, t);
				shown++;
				continue;
			}
			rest_life += t->lifetime_ns;
			rest_res += t->residual_ns;
			rest_unm |= t->unmeasured;
			for (int s = 0; s < TSA_ST_NR; s++)
				rest_st[s] += t->state_ns[s];
			tcount++;
		}
	}
	if (tcount) {
		fill_cols(&c, rest_life, rest_st, rest_res, 0, 0, 0, 0, 0, rest_unm);
		fprintf(f, "%s  ... %zu more thread%s (sums; every thread is in %s)%s\n",
			o->color ? C_DIM : "", tcount, tcount == 1 ? "" : "s",
			o->artifact ? o->artifact : "the artifact", o->color ? C_RESET : "");
		print_row(f, o, false, "", "", "(the rest)", &c);
	}
	fill_cols(&c, tot->lifetime_ns, tot->state_ns, tot->residual_ns, tot->wakeup_lat_sum,
		  tot->wakeup_lat_count, tot->wakeup_lat_max, tot->voluntary, tot->involuntary,
		  tot->unmeasured);
	print_row(f, o, true, "TOTAL", "", "", &c);
	fprintf(f, "%7s %7s  %u process%s, %u thread%s (WALL is the sum of thread lifetimes)\n", "",
		"", tot->processes, tot->processes == 1 ? "" : "es", tot->threads,
		tot->threads == 1 ? "" : "s");

	/* Concurrency: how many threads were, on average, in each state over the span. */
	span_lo = r->threads[0].start_ns;
	for (size_t i = 0; i < r->nthreads; i++) {
		if (r->threads[i].start_ns < span_lo)
			span_lo = r->threads[i].start_ns;
		if (r->threads[i].end_ns > span_hi)
			span_hi = r->threads[i].end_ns;
	}
	if (span_hi > span_lo) {
		double span = (double)(span_hi - span_lo);
		uint64_t on = tot->state_ns[TSA_ST_ONCPU], rq = tot->state_ns[TSA_ST_RUNQ];
		char off[96];

		/* Without the states (taskstats alone), the rest of the time is not split. */
		if (tot->unmeasured & ACCT_NO_STATES)
			snprintf(
			    off, sizeof(off), "%.2f off-CPU (not split by state)",
			    (double)(tot->lifetime_ns > on + rq ? tot->lifetime_ns - on - rq : 0) /
				span);
		else
			snprintf(off, sizeof(off), "%.2f sleeping, %.2f in D",
				 (double)tot->state_ns[TSA_ST_SLEEP] / span,
				 (double)tot->state_ns[TSA_ST_DISK] / span);
		fprintf(f,
			"\n  concurrency over %.1f ms: on average %.2f threads on-CPU, %.2f "
			"runnable, %s; at most %llu alive\n",
			span / 1e6, (double)on / span, (double)rq / span, off,
			(unsigned long long)tot->max_threads_alive);
	}
	if (r->stacks)
		print_stacks(f, r, o);
	print_quality(f, r, o);
	if (o->artifact)
		fprintf(f, "  artifact: %s\n", o->artifact);
out:
	free(pidx);
	free(tidx);
}
