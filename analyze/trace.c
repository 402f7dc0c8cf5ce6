// SPDX-License-Identifier: MIT
/*
 * Chrome Trace Event JSON of one run (tsarun report --format trace, and
 * --timeline's STEM.trace.json). The format: an object whose traceEvents
 * are metadata ("M": process and thread names, their order), complete
 * slices ("X": ts and dur in microseconds, fractional to the nanosecond) and
 * instants ("i"). Perfetto nests the "X" slices of a track by containment:
 * a thread's life contains its state intervals, which follow one another.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "critpath.h"
#include "jsonw.h"
#include "run.h"
#include "timeline.h"
#include "trace.h"

/*
 * Synthetic tracks, one per CPU, under a process of their own: ids above
 * the kernel's pid_max limit (4194304), so that no tid of the run is one.
 */
#define CPU_TRACKS_PID 4194305
#define CPU_TRACK_TID0 4194306
#define PATH_PID       4194304 /* the critical path's process and track: above any pid */
#define PATH_TID       4194304

/* Nanoseconds as microseconds to the nanosecond ("12.345"); its length. */
static int fmt_us(char *buf, size_t len, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;

	return snprintf(buf, len, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", a / 1000,
			a % 1000);
}

static void put_us(struct jsonw *w, const char *key, int64_t ns)
{
	char b[32];
	int n = fmt_us(b, sizeof(b), ns);

	jsonw__key(w, key);
	jsonw__raw(w, b, (size_t)n);
}

/* ns as a reader of the trace has it: the microseconds written, parsed as a double. */
static double read_us(int64_t ns)
{
	char b[32];

	fmt_us(b, sizeof(b), ns);
	return strtod(b, NULL);
}

/*
 * A slice's "ts" and "dur". Readers (speedscope, Perfetto, catapult) add
 * them as doubles, and three decimals of microseconds are no exact binary
 * fractions: ts + dur can land past the next slice's ts, and the two
 * overlap. The duration written is the largest (inner: a state on its
 * track) that ends at or before where the next slice starts, or the
 * smallest (outer: a thread's life) that ends at or after it, so that
 * adjacent slices never overlap and a life still holds its states. The
 * difference is a nanosecond or two, never more.
 */
static void put_ts_dur(struct jsonw *w, int64_t start_ns, uint64_t dur_ns, bool outer)
{
	double ts = read_us(start_ns), end = read_us(start_ns + (int64_t)dur_ns);
	uint64_t d = dur_ns;

	for (int i = 0; i < 16; i++) {
		double e = ts + read_us((int64_t)d);

		if (outer ? e >= end : e <= end)
			break;
		if (outer)
			d++;
		else if (d)
			d--;
	}
	put_us(w, "ts", start_ns);
	put_us(w, "dur", (int64_t)d);
}

/* An event's opening: {"ph":ph,"cat":cat (unless NULL),"pid":pid,"tid":tid */
static void event(struct jsonw *w, const char *ph, const char *cat, uint32_t pid, uint32_t tid)
{
	jsonw__obj_open(w);
	jsonw__str_field(w, "ph", ph);
	if (cat)
		jsonw__str_field(w, "cat", cat);
	jsonw__uint_field(w, "pid", pid);
	jsonw__uint_field(w, "tid", tid);
}

static void meta(struct jsonw *w, uint32_t pid, uint32_t tid, const char *what, const char *name,
		 long sort)
{
	event(w, "M", NULL, pid, tid);
	jsonw__str_field(w, "name", what);
	jsonw__key(w, "args");
	jsonw__obj_open(w);
	if (name)
		jsonw__str_field(w, "name", name);
	else
		jsonw__int_field(w, "sort_index", sort);
	jsonw__obj_close(w);
	jsonw__obj_close(w);
}

static const char *const slice_names[TSA_TL_NR] = {
    [TSA_TL_ONCPU] = "on-CPU",
    [TSA_TL_ONCPU_INFERRED] = "on-CPU (inferred)",
    [TSA_TL_RUNQ_WAKEUP] = "runqueue (woken)",
    [TSA_TL_RUNQ_PREEMPTED] = "runqueue (preempted)",
    [TSA_TL_RUNQ_NEW] = "runqueue (new)",
    [TSA_TL_SLEEP] = "sleeping (S)",
    [TSA_TL_DISK] = "uninterruptible (D)",
    [TSA_TL_STOPPED] = "stopped (T)",
};

/* The thread's names over its life, "last (was first, ...)", for its track. */
static void track_name(char *buf, size_t len, const struct thread_acct *t,
		       const struct run_timeline *tl, const struct tl_thread *g)
{
	size_t off;

	snprintf(buf, len, "%s", run_shown_comm(t->comm, t->execs));
	if (!g || g->nnames < 2)
		return;
	off = strlen(buf);
	for (size_t i = g->first_name; i < g->first_name + g->nnames && off + 1 < len; i++) {
		const char *c = tl->names[i].comm;

		/* Before its first exec the command was tsarun's spawner: not a name of its own. */
		if (!strcmp(c, t->comm) || (!tl->names[i].execs && !strcmp(c, RUN_SPAWNER_COMM)))
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					off == strlen(t->comm) ? " (was " : ", ", c);
	}
	if (off > strlen(t->comm) && off + 1 < len)
		snprintf(buf + off, len - off, ")");
}

/* The thread's whole life, with its closing account as args. */
static void life_slice(struct jsonw *w, const struct thread_acct *t, const struct tl_thread *g,
		       bool timeline)
{
	static const char *const states[TSA_ST_NR] = {"on_cpu_ns", "runqueue_ns", "sleeping_ns",
						      "uninterruptible_ns", "stopped_ns"};

	event(w, "X", "thread", t->pid, t->tid);
	put_ts_dur(w, t->start_ns, t->lifetime_ns, true);
	jsonw__str_field(w, "name", t->comm);
	jsonw__key(w, "args");
	jsonw__obj_open(w);
	jsonw__uint_field(w, "lifetime_ns", t->lifetime_ns);
	for (int s = 0; s < TSA_ST_NR; s++) {
		bool unmeasured = s >= TSA_ST_SLEEP && (t->unmeasured & ACCT_NO_STATES);

		if (unmeasured)
			jsonw__null_field(w, states[s]);
		else
			jsonw__uint_field(w, states[s], t->state_ns[s]);
	}
	jsonw__uint_field(w, "residual_ns", t->residual_ns);
	if (!(t->unmeasured & ACCT_NO_SLICES))
		jsonw__uint_field(w, "slices", t->slices);
	if (!(t->unmeasured & ACCT_NO_SWITCHES)) {
		jsonw__uint_field(w, "voluntary_switches", t->voluntary);
		jsonw__uint_field(w, "involuntary_switches", t->involuntary);
	}
	if (!(t->unmeasured & ACCT_NO_WAKEUPS))
		jsonw__uint_field(w, "wakeups", t->wakeups);
	if (t->tid_before_exec)
		jsonw__uint_field(w, "tid_before_exec", t->tid_before_exec);
	jsonw__uint_field(w, "execs", t->execs);
	jsonw__bool_field(w, "alive_at_end", t->flags & TSA_F_SURVIVOR);
	if (timeline) {
		jsonw__uint_field(w, "timeline_intervals", g ? g->n : 0);
		jsonw__uint_field(w, "timeline_lost_events", t->tl_lost);
		jsonw__uint_field(w, "timeline_lost_ns", t->tl_lost_ns);
	}
	jsonw__obj_close(w);
	jsonw__obj_close(w);
}

/* A state interval on its thread's track (cat state), or on its CPU's (cat cpu, of: its tid). */
static void interval_slice(struct jsonw *w, uint32_t pid, uint32_t tid, const struct tl_interval *v,
			   const char *name, uint32_t of)
{
	event(w, "X", of ? "cpu" : "state", pid, tid);
	put_ts_dur(w, v->start_ns, v->dur_ns, false);
	jsonw__str_field(w, "name", name);
	if (of || v->cpu >= 0) {
		jsonw__key(w, "args");
		jsonw__obj_open(w);
		if (of)
			jsonw__uint_field(w, "tid", of);
		else
			jsonw__int_field(w, "cpu", v->cpu);
		jsonw__obj_close(w);
	}
	jsonw__obj_close(w);
}

/* Name changes after the first (execs) as instants on the thread's track. */
static void exec_marks(struct jsonw *w, const struct thread_acct *t, const struct run_timeline *tl,
		       const struct tl_thread *g)
{
	for (size_t i = g->first_name + 1; i < g->first_name + g->nnames; i++) {
		const struct tl_name *was = &tl->names[i - 1], *now = &tl->names[i];
		char label[64];

		jsonw__obj_open(w);
		jsonw__str_field(w, "ph", "i");
		jsonw__str_field(w, "s", "t");
		jsonw__str_field(w, "cat", "exec");
		jsonw__uint_field(w, "pid", t->pid);
		jsonw__uint_field(w, "tid", t->tid);
		put_us(w, "ts", now->at_ns);
		snprintf(label, sizeof(label), "exec: %s", now->comm);
		jsonw__str_field(w, "name", label);
		jsonw__key(w, "args");
		jsonw__obj_open(w);
		if (was->execs || strcmp(was->comm, RUN_SPAWNER_COMM))
			jsonw__str_field(w, "from", was->comm);
		jsonw__str_field(w, "to", now->comm);
		jsonw__uint_field(w, "execs", now->execs);
		jsonw__obj_close(w);
		jsonw__obj_close(w);
	}
}

/* The process's name: its leader's (or first thread's), with what it was called before. */
static const struct thread_acct *proc_leader(const struct run *r, const struct proc_acct *p)
{
	const struct thread_acct *any = NULL;

	for (size_t i = 0; i < r->nthreads; i++) {
		const struct thread_acct *t = &r->threads[i];

		if (t->pid != p->pid || t->start_ns < p->start_ns || t->start_ns > p->end_ns)
			continue;
		if (t->tid == t->pid)
			return t;
		if (!any)
			any = t;
	}
	return any;
}

/*
 * The critical path: one track of its segments, and at each wakeup on it a
 * flow arrow from the waker's segment on the path to the wakee's thread
 * track, where its runqueue wait begins.
 */
static void critpath_track(struct jsonw *w, const struct run_critpath *cp)
{
	/* Each group's label as a JSON string, once: a ping-pong's path has a segment per switch. */
	char **labels = calloc(cp->ngroups ? cp->ngroups : 1, sizeof(*labels));

	meta(w, PATH_PID, PATH_PID, "process_name", "critical path", 0);
	meta(w, PATH_PID, PATH_PID, "process_sort_index", NULL, -1);
	meta(w, PATH_PID, PATH_TID, "thread_name", "critical path", 0);
	for (size_t i = 0; labels && i < cp->ngroups; i++) {
		struct jsonw *lw = jsonw__new(NULL, 0);
		char label[160];

		critpath_group_label(&cp->groups[i], label, sizeof(label));
		if (lw) {
			jsonw__str(lw, label);
			labels[i] = jsonw__take(lw, NULL);
		}
		jsonw__free(lw);
	}
	for (size_t i = 0; i < cp->nseg; i++) {
		const struct cp_segment *s = &cp->seg[i];

		event(w, "X", "critical_path", PATH_PID, PATH_TID);
		put_us(w, "ts", s->start_ns);
		put_us(w, "dur", (int64_t)s->dur_ns);
		jsonw__key(w, "name");
		if (labels && labels[s->group])
			jsonw__raw(w, labels[s->group], strlen(labels[s->group]));
		else
			jsonw__str(w, "?");
		jsonw__key(w, "args");
		jsonw__obj_open(w);
		jsonw__str_field(w, "kind", critpath_kind_name(s->kind));
		jsonw__uint_field(w, "tid", s->tid);
		jsonw__obj_close(w);
		jsonw__obj_close(w);
		if (!s->woke)
			continue;
		/* The arrow: from the end of this segment to the thread it woke. */
		jsonw__obj_open(w);
		jsonw__str_field(w, "ph", "s");
		jsonw__str_field(w, "cat", "critical_path");
		jsonw__str_field(w, "name", "wakeup");
		jsonw__uint_field(w, "id", i);
		jsonw__uint_field(w, "pid", PATH_PID);
		jsonw__uint_field(w, "tid", PATH_TID);
		put_us(w, "ts", s->start_ns + (int64_t)s->dur_ns - 1);
		jsonw__obj_close(w);
		if (i + 1 < cp->nseg) {
			const struct cp_segment *n = &cp->seg[i + 1];

			jsonw__obj_open(w);
			jsonw__str_field(w, "ph", "f");
			jsonw__str_field(w, "bp", "e");
			jsonw__str_field(w, "cat", "critical_path");
			jsonw__str_field(w, "name", "wakeup");
			jsonw__uint_field(w, "id", i);
			jsonw__uint_field(w, "pid", n->pid);
			jsonw__uint_field(w, "tid", n->tid);
			put_us(w, "ts", n->start_ns);
			jsonw__obj_close(w);
		}
	}
	for (size_t i = 0; labels && i < cp->ngroups; i++)
		free(labels[i]);
	free(labels);
}

int trace_write(FILE *f, const struct run *r, const char *command)
{
	const struct run_timeline *tl = r->timeline;
	struct jsonw *w = jsonw__new(f, JSONW_NEWLINE);
	bool cpus_named[1024] = {false};
	char name[160];
	int ret;

	if (!w)
		return -ENOMEM;
	jsonw__obj_open(w);
	jsonw__str_field(w, "displayTimeUnit", "ns");
	jsonw__key(w, "otherData");
	jsonw__obj_open(w);
	jsonw__str_field(w, "tool", "tsarun");
	jsonw__str_field(w, "command", command);
	jsonw__int_field(w, "run", r->index);
	jsonw__str_field(w, "clock", "microseconds from the run's start (the barrier's release)");
	if (!tl) {
		jsonw__bool_field(w, "timeline", false);
		jsonw__str_field(w, "note",
				 "no state slices: this run was recorded without --timeline, so "
				 "each thread is one slice of its whole life, with its closing "
				 "account as args; tsarun --timeline records every on-CPU, "
				 "runqueue, S, D and stopped interval");
	} else {
		jsonw__bool_field(w, "timeline", true);
		jsonw__bool_field(w, "timeline_complete", timeline_complete(tl));
		jsonw__uint_field(w, "intervals", tl->n);
		jsonw__uint_field(w, "lost_events", tl->lost_events);
		jsonw__uint_field(w, "lost_ns", tl->lost_ns);
		jsonw__uint_field(w, "beyond_bound", tl->beyond_bound);
		jsonw__uint_field(w, "unmatched_intervals", tl->unmatched);
		jsonw__str_field(w, "note",
				 "a thread's track: its life, and inside it its state intervals "
				 "(they sum to its account); the CPUs process: what each CPU ran, "
				 "from the threads' on-CPU intervals (inferred ones left out)");
	}
	jsonw__obj_close(w);
	jsonw__key(w, "traceEvents");
	jsonw__arr_open_lines(w);

	/* Processes in start order, then their threads in start order (threads[] is). */
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct proc_acct *p = &r->procs[i];
		const struct thread_acct *lead = proc_leader(r, p);
		const struct tl_thread *g = lead ? timeline_thread(tl, lead) : NULL;

		if (lead)
			track_name(name, sizeof(name), lead, tl, g);
		else
			snprintf(name, sizeof(name), "%s", p->comm);
		meta(w, p->pid, p->pid, "process_name", name, 0);
		meta(w, p->pid, p->pid, "process_sort_index", NULL, (long)i);
	}
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct thread_acct *t = &r->threads[i];
		const struct tl_thread *g = timeline_thread(tl, t);

		track_name(name, sizeof(name), t, tl, g);
		meta(w, t->pid, t->tid, "thread_name", name, 0);
		meta(w, t->pid, t->tid, "thread_sort_index", NULL, (long)i);
		life_slice(w, t, g, tl != NULL);
		if (!g)
			continue;
		for (size_t k = g->first; k < g->first + g->n; k++)
			interval_slice(w, t->pid, t->tid, &tl->iv[k],
				       slice_names[tl->iv[k].kind < TSA_TL_NR ? tl->iv[k].kind : 0],
				       0);
		exec_marks(w, t, tl, g);
	}
	/* What each CPU ran: the on-CPU intervals again, on one track per CPU. */
	for (size_t i = 0; tl && i < r->nthreads; i++) {
		const struct thread_acct *t = &r->threads[i];
		const struct tl_thread *g = timeline_thread(tl, t);

		for (size_t k = g ? g->first : 0; g && k < g->first + g->n; k++) {
			const struct tl_interval *v = &tl->iv[k];
			char label[64];

			if (v->kind != TSA_TL_ONCPU || v->cpu < 0 || v->cpu >= 1024)
				continue;
			if (!cpus_named[v->cpu]) {
				char cpu[16];

				cpus_named[v->cpu] = true;
				snprintf(cpu, sizeof(cpu), "CPU %d", v->cpu);
				meta(w, CPU_TRACKS_PID, CPU_TRACK_TID0 + (uint32_t)v->cpu,
				     "thread_name", cpu, 0);
				meta(w, CPU_TRACKS_PID, CPU_TRACK_TID0 + (uint32_t)v->cpu,
				     "thread_sort_index", NULL, v->cpu);
			}
			snprintf(label, sizeof(label), "%s %" PRIu32, t->comm, t->tid);
			interval_slice(w, CPU_TRACKS_PID, CPU_TRACK_TID0 + (uint32_t)v->cpu, v,
				       label, t->tid);
		}
	}
	if (tl && tl->n) {
		meta(w, CPU_TRACKS_PID, CPU_TRACKS_PID, "process_name", "CPUs", 0);
		meta(w, CPU_TRACKS_PID, CPU_TRACKS_PID, "process_sort_index", NULL,
		     (long)r->nprocs);
	}
	if (r->critpath)
		critpath_track(w, r->critpath);
	if (tl && tl->beyond_bound) {
		jsonw__obj_open(w);
		jsonw__str_field(w, "ph", "i");
		jsonw__str_field(w, "s", "g");
		jsonw__str_field(w, "cat", "tsarun");
		jsonw__uint_field(w, "pid", 0);
		jsonw__uint_field(w, "tid", 0);
		put_us(w, "ts", tl->truncated_at_ns);
		jsonw__str_field(w, "name",
				 "timeline cut here (--timeline-max): later intervals missing");
		jsonw__key(w, "args");
		jsonw__obj_open(w);
		jsonw__uint_field(w, "intervals_not_kept", tl->beyond_bound);
		jsonw__uint_field(w, "their_ns", tl->beyond_bound_ns);
		jsonw__obj_close(w);
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
	jsonw__obj_close(w);
	ret = jsonw__finish(w);
	jsonw__free(w);
	return ret;
}
