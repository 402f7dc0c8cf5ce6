// SPDX-License-Identifier: MIT
/* A run's time in parts with stable names (see parts.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "bashprof.h"
#include "parts.h"
#include "run.h"
#include "stacks.h"
#include "vec.h"

#define NAME_MAX_LEN 512

struct run_parts *run_parts__new(void)
{
	return calloc(1, sizeof(struct run_parts));
}

void run_parts__free(struct run_parts *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].thread);
		free(p->v[i].stack);
	}
	free(p->v);
	free(p->root);
	free(p);
}

int run_parts__add(struct run_parts *p, enum part_kind kind, int state, const char *thread,
		   const char *stack, uint64_t ns, uint64_t cpu_ns)
{
	struct part *x;

	x = vec_grow(p->v, &p->cap, p->n + 1, sizeof(*x), 64);
	if (!x)
		return -ENOMEM;
	p->v = x;
	x = &p->v[p->n];
	memset(x, 0, sizeof(*x));
	x->kind = (uint8_t)kind;
	x->state = (uint8_t)(state < 0 ? 0 : state);
	x->ns = ns;
	x->cpu_ns = cpu_ns;
	x->thread = thread ? strdup(thread) : NULL;
	x->stack = stack ? strdup(stack) : NULL;
	if ((thread && !x->thread) || (stack && !x->stack)) {
		free(x->thread);
		free(x->stack);
		return -ENOMEM;
	}
	p->n++;
	return 0;
}

const char *parts_state_name(int state)
{
	return state == PARTS_ST_RESIDUAL ? "residual" : state_name(state);
}

int parts_state_by_name(const char *name)
{
	for (int s = 0; s < PARTS_NSTATES; s++)
		if (!strcmp(parts_state_name(s), name))
			return s;
	return -1;
}

/* The process of a thread: that pid, started last at or before the thread (pids come back). */
static ssize_t proc_of(const struct run *r, uint32_t pid, int64_t start_ns)
{
	ssize_t best = -1;

	for (size_t i = 0; i < r->nprocs; i++) {
		const struct proc_acct *p = &r->procs[i];

		if (p->pid != pid || (best >= 0 && p->start_ns < r->procs[best].start_ns))
			continue;
		if (p->start_ns <= start_ns || best < 0)
			best = (ssize_t)i;
	}
	return best;
}

/* A process's parent in the run, or -1 (a root: the command, or an orphan's new parent outside). */
static ssize_t parent_of(const struct run *r, size_t i)
{
	const struct proc_acct *p = &r->procs[i];

	if (p->pid == r->root_pid || p->ppid == p->pid)
		return -1;
	return proc_of(r, p->ppid, p->start_ns);
}

/* "comm" or "comm#k" (k capped), where k counts earlier same-name siblings. */
static void with_ordinal(char *out, size_t len, const char *comm, unsigned k)
{
	if (!k)
		snprintf(out, len, "%s", comm[0] ? comm : "?");
	else if (k < PARTS_MAX_ORDINAL)
		snprintf(out, len, "%s#%u", comm[0] ? comm : "?", k);
	else
		snprintf(out, len, "%s#%u+", comm[0] ? comm : "?", PARTS_MAX_ORDINAL);
}

static bool earlier(int64_t a_start, uint32_t a_id, int64_t b_start, uint32_t b_id)
{
	return a_start < b_start || (a_start == b_start && a_id < b_id);
}

/* The processes' names and the threads' processes, worked out once. */
struct names {
	ssize_t *parent; /* per process */
	char **path;	 /* per process, or NULL until made */
	ssize_t *proc;	 /* per thread */
};

static void names__free(struct names *nm, size_t nprocs)
{
	for (size_t i = 0; nm->path && i < nprocs; i++)
		free(nm->path[i]);
	free(nm->path);
	free(nm->parent);
	free(nm->proc);
}

/* The process path of procs[i] (see parts.h), made once; NULL when out of memory. */
static const char *proc_path(const struct run *r, struct names *nm, size_t i, int depth)
{
	const struct proc_acct *p = &r->procs[i];
	ssize_t parent = depth < 64 ? nm->parent[i] : -1;
	char me[48], buf[NAME_MAX_LEN];
	const char *up = NULL;
	unsigned k = 0;

	if (nm->path[i])
		return nm->path[i];
	for (size_t j = 0; j < r->nprocs; j++) {
		const struct proc_acct *q = &r->procs[j];

		if (j == i || nm->parent[j] != parent || strcmp(q->comm, p->comm))
			continue;
		if (parent < 0 && (q->pid == r->root_pid) != (p->pid == r->root_pid))
			continue;
		k += earlier(q->start_ns, q->pid, p->start_ns, p->pid);
	}
	with_ordinal(me, sizeof(me), p->comm, k);
	if (parent >= 0)
		up = proc_path(r, nm, (size_t)parent, depth + 1);
	if (parent >= 0 && !up)
		return NULL;
	if (parent < 0)
		/* An orphan adopted outside the tree is marked as one. */
		snprintf(buf, sizeof(buf), "%s%s", p->pid == r->root_pid ? "" : "[orphan]/", me);
	else if (strlen(up) + strlen(me) + 2 < sizeof(buf))
		strcat(strcat(strcpy(buf, up), "/"), me); /* it fits: checked */
	else
		snprintf(buf, sizeof(buf), "%s", up); /* too deep: the path it has */
	nm->path[i] = strdup(buf);
	return nm->path[i];
}

static int names__init(struct names *nm, const struct run *r)
{
	memset(nm, 0, sizeof(*nm));
	nm->parent = calloc(r->nprocs + 1, sizeof(*nm->parent));
	nm->path = calloc(r->nprocs + 1, sizeof(*nm->path));
	nm->proc = calloc(r->nthreads + 1, sizeof(*nm->proc));
	if (!nm->parent || !nm->path || !nm->proc)
		return -ENOMEM;
	for (size_t i = 0; i < r->nprocs; i++)
		nm->parent[i] = parent_of(r, i);
	for (size_t i = 0; i < r->nthreads; i++)
		nm->proc[i] = proc_of(r, r->threads[i].pid, r->threads[i].start_ns);
	return 0;
}

/* A thread's stable name (parts.h). */
static int thread_name(const struct run *r, struct names *nm, size_t ti, char *out, size_t len)
{
	const struct thread_acct *t = &r->threads[ti];
	ssize_t pi = nm->proc[ti];
	char me[48];
	unsigned k = 0;

	if (pi >= 0) {
		const char *pp = proc_path(r, nm, (size_t)pi, 0);

		if (!pp)
			return -ENOMEM;
		snprintf(out, len, "%s", pp);
	} else {
		snprintf(out, len, "[process %s]", t->comm);
	}
	for (size_t j = 0; j < r->nthreads; j++) {
		const struct thread_acct *u = &r->threads[j];

		/* the same process (not an earlier one with that pid), the same name */
		if (j == ti || nm->proc[j] != pi || u->pid != t->pid || strcmp(u->comm, t->comm))
			continue;
		k += earlier(u->start_ns, u->tid, t->start_ns, t->tid);
	}
	with_ordinal(me, sizeof(me), t->comm, k);
	if (strlen(out) + strlen(me) + 2 < len)
		snprintf(out + strlen(out), len - strlen(out), ":%s", me);
	return 0;
}

/* Add, or merge into the same (kind, state, thread, stack) when it is there. */
static int add_merge(struct run_parts *p, enum part_kind kind, int state, const char *thread,
		     const char *stack, uint64_t ns, uint64_t cpu_ns)
{
	for (size_t i = p->n; i-- > 0;) {
		struct part *x = &p->v[i];

		if (x->kind == kind && x->state == state &&
		    !strcmp(x->thread ? x->thread : "", thread ? thread : "") &&
		    !strcmp(x->stack ? x->stack : "", stack ? stack : "")) {
			x->ns += ns;
			x->cpu_ns += cpu_ns;
			return 0;
		}
		/* Merges only happen within one thread's parts, added together. */
		if (kind != PART_BASH && x->thread && thread && strcmp(x->thread, thread))
			break;
	}
	return run_parts__add(p, kind, state, thread, stack, ns, cpu_ns);
}

struct stack_ctx {
	struct run_parts *p;
	const char *thread;
	uint64_t on_ns, cpu_ns; /* the thread's on-CPU time, and that less steal */
	int err;
};

/* On-CPU time less what the host or interrupts took of it: the CPU time rusage counts. */
static uint64_t cpu_of(const struct thread_acct *t)
{
	uint64_t on = t->state_ns[TSA_ST_ONCPU];

	if (t->unmeasured & ACCT_NO_STEAL)
		return on;
	return on - (t->steal_ns < on ? t->steal_ns : on);
}

static int wall_state(int cat, const char *first)
{
	switch (cat) {
	case WALL_ONCPU:
		return 0;
	case WALL_RUNQ:
		return 1;
	case WALL_SLEEP:
		return 2;
	case WALL_DISK:
		return 3;
	default:
		return first && !strcmp(first, "[stopped]") ? 4 : PARTS_ST_RESIDUAL;
	}
}

static int on_stack(void *ctx, const char *const *frames, size_t n, uint64_t v, int cat)
{
	struct stack_ctx *c = ctx;
	char buf[8192];
	size_t used = 0, from = 2;
	int state;

	if (n <= 2 || !v)
		return 0;
	state = wall_state(cat, frames[2]);
	/* The off-CPU state's own frame says what the part's state says. */
	if ((!strcmp(frames[2], "[S]") || !strcmp(frames[2], "[D]")) && n > 3)
		from = 3;
	buf[0] = '\0';
	for (size_t i = from; i < n && used + 2 < sizeof(buf); i++) {
		const char *s = frames[i][0] ? frames[i] : "[unknown]";

		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s", i > from ? ";" : "");
		for (; *s && used + 1 < sizeof(buf); s++) {
			unsigned char ch = (unsigned char)*s;

			buf[used++] = ch == ';' ? ':' : (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
		}
		buf[used] = '\0';
	}
	return add_merge(c->p, PART_STACK, state, c->thread, buf, v,
			 state == TSA_ST_ONCPU && c->on_ns
			     ? (uint64_t)((unsigned __int128)v * c->cpu_ns / c->on_ns)
			     : 0);
}

static int by_ns_desc(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* Keep the PARTS_MAX_STACKS largest stack parts; the rest per thread and state. */
static int cap_stacks(struct run_parts *p, size_t first)
{
	size_t n = p->n - first, keep = PARTS_MAX_STACKS;
	struct part *rest;
	size_t nrest;
	int ret = 0;

	if (n <= keep)
		return 0;
	qsort(p->v + first, n, sizeof(*p->v), by_ns_desc);
	nrest = n - keep;
	rest = malloc(nrest * sizeof(*rest));
	if (!rest)
		return -ENOMEM;
	memcpy(rest, p->v + first + keep, nrest * sizeof(*rest));
	p->n = first + keep;
	for (size_t i = 0; i < nrest; i++) {
		struct part *x = &rest[i];
		bool merged = false;

		for (size_t j = first + keep; !ret && j < p->n; j++)
			if (p->v[j].state == x->state && !strcmp(p->v[j].thread, x->thread)) {
				p->v[j].ns += x->ns;
				p->v[j].cpu_ns += x->cpu_ns;
				merged = true;
				break;
			}
		if (!merged && !ret)
			ret = run_parts__add(p, PART_STACK, x->state, x->thread, "[other stacks]",
					     x->ns, x->cpu_ns);
		free(x->thread);
		free(x->stack);
	}
	free(rest);
	return ret;
}

static int on_bash(void *ctx, const char *path, uint64_t wall_ns, uint64_t cpu_ns)
{
	return add_merge(ctx, PART_BASH, 0, NULL, path, wall_ns, cpu_ns);
}

struct run_parts *run_parts__build(const struct run *r)
{
	struct run_parts *p = run_parts__new();
	char name[NAME_MAX_LEN];
	struct names nm;
	size_t first_stack;
	int ret;

	if (!p)
		return NULL;
	ret = names__init(&nm, r);
	for (size_t i = 0; !ret && i < r->nthreads; i++) {
		const struct thread_acct *t = &r->threads[i];

		ret = thread_name(r, &nm, i, name, sizeof(name));
		if (ret)
			break;
		if (t->tid == r->root_pid && t->pid == r->root_pid && !p->root) {
			p->root = strdup(name);
			if (!p->root)
				ret = -ENOMEM;
		}
		for (int s = 0; !ret && s < PARTS_NSTATES; s++) {
			uint64_t v = s == PARTS_ST_RESIDUAL ? t->residual_ns : t->state_ns[s];

			if (v)
				ret = add_merge(p, PART_THREAD, s, name, NULL, v,
						s == TSA_ST_ONCPU ? cpu_of(t) : 0);
		}
	}
	first_stack = p->n;
	if (!ret && r->stacks) {
		p->stacks = true;
		for (size_t i = 0; !ret && i < r->nthreads; i++) {
			struct stack_ctx c = {.p = p,
					      .thread = name,
					      .on_ns = r->threads[i].state_ns[TSA_ST_ONCPU],
					      .cpu_ns = cpu_of(&r->threads[i])};

			ret = thread_name(r, &nm, i, name, sizeof(name));
			if (!ret)
				ret = stacks_walk_thread_wall(r, &r->threads[i], on_stack, &c);
		}
		if (!ret)
			ret = cap_stacks(p, first_stack);
	}
	if (!ret && r->bash) {
		p->bash = true;
		ret = bashprof__each_self(r->bash, on_bash, p);
	}
	names__free(&nm, r->nprocs);
	if (ret) {
		run_parts__free(p);
		errno = -ret;
		return NULL;
	}
	return p;
}
