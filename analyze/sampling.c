// SPDX-License-Identifier: MIT
/* Folding /proc samples of a thread into its account (see sampling.h). */
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "run.h"
#include "sampling.h"

enum { SMP_R, SMP_S, SMP_D, SMP_T, SMP_OTHER };

static int state_index(char c)
{
	switch (c) {
	case 'R':
		return SMP_R;
	case 'S':
	case 'I': /* TASK_IDLE: D without load; eBPF counts it as sleeping too */
		return SMP_S;
	case 'D':
		return SMP_D;
	case 'T':
	case 't':
		return SMP_T;
	default:
		return SMP_OTHER;
	}
}

static bool dead(char c)
{
	return c == 'Z' || c == 'X' || c == 'x';
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void smp_start_bounds(const struct smp_clock *c, uint64_t ticks, uint64_t *lo, uint64_t *hi)
{
	/* /proc truncates start_boottime to the tick: the start is in [t, t + tick). */
	uint64_t boot = ticks * c->ns_per_tick;

	*lo = sub0(boot, c->boot_minus_mono_ns);
	*hi = *lo + (c->ns_per_tick ? c->ns_per_tick - 1 : 0);
}

void smp_thread_start(struct smp_thread *t, const struct procfs_stat *st,
		      const struct procfs_schedstat *ss, uint64_t now, uint64_t new_after_ns,
		      const struct smp_clock *c)
{
	memset(t, 0, sizeof(*t));
	t->tid = (uint32_t)st->pid;
	t->ppid = (uint32_t)st->ppid;
	t->starttime_ticks = st->starttime_ticks;
	memcpy(t->comm, st->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
	t->state = st->state;
	t->samples = 1;
	t->first_ns = t->last_ns = now;
	smp_start_bounds(c, st->starttime_ticks, &t->born_lo_ns, &t->born_hi_ns);
	t->cur = *ss;
	if (new_after_ns) {
		t->from_birth = true;
		/* Born after the scan that did not see it, before this one. */
		if (new_after_ns > t->born_lo_ns && new_after_ns <= t->born_hi_ns) {
			t->born_lo_ns = new_after_ns;
		} else if (new_after_ns > t->born_hi_ns) {
			/* Its start time is not its own (a thread that exec'd has its leader's). */
			t->born_lo_ns = new_after_ns;
			t->born_hi_ns = now > new_after_ns ? now : new_after_ns;
		}
		if (now < t->born_hi_ns && now >= t->born_lo_ns)
			t->born_hi_ns = now;
	} else {
		t->base = *ss;
	}
	if (dead(st->state)) {
		/* Found already exited: its counters are final, its end unknown past its start. */
		t->ended = t->final = true;
		t->end_lo_ns = t->from_birth ? t->born_lo_ns : now;
		t->end_hi_ns = now;
	}
}

int smp_thread_sample(struct smp_thread *t, const struct procfs_stat *st,
		      const struct procfs_schedstat *ss, uint64_t now)
{
	uint64_t gap, d_rq;
	int a, b;

	if (t->ended)
		return 0;
	if (ss->on_cpu_ns < t->cur.on_cpu_ns || ss->run_delay_ns < t->cur.run_delay_ns ||
	    ss->slices < t->cur.slices)
		return 1;
	gap = sub0(now, t->last_ns);
	if (gap > t->max_gap_ns)
		t->max_gap_ns = gap;
	/*
	 * Running at both samples and never switched in between: it stayed on
	 * its CPU or its runqueue, so what its counters leave of the gap is not
	 * a sleep. It is time the CPU spent elsewhere (the hypervisor,
	 * interrupts), or a wait on the runqueue that is stamped (run_delay) at
	 * the switch-in that ends the stretch: that is taken back from it.
	 */
	d_rq = ss->run_delay_ns - t->cur.run_delay_ns;
	if (state_index(t->state) == SMP_R && state_index(st->state) == SMP_R &&
	    ss->slices == t->cur.slices && !dead(st->state)) {
		t->pending_ns +=
		    (int64_t)gap - (int64_t)(ss->on_cpu_ns - t->cur.on_cpu_ns) - (int64_t)d_rq;
	} else if (t->pending_ns) {
		if (t->pending_ns > 0)
			t->pending_ns -=
			    (int64_t)(d_rq < (uint64_t)t->pending_ns ? d_rq
								     : (uint64_t)t->pending_ns);
		t->untimed_ns += t->pending_ns;
		t->pending_ns = 0;
	}
	t->cur = *ss;
	t->samples++;
	/* The name it has now (a zombie has the one it died with: the program it exec'd). */
	memcpy(t->comm, st->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
	if (dead(st->state)) {
		/* It exited in the gap: the counters just read are its final ones. */
		t->ended = t->final = true;
		t->end_lo_ns = t->last_ns;
		t->end_hi_ns = now;
		return 0; /* last_ns stays its last sample alive */
	}
	a = state_index(t->state);
	b = state_index(st->state);
	if (a == b) {
		t->state_ns[a] += gap;
	} else {
		t->state_ns[a] += gap / 2;
		t->state_ns[b] += gap - gap / 2;
		t->transitions++;
		t->uncertainty_ns += gap;
	}
	t->state = st->state;
	t->ppid = (uint32_t)st->ppid;
	t->last_ns = now;
	return 0;
}

void smp_thread_rebase(struct smp_thread *t)
{
	t->base = t->cur;
	t->from_birth = false;
	t->first_ns = t->last_ns;
	memset(t->state_ns, 0, sizeof(t->state_ns));
	t->samples = 1;
	t->transitions = 0;
	t->uncertainty_ns = 0;
	t->max_gap_ns = 0;
	t->untimed_ns = t->pending_ns = 0;
}

void smp_thread_gone(struct smp_thread *t, uint64_t now)
{
	if (t->ended)
		return;
	t->ended = true;
	t->end_lo_ns = t->last_ns;
	t->end_hi_ns = now;
}

void smp_thread_sampled(const struct smp_thread *t, struct thread_acct *a, uint64_t origin)
{
	struct thread_sampled *s = &a->sampled;
	uint64_t start =
	    t->from_birth ? t->born_lo_ns + (t->born_hi_ns - t->born_lo_ns) / 2 : t->first_ns;
	uint64_t end = t->ended ? t->end_lo_ns + (t->end_hi_ns - t->end_lo_ns) / 2 : t->last_ns;
	uint64_t cover_start = t->from_birth ? start : t->first_ns;
	uint64_t cover_end = t->final ? end : t->last_ns;

	memset(s, 0, sizeof(*s));
	a->have_sampled = true;
	s->on_cpu_ns = sub0(t->cur.on_cpu_ns, t->base.on_cpu_ns);
	s->runqueue_ns = sub0(t->cur.run_delay_ns, t->base.run_delay_ns);
	s->slices = sub0(t->cur.slices, t->base.slices);
	for (int i = 0; i < 4; i++)
		s->by_state_ns[i] = t->state_ns[i];
	s->samples = t->samples;
	s->transitions = t->transitions;
	s->uncertainty_ns = t->uncertainty_ns;
	s->max_gap_ns = t->max_gap_ns;
	/* Not a stretch still open: no read after it has shown whether a switch-in stamped a wait. */
	s->untimed_ns = t->untimed_ns > 0 ? (uint64_t)t->untimed_ns : 0;
	/* The end is somewhere in the gap after the last read: all of it may be missing. */
	s->unobserved_max_ns =
	    sub0(cover_start, start) + (t->ended && !t->final ? sub0(t->end_hi_ns, cover_end) : 0);
	(void)end;
	s->from_birth = t->from_birth;
	s->final = t->final;
	s->first_ns = (int64_t)(t->first_ns - origin);
	s->last_ns = (int64_t)(t->last_ns - origin);
}

void smp_thread_acct(const struct smp_thread *t, struct thread_acct *a, uint64_t origin,
		     const struct smp_clock *c)
{
	uint64_t start =
	    t->from_birth ? t->born_lo_ns + (t->born_hi_ns - t->born_lo_ns) / 2 : t->first_ns;
	uint64_t end = t->ended ? t->end_lo_ns + (t->end_hi_ns - t->end_lo_ns) / 2 : t->last_ns;
	uint64_t cover_start, cover_end, cover, on, rq, blocked, sdt, attributed, life;

	memset(a, 0, sizeof(*a));
	if (end < start)
		end = start;
	cover_start = t->from_birth ? start : t->first_ns;
	cover_end = t->final ? end : t->last_ns;
	cover = sub0(cover_end, cover_start);
	smp_thread_sampled(t, a, origin);
	on = a->sampled.on_cpu_ns;
	rq = a->sampled.runqueue_ns;

	a->source = ACCT_SRC_PROC;
	a->unmeasured = ACCT_NO_SWITCHES | ACCT_NO_WAKEUPS | ACCT_NO_MIGRATIONS | ACCT_NO_STEAL |
			ACCT_NO_HIST | ACCT_NO_THROTTLE;
	a->tid = t->tid;
	a->pid = t->pid;
	a->ppid = t->ppid;
	a->flags =
	    TSA_F_TRACKED | (t->tid == t->pid ? TSA_F_LEADER : 0) | (t->ended ? 0 : TSA_F_SURVIVOR);
	memcpy(a->comm, t->comm, sizeof(a->comm));
	a->comm[sizeof(a->comm) - 1] = '\0';
	a->task_start_ns = t->born_lo_ns;
	a->task_start_uncert_ns = t->born_hi_ns - t->born_lo_ns;
	a->boot_start_ns = t->starttime_ticks * c->ns_per_tick;
	a->first_state_known = true;
	a->state_ns[TSA_ST_ONCPU] = on;
	a->state_ns[TSA_ST_RUNQ] = rq;
	a->slices = a->sampled.slices;
	/*
	 * Off-CPU and not runnable over the covered span: blocked, split by
	 * sampled state; less the time it was on its CPU uncounted (residual).
	 */
	blocked = sub0(cover, on + rq + a->sampled.untimed_ns);
	sdt = t->state_ns[SMP_S] + t->state_ns[SMP_D] + t->state_ns[SMP_T];
	if (sdt) {
		uint64_t d = (uint64_t)((unsigned __int128)blocked * t->state_ns[SMP_D] / sdt);
		uint64_t st = (uint64_t)((unsigned __int128)blocked * t->state_ns[SMP_T] / sdt);

		a->state_ns[TSA_ST_DISK] = d;
		a->state_ns[TSA_ST_STOPPED] = st;
		a->state_ns[TSA_ST_SLEEP] = blocked - d - st;
	}
	attributed = 0;
	for (int i = 0; i < TSA_ST_NR; i++)
		attributed += a->state_ns[i];
	life = end - start;
	/* The counters are exact: a start estimated too late gives way to them. */
	if (attributed > life) {
		life = attributed;
		start = end - life;
	}
	a->lifetime_ns = life;
	a->residual_ns = life - attributed;
	a->start_ns = (int64_t)(start - origin);
	a->end_ns = (int64_t)(end - origin);
}

void smp_run_checks(struct run *r)
{
	struct run_quality *q = &r->quality;
	struct cross_check *cs[] = {&q->runnable, &q->on_cpu, &q->runqueue, &q->slices,
				    &q->switches};
	uint64_t seen = 0, ru = r->ru.user_ns + r->ru.sys_ns;
	bool alive = false;

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		memset(cs[i], 0, sizeof(*cs[i]));
		snprintf(cs[i]->reason, sizeof(cs[i]->reason),
			 "procfs: the figures are the kernel's own counters (nothing to compare)");
	}
	q->kernel_shift_ns = 0;
	q->klag_ns = q->klag_switches = 0;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct thread_acct *t = &r->threads[i];

		if (t->flags & TSA_F_SURVIVOR)
			alive = true;
		seen += t->state_ns[TSA_ST_ONCPU];
	}
	memset(&q->tree_cpu, 0, sizeof(q->tree_cpu));
	if (alive) {
		snprintf(q->tree_cpu.reason, sizeof(q->tree_cpu.reason),
			 "processes still running are not in rusage");
	} else if (!r->nthreads) {
		snprintf(q->tree_cpu.reason, sizeof(q->tree_cpu.reason), "no thread records");
	} else {
		/*
		 * rusage has the CPU time of every thread of the reaped tree;
		 * the samples miss threads that lived between two scans and
		 * each thread's time after its last sample: unseen.
		 */
		q->tree_cpu.available = true;
		q->tree_cpu.compared = 1;
		q->tree_cpu.worst = fold_frac(seen, ru, ru);
		q->tree_cpu.total = q->tree_cpu.worst;
		q->tree_cpu.sum_ebpf = seen;
		q->tree_cpu.sum_kernel = ru;
		q->tree_cpu.worst_abs = seen > ru ? seen - ru : ru - seen;
		q->tree_cpu.directional = true;
		q->tree_cpu.unseen = ru > seen ? (double)(ru - seen) / (double)ru : 0.0;
		q->tree_cpu.excess_ns = sub0(seen, ru);
	}
}
