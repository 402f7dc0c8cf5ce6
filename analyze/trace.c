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
#include "run.h"
#include "textsafe.h"
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

/* A JSON string (lib/textsafe: valid UTF-8 whatever the bytes, controls escaped). */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	textsafe_fput(f, textsafe_json, s, TEXTSAFE_NUL);
	fputc('"', f);
}

/* Nanoseconds as microseconds to the nanosecond ("12.345"). */
static void fmt_us(char *buf, size_t len, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;

	snprintf(buf, len, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", a / 1000, a % 1000);
}

static void put_us(FILE *f, int64_t ns)
{
	char b[32];

	fmt_us(b, sizeof(b), ns);
	fputs(b, f);
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
static void put_ts_dur(FILE *f, int64_t start_ns, uint64_t dur_ns, bool outer)
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
	fputs(",\"ts\":", f);
	put_us(f, start_ns);
	fputs(",\"dur\":", f);
	put_us(f, (int64_t)d);
}

static void put_sep(FILE *f, bool *first)
{
	fputs(*first ? "\n" : ",\n", f);
	*first = false;
}

static void meta(FILE *f, bool *first, uint32_t pid, uint32_t tid, const char *what,
		 const char *name, long sort)
{
	put_sep(f, first);
	fprintf(f, "{\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":\"%s\",", pid,
		tid, what);
	if (name) {
		fputs("\"args\":{\"name\":", f);
		put_str(f, name);
		fputs("}}", f);
	} else {
		fprintf(f, "\"args\":{\"sort_index\":%ld}}", sort);
	}
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
static void life_slice(FILE *f, bool *first, const struct thread_acct *t, const struct tl_thread *g,
		       bool timeline)
{
	static const char *const states[TSA_ST_NR] = {"on_cpu_ns", "runqueue_ns", "sleeping_ns",
						      "uninterruptible_ns", "stopped_ns"};

	put_sep(f, first);
	fprintf(f, "{\"ph\":\"X\",\"cat\":\"thread\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, t->pid,
		t->tid);
	put_ts_dur(f, t->start_ns, t->lifetime_ns, true);
	fputs(",\"name\":", f);
	put_str(f, t->comm);
	fprintf(f, ",\"args\":{\"lifetime_ns\":%" PRIu64, t->lifetime_ns);
	for (int s = 0; s < TSA_ST_NR; s++) {
		bool unmeasured = s >= TSA_ST_SLEEP && (t->unmeasured & ACCT_NO_STATES);

		if (unmeasured)
			fprintf(f, ",\"%s\":null", states[s]);
		else
			fprintf(f, ",\"%s\":%" PRIu64, states[s], t->state_ns[s]);
	}
	fprintf(f, ",\"residual_ns\":%" PRIu64, t->residual_ns);
	if (!(t->unmeasured & ACCT_NO_SLICES))
		fprintf(f, ",\"slices\":%" PRIu64, t->slices);
	if (!(t->unmeasured & ACCT_NO_SWITCHES))
		fprintf(f, ",\"voluntary_switches\":%" PRIu64 ",\"involuntary_switches\":%" PRIu64,
			t->voluntary, t->involuntary);
	if (!(t->unmeasured & ACCT_NO_WAKEUPS))
		fprintf(f, ",\"wakeups\":%" PRIu64, t->wakeups);
	if (t->tid_before_exec)
		fprintf(f, ",\"tid_before_exec\":%" PRIu32, t->tid_before_exec);
	fprintf(f, ",\"execs\":%" PRIu32 ",\"alive_at_end\":%s", t->execs,
		(t->flags & TSA_F_SURVIVOR) ? "true" : "false");
	if (timeline)
		fprintf(f,
			",\"timeline_intervals\":%zu,\"timeline_lost_events\":%" PRIu64
			",\"timeline_lost_ns\":%" PRIu64,
			g ? g->n : 0, t->tl_lost, t->tl_lost_ns);
	fputs("}}", f);
}

/* A state interval on its thread's track (cat state), or on its CPU's (cat cpu, of: its tid). */
static void interval_slice(FILE *f, bool *first, uint32_t pid, uint32_t tid,
			   const struct tl_interval *v, const char *name, uint32_t of)
{
	put_sep(f, first);
	fprintf(f, "{\"ph\":\"X\",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32,
		of ? "cpu" : "state", pid, tid);
	put_ts_dur(f, v->start_ns, v->dur_ns, false);
	fputs(",\"name\":", f);
	put_str(f, name);
	if (of)
		fprintf(f, ",\"args\":{\"tid\":%" PRIu32 "}}", of);
	else if (v->cpu >= 0)
		fprintf(f, ",\"args\":{\"cpu\":%d}}", v->cpu);
	else
		fputs("}", f);
}

/* Name changes after the first (execs) as instants on the thread's track. */
static void exec_marks(FILE *f, bool *first, const struct thread_acct *t,
		       const struct run_timeline *tl, const struct tl_thread *g)
{
	for (size_t i = g->first_name + 1; i < g->first_name + g->nnames; i++) {
		const struct tl_name *was = &tl->names[i - 1], *now = &tl->names[i];

		put_sep(f, first);
		fprintf(f,
			"{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"exec\",\"pid\":%" PRIu32
			",\"tid\":%" PRIu32 ",\"ts\":",
			t->pid, t->tid);
		put_us(f, now->at_ns);
		fputs(",\"name\":", f);
		{
			char label[64];

			snprintf(label, sizeof(label), "exec: %s", now->comm);
			put_str(f, label);
		}
		fputs(",\"args\":{", f);
		if (was->execs || strcmp(was->comm, RUN_SPAWNER_COMM)) {
			fputs("\"from\":", f);
			put_str(f, was->comm);
			fputc(',', f);
		}
		fputs("\"to\":", f);
		put_str(f, now->comm);
		fprintf(f, ",\"execs\":%" PRIu32 "}}", now->execs);
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
static void critpath_track(FILE *f, bool *first, const struct run_critpath *cp)
{
	/* Each group's label as a JSON string, once: a ping-pong's path has a segment per switch. */
	char **labels = calloc(cp->ngroups ? cp->ngroups : 1, sizeof(*labels));

	meta(f, first, PATH_PID, PATH_PID, "process_name", "critical path", 0);
	meta(f, first, PATH_PID, PATH_PID, "process_sort_index", NULL, -1);
	meta(f, first, PATH_PID, PATH_TID, "thread_name", "critical path", 0);
	for (size_t i = 0; labels && i < cp->ngroups; i++) {
		char label[160], *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		critpath_group_label(&cp->groups[i], label, sizeof(label));
		if (m) {
			put_str(m, label);
			fclose(m);
		}
		labels[i] = buf;
	}
	for (size_t i = 0; i < cp->nseg; i++) {
		const struct cp_segment *s = &cp->seg[i];

		put_sep(f, first);
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"critical_path\",\"pid\":%d,\"tid\":%d,\"ts\":",
			PATH_PID, PATH_TID);
		put_us(f, s->start_ns);
		fputs(",\"dur\":", f);
		put_us(f, (int64_t)s->dur_ns);
		fputs(",\"name\":", f);
		if (labels && labels[s->group])
			fputs(labels[s->group], f);
		else
			fputs("\"?\"", f);
		fprintf(f, ",\"args\":{\"kind\":\"%s\",\"tid\":%" PRIu32 "}}",
			critpath_kind_name(s->kind), s->tid);
		if (!s->woke)
			continue;
		/* The arrow: from the end of this segment to the thread it woke. */
		put_sep(f, first);
		fprintf(f,
			"{\"ph\":\"s\",\"cat\":\"critical_path\",\"name\":\"wakeup\",\"id\":%zu,"
			"\"pid\":%d,\"tid\":%d,\"ts\":",
			i, PATH_PID, PATH_TID);
		put_us(f, s->start_ns + (int64_t)s->dur_ns - 1);
		fputs("}", f);
		if (i + 1 < cp->nseg) {
			const struct cp_segment *n = &cp->seg[i + 1];

			put_sep(f, first);
			fprintf(f,
				"{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"critical_path\",\"name\":"
				"\"wakeup\",\"id\":%zu,\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
				",\"ts\":",
				i, n->pid, n->tid);
			put_us(f, n->start_ns);
			fputs("}", f);
		}
	}
	for (size_t i = 0; labels && i < cp->ngroups; i++)
		free(labels[i]);
	free(labels);
}

int trace_write(FILE *f, const struct run *r, const char *command)
{
	const struct run_timeline *tl = r->timeline;
	bool first = true, cpus_named[1024] = {false};
	char name[160];

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"tsarun\",\"command\":", f);
	put_str(f, command);
	fprintf(
	    f,
	    ",\"run\":%d,\"clock\":\"microseconds from the run's start (the barrier's release)\"",
	    r->index);
	if (!tl) {
		fputs(
		    ",\"timeline\":false,\"note\":\"no state slices: this run was recorded without "
		    "--timeline, so each thread is one slice of its whole life, with its closing "
		    "account as args; tsarun --timeline records every on-CPU, runqueue, S, D and "
		    "stopped interval\"",
		    f);
	} else {
		fprintf(f,
			",\"timeline\":true,\"timeline_complete\":%s,\"intervals\":%zu,"
			"\"lost_events\":%" PRIu64 ",\"lost_ns\":%" PRIu64
			",\"beyond_bound\":%" PRIu64 ",\"unmatched_intervals\":%" PRIu64,
			timeline_complete(tl) ? "true" : "false", tl->n, tl->lost_events,
			tl->lost_ns, tl->beyond_bound, tl->unmatched);
		fputs(",\"note\":\"a thread's track: its life, and inside it its state intervals "
		      "(they sum to its account); the CPUs process: what each CPU ran, from the "
		      "threads' on-CPU intervals (inferred ones left out)\"",
		      f);
	}
	fputs("},\"traceEvents\":[", f);

	/* Processes in start order, then their threads in start order (threads[] is). */
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct proc_acct *p = &r->procs[i];
		const struct thread_acct *lead = proc_leader(r, p);
		const struct tl_thread *g = lead ? timeline_thread(tl, lead) : NULL;

		if (lead)
			track_name(name, sizeof(name), lead, tl, g);
		else
			snprintf(name, sizeof(name), "%s", p->comm);
		meta(f, &first, p->pid, p->pid, "process_name", name, 0);
		meta(f, &first, p->pid, p->pid, "process_sort_index", NULL, (long)i);
	}
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct thread_acct *t = &r->threads[i];
		const struct tl_thread *g = timeline_thread(tl, t);

		track_name(name, sizeof(name), t, tl, g);
		meta(f, &first, t->pid, t->tid, "thread_name", name, 0);
		meta(f, &first, t->pid, t->tid, "thread_sort_index", NULL, (long)i);
		life_slice(f, &first, t, g, tl != NULL);
		if (!g)
			continue;
		for (size_t k = g->first; k < g->first + g->n; k++)
			interval_slice(f, &first, t->pid, t->tid, &tl->iv[k],
				       slice_names[tl->iv[k].kind < TSA_TL_NR ? tl->iv[k].kind : 0],
				       0);
		exec_marks(f, &first, t, tl, g);
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
				meta(f, &first, CPU_TRACKS_PID, CPU_TRACK_TID0 + (uint32_t)v->cpu,
				     "thread_name", cpu, 0);
				meta(f, &first, CPU_TRACKS_PID, CPU_TRACK_TID0 + (uint32_t)v->cpu,
				     "thread_sort_index", NULL, v->cpu);
			}
			snprintf(label, sizeof(label), "%s %" PRIu32, t->comm, t->tid);
			interval_slice(f, &first, CPU_TRACKS_PID, CPU_TRACK_TID0 + (uint32_t)v->cpu,
				       v, label, t->tid);
		}
	}
	if (tl && tl->n) {
		meta(f, &first, CPU_TRACKS_PID, CPU_TRACKS_PID, "process_name", "CPUs", 0);
		meta(f, &first, CPU_TRACKS_PID, CPU_TRACKS_PID, "process_sort_index", NULL,
		     (long)r->nprocs);
	}
	if (r->critpath)
		critpath_track(f, &first, r->critpath);
	if (tl && tl->beyond_bound) {
		put_sep(f, &first);
		fputs("{\"ph\":\"i\",\"s\":\"g\",\"cat\":\"tsarun\",\"pid\":0,\"tid\":0,\"ts\":",
		      f);
		put_us(f, tl->truncated_at_ns);
		fprintf(f,
			",\"name\":\"timeline cut here (--timeline-max): later intervals missing\","
			"\"args\":{\"intervals_not_kept\":%" PRIu64 ",\"their_ns\":%" PRIu64 "}}",
			tl->beyond_bound, tl->beyond_bound_ns);
	}
	fputs("\n]}\n", f);
	return ferror(f) ? -EIO : 0;
}
