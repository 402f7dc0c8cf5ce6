/* SPDX-License-Identifier: MIT */
/*
 * Statistics for repeated runs: the summary of one sample, and the ratio of
 * two samples' medians with a bootstrap confidence interval. Pure and
 * deterministic: the random numbers come from a generator seeded by the
 * caller (xoshiro256**, seeded through splitmix64), so a verdict can be
 * recomputed bit for bit from the values and the seed in the artifact.
 */
#ifndef TSARUN_STATS_H
#define TSARUN_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One sample. stddev is the sample standard deviation (n - 1); stddev and
 * cv are NAN when n < 2, cv also when the mean is 0.
 *
 * Outliers are counted, never dropped, by the modified z-score of Iglewicz
 * and Hoaglin: |0.6745 (x - median) / MAD| > 3.5, MAD being the median
 * absolute deviation. When more than half the values are equal the MAD is
 * 0; the mean absolute deviation takes its place (z = (x - median) /
 * (1.253314 MeanAD)), and when that is 0 too every value is the median and
 * none is an outlier.
 */
struct stats_summary {
	size_t n;
	double median;
	double mean;
	double stddev;
	double cv;
	double min;
	double max;
	double mad;
	size_t outliers;
};

/* Returns 0, or -EINVAL when n is 0 or a value is not finite. */
int stats_summarize(const double *x, size_t n, struct stats_summary *s);

/* The median of x (n > 0); x is reordered. Even n: the mean of the two middle values. */
double stats_median_inplace(double *x, size_t n);

/*
 * A distribution-free confidence interval for the median of x (n > 0): the
 * order statistics x(k) and x(n + 1 - k) with the largest k whose coverage,
 * 1 - 2 P(Binomial(n, 1/2) < k), is at least confidence. When even the
 * sample's range (k = 1) covers less (n < 6 at 95%), the range with its own
 * coverage. x is sorted. Returns 0, or -EINVAL when n is 0 or a value is not
 * finite; *coverage is the interval's exact coverage.
 */
int stats_median_interval(double *x, size_t n, double confidence, double *lo, double *hi,
			  double *coverage);

/* The deterministic generator. */
struct stats_rng {
	uint64_t s[4];
};

void stats_rng_seed(struct stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *r);
/* Uniform in [0, n), without modulo bias; n > 0. */
uint64_t stats_rng_below(struct stats_rng *r, uint64_t n);

/* The seed every verdict uses unless told otherwise ("tsarun" in ASCII). */
#define STATS_SEED	 0x747361727576ull
#define STATS_RESAMPLES	 10000
#define STATS_CONFIDENCE 0.95

struct stats_boot_opts {
	unsigned resamples; /* bootstrap replicates */
	double confidence;  /* e.g. 0.95: the 2.5th and 97.5th percentiles */
	uint64_t seed;
	/*
	 * Paired samples (run i of one side next to run i of the other, as in
	 * an interleaved job): resample the pairs, so drift that hits both
	 * sides alike cancels. Needs nb == nn.
	 */
	bool paired;
};

/*
 * A ratio of medians, new / base, defined as 1 when both medians are 0 and
 * +INFINITY when only the base is 0.
 */
double stats_ratio(double new_median, double base_median);

struct stats_ratio_ci {
	double ratio; /* of the samples' own medians */
	double low;   /* percentile bootstrap interval */
	double high;
};

/*
 * The ratio median(new) / median(base) with a percentile bootstrap
 * interval: each replicate resamples both samples with replacement
 * (independently, or by pairs when o->paired) and takes the ratio of the
 * resampled medians. Values must be finite and >= 0. Returns 0, -EINVAL on
 * bad input (empty sample, paired with unequal sizes, negative or non-finite
 * values), -ENOMEM.
 */
int stats_ratio_of_medians(const double *base, size_t nb, const double *new, size_t nn,
			   const struct stats_boot_opts *o, struct stats_ratio_ci *out);

struct stats_diff_ci {
	double diff; /* median(new) - median(base) of the samples themselves */
	double low;  /* percentile bootstrap interval, as above */
	double high;
};

/*
 * The difference median(new) - median(base), with the same bootstrap (the
 * same replicates for the same seed) and the same conditions on the input.
 */
int stats_diff_of_medians(const double *base, size_t nb, const double *new, size_t nn,
			  const struct stats_boot_opts *o, struct stats_diff_ci *out);

/*
 * The Wilcoxon-Mann-Whitney rank-sum test, two-sided, by permutation: the
 * share of relabellings of the pooled runs whose new side's rank sum is at
 * least as far from its mean as the observed one. Every relabelling when
 * there are at most 200,000 (20 runs in all: exact), else resamples random
 * ones (the generator seeded with seed), as (hits + 1) / (resamples + 1). Ties
 * share their mean rank. Exact in its size whatever the distribution, where
 * a bootstrap of a median from a handful of runs is too narrow; the
 * smallest p it can give is about 2 / C(nb + nn, nb) (0.008 for 5 and 5).
 * Values as for stats_ratio_of_medians(). Returns 0, -EINVAL, -ENOMEM.
 */
int stats_rank_sum_p(const double *base, size_t nb, const double *new, size_t nn,
		     unsigned resamples, uint64_t seed, double *p);

#endif /* TSARUN_STATS_H */
