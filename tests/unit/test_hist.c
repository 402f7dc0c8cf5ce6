// SPDX-License-Identifier: MIT
/*
 * The off-CPU histograms' slot (bpf/hist.bpf.h): floor(log2) of a wait in
 * microseconds, computed without a branch, against the same figure found
 * by dividing and counting.
 */
#include <stdint.h>

#include "unit.h"

#include "../../bpf/tsarun.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "../../bpf/hist.bpf.h"

/* The slot the slow way: whole microseconds, their log2 by shifting, the last slot above. */
static uint32_t slot_by_division(uint64_t ns)
{
	uint64_t us = ns / 1000;
	uint32_t r = 0;

	while (us >>= 1)
		r++;
	return r < TSA_HIST_SLOTS ? r : TSA_HIST_SLOTS - 1;
}

/* Every slot starts at 1000 << k ns: one below is the slot before. */
static void test_every_boundary(void **state)
{
	(void)state;
	assert_int_equal(log2_slot(0), 0);
	assert_int_equal(log2_slot(1), 0);
	assert_int_equal(log2_slot(999), 0);
	assert_int_equal(log2_slot(1000), 0);
	assert_int_equal(log2_slot(1999), 0);
	for (unsigned k = 1; k < TSA_HIST_SLOTS; k++) {
		uint64_t at = 1000ull << k;

		assert_int_equal(log2_slot(at - 1), k - 1);
		assert_int_equal(log2_slot(at), k);
		assert_int_equal(log2_slot(at + 1), k);
	}
}

/* Waits past the last slot's start (2^31 us, about 36 minutes) all go to it. */
static void test_last_slot_holds_the_rest(void **state)
{
	(void)state;
	assert_int_equal(log2_slot(1000ull << 32), TSA_HIST_SLOTS - 1);
	assert_int_equal(log2_slot(1000ull << 40), TSA_HIST_SLOTS - 1);
	assert_int_equal(log2_slot(1000ull << 47), TSA_HIST_SLOTS - 1);
	/* A ktime difference is below 2^63: the largest is 292 years. */
	assert_int_equal(log2_slot((1ull << 63) - 1), TSA_HIST_SLOTS - 1);
}

/* Values of every magnitude agree with the slot found by dividing. */
static void test_agrees_with_division(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (int i = 0; i < 2000000; i++) {
		uint64_t ns;

		/* xorshift64, then a random magnitude: as many short waits as long ones. */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ns = (x >> 1) >> (x % 63);
		if (log2_slot(ns) != slot_by_division(ns))
			fail_msg("%llu ns: slot %u, by division %u", (unsigned long long)ns,
				 log2_slot(ns), slot_by_division(ns));
	}
	for (uint64_t ns = 0; ns < 3000000; ns += 7)
		assert_int_equal(log2_slot(ns), slot_by_division(ns));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_boundary),
	    cmocka_unit_test(test_last_slot_holds_the_rest),
	    cmocka_unit_test(test_agrees_with_division),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
