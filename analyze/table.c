// SPDX-License-Identifier: MIT
/* The stderr report. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "stacks.h"
#include "status.h"
#include "table.h"
#include "termwrap.h"
#include "textsafe.h"
#include "vec.h"
#include "critpath.h"
#include "timeline.h"

#define C_BOLD	 "\033[1m"
#define C_DIM	 "\033[2m"
#define C_YELLOW "\033[33m"
#define C_RED	 "\033[31m"
#define C_RESET	 "\033[0m"

const char *fmt_dur(uint64_t ns, char *buf, unsigned long len)
{
	if (!ns)
		snprintf(buf, len, "0");
	else if (ns >= 1000000000ull)
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

static int cmp_thread_idx(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const struct thread_acct *x = &c->r->threads[*(const size_t *)a];
	const struct thread_acct *y = &c->r->threads[*(const size_t *)b];
	double kx = sort_key_thread(x, c->key), ky = sort_key_thread(y, c->key);

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
	qsort_r(v, r->nthreads, sizeof(*v), cmp_thread_idx, &(struct sort_ctx){r, k});
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

static int cmp_proc_idx(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const struct proc_acct *x = &c->r->procs[*(const size_t *)a];
	const struct proc_acct *y = &c->r->procs[*(const size_t *)b];
	double kx = key_proc(x, c->key), ky = key_proc(y, c->key);

	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Does thread t belong to process p? (pid reuse is told apart by time) */
static bool in_proc(const struct thread_acct *t, const struct proc_acct *p)
{
	return t->pid == p->pid && t->start_ns >= p->start_ns && t->end_ns <= p->end_ns;
}

/*
 * The thread table is laid out before it is printed, so that it fits the
 * terminal: each column as wide as its widest cell, then, while the table
 * is wider than the terminal, the least useful columns go first (PID and
 * TID merge into one, OTHER goes when it is 0 throughout, then SWITCHES,
 * WAKEUP, OTHER, and COMM is narrowed last); a line under the table names
 * what was left out. Files and pipes get every column.
 */
enum tcol {
	TC_PID,
	TC_TID,
	TC_COMM,
	TC_WALL,
	TC_CPU,
	TC_RQ,
	TC_S,
	TC_D,
	TC_OTHER,
	TC_WAKE,
	TC_SW,
	TC_NR,
};

static const char *const tcol_name[TC_NR] = {
    "PID", "TID", "COMM", "WALL", "ON-CPU", "RUNQ", "SLEEP(S)", "D", "OTHER", "WAKEUP", "SWITCHES",
};

#define COMM_WIDTH	  16
#define COMM_WIDTH_NARROW 10

enum trow_kind {
	ROW_PROC,   /* a multi-threaded process: its span, its threads' sums */
	ROW_THREAD, /* one of its threads */
	ROW_SINGLE, /* a single-threaded process: pid and tid */
	ROW_REST,   /* the folded rest */
	ROW_TOTAL,
	ROW_TEXT, /* a line of its own (the "... N more threads" line) */
};

struct trow {
	enum trow_kind kind;
	char cell[TC_NR][32];
	char comm[TSA_COMM_LEN + 1];
	char *text; /* ROW_TEXT, malloc'd */
};

struct ttable {
	struct trow *rows;
	size_t n, cap;
	double unit_ns; /* 1e6: ms; 1e9: s, for runs of 100 s and more */
	const char *unit;
	/* The layout. */
	bool on[TC_NR];
	bool merged; /* PID and TID in one column */
	bool other_zero;
	size_t w[TC_NR];
	size_t id_w; /* the merged column */
	size_t comm_w;
};

/* What the run's sources could not count (switches under procfs): shown as "-". */
static uint32_t g_unmeasured;

static struct trow *ttable_add(struct ttable *t, enum trow_kind kind)
{
	struct trow *r;

	r = vec_grow(t->rows, &t->cap, t->n + 1, sizeof(*r), 32);
	if (!r)
		return NULL;
	t->rows = r;
	r = &t->rows[t->n++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	return r;
}

static void ttable_free(struct ttable *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].text);
	free(t->rows);
}

/* A time in the table's unit, three decimals; "0" for none, "<0.001" for a trace. */
static void fmt_cell(const struct ttable *t, uint64_t ns, char *buf, size_t len)
{
	double v = (double)ns / t->unit_ns;

	if (!ns)
		snprintf(buf, len, "0");
	else if (v < 0.0005)
		snprintf(buf, len, "<0.001");
	else
		snprintf(buf, len, "%.3f", v);
}

/* unmeasured: of the row's threads (ACCT_NO_STATES: S and D shown as "-", in OTHER). */
static void fill_cols(const struct ttable *t, struct trow *row, uint64_t life, const uint64_t *st,
		      uint64_t residual, uint64_t lat_sum, uint64_t lat_n, uint64_t lat_max,
		      uint64_t vol, uint64_t invol, uint32_t unmeasured)
{
	char(*c)[32] = row->cell;

	fmt_cell(t, life, c[TC_WALL], sizeof(c[0]));
	fmt_cell(t, st[TSA_ST_ONCPU], c[TC_CPU], sizeof(c[0]));
	fmt_cell(t, st[TSA_ST_RUNQ], c[TC_RQ], sizeof(c[0]));
	if (unmeasured & ACCT_NO_STATES) {
		snprintf(c[TC_S], sizeof(c[0]), "-");
		snprintf(c[TC_D], sizeof(c[0]), "-");
	} else {
		fmt_cell(t, st[TSA_ST_SLEEP], c[TC_S], sizeof(c[0]));
		fmt_cell(t, st[TSA_ST_DISK], c[TC_D], sizeof(c[0]));
	}
	fmt_cell(t, other_ns(st, residual), c[TC_OTHER], sizeof(c[0]));
	/*
	 * The average in whole nanoseconds, as the artifact keeps it, so that
	 * `tsarun report` prints what the run printed: from the exact sum, an
	 * average within a nanosecond of a half microsecond rounded the other
	 * way once in CI (77 against 76 us).
	 */
	if (lat_n)
		snprintf(c[TC_WAKE], sizeof(c[0]), "%.0f/%.0f", (double)(lat_sum / lat_n) / 1e3,
			 (double)lat_max / 1e3);
	else
		snprintf(c[TC_WAKE], sizeof(c[0]), "-");
	if (g_unmeasured & ACCT_NO_SWITCHES)
		snprintf(c[TC_SW], sizeof(c[0]), "-");
	else if (row->kind == ROW_REST)
		snprintf(c[TC_SW], sizeof(c[0]), "-");
	else
		snprintf(c[TC_SW], sizeof(c[0]), "%llu/%llu", (unsigned long long)vol,
			 (unsigned long long)invol);
	if (row->kind == ROW_REST)
		snprintf(c[TC_WAKE], sizeof(c[0]), "-");
}

/* s escaped for the terminal into buf, for a %s. */
static const char *term_str(char *buf, size_t len, const char *s)
{
	textsafe_term(buf, len, s, TEXTSAFE_NUL);
	return buf;
}

/* A thread's name in a column of width: escaped (it is the command's), cut and padded by width. */
static const char *comm_cell_w(char *buf, size_t len, const char *comm, size_t width)
{
	textsafe_term_cell(buf, len, comm, TEXTSAFE_NUL, width);
	return buf;
}

static const char *comm_cell(char *buf, size_t len, const char *comm)
{
	return comm_cell_w(buf, len, comm, COMM_WIDTH);
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

static void thread_row(struct ttable *tt, const struct thread_acct *t, enum trow_kind kind,
		       uint32_t pid)
{
	struct trow *row = ttable_add(tt, kind);

	if (!row)
		return;
	fill_cols(tt, row, t->lifetime_ns, t->state_ns, t->residual_ns, t->wakeup_lat_sum,
		  t->wakeup_lat_count, t->wakeup_lat_max, t->voluntary, t->involuntary,
		  t->unmeasured);
	if (kind == ROW_SINGLE)
		snprintf(row->cell[TC_PID], sizeof(row->cell[0]), "%u", pid);
	tid_text(row->cell[TC_TID], sizeof(row->cell[0]), t);
	snprintf(row->comm, sizeof(row->comm), "%s", run_shown_comm(t->comm, t->execs));
}

/* The merged PID/TID cell: a process's pid, its threads' tids indented under it. */
static void id_cell(const struct trow *row, char *buf, size_t len)
{
	switch (row->kind) {
	case ROW_THREAD:
		snprintf(buf, len, "  %s", row->cell[TC_TID]);
		break;
	case ROW_SINGLE:
		if (!strcmp(row->cell[TC_PID], row->cell[TC_TID]))
			snprintf(buf, len, "%s", row->cell[TC_PID]);
		else
			snprintf(buf, len, "%s/%s", row->cell[TC_PID], row->cell[TC_TID]);
		break;
	case ROW_TOTAL:
		snprintf(buf, len, "TOTAL");
		break;
	default:
		snprintf(buf, len, "%s", row->cell[TC_PID]);
		break;
	}
}

static size_t ttable_cols(const struct ttable *t)
{
	size_t cols = t->merged ? 2 + t->id_w : t->w[TC_PID] + 1 + t->w[TC_TID];

	cols += 2 + t->comm_w;
	for (int c = TC_WALL; c < TC_NR; c++)
		if (t->on[c])
			cols += 2 + t->w[c];
	return cols;
}

/* Column widths from the cells, then columns left out until the table fits width (0: all). */
static void ttable_layout(struct ttable *t, size_t width)
{
	static const int drop[] = {TC_SW, TC_WAKE, TC_OTHER};

	t->other_zero = true;
	for (int c = 0; c < TC_NR; c++) {
		t->on[c] = true;
		t->w[c] = strlen(tcol_name[c]);
	}
	t->w[TC_PID] = t->w[TC_TID] = 7;
	t->w[TC_WAKE] = strlen("avg/max us");
	t->w[TC_SW] = strlen("vol/invol");
	t->id_w = strlen("PID/TID");
	t->comm_w = COMM_WIDTH;
	for (size_t i = 0; i < t->n; i++) {
		const struct trow *row = &t->rows[i];
		char id[80];

		if (row->kind == ROW_TEXT)
			continue;
		for (int c = 0; c < TC_NR; c++)
			if (c != TC_COMM && strlen(row->cell[c]) > t->w[c])
				t->w[c] = strlen(row->cell[c]);
		if (strcmp(row->cell[TC_OTHER], "0"))
			t->other_zero = false;
		id_cell(row, id, sizeof(id));
		if (strlen(id) > t->id_w)
			t->id_w = strlen(id);
	}
	if (!width || ttable_cols(t) <= width)
		return;
	t->merged = true;
	if (ttable_cols(t) > width && t->other_zero)
		t->on[TC_OTHER] = false;
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]) && ttable_cols(t) > width; i++)
		t->on[drop[i]] = false;
	if (ttable_cols(t) > width)
		t->comm_w = COMM_WIDTH_NARROW;
}

static void ttable_print_row(FILE *f, const struct ttable *t, const struct table_opts *o,
			     const struct trow *row)
{
	bool bold = o->color && (row->kind == ROW_PROC || row->kind == ROW_TOTAL);
	char name[TEXTSAFE_SIZE(TSA_COMM_LEN) + 16];

	if (row->kind == ROW_TEXT) {
		fprintf(f, "%s%s%s\n", o->color ? C_DIM : "", row->text, o->color ? C_RESET : "");
		return;
	}
	fputs(bold ? C_BOLD : "", f);
	if (t->merged) {
		char id[80];

		id_cell(row, id, sizeof(id));
		fprintf(f, "  %-*s", (int)t->id_w, id);
	} else {
		fprintf(f, "%*s %*s", (int)t->w[TC_PID],
			row->kind == ROW_TOTAL ? "TOTAL" : row->cell[TC_PID], (int)t->w[TC_TID],
			row->cell[TC_TID]);
	}
	fprintf(f, "  %s", comm_cell_w(name, sizeof(name), row->comm, t->comm_w));
	for (int c = TC_WALL; c < TC_NR; c++)
		if (t->on[c])
			fprintf(f, "  %*s", (int)t->w[c], row->cell[c]);
	fprintf(f, "%s\n", bold ? C_RESET : "");
}

static void ttable_print_header(FILE *f, const struct ttable *t, const struct table_opts *o)
{
	static const char *const unit2[TC_NR] = {
	    [TC_WAKE] = "avg/max us",
	    [TC_SW] = "vol/invol",
	};

	for (int line = 0; line < 2; line++) {
		fputs(o->color ? (line ? C_DIM : C_BOLD) : "", f);
		if (t->merged)
			fprintf(f, "  %-*s", (int)t->id_w, line ? "" : "PID/TID");
		else
			fprintf(f, "%*s %*s", (int)t->w[TC_PID], line ? "" : "PID",
				(int)t->w[TC_TID], line ? "" : "TID");
		fprintf(f, "  %-*s", (int)t->comm_w, line ? "" : "COMM");
		for (int c = TC_WALL; c < TC_NR; c++) {
			const char *u = c < TC_WAKE ? t->unit : unit2[c];

			if (t->on[c])
				fprintf(f, "  %*s", (int)t->w[c], line ? u : tcol_name[c]);
		}
		fprintf(f, "%s\n", o->color ? C_RESET : "");
	}
}

/* What the layout left out, in a line under the table. */
static void ttable_print_left_out(FILE *f, const struct ttable *t, size_t width)
{
	char what[128] = "";
	size_t n = 0;

	if (!t->on[TC_SW])
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%sSWITCHES", n ? ", " : "");
	if (!t->on[TC_WAKE] && n < sizeof(what))
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%sWAKEUP", n ? ", " : "");
	if (!t->on[TC_OTHER] && n < sizeof(what))
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%sOTHER%s", n ? ", " : "",
				      t->other_zero ? " (all 0)" : "");
	if (t->comm_w < COMM_WIDTH && n < sizeof(what))
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%sCOMM cut to %d", n ? ", " : "",
				      COMM_WIDTH_NARROW);
	if (!n)
		return;
	fprintf(f, "  (left out for %zu columns: %s; see --wide)\n", width, what);
}

static void print_summary(FILE *f, const struct run *r, const struct table_opts *o)
{
	char st[96], wall[32], cpu[32], user[32], sys[32], rss[32];

	status_describe(r, st, sizeof(st));
	fprintf(f, "%stsarun: ", o->color ? C_BOLD : "");
	textsafe_fput(f, textsafe_term, o->command, TEXTSAFE_NUL);
	fprintf(f, ": %s%s\n", st, o->color ? C_RESET : "");
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
	if (da->known && !da->non_cpu_live) {
		fprintf(f, "; other delays not counted: ");
		textsafe_fput(f, textsafe_term, da->reason, TEXTSAFE_NUL);
	} else if (avail[DELAY_BLOCK_IO]) {
		fprintf(f, "; no other delay");
	}
	fputc('\n', f);
	if (q->dropped_waits || q->implausible)
		fprintf(f,
			"  note: the kernel timed %llu waits from an unset start (left out of the "
			"delays) and %llu delay counters were impossible (shown as null)\n",
			(unsigned long long)q->dropped_waits, (unsigned long long)q->implausible);
	if (q->blkio_from_ebpf)
		fprintf(f,
			"  note: the kernel's block I/O delay missed waits of %llu thread%s (the "
			"scheduler's delayed dequeue): the waits tsarun saw in io_schedule() are "
			"given\n",
			(unsigned long long)q->blkio_from_ebpf, q->blkio_from_ebpf == 1 ? "" : "s");
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
		char comm[TEXTSAFE_SIZE(TSA_COMM_LEN)];

		if (t->tid_before_exec)
			fprintf(f, "%s%u became %u, %s", listed++ ? "; " : "", t->tid_before_exec,
				t->tid, term_str(comm, sizeof(comm), t->comm));
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
	/* Names and reasons are tsarun's, or a read artifact's: escaped. */
	fprintf(f, "  sources:");
	for (int i = 0; i < q->nsources; i++)
		if (q->sources[i].active) {
			fputc(' ', f);
			textsafe_fput(f, textsafe_term, q->sources[i].name, TEXTSAFE_NUL);
		}
	for (int i = 0; i < q->nsources; i++) {
		/* A source left out by choice (--backend, or not needed) is in the artifact. */
		if (q->sources[i].active || !strncmp(q->sources[i].reason, "not selected", 12) ||
		    !strncmp(q->sources[i].reason, "not used", 8))
			continue;
		fputs("   ", f);
		textsafe_fput(f, textsafe_term, q->sources[i].name, TEXTSAFE_NUL);
		fputs(" unavailable: ", f);
		textsafe_fput(f, textsafe_term, q->sources[i].reason, TEXTSAFE_NUL);
	}
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
	/* Notes quote what the run saw (names, paths, an artifact's text). */
	for (int i = 0; i < q->nnotes; i++)
		textsafe_term_line(f, "  note: ", q->notes[i], "");
}

#define STACK_ROWS  8
#define STACK_WIDTH 96

/* The stack in a line: the innermost user frames, then where the kernel waited. */
static void short_stack(const struct run_stacks *s, const struct stack_agg *a, char *buf,
			size_t len, size_t width)
{
	const struct stack_trace *u = a->ustack < s->ntraces ? &s->traces[a->ustack] : NULL;
	const struct stack_trace *k = a->kstack < s->ntraces ? &s->traces[a->kstack] : NULL;
	char tmp[1024] = "";
	size_t n = 0;
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
	/* Symbols are the command's text too: escaped, then the innermost end kept. */
	textsafe_term_tail(buf, len, tmp, n, width);
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
		char st[TEXTSAFE_SIZE(STACK_WIDTH + 8)], name[TEXTSAFE_SIZE(TSA_COMM_LEN) + 16];

		if (a->kind != STACK_OFFCPU)
			continue;
		/* The stack in what the row leaves of the terminal (51 columns before it). */
		short_stack(s, a, st, sizeof(st),
			    o->width && o->width < 51 + STACK_WIDTH + 7
				? (o->width > 51 + 24 ? o->width - 51 : 24)
				: STACK_WIDTH + 7);
		fprintf(f, "  %9s ms %s %s %7u %6llux  %s\n", fmt_ms(a->total_ns, d1, sizeof(d1)),
			a->state == TSA_ST_DISK ? "D" : "S", comm_cell(name, sizeof(name), comm),
			a->tid, (unsigned long long)a->count, st);
		textsafe_term(name, sizeof(name), a->waker_comm, TEXTSAFE_NUL);
		if (a->has_waker && a->waker_tid)
			fprintf(f, "  %9s      woken by %s (%u)\n", "", name, a->waker_tid);
		else if (a->has_waker)
			fprintf(f, "  %9s      woken by %s\n", "", name);
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
		textsafe_term_line(f, "  note: kernel frames are addresses: ", s->kernel_symbols,
				   "");
	if (s->user_symbols[0])
		textsafe_term_line(f, "  note: ", s->user_symbols, "");
	if (s->oncpu_reason[0]) {
		fprintf(f, "%s  warning: no on-CPU samples: ", warn);
		textsafe_term_line(f, "", s->oncpu_reason, reset);
	}
}

/*
 * Prose (the summary, notes, the quality line) goes through a buffer, to be
 * wrapped at word boundaries to the terminal's width; without a width it is
 * written straight.
 */
struct prose {
	FILE *out, *m;
	char *buf;
	size_t len, width;
};

static FILE *prose_begin(struct prose *p, FILE *out, size_t width)
{
	p->out = out;
	p->width = width;
	p->m = width ? open_memstream(&p->buf, &p->len) : NULL;
	return p->m ? p->m : out;
}

static void prose_end(struct prose *p)
{
	if (!p->m)
		return;
	fclose(p->m);
	termwrap_fputs(p->out, p->buf, p->width);
	free(p->buf);
	p->m = NULL;
	p->buf = NULL;
}

/* The rows of the table, in its order (processes by the sort key, their threads under them). */
static int ttable_fill(struct ttable *tt, const struct run *r, const struct table_opts *o)
{
	const struct run_totals *tot = &r->totals;
	size_t *pidx = NULL, *tidx = NULL, shown = 0, tcount = 0;
	uint64_t rest_st[TSA_ST_NR] = {0}, rest_life = 0, rest_res = 0;
	uint32_t rest_unm = 0;
	struct trow *row;
	int err = -ENOMEM;

	pidx = malloc(r->nprocs * sizeof(*pidx));
	tidx = malloc(r->nthreads * sizeof(*tidx));
	if (!pidx || !tidx)
		goto out;
	for (size_t i = 0; i < r->nprocs; i++)
		pidx[i] = i;
	qsort_r(pidx, r->nprocs, sizeof(*pidx), cmp_proc_idx, &(struct sort_ctx){r, o->sort});
	for (size_t pi = 0; pi < r->nprocs; pi++) {
		const struct proc_acct *p = &r->procs[pidx[pi]];
		uint64_t lat_sum = 0, lat_n = 0, lat_max = 0, vol = 0, invol = 0;
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
		qsort_r(tidx, n, sizeof(*tidx), cmp_thread_idx, &(struct sort_ctx){r, o->sort});
		if (n == 1) {
			/* A single-threaded process is one row: its thread. */
			thread_row(tt, &r->threads[tidx[0]], ROW_SINGLE, p->pid);
			shown++;
			continue;
		}
		/* Process row: the process's own span, its threads' sums. */
		row = ttable_add(tt, ROW_PROC);
		if (!row)
			goto out;
		fill_cols(tt, row, (uint64_t)(p->end_ns - p->start_ns), p->state_ns, p->residual_ns,
			  lat_sum, lat_n, lat_max, vol, invol, p->unmeasured);
		snprintf(row->cell[TC_PID], sizeof(row->cell[0]), "%u", p->pid);
		snprintf(row->comm, sizeof(row->comm), "%s", run_shown_comm(p->comm, p->execs));
		for (size_t k = 0; k < n; k++) {
			const struct thread_acct *t = &r->threads[tidx[k]];

			if (shown < (size_t)o->top) {
				thread_row(tt, t, ROW_THREAD, p->pid);
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
		row = ttable_add(tt, ROW_TEXT);
		if (!row ||
		    asprintf(&row->text, "  ... %zu more thread%s (sums; every thread is in %s)",
			     tcount, tcount == 1 ? "" : "s",
			     o->artifact ? o->artifact : "the artifact") < 0) {
			if (row)
				row->text = NULL;
			goto out;
		}
		row = ttable_add(tt, ROW_REST);
		if (!row)
			goto out;
		fill_cols(tt, row, rest_life, rest_st, rest_res, 0, 0, 0, 0, 0, rest_unm);
		snprintf(row->comm, sizeof(row->comm), "(the rest)");
	}
	row = ttable_add(tt, ROW_TOTAL);
	if (!row)
		goto out;
	fill_cols(tt, row, tot->lifetime_ns, tot->state_ns, tot->residual_ns, tot->wakeup_lat_sum,
		  tot->wakeup_lat_count, tot->wakeup_lat_max, tot->voluntary, tot->involuntary,
		  tot->unmeasured);
	err = 0;
out:
	free(pidx);
	free(tidx);
	return err;
}

void table_print(FILE *f, const struct run *r, const struct table_opts *o)
{
	const struct run_totals *tot = &r->totals;
	struct ttable tt = {.unit_ns = 1e6, .unit = "ms"};
	int64_t span_lo = 0, span_hi = 0;
	struct prose pr = {0};
	FILE *p;

	g_unmeasured = tot->unmeasured;
	p = prose_begin(&pr, f, o->width);
	if (r->quality.ebpf_load.failed) {
		const char *ob = r->quality.ebpf_load.object;

		fprintf(
		    p,
		    "%stsarun: warning: eBPF did not load: %s%s%s%s%s; the figures below "
		    "come from procfs and taskstats (see tsarun doctor, and -v for the log)%s\n",
		    o->color ? C_YELLOW : "", ob[0] ? "the kernel refused the " : "",
		    ob[0] ? (r->quality.ebpf_load.is_map ? "map " : "program ") : "", ob,
		    ob[0] ? ": " : "", r->quality.ebpf_load.message, o->color ? C_RESET : "");
	}
	print_summary(p, r, o);
	if (!r->detailed || !r->nthreads) {
		if (r->quality.nsources)
			print_quality(p, r, o);
		prose_end(&pr);
		return;
	}
	prose_end(&pr);

	/* One unit for every time in the table: ms, or s from 100 s of thread time. */
	if (tot->lifetime_ns >= 100000000000ull) {
		tt.unit_ns = 1e9;
		tt.unit = "s";
	}
	if (!ttable_fill(&tt, r, o)) {
		ttable_layout(&tt, o->width);
		fputc('\n', f);
		ttable_print_header(f, &tt, o);
		for (size_t i = 0; i < tt.n; i++)
			ttable_print_row(f, &tt, o, &tt.rows[i]);
		p = prose_begin(&pr, f, o->width);
		fprintf(p, "%*s%u process%s, %u thread%s (WALL is the sum of thread lifetimes)\n",
			tt.merged ? 4 : (int)(tt.w[TC_PID] + 1 + tt.w[TC_TID] + 2), "",
			tot->processes, tot->processes == 1 ? "" : "es", tot->threads,
			tot->threads == 1 ? "" : "s");
		ttable_print_left_out(p, &tt, o->width);
	} else {
		p = prose_begin(&pr, f, o->width);
		fprintf(p, "  (no table: out of memory)\n");
	}
	ttable_free(&tt);

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
		fprintf(p,
			"\n  concurrency over %.1f ms: on average %.2f threads on-CPU, %.2f "
			"runnable, %s; at most %llu alive\n",
			span / 1e6, (double)on / span, (double)rq / span, off,
			(unsigned long long)tot->max_threads_alive);
	}
	if (r->stacks)
		print_stacks(p, r, o);
	if (r->critpath) {
		/* Its own columns, fitted to the width: not prose to wrap. */
		prose_end(&pr);
		critpath_print(f, r->critpath, o->width ? (int)o->width : 80);
		p = prose_begin(&pr, f, o->width);
	}
	print_quality(p, r, o);
	if (o->artifact && o->artifact_keeps_old) {
		char *old = NULL;

		if (asprintf(&old, "%s (the previous one is now %s.old)", o->artifact,
			     o->artifact) >= 0)
			textsafe_term_line(p, "  artifact: ", old, "");
		free(old);
	} else if (o->artifact) {
		textsafe_term_line(p, "  artifact: ", o->artifact, "");
	}
	prose_end(&pr);
}
