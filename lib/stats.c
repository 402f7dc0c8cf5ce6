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

static int cmp_double(const void *a, const void *b);

int stats_median_interval(double *x, size_t n, double confidence, double *lo, double *hi,
			  double *coverage)
{
	double *w, sum = 0, below = 0;
	size_t k = 1;

	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -EINVAL;
	qsort(x, n, sizeof(*x), cmp_double);
	/*
	 * Binomial(n, 1/2) weights relative to the middle one, so that nothing
	 * underflows where it matters (and no libm: log() is not needed).
	 */
	w = calloc(n + 1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w[n / 2] = 1;
	for (size_t i = n / 2; i > 0; i--)
		w[i - 1] = w[i] * (double)i / (double)(n - i + 1);
	for (size_t i = n / 2; i < n; i++)
		w[i + 1] = w[i] * (double)(n - i) / (double)(i + 1);
	for (size_t i = 0; i <= n; i++)
		sum += w[i];
	/* P(B < k) for k = 1 is w[0]; grow k while the next interval still covers enough. */
	below = w[0] / sum;
	while (2 * k < n && 1 - 2 * (below + w[k] / sum) >= confidence) {
		below += w[k] / sum;
		k++;
	}
	free(w);
	*lo = x[k - 1];
	*hi = x[n - k];
	*coverage = 1 - 2 * below;
	return 0;
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

/* The bootstrap both statistics share: diff (new - base) or ratio (new / base) of medians. */
static int boot_medians(const double *base, size_t nb, const double *new, size_t nn,
			const struct stats_boot_opts *o, bool diff, double *point, double *low,
			double *high)
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
	*point = diff ? stats_median_inplace(ns, nn) - stats_median_inplace(bs, nb)
		      : stats_ratio(stats_median_inplace(ns, nn), stats_median_inplace(bs, nb));

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
		rep[b] =
		    diff ? stats_median_inplace(ns, nn) - stats_median_inplace(bs, nb)
			 : stats_ratio(stats_median_inplace(ns, nn), stats_median_inplace(bs, nb));
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
	*low = rep[lo];
	*high = rep[hi];
out:
	free(rep);
	free(bs);
	free(ns);
	return ret;
}

int stats_ratio_of_medians(const double *base, size_t nb, const double *new, size_t nn,
			   const struct stats_boot_opts *o, struct stats_ratio_ci *out)
{
	return boot_medians(base, nb, new, nn, o, false, &out->ratio, &out->low, &out->high);
}

int stats_diff_of_medians(const double *base, size_t nb, const double *new, size_t nn,
			  const struct stats_boot_opts *o, struct stats_diff_ci *out)
{
	return boot_medians(base, nb, new, nn, o, true, &out->diff, &out->low, &out->high);
}

struct ranked {
	double v;
	size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return x->v < y->v ? -1 : x->v > y->v;
}

/* C(n, k), or 0 when it passes limit. */
static double choose_below(size_t n, size_t k, double limit)
{
	double c = 1;

	for (size_t i = 1; i <= k; i++) {
		c = c * (double)(n - k + i) / (double)i;
		if (c > limit)
			return 0;
	}
	return c;
}

#define RANK_SUM_EXACT 200000 /* relabellings enumerated rather than drawn, at most */

/* Every relabelling when there are few: the exact p. Returns false when there are too many. */
static bool exact_rank_sum(const double *rank, size_t n, size_t k, double mid, double obs,
			   double *p)
{
	size_t idx[64], hits = 0, total = 0;

	if (k == 0 || k >= n || k > 64 || !choose_below(n, k, RANK_SUM_EXACT))
		return false;
	for (size_t i = 0; i < k; i++)
		idx[i] = i;
	for (;;) {
		double sum = 0;
		size_t i;

		for (i = 0; i < k; i++)
			sum += rank[idx[i]];
		hits += fabs(sum - mid) >= obs - 1e-9;
		total++;
		/* the next combination in lexicographic order */
		for (i = k; i-- > 0;)
			if (idx[i] < n - k + i)
				break;
		if (i == (size_t)-1)
			break;
		idx[i]++;
		for (size_t j = i + 1; j < k; j++)
			idx[j] = idx[j - 1] + 1;
	}
	*p = (double)hits / (double)total;
	return true;
}

int stats_rank_sum_p(const double *base, size_t nb, const double *new, size_t nn,
		     unsigned resamples, uint64_t seed, double *p)
{
	size_t n = nb + nn, hits = 0;
	struct ranked *r = NULL;
	double *rank = NULL, obs = 0, mid = (double)nn * (double)(n + 1) / 2;
	struct stats_rng rng;
	int ret = 0;

	if (!valid_sample(base, nb) || !valid_sample(new, nn) || resamples < 100)
		return -EINVAL;
	r = malloc(n * sizeof(*r));
	rank = malloc(n * sizeof(*rank));
	if (!r || !rank) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		r[i].v = i < nb ? base[i] : new[i - nb];
		r[i].i = i;
	}
	qsort(r, n, sizeof(*r), cmp_ranked);
	/* Ranks from 1, ties sharing their mean rank (a part absent from some runs is 0 there). */
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && r[j].v == r[i].v; j++)
			;
		for (size_t k = i; k < j; k++)
			rank[r[k].i] = (double)(i + j + 1) / 2;
	}
	for (size_t i = nb; i < n; i++)
		obs += rank[i];
	obs = fabs(obs - mid);
	if (exact_rank_sum(rank, n, nn, mid, obs, p))
		goto out;
	stats_rng_seed(&rng, seed);
	for (unsigned b = 0; b < resamples; b++) {
		double sum = 0;

		/* A random relabelling: nn ranks drawn without replacement are "new". */
		for (size_t i = 0; i < nn; i++) {
			size_t j = i + stats_rng_below(&rng, n - i);
			double t = rank[i];

			rank[i] = rank[j];
			rank[j] = t;
			sum += rank[i];
		}
		hits += fabs(sum - mid) >= obs - 1e-9;
	}
	*p = (double)(hits + 1) / (double)(resamples + 1);
out:
	free(r);
	free(rank);
	return ret;
}
