// SPDX-License-Identifier: MIT
/* --timeline: collect the intervals of a run, match them to its threads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "symbolize.h"
#include "timeline.h"

_Static_assert(sizeof(struct tsa_tl_event) == 40, "struct tsa_tl_event changed size");
_Static_assert(sizeof(struct tsa_tl_name) == 56, "struct tsa_tl_name changed size");
_Static_assert(sizeof(struct tsa_tl_wake) == 72, "struct tsa_tl_wake changed size");
_Static_assert(sizeof(struct tsa_tl_wake_irq) == 80 + 8 * TSA_WAKE_FRAMES,
	       "struct tsa_tl_wake_irq changed size");

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

struct tl_raw_wake {
	uint64_t task_start_ns; /* the wakee */
	uint32_t tid;
	struct tl_wake w; /* at_ns absolute until attached */
	uint32_t nframes;
	uint64_t ip[TSA_WAKE_FRAMES];
};

struct timeline_builder {
	struct tl_raw *ev;
	size_t n, cap;
	struct tl_raw_name *names;
	size_t nnames, capn;
	struct tl_raw_wake *wakes;
	size_t nwakes, capw;
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
	b->nwakes = 0;
	b->beyond = b->beyond_ns = 0;
	b->trunc_end = UINT64_MAX;
}

void timeline_builder__free(struct timeline_builder *b)
{
	if (!b)
		return;
	free(b->ev);
	free(b->names);
	free(b->wakes);
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
	if (e->kind == TSA_TL_WAKE) {
		const struct tsa_tl_wake *wk = data;
		struct tl_raw_wake *r;

		if (size < sizeof(*wk))
			return 0;
		/* Wakeups are kept like names: the critical path needs every one. */
		if (grow((void **)&b->wakes, &b->capw, b->nwakes, sizeof(*b->wakes)))
			return -ENOMEM;
		r = &b->wakes[b->nwakes++];
		memset(r, 0, sizeof(*r));
		r->task_start_ns = e->task_start_ns;
		r->tid = e->tid;
		r->w.at_ns = (int64_t)e->start_ns;
		r->w.waker_task_start_ns = e->end_ns;
		r->w.waker_tid = wk->waker_tid;
		r->w.waker_pid = wk->waker_pid;
		r->w.ctx = wk->ctx < TSA_WK_NR ? (uint8_t)wk->ctx : TSA_WK_PROCESS;
		r->w.flags = (uint8_t)wk->flags;
		r->w.cpu = e->cpu > INT16_MAX ? TIMELINE_NO_CPU : (int16_t)e->cpu;
		memcpy(r->w.comm, wk->comm, sizeof(r->w.comm));
		r->w.comm[sizeof(r->w.comm) - 1] = '\0';
		if ((wk->flags & TSA_WKF_FRAMES) && size >= sizeof(struct tsa_tl_wake_irq)) {
			const struct tsa_tl_wake_irq *wi = data;

			r->nframes = wi->nr < TSA_WAKE_FRAMES ? wi->nr : TSA_WAKE_FRAMES;
			memcpy(r->ip, wi->ip, r->nframes * sizeof(r->ip[0]));
		}
		return 0;
	}
	if (e->kind >= TSA_TL_NR || e->end_ns < e->start_ns)
		return 0;
	/* A sleep's interval names the tracked thread that woke it, if one did. */
	if (timeline_kind_state(e->kind) >= TSA_ST_SLEEP && e->cpu != (uint32_t)-1 && e->cpu) {
		struct tl_raw_wake *r;

		if (grow((void **)&b->wakes, &b->capw, b->nwakes, sizeof(*b->wakes)))
			return -ENOMEM;
		r = &b->wakes[b->nwakes++];
		memset(r, 0, sizeof(*r));
		r->task_start_ns = e->task_start_ns;
		r->tid = e->tid;
		r->w.at_ns = (int64_t)e->end_ns;
		r->w.waker_tid = e->cpu; /* its identity is found when attached */
		r->w.ctx = TSA_WK_TRACKED;
		r->w.cpu = TIMELINE_NO_CPU;
	}
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
	    .cpu = e->cpu == (uint32_t)-1 || e->cpu > INT16_MAX ||
			   timeline_kind_state(e->kind) != TSA_ST_ONCPU
		       ? TIMELINE_NO_CPU
		       : (int16_t)e->cpu,
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

static int cmp_raw_wake(const void *pa, const void *pb)
{
	const struct tl_raw_wake *a = pa, *b = pb;
	int c = cmp_key(a->tid, a->task_start_ns, b->tid, b->task_start_ns);

	if (c)
		return c;
	return a->w.at_ns < b->w.at_ns ? -1 : a->w.at_ns > b->w.at_ns;
}

bool timeline_builder__has_irq_wakes(const struct timeline_builder *b)
{
	for (size_t i = 0; i < b->nwakes; i++)
		if (b->wakes[i].nframes)
			return true;
	return false;
}

/* Does frame f (innermost-first order, "name_[k]" or "name") begin with prefix? */
static bool frame_is(const char *f, const char *prefix)
{
	return !strncmp(f, prefix, strlen(prefix));
}

const char *timeline_irq_name(const char *const *frames, size_t n, bool iowait)
{
	/* The innermost frame that says what woke: the handler is nearer than the entry code. */
	static const struct {
		const char *prefix, *name;
	} known[] = {
	    {"hrtimer_wakeup", "timer"},
	    {"process_timeout", "timer"},
	    {"call_timer_fn", "timer"},
	    {"__hrtimer_run_queues", "timer"},
	    {"blk_mq_end_request", "block I/O completion"},
	    {"blk_update_request", "block I/O completion"},
	    {"blk_mq_complete_request", "block I/O completion"},
	    {"bio_endio", "block I/O completion"},
	    {"virtblk_done", "block I/O completion"},
	    {"nvme_irq", "block I/O completion"},
	    {"scsi_io_completion", "block I/O completion"},
	    {"iomap_dio_bio_end_io", "block I/O completion"},
	    {"net_rx_action", "network"},
	    {"tcp_", "network"},
	    {"sock_def_readable", "network"},
	    {"rcu_core", "RCU"},
	};

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (frames[i] && frame_is(frames[i], known[k].prefix))
				return known[k].name;
	if (iowait)
		return "block I/O completion";
	for (size_t i = 0; i < n; i++)
		if (frames[i] &&
		    (frame_is(frames[i], "handle_softirqs") ||
		     frame_is(frames[i], "__do_softirq") || frame_is(frames[i], "do_softirq")))
			return "softirq";
	return "interrupt";
}

/* Name each interrupt's wakeup by its frames. */
static void name_irq_wakes(struct timeline_builder *b, struct symbolizer *sym)
{
	char buf[TSA_WAKE_FRAMES][96];
	const char *frames[TSA_WAKE_FRAMES];

	for (size_t i = 0; i < b->nwakes; i++) {
		struct tl_raw_wake *r = &b->wakes[i];

		if (!r->nframes)
			continue;
		for (uint32_t k = 0; k < r->nframes; k++) {
			symbolizer__kernel_frame(sym, r->ip[k], k > 0, buf[k], sizeof(buf[k]));
			frames[k] = buf[k];
		}
		snprintf(r->w.irq, sizeof(r->w.irq), "%s",
			 timeline_irq_name(frames, r->nframes, r->w.flags & TSA_WKF_IOWAIT));
	}
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

/*
 * A tracked waker named by its tid alone (the sleep's interval carries only
 * that): the thread of the run with that tid that was alive at the wakeup.
 */
static void resolve_wakers(struct run_timeline *t)
{
	for (size_t i = 0; i < t->nwakes; i++) {
		struct tl_wake *w = &t->wakes[i];
		struct tl_thread key = {.tid = w->waker_tid}, *g;
		size_t lo = 0, hi = t->nthreads;

		if (w->ctx != TSA_WK_TRACKED || w->waker_task_start_ns)
			continue;
		/* The first of that tid (sorted by tid, then start), then the one alive then. */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (t->threads[mid].tid < key.tid)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (g = &t->threads[lo]; g < t->threads + t->nthreads && g->tid == key.tid; g++) {
			if (!g->n || t->iv[g->first].start_ns > w->at_ns)
				continue;
			w->waker_task_start_ns = g->task_start_ns;
			if (t->iv[g->first + g->n - 1].start_ns +
				(int64_t)t->iv[g->first + g->n - 1].dur_ns >=
			    w->at_ns)
				break;
		}
	}
}

int timeline_attach(struct run *r, struct timeline_builder *b, uint64_t origin, uint64_t sent,
		    uint64_t lost_events, struct symbolizer *sym)
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
	t->wakes = calloc(b->nwakes ? b->nwakes : 1, sizeof(*t->wakes));
	if (!t->threads || !t->iv || !t->names || !t->wakes)
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
	if (b->nwakes)
		qsort(b->wakes, b->nwakes, sizeof(*b->wakes), cmp_raw_wake);
	if (sym)
		name_irq_wakes(b, sym);
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
	for (i = 0, k = 0; i < b->nwakes; i++) {
		const struct tl_raw_wake *e = &b->wakes[i];
		struct tl_wake *w;
		int c = 1;

		while (k < t->nthreads &&
		       (c = cmp_key(t->threads[k].tid, t->threads[k].task_start_ns, e->tid,
				    e->task_start_ns)) < 0)
			k++;
		if (k == t->nthreads || c)
			continue;
		if (!t->threads[k].nwakes)
			t->threads[k].first_wake = t->nwakes;
		t->threads[k].nwakes++;
		w = &t->wakes[t->nwakes++];
		*w = e->w;
		w->at_ns = (int64_t)((uint64_t)e->w.at_ns - origin);
	}
	resolve_wakers(t);
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
	free(t->wakes);
	free(t);
}
