// SPDX-License-Identifier: MIT
#include <string.h>

#include "unit.h"

#include "fixtures.h"
#include "account.h"
#include "run.h"

static void fold(struct run *r, struct tsa_thread *recs, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->start_mono_ns = T0;
	assert_int_equal(fold_run(r, recs, n), 0);
}

static void test_one_thread_closes(void **state)
{
	struct tsa_thread t = fx_thread(100, 100, 1, "main", 0, 500, 300, 20, 170, 5);
	struct run r;

	fold(&r, &t, 1);
	assert_int_equal(r.nthreads, 1);
	assert_int_equal(r.threads[0].lifetime_ns, 500 * MS);
	assert_int_equal(r.threads[0].residual_ns, 5 * MS); /* 500 - (300 + 20 + 170 + 5) */
	assert_true(r.threads[0].first_state_known);
	assert_int_equal(r.totals.threads, 1);
	assert_int_equal(r.totals.processes, 1);
	assert_int_equal(r.totals.state_ns[TSA_ST_ONCPU], 300 * MS);
	assert_int_equal(r.totals.residual_ns, 5 * MS);
	assert_true(r.quality.residual_percent > 0.99 && r.quality.residual_percent < 1.01);
	assert_int_equal(r.threads[0].start_ns, 0);
	assert_int_equal(r.threads[0].end_ns, 500 * MS);
	run__free_detail(&r);
}

static void test_exit_record_wins_over_survivor(void **state)
{
	struct tsa_thread t[2];
	struct run r;

	t[0] = fx_thread(100, 100, 1, "main", 0, 200, 100, 0, 100, 0);
	t[0].flags |= TSA_F_SURVIVOR;
	t[1] = fx_thread(100, 100, 1, "main", 0, 500, 300, 0, 200, 0);
	t[1].task_start_ns = t[0].task_start_ns; /* the same thread */
	fold(&r, t, 2);
	assert_int_equal(r.nthreads, 1);
	assert_int_equal(r.threads[0].lifetime_ns, 500 * MS);
	assert_false(r.threads[0].flags & TSA_F_SURVIVOR);
	run__free_detail(&r);
}

static void test_tid_reuse_keeps_threads_apart(void **state)
{
	struct tsa_thread t[3];
	struct run r;

	t[0] = fx_thread(100, 100, 1, "main", 0, 900, 100, 0, 800, 0);
	t[1] = fx_thread(101, 100, 1, "worker", 10, 20, 10, 0, 0, 0);
	t[2] = fx_thread(101, 100, 1, "worker", 30, 40, 10, 0, 0, 0); /* tid 101 again */
	fold(&r, t, 3);
	assert_int_equal(r.nthreads, 3);
	assert_int_equal(r.nprocs, 1);
	assert_int_equal(r.procs[0].threads, 3);
	assert_int_equal(r.totals.max_threads_alive, 2);
	run__free_detail(&r);
}

static void test_processes_and_pid_reuse(void **state)
{
	struct tsa_thread t[4];
	struct run r;

	t[0] = fx_thread(100, 100, 1, "sh", 0, 100, 10, 0, 90, 0);
	t[0].flags |= TSA_F_GROUP_DEAD;
	t[0].exit_status = 3 << 8;
	t[1] = fx_thread(200, 200, 100, "child", 5, 30, 10, 0, 15, 0);
	t[1].flags |= TSA_F_GROUP_DEAD;
	t[1].exit_status = 9;						/* SIGKILL */
	t[2] = fx_thread(200, 200, 100, "again", 40, 60, 10, 0, 10, 0); /* pid 200 reused */
	t[2].flags |= TSA_F_GROUP_DEAD;
	t[3] = fx_thread(201, 200, 100, "again-t", 45, 55, 10, 0, 0, 0);
	fold(&r, t, 4);
	assert_int_equal(r.nprocs, 3);
	assert_int_equal(r.procs[0].pid, 100);
	assert_true(r.procs[0].exited);
	assert_int_equal(r.procs[0].exit_status, 3 << 8);
	assert_int_equal(r.procs[1].pid, 200);
	assert_string_equal(r.procs[1].comm, "child");
	assert_int_equal(r.procs[1].exit_status, 9);
	assert_int_equal(r.procs[1].threads, 1);
	assert_int_equal(r.procs[2].pid, 200);
	assert_string_equal(r.procs[2].comm, "again");
	assert_int_equal(r.procs[2].threads, 2);
	assert_int_equal(r.procs[2].ppid, 100);
	run__free_detail(&r);
}

static void test_lost_records_still_count(void **state)
{
	struct tsa_thread t = fx_thread(100, 100, 1, "main", 0, 100, 50, 0, 50, 0);
	struct run r;

	memset(&r, 0, sizeof(r));
	r.start_mono_ns = T0;
	r.quality.lost.records = 2;
	r.quality.lost.lifetime_ns = 30 * MS;
	r.quality.lost.state_ns[TSA_ST_ONCPU] = 25 * MS;
	assert_int_equal(fold_run(&r, &t, 1), 0);
	assert_int_equal(r.nthreads, 1);
	assert_int_equal(r.totals.threads, 3);
	assert_int_equal(r.totals.state_ns[TSA_ST_ONCPU], 75 * MS);
	assert_int_equal(r.totals.residual_ns, 5 * MS);
	assert_false(r.quality.tree_cpu.available);
	run__free_detail(&r);
}

static void test_cross_check(void **state)
{
	struct tsa_thread t[3];
	struct run r;

	t[0] = fx_thread(100, 100, 1, "main", 0, 1000, 500, 100, 400, 0);
	/* The kernel saw 10 ms less runnable time: 1% of the thread's life. */
	t[0].kend[TSA_K_SUM_EXEC] -= 10 * MS;
	t[1] = fx_thread(101, 100, 1, "w", 0, 100, 50, 10, 40, 0);
	/* Steal is part of on-CPU and not of sum_exec_runtime: no disagreement. */
	t[1].steal_ns = 4 * MS;
	t[1].kend[TSA_K_SUM_EXEC] -= 4 * MS;
	/* Too short to compare one by one, however wrong. */
	t[2] = fx_thread(102, 100, 1, "short", 0, 0.1, 0.05, 0, 0.05, 0);
	t[2].kend[TSA_K_SUM_EXEC] = 0;
	t[2].kend[TSA_K_PCOUNT] = 9;
	fold(&r, t, 3);
	assert_true(r.quality.runnable.available);
	assert_int_equal(r.quality.runnable.compared, 2);
	assert_int_equal(r.quality.runnable.short_lived, 1);
	assert_int_equal(r.quality.runnable.worst_tid, 100);
	assert_true(r.quality.runnable.worst > 0.0099 && r.quality.runnable.worst < 0.0101);
	assert_int_equal(r.quality.runnable.worst_abs, 10 * MS);
	/* Counts are compared for every thread. */
	assert_int_equal(r.quality.slices.compared, 3);
	assert_int_equal(r.quality.slices.worst_tid, 102);
	assert_int_equal(r.quality.slices.worst_abs, 1);
	/* The kernel's shift: sum_exec - (on - steal) = -10 ms - 0.05 ms. */
	assert_int_equal(r.quality.kernel_shift_ns, -(int64_t)(10 * MS) - (int64_t)(0.05 * MS));
	run__free_detail(&r);
}

/*
 * A task preempted while its state already says it is going to sleep is
 * left on the runqueue without a queue stamp: it waits like any other, the
 * runqueue time counts the wait, and the kernel's run_delay never does.
 */
static void test_unstamped_waits_left_out_of_the_comparison(void **state)
{
	struct tsa_thread t[2];
	struct run r;

	t[0] = fx_thread(100, 100, 1, "main", 0, 1000, 500, 100, 400, 0);
	t[0].unstamped = 2;
	t[0].unstamped_wait_ns = 8 * MS;
	t[0].kend[TSA_K_RUN_DELAY] -= 8 * MS;
	/* More than the thread's runqueue time cannot have been left out. */
	t[1] = fx_thread(101, 100, 1, "w", 0, 100, 50, 10, 40, 0);
	t[1].unstamped_wait_ns = 30 * MS;
	t[1].kend[TSA_K_RUN_DELAY] = 0;
	fold(&r, t, 2);
	assert_int_equal(r.threads[0].state_ns[TSA_ST_RUNQ], 100 * MS);
	assert_int_equal(r.threads[0].unstamped_wait_ns, 8 * MS);
	assert_int_equal(r.threads[1].unstamped_wait_ns, 10 * MS);
	assert_int_equal(r.quality.unstamped_wait_ns, 18 * MS);
	assert_int_equal(r.quality.runnable.compared, 2);
	assert_int_equal(r.quality.runnable.worst_abs, 0);
	assert_int_equal(r.quality.runqueue.worst_abs, 0);
	assert_int_equal(r.quality.runqueue.sum_ebpf, r.quality.runqueue.sum_kernel);
	run__free_detail(&r);
}

/*
 * Where the kernel's clock lagged a switch, it moved the lag from the thread
 * switched out to the one switched in: the comparisons take its counters as
 * they would be without it, and the check then holds on every part.
 */
static void test_kernel_clock_lag_taken_into_account(void **state)
{
	struct tsa_thread t[2];
	struct run r;

	/* a: preempted once with a 3 ms lag, blocked once with a 2 ms lag. */
	t[0] = fx_thread(100, 100, 1, "a", 0, 1000, 500, 100, 400, 0);
	t[0].klag_out_run_ns = 3 * MS;
	t[0].klag_out_blocked_ns = 2 * MS;
	t[0].klag_switches = 2;
	t[0].kend[TSA_K_SUM_EXEC] -= 5 * MS;  /* its CPU time stopped at the lagging clock */
	t[0].kend[TSA_K_RUN_DELAY] += 3 * MS; /* and its wait after the preemption began there */
	/* b: switched in at both, its CPU time started and its waits ended there. */
	t[1] = fx_thread(101, 100, 1, "b", 0, 1000, 500, 100, 400, 0);
	t[1].klag_in_ns = 5 * MS;
	t[1].klag_switches = 2;
	t[1].kend[TSA_K_SUM_EXEC] += 5 * MS;
	t[1].kend[TSA_K_RUN_DELAY] -= 5 * MS;
	fold(&r, t, 2);
	assert_int_equal(r.quality.on_cpu.compared, 2);
	assert_int_equal(r.quality.on_cpu.worst_abs, 0);
	assert_int_equal(r.quality.runqueue.worst_abs, 0);
	assert_int_equal(r.quality.runnable.worst_abs, 0);
	assert_int_equal(r.quality.klag_ns, 10 * MS);
	assert_int_equal(r.quality.klag_switches, 4);
	/* The shift is what the kernel's counters say, lag and all. */
	assert_int_equal(r.quality.kernel_shift_ns, 0);
	run__free_detail(&r);

	/* Without the lag noted, the same counters disagree by it. */
	t[0].klag_out_run_ns = t[0].klag_out_blocked_ns = t[1].klag_in_ns = 0;
	fold(&r, t, 2);
	assert_int_equal(r.quality.on_cpu.worst_abs, 5 * MS);
	assert_int_equal(r.quality.runnable.worst_abs, 2 * MS);
	run__free_detail(&r);
}

static void test_tree_check_needs_enough_cpu(void **state)
{
	struct tsa_thread t = fx_thread(100, 100, 1, "main", 0, 100, 5, 0, 95, 0);
	struct run r;

	memset(&r, 0, sizeof(r));
	r.start_mono_ns = T0;
	r.ru.user_ns = 5 * MS;
	assert_int_equal(fold_run(&r, &t, 1), 0);
	assert_false(r.quality.tree_cpu.available);
	assert_non_null(strstr(r.quality.tree_cpu.reason, "10 ms"));
	run__free_detail(&r);

	t = fx_thread(100, 100, 1, "main", 0, 100, 50, 0, 50, 0);
	memset(&r, 0, sizeof(r));
	r.start_mono_ns = T0;
	r.ru.user_ns = 40 * MS;
	r.ru.sys_ns = 10 * MS;
	assert_int_equal(fold_run(&r, &t, 1), 0);
	assert_true(r.quality.tree_cpu.available);
	assert_true(r.quality.tree_cpu.total < 1e-9);
	run__free_detail(&r);
}

/* rusage against the kernel's counters of the threads eBPF saw, both ways. */
static void test_tree_check_finds_unseen_threads(void **state)
{
	struct tsa_thread t = fx_thread(100, 100, 1, "main", 0, 100, 50, 0, 50, 0);
	struct run r;

	memset(&r, 0, sizeof(r));
	r.start_mono_ns = T0;
	r.ru.user_ns = 60 * MS; /* 10 ms of CPU no seen thread accounts for */
	assert_int_equal(fold_run(&r, &t, 1), 0);
	assert_true(r.quality.tree_cpu.available);
	assert_true(r.quality.tree_cpu.unseen > 0.166 && r.quality.tree_cpu.unseen < 0.167);
	assert_int_equal(r.quality.tree_cpu.excess_ns, 0);
	run__free_detail(&r);

	memset(&r, 0, sizeof(r));
	r.start_mono_ns = T0;
	r.ru.user_ns = 48 * MS; /* rusage left out the end of the thread's exit */
	assert_int_equal(fold_run(&r, &t, 1), 0);
	assert_true(r.quality.tree_cpu.unseen == 0.0);
	assert_int_equal(r.quality.tree_cpu.excess_ns, 2 * MS);
	run__free_detail(&r);
}

/* Many threads in shuffled order, one seen twice: ordered by start, kept once. */
static void test_order_and_dedupe_in_place(void **state)
{
	enum { N = 1000 };
	struct tsa_thread *t = calloc(N + 1, sizeof(*t));
	struct run r;

	for (int i = 0; i < N; i++) {
		int k = (i * 7919) % N; /* a permutation of 0..N-1 */

		t[i] =
		    fx_thread(1000 + (uint32_t)k, 1000, 1, "w", k * 0.5, k * 0.5 + 1, 1, 0, 0, 0);
	}
	t[N] = t[17];
	t[N].flags |= TSA_F_SURVIVOR;
	t[N].end_ns += 5 * MS;
	fold(&r, t, N + 1);
	assert_int_equal(r.nthreads, N);
	for (size_t i = 0; i < r.nthreads; i++) {
		assert_int_equal(r.threads[i].tid, 1000 + i);
		assert_false(r.threads[i].flags & TSA_F_SURVIVOR);
	}
	free(t);
	run__free_detail(&r);
}

static void test_survivors_are_not_in_rusage(void **state)
{
	struct tsa_thread t = fx_thread(100, 100, 1, "daemon", 0, 100, 50, 0, 50, 0);
	struct run r;

	t.flags |= TSA_F_SURVIVOR;
	fold(&r, &t, 1);
	assert_false(r.quality.tree_cpu.available);
	assert_true(r.procs[0].alive);
	run__free_detail(&r);
}

/* Throttled time is part of the runqueue time: never more than it, summed in the totals. */
static void test_throttled_is_part_of_runqueue(void **state)
{
	struct tsa_thread t[2] = {
	    fx_thread(100, 100, 1, "main", 0, 500, 300, 20, 170, 5),
	    fx_thread(101, 100, 1, "worker", 0, 500, 300, 40, 150, 5),
	};
	struct run r;

	t[0].throttled_ns = 15 * MS;
	t[1].throttled_ns = 50 * MS; /* more than its runqueue time: cannot be */
	fold(&r, t, 2);
	assert_int_equal(r.threads[0].throttled_ns, 15 * MS);
	assert_int_equal(r.threads[1].throttled_ns, 40 * MS);
	assert_int_equal(r.totals.throttled_ns, 55 * MS);
	assert_int_equal(r.totals.state_ns[TSA_ST_RUNQ], 60 * MS);
	run__free_detail(&r);
}

/* RT-throttled time too, and the two kinds together never exceed the runqueue time. */
static void test_rt_throttled_is_part_of_runqueue(void **state)
{
	struct tsa_thread t[2] = {
	    fx_thread(100, 100, 1, "main", 0, 500, 300, 20, 170, 5),
	    fx_thread(101, 100, 1, "worker", 0, 500, 300, 40, 150, 5),
	};
	struct run r;

	t[0].rt_throttled_ns = 12 * MS;
	t[1].throttled_ns = 30 * MS;
	t[1].rt_throttled_ns = 30 * MS; /* with throttled_ns, more than its runqueue time */
	fold(&r, t, 2);
	assert_int_equal(r.threads[0].rt_throttled_ns, 12 * MS);
	assert_int_equal(r.threads[0].throttled_ns, 0);
	assert_int_equal(r.threads[1].throttled_ns, 30 * MS);
	assert_int_equal(r.threads[1].rt_throttled_ns, 10 * MS);
	assert_int_equal(r.totals.rt_throttled_ns, 22 * MS);
	assert_int_equal(r.totals.throttled_ns, 30 * MS);
	run__free_detail(&r);
}

static void test_empty(void **state)
{
	struct run r;

	fold(&r, NULL, 0);
	assert_int_equal(r.nthreads, 0);
	assert_int_equal(r.nprocs, 0);
	assert_false(r.quality.runnable.available);
	run__free_detail(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_thread_closes),
	    cmocka_unit_test(test_exit_record_wins_over_survivor),
	    cmocka_unit_test(test_tid_reuse_keeps_threads_apart),
	    cmocka_unit_test(test_processes_and_pid_reuse),
	    cmocka_unit_test(test_lost_records_still_count),
	    cmocka_unit_test(test_cross_check),
	    cmocka_unit_test(test_kernel_clock_lag_taken_into_account),
	    cmocka_unit_test(test_unstamped_waits_left_out_of_the_comparison),
	    cmocka_unit_test(test_tree_check_needs_enough_cpu),
	    cmocka_unit_test(test_tree_check_finds_unseen_threads),
	    cmocka_unit_test(test_order_and_dedupe_in_place),
	    cmocka_unit_test(test_survivors_are_not_in_rusage),
	    cmocka_unit_test(test_throttled_is_part_of_runqueue),
	    cmocka_unit_test(test_rt_throttled_is_part_of_runqueue),
	    cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests_name("account", tests, NULL, NULL);
}
