// SPDX-License-Identifier: MIT
/* The artifact's timeline (--timeline): compact rows, streamed; and read back. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "artifact_timeline.h"
#include "critpath.h"
#include "jsonw.h"
#include "run.h"
#include "textsafe.h"
#include "timeline.h"

void artifact_timeline_quality_json(struct jsonw *w, const struct run_timeline *t)
{
	jsonw__obj_open(w);
	jsonw__uint_field(w, "events_sent", t->sent);
	jsonw__uint_field(w, "lost_events", t->lost_events);
	jsonw__uint_field(w, "lost_ns", t->lost_ns);
	jsonw__uint_field(w, "beyond_bound", t->beyond_bound);
	jsonw__uint_field(w, "unmatched_intervals", t->unmatched);
	jsonw__bool_field(w, "complete", timeline_complete(t));
	jsonw__obj_close(w);
}

static const char *const wake_ctx_names[TSA_WK_NR] = {
    [TSA_WK_TRACKED] = "tracked", [TSA_WK_IRQ] = "interrupt", [TSA_WK_KTHREAD] = "kernel_thread",
    [TSA_WK_PROCESS] = "process", [TSA_WK_IDLE] = "idle",
};

static const char *const tl_row[] = {"start_ns", "duration_ns", "kind", "cpu"};

static const char *const wake_row[] = {
    "at_ns", "context", "created", "iowait", "waker_tid", "waker_pid", "waker_task_start_ns",
    "cpu",   "comm",	"irq",
};

static const char *const segment_row[] = {"start_ns", "duration_ns", "group", "woke_tid"};

static void str_array(struct jsonw *w, const char *key, const char *const *s, size_t n)
{
	jsonw__key(w, key);
	jsonw__arr_open(w);
	for (size_t i = 0; i < n; i++)
		jsonw__str(w, s[i]);
	jsonw__arr_close(w);
}

/* The members before "threads": what a row holds, and what the timeline lost. */
static void timeline_header(struct jsonw *w, const struct run_timeline *t)
{
	jsonw__key(w, "kinds");
	jsonw__arr_open(w);
	for (unsigned i = 0; i < TSA_TL_NR; i++)
		jsonw__str(w, timeline_kind_name(i));
	jsonw__arr_close(w);
	str_array(w, "row", tl_row, sizeof(tl_row) / sizeof(tl_row[0]));
	str_array(w, "wake_contexts", wake_ctx_names, TSA_WK_NR);
	str_array(w, "wake_row", wake_row, sizeof(wake_row) / sizeof(wake_row[0]));
	jsonw__uint_field(w, "intervals", t->n);
	jsonw__uint_field(w, "events_sent", t->sent);
	jsonw__uint_field(w, "lost_events", t->lost_events);
	jsonw__uint_field(w, "lost_ns", t->lost_ns);
	jsonw__uint_field(w, "max_intervals", t->max_intervals);
	jsonw__key(w, "beyond_bound");
	if (t->beyond_bound) {
		jsonw__obj_open(w);
		jsonw__uint_field(w, "intervals", t->beyond_bound);
		jsonw__uint_field(w, "total_ns", t->beyond_bound_ns);
		jsonw__int_field(w, "truncated_at_ns", t->truncated_at_ns);
		jsonw__obj_close(w);
	} else {
		jsonw__null(w);
	}
	jsonw__uint_field(w, "unmatched_intervals", t->unmatched);
	jsonw__uint_field(w, "buffer_bytes", t->buffer_bytes);
	jsonw__bool_field(w, "complete", timeline_complete(t));
}

/*
 * A wake's comm or interrupt name (text from the kernel), escaped as these
 * rows always had it: by textsafe_json, a leading "::" broken too, where
 * the artifact's other strings keep it (the writer's JSONW_KEEP_COLONS).
 */
static void wake_str(struct jsonw *w, const char *s, size_t size)
{
	char buf[TEXTSAFE_SIZE(sizeof(((struct tl_wake *)0)->irq)) + 2];
	size_t n;

	n = textsafe_json(buf + 1, sizeof(buf) - 2, s, strnlen(s, size));
	buf[0] = '"';
	buf[n + 1] = '"';
	jsonw__raw(w, buf, n + 2);
}

static void timeline_thread_json(struct jsonw *w, const struct run_timeline *t,
				 const struct thread_acct *th, const struct tl_thread *g)
{
	jsonw__obj_open(w);
	jsonw__uint_field(w, "tid", th->tid);
	jsonw__uint_field(w, "pid", th->pid);
	jsonw__uint_field(w, "task_start_ns", th->task_start_ns);
	jsonw__uint_field(w, "lost_events", th->tl_lost);
	jsonw__uint_field(w, "lost_ns", th->tl_lost_ns);
	jsonw__key(w, "names");
	jsonw__arr_open(w);
	for (size_t i = g->first_name; i < g->first_name + g->nnames; i++) {
		jsonw__arr_open(w);
		jsonw__int(w, t->names[i].at_ns);
		jsonw__uint(w, t->names[i].execs);
		/* tsarun's own helper's name never reaches a user (run.h). */
		jsonw__str(w, run_shown_comm(t->names[i].comm, t->names[i].execs));
		jsonw__arr_close(w);
	}
	jsonw__arr_close(w);
	jsonw__key(w, "intervals");
	jsonw__arr_open(w);
	for (size_t i = g->first; i < g->first + g->n; i++) {
		const struct tl_interval *v = &t->iv[i];

		jsonw__arr_open(w);
		jsonw__int(w, v->start_ns);
		jsonw__uint(w, v->dur_ns);
		jsonw__uint(w, v->kind);
		if (v->cpu >= 0)
			jsonw__int(w, v->cpu);
		else
			jsonw__null(w);
		jsonw__arr_close(w);
	}
	jsonw__arr_close(w);
	jsonw__key(w, "wakes");
	jsonw__arr_open(w);
	for (size_t i = g->first_wake; i < g->first_wake + g->nwakes; i++) {
		const struct tl_wake *k = &t->wakes[i];

		jsonw__arr_open(w);
		jsonw__int(w, k->at_ns);
		jsonw__uint(w, k->ctx);
		jsonw__bool(w, k->flags & TSA_WKF_NEW);
		jsonw__bool(w, k->flags & TSA_WKF_IOWAIT);
		jsonw__uint(w, k->waker_tid);
		jsonw__uint(w, k->waker_pid);
		jsonw__uint(w, k->waker_task_start_ns);
		if (k->cpu >= 0)
			jsonw__int(w, k->cpu);
		else
			jsonw__null(w);
		wake_str(w, k->comm, sizeof(k->comm));
		if (k->irq[0])
			wake_str(w, k->irq, sizeof(k->irq));
		else
			jsonw__null(w);
		jsonw__arr_close(w);
	}
	jsonw__arr_close(w);
	jsonw__obj_close(w);
}

void artifact_timeline_json(struct jsonw *w, const struct run *r)
{
	const struct run_timeline *t = r->timeline;

	jsonw__obj_open(w);
	timeline_header(w, t);
	jsonw__key(w, "threads");
	/* In the order of the run's threads[], one line each. */
	jsonw__arr_open_rows(w);
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct tl_thread *g = timeline_thread(t, &r->threads[i]);

		if (g)
			timeline_thread_json(w, t, &r->threads[i], g);
	}
	jsonw__arr_close(w);
	jsonw__obj_close(w);
}

void artifact_critpath_json(struct jsonw *w, const struct run *r)
{
	static const char *const states[TSA_ST_NR] = {"on_cpu", "runqueue", "sleeping",
						      "uninterruptible", "stopped"};
	const struct run_critpath *cp = r->critpath;

	jsonw__obj_open(w);
	jsonw__uint_field(w, "wall_ns", cp->wall_ns);
	jsonw__uint_field(w, "edges", cp->jumps);
	jsonw__bool_field(w, "complete", cp->complete);
	jsonw__uint_field(w, "unknown_ns", cp->unknown_ns);
	jsonw__key(w, "kinds");
	jsonw__arr_open(w);
	for (unsigned k = 0; k < CP_NKINDS; k++)
		jsonw__str(w, critpath_kind_name(k));
	jsonw__arr_close(w);
	jsonw__key(w, "groups");
	jsonw__arr_open(w);
	for (size_t i = 0; i < cp->ngroups; i++) {
		const struct cp_group *g = &cp->groups[i];

		jsonw__obj_open(w);
		if (g->tid) {
			jsonw__uint_field(w, "tid", g->tid);
			jsonw__uint_field(w, "pid", g->pid);
			jsonw__str_field(w, "comm", g->comm);
		} else {
			jsonw__null_field(w, "tid");
			jsonw__null_field(w, "pid");
			jsonw__null_field(w, "comm");
		}
		jsonw__str_field(w, "kind", critpath_kind_name(g->kind));
		if (g->state >= 0 && g->state < TSA_ST_NR)
			jsonw__str_field(w, "state", states[g->state]);
		else
			jsonw__null_field(w, "state");
		if (g->what[0])
			jsonw__str_field(w, "what", g->what);
		else
			jsonw__null_field(w, "what");
		jsonw__uint_field(w, "total_ns", g->total_ns);
		jsonw__key(w, "share");
		jsonw__cjson(w, cp->wall_ns ? (double)g->total_ns / (double)cp->wall_ns : 0.0);
		jsonw__uint_field(w, "segments", g->segments);
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
	str_array(w, "segment_row", segment_row, sizeof(segment_row) / sizeof(segment_row[0]));
	/* One row a segment. */
	jsonw__key(w, "segments");
	jsonw__arr_open(w);
	for (size_t i = 0; i < cp->nseg; i++) {
		const struct cp_segment *s = &cp->seg[i];

		jsonw__arr_open(w);
		jsonw__int(w, s->start_ns);
		jsonw__uint(w, s->dur_ns);
		jsonw__uint(w, s->group);
		if (s->woke)
			jsonw__uint(w, s->next_tid);
		else
			jsonw__null(w);
		jsonw__arr_close(w);
	}
	jsonw__arr_close(w);
	jsonw__obj_close(w);
}

/* Reading back. */

static bool get_int(const cJSON *o, const char *key, int64_t lo, int64_t *out)
{
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(i) || i->valuedouble != floor(i->valuedouble) ||
	    i->valuedouble < (double)lo || fabs(i->valuedouble) > 9.2e18)
		return false;
	*out = (int64_t)i->valuedouble;
	return true;
}

static bool elem_int(const cJSON *a, int idx, int64_t lo, int64_t *out)
{
	const cJSON *i = cJSON_GetArrayItem(a, idx);

	if (!cJSON_IsNumber(i) || i->valuedouble != floor(i->valuedouble) ||
	    i->valuedouble < (double)lo || fabs(i->valuedouble) > 9.2e18)
		return false;
	*out = (int64_t)i->valuedouble;
	return true;
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct tl_thread *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->task_start_ns < b->task_start_ns ? -1 : a->task_start_ns > b->task_start_ns;
}

static int fail(char *why, size_t len, const char *msg)
{
	snprintf(why, len, "timeline: %s", msg);
	return -EINVAL;
}

int artifact_read_timeline(const cJSON *o, struct run *r, char *why, size_t len)
{
	const cJSON *threads = cJSON_GetObjectItemCaseSensitive(o, "threads"), *e, *row;
	const cJSON *bb = cJSON_GetObjectItemCaseSensitive(o, "beyond_bound");
	struct run_timeline *t;
	size_t niv = 0, nnames = 0, nwakes = 0, ng = 0;
	int64_t v;
	int ret = -EINVAL;

	if (!cJSON_IsObject(o) || !cJSON_IsArray(threads))
		return fail(why, len, "not an object with a \"threads\" array");
	cJSON_ArrayForEach(e, threads)
	{
		niv += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "intervals"));
		nnames += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "names"));
		nwakes += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "wakes"));
		ng++;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->threads = calloc(ng ? ng : 1, sizeof(*t->threads));
	t->iv = calloc(niv ? niv : 1, sizeof(*t->iv));
	t->names = calloc(nnames ? nnames : 1, sizeof(*t->names));
	t->wakes = calloc(nwakes ? nwakes : 1, sizeof(*t->wakes));
	if (!t->threads || !t->iv || !t->names || !t->wakes) {
		ret = -ENOMEM;
		goto out;
	}
	if (get_int(o, "events_sent", 0, &v))
		t->sent = (uint64_t)v;
	if (get_int(o, "lost_events", 0, &v))
		t->lost_events = (uint64_t)v;
	if (get_int(o, "lost_ns", 0, &v))
		t->lost_ns = (uint64_t)v;
	if (get_int(o, "max_intervals", 0, &v))
		t->max_intervals = (uint64_t)v;
	if (get_int(o, "unmatched_intervals", 0, &v))
		t->unmatched = (uint64_t)v;
	if (get_int(o, "buffer_bytes", 0, &v))
		t->buffer_bytes = (uint64_t)v;
	if (cJSON_IsObject(bb)) {
		if (get_int(bb, "intervals", 0, &v))
			t->beyond_bound = (uint64_t)v;
		if (get_int(bb, "total_ns", 0, &v))
			t->beyond_bound_ns = (uint64_t)v;
		if (get_int(bb, "truncated_at_ns", INT64_MIN, &v))
			t->truncated_at_ns = v;
	}
	cJSON_ArrayForEach(e, threads)
	{
		struct tl_thread *g = &t->threads[t->nthreads];
		struct thread_acct *th = NULL;
		int64_t tid, start;

		if (!get_int(e, "tid", 0, &tid) || !get_int(e, "task_start_ns", 0, &start)) {
			fail(why, len, "a thread without its tid and task_start_ns");
			goto out;
		}
		for (size_t i = 0; i < r->nthreads && !th; i++)
			if (r->threads[i].tid == (uint64_t)tid &&
			    r->threads[i].task_start_ns == (uint64_t)start)
				th = &r->threads[i];
		if (!th) {
			snprintf(why, len,
				 "timeline: thread %lld (task_start_ns %lld) is not in threads[]",
				 (long long)tid, (long long)start);
			goto out;
		}
		if (get_int(e, "lost_events", 0, &v))
			th->tl_lost = (uint64_t)v;
		if (get_int(e, "lost_ns", 0, &v))
			th->tl_lost_ns = (uint64_t)v;
		g->tid = th->tid_before_exec ? th->tid_before_exec : th->tid;
		g->task_start_ns = th->task_start_ns;
		g->first = t->n;
		g->first_name = t->nnames;
		g->first_wake = t->nwakes;
		cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(e, "intervals"))
		{
			struct tl_interval *iv = &t->iv[t->n];
			int64_t s, d, k, c = TIMELINE_NO_CPU;

			if (!elem_int(row, 0, INT64_MIN, &s) || !elem_int(row, 1, 0, &d) ||
			    !elem_int(row, 2, 0, &k) || k >= TSA_TL_NR ||
			    (!cJSON_IsNull(cJSON_GetArrayItem(row, 3)) &&
			     !elem_int(row, 3, 0, &c))) {
				fail(why, len,
				     "an interval is not [start_ns, duration_ns, kind, cpu]");
				goto out;
			}
			iv->start_ns = s;
			iv->dur_ns = (uint64_t)d;
			iv->kind = (uint16_t)k;
			iv->cpu = c > INT16_MAX ? TIMELINE_NO_CPU : (int16_t)c;
			t->n++;
			g->n++;
		}
		cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(e, "names"))
		{
			struct tl_name *nm = &t->names[t->nnames];
			const char *comm = cJSON_GetStringValue(cJSON_GetArrayItem(row, 2));
			int64_t at, x;

			if (!elem_int(row, 0, INT64_MIN, &at) || !elem_int(row, 1, 0, &x) ||
			    !comm) {
				fail(why, len, "a name is not [at_ns, execs, comm]");
				goto out;
			}
			nm->at_ns = at;
			nm->execs = (uint32_t)x;
			/* Written as shown: the helper's own name again, for what tells it apart. */
			if (!x && !strcmp(comm, RUN_SPAWNER_SHOWN))
				comm = RUN_SPAWNER_COMM;
			snprintf(nm->comm, sizeof(nm->comm), "%s", comm);
			t->nnames++;
			g->nnames++;
		}
		/* Artifacts from before the critical path have no wakes: no path through them. */
		cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(e, "wakes"))
		{
			struct tl_wake *w = &t->wakes[t->nwakes];
			const char *comm = cJSON_GetStringValue(cJSON_GetArrayItem(row, 8));
			const char *irq = cJSON_GetStringValue(cJSON_GetArrayItem(row, 9));
			int64_t at, cx, wt, wp, ws, c = TIMELINE_NO_CPU;

			if (!elem_int(row, 0, INT64_MIN, &at) || !elem_int(row, 1, 0, &cx) ||
			    cx >= TSA_WK_NR || !cJSON_IsBool(cJSON_GetArrayItem(row, 2)) ||
			    !cJSON_IsBool(cJSON_GetArrayItem(row, 3)) ||
			    !elem_int(row, 4, 0, &wt) || !elem_int(row, 5, 0, &wp) ||
			    !elem_int(row, 6, 0, &ws) ||
			    (!cJSON_IsNull(cJSON_GetArrayItem(row, 7)) &&
			     !elem_int(row, 7, 0, &c)) ||
			    !comm) {
				fail(why, len, "a wake is not a row of wake_row");
				goto out;
			}
			w->at_ns = at;
			w->ctx = (uint8_t)cx;
			w->flags = (cJSON_IsTrue(cJSON_GetArrayItem(row, 2)) ? TSA_WKF_NEW : 0) |
				   (cJSON_IsTrue(cJSON_GetArrayItem(row, 3)) ? TSA_WKF_IOWAIT : 0);
			w->waker_tid = (uint32_t)wt;
			w->waker_pid = (uint32_t)wp;
			w->waker_task_start_ns = (uint64_t)ws;
			w->cpu = c > INT16_MAX ? TIMELINE_NO_CPU : (int16_t)c;
			snprintf(w->comm, sizeof(w->comm), "%s", comm);
			snprintf(w->irq, sizeof(w->irq), "%s", irq ? irq : "");
			t->nwakes++;
			g->nwakes++;
		}
		t->nthreads++;
	}
	if (t->nthreads)
		qsort(t->threads, t->nthreads, sizeof(*t->threads), cmp_group);
	timeline__free(r->timeline);
	r->timeline = t;
	return 0;
out:
	timeline__free(t);
	return ret;
}
