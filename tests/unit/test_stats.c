// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "stats.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A normal deviate (Box-Muller) from the deterministic generator. */
static double normal(struct stats_rng *r)
{
	double u1 = ((double)(stats_rng_next(r) >> 11) + 1) / 9007199254740993.0;
	double u2 = (double)(stats_rng_next(r) >> 11) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* n run times around `center` with a log-normal spread of coefficient cv. */
static void sample(struct stats_rng *r, double *x, size_t n, double center, double cv)
{
	for (size_t i = 0; i < n; i++)
		x[i] = center * exp(cv * normal(r));
}

static void test_summary_known_values(void **state)
{
	const double x[] = {1, 2, 3, 4, 100};
	struct stats_summary s;

	assert_int_equal(stats_summarize(x, 5, &s), 0);
	assert_int_equal(s.n, 5);
	assert_true(s.median == 3);
	assert_true(s.mean == 22);
	/* sum of squares about 22: 441 + 400 + 361 + 324 + 6084 = 7610; / 4 */
	assert_true(fabs(s.stddev - sqrt(7610.0 / 4)) < 1e-12);
	assert_true(fabs(s.cv - sqrt(7610.0 / 4) / 22) < 1e-12);
	assert_true(s.min == 1 && s.max == 100);
	/* |x - 3| = 2 1 0 1 97: MAD 1; z(100) = 0.6745 * 97, z(1) = 1.35 */
	assert_true(s.mad == 1);
	assert_int_equal(s.outliers, 1);
}

/* The order statistics and their exact binomial coverage (tables of Conover, 1999). */
static void test_median_interval(void **state)
{
	double x5[] = {5, 1, 4, 2, 3}, lo, hi, cov;
	double x10[] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
	double big[2001], one[] = {7}, bad[] = {1, NAN};

	/* n = 5: only the range, 1 - 2/32. */
	assert_int_equal(stats_median_interval(x5, 5, 0.95, &lo, &hi, &cov), 0);
	assert_true(lo == 1 && hi == 5);
	assert_true(fabs(cov - 0.9375) < 1e-12);
	/* n = 10: x(2) and x(9), 1 - 2 * 11/1024; x(3), x(8) would cover 0.891 only. */
	assert_int_equal(stats_median_interval(x10, 10, 0.95, &lo, &hi, &cov), 0);
	assert_true(lo == 2 && hi == 9);
	assert_true(fabs(cov - (1 - 22.0 / 1024)) < 1e-12);
	/* Large n: about the median +- 1.96 sqrt(n)/2 ranks, no underflow. */
	for (int i = 0; i < 2001; i++)
		big[i] = 2000 - i;
	assert_int_equal(stats_median_interval(big, 2001, 0.95, &lo, &hi, &cov), 0);
	assert_true(lo >= 954 && lo <= 958 && hi == 2000 - lo);
	assert_true(cov >= 0.95 && cov < 0.96);
	assert_int_equal(stats_median_interval(one, 1, 0.95, &lo, &hi, &cov), 0);
	assert_true(lo == 7 && hi == 7 && cov == 0);
	assert_int_equal(stats_median_interval(bad, 2, 0.95, &lo, &hi, &cov), -EINVAL);
	assert_int_equal(stats_median_interval(bad, 0, 0.95, &lo, &hi, &cov), -EINVAL);
}

static void test_summary_degenerate(void **state)
{
	const double same[] = {7, 7, 7, 7};
	const double mostly[] = {5, 5, 5, 5, 9};
	const double one[] = {42};
	const double bad[] = {1, NAN};
	struct stats_summary s;

	assert_int_equal(stats_summarize(same, 4, &s), 0);
	assert_true(s.stddev == 0 && s.cv == 0 && s.mad == 0);
	assert_int_equal(s.outliers, 0);

	/* MAD 0: the mean absolute deviation (0.8) decides: z(9) = 4 / (1.2533 * 0.8) = 3.99 */
	assert_int_equal(stats_summarize(mostly, 5, &s), 0);
	assert_true(s.mad == 0);
	assert_int_equal(s.outliers, 1);

	assert_int_equal(stats_summarize(one, 1, &s), 0);
	assert_true(s.median == 42 && s.mean == 42 && s.min == 42 && s.max == 42);
	assert_true(isnan(s.stddev) && isnan(s.cv));
	assert_int_equal(s.outliers, 0);

	assert_int_equal(stats_summarize(one, 0, &s), -EINVAL);
	assert_int_equal(stats_summarize(bad, 2, &s), -EINVAL);
}

/* The selection agrees with sorting on many random arrays, duplicates included. */
static void test_median_matches_sort(void **state)
{
	struct stats_rng r;
	double x[64], sorted[64];

	stats_rng_seed(&r, 1);
	for (int trial = 0; trial < 5000; trial++) {
		size_t n = 1 + stats_rng_below(&r, 64);
		uint64_t range = 1 + stats_rng_below(&r, 20); /* small ranges: many ties */
		double want, got;

		for (size_t i = 0; i < n; i++)
			x[i] = (double)stats_rng_below(&r, range);
		memcpy(sorted, x, n * sizeof(double));
		qsort(sorted, n, sizeof(double), cmp_d);
		want = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
		got = stats_median_inplace(x, n);
		assert_true(got == want);
	}
}

/* The generator is a fixed function of the seed: verdicts are reproducible everywhere. */
static void test_rng_deterministic(void **state)
{
	struct stats_rng a, b;
	uint64_t counts[10] = {0};

	stats_rng_seed(&a, STATS_SEED);
	stats_rng_seed(&b, STATS_SEED);
	for (int i = 0; i < 1000; i++)
		assert_true(stats_rng_next(&a) == stats_rng_next(&b));
	/* xoshiro256** reference: state {1, 2, 3, 4} gives 11520, 0, 1509978240, 1215971899390074240 */
	a.s[0] = 1, a.s[1] = 2, a.s[2] = 3, a.s[3] = 4;
	assert_true(stats_rng_next(&a) == 11520ull);
	assert_true(stats_rng_next(&a) == 0ull);
	assert_true(stats_rng_next(&a) == 1509978240ull);
	assert_true(stats_rng_next(&a) == 1215971899390074240ull);
	/* Uniform below n: each of 10 values within 5% of 10,000 in 100,000 draws. */
	for (int i = 0; i < 100000; i++)
		counts[stats_rng_below(&b, 10)]++;
	for (int i = 0; i < 10; i++)
		assert_true(counts[i] > 9500 && counts[i] < 10500);
}

static const struct stats_boot_opts boot = {
    .resamples = STATS_RESAMPLES, .confidence = STATS_CONFIDENCE, .seed = STATS_SEED};

static void test_ratio_basic(void **state)
{
	const double base[] = {100, 101, 99, 100, 102, 98, 100, 100};
	double slow[8];
	struct stats_ratio_ci ci, again;
	struct stats_boot_opts paired = boot;

	assert_int_equal(stats_ratio_of_medians(base, 8, base, 8, &boot, &ci), 0);
	assert_true(ci.ratio == 1);
	assert_true(ci.low <= 1 && ci.high >= 1);
	assert_true(ci.low > 0.97 && ci.high < 1.03);

	/* Reproducible to the bit with the same seed. */
	assert_int_equal(stats_ratio_of_medians(base, 8, base, 8, &boot, &again), 0);
	assert_memory_equal(&ci, &again, sizeof(ci));

	for (int i = 0; i < 8; i++)
		slow[i] = base[i] * 1.25;
	assert_int_equal(stats_ratio_of_medians(base, 8, slow, 8, &boot, &ci), 0);
	assert_true(fabs(ci.ratio - 1.25) < 1e-12);
	assert_true(ci.low > 1.2 && ci.high < 1.3);
	/* Paired: every replicate keeps the pairs, so the ratio is exactly 1.25 each time. */
	paired.paired = true;
	assert_int_equal(stats_ratio_of_medians(base, 8, slow, 8, &paired, &ci), 0);
	assert_true(fabs(ci.low - 1.25) < 1e-12 && fabs(ci.high - 1.25) < 1e-12);
}

static void test_ratio_zero_and_bad_input(void **state)
{
	const double zero[] = {0, 0, 0}, some[] = {0, 5, 5}, neg[] = {1, -1, 2};
	const double nan[] = {1, NAN, 2};
	struct stats_ratio_ci ci;
	struct stats_boot_opts paired = boot;

	assert_int_equal(stats_ratio_of_medians(zero, 3, zero, 3, &boot, &ci), 0);
	assert_true(ci.ratio == 1 && ci.low == 1 && ci.high == 1);
	assert_int_equal(stats_ratio_of_medians(zero, 3, some, 3, &boot, &ci), 0);
	assert_true(isinf(ci.ratio) && isinf(ci.high));
	assert_true(stats_ratio(5, 0) == INFINITY && stats_ratio(0, 0) == 1);

	assert_int_equal(stats_ratio_of_medians(zero, 0, some, 3, &boot, &ci), -EINVAL);
	assert_int_equal(stats_ratio_of_medians(neg, 3, some, 3, &boot, &ci), -EINVAL);
	assert_int_equal(stats_ratio_of_medians(nan, 3, some, 3, &boot, &ci), -EINVAL);
	paired.paired = true;
	assert_int_equal(stats_ratio_of_medians(zero, 3, some, 2, &paired, &ci), -EINVAL);
}

/*
 * The property the gate relies on, on synthetic run times with a known
 * spread: same distribution on both sides (no change), 10 runs each, 5%
 * run-to-run noise, threshold 10%. The interval must almost never lie
 * wholly above 1.10 (a false failure), must cover the true ratio about 95%
 * of the time, and when the new side is 25% slower it must never lie at or
 * below 1.10 (a missed regression passing) and must lie wholly above it
 * nearly always. 400 trials of 2,000 replicates keep the test quick; the
 * bounds follow from the mechanism: 95% coverage over 400 trials has a
 * binomial standard deviation of 1.1%, and percentile intervals of
 * small-sample medians cover a little less than nominal. For detection, the
 * median of 10 runs with 5% noise has a standard error of about 2%, so the
 * ratio's is about 2.8% (0.035 at 1.25) and its interval reaches 1.10 when
 * the estimate falls about 2.4 standard errors low: about 1% of trials,
 * which the gate would report as inconclusive and measure again.
 */
static void test_ratio_false_failures_and_power(void **state)
{
	struct stats_boot_opts o = boot;
	struct stats_rng r;
	double base[10], new[10];
	int trials = 400, false_fail = 0, covered = 0, detected = 0, missed = 0;

	o.resamples = 2000;
	stats_rng_seed(&r, 12345);
	for (int t = 0; t < trials; t++) {
		struct stats_ratio_ci ci;

		sample(&r, base, 10, 1e8, 0.05);
		sample(&r, new, 10, 1e8, 0.05);
		o.seed = (uint64_t)t;
		assert_int_equal(stats_ratio_of_medians(base, 10, new, 10, &o, &ci), 0);
		false_fail += ci.low > 1.10;
		covered += ci.low <= 1 && ci.high >= 1;

		sample(&r, new, 10, 1.25e8, 0.05);
		assert_int_equal(stats_ratio_of_medians(base, 10, new, 10, &o, &ci), 0);
		detected += ci.low > 1.10;
		missed += ci.high <= 1.10;
	}
	print_message("# no change: %d false failures, coverage %.1f%%; 25%% slower: %d of %d "
		      "detected\n",
		      false_fail, 100.0 * covered / trials, detected, trials);
	assert_int_equal(false_fail, 0);
	assert_true(covered >= trials * 88 / 100 && covered <= trials * 99 / 100);
	assert_int_equal(missed, 0);
	assert_true(detected >= trials * 97 / 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_median_interval),
	    cmocka_unit_test(test_summary_known_values),
	    cmocka_unit_test(test_summary_degenerate),
	    cmocka_unit_test(test_median_matches_sort),
	    cmocka_unit_test(test_rng_deterministic),
	    cmocka_unit_test(test_ratio_basic),
	    cmocka_unit_test(test_ratio_zero_and_bad_input),
	    cmocka_unit_test(test_ratio_false_failures_and_power),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
