// SPDX-License-Identifier: MIT
/* The critical path: a walk back from the command's end along the timeline (critpath.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "critpath.h"
#include "hash.h"
#include "hashmap.h"
#include "textsafe.h"
#include "vec.h"
#include "flame.h"
#include "run.h"
#include "table.h"
#include "timeline.h"

static const char *const kind_names[CP_NKINDS] = {
    [CP_ONCPU] = "on_cpu",    [CP_RUNQ] = "runqueue",	[CP_BLOCKED] = "blocked",
    [CP_OUTSIDE] = "outside", [CP_UNKNOWN] = "unknown",
};

/* As the terminal and the flame graph say it. */
static const char *const kind_labels[CP_NKINDS] = {
    [CP_ONCPU] = "on-CPU",   [CP_RUNQ] = "waiting for a CPU", [CP_BLOCKED] = "blocked",
    [CP_OUTSIDE] = "tsarun", [CP_UNKNOWN] = "unknown",
};

const char *critpath_kind_name(unsigned kind)
{
	return kind < CP_NKINDS ? kind_names[kind] : "unknown";
}

int critpath_kind_from_name(const char *name)
{
	for (int k = 0; k < CP_NKINDS; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

/*
 * A wakeup's time and a sleep's end come from two clocks (the waker's
 * bpf_ktime_get_ns() and the wakee's queue stamp) that can disagree by a
 * few microseconds: a waker found asleep this close to its wakeup had only
 * just left the CPU.
 */
#define SKEW_NS 50000

/* One thread of the walk: its account and its part of the timeline. */
struct cp_thread {
	const struct thread_acct *th;
	const struct tl_thread *g;
};

/* An on-CPU interval of a tracked thread, by CPU and time: who held a CPU when. */
struct cp_slice {
	int64_t start_ns, end_ns;
	int16_t cpu;
	uint32_t thread; /* index into walk.th */
};

struct walk {
	const struct run *r;
	const struct run_timeline *tl;
	struct cp_slice *slices; /* by CPU, then start */
	size_t nslices;
	struct cp_thread *th; /* in the timeline's thread order (by identity) */
	size_t nth;
	struct cp_segment *seg; /* backwards, until reversed */
	size_t nseg, cap;
	bool complete;
	uint64_t jumps;
	uint32_t pending_tid; /* the next segment emitted ends in its wakeup (or creation) of it */
};

static struct cp_thread *find_thread(struct walk *w, uint32_t tid, uint64_t task_start_ns)
{
	size_t lo = 0, hi = w->nth;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct tl_thread *g = w->th[mid].g;

		if (g->tid < tid || (g->tid == tid && g->task_start_ns < task_start_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < w->nth && w->th[lo].g->tid == tid && w->th[lo].g->task_start_ns == task_start_ns)
		return &w->th[lo];
	return NULL;
}

static int cmp_cp_thread(const void *pa, const void *pb)
{
	const struct tl_thread *a = ((const struct cp_thread *)pa)->g,
			       *b = ((const struct cp_thread *)pb)->g;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->task_start_ns < b->task_start_ns ? -1 : a->task_start_ns > b->task_start_ns;
}

/*
 * The thread's name at time at: the timeline's names change at exec; after
 * its last exec, the name it ended with (a rename by prctl is seen there).
 */
static const char *name_at(const struct walk *w, const struct cp_thread *t, int64_t at)
{
	const struct tl_name *nm;
	size_t k = 0;

	for (size_t i = 1; i < t->g->nnames; i++)
		if (w->tl->names[t->g->first_name + i].at_ns <= at)
			k = i;
	nm = &w->tl->names[t->g->first_name + k];
	/* Before its first exec the command was tsarun's spawner: not a name of its own. */
	if (k + 1 < t->g->nnames && !nm->execs && !strcmp(nm->comm, RUN_SPAWNER_COMM))
		nm++, k++;
	if (k + 1 >= t->g->nnames)
		return run_shown_comm(t->th->comm, t->th->execs);
	return nm->comm;
}

/* Prepend [start, end) to the path (emitted backwards). */
static int emit(struct walk *w, const struct cp_thread *t, int kind, int state, int64_t start,
		int64_t end, const char *what)
{
	struct cp_segment *s;

	if (end <= start)
		return 0;
	if (kind == CP_UNKNOWN)
		w->complete = false;
	/* The same thread, kind and waker as the segment after: one segment. */
	if (w->nseg) {
		s = &w->seg[w->nseg - 1];
		if (!w->pending_tid && s->kind == kind && s->state == state && s->start_ns == end &&
		    s->tid == (t ? t->th->tid : 0) &&
		    (!t || !strcmp(s->comm, name_at(w, t, start))) &&
		    !strncmp(s->what, what ? what : "", sizeof(s->what) - 1)) {
			s->dur_ns += (uint64_t)(end - start);
			s->start_ns = start;
			return 0;
		}
	}
	s = vec_grow(w->seg, &w->cap, w->nseg + 1, sizeof(*s), 256);
	if (!s)
		return -ENOMEM;
	w->seg = s;
	s = &w->seg[w->nseg++];
	memset(s, 0, sizeof(*s));
	s->start_ns = start;
	s->dur_ns = (uint64_t)(end - start);
	s->kind = (uint8_t)kind;
	s->state = (int8_t)state;
	if (t) {
		s->tid = t->th->tid;
		s->pid = t->th->pid;
		snprintf(s->comm, sizeof(s->comm), "%s", name_at(w, t, start));
	}
	snprintf(s->what, sizeof(s->what), "%s", what ? what : "");
	if (w->pending_tid) {
		s->woke = true;
		s->next_tid = w->pending_tid;
		w->pending_tid = 0;
	}
	return 0;
}

/* The last interval of t that starts before at (-1: none). */
static ssize_t interval_before(const struct walk *w, const struct cp_thread *t, int64_t at)
{
	size_t lo = 0, hi = t->g->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->tl->iv[t->g->first + mid].start_ns < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}

/*
 * The wakeup that ended t's sleep iv (its k-th interval): the last one
 * recorded from the sleep's start to the thread's switch-in after it (the
 * end of the runqueue wait that follows), of any creation edge but one.
 */
static const struct tl_wake *wake_of(const struct walk *w, const struct cp_thread *t, size_t k)
{
	const struct tl_interval *iv = &w->tl->iv[t->g->first + k];
	int64_t lo = iv->start_ns, hi = iv->start_ns + (int64_t)iv->dur_ns + SKEW_NS;
	const struct tl_wake *best = NULL;

	if (k + 1 < t->g->n) {
		const struct tl_interval *nx = &w->tl->iv[t->g->first + k + 1];

		if (timeline_kind_state(nx->kind) == TSA_ST_RUNQ)
			hi = nx->start_ns + (int64_t)nx->dur_ns;
	}
	size_t first = 0, n = t->g->nwakes;

	/* The first wakeup at or after lo - SKEW_NS (in time order): the walk asks for every sleep. */
	while (first < n) {
		size_t mid = (first + n) / 2;

		if (w->tl->wakes[t->g->first_wake + mid].at_ns < lo - SKEW_NS)
			first = mid + 1;
		else
			n = mid;
	}
	for (size_t i = first; i < t->g->nwakes; i++) {
		const struct tl_wake *wk = &w->tl->wakes[t->g->first_wake + i];

		if (wk->at_ns > hi)
			break;
		if (!(wk->flags & TSA_WKF_NEW))
			best = wk;
	}
	return best;
}

static const struct tl_wake *creation_of(const struct walk *w, const struct cp_thread *t)
{
	for (size_t i = 0; i < t->g->nwakes; i++) {
		const struct tl_wake *wk = &w->tl->wakes[t->g->first_wake + i];

		if (wk->flags & TSA_WKF_NEW)
			return wk;
	}
	return NULL;
}

/* What an outside waker is called on the path. */
static void waker_name(const struct tl_wake *wk, char *buf, size_t len)
{
	bool io = wk->flags & TSA_WKF_IOWAIT;

	switch (wk->ctx) {
	case TSA_WK_IRQ:
	case TSA_WK_IDLE:
		snprintf(buf, len, "%s",
			 wk->irq[0] ? wk->irq
			 : io	    ? "block I/O completion"
				    : "interrupt");
		break;
	case TSA_WK_KTHREAD:
		snprintf(buf, len, "%s%s%s", io ? "block I/O completion (" : "", wk->comm,
			 io ? ")" : "");
		break;
	case TSA_WK_TRACKED: /* a thread of the tree the run has no timeline of */
	case TSA_WK_PROCESS:
	default:
		snprintf(buf, len, "process %" PRIu32 " (%s)", wk->waker_pid, wk->comm);
		break;
	}
}

static int blocked_state(unsigned kind)
{
	int st = timeline_kind_state(kind);

	return st == TSA_ST_SLEEP || st == TSA_ST_DISK || st == TSA_ST_STOPPED ? st : -1;
}

static int cmp_slice(const void *pa, const void *pb)
{
	const struct cp_slice *a = pa, *b = pb;

	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

static int build_slices(struct walk *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nth; i++)
		for (size_t k = 0; k < w->th[i].g->n; k++)
			n += w->tl->iv[w->th[i].g->first + k].cpu >= 0;
	w->slices = malloc((n ? n : 1) * sizeof(*w->slices));
	if (!w->slices)
		return -ENOMEM;
	for (size_t i = 0; i < w->nth; i++)
		for (size_t k = 0; k < w->th[i].g->n; k++) {
			const struct tl_interval *v = &w->tl->iv[w->th[i].g->first + k];

			if (v->cpu < 0)
				continue;
			w->slices[w->nslices++] = (struct cp_slice){
			    .start_ns = v->start_ns,
			    .end_ns = v->start_ns + (int64_t)v->dur_ns,
			    .cpu = v->cpu,
			    .thread = (uint32_t)i,
			};
		}
	if (w->nslices)
		qsort(w->slices, w->nslices, sizeof(*w->slices), cmp_slice);
	return 0;
}

/*
 * Who held the CPU a thread waited for in [s, t): the CPU it then ran on
 * (its next interval's), and the tracked thread that ran there longest
 * meanwhile, if that was most of the wait ("" when not known: the CPU's
 * time went to tasks outside the tree, or the wait ended off the timeline).
 */
static void cpu_holder(const struct walk *w, const struct cp_thread *cur, size_t k, int64_t s,
		       int64_t t, char *buf, size_t len)
{
	const struct tl_interval *nx;
	size_t lo = 0, hi = w->nslices;
	struct cp_held {
		uint32_t thread;
		int64_t ns;
	} held[8];
	size_t nheld = 0;
	uint32_t best = UINT32_MAX;
	int64_t most = 0;

	if (k + 1 >= cur->g->n || t - s <= 0)
		return;
	nx = &w->tl->iv[cur->g->first + k + 1];
	if (nx->cpu < 0)
		return;
	/* The first slice on that CPU that ends after s (slices on a CPU do not overlap). */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct cp_slice *c = &w->slices[mid];

		if (c->cpu < nx->cpu || (c->cpu == nx->cpu && c->end_ns <= s))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The one with the most time there wins; a wait is behind a few threads at most. */
	for (size_t i = lo; i < w->nslices && w->slices[i].cpu == nx->cpu; i++) {
		const struct cp_slice *c = &w->slices[i];
		int64_t a = c->start_ns > s ? c->start_ns : s, b = c->end_ns < t ? c->end_ns : t;
		size_t j;

		if (c->start_ns >= t)
			break;
		if (b <= a || &w->th[c->thread] == cur)
			continue;
		for (j = 0; j < nheld && held[j].thread != c->thread; j++)
			;
		if (j == nheld) {
			if (nheld == sizeof(held) / sizeof(held[0]))
				continue;
			held[nheld++] = (struct cp_held){.thread = c->thread};
		}
		held[j].ns += b - a;
		if (held[j].ns > most) {
			most = held[j].ns;
			best = c->thread;
		}
	}
	if (best != UINT32_MAX && 2 * most >= t - s)
		snprintf(buf, len, "behind %s (%" PRIu32 ")", name_at(w, &w->th[best], s),
			 w->th[best].th->tid);
}

static int walk(struct walk *w, struct cp_thread *cur, int64_t t)
{
	const struct run_timeline *tl = w->tl;
	size_t guard = 4 * (tl->n + tl->nwakes) + 64;
	bool jumped = false;
	int ret = 0;

	while (!ret && t > 0 && guard--) {
		ssize_t k = interval_before(w, cur, t);
		const struct tl_interval *iv;
		int64_t s, e;
		int st;

		if (k < 0) {
			/* Its beginning: on to its creator, at the creation. */
			const struct tl_wake *cr = creation_of(w, cur);
			struct cp_thread *pt =
			    cr ? find_thread(w, cr->waker_tid, cr->waker_task_start_ns) : NULL;
			int64_t first = cur->g->n ? tl->iv[cur->g->first].start_ns : t;

			if (pt && pt != cur && cr->at_ns <= t + SKEW_NS) {
				int64_t at = cr->at_ns < t ? cr->at_ns : t;

				ret = emit(w, cur, CP_RUNQ, -1, at, t, "");
				w->pending_tid = cur->th->tid;
				t = at;
				cur = pt;
				w->jumps++;
				jumped = true;
				continue;
			}
			if (first <= 0 || cur->th->pid == w->r->root_pid) {
				ret = emit(w, NULL, CP_OUTSIDE, -1, 0, t, "starting the command");
			} else {
				ret = emit(w, cur, CP_UNKNOWN, -1, 0, t,
					   "before the thread's first interval");
			}
			t = 0;
			break;
		}
		iv = &tl->iv[cur->g->first + (size_t)k];
		s = iv->start_ns < 0 ? 0 : iv->start_ns;
		e = iv->start_ns + (int64_t)iv->dur_ns;
		if (e < t) {
			/* A hole in its intervals: one lost (counted with the timeline). */
			ret =
			    emit(w, cur, CP_UNKNOWN, -1, e > 0 ? e : 0, t, "interval not recorded");
			t = e;
			jumped = false;
			continue;
		}
		st = blocked_state(iv->kind);
		if (st < 0) {
			char held[CP_WHAT_LEN] = "";

			if (timeline_kind_state(iv->kind) == TSA_ST_RUNQ)
				cpu_holder(w, cur, (size_t)k, s, t, held, sizeof(held));
			ret =
			    emit(w, cur,
				 timeline_kind_state(iv->kind) == TSA_ST_ONCPU ? CP_ONCPU : CP_RUNQ,
				 -1, s, t, held);
			t = s;
			jumped = false;
			continue;
		}
		if (jumped && e - t < SKEW_NS && k > 0) {
			/*
			 * Just jumped here and found asleep, microseconds before its
			 * wakeup's time: the clocks disagree. It was on the CPU
			 * before this sleep began.
			 */
			ret = emit(w, cur, CP_UNKNOWN, -1, s, t, "clock skew at a wakeup");
			t = s;
			jumped = false;
			continue;
		}
		jumped = false;
		{
			const struct tl_wake *wk = wake_of(w, cur, (size_t)k);
			struct cp_thread *wt =
			    wk && wk->ctx == TSA_WK_TRACKED
				? find_thread(w, wk->waker_tid, wk->waker_task_start_ns)
				: NULL;
			int64_t at = wk && wk->at_ns < t ? wk->at_ns : t;
			char what[CP_WHAT_LEN];

			if (at < s)
				at = s;
			if (wt && wt != cur) {
				/* Between the wakeup and the sleep's end: the wakeup under way. */
				ret = emit(w, cur, CP_RUNQ, -1, at, t, "");
				if (ret)
					break;
				t = at;
				w->jumps++;
				jumped = true;
				/* The waker's segment, when emitted, ends in this wakeup. */
				w->pending_tid = cur->th->tid;
				cur = wt;
				continue;
			}
			if (!wk)
				snprintf(what, sizeof(what), "waker not recorded");
			else
				waker_name(wk, what, sizeof(what));
			ret = emit(w, cur, wk ? CP_BLOCKED : CP_UNKNOWN, wk ? st : -1, s, t, what);
			t = s;
		}
	}
	if (!ret && t > 0)
		ret = emit(w, NULL, CP_UNKNOWN, -1, 0, t, "path too long to follow");
	return ret;
}

/* The thread the path starts from: the command's thread that ended last. */
static struct cp_thread *last_of_command(struct walk *w, int64_t *end)
{
	struct cp_thread *best = NULL;

	for (size_t i = 0; i < w->nth; i++) {
		struct cp_thread *t = &w->th[i];
		int64_t e;

		if (t->th->pid != w->r->root_pid || !t->g->n)
			continue;
		e = w->tl->iv[t->g->first + t->g->n - 1].start_ns +
		    (int64_t)w->tl->iv[t->g->first + t->g->n - 1].dur_ns;
		if (!best || e > *end) {
			best = t;
			*end = e;
		}
	}
	return best;
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct cp_group *a = pa, *b = pb;

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static bool same_group(const struct cp_group *g, const struct cp_segment *s)
{
	return g->tid == s->tid && g->kind == s->kind && g->state == s->state &&
	       !strcmp(g->what, s->what) && !strcmp(g->comm, s->comm);
}

static uint64_t seg_hash(const struct cp_segment *s)
{
	uint64_t h = 1469598103934665603ull ^
		     ((uint64_t)s->tid << 16 | (uint64_t)s->kind << 8 | (uint8_t)s->state);

	h = hash_fnv1a(s->what, strlen(s->what), h);
	h = hash_fnv1a(s->comm, strlen(s->comm), h);
	return h * 0x9e3779b97f4a7c15ull;
}

/* Is the group at index g the group of segment probe? */
static bool group_equal(uint32_t g, const void *probe, void *ctx)
{
	return same_group(&((const struct run_critpath *)ctx)->groups[g], probe);
}

int critpath_summarize(struct run_critpath *cp)
{
	struct hmap index; /* a segment's group -> its index in cp->groups */
	uint32_t *rank = NULL;
	int ret = -ENOMEM;

	hmap__init(&index, cp);
	free(cp->groups);
	cp->ngroups = 0;
	cp->unknown_ns = 0;
	cp->groups = calloc(cp->nseg ? cp->nseg : 1, sizeof(*cp->groups));
	if (!cp->groups)
		goto out;
	for (size_t i = 0; i < cp->nseg; i++) {
		struct cp_segment *s = &cp->seg[i];
		uint64_t h = seg_hash(s);
		uint32_t gi;
		struct cp_group *g;

		if (s->kind == CP_UNKNOWN)
			cp->unknown_ns += s->dur_ns;
		if (!hmap__find(&index, h, group_equal, s, &gi)) {
			if (hmap__insert(&index, h, (uint32_t)cp->ngroups))
				goto out;
			gi = (uint32_t)cp->ngroups;
			g = &cp->groups[cp->ngroups];
			g->order = (uint32_t)cp->ngroups++;
			g->tid = s->tid;
			g->pid = s->pid;
			g->kind = s->kind;
			g->state = s->state;
			memcpy(g->comm, s->comm, sizeof(g->comm));
			memcpy(g->what, s->what, sizeof(g->what));
		}
		g = &cp->groups[gi];
		s->group = gi;
		g->total_ns += s->dur_ns;
		g->segments++;
	}
	if (cp->ngroups)
		qsort(cp->groups, cp->ngroups, sizeof(*cp->groups), cmp_group);
	/* Segments name their group by its place after the sort. */
	rank = malloc((cp->ngroups ? cp->ngroups : 1) * sizeof(*rank));
	if (!rank)
		goto out;
	for (size_t k = 0; k < cp->ngroups; k++)
		rank[cp->groups[k].order] = (uint32_t)k;
	for (size_t i = 0; i < cp->nseg; i++)
		cp->seg[i].group = rank[cp->seg[i].group];
	ret = 0;
out:
	hmap__free(&index);
	free(rank);
	return ret;
}

int critpath_compute(struct run *r)
{
	const struct run_timeline *tl = r->timeline;
	struct walk w = {.r = r, .tl = tl, .complete = true};
	struct run_critpath *cp = NULL;
	struct cp_thread *start;
	int64_t end = 0, wall = (int64_t)r->wall_ns;
	int ret = -ENOMEM;

	if (!tl)
		return -ENOENT;
	w.th = calloc(r->nthreads ? r->nthreads : 1, sizeof(*w.th));
	cp = calloc(1, sizeof(*cp));
	if (!w.th || !cp)
		goto out;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct tl_thread *g = timeline_thread(tl, &r->threads[i]);

		if (g)
			w.th[w.nth++] = (struct cp_thread){.th = &r->threads[i], .g = g};
	}
	if (w.nth)
		qsort(w.th, w.nth, sizeof(*w.th), cmp_cp_thread);
	start = last_of_command(&w, &end);
	ret = build_slices(&w);
	if (ret)
		goto out;
	if (!start) {
		ret = emit(&w, NULL, CP_UNKNOWN, -1, 0, wall, "no interval of the command");
	} else {
		if (end > wall)
			end = wall;
		if (end < 0)
			end = 0;
		if (wall > end)
			ret = emit(&w, NULL, CP_OUTSIDE, -1, end, wall,
				   "the command's end to its reaping");
		if (!ret)
			ret = walk(&w, start, end);
	}
	if (ret)
		goto out;
	/* Emitted backwards: into time order. */
	for (size_t i = 0; i < w.nseg / 2; i++) {
		struct cp_segment x = w.seg[i];

		w.seg[i] = w.seg[w.nseg - 1 - i];
		w.seg[w.nseg - 1 - i] = x;
	}
	cp->seg = w.seg;
	cp->nseg = w.nseg;
	w.seg = NULL;
	cp->wall_ns = r->wall_ns;
	cp->jumps = w.jumps;
	cp->complete = w.complete && timeline_complete(tl);
	ret = critpath_summarize(cp);
	if (ret)
		goto out;
	critpath__free(r->critpath);
	r->critpath = cp;
	cp = NULL;
out:
	free(w.seg);
	free(w.slices);
	free(w.th);
	critpath__free(cp);
	return ret;
}

void critpath__free(struct run_critpath *cp)
{
	if (!cp)
		return;
	free(cp->seg);
	free(cp->groups);
	free(cp);
}

void critpath_group_label(const struct cp_group *g, char *buf, size_t len)
{
	static const char st[] = "RRSDT";

	switch (g->kind) {
	case CP_BLOCKED:
		snprintf(buf, len, "%s (%s %" PRIu32 ", %c)", g->what, g->comm, g->tid,
			 g->state >= 0 && g->state < 5 ? st[g->state] : '?');
		break;
	case CP_OUTSIDE:
		snprintf(buf, len, "tsarun: %s", g->what);
		break;
	case CP_UNKNOWN:
		if (g->tid)
			snprintf(buf, len, "%s (%" PRIu32 ") unknown: %s", g->comm, g->tid,
				 g->what);
		else
			snprintf(buf, len, "unknown: %s", g->what);
		break;
	default:
		snprintf(buf, len, "%s (%" PRIu32 ") %s%s%s", g->comm, g->tid, kind_labels[g->kind],
			 g->what[0] ? " " : "", g->what);
	}
}

#define CP_TOP 8

void critpath_print(FILE *f, const struct run_critpath *cp, int width)
{
	char wall[32], d[32], label[160], cell[4 * 160 + 8];
	size_t n = cp->ngroups < CP_TOP ? cp->ngroups : CP_TOP;
	uint64_t rest = 0;
	int lw;

	if (width < 40)
		width = 40;
	if (width > 100)
		width = 100;
	/* "  " label "  " 9-wide time "  " 5-wide share: the label takes the rest. */
	lw = width - 2 - 2 - 9 - 2 - 6;
	fmt_dur(cp->wall_ns, wall, sizeof(wall));
	fprintf(f, "\ncritical path: %zu segments, %" PRIu64 " edges, of %s wall%s\n", cp->nseg,
		cp->jumps, wall, cp->complete ? "" : " (incomplete: see the unknown part)");
	fprintf(f, "  %-*s  %9s  %5s\n", lw, "on the path (the wall time saved at most without it)",
		"time", "share");
	for (size_t i = 0; i < n; i++) {
		const struct cp_group *g = &cp->groups[i];

		critpath_group_label(g, label, sizeof(label));
		/* A label holds thread and process names: escaped, cut to its column. */
		textsafe_term_cell(cell, sizeof(cell), label, strlen(label), (size_t)lw);
		fmt_dur(g->total_ns, d, sizeof(d));
		fprintf(f, "  %s  %9s  %4.1f%%\n", cell, d,
			cp->wall_ns ? 100.0 * (double)g->total_ns / (double)cp->wall_ns : 0.0);
	}
	for (size_t i = n; i < cp->ngroups; i++)
		rest += cp->groups[i].total_ns;
	if (rest) {
		snprintf(label, sizeof(label), "%zu more", cp->ngroups - n);
		fmt_dur(rest, d, sizeof(d));
		fprintf(f, "  %-*.*s  %9s  %4.1f%%\n", lw, lw, label, d,
			cp->wall_ns ? 100.0 * (double)rest / (double)cp->wall_ns : 0.0);
	}
}

/* A segment's frames in the path's flame graph: thread, then state, then the waker. */
static size_t seg_frames(const struct cp_segment *s, char buf[3][96], const char *frames[3])
{
	size_t n = 0;

	if (s->tid)
		snprintf(buf[n++], sizeof(buf[0]), "%s (%" PRIu32 ")", s->comm, s->tid);
	else
		snprintf(buf[n++], sizeof(buf[0]), "tsarun");
	snprintf(buf[n++], sizeof(buf[0]), "%s",
		 kind_labels[s->kind < CP_NKINDS ? s->kind : CP_UNKNOWN]);
	if (s->what[0])
		snprintf(buf[n++], sizeof(buf[0]), "%s", s->what);
	for (size_t i = 0; i < n; i++)
		frames[i] = buf[i];
	return n;
}

int critpath_write_folded(FILE *f, const struct run_critpath *cp)
{
	for (size_t i = 0; i < cp->nseg; i++) {
		char buf[3][96];
		const char *frames[3];
		size_t n = seg_frames(&cp->seg[i], buf, frames);

		for (size_t k = 0; k < n; k++) {
			/* ';' separates frames and the last space the value: neither in a name. */
			for (char *c = buf[k]; *c; c++)
				if (*c == ';')
					*c = ',';
			fprintf(f, "%s%s", k ? ";" : "", buf[k]);
		}
		fprintf(f, " %" PRIu64 "\n", cp->seg[i].dur_ns);
	}
	return ferror(f) ? -EIO : 0;
}

int critpath_flame(struct flame *fl, const struct run_critpath *cp)
{
	static const enum flame_palette pal[CP_NKINDS] = {
	    [CP_ONCPU] = FLAME_PAL_HOT,	     [CP_RUNQ] = FLAME_PAL_YELLOW,
	    [CP_BLOCKED] = FLAME_PAL_PURPLE, [CP_OUTSIDE] = FLAME_PAL_GREEN,
	    [CP_UNKNOWN] = FLAME_PAL_GREY,
	};
	int ret = 0;

	for (int k = 0; !ret && k < CP_NKINDS; k++)
		ret = flame__set_category(fl, k, kind_labels[k], pal[k]);
	for (size_t i = 0; !ret && i < cp->nseg; i++) {
		char buf[3][96];
		const char *frames[3];
		size_t n = seg_frames(&cp->seg[i], buf, frames);

		ret = flame__add(fl, frames, n, cp->seg[i].dur_ns,
				 cp->seg[i].kind < CP_NKINDS ? cp->seg[i].kind : CP_UNKNOWN);
	}
	return ret;
}
