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
#include "run.h"
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
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		return -ENOMEM;
	/* Without its closing brace: "threads" follows. */
	len = strlen(text);
	if (len < 2 || fwrite(text, 1, len - 1, f) != len - 1)
		ret = -EIO;
	cJSON_free(text);
	return ret;
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
		cJSON_AddItemToArray(nm, cJSON_CreateString(t->names[i].comm));
		cJSON_AddItemToArray(names, nm);
	}
	text = cJSON_PrintUnformatted(names);
	cJSON_Delete(names);
	if (!text)
		return -ENOMEM;
	fprintf(f,
		"%s{\"tid\":%" PRIu32 ",\"pid\":%" PRIu32 ",\"task_start_ns\":%" PRIu64
		",\"lost_events\":%" PRIu64 ",\"lost_ns\":%" PRIu64 ",\"names\":%s,\"intervals\":[",
		first ? "\n" : ",\n", th->tid, th->pid, th->task_start_ns, th->tl_lost,
		th->tl_lost_ns, text);
	cJSON_free(text);
	for (size_t i = g->first; i < g->first + g->n; i++) {
		const struct tl_interval *v = &t->iv[i];

		if (v->cpu >= 0)
			fprintf(f, "%s[%" PRId64 ",%" PRIu64 ",%u,%d]", i == g->first ? "" : ",",
				v->start_ns, v->dur_ns, v->kind, v->cpu);
		else
			fprintf(f, "%s[%" PRId64 ",%" PRIu64 ",%u,null]", i == g->first ? "" : ",",
				v->start_ns, v->dur_ns, v->kind);
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
	size_t niv = 0, nnames = 0, ng = 0;
	int64_t v;
	int ret = -EINVAL;

	if (!cJSON_IsObject(o) || !cJSON_IsArray(threads))
		return fail(why, len, "not an object with a \"threads\" array");
	cJSON_ArrayForEach(e, threads)
	{
		niv += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "intervals"));
		nnames += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "names"));
		ng++;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->threads = calloc(ng ? ng : 1, sizeof(*t->threads));
	t->iv = calloc(niv ? niv : 1, sizeof(*t->iv));
	t->names = calloc(nnames ? nnames : 1, sizeof(*t->names));
	if (!t->threads || !t->iv || !t->names) {
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
			snprintf(nm->comm, sizeof(nm->comm), "%s", comm);
			t->nnames++;
			g->nnames++;
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
