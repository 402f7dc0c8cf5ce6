// SPDX-License-Identifier: MIT
/* Sample summaries and the bootstrap ratio of medians. */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/*
 * Wirth's selection: afterwards x[k] is the k-th smallest and every value
 * before it is no larger. Signed indices: j may step below 0.
 */
static void select_kth(double *x, size_t n, size_t k)
{
	ptrdiff_t l = 0, m = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;

	while (l < m) {
		double pivot = x[kk];
		ptrdiff_t i = l, j = m;

		do {
			while (x[i] < pivot)
				i++;
			while (pivot < x[j])
				j--;
			if (i <= j) {
				double t = x[i];

				x[i] = x[j];
				x[j] = t;
				i++;
				j--;
			}
		} while (i <= j);
		if (j < kk)
			l = i;
		if (kk < i)
			m = j;
	}
}

double stats_median_inplace(double *x, size_t n)
{
	double hi, lo;

	if (n == 1)
		return x[0];
	select_kth(x, n, n / 2);
	hi = x[n / 2];
	if (n % 2)
		return hi;
	/* The lower middle value is the largest of the lower half. */
	lo = x[0];
	for (size_t i = 1; i < n / 2; i++)
		if (x[i] > lo)
			lo = x[i];
	return lo + (hi - lo) / 2;
}

int stats_summarize(const double *x, size_t n, struct stats_summary *s)
{
	double *tmp, sum = 0, ss = 0, madsum = 0;

	memset(s, 0, sizeof(*s));
	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -EINVAL;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	s->n = n;
	s->min = s->max = x[0];
	for (size_t i = 0; i < n; i++) {
		sum += x[i];
		if (x[i] < s->min)
			s->min = x[i];
		if (x[i] > s->max)
			s->max = x[i];
	}
	s->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - s->mean) * (x[i] - s->mean);
	s->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : NAN;
	s->cv = n > 1 && s->mean != 0 ? s->stddev / fabs(s->mean) : NAN;

	memcpy(tmp, x, n * sizeof(*tmp));
	s->median = stats_median_inplace(tmp, n);
	for (size_t i = 0; i < n; i++) {
		tmp[i] = fabs(x[i] - s->median);
		madsum += tmp[i];
	}
	s->mad = stats_median_inplace(tmp, n);
	free(tmp);

	for (size_t i = 0; i < n; i++) {
		double d = fabs(x[i] - s->median), z;

		if (s->mad > 0)
			z = 0.6745 * d / s->mad;
		else if (madsum > 0)
			z = d / (1.253314 * madsum / (double)n);
		else
			z = 0;
		if (z > 3.5)
			s->outliers++;
	}
	return 0;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void stats_rng_seed(struct stats_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t stats_rng_next(struct stats_rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t stats_rng_below(struct stats_rng *r, uint64_t n)
{
	/* Rejection of the incomplete last block keeps every value equally likely. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n, v;

	do
		v = stats_rng_next(r);
	while (v >= limit);
	return v % n;
}

double stats_ratio(double new_median, double base_median)
{
	if (base_median == 0)
		return new_median == 0 ? 1.0 : INFINITY;
	return new_median / base_median;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static bool valid_sample(const double *x, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]) || x[i] < 0)
			return false;
	return true;
}

int stats_ratio_of_medians(const double *base, size_t nb, const double *new, size_t nn,
			   const struct stats_boot_opts *o, struct stats_ratio_ci *out)
{
	double *rep = NULL, *bs = NULL, *ns = NULL, alpha;
	struct stats_rng rng;
	size_t lo, hi;
	int ret = 0;

	if (!valid_sample(base, nb) || !valid_sample(new, nn) || (o->paired && nb != nn) ||
	    o->resamples < 100 || !(o->confidence > 0 && o->confidence < 1))
		return -EINVAL;
	rep = malloc(o->resamples * sizeof(*rep));
	bs = malloc(nb * sizeof(*bs));
	ns = malloc(nn * sizeof(*ns));
	if (!rep || !bs || !ns) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(bs, base, nb * sizeof(*bs));
	memcpy(ns, new, nn * sizeof(*ns));
	out->ratio = stats_ratio(stats_median_inplace(ns, nn), stats_median_inplace(bs, nb));

	stats_rng_seed(&rng, o->seed);
	for (unsigned b = 0; b < o->resamples; b++) {
		if (o->paired) {
			for (size_t i = 0; i < nb; i++) {
				size_t k = stats_rng_below(&rng, nb);

				bs[i] = base[k];
				ns[i] = new[k];
			}
		} else {
			for (size_t i = 0; i < nb; i++)
				bs[i] = base[stats_rng_below(&rng, nb)];
			for (size_t i = 0; i < nn; i++)
				ns[i] = new[stats_rng_below(&rng, nn)];
		}
		rep[b] = stats_ratio(stats_median_inplace(ns, nn), stats_median_inplace(bs, nb));
	}
	qsort(rep, o->resamples, sizeof(*rep), cmp_double);
	/* Nearest-rank percentiles: no arithmetic on the replicates, so +inf stays +inf. */
	alpha = 1 - o->confidence;
	lo = (size_t)floor(alpha / 2 * o->resamples);
	hi = (size_t)ceil((1 - alpha / 2) * o->resamples);
	if (hi > 0)
		hi--;
	if (hi >= o->resamples)
		hi = o->resamples - 1;
	out->low = rep[lo];
	out->high = rep[hi];
out:
	free(rep);
	free(bs);
	free(ns);
	return ret;
}
