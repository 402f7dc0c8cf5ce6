// SPDX-License-Identifier: MIT
/* Interval streaming (--interval): the differences, their sums, and the JSON line. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "fixtures.h"
#include "run.h"
#include "stream.h"

/* A thread's running account: alive (a snapshot) or ended (its exit record). */
static struct thread_acct acct(uint32_t tid, uint32_t pid, const char *comm, bool alive,
			       int64_t start, int64_t end, uint64_t on, uint64_t rq, uint64_t s,
			       uint64_t d)
{
	struct thread_acct t = {.tid = tid, .pid = pid};

	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	t.flags = TSA_F_TRACKED | (alive ? TSA_F_SURVIVOR : TSA_F_EXITED);
	t.task_start_ns = 1000 + (uint64_t)start + tid;
	t.start_ns = start * (int64_t)MS;
	t.end_ns = end * (int64_t)MS;
	t.lifetime_ns = (uint64_t)(end - start) * MS;
	t.state_ns[TSA_ST_ONCPU] = on * MS;
	t.state_ns[TSA_ST_RUNQ] = rq * MS;
	t.state_ns[TSA_ST_SLEEP] = s * MS;
	t.state_ns[TSA_ST_DISK] = d * MS;
	t.residual_ns = t.lifetime_ns - (on + rq + s + d) * MS;
	t.slices = on;
	t.voluntary = s / 10;
	t.involuntary = on / 10;
	t.wakeups = s / 10;
	return t;
}

static int64_t thread_on(const struct stream_interval *iv, uint32_t tid, int state)
{
	for (size_t i = 0; i < iv->nthreads; i++)
		if (iv->threads[i].tid == tid)
			return iv->threads[i].f.state_ns[state];
	return -1;
}

static const struct stream_thread *row(const struct stream_interval *iv, uint32_t tid)
{
	for (size_t i = 0; i < iv->nthreads; i++)
		if (iv->threads[i].tid == tid)
			return &iv->threads[i];
	return NULL;
}

/*
 * Three reads of two processes: a worker that spins then exits, a sleeper
 * asleep throughout, a thread born and gone between two reads; then the
 * closing account. Each interval holds what changed, and the sums are the
 * closing account exactly, a correction included.
 */
static void test_deltas_sum_to_the_close(void **state)
{
	struct stream *s = stream__new();
	struct stream_interval iv[3];
	/* Read 1, at 100 ms: both alive. */
	struct thread_acct r1[] = {
	    acct(10, 10, "main", true, 0, 100, 5, 0, 95, 0),
	    acct(11, 10, "worker", true, 1, 100, 90, 9, 0, 0),
	    acct(20, 20, "sleeper", true, 2, 100, 0, 0, 98, 0),
	};
	/*
	 * Read 2, at 200 ms: the worker's exit record (given first) and a
	 * snapshot of it read before it exited (ignored: the first account
	 * counts); a short thread born and gone in the interval.
	 */
	struct thread_acct r2[] = {
	    acct(11, 10, "worker", false, 1, 150, 130, 10, 9, 0),
	    acct(12, 10, "short", false, 120, 130, 10, 0, 0, 0),
	    acct(10, 10, "main", true, 0, 200, 5, 0, 195, 0),
	    acct(11, 10, "worker", true, 1, 140, 125, 10, 4, 0),
	    acct(20, 20, "sleeper", true, 2, 200, 0, 0, 198, 0),
	};
	/*
	 * The close at 250 ms: every thread; the sleeper's wakeup, stamped
	 * before read 2 saw it asleep, moves 3 ms from S to the runqueue.
	 */
	struct thread_acct fin[] = {
	    acct(10, 10, "main", false, 0, 250, 6, 0, 244, 0),
	    acct(11, 10, "worker", false, 1, 150, 130, 10, 9, 0),
	    acct(12, 10, "short", false, 120, 130, 10, 0, 0, 0),
	    acct(20, 20, "sleeper", false, 2, 250, 40, 5, 195, 8),
	};
	struct thread_acct *reads[3] = {r1, r2, fin};
	size_t nreads[3] = {3, 5, 4};
	int64_t bounds[4] = {0, 100 * MS, 200 * MS, 250 * MS};

	assert_non_null(s);
	for (int k = 0; k < 3; k++) {
		memset(&iv[k], 0, sizeof(iv[k]));
		iv[k].start_ns = bounds[k];
		iv[k].end_ns = bounds[k + 1];
		iv[k].last = k == 2;
		assert_int_equal(stream__interval(s, reads[k], nreads[k], &iv[k]), 0);
		assert_int_equal(iv[k].index, (uint64_t)k + 1);
	}
	/* 1: everything so far; ordered by pid then start; two processes. */
	assert_int_equal(iv[0].nthreads, 3);
	assert_int_equal(iv[0].threads[0].tid, 10);
	assert_int_equal(iv[0].threads[1].tid, 11);
	assert_int_equal(iv[0].threads[2].tid, 20);
	assert_int_equal(iv[0].nprocs, 2);
	assert_int_equal(iv[0].procs[0].pid, 10);
	assert_int_equal(iv[0].procs[0].threads, 2);
	assert_int_equal(iv[0].procs[0].f.state_ns[TSA_ST_ONCPU], 95 * MS);
	assert_string_equal(iv[0].procs[0].comm, "main");
	assert_int_equal(iv[0].totals.state_ns[TSA_ST_SLEEP], (95 + 98) * MS);
	assert_int_equal(iv[0].threads_born, 3);
	assert_int_equal(iv[0].threads_ended, 0);
	/* 2: the worker's end from its exit record, the short thread whole, the sleeper 100 ms of S. */
	assert_int_equal(iv[1].nthreads, 4);
	assert_int_equal(thread_on(&iv[1], 11, TSA_ST_ONCPU), 40 * MS);
	assert_int_equal(thread_on(&iv[1], 11, TSA_ST_SLEEP), 9 * MS);
	assert_false(row(&iv[1], 11)->alive);
	assert_int_equal(row(&iv[1], 11)->f.lifetime_ns, 50 * MS);
	assert_true(row(&iv[1], 12)->born);
	assert_false(row(&iv[1], 12)->alive);
	assert_false(row(&iv[1], 10)->born);
	assert_int_equal(thread_on(&iv[1], 20, TSA_ST_SLEEP), 100 * MS);
	assert_int_equal(iv[1].threads_born, 1);
	assert_int_equal(iv[1].threads_ended, 2);
	/* 3: threads that ended before bring nothing new and are left out; a correction is negative. */
	assert_int_equal(iv[2].nthreads, 2);
	assert_null(row(&iv[2], 11));
	assert_null(row(&iv[2], 12));
	assert_int_equal(thread_on(&iv[2], 20, TSA_ST_SLEEP), -3 * (int64_t)MS);
	assert_int_equal(thread_on(&iv[2], 20, TSA_ST_DISK), 8 * MS);
	/* Every figure of every thread sums to its closing account. */
	for (size_t t = 0; t < 4; t++) {
		struct stream_figures sum = {0};

		for (int k = 0; k < 3; k++) {
			const struct stream_thread *th = row(&iv[k], fin[t].tid);

			if (!th)
				continue;
			sum.lifetime_ns += th->f.lifetime_ns;
			for (int st = 0; st < TSA_ST_NR; st++)
				sum.state_ns[st] += th->f.state_ns[st];
			sum.residual_ns += th->f.residual_ns;
			sum.slices += th->f.slices;
			sum.voluntary += th->f.voluntary;
			sum.involuntary += th->f.involuntary;
			sum.wakeups += th->f.wakeups;
		}
		assert_int_equal(sum.lifetime_ns, fin[t].lifetime_ns);
		for (int st = 0; st < TSA_ST_NR; st++)
			assert_int_equal(sum.state_ns[st], fin[t].state_ns[st]);
		assert_int_equal(sum.residual_ns, fin[t].residual_ns);
		assert_int_equal(sum.slices, fin[t].slices);
		assert_int_equal(sum.voluntary, fin[t].voluntary);
		assert_int_equal(sum.involuntary, fin[t].involuntary);
		assert_int_equal(sum.wakeups, fin[t].wakeups);
	}
	/* A new run starts from nothing. */
	stream__reset(s);
	for (int k = 0; k < 3; k++)
		stream_interval__free(&iv[k]);
	memset(&iv[0], 0, sizeof(iv[0]));
	assert_int_equal(stream__interval(s, fin, 4, &iv[0]), 0);
	assert_int_equal(iv[0].index, 1);
	assert_int_equal(iv[0].nthreads, 4);
	assert_int_equal(thread_on(&iv[0], 20, TSA_ST_SLEEP), 195 * MS);
	stream_interval__free(&iv[0]);
	stream__free(s);
}

/* A thread that execs from a non-main thread takes its leader's tid: still the same thread. */
static void test_exec_keeps_identity(void **state)
{
	struct stream *s = stream__new();
	struct thread_acct a = acct(11, 10, "worker", true, 0, 100, 50, 0, 50, 0);
	struct thread_acct b = acct(10, 10, "newimage", false, 0, 150, 80, 0, 70, 0);
	struct stream_interval iv = {0};

	b.task_start_ns = a.task_start_ns;
	b.tid_before_exec = 11;
	assert_int_equal(stream__interval(s, &a, 1, &iv), 0);
	stream_interval__free(&iv);
	assert_int_equal(stream__interval(s, &b, 1, &iv), 0);
	assert_int_equal(iv.nthreads, 1);
	assert_int_equal(iv.threads[0].tid, 10);
	assert_int_equal(iv.threads[0].f.state_ns[TSA_ST_ONCPU], 30 * MS);
	stream_interval__free(&iv);
	stream__free(s);
}

/* Many threads: the table grows and keeps every one. */
static void test_many_threads(void **state)
{
	enum { N = 5000 };
	struct thread_acct *a = calloc(N, sizeof(*a));
	struct stream *s = stream__new();
	struct stream_interval iv = {0};

	for (uint32_t i = 0; i < N; i++)
		a[i] = acct(100 + i, 100, "t", true, 0, 100, 1, 0, 99, 0);
	assert_int_equal(stream__interval(s, a, N, &iv), 0);
	assert_int_equal(iv.nthreads, N);
	assert_int_equal(iv.totals.state_ns[TSA_ST_SLEEP], (int64_t)N * 99 * MS);
	stream_interval__free(&iv);
	for (uint32_t i = 0; i < N; i++)
		a[i] = acct(100 + i, 100, "t", true, 0, 200, 2, 0, 198, 0);
	iv.start_ns = 100 * MS;
	assert_int_equal(stream__interval(s, a, N, &iv), 0);
	assert_int_equal(iv.nthreads, N);
	assert_int_equal(iv.totals.state_ns[TSA_ST_ONCPU], (int64_t)N * MS);
	assert_int_equal(iv.totals.state_ns[TSA_ST_SLEEP], (int64_t)N * 99 * MS);
	assert_int_equal(iv.threads_born, 0);
	stream_interval__free(&iv);
	stream__free(s);
	free(a);
}

static void test_json_line(void **state)
{
	struct source_status src[2] = {{.name = "ebpf", .active = true},
				       {.name = "perf", .active = false, .reason = "no PMU"}};
	struct thread_acct a[2] = {acct(10, 10, "ma\"in\n", true, 0, 100, 25, 5, 70, 0),
				   acct(11, 10, "worker", false, 10, 60, 50, 0, 0, 0)};
	struct stream *s = stream__new();
	struct stream_interval iv = {
	    .run = 1,
	    .lost_records = 2,
	    .start_ns = 0,
	    .end_ns = 100 * MS,
	    .root_pid = 10,
	    .source = "ebpf",
	    .sources = src,
	    .nsources = 2,
	};
	char *line;

	a[1].residual_ns = 0;
	assert_int_equal(stream__interval(s, a, 2, &iv), 0);
	line = stream_json_line(&iv);
	assert_non_null(line);
	/* One line: the newline only at the end. */
	assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);
	assert_int_equal(golden_check("stream-line.jsonl", line), 0);
	free(line);
	stream_interval__free(&iv);

	/* procfs counts no switches or wakeups: null, and why, never 0. */
	a[0].unmeasured = ACCT_NO_SWITCHES | ACCT_NO_WAKEUPS;
	a[0].end_ns = a[0].lifetime_ns = 200 * MS;
	a[0].state_ns[TSA_ST_SLEEP] += 100 * MS;
	iv.start_ns = 100 * MS;
	iv.end_ns = 200 * MS;
	iv.source = "procfs";
	iv.lost_records = -1;
	assert_int_equal(stream__interval(s, a, 1, &iv), 0);
	line = stream_json_line(&iv);
	assert_non_null(strstr(line, "\"voluntary_switches\":null"));
	assert_non_null(strstr(line, "\"wakeups\":null"));
	assert_non_null(strstr(line, "\"sleeping_ns\":100000000"));
	assert_non_null(strstr(line, "{\"fields\":\"wakeups\",\"reason\":\"only the eBPF source "
				     "counts wakeups\"}"));
	assert_non_null(strstr(line, "\"accounting_source\":\"procfs\""));
	assert_non_null(strstr(line, "\"lost_records\":null"));
	free(line);
	stream_interval__free(&iv);

	/* Names are escaped as JSON wants; corrections are negative; percentages rounded. */
	{
		struct stream_interval j = {.start_ns = 0, .end_ns = 3000, .source = "ebpf"};
		struct stream_thread t = {.tid = 7, .pid = 7, .comm = "a\001b\\c\t", .alive = true};

		t.f.state_ns[TSA_ST_SLEEP] = -2500;
		t.f.state_ns[TSA_ST_ONCPU] = 1000; /* 33.3333...% */
		j.threads = &t;
		j.nthreads = 1;
		line = stream_json_line(&j);
		assert_non_null(strstr(line, "\"comm\":\"a\\u0001b\\\\c\\t\""));
		assert_non_null(strstr(line, "\"sleeping_ns\":-2500"));
		assert_non_null(strstr(line, "\"on_cpu_percent\":33.333}"));
		free(line);
		t.f.state_ns[TSA_ST_ONCPU] = 2000; /* 66.6666...% */
		line = stream_json_line(&j);
		assert_non_null(strstr(line, "\"on_cpu_percent\":66.667}"));
		free(line);
		/* Not UTF-8 (a command may name its threads anything): U+FFFD, strict UTF-8. */
		memcpy(t.comm, "\xed\xa0\x80\xff\xc2\x9b", 7);
		line = stream_json_line(&j);
		assert_true(fx_utf8_valid(line));
		assert_non_null(strstr(line, "\"comm\":\"\\ufffd\\ufffd\\ufffd\\ufffd\\u009b\""));
		free(line);
	}

	/* A line with no thread still says what its source cannot measure. */
	iv.source_unmeasured = ACCT_NO_WAKEUPS;
	assert_int_equal(stream__interval(s, NULL, 0, &iv), 0);
	line = stream_json_line(&iv);
	assert_non_null(strstr(line, "\"threads\":[]"));
	assert_non_null(strstr(line, "\"wakeups\":null"));
	assert_non_null(strstr(line, "\"unmeasured\":[{\"fields\":\"wakeups\""));
	free(line);
	stream_interval__free(&iv);
	iv.source_unmeasured = 0;

	/* No source sees live threads: null with the reason, not empty lists. */
	iv.source = NULL;
	iv.no_threads_reason = "taskstats reports a thread only when it exits";
	assert_int_equal(stream__interval(s, NULL, 0, &iv), 0);
	line = stream_json_line(&iv);
	assert_non_null(strstr(line, "\"accounting_source\":null"));
	assert_non_null(
	    strstr(line, "\"reason\":\"taskstats reports a thread only when it exits\""));
	assert_non_null(strstr(line, "\"threads\":null"));
	assert_non_null(strstr(line, "\"totals\":null"));
	free(line);
	stream_interval__free(&iv);
	stream__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_deltas_sum_to_the_close),
	    cmocka_unit_test(test_exec_keeps_identity),
	    cmocka_unit_test(test_many_threads),
	    cmocka_unit_test(test_json_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
