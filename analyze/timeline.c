// SPDX-License-Identifier: MIT
/* --timeline: collect the intervals of a run, match them to its threads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "timeline.h"

_Static_assert(sizeof(struct tsa_tl_event) == 40, "struct tsa_tl_event changed size");
_Static_assert(sizeof(struct tsa_tl_name) == 56, "struct tsa_tl_name changed size");

static const char *const kind_names[TSA_TL_NR] = {
    [TSA_TL_ONCPU] = "on_cpu",
    [TSA_TL_ONCPU_INFERRED] = "on_cpu_inferred",
    [TSA_TL_RUNQ_WAKEUP] = "runqueue_wakeup",
    [TSA_TL_RUNQ_PREEMPTED] = "runqueue_preempted",
    [TSA_TL_RUNQ_NEW] = "runqueue_new",
    [TSA_TL_SLEEP] = "sleeping",
    [TSA_TL_DISK] = "uninterruptible",
    [TSA_TL_STOPPED] = "stopped",
};

const char *timeline_kind_name(unsigned kind)
{
	return kind < TSA_TL_NR ? kind_names[kind] : "unknown";
}

int timeline_kind_state(unsigned kind)
{
	switch (kind) {
	case TSA_TL_ONCPU:
	case TSA_TL_ONCPU_INFERRED:
		return TSA_ST_ONCPU;
	case TSA_TL_RUNQ_WAKEUP:
	case TSA_TL_RUNQ_PREEMPTED:
	case TSA_TL_RUNQ_NEW:
		return TSA_ST_RUNQ;
	case TSA_TL_SLEEP:
		return TSA_ST_SLEEP;
	case TSA_TL_DISK:
		return TSA_ST_DISK;
	case TSA_TL_STOPPED:
		return TSA_ST_STOPPED;
	}
	return -1;
}

/* As received: identity, absolute times. */
struct tl_raw {
	uint64_t task_start_ns;
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t tid;
	uint16_t kind;
	int16_t cpu;
};

struct tl_raw_name {
	uint64_t task_start_ns;
	uint64_t at_ns;
	uint32_t tid;
	uint32_t execs;
	char comm[TSA_COMM_LEN];
};

struct timeline_builder {
	struct tl_raw *ev;
	size_t n, cap;
	struct tl_raw_name *names;
	size_t nnames, capn;
	uint64_t max, buffer_bytes;
	uint64_t beyond, beyond_ns;
	uint64_t trunc_end; /* earliest end of an interval not kept (UINT64_MAX: none) */
};

struct timeline_builder *timeline_builder__new(uint64_t max_intervals, uint64_t buffer_bytes)
{
	struct timeline_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->max = max_intervals;
	b->buffer_bytes = buffer_bytes;
	b->trunc_end = UINT64_MAX;
	return b;
}

void timeline_builder__reset(struct timeline_builder *b)
{
	b->n = 0;
	b->nnames = 0;
	b->beyond = b->beyond_ns = 0;
	b->trunc_end = UINT64_MAX;
}

void timeline_builder__free(struct timeline_builder *b)
{
	if (!b)
		return;
	free(b->ev);
	free(b->names);
	free(b);
}

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? *cap + *cap / 2 : 1024;
	p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

int timeline_builder__add(struct timeline_builder *b, const void *data, size_t size)
{
	const struct tsa_tl_event *e = data;

	if (size < sizeof(*e))
		return 0;
	if (e->kind == TSA_TL_NAME) {
		const struct tsa_tl_name *nm = data;
		struct tl_raw_name *r;

		if (size < sizeof(*nm))
			return 0;
		/* Names are few (one per thread and exec): all kept, bound or not. */
		if (grow((void **)&b->names, &b->capn, b->nnames, sizeof(*b->names)))
			return -ENOMEM;
		r = &b->names[b->nnames++];
		r->task_start_ns = e->task_start_ns;
		r->at_ns = e->start_ns;
		r->tid = e->tid;
		r->execs = (uint32_t)e->end_ns;
		memcpy(r->comm, nm->comm, sizeof(r->comm));
		r->comm[sizeof(r->comm) - 1] = '\0';
		return 0;
	}
	if (e->kind >= TSA_TL_NR || e->end_ns < e->start_ns)
		return 0;
	if (b->n >= b->max) {
		b->beyond++;
		b->beyond_ns += e->end_ns - e->start_ns;
		if (e->end_ns < b->trunc_end)
			b->trunc_end = e->end_ns;
		return 0;
	}
	if (grow((void **)&b->ev, &b->cap, b->n, sizeof(*b->ev)))
		return -ENOMEM;
	b->ev[b->n++] = (struct tl_raw){
	    .task_start_ns = e->task_start_ns,
	    .start_ns = e->start_ns,
	    .end_ns = e->end_ns,
	    .tid = e->tid,
	    .kind = (uint16_t)e->kind,
	    .cpu = e->cpu == (uint32_t)-1 || e->cpu > INT16_MAX ? TIMELINE_NO_CPU : (int16_t)e->cpu,
	};
	return 0;
}

/* Thread identity as the kernel sent it: the tid tracking began with, and its own start. */
static int cmp_key(uint32_t ta, uint64_t sa, uint32_t tb, uint64_t sb)
{
	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	return 0;
}

static int cmp_raw(const void *pa, const void *pb)
{
	const struct tl_raw *a = pa, *b = pb;
	int c = cmp_key(a->tid, a->task_start_ns, b->tid, b->task_start_ns);

	if (c)
		return c;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->end_ns < b->end_ns ? -1 : a->end_ns > b->end_ns;
}

static int cmp_raw_name(const void *pa, const void *pb)
{
	const struct tl_raw_name *a = pa, *b = pb;
	int c = cmp_key(a->tid, a->task_start_ns, b->tid, b->task_start_ns);

	if (c)
		return c;
	if (a->at_ns != b->at_ns)
		return a->at_ns < b->at_ns ? -1 : 1;
	return a->execs < b->execs ? -1 : a->execs > b->execs;
}

static int cmp_thread(const void *pa, const void *pb)
{
	const struct tl_thread *a = pa, *b = pb;

	return cmp_key(a->tid, a->task_start_ns, b->tid, b->task_start_ns);
}

static uint32_t ident_tid(const struct thread_acct *th)
{
	return th->tid_before_exec ? th->tid_before_exec : th->tid;
}

const struct tl_thread *timeline_thread(const struct run_timeline *t, const struct thread_acct *th)
{
	struct tl_thread key = {.tid = ident_tid(th), .task_start_ns = th->task_start_ns};

	if (!t || th->source != ACCT_SRC_EBPF)
		return NULL;
	return bsearch(&key, t->threads, t->nthreads, sizeof(key), cmp_thread);
}

int timeline_attach(struct run *r, struct timeline_builder *b, uint64_t origin, uint64_t sent,
		    uint64_t lost_events)
{
	struct run_timeline *t = calloc(1, sizeof(*t));
	size_t i, k;
	int ret = -ENOMEM;

	if (!t)
		goto out;
	/* One group per eBPF thread of the run, sorted by identity. */
	t->threads = calloc(r->nthreads ? r->nthreads : 1, sizeof(*t->threads));
	t->iv = calloc(b->n ? b->n : 1, sizeof(*t->iv));
	t->names = calloc(b->nnames ? b->nnames : 1, sizeof(*t->names));
	if (!t->threads || !t->iv || !t->names)
		goto out;
	for (i = 0; i < r->nthreads; i++) {
		const struct thread_acct *th = &r->threads[i];

		if (th->source != ACCT_SRC_EBPF)
			continue;
		t->threads[t->nthreads++] = (struct tl_thread){
		    .tid = ident_tid(th),
		    .task_start_ns = th->task_start_ns,
		};
		t->lost_ns += th->tl_lost_ns;
	}
	/* (qsort's array may not be NULL, even for no element.) */
	if (t->nthreads)
		qsort(t->threads, t->nthreads, sizeof(*t->threads), cmp_thread);
	if (b->n)
		qsort(b->ev, b->n, sizeof(*b->ev), cmp_raw);
	if (b->nnames)
		qsort(b->names, b->nnames, sizeof(*b->names), cmp_raw_name);
	/* Both sorted by identity: walk them together. */
	for (i = 0, k = 0; i < b->n; i++) {
		const struct tl_raw *e = &b->ev[i];
		int c = 1;

		while (k < t->nthreads &&
		       (c = cmp_key(t->threads[k].tid, t->threads[k].task_start_ns, e->tid,
				    e->task_start_ns)) < 0)
			k++;
		if (k == t->nthreads || c) {
			t->unmatched++;
			continue;
		}
		if (!t->threads[k].n)
			t->threads[k].first = t->n;
		t->threads[k].n++;
		t->iv[t->n++] = (struct tl_interval){
		    .start_ns = (int64_t)(e->start_ns - origin),
		    .dur_ns = e->end_ns - e->start_ns,
		    .kind = e->kind,
		    .cpu = e->cpu,
		};
	}
	for (i = 0, k = 0; i < b->nnames; i++) {
		const struct tl_raw_name *e = &b->names[i];
		struct tl_name *nm;
		int c = 1;

		while (k < t->nthreads &&
		       (c = cmp_key(t->threads[k].tid, t->threads[k].task_start_ns, e->tid,
				    e->task_start_ns)) < 0)
			k++;
		if (k == t->nthreads || c)
			continue;
		if (!t->threads[k].nnames)
			t->threads[k].first_name = t->nnames;
		t->threads[k].nnames++;
		nm = &t->names[t->nnames++];
		nm->at_ns = (int64_t)(e->at_ns - origin);
		nm->execs = e->execs;
		memcpy(nm->comm, e->comm, sizeof(nm->comm));
	}
	t->max_intervals = b->max;
	t->buffer_bytes = b->buffer_bytes;
	t->sent = sent;
	t->lost_events = lost_events;
	t->beyond_bound = b->beyond;
	t->beyond_bound_ns = b->beyond_ns;
	t->truncated_at_ns = b->beyond ? (int64_t)(b->trunc_end - origin) : 0;
	timeline__free(r->timeline);
	r->timeline = t;
	t = NULL;
	ret = 0;
out:
	timeline__free(t);
	timeline_builder__reset(b);
	return ret;
}

void timeline__free(struct run_timeline *t)
{
	if (!t)
		return;
	free(t->threads);
	free(t->iv);
	free(t->names);
	free(t);
}
