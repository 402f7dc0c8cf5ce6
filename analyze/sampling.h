/* SPDX-License-Identifier: MIT */
/*
 * Folding /proc samples of one thread into its account (the procfs
 * source). Pure: parsed samples and times in, figures out.
 *
 * What is exact and what is sampled:
 *  - on-CPU, runqueue and slices are differences of the kernel's own
 *    counters (/proc/.../schedstat: sum_exec_runtime, run_delay, pcount)
 *    between two reads: exact over the span between them. A thread born
 *    while tracked starts them at 0, so its counters cover it from birth;
 *    a zombie's can still be read, so a process leader's cover it to its
 *    end. Otherwise the time after the last read is not covered
 *    (`unobserved_max_ns`).
 *  - S, D and T are states by sample: between two samples in the same
 *    state the whole gap is charged to it, across a change half to each,
 *    and the gap is that change's uncertainty. The time the counters leave
 *    off-CPU and not runnable is split between S, D and T in proportion to
 *    their sampled time; when no sample saw the thread blocked, it stays
 *    residual (blocked in an unknown state). Time the counters leave out
 *    between two samples that found it running with no switch-in between
 *    (steal and IRQ time, which sum_exec_runtime does not have) is not
 *    blocked: it stays residual (`sampled.untimed_ns`).
 */
#ifndef TSARUN_SAMPLING_H
#define TSARUN_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

#include "procfs.h"

struct thread_acct;

/* Converting /proc start times (clock ticks since boot) to CLOCK_MONOTONIC. */
struct smp_clock {
	uint64_t ns_per_tick;	     /* 1e9 / sysconf(_SC_CLK_TCK) */
	uint64_t boot_minus_mono_ns; /* CLOCK_BOOTTIME - CLOCK_MONOTONIC (time suspended) */
};

struct smp_thread {
	uint32_t tid, pid, ppid;
	uint64_t starttime_ticks; /* identity: (tid, starttime) */
	char comm[16];
	bool from_birth;     /* born while tracked: its counters started at 0 */
	bool ended;	     /* gone, or seen as a zombie */
	bool final;	     /* its counters were read after it exited (a zombie) */
	uint64_t born_lo_ns; /* CLOCK_MONOTONIC bounds on its start */
	uint64_t born_hi_ns;
	uint64_t first_ns; /* first and last sample (alive: a zombie's read is not one) */
	uint64_t last_ns;
	uint64_t end_lo_ns; /* when ended: between these */
	uint64_t end_hi_ns;
	char state;	      /* at the last sample */
	uint64_t state_ns[5]; /* by sampled state: R, S, D, T, other */
	uint64_t samples;
	uint64_t transitions;
	uint64_t uncertainty_ns;
	uint64_t max_gap_ns;
	/*
	 * Between two samples that found it running with no switch-in between
	 * (it never left its CPU, or waited on its runqueue), what the counters
	 * leave of the gap: time its task clock left out (steal, IRQ time), and
	 * a wait its next switch-in stamps. It cannot have blocked then. The
	 * open stretch's sum is pending until a read after it (signed: the
	 * reads' jitter cancels); untimed_ns is the sum less those waits.
	 */
	int64_t pending_ns;
	int64_t untimed_ns;
	struct procfs_schedstat base, cur;
	uint64_t mark; /* the caller's bookkeeping (the scan that last saw it) */
};

/* The bounds [lo, hi] of a task's CLOCK_MONOTONIC start from its /proc start time. */
void smp_start_bounds(const struct smp_clock *c, uint64_t ticks, uint64_t *lo, uint64_t *hi);

/*
 * First sample of a thread, at now. new_after_ns: 0 when the thread may
 * have existed before tracking began (its counters are taken as the base);
 * otherwise a time it is known to have been born after (the previous scan
 * that did not see it), and its counters count from 0.
 */
void smp_thread_start(struct smp_thread *t, const struct procfs_stat *st,
		      const struct procfs_schedstat *ss, uint64_t now, uint64_t new_after_ns,
		      const struct smp_clock *c);

/*
 * A later sample. Returns 0, or 1 when the sample cannot be this thread's
 * (a counter went back: a thread that exec'd took over the tid): the
 * caller ends this one and starts a new one.
 */
int smp_thread_sample(struct smp_thread *t, const struct procfs_stat *st,
		      const struct procfs_schedstat *ss, uint64_t now);

/*
 * A new window from the last sample (monitor mode's intervals): its
 * counters become the base, the states and gaps start again.
 */
void smp_thread_rebase(struct smp_thread *t);

/* The thread was not there at now (it was at its last sample). */
void smp_thread_gone(struct smp_thread *t, uint64_t now);

/*
 * The account of a thread: times relative to origin (the run's start). A
 * thread that has not ended is closed at its last sample (alive_at_end).
 */
void smp_thread_acct(const struct smp_thread *t, struct thread_acct *a, uint64_t origin,
		     const struct smp_clock *c);

/* The figures of the sampled struct alone (for a cross-check beside eBPF). */
void smp_thread_sampled(const struct smp_thread *t, struct thread_acct *a, uint64_t origin);

struct run;

/*
 * Without eBPF, after the threads are folded (and again when taskstats adds
 * threads): the per-thread kernel cross-checks have nothing to compare (the
 * figures are the kernel's counters), and the tree's CPU time is compared
 * with rusage: what no thread accounts for is a thread no source saw, or
 * the time after a thread's last sample.
 */
void smp_run_checks(struct run *r);

#endif /* TSARUN_SAMPLING_H */
