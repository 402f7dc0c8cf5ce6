// SPDX-License-Identifier: MIT
/* Interval streaming: what each thread did since the last interval (stream.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "stream.h"

/* What was reported so far of one thread, under its identity. */
struct stream_prev {
	uint64_t task_start_ns;
	uint32_t tid0; /* its first tid: a thread that execs takes its leader's */
	bool used;
	bool ended;    /* an account of its end was reported */
	uint64_t read; /* the read (stream.reads) that last gave it */
	int64_t lifetime_ns;
	int64_t state_ns[TSA_ST_NR];
	int64_t residual_ns;
	int64_t slices, voluntary, involuntary, wakeups;
};

struct stream {
	struct stream_prev *tab; /* open addressing, cap a power of two */
	size_t cap, used;
	uint64_t index;
	uint64_t reads;
};

struct stream *stream__new(void)
{
	return calloc(1, sizeof(struct stream));
}

void stream__free(struct stream *s)
{
	if (!s)
		return;
	free(s->tab);
	free(s);
}

void stream__reset(struct stream *s)
{
	if (s->tab)
		memset(s->tab, 0, s->cap * sizeof(*s->tab));
	s->used = 0;
	s->index = 0;
	s->reads = 0;
}

static size_t slot_of(uint64_t start, uint32_t tid, size_t cap)
{
	uint64_t h = (start ^ ((uint64_t)tid << 32 | tid)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 17) & (cap - 1);
}

static struct stream_prev *find(struct stream_prev *tab, size_t cap, uint64_t start, uint32_t tid)
{
	size_t i = slot_of(start, tid, cap);

	while (tab[i].used && (tab[i].task_start_ns != start || tab[i].tid0 != tid))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int grow(struct stream *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	struct stream_prev *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->tab[i].used)
			*find(tab, cap, s->tab[i].task_start_ns, s->tab[i].tid0) = s->tab[i];
	free(s->tab);
	s->tab = tab;
	s->cap = cap;
	return 0;
}

/* The entry of a thread, created empty (nothing reported) when new; NULL when out of memory. */
static struct stream_prev *entry(struct stream *s, uint64_t start, uint32_t tid)
{
	struct stream_prev *e;

	if ((s->used + 1) * 2 > s->cap && grow(s))
		return NULL;
	e = find(s->tab, s->cap, start, tid);
	if (!e->used) {
		memset(e, 0, sizeof(*e));
		e->used = true;
		e->task_start_ns = start;
		e->tid0 = tid;
		s->used++;
	}
	return e;
}

static void add_figures(struct stream_figures *sum, const struct stream_figures *f)
{
	sum->lifetime_ns += f->lifetime_ns;
	for (int i = 0; i < TSA_ST_NR; i++)
		sum->state_ns[i] += f->state_ns[i];
	sum->residual_ns += f->residual_ns;
	sum->slices += f->slices;
	sum->voluntary += f->voluntary;
	sum->involuntary += f->involuntary;
	sum->wakeups += f->wakeups;
	sum->unmeasured |= f->unmeasured;
}

/* f = the account a minus what e says was reported; e becomes a. Returns whether f is all 0. */
static bool delta(struct stream_prev *e, const struct thread_acct *a, struct stream_figures *f)
{
	struct stream_prev now = *e;
	bool zero;

	now.lifetime_ns = (int64_t)a->lifetime_ns;
	for (int i = 0; i < TSA_ST_NR; i++)
		now.state_ns[i] = (int64_t)a->state_ns[i];
	now.residual_ns = (int64_t)a->residual_ns;
	now.slices = (int64_t)a->slices;
	now.voluntary = (int64_t)a->voluntary;
	now.involuntary = (int64_t)a->involuntary;
	now.wakeups = (int64_t)a->wakeups;

	memset(f, 0, sizeof(*f));
	f->lifetime_ns = now.lifetime_ns - e->lifetime_ns;
	zero = !f->lifetime_ns;
	for (int i = 0; i < TSA_ST_NR; i++) {
		f->state_ns[i] = now.state_ns[i] - e->state_ns[i];
		zero &= !f->state_ns[i];
	}
	f->residual_ns = now.residual_ns - e->residual_ns;
	f->slices = now.slices - e->slices;
	f->voluntary = now.voluntary - e->voluntary;
	f->involuntary = now.involuntary - e->involuntary;
	f->wakeups = now.wakeups - e->wakeups;
	f->unmeasured = a->unmeasured;
	zero &= !f->residual_ns && !f->slices && !f->voluntary && !f->involuntary && !f->wakeups;
	*e = now;
	return zero;
}

static int cmp_thread(const void *pa, const void *pb)
{
	const struct stream_thread *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int stream__interval(struct stream *s, const struct thread_acct *acct, size_t n,
		     struct stream_interval *iv)
{
	struct stream_thread *th = calloc(n ? n : 1, sizeof(*th));
	struct stream_proc *pr = NULL;
	size_t m = 0, np = 0;

	iv->threads = NULL;
	iv->procs = NULL;
	iv->nthreads = iv->nprocs = 0;
	memset(&iv->totals, 0, sizeof(iv->totals));
	/* A line without threads still says what its source cannot measure. */
	iv->totals.unmeasured = iv->source_unmeasured;
	iv->threads_born = iv->threads_ended = 0;
	if (!th)
		return -ENOMEM;
	s->reads++;
	for (size_t i = 0; i < n; i++) {
		const struct thread_acct *a = &acct[i];
		uint32_t tid0 = a->tid_before_exec ? a->tid_before_exec : a->tid;
		struct stream_prev *e = entry(s, a->task_start_ns, tid0);
		struct stream_thread *t = &th[m];
		bool was_ended, zero;

		if (!e) {
			free(th);
			return -ENOMEM;
		}
		if (e->read == s->reads)
			continue; /* given twice in one read: the first account counts */
		e->read = s->reads;
		was_ended = e->ended;
		zero = delta(e, a, &t->f);
		e->ended = !(a->flags & TSA_F_SURVIVOR);
		if (was_ended && zero)
			continue; /* ended in an earlier interval: nothing new */
		t->tid = a->tid;
		t->pid = a->pid;
		memcpy(t->comm, a->comm, sizeof(t->comm));
		t->comm[sizeof(t->comm) - 1] = '\0';
		t->alive = (a->flags & TSA_F_SURVIVOR) != 0;
		t->start_ns = a->start_ns;
		t->end_ns = a->end_ns;
		t->born = a->start_ns >= iv->start_ns;
		iv->threads_born += t->born;
		iv->threads_ended += !t->alive;
		m++;
	}
	qsort(th, m, sizeof(*th), cmp_thread);
	pr = calloc(m ? m : 1, sizeof(*pr));
	if (!pr) {
		free(th);
		return -ENOMEM;
	}
	/* Ordered by pid: a process's threads are contiguous. */
	for (size_t i = 0; i < m; i++) {
		struct stream_proc *p;

		if (!np || pr[np - 1].pid != th[i].pid) {
			p = &pr[np++];
			p->pid = th[i].pid;
			memcpy(p->comm, th[i].comm, sizeof(p->comm));
		}
		p = &pr[np - 1];
		if (th[i].tid == th[i].pid)
			memcpy(p->comm, th[i].comm, sizeof(p->comm));
		p->threads++;
		add_figures(&p->f, &th[i].f);
		add_figures(&iv->totals, &th[i].f);
	}
	iv->index = ++s->index;
	iv->threads = th;
	iv->nthreads = m;
	iv->procs = pr;
	iv->nprocs = np;
	return 0;
}

void stream_interval__free(struct stream_interval *iv)
{
	free(iv->threads);
	free(iv->procs);
	iv->threads = NULL;
	iv->procs = NULL;
	iv->nthreads = iv->nprocs = 0;
}
