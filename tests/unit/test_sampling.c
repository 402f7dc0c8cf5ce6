// SPDX-License-Identifier: MIT
/* Folding /proc samples of a thread: exact counters, sampled states, honest gaps. */
#include <string.h>

#include "unit.h"

#include "procfs.h"
#include "run.h"
#include "sampling.h"

#define MS 1000000ull

static const struct smp_clock clk = {.ns_per_tick = 10 * MS, .boot_minus_mono_ns = 0};

static struct procfs_stat stat_of(int tid, char state, uint64_t ticks)
{
	struct procfs_stat st = {.pid = tid, .state = state, .ppid = 1, .starttime_ticks = ticks};

	strcpy(st.comm, "worker");
	return st;
}

static struct procfs_schedstat ss_of(uint64_t on_ms, uint64_t rq_ms, uint64_t slices)
{
	return (struct procfs_schedstat){on_ms * MS, rq_ms * MS, slices};
}

/* Born between two scans: counters from 0, start bounded by the scan and the tick. */
static void test_born_while_tracked(void **state)
{
	struct smp_thread t;
	struct thread_acct a;
	struct procfs_stat st = stat_of(42, 'R', 100); /* started in [1000, 1010) ms */
	struct procfs_schedstat ss = ss_of(2, 0, 1);

	smp_thread_start(&t, &st, &ss, 1008 * MS, 1004 * MS, &clk);
	t.pid = 42;
	assert_true(t.from_birth);
	assert_int_equal(t.born_lo_ns, 1004 * MS);
	assert_int_equal(t.born_hi_ns, 1008 * MS);
	/* Runs until 1018, then sleeps: sampled at 1018 (R), 1028 (S), 1038 (S). */
	ss = ss_of(12, 1, 3);
	assert_int_equal(smp_thread_sample(&t, &st, &ss, 1018 * MS), 0);
	st.state = 'S';
	assert_int_equal(smp_thread_sample(&t, &st, &ss, 1028 * MS), 0);
	assert_int_equal(smp_thread_sample(&t, &st, &ss, 1038 * MS), 0);
	assert_int_equal(t.transitions, 1);
	assert_int_equal(t.uncertainty_ns, 10 * MS);
	smp_thread_gone(&t, 1048 * MS);

	smp_thread_acct(&t, &a, 1000 * MS, &clk);
	assert_int_equal(a.source, ACCT_SRC_PROC);
	assert_true(a.have_sampled);
	/* Exact: the kernel's counters since birth. */
	assert_int_equal(a.state_ns[TSA_ST_ONCPU], 12 * MS);
	assert_int_equal(a.state_ns[TSA_ST_RUNQ], 1 * MS);
	assert_int_equal(a.slices, 3);
	/* Start: the middle of [1004, 1008]; end: the middle of the last gap [1038, 1048]. */
	assert_int_equal(a.start_ns, 6 * MS);
	assert_int_equal(a.end_ns, 43 * MS);
	assert_int_equal(a.lifetime_ns, 37 * MS);
	/* Covered: 1006..1038 = 32 ms; 13 of it runnable, the rest blocked, seen only as S. */
	assert_int_equal(a.state_ns[TSA_ST_SLEEP], 19 * MS);
	assert_int_equal(a.state_ns[TSA_ST_DISK], 0);
	assert_int_equal(a.residual_ns, 5 * MS); /* after the last read: its end is a guess */
	assert_int_equal(a.sampled.unobserved_max_ns, 10 * MS);
	assert_int_equal(a.sampled.samples, 4);
	assert_int_equal(a.sampled.max_gap_ns, 10 * MS);
	assert_int_equal(a.sampled.by_state_ns[0], 10 * MS + 5 * MS);
	assert_int_equal(a.sampled.by_state_ns[1], 5 * MS + 10 * MS);
	assert_true(a.unmeasured & ACCT_NO_SWITCHES);
	assert_true(a.unmeasured & ACCT_NO_WAKEUPS);
	assert_false(a.unmeasured & ACCT_NO_SLICES);
	assert_false(a.flags & TSA_F_SURVIVOR);
}

/* There before tracking: the first read is the base, the first state is the sample's. */
static void test_existing_thread_base(void **state)
{
	struct smp_thread t;
	struct thread_acct a;
	struct procfs_stat st = stat_of(7, 'S', 5);
	struct procfs_schedstat ss = ss_of(500, 40, 90);

	smp_thread_start(&t, &st, &ss, 2000 * MS, 0, &clk);
	t.pid = 7;
	assert_false(t.from_birth);
	ss = ss_of(510, 41, 95);
	st.state = 'D';
	smp_thread_sample(&t, &st, &ss, 2030 * MS);
	smp_thread_sample(&t, &st, &ss, 2060 * MS);
	smp_thread_acct(&t, &a, 2000 * MS, &clk);
	assert_int_equal(a.state_ns[TSA_ST_ONCPU], 10 * MS);
	assert_int_equal(a.state_ns[TSA_ST_RUNQ], 1 * MS);
	assert_int_equal(a.slices, 5);
	assert_int_equal(a.start_ns, 0);
	assert_int_equal(a.end_ns, 60 * MS); /* alive: closed at its last sample */
	assert_true(a.flags & TSA_F_SURVIVOR);
	/* 49 ms blocked: S 15 ms and D 45 ms by sample. */
	assert_int_equal(a.state_ns[TSA_ST_DISK], 49 * MS * 45 / 60);
	assert_int_equal(a.state_ns[TSA_ST_SLEEP] + a.state_ns[TSA_ST_DISK], 49 * MS);
	assert_int_equal(a.residual_ns, 0);
	assert_string_equal(a.sampled.from_birth ? "birth" : "first", "first");
}

/* A zombie's counters are final: they cover the thread to its end. */
static void test_zombie_final(void **state)
{
	struct smp_thread t;
	struct thread_acct a;
	struct procfs_stat st = stat_of(9, 'R', 0);
	struct procfs_schedstat ss = ss_of(0, 0, 0);

	smp_thread_start(&t, &st, &ss, 100 * MS, 0, &clk);
	t.pid = 9;
	ss = ss_of(10, 0, 2);
	st.state = 'Z';
	smp_thread_sample(&t, &st, &ss, 120 * MS);
	/* A later read changes nothing. */
	ss = ss_of(99, 0, 9);
	smp_thread_sample(&t, &st, &ss, 130 * MS);
	assert_true(t.ended);
	assert_true(t.final);
	smp_thread_acct(&t, &a, 100 * MS, &clk);
	assert_int_equal(a.state_ns[TSA_ST_ONCPU], 10 * MS);
	assert_int_equal(a.end_ns, 10 * MS);
	assert_int_equal(a.sampled.unobserved_max_ns, 0);
	assert_true(a.sampled.final);
	/* No sample saw it blocked: what the counters leave is residual, not a guessed state. */
	assert_int_equal(a.state_ns[TSA_ST_SLEEP], 0);
	assert_int_equal(a.residual_ns, 0);
}

/* A counter that goes back is another task under the same tid. */
static void test_counter_reset(void **state)
{
	struct smp_thread t;
	struct procfs_stat st = stat_of(5, 'R', 0);
	struct procfs_schedstat ss = ss_of(50, 5, 10);

	smp_thread_start(&t, &st, &ss, 0, 0, &clk);
	ss = ss_of(3, 0, 1);
	assert_int_equal(smp_thread_sample(&t, &st, &ss, 10 * MS), 1);
	assert_int_equal(t.cur.on_cpu_ns, 50 * MS); /* unchanged */
}

/* Counters exceeding a late start estimate: the start gives way, not the counters. */
static void test_counters_win_over_start_estimate(void **state)
{
	struct smp_thread t;
	struct thread_acct a;
	struct procfs_stat st = stat_of(11, 'R', 100);
	struct procfs_schedstat ss = ss_of(9, 0, 1);

	/* Born in [1000, 1009] by tick and scan, sampled at 1009 with 9 ms of CPU already. */
	smp_thread_start(&t, &st, &ss, 1009 * MS, 990 * MS, &clk);
	ss = ss_of(19, 0, 2);
	smp_thread_sample(&t, &st, &ss, 1019 * MS);
	smp_thread_acct(&t, &a, 0, &clk);
	assert_int_equal(a.state_ns[TSA_ST_ONCPU], 19 * MS);
	assert_true(a.lifetime_ns >= 19 * MS);
	assert_int_equal(a.end_ns - a.start_ns, (int64_t)a.lifetime_ns);
}

/*
 * Born after a scan, but with a start time from long before it: a thread that
 * exec'd has its leader's. It was born between the scans, not at that time.
 */
static void test_start_time_not_its_own(void **state)
{
	struct smp_thread t;
	struct thread_acct a;
	struct procfs_stat st = stat_of(42, 'R', 100); /* says [1000, 1010) ms */
	struct procfs_schedstat ss = ss_of(3, 1, 2);

	smp_thread_start(&t, &st, &ss, 5008 * MS, 5000 * MS, &clk);
	assert_true(t.from_birth);
	assert_int_equal(t.born_lo_ns, 5000 * MS);
	assert_int_equal(t.born_hi_ns, 5008 * MS);
	smp_thread_acct(&t, &a, 0, &clk);
	assert_int_equal(a.start_ns, 5004 * MS);
	assert_int_equal(a.lifetime_ns, 4 * MS);
	(void)state;
}

static void test_start_bounds(void **state)
{
	struct smp_clock c = {.ns_per_tick = 10 * MS, .boot_minus_mono_ns = 3 * MS};
	uint64_t lo, hi;

	smp_start_bounds(&c, 250, &lo, &hi);
	assert_int_equal(lo, 2497 * MS);
	assert_int_equal(hi, 2507 * MS - 1);
}

/*
 * Running at every sample, never switched in between, while the host took
 * 3 ms of each 10 (steal: sum_exec_runtime leaves it out): that is not
 * sleep. Then 50 ms asleep. The steal stays residual, the sleep is 50 ms.
 */
static void test_steal_is_not_sleep(void **state)
{
	struct smp_thread t;
	struct thread_acct a;
	struct procfs_stat st = stat_of(9, 'R', 5);
	struct procfs_schedstat ss = ss_of(100, 0, 10);

	smp_thread_start(&t, &st, &ss, 1000 * MS, 0, &clk);
	t.pid = 9;
	for (uint64_t i = 1; i <= 10; i++) {
		ss = ss_of(100 + 7 * i, 0, 10);
		smp_thread_sample(&t, &st, &ss, (1000 + 10 * i) * MS);
	}
	/* It slept at 1100 (its one switch-in, at the wakeup, is after). */
	st.state = 'S';
	for (uint64_t i = 1; i <= 5; i++)
		smp_thread_sample(&t, &st, &ss, (1100 + 10 * i) * MS);
	smp_thread_acct(&t, &a, 1000 * MS, &clk);
	assert_int_equal(a.state_ns[TSA_ST_ONCPU], 70 * MS);
	assert_int_equal(a.sampled.untimed_ns, 30 * MS);
	assert_int_equal(a.state_ns[TSA_ST_SLEEP], 50 * MS);
	assert_int_equal(a.residual_ns, 30 * MS);
	assert_int_equal(a.lifetime_ns, 150 * MS);
}

/*
 * Runnable but not switched in for 20 ms: run_delay has none of it until
 * the switch-in stamps it. That wait is runqueue time, not untimed.
 */
static void test_runqueue_wait_stamped_later(void **state)
{
	struct smp_thread t;
	struct thread_acct a;
	struct procfs_stat st = stat_of(11, 'R', 5);
	struct procfs_schedstat ss = ss_of(10, 0, 1);

	smp_thread_start(&t, &st, &ss, 1000 * MS, 0, &clk);
	t.pid = 11;
	/* Preempted at 1000, waits to 1020 unstamped, then runs 10 ms. */
	smp_thread_sample(&t, &st, &ss, 1010 * MS);
	smp_thread_sample(&t, &st, &ss, 1020 * MS);
	assert_int_equal(t.pending_ns, (int64_t)(20 * MS));
	ss = ss_of(20, 20, 2);
	smp_thread_sample(&t, &st, &ss, 1030 * MS);
	smp_thread_acct(&t, &a, 1000 * MS, &clk);
	assert_int_equal(a.sampled.untimed_ns, 0);
	assert_int_equal(a.state_ns[TSA_ST_RUNQ], 20 * MS);
	assert_int_equal(a.state_ns[TSA_ST_ONCPU], 10 * MS);
	assert_int_equal(a.residual_ns, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_born_while_tracked),
	    cmocka_unit_test(test_existing_thread_base),
	    cmocka_unit_test(test_zombie_final),
	    cmocka_unit_test(test_counter_reset),
	    cmocka_unit_test(test_counters_win_over_start_estimate),
	    cmocka_unit_test(test_start_time_not_its_own),
	    cmocka_unit_test(test_start_bounds),
	    cmocka_unit_test(test_steal_is_not_sleep),
	    cmocka_unit_test(test_runqueue_wait_stamped_later),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
