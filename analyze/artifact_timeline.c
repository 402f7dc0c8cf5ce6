// SPDX-License-Identifier: MIT
/* The artifact's timeline (--timeline): compact rows, streamed; and read back. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "artifact_json.h"
#include "artifact_timeline.h"
#include "critpath.h"
#include "run.h"
#include "textsafe.h"
#include "timeline.h"

cJSON *artifact_timeline_quality(const struct run_timeline *t)
{
	cJSON *o = cJSON_CreateObject();

	add_u64(o, "events_sent", t->sent);
	add_u64(o, "lost_events", t->lost_events);
	add_u64(o, "lost_ns", t->lost_ns);
	add_u64(o, "beyond_bound", t->beyond_bound);
	add_u64(o, "unmatched_intervals", t->unmatched);
	cJSON_AddBoolToObject(o, "complete", timeline_complete(t));
	return o;
}

static const char *const wake_ctx_names[TSA_WK_NR] = {
    [TSA_WK_TRACKED] = "tracked", [TSA_WK_IRQ] = "interrupt", [TSA_WK_KTHREAD] = "kernel_thread",
    [TSA_WK_PROCESS] = "process", [TSA_WK_IDLE] = "idle",
};

static const char *const wake_row[] = {
    "at_ns", "context", "created", "iowait", "waker_tid", "waker_pid", "waker_task_start_ns",
    "cpu",   "comm",	"irq",
};

static int emit_header(FILE *f, const struct run_timeline *t)
{
	cJSON *o = cJSON_CreateObject(), *k = cJSON_AddArrayToObject(o, "kinds"), *b;
	char *text;
	size_t len;
	int ret = 0;

	for (unsigned i = 0; i < TSA_TL_NR; i++)
		cJSON_AddItemToArray(k, cJSON_CreateString(timeline_kind_name(i)));
	k = cJSON_AddArrayToObject(o, "row");
	cJSON_AddItemToArray(k, cJSON_CreateString("start_ns"));
	cJSON_AddItemToArray(k, cJSON_CreateString("duration_ns"));
	cJSON_AddItemToArray(k, cJSON_CreateString("kind"));
	cJSON_AddItemToArray(k, cJSON_CreateString("cpu"));
	k = cJSON_AddArrayToObject(o, "wake_contexts");
	for (unsigned i = 0; i < TSA_WK_NR; i++)
		cJSON_AddItemToArray(k, cJSON_CreateString(wake_ctx_names[i]));
	k = cJSON_AddArrayToObject(o, "wake_row");
	for (size_t i = 0; i < sizeof(wake_row) / sizeof(wake_row[0]); i++)
		cJSON_AddItemToArray(k, cJSON_CreateString(wake_row[i]));
	add_u64(o, "intervals", t->n);
	add_u64(o, "events_sent", t->sent);
	add_u64(o, "lost_events", t->lost_events);
	add_u64(o, "lost_ns", t->lost_ns);
	add_u64(o, "max_intervals", t->max_intervals);
	if (t->beyond_bound) {
		b = cJSON_AddObjectToObject(o, "beyond_bound");
		add_u64(b, "intervals", t->beyond_bound);
		add_u64(b, "total_ns", t->beyond_bound_ns);
		add_i64(b, "truncated_at_ns", t->truncated_at_ns);
	} else {
		cJSON_AddNullToObject(o, "beyond_bound");
	}
	add_u64(o, "unmatched_intervals", t->unmatched);
	add_u64(o, "buffer_bytes", t->buffer_bytes);
	cJSON_AddBoolToObject(o, "complete", timeline_complete(t));
	text = json_print(o, false);
	cJSON_Delete(o);
	if (!text)
		return -ENOMEM;
	/* Without its closing brace: "threads" follows. */
	len = strlen(text);
	if (len < 2 || fwrite(text, 1, len - 1, f) != len - 1)
		ret = -EIO;
	free(text);
	return ret;
}

/* A JSON string of text from the kernel (a comm): escaped, never trusted. */
static void put_json_str(FILE *f, const char *s)
{
	if (!*s) {
		fputs("\"\"", f); /* a tracked waker's: its thread has the name */
		return;
	}
	fputc('"', f);
	textsafe_fput(f, textsafe_json, s, TEXTSAFE_NUL);
	fputc('"', f);
}

static int emit_thread(FILE *f, const struct run_timeline *t, const struct thread_acct *th,
		       const struct tl_thread *g, bool first)
{
	cJSON *names = cJSON_CreateArray();
	char *text;

	for (size_t i = g->first_name; i < g->first_name + g->nnames; i++) {
		cJSON *nm = cJSON_CreateArray();
		char buf[24];

		snprintf(buf, sizeof(buf), "%" PRId64, t->names[i].at_ns);
		cJSON_AddItemToArray(nm, cJSON_CreateRaw(buf));
		cJSON_AddItemToArray(nm, cJSON_CreateNumber(t->names[i].execs));
		/* tsarun's own helper's name never reaches a user (run.h). */
		cJSON_AddItemToArray(
		    nm, cJSON_CreateString(run_shown_comm(t->names[i].comm, t->names[i].execs)));
		cJSON_AddItemToArray(names, nm);
	}
	text = json_print(names, false);
	cJSON_Delete(names);
	if (!text)
		return -ENOMEM;
	fprintf(f,
		"%s{\"tid\":%" PRIu32 ",\"pid\":%" PRIu32 ",\"task_start_ns\":%" PRIu64
		",\"lost_events\":%" PRIu64 ",\"lost_ns\":%" PRIu64 ",\"names\":%s,\"intervals\":[",
		first ? "\n" : ",\n", th->tid, th->pid, th->task_start_ns, th->tl_lost,
		th->tl_lost_ns, text);
	free(text);
	for (size_t i = g->first; i < g->first + g->n; i++) {
		const struct tl_interval *v = &t->iv[i];

		if (v->cpu >= 0)
			fprintf(f, "%s[%" PRId64 ",%" PRIu64 ",%u,%d]", i == g->first ? "" : ",",
				v->start_ns, v->dur_ns, v->kind, v->cpu);
		else
			fprintf(f, "%s[%" PRId64 ",%" PRIu64 ",%u,null]", i == g->first ? "" : ",",
				v->start_ns, v->dur_ns, v->kind);
	}
	/* Written directly, not through cJSON: a pipe ping-pong has two per round trip. */
	fputs("],\"wakes\":[", f);
	for (size_t i = g->first_wake; i < g->first_wake + g->nwakes; i++) {
		const struct tl_wake *w = &t->wakes[i];

		fprintf(f, "%s[%" PRId64 ",%u,%s,%s,%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",",
			i == g->first_wake ? "" : ",", w->at_ns, w->ctx,
			(w->flags & TSA_WKF_NEW) ? "true" : "false",
			(w->flags & TSA_WKF_IOWAIT) ? "true" : "false", w->waker_tid, w->waker_pid,
			w->waker_task_start_ns);
		if (w->cpu >= 0)
			fprintf(f, "%d,", w->cpu);
		else
			fputs("null,", f);
		put_json_str(f, w->comm);
		fputc(',', f);
		if (w->irq[0])
			put_json_str(f, w->irq);
		else
			fputs("null", f);
		fputc(']', f);
	}
	return fputs("]}", f) < 0 ? -EIO : 0;
}

int artifact_emit_timeline(FILE *f, const struct run *r)
{
	const struct run_timeline *t = r->timeline;
	bool first = true;
	int ret;

	ret = emit_header(f, t);
	if (ret)
		return ret;
	fputs(",\"threads\":[", f);
	/* In the order of the run's threads[], one line each. */
	for (size_t i = 0; i < r->nthreads && !ret; i++) {
		const struct tl_thread *g = timeline_thread(t, &r->threads[i]);

		if (!g)
			continue;
		ret = emit_thread(f, t, &r->threads[i], g, first);
		first = false;
	}
	if (!ret && fputs("]}", f) < 0)
		ret = -EIO;
	return ret;
}

int artifact_emit_critpath(FILE *f, const struct run *r)
{
	static const char *const states[TSA_ST_NR] = {"on_cpu", "runqueue", "sleeping",
						      "uninterruptible", "stopped"};
	const struct run_critpath *cp = r->critpath;
	cJSON *o = cJSON_CreateObject(), *a;
	char *text;
	size_t len;
	int ret = 0;

	add_u64(o, "wall_ns", cp->wall_ns);
	add_u64(o, "edges", cp->jumps);
	cJSON_AddBoolToObject(o, "complete", cp->complete);
	add_u64(o, "unknown_ns", cp->unknown_ns);
	a = cJSON_AddArrayToObject(o, "kinds");
	for (unsigned k = 0; k < CP_NKINDS; k++)
		cJSON_AddItemToArray(a, cJSON_CreateString(critpath_kind_name(k)));
	a = cJSON_AddArrayToObject(o, "groups");
	for (size_t i = 0; i < cp->ngroups; i++) {
		const struct cp_group *g = &cp->groups[i];
		cJSON *j = cJSON_CreateObject();

		if (g->tid) {
			cJSON_AddNumberToObject(j, "tid", g->tid);
			cJSON_AddNumberToObject(j, "pid", g->pid);
			cJSON_AddStringToObject(j, "comm", g->comm);
		} else {
			cJSON_AddNullToObject(j, "tid");
			cJSON_AddNullToObject(j, "pid");
			cJSON_AddNullToObject(j, "comm");
		}
		cJSON_AddStringToObject(j, "kind", critpath_kind_name(g->kind));
		if (g->state >= 0 && g->state < TSA_ST_NR)
			cJSON_AddStringToObject(j, "state", states[g->state]);
		else
			cJSON_AddNullToObject(j, "state");
		if (g->what[0])
			cJSON_AddStringToObject(j, "what", g->what);
		else
			cJSON_AddNullToObject(j, "what");
		add_u64(j, "total_ns", g->total_ns);
		cJSON_AddNumberToObject(
		    j, "share", cp->wall_ns ? (double)g->total_ns / (double)cp->wall_ns : 0.0);
		add_u64(j, "segments", g->segments);
		cJSON_AddItemToArray(a, j);
	}
	a = cJSON_AddArrayToObject(o, "segment_row");
	cJSON_AddItemToArray(a, cJSON_CreateString("start_ns"));
	cJSON_AddItemToArray(a, cJSON_CreateString("duration_ns"));
	cJSON_AddItemToArray(a, cJSON_CreateString("group"));
	cJSON_AddItemToArray(a, cJSON_CreateString("woke_tid"));
	text = json_print(o, false);
	cJSON_Delete(o);
	if (!text)
		return -ENOMEM;
	/* Without its closing brace: "segments" follows, one row each. */
	len = strlen(text);
	if (len < 2 || fwrite(text, 1, len - 1, f) != len - 1)
		ret = -EIO;
	free(text);
	if (!ret)
		fputs(",\"segments\":[", f);
	for (size_t i = 0; !ret && i < cp->nseg; i++) {
		const struct cp_segment *s = &cp->seg[i];

		if (s->woke)
			fprintf(f, "%s[%" PRId64 ",%" PRIu64 ",%" PRIu32 ",%" PRIu32 "]",
				i ? "," : "", s->start_ns, s->dur_ns, s->group, s->next_tid);
		else
			fprintf(f, "%s[%" PRId64 ",%" PRIu64 ",%" PRIu32 ",null]", i ? "," : "",
				s->start_ns, s->dur_ns, s->group);
	}
	if (!ret && fputs("]}", f) < 0)
		ret = -EIO;
	return ret;
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
