// SPDX-License-Identifier: MIT
/* Attaching taskstats records to threads on proven identity (see delays.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delays.h"
#include "account.h"
#include "run.h"
#include "taskstats.h"

/* Indexes into the records (arg), by tid, then by when each was received. */
static int cmp_rec(const void *a, const void *b, void *arg)
{
	const struct ts_record *const *recs = arg;
	const struct ts_record *x = recs[*(const size_t *)a], *y = recs[*(const size_t *)b];

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->recv_ns < y->recv_ns ? -1 : x->recv_ns > y->recv_ns;
}

/* Indexes into the threads (arg), by tid, then by the task's start. */
static int cmp_thread(const void *a, const void *b, void *arg)
{
	const struct thread_acct *threads = arg;
	const struct thread_acct *x = &threads[*(const size_t *)a];
	const struct thread_acct *y = &threads[*(const size_t *)b];

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->task_start_ns < y->task_start_ns ? -1 : x->task_start_ns > y->task_start_ns;
}

/* a - b, or 0 when b is larger. */
static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * Could rec be t's record? See delays.h for the reasoning; origin is the
 * run's CLOCK_MONOTONIC start (thread times are relative to it).
 */
static bool consistent(const struct thread_acct *t, const struct ts_record *rec, uint64_t origin)
{
	const uint64_t slack = DELAYS_CLOCK_SLACK_NS;
	uint64_t lo = t->task_start_ns, hi = t->task_start_ns + t->task_start_uncert_ns;
	uint64_t cpu_n = rec->delays[DELAY_CPU].count, cpu_ns = rec->delays[DELAY_CPU].total_ns;

	if (rec->tid != t->tid || (rec->have_tgid && rec->tgid != t->pid) || !t->task_start_ns)
		return false;
	/* The record was written (at T = start + etime) before it was received. */
	if (rec->etime_ns > rec->recv_ns || lo > rec->recv_ns - rec->etime_ns + slack)
		return false;
	if (!rec->from_exit) {
		/* ... and after the query was sent; etime is truncated to the microsecond. */
		return hi + 1000 + slack >= sub0(rec->sent_ns, rec->etime_ns);
	}
	if (t->source != ACCT_SRC_EBPF)
		return true;
	/* An exit record: the thread's own exit, before its final switch-out. */
	if (t->flags & TSA_F_SURVIVOR)
		return false;
	{
		uint64_t end = origin + (uint64_t)t->end_ns;
		/* The counters' last update, before the switch-out: the scheduler picked in between. */
		uint64_t kend = t->k_end_at_ns && t->k_end_at_ns <= end ? t->k_end_at_ns : end;
		uint64_t tail_cpu, tail_rq, tail_pc, est, late;

		if (lo + rec->etime_ns > end + slack)
			return false;
		if (!t->have_kernel)
			return true;
		/* Counters only grow: the record's cannot exceed the final ones. */
		if (rec->run_ns > t->k_end_sum_exec_ns || cpu_n > t->k_end_pcount ||
		    cpu_ns > t->k_end_run_delay_ns)
			return false;
		tail_cpu = t->k_end_sum_exec_ns - rec->run_ns;
		tail_rq = t->k_end_run_delay_ns - cpu_ns;
		tail_pc = t->k_end_pcount - cpu_n;
		/* run_delay grows only when the thread is switched in. */
		if (!tail_pc && tail_rq)
			return false;
		/*
		 * From T to the final switch-out the thread ran for at most
		 * tail_cpu (sum_exec_runtime is brought up to date only at
		 * ticks and switches, so the record's value may be stale and
		 * tail_cpu too large), waited tail_rq in the runqueue, and, if
		 * it was switched out again after T, may have slept. Steal and
		 * IRQ time are in none of these, and the counters stop at
		 * their last update (kend), before the scheduler picked the
		 * next task and switched. So T is at the latest the final
		 * switch (checked above), and at the earliest est + etime.
		 */
		est = sub0(kend, tail_cpu + tail_rq + rec->etime_ns);
		late = 1000 + slack + t->steal_ns;
		if (tail_pc)
			late += t->state_ns[TSA_ST_SLEEP] + t->state_ns[TSA_ST_DISK] +
				t->state_ns[TSA_ST_STOPPED] + t->residual_ns;
		return hi + late >= est;
	}
}

/*
 * Each block I/O wait is timed by the kernel from when the scheduler takes
 * the sleeper off its runqueue, before it picks the next task, and by the
 * eBPF probe from the switch, after: the difference is the time to pick
 * the next task (with idle balancing when the CPU goes idle), measured at
 * 5-10 us a wait here on average (a direct I/O workload's block I/O delay
 * exceeded its uninterruptible time by up to 6.9 ms over 676 waits).
 */
#define BLKIO_SLACK_PER_WAIT_NS 20000ull
#define BLKIO_SLACK_NS		1000000ull

/*
 * A delay counter the kernel got wrong. The kernel times a wait from a
 * start it stamps when the sleeper is taken off its runqueue. With the
 * scheduler's delayed dequeue (Linux 6.12+), that can happen later, while
 * another task runs, and the stamp lands on the task that runs: the
 * sleeper's wait is then timed from its previous wait's start, or from 0
 * (the time since boot) for its first. The second case shows: one wait
 * longer than the thread's whole life. It is left out (count and total
 * less that one wait; it is counted in dropped), since the taskstats
 * record gives the longest wait. A counter that is still impossible (a
 * total longer than the life; block I/O longer than the time the eBPF
 * probe saw the thread asleep) is refused. Returns 1 when a wait was
 * dropped, -1 when the counter is refused, else 0.
 */
static int check_counter(struct delay_counter *c, uint64_t life, uint64_t bound)
{
	if (!c->available)
		return 0;
	if (c->have_extremes && c->max_ns > life && c->count && c->total_ns >= c->max_ns &&
	    c->total_ns - c->max_ns <= life && c->total_ns - c->max_ns <= bound) {
		c->total_ns -= c->max_ns;
		c->count--;
		c->dropped++;
		c->have_extremes = false; /* the longest of the rest is not known */
		c->max_ns = c->min_ns = 0;
		return 1;
	}
	if (c->total_ns > life || (c->have_extremes && c->max_ns > life) || c->total_ns > bound) {
		memset(c, 0, sizeof(*c));
		c->refused = true;
		return -1;
	}
	return 0;
}

/*
 * A procfs thread's counters stop at its last sample; its exit record has
 * them at its exit (sum_exec_runtime, run_delay and pcount, a few
 * microseconds before its final switch): the part the samples missed goes
 * from residual to on-CPU and runqueue. Only for a thread sampled from its
 * birth (its counters then start at 0, as the record's do).
 */
static void complete_from_exit(struct thread_acct *t, const struct ts_record *rec)
{
	const struct delay_counter *c = &rec->delays[DELAY_CPU];
	uint64_t on = rec->run_ns, rq, pc, life, rest, blocked;

	if (!c->available)
		return;
	rq = c->total_ns;
	pc = c->count;
	/* Counters only grow: a record below the samples is not this life's end. */
	if (rq < t->state_ns[TSA_ST_RUNQ] || pc < t->slices)
		return;
	/*
	 * Except on-CPU: the record is written early in the exit, which then
	 * runs on (a few to tens of microseconds), and a sample taken in that
	 * time has more of it. The larger is the nearer to the end.
	 */
	if (on < t->state_ns[TSA_ST_ONCPU])
		on = t->state_ns[TSA_ST_ONCPU];
	t->state_ns[TSA_ST_ONCPU] = on;
	t->state_ns[TSA_ST_RUNQ] = rq;
	t->slices = pc;
	/*
	 * Its life is the record's elapsed time (to the microsecond), not the
	 * span between the middles of the gaps around its samples, which for
	 * a thread one sample saw is the sampling interval whatever it lived.
	 * What was sampled blocked shrinks to the rest, if it must; the end
	 * stays where it was estimated.
	 */
	life = rec->etime_ns + 500;
	if (life < on + rq)
		life = on + rq;
	rest = life - on - rq;
	blocked =
	    t->state_ns[TSA_ST_SLEEP] + t->state_ns[TSA_ST_DISK] + t->state_ns[TSA_ST_STOPPED];
	if (blocked > rest) {
		for (int st = TSA_ST_SLEEP; st <= TSA_ST_STOPPED; st++)
			t->state_ns[st] =
			    (uint64_t)((unsigned __int128)t->state_ns[st] * rest / blocked);
		blocked = t->state_ns[TSA_ST_SLEEP] + t->state_ns[TSA_ST_DISK] +
			  t->state_ns[TSA_ST_STOPPED];
	}
	t->residual_ns = rest - blocked;
	t->start_ns = t->end_ns - (int64_t)life;
	t->lifetime_ns = life;
	t->counters_from_exit = true;
}

/*
 * The kernel's block I/O counter against the probe's: with the delayed
 * dequeue, a sleeper still on its runqueue when it is woken (ttwu_runnable())
 * has its wait neither started nor ended in taskstats, and a stamp that
 * lands on the task that runs times another wait wrongly. Measured on this
 * VM (Linux 6.18, direct I/O of 200 blocks beside a CPU-bound task on the
 * same CPU, at nice 19): the kernel counted 326 waits of 51 ms where the
 * thread slept 97 ms in D in io_schedule(). The probe sees every sleep
 * that began in io_schedule() (task->in_iowait at the switch-out, tsarun.h)
 * of a thread it saw whole. Fewer kernel waits than that (beyond two and
 * 1%: a sleep the probe saw begin that the kernel's stamp missed by being
 * woken before its dequeue), or a refused counter where the probe saw such
 * sleeps, is a counter that missed waits: the probe's figure is given
 * instead, its extremes unknown.
 */
static bool blkio_missed(const struct delay_counter *c, const struct thread_acct *t)
{
	if (c->refused)
		return t->iowait_waits > 0; /* none seen: the counter stays refused (unknown) */
	return c->available && c->count + 2 + t->iowait_waits / 100 < t->iowait_waits;
}

static void blkio_from_probe(struct delay_counter *c, const struct thread_acct *t)
{
	memset(c, 0, sizeof(*c));
	c->available = true;
	c->from_ebpf = true;
	c->count = t->iowait_waits;
	c->total_ns = t->iowait_ns;
}

static void attach(struct thread_acct *t, const struct ts_record *rec, const struct delays_opts *o,
		   struct taskstats_quality *q)
{
	bool live = (t->flags & TSA_F_PREEXISTING) ? o->non_cpu_live_preexisting : o->non_cpu_live;
	uint64_t life = rec->etime_ns + 1000; /* etime is truncated to the microsecond */

	t->have_delays = true;
	t->delays_final = rec->from_exit;
	t->delays_version = rec->version;
	memcpy(t->delays, rec->delays, sizeof(t->delays));
	/*
	 * Without kernel.task_delayacct when the thread started, the kernel
	 * kept no delay record for it: its non-CPU counters read zero but
	 * measured nothing. The CPU delay comes from the scheduler either way.
	 */
	if (!live)
		for (int d = 0; d < DELAY_NR; d++)
			if (d != DELAY_CPU)
				memset(&t->delays[d], 0, sizeof(t->delays[d]));
	for (int d = 0; d < DELAY_NR; d++) {
		uint64_t bound = UINT64_MAX;
		int r;

		/* Block I/O waits are sleeps the eBPF probe saw, when it saw the whole life. */
		if (d == DELAY_BLOCK_IO && t->source == ACCT_SRC_EBPF && rec->from_exit &&
		    !(t->flags & TSA_F_PREEXISTING))
			bound = t->state_ns[TSA_ST_SLEEP] + t->state_ns[TSA_ST_DISK] +
				t->state_ns[TSA_ST_STOPPED] + t->residual_ns + BLKIO_SLACK_NS +
				t->delays[d].count * BLKIO_SLACK_PER_WAIT_NS;
		r = check_counter(&t->delays[d], life, bound);
		if (r > 0)
			q->dropped_waits++;
		else if (r < 0)
			q->implausible++;
		if (bound != UINT64_MAX && blkio_missed(&t->delays[d], t)) {
			if (r < 0)
				q->implausible--;
			blkio_from_probe(&t->delays[d], t);
			q->blkio_from_ebpf++;
		}
	}
	/*
	 * The record is written part-way through the thread's exit: what the
	 * exit does after it (releasing the address space and files, waking a
	 * joiner, the final switch) is CPU time no record carries. eBPF saw
	 * the counters at the final switch-out, so it is measured here (at
	 * most: the record's sum_exec_runtime may be a tick stale). Without
	 * eBPF it is what rusage has and no thread accounts for.
	 */
	if (t->source == ACCT_SRC_EBPF && rec->from_exit && t->have_kernel &&
	    !(t->flags & TSA_F_SURVIVOR) && rec->run_ns <= t->k_end_sum_exec_ns) {
		q->cpu_after_exit_ns += t->k_end_sum_exec_ns - rec->run_ns;
		q->cpu_after_exit_threads++;
	}
	if (t->source == ACCT_SRC_PROC && rec->from_exit && t->have_sampled &&
	    t->sampled.from_birth && !t->sampled.final)
		complete_from_exit(t, rec);
}

/* A thread known only from its taskstats record. */
static void from_record(struct thread_acct *t, const struct ts_record *rec, uint64_t origin,
			const struct delays_opts *o, struct taskstats_quality *q)
{
	uint64_t cpu = rec->run_ns, rq = rec->delays[DELAY_CPU].total_ns, sum;

	memset(t, 0, sizeof(*t));
	t->source = ACCT_SRC_TASKSTATS;
	t->tid = rec->tid;
	t->pid = rec->have_tgid ? rec->tgid : rec->tid;
	t->ppid = rec->ppid;
	t->flags = TSA_F_TRACKED | TSA_F_EXITED | (t->tid == t->pid ? TSA_F_LEADER : 0);
	memcpy(t->comm, rec->comm,
	       sizeof(t->comm) < sizeof(rec->comm) ? sizeof(t->comm) : sizeof(rec->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
	/* Its end is known only as "before the record arrived". */
	t->end_ns = (int64_t)(rec->recv_ns - origin);
	t->start_ns = t->end_ns - (int64_t)rec->etime_ns;
	t->lifetime_ns = rec->etime_ns;
	t->state_ns[TSA_ST_ONCPU] = cpu;
	t->state_ns[TSA_ST_RUNQ] = rq;
	sum = cpu + rq;
	t->residual_ns = sub0(t->lifetime_ns, sum);
	t->slices = rec->delays[DELAY_CPU].count;
	t->voluntary = rec->nvcsw;
	t->involuntary = rec->nivcsw;
	t->exit_status = (int)rec->exitcode;
	t->first_state_known = true;
	/* Its off-CPU time is not split by state: it is all in the residual. */
	t->unmeasured = ACCT_NO_WAKEUPS | ACCT_NO_MIGRATIONS | ACCT_NO_STEAL | ACCT_NO_THROTTLE |
			ACCT_NO_HIST | ACCT_NO_STATES | (rec->have_switches ? 0 : ACCT_NO_SWITCHES);
	attach(t, rec, o, q);
}

/* The taskstats CPU delay against the eBPF runqueue time, over the tracked part of each life. */
static void check_cpu_delay(struct run *r)
{
	struct cross_check *c = &r->quality.ts_cpu;
	uint64_t se = 0, sk = 0;

	memset(c, 0, sizeof(*c));
	r->quality.ts_cpu_after_ns = 0;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct thread_acct *t = &r->threads[i];
		uint64_t before, ts;

		if (t->source != ACCT_SRC_EBPF || !t->have_delays || !t->delays_final ||
		    !t->have_kernel || !t->delays[DELAY_CPU].available)
			continue;
		/* run_delay the thread had collected before tracking began. */
		before = sub0(t->k_end_run_delay_ns, t->k_run_delay_ns);
		ts = sub0(t->delays[DELAY_CPU].total_ns, before);
		r->quality.ts_cpu_after_ns +=
		    sub0(t->k_end_run_delay_ns, t->delays[DELAY_CPU].total_ns);
		fold_check_thread(c, fold_runq_stamped(t), ts, t->lifetime_ns, t->lifetime_ns,
				  t->tid, &se, &sk);
	}
	if (c->available)
		fold_check_close(c, se, sk);
	else
		snprintf(c->reason, sizeof(c->reason), "%s",
			 r->quality.ts.active
			     ? "no thread has both an eBPF account and an exit record"
			     : "taskstats is not active");
}

int delays_attach(struct run *r, const struct ts_record *const *recs, size_t n,
		  const struct delays_opts *o)
{
	struct taskstats_quality *q = &r->quality.ts;
	const struct ts_record **rp = NULL;
	size_t *ri = NULL, *ti = NULL, *claim = NULL, nt = r->nthreads, nnew = 0;
	bool *ok = NULL, *taken = NULL;
	struct ts_record **orphans = NULL;
	int err = 0;

	rp = malloc((n ? n : 1) * sizeof(*rp));
	ri = malloc((n ? n : 1) * sizeof(*ri));
	ti = malloc((nt ? nt : 1) * sizeof(*ti));
	claim = malloc((n ? n : 1) * sizeof(*claim));
	taken = calloc(nt ? nt : 1, sizeof(*taken));
	orphans = malloc((n ? n : 1) * sizeof(*orphans));
	if (!rp || !ri || !ti || !claim || !taken || !orphans) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		rp[i] = recs[i];
		ri[i] = i;
		if (recs[i]->from_exit)
			q->exit_records++;
		else
			q->queried++;
		if (!q->version_min || recs[i]->version < q->version_min)
			q->version_min = recs[i]->version;
		if (recs[i]->version > q->version_max)
			q->version_max = recs[i]->version;
	}
	for (size_t i = 0; i < nt; i++)
		ti[i] = i;
	qsort_r(ri, n, sizeof(*ri), cmp_rec, rp);
	qsort_r(ti, nt, sizeof(*ti), cmp_thread, r->threads);

	/* One tid at a time: its records against its threads. */
	for (size_t a = 0, b = 0; a < n;) {
		uint32_t tid = rp[ri[a]]->tid;
		size_t ae = a, b0, be, na, nb;
		bool progress = true;

		while (ae < n && rp[ri[ae]]->tid == tid)
			ae++;
		while (b < nt && r->threads[ti[b]].tid < tid)
			b++;
		b0 = b;
		for (be = b0; be < nt && r->threads[ti[be]].tid == tid; be++)
			;
		na = ae - a;
		nb = be - b0;
		if (!nb) {
			for (size_t k = a; k < ae; k++)
				orphans[nnew++] = (struct ts_record *)rp[ri[k]];
			a = ae;
			continue;
		}
		free(ok);
		ok = calloc(na * nb, sizeof(*ok));
		if (!ok) {
			err = -ENOMEM;
			goto out;
		}
		for (size_t x = 0; x < na; x++) {
			claim[a + x] = SIZE_MAX;
			for (size_t y = 0; y < nb; y++)
				ok[x * nb + y] = consistent(&r->threads[ti[b0 + y]], rp[ri[a + x]],
							    r->start_mono_ns);
		}
		/* A record with one candidate claims it; that may leave others with one. */
		while (progress) {
			progress = false;
			for (size_t x = 0; x < na; x++) {
				size_t cand = SIZE_MAX, count = 0;

				if (claim[a + x] != SIZE_MAX)
					continue;
				for (size_t y = 0; y < nb; y++)
					if (ok[x * nb + y] && !taken[ti[b0 + y]]) {
						cand = y;
						count++;
					}
				if (count != 1)
					continue;
				claim[a + x] = ti[b0 + cand];
				taken[ti[b0 + cand]] = true;
				progress = true;
			}
		}
		for (size_t x = 0; x < na; x++) {
			if (claim[a + x] == SIZE_MAX) {
				q->identity_mismatches++;
				continue;
			}
			attach(&r->threads[claim[a + x]], rp[ri[a + x]], o, q);
			q->attached++;
		}
		a = ae;
	}

	if (nnew && o->create_missing) {
		struct thread_acct *grown =
		    realloc(r->threads, (r->nthreads + nnew) * sizeof(*r->threads));

		if (!grown) {
			err = -ENOMEM;
			goto out;
		}
		r->threads = grown;
		for (size_t k = 0; k < nnew; k++) {
			from_record(&r->threads[r->nthreads++], orphans[k], r->start_mono_ns, o, q);
			q->attached++;
		}
	} else {
		q->unmatched_records += nnew;
	}
	q->threads_without = 0;
	for (size_t i = 0; i < r->nthreads; i++)
		if (!r->threads[i].have_delays)
			q->threads_without++;
	check_cpu_delay(r);
out:
	free(rp);
	free(ri);
	free(ti);
	free(claim);
	free(taken);
	free(ok);
	free(orphans);
	return err;
}
