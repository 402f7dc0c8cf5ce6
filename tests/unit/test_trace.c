// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "unit.h"

#include "fixtures.h"
#include "account.h"
#include "run.h"
#include "timeline.h"
#include "trace.h"

static void add(struct timeline_builder *b, const struct tsa_thread *t, uint32_t kind, double from,
		double to, uint32_t cpu)
{
	struct tsa_tl_event e = {
	    .task_start_ns = t->task_start_ns,
	    .start_ns = T0 + (uint64_t)(from * MS),
	    .end_ns = T0 + (uint64_t)(to * MS),
	    .tid = t->tid,
	    .cpu = cpu,
	    .kind = kind,
	};

	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
}

static void add_name(struct timeline_builder *b, const struct tsa_thread *t, double at,
		     uint32_t execs, const char *comm)
{
	struct tsa_tl_name n = {
	    .h = {.task_start_ns = t->task_start_ns,
		  .start_ns = T0 + (uint64_t)(at * MS),
		  .end_ns = execs,
		  .tid = t->tid,
		  .cpu = (uint32_t)-1,
		  .kind = TSA_TL_NAME},
	};

	snprintf(n.comm, sizeof(n.comm), "%s", comm);
	assert_int_equal(timeline_builder__add(b, &n, sizeof(n)), 0);
}

/*
 * A process that exec'd ("tsarun-spawner" -> "bench") and a worker thread
 * with a name JSON must escape; with timeline, their intervals.
 */
static void make_run(struct run *r, bool timeline)
{
	struct timeline_builder *b = timeline_builder__new(1000, 4096);
	struct tsa_thread t[2];

	memset(r, 0, sizeof(r[0]));
	t[0] = fx_thread(100, 100, 99, "bench", 0, 10, 4, 1, 5, 0);
	t[0].execs = 1;
	t[1] = fx_thread(101, 100, 99, "w\"k\\\xff", 1, 9, 6, 2, 0, 0);
	r->start_mono_ns = T0;
	run__source(r, "ebpf", true, NULL);
	assert_int_equal(fold_run(r, t, 2), 0);
	if (!timeline) {
		timeline_builder__free(b);
		return;
	}
	add(b, &t[0], TSA_TL_ONCPU, 0, 4, 0);
	add(b, &t[0], TSA_TL_RUNQ_PREEMPTED, 4, 5, (uint32_t)-1);
	add(b, &t[0], TSA_TL_SLEEP, 5, 10, (uint32_t)-1);
	add(b, &t[1], TSA_TL_RUNQ_NEW, 1, 3, (uint32_t)-1);
	add(b, &t[1], TSA_TL_ONCPU, 3, 9, 1);
	add_name(b, &t[0], 0, 0, "tsarun-spawner");
	add_name(b, &t[0], 2, 1, "bench");
	add_name(b, &t[1], 1, 0, "w\"k\\\xff");
	assert_int_equal(timeline_attach(r, b, T0, 8, 0, NULL), 0);
	timeline_builder__free(b);
}

static char *render(const struct run *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	assert_non_null(m);
	assert_int_equal(trace_write(m, r, "./bench \"q\""), 0);
	fclose(m);
	return text;
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The "X" slice of the thread's life on (pid, tid). */
static const cJSON *life(const cJSON *events, int tid)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, events)
	{
		if (!strcmp(get(e, "ph")->valuestring, "X") && get(e, "tid")->valueint == tid &&
		    !strcmp(get(e, "cat")->valuestring, "thread"))
			return e;
	}
	return NULL;
}

static void test_with_timeline(void **state)
{
	struct run r;
	char *text;
	cJSON *doc;
	const cJSON *events, *e;
	int states = 0, cpu_slices = 0, execs = 0, named = 0;

	make_run(&r, true);
	text = render(&r);
	assert_int_equal(golden_check("trace-small.json", text), 0);
	doc = cJSON_Parse(text);
	assert_non_null(doc); /* valid JSON, escapes included */
	assert_true(cJSON_IsTrue(get(get(doc, "otherData"), "timeline")));
	assert_true(cJSON_IsTrue(get(get(doc, "otherData"), "timeline_complete")));
	assert_string_equal(get(get(doc, "otherData"), "command")->valuestring, "./bench \"q\"");
	events = get(doc, "traceEvents");
	assert_true(cJSON_IsArray(events));
	cJSON_ArrayForEach(e, events)
	{
		const char *ph = get(e, "ph")->valuestring;

		if (!strcmp(ph, "M") && !strcmp(get(e, "name")->valuestring, "thread_name") &&
		    get(e, "tid")->valueint == 100) {
			/* Before its exec it was tsarun's spawner: never a name of its own. */
			assert_string_equal(get(get(e, "args"), "name")->valuestring, "bench");
			named++;
		}
		if (!strcmp(ph, "M") && !strcmp(get(e, "name")->valuestring, "thread_name") &&
		    get(e, "tid")->valueint == 101)
			assert_string_equal(get(get(e, "args"), "name")->valuestring,
					    "w\"k\\\xef\xbf\xbd"); /* the bad byte as U+FFFD */
		if (!strcmp(ph, "i") && !strcmp(get(e, "cat")->valuestring, "exec")) {
			assert_null(get(get(e, "args"), "from"));
			assert_string_equal(get(get(e, "args"), "to")->valuestring, "bench");
			assert_true(get(e, "ts")->valuedouble == 2000.0);
			execs++;
		}
		if (!strcmp(ph, "X") && !strcmp(get(e, "cat")->valuestring, "cpu")) {
			/* The CPUs' tracks, apart from every thread's. */
			assert_int_equal(get(e, "pid")->valueint, 4194305);
			assert_int_equal(get(e, "tid")->valueint,
					 4194306 +
					     (get(get(e, "args"), "tid")->valueint == 100 ? 0 : 1));
			cpu_slices++;
		}
		if (!strcmp(ph, "X") && !strcmp(get(e, "cat")->valuestring, "state")) {
			int tid = get(e, "tid")->valueint;
			double ts = get(e, "ts")->valuedouble, dur = get(e, "dur")->valuedouble;
			/* Inside its thread's life: Perfetto nests by containment. */
			const cJSON *l = life(events, tid);

			assert_non_null(l);
			assert_true(ts >= get(l, "ts")->valuedouble);
			assert_true(ts + dur <=
				    get(l, "ts")->valuedouble + get(l, "dur")->valuedouble);
			states++;
		}
	}
	assert_int_equal(named, 1);
	assert_int_equal(execs, 1);
	assert_int_equal(states, 5);
	assert_int_equal(cpu_slices, 2);
	/* The account is on the life slice. */
	e = life(events, 100);
	assert_int_equal((int)get(get(e, "args"), "on_cpu_ns")->valuedouble, 4 * MS);
	assert_int_equal((int)get(get(e, "args"), "sleeping_ns")->valuedouble, 5 * MS);
	assert_true(get(e, "dur")->valuedouble == 10000.0);
	cJSON_Delete(doc);
	free(text);
	run__free_detail(&r);
}

static void test_without_timeline(void **state)
{
	struct run r;
	char *text;
	cJSON *doc;
	const cJSON *e;
	int x = 0;

	make_run(&r, false);
	text = render(&r);
	doc = cJSON_Parse(text);
	assert_non_null(doc);
	assert_true(cJSON_IsFalse(get(get(doc, "otherData"), "timeline")));
	assert_non_null(strstr(get(get(doc, "otherData"), "note")->valuestring, "--timeline"));
	cJSON_ArrayForEach(e, get(doc, "traceEvents"))
	{
		if (strcmp(get(e, "ph")->valuestring, "X"))
			continue;
		assert_string_equal(get(e, "cat")->valuestring, "thread");
		assert_non_null(get(get(e, "args"), "runqueue_ns"));
		x++;
	}
	assert_int_equal(x, 2); /* each thread's life, nothing else */
	cJSON_Delete(doc);
	free(text);
	run__free_detail(&r);
}

static void test_write_error_is_reported(void **state)
{
	struct run r;
	FILE *f = fopen("/dev/full", "w");

	if (!f)
		skip();
	make_run(&r, true);
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(trace_write(f, &r, "x"), -EIO);
	fclose(f);
	run__free_detail(&r);
}

/* Names need not be UTF-8: the trace is strict UTF-8 all the same (U+FFFD), controls escaped. */
static void test_bad_utf8_names(void **state)
{
	struct run r;
	char *text;
	cJSON *doc;

	make_run(&r, false);
	memcpy(r.threads[0].comm, "\xed\xa0\x80\xc0\xaf\x9b\033##[", 10);
	text = render(&r);
	assert_true(fx_utf8_valid(text));
	assert_non_null(
	    strstr(text, "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\u001b##\\u005b\""));
	doc = cJSON_Parse(text);
	assert_non_null(doc);
	cJSON_Delete(doc);
	free(text);
	run__free_detail(&r);
}

/*
 * Adjacent state slices never overlap once a reader parses ts and dur as
 * doubles and adds them (speedscope drew 303 of 2,480 slices overlapping
 * when the end was ts + dur rounded up): 2,480 slices of odd nanosecond
 * lengths, 1,000 s into a run, where three decimals of microseconds are
 * furthest from binary fractions. The same slices written naively
 * overlap, so the test can fail.
 */
static void test_adjacent_slices_never_overlap(void **state)
{
	enum { N = 2480 };
	struct timeline_builder *b = timeline_builder__new(N + 16, 1 << 20);
	uint64_t base = 1000ull * 1000 * MS, at = base;
	struct tsa_thread t;
	struct run r;
	double prev_end = -1;
	int naive = 0, slices = 0;
	char *text;
	cJSON *doc;
	const cJSON *e;

	memset(&r, 0, sizeof(r));
	t = fx_thread(300, 300, 1, "many", 1000000, 1000000 + 3 * N, 1.5 * N, 0, 1.5 * N, 0);
	r.start_mono_ns = T0;
	run__source(&r, "ebpf", true, NULL);
	assert_int_equal(fold_run(&r, &t, 1), 0);
	for (int k = 0; k < N; k++) {
		uint64_t len = 1000 + (uint64_t)(k * 7919 % 2000003);
		struct tsa_tl_event ev = {
		    .task_start_ns = t.task_start_ns,
		    .start_ns = T0 + at,
		    .end_ns = T0 + at + len,
		    .tid = t.tid,
		    .cpu = k % 2 ? (uint32_t)-1 : 0,
		    .kind = k % 2 ? TSA_TL_SLEEP : TSA_TL_ONCPU,
		};
		char a[32], d[32], n[32];

		assert_int_equal(timeline_builder__add(b, &ev, sizeof(ev)), 0);
		/* What a writer of ts and dur as they are would give. */
		snprintf(a, sizeof(a), "%.3f", (double)(at) / 1e3);
		snprintf(d, sizeof(d), "%.3f", (double)len / 1e3);
		snprintf(n, sizeof(n), "%.3f", (double)(at + len) / 1e3);
		naive += strtod(a, NULL) + strtod(d, NULL) > strtod(n, NULL);
		at += len;
	}
	assert_true(naive > 0);
	assert_int_equal(timeline_attach(&r, b, T0, 8, 0, NULL), 0);
	timeline_builder__free(b);
	text = render(&r);
	doc = cJSON_Parse(text);
	assert_non_null(doc);
	cJSON_ArrayForEach(e, get(doc, "traceEvents"))
	{
		double ts, dur;

		if (strcmp(get(e, "ph")->valuestring, "X") ||
		    strcmp(get(e, "cat")->valuestring, "state"))
			continue;
		ts = get(e, "ts")->valuedouble;
		dur = get(e, "dur")->valuedouble;
		assert_true(ts >= prev_end);
		assert_true(dur > 0);
		prev_end = ts + dur;
		slices++;
	}
	assert_int_equal(slices, N);
	cJSON_Delete(doc);
	free(text);
	run__free_detail(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_with_timeline),
	    cmocka_unit_test(test_without_timeline),
	    cmocka_unit_test(test_write_error_is_reported),
	    cmocka_unit_test(test_bad_utf8_names),
	    cmocka_unit_test(test_adjacent_slices_never_overlap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
