// SPDX-License-Identifier: MIT
/* The accounting fold. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"

double fold_frac(uint64_t a, uint64_t b, uint64_t base)
{
	uint64_t d = a > b ? a - b : b - a;

	return base ? (double)d / (double)base : 0.0;
}

/* Index sorts: arg is the array the indices are into. */
static int cmp_identity(const void *pa, const void *pb, void *arg)
{
	const struct thread_acct *threads = arg;
	const struct thread_acct *a = &threads[*(const size_t *)pa];
	const struct thread_acct *b = &threads[*(const size_t *)pb];

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->task_start_ns != b->task_start_ns)
		return a->task_start_ns < b->task_start_ns ? -1 : 1;
	/* Exit records before survivor snapshots of the same thread. */
	return (int)(a->flags & TSA_F_SURVIVOR) - (int)(b->flags & TSA_F_SURVIVOR);
}

static int cmp_start(const void *pa, const void *pb, void *arg)
{
	const struct thread_acct *threads = arg;
	const struct thread_acct *a = &threads[*(const size_t *)pa];
	const struct thread_acct *b = &threads[*(const size_t *)pb];

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

void fold_convert(struct thread_acct *t, const struct tsa_thread *s, uint64_t origin)
{
	uint64_t sum = 0;

	memset(t, 0, sizeof(*t));
	t->tid = s->tid;
	t->tid_before_exec = s->tid_before_exec;
	t->pid = s->pid;
	t->ppid = s->ppid;
	t->flags = s->flags;
	memcpy(t->comm, s->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
	t->start_ns = (int64_t)(s->start_ns - origin);
	t->end_ns = (int64_t)(s->end_ns - origin);
	t->task_start_ns = s->task_start_ns;
	t->boot_start_ns = s->boot_start_ns;
	t->lifetime_ns = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	for (int i = 0; i < TSA_ST_NR; i++) {
		t->state_ns[i] = s->state_ns[i];
		sum += s->state_ns[i];
	}
	t->residual_ns = t->lifetime_ns > sum ? t->lifetime_ns - sum : 0;
	t->slices = s->slices;
	t->voluntary = s->voluntary;
	t->involuntary = s->involuntary;
	t->wakeups = s->wakeups;
	t->migrations = s->migrations;
	t->untraced = s->untraced;
	t->unstamped = s->unstamped;
	t->unstamped_wait_ns = s->unstamped_wait_ns < s->state_ns[TSA_ST_RUNQ]
				   ? s->unstamped_wait_ns
				   : s->state_ns[TSA_ST_RUNQ];
	t->iowait_ns = s->iowait_ns;
	t->iowait_waits = s->iowait_waits;
	t->wakeup_lat_sum = s->wakeup_lat_sum;
	t->wakeup_lat_max = s->wakeup_lat_max;
	t->wakeup_lat_count = s->wakeup_lat_count;
	t->steal_ns =
	    s->steal_ns < s->state_ns[TSA_ST_ONCPU] ? s->steal_ns : s->state_ns[TSA_ST_ONCPU];
	t->throttled_ns =
	    s->throttled_ns < s->state_ns[TSA_ST_RUNQ] ? s->throttled_ns : s->state_ns[TSA_ST_RUNQ];
	/* A wait is one or the other: together they are part of the runqueue time. */
	t->rt_throttled_ns = s->rt_throttled_ns < s->state_ns[TSA_ST_RUNQ] - t->throttled_ns
				 ? s->rt_throttled_ns
				 : s->state_ns[TSA_ST_RUNQ] - t->throttled_ns;
	t->exit_status = s->exit_status;
	t->execs = s->execs;
	t->first_state_known = !(s->flags & TSA_F_PREEXISTING);
	memcpy(t->hist, s->hist, sizeof(t->hist));
	/* Stacks: have_below is set by the stacks probe, which knows they were on. */
	t->below_count = s->below_count;
	t->below_ns = s->below_ns;
	t->below_disk_ns = s->below_disk_ns;
	t->stack_charged_ns = s->charged_ns;
	t->tl_lost = s->tl_lost;
	t->tl_lost_ns = s->tl_lost_ns;
	/* Kernel counters were sampled when tracking began and at the end. */
	t->have_kernel = s->kend[TSA_K_PCOUNT] >= s->kstart[TSA_K_PCOUNT] &&
			 s->kend[TSA_K_SUM_EXEC] >= s->kstart[TSA_K_SUM_EXEC] &&
			 (s->kend[TSA_K_SUM_EXEC] || s->kend[TSA_K_PCOUNT]);
	t->source = ACCT_SRC_EBPF;
	if (t->have_kernel) {
		t->k_end_sum_exec_ns = s->kend[TSA_K_SUM_EXEC];
		t->k_end_run_delay_ns = s->kend[TSA_K_RUN_DELAY];
		t->k_end_pcount = s->kend[TSA_K_PCOUNT];
		t->k_end_at_ns = s->kend_ns;
		t->k_before_ns = s->kstart[TSA_K_SUM_EXEC];
		t->k_sum_exec_ns = s->kend[TSA_K_SUM_EXEC] - s->kstart[TSA_K_SUM_EXEC];
		t->k_run_delay_ns = s->kend[TSA_K_RUN_DELAY] - s->kstart[TSA_K_RUN_DELAY];
		t->k_pcount = s->kend[TSA_K_PCOUNT] - s->kstart[TSA_K_PCOUNT];
		t->k_nvcsw = s->kend[TSA_K_NVCSW] - s->kstart[TSA_K_NVCSW];
		t->k_nivcsw = s->kend[TSA_K_NIVCSW] - s->kstart[TSA_K_NIVCSW];
		t->klag_out_run_ns = s->klag_out_run_ns;
		t->klag_out_blocked_ns = s->klag_out_blocked_ns;
		t->klag_in_ns = s->klag_in_ns;
		t->klag_switches = s->klag_switches;
	}
}

/* Group threads into processes; pid reuse within a run is kept apart by time. */
static int build_procs(struct run *r)
{
	struct proc_acct *procs;
	bool *has_leader;
	size_t np = 0;

	procs = calloc(r->nthreads ? r->nthreads : 1, sizeof(*procs));
	has_leader = calloc(r->nthreads ? r->nthreads : 1, sizeof(*has_leader));
	if (!procs || !has_leader) {
		free(procs);
		free(has_leader);
		return -ENOMEM;
	}
	/* threads[] is sorted by start: a process's leader comes before its threads. */
	for (size_t i = 0; i < r->nthreads; i++) {
		struct thread_acct *t = &r->threads[i];
		bool leader = t->tid == t->pid;
		size_t j = np;

		/* The latest process with this pid. */
		while (j-- > 0)
			if (procs[j].pid == t->pid)
				break;
		/* A second leader that starts after the first process ended: pid reuse. */
		if (j == (size_t)-1 ||
		    (leader && has_leader[j] && t->start_ns >= procs[j].end_ns)) {
			j = np++;
			procs[j].pid = t->pid;
			procs[j].ppid = t->ppid;
			procs[j].start_ns = t->start_ns;
			procs[j].end_ns = t->end_ns;
			memcpy(procs[j].comm, t->comm, sizeof(procs[j].comm));
		}
		struct proc_acct *p = &procs[j];

		if (leader) {
			has_leader[j] = true;
			memcpy(p->comm, t->comm, sizeof(p->comm));
			p->ppid = t->ppid;
		}
		p->threads++;
		p->execs += t->execs;
		if (t->end_ns > p->end_ns)
			p->end_ns = t->end_ns;
		if (t->start_ns < p->start_ns)
			p->start_ns = t->start_ns;
		if (t->flags & TSA_F_GROUP_DEAD) {
			p->exited = true;
			p->exit_status = t->exit_status;
		}
		if (t->flags & TSA_F_SURVIVOR)
			p->alive = true;
		p->thread_lifetime_ns += t->lifetime_ns;
		p->residual_ns += t->residual_ns;
		for (int s = 0; s < TSA_ST_NR; s++)
			p->state_ns[s] += t->state_ns[s];
		p->unmeasured |= t->unmeasured;
	}
	free(has_leader);
	r->procs = procs;
	r->nprocs = np;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Peak number of threads alive at once: a sweep over starts and ends. */
static uint64_t peak_alive(const struct run *r)
{
	int64_t *ev;
	uint64_t cur = 0, peak = 0;
	size_t n = r->nthreads;

	if (!n)
		return 0;
	ev = malloc(2 * n * sizeof(*ev));
	if (!ev)
		return 0;
	/* Encode: starts as 2*t+1, ends as 2*t, so an end sorts before a start at the same t. */
	for (size_t i = 0; i < n; i++) {
		ev[2 * i] = r->threads[i].start_ns * 2 + 1;
		ev[2 * i + 1] = r->threads[i].end_ns * 2;
	}
	qsort(ev, 2 * n, sizeof(*ev), cmp_i64);
	for (size_t i = 0; i < 2 * n; i++) {
		if (ev[i] & 1) {
			if (++cur > peak)
				peak = cur;
		} else if (cur) {
			cur--;
		}
	}
	free(ev);
	return peak;
}

void fold_check_thread(struct cross_check *c, uint64_t ebpf, uint64_t kernel, uint64_t base,
		       uint64_t lifetime, uint32_t tid, uint64_t *sum_e, uint64_t *sum_k)
{
	double f = fold_frac(ebpf, kernel, base);

	c->available = true;
	*sum_e += ebpf;
	*sum_k += kernel;
	if (lifetime < FOLD_CHECK_MIN_LIFETIME_NS) {
		c->short_lived++;
		return;
	}
	c->compared++;
	if (c->compared == 1 || f > c->worst) {
		c->worst = f;
		c->worst_abs = ebpf > kernel ? ebpf - kernel : kernel - ebpf;
		c->worst_tid = tid;
	}
}

void fold_check_close(struct cross_check *c, uint64_t sum_e, uint64_t sum_k)
{
	c->total = fold_frac(sum_e, sum_k, sum_k);
	c->sum_ebpf = sum_e;
	c->sum_kernel = sum_k;
}

static uint64_t sub_floor(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static void no_records(struct cross_check *c)
{
	snprintf(c->reason, sizeof(c->reason), "no thread records");
}

static void cross_checks(struct run *r)
{
	struct run_quality *q = &r->quality;
	uint64_t e[5] = {0}, k[5] = {0}, tree_threads = 0, tree_kernel;
	bool any_alive = false, tree_unknown = false;

	for (size_t i = 0; i < r->nthreads; i++) {
		const struct thread_acct *t = &r->threads[i];
		/*
		 * Compare like with like: the kernel's sum_exec_runtime leaves
		 * out steal time, and its run_delay the waits it never stamped.
		 * Where its clock lagged a switch (tsarun.h: klag), the kernel
		 * moved that lag from the thread switched out to the one
		 * switched in: its counters are taken as they would be with the
		 * clock refreshed at the switch.
		 */
		uint64_t on = t->state_ns[TSA_ST_ONCPU] - t->steal_ns, rq = fold_runq_stamped(t);
		uint64_t k_exec = sub_floor(
		    t->k_sum_exec_ns + t->klag_out_run_ns + t->klag_out_blocked_ns, t->klag_in_ns);
		uint64_t k_delay = sub_floor(t->k_run_delay_ns + t->klag_in_ns, t->klag_out_run_ns);

		if (t->flags & TSA_F_SURVIVOR)
			any_alive = true;
		else if (t->have_kernel)
			tree_threads += t->k_before_ns + t->k_sum_exec_ns;
		else
			tree_unknown = true;
		if (!t->have_kernel)
			continue;
		fold_check_thread(&q->runnable, on + rq, k_exec + k_delay, t->lifetime_ns,
				  t->lifetime_ns, t->tid, &e[4], &k[4]);
		fold_check_thread(&q->on_cpu, on, k_exec, t->lifetime_ns, t->lifetime_ns, t->tid,
				  &e[0], &k[0]);
		fold_check_thread(&q->runqueue, rq, k_delay, t->lifetime_ns, t->lifetime_ns, t->tid,
				  &e[1], &k[1]);
		q->klag_ns += t->klag_out_run_ns + t->klag_out_blocked_ns + t->klag_in_ns;
		q->klag_switches += t->klag_switches;
		/* Counts have no clock: every thread is compared, as a fraction of the kernel's count. */
		/* The kernel counts no arrival without a queue stamp (tsarun.h: unstamped). */
		fold_check_thread(
		    &q->slices, t->slices - (t->unstamped < t->slices ? t->unstamped : t->slices),
		    t->k_pcount, t->k_pcount ? t->k_pcount : 1, UINT64_MAX, t->tid, &e[2], &k[2]);
		/* A thread's nvcsw also has the switch away from it dead (a leader's counted). */
		fold_check_thread(&q->switches,
				  t->voluntary + t->involuntary +
				      ((t->flags & (TSA_F_EXITED | TSA_F_LEADER)) == TSA_F_EXITED),
				  t->k_nvcsw + t->k_nivcsw,
				  t->k_nvcsw + t->k_nivcsw ? t->k_nvcsw + t->k_nivcsw : 1,
				  UINT64_MAX, t->tid, &e[3], &k[3]);
		q->kernel_shift_ns += (int64_t)t->k_sum_exec_ns - (int64_t)on;
		q->unstamped_wait_ns += t->unstamped_wait_ns;
	}
	{
		struct cross_check *cs[5] = {&q->on_cpu, &q->runqueue, &q->slices, &q->switches,
					     &q->runnable};

		for (int i = 0; i < 5; i++)
			fold_check_close(cs[i], e[i], k[i]);
	}
	if (!q->procfs_on_cpu.available && !q->procfs_on_cpu.reason[0])
		snprintf(q->procfs_on_cpu.reason, sizeof(q->procfs_on_cpu.reason),
			 "procfs was not sampled beside eBPF (--backend ebpf,proc)");
	if (!q->procfs_runqueue.available && !q->procfs_runqueue.reason[0])
		snprintf(q->procfs_runqueue.reason, sizeof(q->procfs_runqueue.reason),
			 "procfs was not sampled beside eBPF (--backend ebpf,proc)");
	if (!q->ts_cpu.available && !q->ts_cpu.reason[0])
		snprintf(q->ts_cpu.reason, sizeof(q->ts_cpu.reason), "taskstats is not active");
	if (!r->nthreads) {
		no_records(&q->runnable);
		no_records(&q->on_cpu);
		no_records(&q->runqueue);
		no_records(&q->slices);
		no_records(&q->switches);
	}

	/*
	 * rusage has user+sys (the kernel's sum_exec_runtime) of every reaped
	 * process, the command's CPU time before tracking began included. It is
	 * compared with the kernel's own per-thread counters of the threads
	 * eBPF saw (their agreement with eBPF is the runnable check above), so
	 * that CPU time in rusage that no seen thread accounts for shows: a
	 * thread eBPF missed.
	 */
	tree_kernel = r->ru.user_ns + r->ru.sys_ns;
	if (any_alive) {
		snprintf(q->tree_cpu.reason, sizeof(q->tree_cpu.reason),
			 "processes still running are not in rusage");
	} else if (!r->nthreads) {
		no_records(&q->tree_cpu);
	} else if (q->lost.records || tree_unknown) {
		snprintf(q->tree_cpu.reason, sizeof(q->tree_cpu.reason),
			 "some threads' kernel counters are unknown (records lost)");
	} else if (tree_kernel < FOLD_CHECK_MIN_LIFETIME_NS) {
		/* rusage misses each thread's last microseconds (after __exit_signal). */
		snprintf(
		    q->tree_cpu.reason, sizeof(q->tree_cpu.reason),
		    "under 10 ms of CPU: rusage leaves out microseconds of each thread's exit");
	} else {
		q->tree_cpu.available = true;
		q->tree_cpu.compared = 1;
		q->tree_cpu.worst = fold_frac(tree_threads, tree_kernel, tree_kernel);
		q->tree_cpu.total = q->tree_cpu.worst;
		q->tree_cpu.sum_ebpf = tree_threads;
		q->tree_cpu.sum_kernel = tree_kernel;
		q->tree_cpu.worst_abs = tree_threads > tree_kernel ? tree_threads - tree_kernel
								   : tree_kernel - tree_threads;
		q->tree_cpu.directional = true;
		q->tree_cpu.unseen =
		    tree_kernel > tree_threads
			? (double)(tree_kernel - tree_threads) / (double)tree_kernel
			: 0.0;
		q->tree_cpu.excess_ns = tree_threads > tree_kernel ? tree_threads - tree_kernel : 0;
	}
}

/*
 * Drop the second record of a thread seen twice (an exit record wins over a
 * survivor snapshot) and order threads by start, in place: the threads of a
 * large run are not copied. Returns the new count, or -ENOMEM.
 */
static long dedupe_and_order(struct thread_acct *t, size_t n)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	size_t *dest = malloc((n ? n : 1) * sizeof(*dest));
	unsigned char *kept = calloc(n ? n : 1, 1);
	size_t m = 0, spare_slot;

	if (!idx || !dest || !kept) {
		free(idx);
		free(dest);
		free(kept);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_identity, (void *)t);
	for (size_t i = 0; i < n; i++) {
		const struct thread_acct *a = &t[idx[i]];

		if (m && a->tid == t[idx[m - 1]].tid &&
		    a->task_start_ns == t[idx[m - 1]].task_start_ns)
			continue; /* the same thread again: keep the first */
		idx[m++] = idx[i];
	}
	qsort_r(idx, m, sizeof(*idx), cmp_start, (void *)t);
	/* dest[i]: where element i goes. Kept ones to 0..m-1 in order, the rest after. */
	for (size_t k = 0; k < m; k++) {
		dest[idx[k]] = k;
		kept[idx[k]] = 1;
	}
	spare_slot = m;
	for (size_t i = 0; i < n; i++)
		if (!kept[i])
			dest[i] = spare_slot++;
	/* Swap each element into its place: every swap settles one of them. */
	for (size_t i = 0; i < n; i++) {
		while (dest[i] != i) {
			size_t d = dest[i], dd = dest[d];
			struct thread_acct tmp = t[d];

			t[d] = t[i];
			t[i] = tmp;
			dest[d] = d;
			dest[i] = dd;
		}
	}
	free(idx);
	free(dest);
	free(kept);
	return (long)m;
}

int fold_run(struct run *r, const struct tsa_thread *recs, size_t n)
{
	struct thread_acct *t = calloc(n ? n : 1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		fold_convert(&t[i], &recs[i], r->start_mono_ns);
	return fold_threads(r, t, n);
}

static int cmp_start_direct(const void *pa, const void *pb)
{
	const struct thread_acct *a = pa, *b = pb;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* Processes, totals, peak and residual from threads[] (ordered by start). */
static int finish(struct run *r)
{
	struct run_totals *tot = &r->totals;
	size_t nt = r->nthreads;
	int err;

	free(r->procs);
	r->procs = NULL;
	r->nprocs = 0;
	err = build_procs(r);
	if (err)
		return err;
	r->detailed = true;

	memset(tot, 0, sizeof(*tot));
	tot->processes = (uint32_t)r->nprocs;
	tot->threads = (uint32_t)nt;
	tot->before_tracking_known = nt && !r->quality.lost.records;
	for (size_t i = 0; i < nt; i++) {
		const struct thread_acct *t = &r->threads[i];

		if (t->have_kernel)
			tot->before_tracking_cpu_ns += t->k_before_ns;
		else
			tot->before_tracking_known = false;
		tot->lifetime_ns += t->lifetime_ns;
		tot->residual_ns += t->residual_ns;
		for (int s = 0; s < TSA_ST_NR; s++)
			tot->state_ns[s] += t->state_ns[s];
		tot->slices += t->slices;
		tot->voluntary += t->voluntary;
		tot->involuntary += t->involuntary;
		tot->wakeups += t->wakeups;
		tot->migrations += t->migrations;
		tot->wakeup_lat_sum += t->wakeup_lat_sum;
		tot->wakeup_lat_count += t->wakeup_lat_count;
		tot->steal_ns += t->steal_ns;
		tot->throttled_ns += t->throttled_ns;
		tot->rt_throttled_ns += t->rt_throttled_ns;
		tot->unmeasured |= t->unmeasured;
		if (t->wakeup_lat_max > tot->wakeup_lat_max)
			tot->wakeup_lat_max = t->wakeup_lat_max;
	}
	/* Threads whose records were lost still count in the totals. */
	tot->threads += (uint32_t)r->quality.lost.records;
	tot->lifetime_ns += r->quality.lost.lifetime_ns;
	for (int s = 0; s < TSA_ST_NR; s++)
		tot->state_ns[s] += r->quality.lost.state_ns[s];
	{
		uint64_t attributed = 0;

		for (int s = 0; s < TSA_ST_NR; s++)
			attributed += r->quality.lost.state_ns[s];
		if (r->quality.lost.lifetime_ns > attributed)
			tot->residual_ns += r->quality.lost.lifetime_ns - attributed;
	}
	tot->max_threads_alive = peak_alive(r);
	r->quality.residual_percent =
	    tot->lifetime_ns ? 100.0 * (double)tot->residual_ns / (double)tot->lifetime_ns : 0;
	return 0;
}

int fold_finish(struct run *r)
{
	qsort(r->threads, r->nthreads, sizeof(*r->threads), cmp_start_direct);
	return finish(r);
}

int fold_threads(struct run *r, struct thread_acct *threads, size_t n)
{
	long m;
	int err = 0;

	r->threads = threads;
	m = dedupe_and_order(threads, n);
	if (m < 0) {
		err = (int)m;
		goto out;
	}
	r->nthreads = (size_t)m;
	err = finish(r);
	if (err)
		goto out;
	cross_checks(r);
out:
	if (err) {
		free(r->threads);
		r->threads = NULL;
		r->nthreads = 0;
	}
	return err;
}
