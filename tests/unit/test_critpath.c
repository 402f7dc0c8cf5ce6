// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

#include "critpath.h"
#include "fixtures.h"
#include "account.h"
#include "run.h"
#include "timeline.h"

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

/* A wakeup event (creation, or a waker outside the tree), as tl_wake() sends it. */
static void wake(struct timeline_builder *b, const struct tsa_thread *t, double at,
		 const struct tsa_thread *waker, uint32_t ctx, uint32_t flags, const char *comm)
{
	struct tsa_tl_wake w = {
	    .h = {.task_start_ns = t->task_start_ns,
		  .start_ns = T0 + (uint64_t)(at * MS),
		  .end_ns = waker ? waker->task_start_ns : 0,
		  .tid = t->tid,
		  .kind = TSA_TL_WAKE},
	    .waker_tid = waker ? waker->tid : 4242,
	    .waker_pid = waker ? waker->pid : 4242,
	    .ctx = ctx,
	    .flags = flags,
	};

	snprintf(w.comm, sizeof(w.comm), "%s", comm);
	assert_int_equal(timeline_builder__add(b, &w, sizeof(w)), 0);
}

static uint64_t on_path(const struct run_critpath *cp, uint32_t tid, int kind)
{
	uint64_t ns = 0;

	for (size_t i = 0; i < cp->ngroups; i++)
		if (cp->groups[i].tid == tid && cp->groups[i].kind == kind)
			ns += cp->groups[i].total_ns;
	return ns;
}

static void check_covers(const struct run_critpath *cp, uint64_t wall)
{
	int64_t at = 0;
	uint64_t sum = 0;

	for (size_t i = 0; i < cp->nseg; i++) {
		assert_int_equal(cp->seg[i].start_ns, at);
		at += (int64_t)cp->seg[i].dur_ns;
	}
	assert_int_equal(at, (int64_t)wall);
	for (size_t i = 0; i < cp->ngroups; i++)
		sum += cp->groups[i].total_ns;
	assert_int_equal(sum, wall);
}

/*
 * main (100) creates a (101) and b (102), joins a (woken by a's exit at
 * 6 ms: the wakeup rides in main's sleep interval) and then b (at 9 ms):
 * the path is main, b from its creation to its exit, main again. a is not on it.
 */
static void test_pool_follows_the_last_worker(void **state)
{
	struct timeline_builder *b = timeline_builder__new(100, 4096);
	struct tsa_thread t[3];
	struct run r;

	memset(&r, 0, sizeof(r));
	t[0] = fx_thread(100, 100, 99, "main", 0, 10, 2, 0.7, 7.3, 0);
	t[1] = fx_thread(101, 100, 99, "a", 0.9, 6, 5, 0.1, 0, 0);
	t[2] = fx_thread(102, 100, 99, "b", 0.95, 9, 7, 1.05, 0, 0);
	r.start_mono_ns = T0;
	r.root_pid = 100;
	r.wall_ns = 10 * MS;
	run__source(&r, "ebpf", true, NULL);
	assert_int_equal(fold_run(&r, t, 3), 0);
	add(b, &t[0], TSA_TL_ONCPU, 0, 1, 0);
	add(b, &t[0], TSA_TL_SLEEP, 1, 6, 101);
	add(b, &t[0], TSA_TL_RUNQ_WAKEUP, 6, 6.5, (uint32_t)-1);
	add(b, &t[0], TSA_TL_ONCPU, 6.5, 7, 0);
	add(b, &t[0], TSA_TL_SLEEP, 7, 9, 102);
	add(b, &t[0], TSA_TL_RUNQ_WAKEUP, 9, 9.2, (uint32_t)-1);
	add(b, &t[0], TSA_TL_ONCPU, 9.2, 10, 1);
	add(b, &t[1], TSA_TL_RUNQ_NEW, 0.9, 1, (uint32_t)-1);
	add(b, &t[1], TSA_TL_ONCPU, 1, 6, 0); /* on the CPU b waits for */
	add(b, &t[2], TSA_TL_RUNQ_NEW, 0.95, 2, (uint32_t)-1);
	add(b, &t[2], TSA_TL_ONCPU, 2, 9, 0);
	wake(b, &t[1], 0.9, &t[0], TSA_WK_TRACKED, TSA_WKF_NEW, "main");
	wake(b, &t[2], 0.95, &t[0], TSA_WK_TRACKED, TSA_WKF_NEW, "main");
	assert_int_equal(timeline_attach(&r, b, T0, 13, 0, NULL), 0);
	assert_int_equal(critpath_compute(&r), 0);
	assert_non_null(r.critpath);
	check_covers(r.critpath, r.wall_ns);
	assert_true(r.critpath->complete);
	assert_int_equal(r.critpath->jumps, 2); /* b's creation, b's exit waking main */
	assert_int_equal(on_path(r.critpath, 102, CP_ONCPU), 7 * MS);
	assert_int_equal(on_path(r.critpath, 102, CP_RUNQ), 1.05 * MS);
	assert_int_equal(on_path(r.critpath, 101, CP_ONCPU), 0);
	assert_int_equal(on_path(r.critpath, 100, CP_ONCPU), (0.95 + 0.8) * MS);
	assert_int_equal(on_path(r.critpath, 100, CP_RUNQ), 0.2 * MS);
	/* b waited for CPU 0 behind a: 1 ms of its 1.05 ms there. */
	{
		bool behind = false;

		for (size_t i = 0; i < r.critpath->ngroups; i++)
			if (r.critpath->groups[i].tid == 102 &&
			    r.critpath->groups[i].kind == CP_RUNQ)
				behind = !strcmp(r.critpath->groups[i].what, "behind a (101)");
		assert_true(behind);
	}
	/* The largest group first: b on-CPU, its what-if bound its 70% of the wall. */
	assert_int_equal(r.critpath->groups[0].tid, 102);
	assert_int_equal(r.critpath->groups[0].kind, CP_ONCPU);
	/* b's last segment ends in its wakeup of main: the edge the trace draws. */
	for (size_t i = 0; i < r.critpath->nseg; i++)
		if (r.critpath->seg[i].tid == 102 && r.critpath->seg[i].kind == CP_ONCPU) {
			assert_true(r.critpath->seg[i].woke);
			assert_int_equal(r.critpath->seg[i].next_tid, 100);
		}
	timeline_builder__free(b);
	run__free_detail(&r);
	(void)state;
}

/* Woken from outside the tree: the sleep is a segment named for the waker, the path stays. */
static void test_outside_wakers_are_named(void **state)
{
	struct timeline_builder *b = timeline_builder__new(100, 4096);
	struct tsa_thread t[1];
	struct run r;
	char label[160];

	memset(&r, 0, sizeof(r));
	t[0] = fx_thread(100, 100, 99, "dio", 0, 10, 3, 0, 1, 6);
	r.start_mono_ns = T0;
	r.root_pid = 100;
	r.wall_ns = 10 * MS;
	run__source(&r, "ebpf", true, NULL);
	assert_int_equal(fold_run(&r, t, 1), 0);
	add(b, &t[0], TSA_TL_ONCPU, 0, 1, 0);
	add(b, &t[0], TSA_TL_DISK, 1, 5, (uint32_t)-1);
	add(b, &t[0], TSA_TL_ONCPU, 5, 6, 0);
	add(b, &t[0], TSA_TL_DISK, 6, 8, (uint32_t)-1);
	add(b, &t[0], TSA_TL_ONCPU, 8, 9, 0);
	add(b, &t[0], TSA_TL_SLEEP, 9, 9.5, (uint32_t)-1); /* its waker went unrecorded */
	add(b, &t[0], TSA_TL_ONCPU, 9.5, 10, 0);
	wake(b, &t[0], 5, NULL, TSA_WK_IDLE, TSA_WKF_IOWAIT, "swapper/1");
	wake(b, &t[0], 8, NULL, TSA_WK_KTHREAD, 0, "kworker/1:2");
	assert_int_equal(timeline_attach(&r, b, T0, 9, 0, NULL), 0);
	assert_int_equal(critpath_compute(&r), 0);
	check_covers(r.critpath, r.wall_ns);
	assert_false(r.critpath->complete);
	assert_int_equal(r.critpath->unknown_ns, 0.5 * MS);
	assert_int_equal(r.critpath->jumps, 0);
	/* By time: the I/O (4 ms), its CPU (3.5 ms), the kworker (2 ms), the unknown sleep. */
	assert_int_equal(r.critpath->groups[0].kind, CP_BLOCKED);
	assert_string_equal(r.critpath->groups[0].what, "block I/O completion");
	assert_int_equal(r.critpath->groups[0].total_ns, 4 * MS);
	assert_int_equal(r.critpath->groups[0].state, TSA_ST_DISK);
	assert_int_equal(r.critpath->groups[1].kind, CP_ONCPU);
	assert_int_equal(r.critpath->groups[1].total_ns, 3.5 * MS);
	assert_string_equal(r.critpath->groups[2].what, "kworker/1:2");
	assert_int_equal(r.critpath->groups[3].kind, CP_UNKNOWN);
	critpath_group_label(&r.critpath->groups[0], label, sizeof(label));
	assert_string_equal(label, "block I/O completion (dio 100, D)");
	timeline_builder__free(b);
	run__free_detail(&r);
	(void)state;
}

static void test_irq_names(void **state)
{
	const char *timer[] = {"bpf_trace_run1_[k]", "try_to_wake_up_[k]", "hrtimer_wakeup_[k]",
			       "__hrtimer_run_queues_[k]"};
	const char *blk[] = {"try_to_wake_up_[k]", "blk_mq_end_request_[k]", "virtblk_done_[k]"};
	const char *soft[] = {"try_to_wake_up_[k]", "handle_softirqs_[k]"};
	const char *other[] = {"try_to_wake_up_[k]", "something_[k]"};

	assert_string_equal(timeline_irq_name(timer, 4, false), "timer");
	assert_string_equal(timeline_irq_name(blk, 3, false), "block I/O completion");
	assert_string_equal(timeline_irq_name(soft, 2, false), "softirq");
	assert_string_equal(timeline_irq_name(other, 2, true), "block I/O completion");
	assert_string_equal(timeline_irq_name(other, 2, false), "interrupt");
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pool_follows_the_last_worker),
	    cmocka_unit_test(test_outside_wakers_are_named),
	    cmocka_unit_test(test_irq_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
