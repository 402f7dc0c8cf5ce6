// SPDX-License-Identifier: MIT
/* Stacks of a run: the model, the folded profiles and the flame graphs' input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "hash.h"
#include "hashmap.h"
#include "run.h"
#include "stacks.h"
#include "vec.h"

struct run_stacks *run_stacks__new(void)
{
	return calloc(1, sizeof(struct run_stacks));
}

void run_stacks__free(struct run_stacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ntraces; i++) {
		for (uint32_t k = 0; k < s->traces[i].nframes; k++)
			free(s->traces[i].frames[k]);
		free(s->traces[i].frames);
	}
	free(s->traces);
	free(s->aggs);
	free(s);
}

const char *stack_status_name(int status)
{
	static const char *const names[TSA_SS_NR] = {
	    [TSA_SS_NONE] = "none",
	    [TSA_SS_OK] = "ok",
	    [TSA_SS_EMPTY] = "empty",
	    [TSA_SS_FAILED] = "failed",
	    [TSA_SS_MAP_FULL] = "map full",
	    [TSA_SS_EXITED] = "exited",
	    [TSA_SS_EXECED] = "exec",
	    [TSA_SS_OVERFLOW] = "overflow",
	    [TSA_SS_AT_END] = "still in the kernel at the end",
	    [TSA_SS_MISSED] = "not seen",
	};

	return status >= 0 && status < TSA_SS_NR && names[status] ? names[status] : "unknown";
}

int64_t run_stacks__add_trace(struct run_stacks *s, const char *const *frames, size_t n,
			      uint8_t status, bool kernel, bool truncated, uint32_t repaired)
{
	struct stack_trace *t;

	t = vec_grow(s->traces, &s->traces_cap, s->ntraces + 1, sizeof(*t), 64);
	if (!t)
		return -ENOMEM;
	s->traces = t;
	t = &s->traces[s->ntraces];
	memset(t, 0, sizeof(*t));
	t->frames = calloc(n ? n : 1, sizeof(*t->frames));
	if (!t->frames)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		t->frames[i] = strdup(frames[i] ? frames[i] : "[unknown]");
		if (!t->frames[i]) {
			while (i--)
				free(t->frames[i]);
			free(t->frames);
			return -ENOMEM;
		}
	}
	t->nframes = (uint32_t)n;
	t->status = status;
	t->kernel = kernel;
	t->truncated = truncated;
	t->repaired = repaired;
	return (int64_t)s->ntraces++;
}

int64_t run_stacks__add_missing(struct run_stacks *s, bool kernel, uint8_t status)
{
	char buf[96];
	const char *f = buf;

	snprintf(buf, sizeof(buf), "[%s stack not captured: %s]", kernel ? "kernel" : "user",
		 stack_status_name(status));
	if (status == TSA_SS_NONE)
		return run_stacks__add_trace(s, NULL, 0, status, kernel, false, 0);
	return run_stacks__add_trace(s, &f, 1, status, kernel, false, 0);
}

int run_stacks__add_agg(struct run_stacks *s, const struct stack_agg *a)
{
	struct stack_agg *na = vec_grow(s->aggs, &s->aggs_cap, s->naggs + 1, sizeof(*na), 64);

	if (!na)
		return -ENOMEM;
	s->aggs = na;
	s->aggs[s->naggs++] = *a;
	return 0;
}

/* Two traces by their frames (then kind and status), not by where they are stored. */
static int cmp_trace(const struct run_stacks *s, uint32_t x, uint32_t y)
{
	const struct stack_trace *a, *b;

	if (x >= s->ntraces || y >= s->ntraces)
		return x < y ? -1 : x > y;
	a = &s->traces[x];
	b = &s->traces[y];
	for (uint32_t i = 0; i < a->nframes && i < b->nframes; i++) {
		int c = strcmp(a->frames[i], b->frames[i]);

		if (c)
			return c;
	}
	if (a->nframes != b->nframes)
		return a->nframes < b->nframes ? -1 : 1;
	if (a->kernel != b->kernel)
		return a->kernel ? 1 : -1;
	return a->status < b->status ? -1 : a->status > b->status;
}

/*
 * Largest first, then by content alone: the order is the same whether the
 * traces were stored as a run symbolized them or as an artifact lists them
 * (tsarun report writes the files --flame wrote, byte for byte).
 */
static int cmp_agg(const void *pa, const void *pb, void *ctx)
{
	const struct stack_agg *a = pa, *b = pb;
	const struct run_stacks *s = ctx;
	int c;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->state != b->state)
		return a->state < b->state ? -1 : 1;
	if ((c = cmp_trace(s, a->ustack, b->ustack)) || (c = cmp_trace(s, a->kstack, b->kstack)))
		return c;
	if (a->waker_tid != b->waker_tid)
		return a->waker_tid < b->waker_tid ? -1 : 1;
	if ((c = cmp_trace(s, a->waker_ustack, b->waker_ustack)) ||
	    (c = cmp_trace(s, a->waker_kstack, b->waker_kstack)))
		return c;
	if ((c = strcmp(a->waker_comm, b->waker_comm)))
		return c;
	return strcmp(a->comm, b->comm);
}

static bool same_trace(const struct stack_trace *a, const struct stack_trace *b)
{
	if (a->nframes != b->nframes || a->status != b->status || a->kernel != b->kernel ||
	    a->truncated != b->truncated)
		return false;
	for (uint32_t i = 0; i < a->nframes; i++)
		if (strcmp(a->frames[i], b->frames[i]))
			return false;
	return true;
}

static bool same_agg(const struct stack_agg *a, const struct stack_agg *b)
{
	return a->kind == b->kind && a->pid == b->pid && a->tid == b->tid && a->state == b->state &&
	       a->ustack == b->ustack && a->kstack == b->kstack && a->has_waker == b->has_waker &&
	       a->waker_pid == b->waker_pid && a->waker_tid == b->waker_tid &&
	       a->waker_ustack == b->waker_ustack && a->waker_kstack == b->waker_kstack &&
	       !strcmp(a->waker_comm, b->waker_comm) && !strcmp(a->comm, b->comm);
}

static int cmp_identity(const void *pa, const void *pb)
{
	const struct stack_agg *a = pa, *b = pb;
	const uint32_t x[] = {a->kind,	       a->pid,	       a->tid,	     (uint32_t)a->state,
			      a->ustack,       a->kstack,      a->waker_pid, a->waker_tid,
			      a->waker_ustack, a->waker_kstack};
	const uint32_t y[] = {b->kind,	       b->pid,	       b->tid,	     (uint32_t)b->state,
			      b->ustack,       b->kstack,      b->waker_pid, b->waker_tid,
			      b->waker_ustack, b->waker_kstack};

	int c;

	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	c = strcmp(a->waker_comm, b->waker_comm);
	return c ? c : strcmp(a->comm, b->comm);
}

/*
 * Different raw stacks can read the same once symbolized (two addresses in
 * one function): such traces become one and their aggregates are merged.
 */
static uint64_t trace_hash(const struct stack_trace *t)
{
	uint64_t h = 1469598103934665603ull ^ t->nframes ^ ((uint64_t)t->status << 40) ^
		     ((uint64_t)t->kernel << 48) ^ ((uint64_t)t->truncated << 49);

	for (uint32_t i = 0; i < t->nframes; i++) {
		h = hash_fnv1a(t->frames[i], strlen(t->frames[i]), h);
		h = hash_fnv1a("\xff", 1, h); /* a separator between frames */
	}
	return h;
}

/* Is trace i the trace probe? */
static bool trace_equal(uint32_t i, const void *probe, void *ctx)
{
	return same_trace(&((const struct run_stacks *)ctx)->traces[i], probe);
}

static void merge(struct run_stacks *s)
{
	uint32_t *canon = malloc((s->ntraces ? s->ntraces : 1) * sizeof(*canon));
	struct hmap first; /* a trace -> the first of the traces equal to it */
	size_t out = 0;

	if (!canon)
		return;
	hmap__init(&first, s);
	/* Each trace maps to the first equal one. */
	for (size_t i = 0; i < s->ntraces; i++) {
		uint64_t h = trace_hash(&s->traces[i]);
		uint32_t j;

		canon[i] = (uint32_t)i;
		if (hmap__find(&first, h, trace_equal, &s->traces[i], &j)) {
			canon[i] = j;
		} else if (hmap__insert(&first, h, (uint32_t)i)) {
			hmap__free(&first);
			free(canon);
			return;
		}
	}
	hmap__free(&first);
	for (size_t i = 0; i < s->naggs; i++) {
		struct stack_agg *a = &s->aggs[i];

		a->ustack = a->ustack < s->ntraces ? canon[a->ustack] : a->ustack;
		a->kstack = a->kstack < s->ntraces ? canon[a->kstack] : a->kstack;
		a->waker_ustack =
		    a->waker_ustack < s->ntraces ? canon[a->waker_ustack] : a->waker_ustack;
		a->waker_kstack =
		    a->waker_kstack < s->ntraces ? canon[a->waker_kstack] : a->waker_kstack;
	}
	free(canon);
	qsort(s->aggs, s->naggs, sizeof(*s->aggs), cmp_identity);
	for (size_t i = 0; i < s->naggs; i++) {
		if (out && same_agg(&s->aggs[out - 1], &s->aggs[i])) {
			s->aggs[out - 1].count += s->aggs[i].count;
			s->aggs[out - 1].total_ns += s->aggs[i].total_ns;
			continue;
		}
		s->aggs[out++] = s->aggs[i];
	}
	s->naggs = out;
}

void run_stacks__sort(struct run_stacks *s)
{
	merge(s);
	qsort_r(s->aggs, s->naggs, sizeof(*s->aggs), cmp_agg, s);
}

uint64_t stack_drops_total(const struct stack_drops *d)
{
	return d->kstack_fail + d->ustack_fail + d->map_full + d->truncated + d->agg_full +
	       d->pending_lost + d->waker_missed + d->oncpu_full;
}

void run_stacks__thread_sums(const struct run_stacks *s, uint32_t tid, uint32_t pid, uint64_t *ns,
			     uint64_t *count)
{
	*ns = 0;
	*count = 0;
	for (size_t i = 0; s && i < s->naggs; i++) {
		const struct stack_agg *a = &s->aggs[i];

		if (a->kind != STACK_OFFCPU || a->tid != tid || a->pid != pid)
			continue;
		*ns += a->total_ns;
		*count += a->count;
	}
}

/* Profiles: each stack goes to an emitter (a folded file or a flame). */

#define MAX_FRAMES (2 + 1 + 4 * (TSA_STACK_DEPTH + 8) + 2)

typedef int (*emit_fn)(void *ctx, const char *const *frames, size_t n, uint64_t v, int cat);

struct profile {
	const struct run *r;
	emit_fn emit;
	void *ctx;
	const char *frames[MAX_FRAMES];
	size_t n;
	char proc_label[64], thread_label[64], waker_label[64];
};

static const struct thread_acct *find_thread(const struct run *r, uint32_t tid, uint32_t pid)
{
	const struct thread_acct *found = NULL;

	/* The last one with this identity (tids are reused only after exit). */
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid && r->threads[i].pid == pid)
			found = &r->threads[i];
	return found;
}

static const char *proc_comm(const struct run *r, uint32_t pid, const char *fallback)
{
	const struct thread_acct *l = find_thread(r, pid, pid);

	return l ? l->comm : fallback;
}

static void labels(struct profile *p, uint32_t pid, uint32_t tid, const char *comm)
{
	snprintf(p->proc_label, sizeof(p->proc_label), "%s-%u", proc_comm(p->r, pid, comm), pid);
	snprintf(p->thread_label, sizeof(p->thread_label), "%s-%u", comm, tid);
	p->frames[0] = p->proc_label;
	p->frames[1] = p->thread_label;
	p->n = 2;
}

static void push(struct profile *p, const char *f)
{
	if (p->n < MAX_FRAMES)
		p->frames[p->n++] = f;
}

static void push_trace(struct profile *p, const struct stack_trace *t, bool reverse)
{
	if (!t)
		return;
	if (t->truncated && !reverse)
		push(p, "[truncated]");
	for (uint32_t i = 0; i < t->nframes; i++)
		push(p, t->frames[reverse ? t->nframes - 1 - i : i]);
	if (t->truncated && reverse)
		push(p, "[truncated]");
}

static const struct stack_trace *trace(const struct run_stacks *s, uint32_t i)
{
	return i < s->ntraces ? &s->traces[i] : NULL;
}

static const char *state_frame(int st)
{
	return st == TSA_ST_DISK ? "[D]" : st == TSA_ST_SLEEP ? "[S]" : "[on-CPU]";
}

static int state_cat(int st)
{
	return st == TSA_ST_DISK ? WALL_DISK : st == TSA_ST_SLEEP ? WALL_SLEEP : WALL_ONCPU;
}

static const char *thread_comm(const struct run *r, uint32_t tid, uint32_t pid)
{
	const struct thread_acct *t = find_thread(r, tid, pid);

	return t ? t->comm : "?";
}

const char *stack_agg_comm(const struct run *r, const struct stack_agg *a)
{
	return a->comm[0] ? a->comm : thread_comm(r, a->tid, a->pid);
}

/* A stack taken before its process exec'd: the process had the name it had then. */
static void agg_labels(struct profile *p, const struct stack_agg *a)
{
	labels(p, a->pid, a->tid, stack_agg_comm(p->r, a));
	if (a->comm[0] && a->tid == a->pid)
		snprintf(p->proc_label, sizeof(p->proc_label), "%s-%u", a->comm, a->pid);
}

static int offcpu_profile(struct profile *p, bool with_state)
{
	const struct run_stacks *s = p->r->stacks;
	int err;

	for (size_t i = 0; i < s->naggs; i++) {
		const struct stack_agg *a = &s->aggs[i];

		if (a->kind != STACK_OFFCPU || !a->total_ns)
			continue;
		agg_labels(p, a);
		if (with_state)
			push(p, state_frame(a->state));
		push_trace(p, trace(s, a->ustack), false);
		push_trace(p, trace(s, a->kstack), false);
		if (a->has_waker) {
			push(p, "--");
			push_trace(p, trace(s, a->waker_kstack), true);
			push_trace(p, trace(s, a->waker_ustack), true);
			snprintf(p->waker_label, sizeof(p->waker_label), "%s-%u", a->waker_comm,
				 a->waker_tid);
			push(p, p->waker_label);
		}
		err = p->emit(p->ctx, p->frames, p->n, a->total_ns, state_cat(a->state));
		if (err)
			return err;
	}
	return 0;
}

static int oncpu_profile(struct profile *p)
{
	const struct run_stacks *s = p->r->stacks;
	int err;

	for (size_t i = 0; i < s->naggs; i++) {
		const struct stack_agg *a = &s->aggs[i];

		if (a->kind != STACK_ONCPU || !a->count)
			continue;
		agg_labels(p, a);
		push_trace(p, trace(s, a->ustack), false);
		push_trace(p, trace(s, a->kstack), false);
		err = p->emit(p->ctx, p->frames, p->n, a->count, WALL_ONCPU);
		if (err)
			return err;
	}
	return 0;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* One frame under the thread's labels. */
static int emit_one(struct profile *p, const char *what, uint64_t v, int cat)
{
	p->n = 2;
	push(p, what);
	return v ? p->emit(p->ctx, p->frames, p->n, v, cat) : 0;
}

/* The wall view of one thread: every nanosecond of its lifetime, once. */
static int wall_thread(struct profile *p, const struct thread_acct *t)
{
	const struct run_stacks *s = p->r->stacks;
	uint64_t samples = 0, oncpu = t->state_ns[TSA_ST_ONCPU], given = 0, biggest = 0;
	uint64_t stacked[TSA_ST_NR] = {0};
	size_t big = (size_t)-1;
	char below_s[64], below_d[64], minbuf[24];
	int err;

	for (size_t i = 0; i < s->naggs; i++) {
		const struct stack_agg *a = &s->aggs[i];

		if (a->tid != t->tid || a->pid != t->pid)
			continue;
		if (a->kind == STACK_ONCPU)
			samples += a->count;
		else if (a->state >= 0 && a->state < TSA_ST_NR)
			stacked[a->state] += a->total_ns;
	}
	/* On-CPU time, spread over the sampled stacks; the rounding goes to the largest. */
	for (size_t i = 0; samples && i < s->naggs; i++) {
		const struct stack_agg *a = &s->aggs[i];

		if (a->kind == STACK_ONCPU && a->tid == t->tid && a->pid == t->pid &&
		    a->count > biggest) {
			biggest = a->count;
			big = i;
		}
	}
	for (size_t i = 0; samples && i < s->naggs; i++) {
		const struct stack_agg *a = &s->aggs[i];
		uint64_t v;

		if (a->kind != STACK_ONCPU || a->tid != t->tid || a->pid != t->pid || i == big)
			continue;
		v = (uint64_t)((double)oncpu * (double)a->count / (double)samples);
		given += v;
		labels(p, t->pid, t->tid, t->comm);
		push_trace(p, trace(s, a->ustack), false);
		push_trace(p, trace(s, a->kstack), false);
		if (v && (err = p->emit(p->ctx, p->frames, p->n, v, WALL_ONCPU)))
			return err;
	}
	labels(p, t->pid, t->tid, t->comm);
	if (big != (size_t)-1) {
		push_trace(p, trace(s, s->aggs[big].ustack), false);
		push_trace(p, trace(s, s->aggs[big].kstack), false);
		if ((err = p->emit(p->ctx, p->frames, p->n, sub0(oncpu, given), WALL_ONCPU)))
			return err;
	} else if ((err = emit_one(p, s->oncpu ? "[on-CPU, no samples]" : "[on-CPU]", oncpu,
				   WALL_ONCPU))) {
		return err;
	}
	if ((err = emit_one(p, "[runqueue]", t->state_ns[TSA_ST_RUNQ], WALL_RUNQ)))
		return err;
	for (size_t i = 0; i < s->naggs; i++) {
		const struct stack_agg *a = &s->aggs[i];

		if (a->kind != STACK_OFFCPU || a->tid != t->tid || a->pid != t->pid)
			continue;
		labels(p, t->pid, t->tid, t->comm);
		push(p, state_frame(a->state));
		push_trace(p, trace(s, a->ustack), false);
		push_trace(p, trace(s, a->kstack), false);
		if (a->total_ns &&
		    (err = p->emit(p->ctx, p->frames, p->n, a->total_ns, state_cat(a->state))))
			return err;
	}
	if (s->offcpu_min_ns >= 1000000)
		snprintf(minbuf, sizeof(minbuf), "%gms", (double)s->offcpu_min_ns / 1e6);
	else if (s->offcpu_min_ns >= 1000)
		snprintf(minbuf, sizeof(minbuf), "%gus", (double)s->offcpu_min_ns / 1e3);
	else
		snprintf(minbuf, sizeof(minbuf), "%lluns", (unsigned long long)s->offcpu_min_ns);
	snprintf(below_s, sizeof(below_s), "[S] sleeps < %s", minbuf);
	snprintf(below_d, sizeof(below_d), "[D] sleeps < %s", minbuf);
	{
		uint64_t bd = t->below_disk_ns, bs = sub0(t->below_ns, t->below_disk_ns);

		if ((err = emit_one(p, below_s, bs, WALL_SLEEP)) ||
		    (err = emit_one(p, below_d, bd, WALL_DISK)) ||
		    (err = emit_one(p, "[S] no stack",
				    sub0(t->state_ns[TSA_ST_SLEEP], stacked[TSA_ST_SLEEP] + bs),
				    WALL_SLEEP)) ||
		    (err = emit_one(p, "[D] no stack",
				    sub0(t->state_ns[TSA_ST_DISK], stacked[TSA_ST_DISK] + bd),
				    WALL_DISK)) ||
		    (err = emit_one(p, "[stopped]", t->state_ns[TSA_ST_STOPPED], WALL_OTHER)) ||
		    (err = emit_one(p, "[unattributed]", t->residual_ns, WALL_OTHER)))
			return err;
	}
	return 0;
}

static int walk(const struct run *r, int which, emit_fn emit, void *ctx)
{
	struct profile *p;
	int err = 0;

	if (!r->stacks)
		return -ENOENT;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->r = r;
	p->emit = emit;
	p->ctx = ctx;
	if (which == 0)
		err = offcpu_profile(p, true);
	else if (which == 1)
		err = oncpu_profile(p);
	else
		for (size_t i = 0; !err && i < r->nthreads; i++)
			err = wall_thread(p, &r->threads[i]);
	free(p);
	return err;
}

int stacks_walk_thread_wall(const struct run *r, const struct thread_acct *t, stacks_emit_fn emit,
			    void *ctx)
{
	struct profile *p;
	int err;

	if (!r->stacks)
		return -ENOENT;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->r = r;
	p->emit = emit;
	p->ctx = ctx;
	err = wall_thread(p, t);
	free(p);
	return err;
}

/* A frame as folded text: no ';' (the separator), no line breaks, no control characters. */
static void put_frame(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		fputc(c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? '?' : (int)c, f);
	}
}

static int emit_folded(void *ctx, const char *const *frames, size_t n, uint64_t v, int cat)
{
	FILE *f = ctx;

	(void)cat;
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(';', f);
		put_frame(f, frames[i][0] ? frames[i] : "[unknown]");
	}
	fprintf(f, " %llu\n", (unsigned long long)v);
	return ferror(f) ? -EIO : 0;
}

int stacks_write_offcpu_folded(FILE *f, const struct run *r)
{
	return walk(r, 0, emit_folded, f);
}

int stacks_write_oncpu_folded(FILE *f, const struct run *r)
{
	return walk(r, 1, emit_folded, f);
}

int stacks_write_wall_folded(FILE *f, const struct run *r)
{
	return walk(r, 2, emit_folded, f);
}

static int emit_flame(void *ctx, const char *const *frames, size_t n, uint64_t v, int cat)
{
	return flame__add(ctx, frames, n, v, cat);
}

int stacks_flame(struct flame *fl, const struct run *r, int which)
{
	flame__set_category(fl, WALL_ONCPU, "on-CPU", FLAME_PAL_HOT);
	flame__set_category(fl, WALL_RUNQ, "runqueue", FLAME_PAL_YELLOW);
	flame__set_category(fl, WALL_SLEEP, "sleeping (S)", FLAME_PAL_BLUE);
	flame__set_category(fl, WALL_DISK, "uninterruptible (D)", FLAME_PAL_PURPLE);
	flame__set_category(fl, WALL_OTHER, "stopped, unattributed", FLAME_PAL_GREY);
	return walk(r, which, emit_flame, fl);
}
