// SPDX-License-Identifier: MIT
/* Where a change came from (see explain.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "gate.h"
#include "parts.h"
#include "run.h"
#include "stats.h"
#include "vec.h"

struct explain *explain__new(void)
{
	return calloc(1, sizeof(struct explain));
}

static void levelset_free(struct explain_levelset *l)
{
	for (size_t i = 0; i < l->nparts; i++) {
		free(l->parts[i].thread);
		free(l->parts[i].stack);
	}
	free(l->parts);
	l->parts = NULL;
	l->nparts = 0;
}

void explain__free(struct explain *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->n; i++) {
		for (int l = 0; l < EXPLAIN_NLEVELS; l++)
			levelset_free(&e->m[i].level[l]);
		free(e->m[i].root);
	}
	free(e);
}

const struct explain_metric *explain_find(const struct explain *e, enum metric_id m)
{
	for (int i = 0; e && i < e->n; i++)
		if (e->m[i].metric == m)
			return &e->m[i];
	return NULL;
}

const char *explain_level_name(enum explain_level l)
{
	static const char *const names[] = {"process", "thread", "stack", "bash"};

	return l < EXPLAIN_NLEVELS ? names[l] : "unknown";
}

int explain_lead_level(const struct explain_metric *em)
{
	static const int order[] = {EXPLAIN_BASH, EXPLAIN_STACK, EXPLAIN_THREAD};

	for (int i = 0; i < 3; i++)
		if (em->level[order[i]].available)
			return order[i];
	return -1;
}

/* Which states of a thread a metric counts; false: the metric is not split. */
static bool metric_states(enum metric_id m, bool st[PARTS_NSTATES], char *scope, size_t len)
{
	memset(st, 0, PARTS_NSTATES * sizeof(*st));
	switch (m) {
	case METRIC_WALL:
		for (int s = 0; s < PARTS_NSTATES; s++)
			st[s] = true;
		snprintf(scope, len, "the life of the command's first thread, in every state");
		return true;
	case METRIC_CPU:
		st[TSA_ST_ONCPU] = true;
		snprintf(scope, len,
			 "every thread's CPU time (on-CPU less steal, as rusage counts it)");
		return true;
	case METRIC_ON_CPU:
		st[TSA_ST_ONCPU] = true;
		snprintf(scope, len, "every thread's on-CPU time");
		return true;
	case METRIC_RUNQUEUE:
		st[TSA_ST_RUNQ] = true;
		snprintf(scope, len, "every thread's runqueue time");
		return true;
	case METRIC_BLOCKED:
		st[TSA_ST_SLEEP] = st[TSA_ST_DISK] = true;
		snprintf(scope, len, "every thread's sleeping (S) and uninterruptible (D) time");
		return true;
	case METRIC_UNINTERRUPTIBLE:
		st[TSA_ST_DISK] = true;
		snprintf(scope, len, "every thread's uninterruptible (D) time");
		return true;
	default:
		snprintf(scope, len, "%s is a count, not a time that threads and states split",
			 metric_def(m)->name);
		return false;
	}
}

/* One value of one part in one run of one side. */
struct obs {
	char *key; /* level-specific, "\x1f"-separated: thread, state, stack */
	int side;  /* 0 baseline, 1 new */
	size_t run;
	double v;
};

struct obsv {
	struct obs *v;
	size_t n, cap;
};

static int obs_add(struct obsv *o, const char *thread, int state, const char *stack, int side,
		   size_t run, double v)
{
	struct obs *nv;
	char st[8];
	size_t len;

	nv = vec_grow(o->v, &o->cap, o->n + 1, sizeof(*nv), 256);
	if (!nv)
		return -ENOMEM;
	o->v = nv;
	snprintf(st, sizeof(st), "%d", state);
	len = strlen(thread ? thread : "") + strlen(st) + strlen(stack ? stack : "") + 3;
	o->v[o->n].key = malloc(len);
	if (!o->v[o->n].key)
		return -ENOMEM;
	snprintf(o->v[o->n].key, len, "%s\x1f%s\x1f%s", thread ? thread : "", st,
		 stack ? stack : "");
	o->v[o->n].side = side;
	o->v[o->n].run = run;
	o->v[o->n].v = v;
	o->n++;
	return 0;
}

static void obs_free(struct obsv *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->v[i].key);
	free(o->v);
}

static int by_key(const void *a, const void *b)
{
	const struct obs *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c		    ? c
	       : x->side != y->side ? x->side - y->side
				    : (x->run > y->run) - (x->run < y->run);
}

/* The observations of one level, for the runs that count on both sides. */
static int collect(struct obsv *o, enum explain_level l, const struct run *const *runs[2],
		   const size_t nruns[2], const bool st[PARTS_NSTATES], enum metric_id m)
{
	bool cpu = m == METRIC_CPU || m == METRIC_ON_CPU;
	int ret = 0;

	for (int side = 0; side < 2; side++) {
		for (size_t k = 0; !ret && k < nruns[side]; k++) {
			const struct run_parts *p = runs[side][k]->parts;

			for (size_t i = 0; !ret && i < p->n; i++) {
				const struct part *x = &p->v[i];
				char proc[512];
				double v;

				if (l == EXPLAIN_BASH) {
					if (x->kind == PART_BASH)
						ret = obs_add(o, NULL, -1, x->stack, side, k,
							      (double)(cpu ? x->cpu_ns : x->ns));
					continue;
				}
				if (x->kind != (l == EXPLAIN_STACK ? PART_STACK : PART_THREAD) ||
				    !st[x->state])
					continue;
				/* wall: the first thread only */
				if (m == METRIC_WALL && (!p->root || strcmp(x->thread, p->root)))
					continue;
				/* cpu is rusage's: on-CPU time less steal */
				v = (double)(m == METRIC_CPU ? x->cpu_ns : x->ns);
				if (l == EXPLAIN_PROCESS) {
					snprintf(proc, sizeof(proc), "%.*s",
						 (int)strcspn(x->thread, ":"), x->thread);
					ret = obs_add(o, proc, -1, NULL, side, k, v);
				} else {
					ret = obs_add(o, x->thread, x->state,
						      l == EXPLAIN_STACK ? x->stack : NULL, side, k,
						      v);
				}
			}
		}
	}
	return ret;
}

static double median_copy(const double *x, size_t n, double *tmp)
{
	memcpy(tmp, x, n * sizeof(*x));
	return stats_median_inplace(tmp, n);
}

static int by_contribution(const void *a, const void *b, void *ctx)
{
	const struct explain_part *x = a, *y = b;
	double sign = *(const double *)ctx;

	if (x->blamed != y->blamed)
		return x->blamed ? -1 : 1;
	return sign * x->delta < sign * y->delta ? 1 : sign * x->delta > sign * y->delta ? -1 : 0;
}

/* Split the key "thread\x1fstate\x1fstack" into a part. */
static int part_from_key(struct explain_part *p, const char *key, enum explain_level l)
{
	const char *a = strchr(key, '\x1f'), *b = a ? strchr(a + 1, '\x1f') : NULL;

	memset(p, 0, sizeof(*p));
	if (!a || !b)
		return -EINVAL;
	p->state = atoi(a + 1);
	if (l != EXPLAIN_BASH && !(p->thread = strndup(key, (size_t)(a - key))))
		return -ENOMEM;
	if ((l == EXPLAIN_STACK || l == EXPLAIN_BASH) && !(p->stack = strdup(b + 1)))
		return -ENOMEM;
	if (l == EXPLAIN_PROCESS || l == EXPLAIN_BASH)
		p->state = -1;
	return 0;
}

/* Is the thread's time in that state blamed (the stack level refines only those)? */
static bool thread_blamed(const struct explain_metric *em, const char *thread, int state)
{
	const struct explain_levelset *ls = &em->level[EXPLAIN_THREAD];

	for (size_t i = 0; i < ls->nparts; i++)
		if (ls->parts[i].blamed && ls->parts[i].state == state &&
		    !strcmp(ls->parts[i].thread, thread))
			return true;
	return false;
}

/*
 * Is a part tested against its noise: enough runs, a change at the floor or
 * beyond, and at the stack level, a thread's state that is blamed itself (a
 * stack's share of a thread's time moves with where the samples fell: its
 * noise is tested once, at the thread).
 */
static bool testable(const struct explain_metric *em, enum explain_level l,
		     const struct explain_part *p)
{
	if (!em->judged || p->delta == 0 || fabs(p->delta) < em->floor_ns)
		return false;
	return l != EXPLAIN_STACK || thread_blamed(em, p->thread, p->state);
}

/*
 * Below a blamed thread's state, its stacks past the floor: what a stack's
 * rank-sum test is corrected for (the thread's own test stands for the rest).
 */
static double siblings(const struct explain_metric *em, const struct explain_levelset *ls,
		       const struct explain_part *p)
{
	size_t k = 0;

	for (size_t i = 0; i < ls->nparts; i++)
		k += ls->parts[i].state == p->state && !strcmp(ls->parts[i].thread, p->thread) &&
		     testable(em, EXPLAIN_STACK, &ls->parts[i]);
	return k ? (double)k : 1;
}

/* The values of observations ob[i..j) into bv (baseline runs) and nv (new runs). */
static void fill(const struct obsv *ob, size_t i, size_t j, double *bv, size_t nb, double *nv,
		 size_t nn)
{
	memset(bv, 0, nb * sizeof(*bv));
	memset(nv, 0, nn * sizeof(*nv));
	for (; i < j; i++)
		(ob->v[i].side ? nv : bv)[ob->v[i].run] += ob->v[i].v;
}

static int explain_level(struct explain_metric *em, enum explain_level l,
			 const struct run *const *runs[2], const size_t nruns[2],
			 const bool st[PARTS_NSTATES], const struct explain_opts *o)
{
	struct explain_levelset *ls = &em->level[l];
	struct obsv ob = {0};
	double *bv = NULL, *nv = NULL, *tmp = NULL, sign = em->total < 0 ? -1 : 1, sum = 0;
	size_t parts_cap = 0, from_cap = 0, to_cap = 0, *from = NULL, *to = NULL;
	int ret;

	ret = collect(&ob, l, runs, nruns, st, em->metric);
	if (ret)
		goto out;
	qsort(ob.v, ob.n, sizeof(*ob.v), by_key);
	bv = calloc(nruns[0] + 1, sizeof(*bv));
	nv = calloc(nruns[1] + 1, sizeof(*nv));
	tmp = calloc(nruns[0] + nruns[1] + 1, sizeof(*tmp));
	if (!bv || !nv || !tmp) {
		ret = -ENOMEM;
		goto out;
	}
	/* One part per key: its value in each run (0 where a run does not have it), medians. */
	for (size_t i = 0, j; i < ob.n; i = j) {
		struct explain_part *p, *np;
		size_t *nf, *nt;

		for (j = i; j < ob.n && !strcmp(ob.v[j].key, ob.v[i].key); j++)
			;
		np = vec_grow(ls->parts, &parts_cap, ls->nparts + 1, sizeof(*np), 32);
		if (np)
			ls->parts = np;
		nf = vec_grow(from, &from_cap, ls->nparts + 1, sizeof(*nf), 32);
		if (nf)
			from = nf;
		nt = vec_grow(to, &to_cap, ls->nparts + 1, sizeof(*nt), 32);
		if (nt)
			to = nt;
		if (!np || !nf || !nt) {
			ret = -ENOMEM;
			goto out;
		}
		p = &ls->parts[ls->nparts];
		from[ls->nparts] = i;
		to[ls->nparts] = j;
		ret = part_from_key(p, ob.v[i].key, l);
		ls->nparts++;
		if (ret)
			goto out;
		fill(&ob, i, j, bv, nruns[0], nv, nruns[1]);
		p->base = median_copy(bv, nruns[0], tmp);
		p->new = median_copy(nv, nruns[1], tmp);
		p->delta = p->new - p->base;
		p->low = p->high = NAN;
		p->p = NAN;
		ls->tested += testable(em, l, p);
		/* Every part that moved could have been the one above the floor: each counts. */
		ls->compared += em->judged && p->delta != 0 &&
				(l != EXPLAIN_STACK || thread_blamed(em, p->thread, p->state));
		sum += p->delta;
	}
	/* Each part at or above the floor: its interval at the corrected confidence. */
	ls->confidence = 1 - (1 - o->confidence) / (double)(ls->compared ? ls->compared : 1);
	for (size_t k = 0; k < ls->nparts; k++) {
		struct explain_part *p = &ls->parts[k];
		struct stats_boot_opts bo = {
		    .resamples = o->resamples, .confidence = ls->confidence, .seed = o->seed};
		struct stats_diff_ci ci;

		if (!testable(em, l, p))
			continue;
		fill(&ob, from[k], to[k], bv, nruns[0], nv, nruns[1]);
		ret = stats_diff_of_medians(bv, nruns[0], nv, nruns[1], &bo, &ci);
		if (!ret)
			ret = stats_rank_sum_p(bv, nruns[0], nv, nruns[1], o->resamples, o->seed,
					       &p->p);
		if (ret)
			goto out;
		p->low = ci.low;
		p->high = ci.high;
		/*
		 * Beyond noise, and by the floor at least: its whole interval past
		 * it, and past zero where the floor is zero (a baseline median of 0).
		 */
		p->blamed = ((ci.low > 0 && ci.low >= em->floor_ns) ||
			     (ci.high < 0 && ci.high <= -em->floor_ns)) &&
			    p->p <= (l == EXPLAIN_STACK ? (1 - o->confidence) / siblings(em, ls, p)
							: 1 - ls->confidence);
	}
	for (size_t k = 0; k < ls->nparts; k++) {
		struct explain_part *p = &ls->parts[k];

		p->share = em->total != 0 ? p->delta / em->total : NAN;
		if (p->blamed) {
			ls->nblamed++;
			ls->blamed_ns += p->delta;
		} else {
			ls->noise_ns += p->delta;
			ls->nnoise += p->delta != 0;
		}
	}
	ls->remainder_ns = em->total - sum;
	qsort_r(ls->parts, ls->nparts, sizeof(*ls->parts), by_contribution, &sign);
	ls->available = true;
out:
	obs_free(&ob);
	free(from);
	free(to);
	free(bv);
	free(nv);
	free(tmp);
	return ret;
}

/* The runs of a side that count, with their parts; why not, when some have none. */
static int counting(const struct run *r, size_t n, const struct run ***out, size_t *k,
		    bool *all_parts, bool *all_stacks, bool *all_bash)
{
	*out = calloc(n + 1, sizeof(**out));
	*k = 0;
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!metric_run_counts(&r[i]))
			continue;
		if (!r[i].parts) {
			*all_parts = false;
			continue;
		}
		*all_stacks &= r[i].parts->stacks;
		*all_bash &= r[i].parts->bash;
		(*out)[(*k)++] = &r[i];
	}
	return 0;
}

static int explain_metric(struct explain_metric *em, const struct run *const *runs[2],
			  const size_t nruns[2], bool stacks, bool bash,
			  const struct explain_opts *o)
{
	bool st[PARTS_NSTATES];
	double *v[2] = {NULL, NULL}, thr = o->threshold[em->metric];
	char why[192];
	int ret = 0;

	em->nb = nruns[0];
	em->nn = nruns[1];
	if (!metric_states(em->metric, st, em->scope, sizeof(em->scope))) {
		memcpy(em->why, em->scope, sizeof(em->why));
		em->scope[0] = '\0';
		return 0;
	}
	if (!nruns[0] || !nruns[1]) {
		snprintf(em->why, sizeof(em->why), "no run that counts on %s side has parts",
			 !nruns[0] ? "the baseline" : "the new");
		return 0;
	}
	for (int side = 0; side < 2; side++) {
		v[side] = calloc(nruns[side], sizeof(double));
		if (!v[side]) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t k = 0; k < nruns[side]; k++)
			if (metric_value(runs[side][k], em->metric, &v[side][k], why,
					 sizeof(why))) {
				snprintf(em->why, sizeof(em->why), "%s", why);
				goto out;
			}
	}
	if (em->metric == METRIC_WALL) {
		const char *root = runs[1][nruns[1] - 1]->parts->root;

		if (!root) {
			snprintf(em->why, sizeof(em->why),
				 "the command's first thread was not seen");
			goto out;
		}
		em->root = strdup(root);
		if (!em->root) {
			ret = -ENOMEM;
			goto out;
		}
	}
	em->base_median = stats_median_inplace(v[0], nruns[0]);
	em->new_median = stats_median_inplace(v[1], nruns[1]);
	em->total = em->new_median - em->base_median;
	em->floor_ns = 0.1 * (thr > 0 ? thr : GATE_DEFAULT_THRESHOLD) * em->base_median;
	em->judged = nruns[0] >= EXPLAIN_MIN_RUNS && nruns[1] >= EXPLAIN_MIN_RUNS;
	em->available = true;
	for (int l = 0; !ret && l < EXPLAIN_NLEVELS; l++) {
		struct explain_levelset *ls = &em->level[l];

		if (l == EXPLAIN_PROCESS && em->metric == METRIC_WALL) {
			snprintf(ls->why, sizeof(ls->why),
				 "wall time follows one thread: its process is that thread's");
			continue;
		}
		if (l == EXPLAIN_STACK && !stacks) {
			snprintf(ls->why, sizeof(ls->why),
				 "not every run on both sides has stacks (record both with "
				 "--stacks)");
			continue;
		}
		if (l == EXPLAIN_BASH && !bash) {
			snprintf(ls->why, sizeof(ls->why), "not a --bash profile on both sides");
			continue;
		}
		if (l == EXPLAIN_BASH && em->metric != METRIC_WALL && em->metric != METRIC_CPU &&
		    em->metric != METRIC_ON_CPU) {
			snprintf(ls->why, sizeof(ls->why),
				 "bash commands are timed in wall and CPU time only");
			continue;
		}
		ret = explain_level(em, l, runs, nruns, st, o);
	}
out:
	free(v[0]);
	free(v[1]);
	return ret;
}

struct explain *explain_compare(const struct run *b, size_t nb, const struct run *n, size_t nn,
				const struct explain_opts *o)
{
	struct explain_opts oo = *o;
	struct explain *e = explain__new();
	const struct run **runs[2] = {NULL, NULL};
	size_t nruns[2];
	bool parts = true, stacks = true, bash = true;
	int ret;

	if (!e)
		return NULL;
	if (!oo.confidence)
		oo.confidence = EXPLAIN_CONFIDENCE;
	if (!oo.seed)
		oo.seed = STATS_SEED;
	if (!oo.resamples)
		oo.resamples = EXPLAIN_RESAMPLES;
	e->confidence = oo.confidence;
	e->seed = oo.seed;
	e->resamples = oo.resamples;
	ret = counting(b, nb, &runs[0], &nruns[0], &parts, &stacks, &bash);
	if (!ret)
		ret = counting(n, nn, &runs[1], &nruns[1], &parts, &stacks, &bash);
	for (int m = 0; !ret && m < METRIC_NR; m++) {
		struct explain_metric *em;

		if (!oo.want[m])
			continue;
		em = &e->m[e->n++];
		em->metric = m;
		if (!parts) {
			snprintf(em->why, sizeof(em->why),
				 "some runs have no parts to compare (an artifact from an older "
				 "tsarun, or runs without thread rows)");
			continue;
		}
		ret =
		    explain_metric(em, (const struct run *const **)runs, nruns, stacks, bash, &oo);
	}
	free(runs[0]);
	free(runs[1]);
	if (ret) {
		explain__free(e);
		errno = -ret;
		return NULL;
	}
	return e;
}

static const char *state_label(int s)
{
	static const char *const names[PARTS_NSTATES] = {
	    "on-CPU", "runqueue", "sleeping (S)", "uninterruptible (D)", "stopped", "residual"};

	return s >= 0 && s < PARTS_NSTATES ? names[s] : "?";
}

static bool kernel_frame(const char *f, size_t len)
{
	return len >= 4 && !memcmp(f + len - 4, "_[k]", 4);
}

/* "…;a;b;c" (the innermost user frames) and the system call the kernel frames are in. */
static void short_stack(const char *stack, char *out, size_t len)
{
	const char *f[256], *sys = NULL, *firstk = NULL;
	size_t fl[256], n = 0, nu = 0, used = 0;

	for (const char *p = stack; *p && n < 256;) {
		size_t l = strcspn(p, ";");

		f[n] = p;
		fl[n] = l;
		if (!kernel_frame(p, l))
			nu = n + 1;
		else if (!firstk)
			firstk = p;
		if (kernel_frame(p, l) && !sys && (memmem(p, l, "sys_", 4)))
			sys = p;
		n++;
		p += l;
		if (*p == ';')
			p++;
	}
	out[0] = '\0';
	for (size_t i = nu > 3 ? nu - 3 : 0; i < nu && used + 1 < len; i++) {
		/* user frames come before the kernel's: any after the first kernel frame are kept too */
		if (kernel_frame(f[i], fl[i]))
			continue;
		used += (size_t)snprintf(
		    out + used, len - used, "%s%.*s",
		    i == (nu > 3 ? nu - 3 : 0) ? (nu > 3 ? "\xe2\x80\xa6;" : "") : ";", (int)fl[i],
		    f[i]);
	}
	if (used < len && (sys || firstk)) {
		const char *k = sys ? sys : firstk;
		size_t l = strcspn(k, ";");

		snprintf(out + used, len - used, "%s[k] %.*s", used ? " " : "", (int)(l - 4), k);
	}
	if (!out[0])
		snprintf(out, len, "%s", stack);
}

/* "worker#2 in sh/burn" from "sh/burn:worker#2" */
static void thread_label(const char *name, char *out, size_t len)
{
	const char *colon = strrchr(name, ':');

	if (!colon)
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%s in %.*s", colon + 1, (int)(colon - name), name);
}

const char *explain_part_label(const struct explain_part *p, enum explain_level l, char *buf,
			       size_t len)
{
	char who[600], st[400];

	switch (l) {
	case EXPLAIN_PROCESS:
		snprintf(buf, len, "process %s", p->thread);
		break;
	case EXPLAIN_THREAD:
		thread_label(p->thread, who, sizeof(who));
		snprintf(buf, len, "thread %s, %s", who, state_label(p->state));
		break;
	case EXPLAIN_STACK:
		thread_label(p->thread, who, sizeof(who));
		short_stack(p->stack, st, sizeof(st));
		snprintf(buf, len, "thread %s, %s at %s", who, state_label(p->state), st);
		break;
	case EXPLAIN_BASH: {
		const char *last = strrchr(p->stack, ';');

		/* "bash;12: f;3: sleep 0.08": the command, and where it was called from */
		if (!last)
			snprintf(buf, len, "bash %s", p->stack);
		else if (last - p->stack > 5)
			snprintf(buf, len, "bash line %s (in %.*s)", last + 1,
				 (int)(last - p->stack - 5), p->stack + 5);
		else
			snprintf(buf, len, "bash line %s", last + 1);
		break;
	}
	default:
		snprintf(buf, len, "?");
	}
	return buf;
}

static const char *fmt_signed(double ns, char *buf, size_t len)
{
	char v[32];

	gate_fmt_value(METRIC_WALL, fabs(ns), v, sizeof(v));
	snprintf(buf, len, "%s%s", ns < 0 ? "-" : "+", v);
	return buf;
}

const char *explain_part_line(const struct explain_metric *em, const struct explain_part *p,
			      enum explain_level l, char *buf, size_t len)
{
	char d[40], lab[1200];

	(void)em;
	fmt_signed(p->delta, d, sizeof(d));
	explain_part_label(p, l, lab, sizeof(lab));
	if (isnan(p->share))
		snprintf(buf, len, "%s %s", d, lab);
	else
		snprintf(buf, len, "%s (%.0f%%) %s", d, p->share * 100, lab);
	return buf;
}

const char *explain_gist(const struct explain_metric *em, int top, char *buf, size_t len)
{
	int l = explain_lead_level(em), shown = 0;
	const struct explain_levelset *ls;
	size_t used = 0;

	if (!em->available) {
		snprintf(buf, len, "not explained: %s", em->why);
		return buf;
	}
	if (l < 0) {
		snprintf(buf, len, "not explained: no level available");
		return buf;
	}
	ls = &em->level[l];
	buf[0] = '\0';
	for (size_t i = 0; i < ls->nparts && shown < top && used + 1 < len; i++) {
		char line[1400];

		if (!ls->parts[i].blamed)
			break;
		explain_part_line(em, &ls->parts[i], l, line, sizeof(line));
		used += (size_t)snprintf(buf + used, len - used, "%s%s", shown ? "; " : "", line);
		shown++;
	}
	if (!shown) {
		if (!em->judged)
			snprintf(buf, len,
				 "no part judged: %d runs a side are needed to tell a part from "
				 "noise",
				 EXPLAIN_MIN_RUNS);
		else
			snprintf(buf, len, "no part changed beyond its noise");
	}
	return buf;
}

const char *explain_remainder_name(enum metric_id m)
{
	switch (m) {
	case METRIC_WALL:
		return "remainder: outside the first thread's life, and medians that do not add";
	case METRIC_CPU:
		return "remainder: CPU time (rusage) no thread's CPU time holds, and medians "
		       "that do not add";
	default:
		return "remainder: medians that do not add";
	}
}
