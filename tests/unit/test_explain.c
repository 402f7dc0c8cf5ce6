// SPDX-License-Identifier: MIT
/* Parts with stable names (parts.c) and the explanation of a change (explain.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "explain.h"
#include "parts.h"
#include "run.h"
#include "stats.h"

#define MS 1000000.0

static struct thread_acct thread(uint32_t tid, uint32_t pid, const char *comm, int64_t start_ms,
				 double on_ms)
{
	struct thread_acct t;

	memset(&t, 0, sizeof(t));
	t.tid = tid;
	t.pid = pid;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	t.start_ns = start_ms * 1000000;
	t.state_ns[TSA_ST_ONCPU] = (uint64_t)(on_ms * MS);
	t.state_ns[TSA_ST_SLEEP] = (uint64_t)(2 * MS);
	return t;
}

static struct proc_acct proc(uint32_t pid, uint32_t ppid, const char *comm, int64_t start_ms)
{
	struct proc_acct p;

	memset(&p, 0, sizeof(p));
	p.pid = pid;
	p.ppid = ppid;
	snprintf(p.comm, sizeof(p.comm), "%s", comm);
	p.start_ns = start_ms * 1000000;
	return p;
}

static const char *name_of(const struct run_parts *p, uint32_t i)
{
	return p->v[i].thread;
}

/* The thread part of p holding on-CPU time on_ms (the fixtures give each thread its own). */
static const char *name_with(const struct run_parts *p, double on_ms)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].kind == PART_THREAD && p->v[i].state == TSA_ST_ONCPU &&
		    p->v[i].ns == (uint64_t)(on_ms * MS))
			return name_of(p, (uint32_t)i);
	return NULL;
}

/*
 * A shell (pid p0) starts two "worker" processes; the first has two threads
 * named "t". pids are given from outside: the names must not depend on them.
 */
static struct run_parts *tree(uint32_t p0, uint32_t w1, uint32_t w2, uint32_t t1, uint32_t t2)
{
	struct thread_acct th[] = {
	    thread(p0, p0, "sh", 0, 1),	    thread(w1, w1, "worker", 1, 2),
	    thread(w2, w2, "worker", 2, 3), thread(t1, w1, "t", 3, 4),
	    thread(t2, w1, "t", 4, 5),
	};
	struct proc_acct pr[] = {proc(p0, 1, "sh", 0), proc(w1, p0, "worker", 1),
				 proc(w2, p0, "worker", 2)};
	struct run r = {0};
	struct run_parts *p;

	/* rows in an order unlike their start: the ordinal comes from the start */
	r.threads = (struct thread_acct[]){th[4], th[2], th[0], th[3], th[1]};
	r.nthreads = 5;
	r.procs = (struct proc_acct[]){pr[2], pr[0], pr[1]};
	r.nprocs = 3;
	r.root_pid = p0;
	p = run_parts__build(&r);
	assert_non_null(p);
	return p;
}

static void test_stable_names(void **state)
{
	struct run_parts *a = tree(100, 200, 300, 201, 202), *b = tree(5000, 4000, 3000, 3001, 2);

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct run_parts *p = k ? b : a;

		assert_string_equal(p->root, "sh:sh");
		assert_string_equal(name_with(p, 1), "sh:sh");
		assert_string_equal(name_with(p, 2), "sh/worker:worker");
		assert_string_equal(name_with(p, 3), "sh/worker#1:worker");
		assert_string_equal(name_with(p, 4), "sh/worker:t");
		assert_string_equal(name_with(p, 5), "sh/worker:t#1");
	}
	/* each thread: on-CPU and sleeping, nothing else */
	assert_int_equal(a->n, 10);
	assert_false(a->stacks);
	assert_false(a->bash);
	run_parts__free(a);
	run_parts__free(b);
}

/* A deterministic jitter in [-1, 1) per (seed, i, j). */
static double jitter(uint64_t seed, size_t i, size_t j)
{
	struct stats_rng r;

	stats_rng_seed(&r, seed * 1000003 + i * 7919 + j);
	return (double)(stats_rng_next(&r) >> 11) / (double)(1ull << 53) * 2 - 1;
}

/*
 * n runs of nthreads threads "t#k" (on-CPU 10 ms + k, jitter ms of noise),
 * thread `hot` with extra ms more, each with a stack part per thread (its
 * whole on-CPU time at "main;work") and one more at "main;hot" for the
 * extra. cpu (rusage) is the sum.
 */
static struct run *runs_stolen(size_t n, size_t nthreads, size_t hot, double extra, double noise,
			       uint64_t seed, double steal)
{
	struct run *r = calloc(n, sizeof(*r));

	for (size_t i = 0; i < n; i++) {
		double cpu = 0;

		r[i].index = (int)i;
		r[i].status = RUN_EXITED;
		r[i].parts = run_parts__new();
		r[i].parts->root = strdup("app:app");
		r[i].parts->stacks = true;
		for (size_t j = 0; j < nthreads; j++) {
			char name[32];
			double on = 10 + (double)j + noise * jitter(seed, i, j);
			uint64_t ns = (uint64_t)(on * MS),
				 x = j == hot ? (uint64_t)(extra * MS) : 0;
			/* on-CPU time: its CPU time and what the host took (up to steal ms) */
			uint64_t st = (uint64_t)(steal * (1 + jitter(seed + 7, i, j)) / 2 * MS);

			snprintf(name, sizeof(name), j ? "app:t#%zu" : "app:app", j);
			run_parts__add(r[i].parts, PART_THREAD, TSA_ST_ONCPU, name, NULL,
				       ns + x + st, ns + x);
			run_parts__add(r[i].parts, PART_STACK, TSA_ST_ONCPU, name, "main;work",
				       ns + st, ns);
			if (x)
				run_parts__add(r[i].parts, PART_STACK, TSA_ST_ONCPU, name,
					       "main;hot", x, x);
			cpu += on + (j == hot ? extra : 0);
		}
		r[i].ru.user_ns = (uint64_t)(cpu * MS);
		r[i].wall_ns = (uint64_t)(cpu * MS);
	}
	return r;
}

static struct run *runs(size_t n, size_t nthreads, size_t hot, double extra, double noise,
			uint64_t seed)
{
	return runs_stolen(n, nthreads, hot, extra, noise, seed, 0);
}

static void free_runs(struct run *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run__free(&r[i]);
	free(r);
}

static struct explain *explain_cpu(const struct run *b, size_t nb, const struct run *n, size_t nn)
{
	struct explain_opts o = {0};

	o.want[METRIC_CPU] = true;
	o.threshold[METRIC_CPU] = 0.05;
	return explain_compare(b, nb, n, nn, &o);
}

static void assert_adds_up(const struct explain_metric *em, int l)
{
	const struct explain_levelset *ls = &em->level[l];

	assert_true(ls->available);
	assert_true(fabs(ls->blamed_ns + ls->noise_ns + ls->remainder_ns - em->total) <
		    1e-6 * fabs(em->total) + 1);
}

static void test_known_change(void **state)
{
	struct run *b = runs(10, 4, 2, 0, 0.3, 1), *n = runs(10, 4, 2, 5, 0.3, 2);
	struct explain *e = explain_cpu(b, 10, n, 10);
	const struct explain_metric *em;
	const struct explain_levelset *th, *st;
	char line[2048];

	(void)state;
	assert_non_null(e);
	em = explain_find(e, METRIC_CPU);
	assert_non_null(em);
	assert_true(em->available && em->judged);
	assert_true(fabs(em->total - 5 * MS) < 1 * MS);
	th = &em->level[EXPLAIN_THREAD];
	assert_int_equal(th->nblamed, 1);
	assert_string_equal(th->parts[0].thread, "app:t#2");
	assert_int_equal(th->parts[0].state, TSA_ST_ONCPU);
	assert_true(th->parts[0].share > 0.8 && th->parts[0].share < 1.2);
	assert_true(th->parts[0].low > 0 && th->parts[0].p < 0.05);
	assert_adds_up(em, EXPLAIN_THREAD);
	/* Its stack: the one that grew, the other of that thread did not */
	st = &em->level[EXPLAIN_STACK];
	assert_int_equal(st->nblamed, 1);
	assert_string_equal(st->parts[0].stack, "main;hot");
	assert_adds_up(em, EXPLAIN_STACK);
	assert_adds_up(em, EXPLAIN_PROCESS);
	assert_int_equal(explain_lead_level(em), EXPLAIN_STACK);
	explain_gist(em, 3, line, sizeof(line));
	assert_non_null(strstr(line, "thread t#2 in app, on-CPU at main;hot"));
	explain__free(e);
	free_runs(b, 10);
	free_runs(n, 10);
}

/* The same distribution on both sides, 20 times over, 12 threads each: nothing blamed. */
static void test_identical_blames_nothing(void **state)
{
	size_t blamed = 0;

	(void)state;
	for (uint64_t k = 0; k < 20; k++) {
		struct run *b = runs(5, 12, 0, 0, 1.0, 100 + 2 * k),
			   *n = runs(5, 12, 0, 0, 1.0, 101 + 2 * k);
		struct explain *e = explain_cpu(b, 5, n, 5);
		const struct explain_metric *em = explain_find(e, METRIC_CPU);

		for (int l = 0; l < EXPLAIN_NLEVELS; l++)
			blamed += em->level[l].available ? em->level[l].nblamed : 0;
		assert_adds_up(em, EXPLAIN_THREAD);
		explain__free(e);
		free_runs(b, 5);
		free_runs(n, 5);
	}
	assert_int_equal(blamed, 0);
}

/*
 * A thread moved beyond its noise but maybe by less than the floor: its
 * interval excludes zero and reaches inside the floor. Not a cause: blamed
 * only with the whole interval past the floor.
 */
static void test_interval_inside_floor_not_blamed(void **state)
{
	struct run *b = runs(10, 4, 2, 0, 0.6, 1), *n = runs(10, 4, 2, 0.3, 0.6, 2);
	struct explain *e = explain_cpu(b, 10, n, 10);
	const struct explain_metric *em = explain_find(e, METRIC_CPU);
	const struct explain_part *p = NULL;
	const struct explain_levelset *th = &em->level[EXPLAIN_THREAD];

	(void)state;
	for (size_t i = 0; i < th->nparts; i++)
		if (!strcmp(th->parts[i].thread, "app:t#2"))
			p = &th->parts[i];
	assert_non_null(p);
	print_message("floor %.3f ms, change %.3f ms [%.3f, %.3f] p %.5f (corrected %.5f)\n",
		      em->floor_ns / MS, p->delta / MS, p->low / MS, p->high / MS, p->p,
		      1 - th->confidence);
	/* beyond zero, inside the floor, and the rank-sum test rejects no change */
	assert_true(p->delta >= em->floor_ns);
	assert_true(p->low > 0 && p->low < em->floor_ns);
	assert_true(p->p <= 1 - th->confidence);
	assert_false(p->blamed);
	assert_int_equal(th->nblamed, 0);
	explain__free(e);
	free_runs(b, 10);
	free_runs(n, 10);
}

/*
 * A baseline of zeros: the floor is zero too. A part at 0 in every baseline
 * run and at 1 ms in 7 of 10 new runs moved by 1 ms at the median, its
 * rank-sum test rejects no change, but its interval starts at zero: it may
 * not have moved at all, and is not blamed.
 */
static void test_zero_floor_interval_from_zero_not_blamed(void **state)
{
	struct run b[10], n[10];
	struct explain *e;
	const struct explain_metric *em;
	const struct explain_part *p;

	(void)state;
	memset(b, 0, sizeof(b));
	memset(n, 0, sizeof(n));
	for (int side = 0; side < 2; side++)
		for (int i = 0; i < 10; i++) {
			struct run *r = side ? &n[i] : &b[i];
			uint64_t ns = side && i < 7 ? (uint64_t)MS : 0;

			r->index = i;
			r->status = RUN_EXITED;
			r->parts = run_parts__new();
			assert_non_null(r->parts);
			r->parts->root = strdup("app:app");
			run_parts__add(r->parts, PART_THREAD, TSA_ST_ONCPU, "app:app", NULL, ns,
				       ns);
			r->ru.user_ns = ns;
			r->wall_ns = 2 * (uint64_t)MS;
		}
	e = explain_cpu(b, 10, n, 10);
	assert_non_null(e);
	em = explain_find(e, METRIC_CPU);
	assert_true(em->available && em->judged);
	assert_true(em->floor_ns == 0);
	assert_int_equal(em->level[EXPLAIN_THREAD].nparts, 1);
	p = &em->level[EXPLAIN_THREAD].parts[0];
	print_message("change %.3f ms [%.3f, %.3f] p %.5f (corrected %.5f)\n", p->delta / MS,
		      p->low / MS, p->high / MS, p->p, 1 - em->level[EXPLAIN_THREAD].confidence);
	assert_true(p->delta == MS);
	assert_true(p->low == 0);
	assert_true(p->p <= 1 - em->level[EXPLAIN_THREAD].confidence);
	assert_false(p->blamed);
	explain__free(e);
	for (int i = 0; i < 10; i++) {
		run__free(&b[i]);
		run__free(&n[i]);
	}
}

/* Too few runs to tell a part from noise: parts are ranked, none blamed, and it says so. */
static void test_few_runs(void **state)
{
	struct run *b = runs(2, 4, 2, 0, 0.3, 1), *n = runs(2, 4, 2, 5, 0.3, 2);
	struct explain *e = explain_cpu(b, 2, n, 2);
	const struct explain_metric *em = explain_find(e, METRIC_CPU);
	char line[512];

	(void)state;
	assert_true(em->available && !em->judged);
	assert_int_equal(em->level[EXPLAIN_THREAD].nblamed, 0);
	assert_string_equal(em->level[EXPLAIN_THREAD].parts[0].thread, "app:t#2");
	explain_gist(em, 3, line, sizeof(line));
	assert_non_null(strstr(line, "runs a side are needed"));
	explain__free(e);
	free_runs(b, 2);
	free_runs(n, 2);
}

/*
 * The host takes up to 20 ms of each thread's on-CPU time, at random (steal):
 * cpu (rusage) has none of it, so its parts must not either. The 5 ms one
 * thread added is still found, and its change is 5 ms, not 5 ms and steal.
 */
static void test_steal_is_not_cpu(void **state)
{
	struct run *b = runs_stolen(10, 4, 2, 0, 0.3, 1, 20),
		   *n = runs_stolen(10, 4, 2, 5, 0.3, 2, 20);
	struct explain *e = explain_cpu(b, 10, n, 10);
	const struct explain_metric *em = explain_find(e, METRIC_CPU);
	const struct explain_levelset *th = &em->level[EXPLAIN_THREAD];

	(void)state;
	assert_true(em->available && em->judged);
	assert_int_equal(th->nblamed, 1);
	assert_string_equal(th->parts[0].thread, "app:t#2");
	assert_true(fabs(th->parts[0].delta - 5 * MS) < 0.5 * MS);
	assert_string_equal(em->level[EXPLAIN_STACK].parts[0].stack, "main;hot");
	explain__free(e);
	free_runs(b, 10);
	free_runs(n, 10);
}

/* Runs without parts (an older artifact): not explained, with the reason. */
static void test_no_parts(void **state)
{
	struct run *b = runs(5, 2, 0, 0, 0, 1), *n = runs(5, 2, 0, 0, 0, 2);
	struct explain *e;

	(void)state;
	run_parts__free(b[3].parts);
	b[3].parts = NULL;
	e = explain_cpu(b, 5, n, 5);
	assert_false(explain_find(e, METRIC_CPU)->available);
	assert_non_null(strstr(explain_find(e, METRIC_CPU)->why, "no parts"));
	explain__free(e);
	free_runs(b, 5);
	free_runs(n, 5);
}

static void test_rank_sum(void **state)
{
	const double lo[] = {1, 2, 3, 4, 5}, hi[] = {6, 7, 8, 9, 10},
		     mix[] = {1.5, 2.5, 6.5, 7.5, 3.5};
	double p;

	(void)state;
	/* Complete separation of 5 and 5: exactly 2 / C(10, 5) = 0.0079 */
	assert_int_equal(stats_rank_sum_p(lo, 5, hi, 5, 20000, 7, &p), 0);
	assert_true(fabs(p - 2.0 / 252) < 1e-12); /* enumerated: exact */
	assert_int_equal(stats_rank_sum_p(lo, 5, mix, 5, 20000, 7, &p), 0);
	assert_true(p > 0.2);
	/* All equal (a part absent from every run): nothing to tell */
	assert_int_equal(
	    stats_rank_sum_p((double[]){0, 0, 0}, 3, (double[]){0, 0, 0}, 3, 1000, 7, &p), 0);
	assert_true(p == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stable_names),
	    cmocka_unit_test(test_known_change),
	    cmocka_unit_test(test_identical_blames_nothing),
	    cmocka_unit_test(test_interval_inside_floor_not_blamed),
	    cmocka_unit_test(test_zero_floor_interval_from_zero_not_blamed),
	    cmocka_unit_test(test_few_runs),
	    cmocka_unit_test(test_steal_is_not_cpu),
	    cmocka_unit_test(test_no_parts),
	    cmocka_unit_test(test_rank_sum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
