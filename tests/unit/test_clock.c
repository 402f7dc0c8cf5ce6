// SPDX-License-Identifier: MIT
/*
 * The runqueue clock's offset to CLOCK_MONOTONIC (bpf/clock.bpf.h), fed
 * sequences of samples: fresh ones (the clock refreshed just before the
 * sample, late by well under a microsecond) and stale ones (a refresh the
 * scheduler skipped, late by up to a tick), around a true offset that is
 * positive on some machines and negative on others.
 */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "../../bpf/tsarun.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
static __s64 clocks_unset;
#include "../../bpf/clock.bpf.h"

/* The offset as a signed number of nanoseconds. */
static int64_t offset_of(const struct tsa_cpu_clock *c)
{
	return (int64_t)c->offset;
}

/* One sample taken at runqueue clock clk, late by `late` ns, with the true offset `truth`. */
static void feed(struct tsa_cpu_clock *c, uint64_t clk, int64_t truth, uint64_t late)
{
	sample_offset(c, clk, clk + (uint64_t)truth + late);
}

/*
 * A kvm-clock guest: the scheduler's clock runs 1.38 ms ahead of
 * CLOCK_MONOTONIC, so the offset is negative. A sample 2 ms stale is past
 * zero; compared as an unsigned value it looked smaller than the true
 * (negative) offset, replaced it and stayed: every wakeup placed from it
 * came 2 ms late.
 */
static void test_negative_offset_survives_stale_samples(void **state)
{
	const int64_t truth = -1380000;
	struct tsa_cpu_clock c;
	uint64_t clk = 5000000000ull;

	(void)state;
	memset(&c, 0, sizeof(c));
	clocks_unset = 1;
	feed(&c, clk, truth, 300);
	assert_int_equal(c.sampled, 1);
	assert_int_equal(clocks_unset, 0);
	assert_int_equal(offset_of(&c), truth + 300);
	/* Stale samples, some past zero, within one window and across several. */
	for (int i = 1; i <= 400; i++) {
		clk += 100000;
		feed(&c, clk, truth, i % 2 ? 2000000 : 1500000);
		assert_true(offset_of(&c) <= truth + 300 + (int64_t)(i / 100 + 1) * 2000);
	}
	/* A fresher sample lowers it again. */
	feed(&c, clk + 1000, truth, 100);
	assert_int_equal(offset_of(&c), truth + 100);
}

/* The smallest sample of a window is the offset, whatever its sign. */
static void test_smallest_sample_wins(void **state)
{
	const int64_t truths[] = {-1380000, -500, 0, 700, 2500000};
	const uint64_t lates[] = {900, 4000000, 250, 3000000, 120, 600};

	(void)state;
	for (size_t t = 0; t < sizeof(truths) / sizeof(truths[0]); t++) {
		struct tsa_cpu_clock c;
		uint64_t clk = 1000000000ull;

		memset(&c, 0, sizeof(c));
		clocks_unset = 1;
		for (size_t i = 0; i < sizeof(lates) / sizeof(lates[0]); i++)
			feed(&c, clk += 1000, truths[t], lates[i]);
		assert_int_equal(c.sampled, 1);
		assert_int_equal(offset_of(&c), truths[t] + 120);
	}
}

/*
 * A window's smallest sample may raise the offset (the two clocks drift
 * apart), when the window has ended and by at most CLOCK_MAX_STEP_NS: a
 * window of stale samples does not move it by the staleness, and a
 * window's first sample alone, late, does not move it at all.
 */
static void test_window_raises_by_a_step(void **state)
{
	const int64_t truth = -1380000;
	struct tsa_cpu_clock c;
	uint64_t clk = 1000000000ull;

	(void)state;
	memset(&c, 0, sizeof(c));
	clocks_unset = 1;
	feed(&c, clk, truth, 100);
	/* The next window's first sample is 1.5 ms stale: not taken. */
	clk += CLOCK_WINDOW_NS;
	feed(&c, clk, truth, 1500000);
	assert_int_equal(offset_of(&c), truth + 100);
	/* Its samples stay stale to its end: one step up, no more. */
	for (int i = 0; i < 9; i++)
		feed(&c, clk += CLOCK_WINDOW_NS / 10, truth, 1400000 + i);
	assert_int_equal(offset_of(&c), truth + 100);
	feed(&c, clk += CLOCK_WINDOW_NS / 10, truth, 1600000);
	assert_int_equal(offset_of(&c), truth + 100 + (int64_t)CLOCK_MAX_STEP_NS);
	/* Real drift within a step, seen in a whole window, is followed. */
	const int64_t drift = 100 + CLOCK_MAX_STEP_NS + 1500;
	for (int i = 0; i < 10; i++)
		feed(&c, clk += CLOCK_WINDOW_NS / 10, truth, drift + (i % 3) * 700);
	assert_int_equal(offset_of(&c), truth + drift);
}

/*
 * Beside another tracer of sched_switch every sample is late by its
 * handler's cost, which varies: each window's first sample, later than
 * its smallest, must not raise the offset in use (it did, and placed that
 * window's wakeups late by the difference).
 */
static void test_window_start_does_not_raise(void **state)
{
	const int64_t truth = 700;
	struct tsa_cpu_clock c;
	uint64_t clk = 1000000000ull;

	(void)state;
	memset(&c, 0, sizeof(c));
	clocks_unset = 1;
	for (int i = 0; i < 2000; i++) {
		/* 50 samples a window; the first of each 2.9 us late, the others 1.0-1.4 us. */
		uint64_t late = i % 50 == 0 ? 2900 : 1000 + (uint64_t)(i % 5) * 100;

		feed(&c, clk += CLOCK_WINDOW_NS / 50, truth, late);
		if (i >= 50)
			assert_int_equal(offset_of(&c), truth + 1000);
	}
}

/* An offset of exactly zero is an offset, not "no sample yet". */
static void test_zero_offset_is_sampled(void **state)
{
	struct tsa_cpu_clock c;

	(void)state;
	memset(&c, 0, sizeof(c));
	clocks_unset = 2;
	feed(&c, 1000000, 0, 0);
	assert_int_equal(c.sampled, 1);
	assert_int_equal(c.offset, 0);
	assert_int_equal(clocks_unset, 1);
	/* A later sample is not taken as the first: the CPU is counted once. */
	feed(&c, 2000000, 0, 50);
	assert_int_equal(c.offset, 0);
	assert_int_equal(clocks_unset, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_negative_offset_survives_stale_samples),
	    cmocka_unit_test(test_smallest_sample_wins),
	    cmocka_unit_test(test_window_raises_by_a_step),
	    cmocka_unit_test(test_window_start_does_not_raise),
	    cmocka_unit_test(test_zero_offset_is_sampled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
