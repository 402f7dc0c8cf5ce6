/* SPDX-License-Identifier: MIT */
/*
 * The accounting fold: per-thread records from the probes become the run's
 * threads[], procs[], totals and quality. Pure: no I/O, no kernel.
 */
#ifndef TSARUN_FOLD_H
#define TSARUN_FOLD_H

#include <stddef.h>

#include "run.h"

/* One probe record as a thread account; times relative to origin (the run's start). */
void fold_convert(struct thread_acct *t, const struct tsa_thread *rec, uint64_t origin);

/*
 * Fold n thread accounts into r, taking ownership of the array (it becomes
 * r->threads, freed with the run; freed here on error). r->ru must be set
 * for the tree cross-check and r->quality.lost for records lost in
 * transit. The same thread (tid and task start) seen twice is kept once:
 * an exit record wins over a survivor snapshot. Threads are ordered by
 * start, in place. Returns 0 or -ENOMEM.
 */
int fold_threads(struct run *r, struct thread_acct *threads, size_t n);

/* fold_threads() on raw probe records (r->start_mono_ns is the origin). */
int fold_run(struct run *r, const struct tsa_thread *recs, size_t n);

/*
 * Recompute what follows from r->threads[] (ordered again by start):
 * processes, totals, peak concurrency, residual. For sources that build or
 * add to threads[] after the fold (procfs, taskstats).
 */
int fold_finish(struct run *r);

/* Fraction helper shared with the table: |a - b| / base, 0 when base is 0. */
double fold_frac(uint64_t a, uint64_t b, uint64_t base);

/*
 * The kernel reads its scheduler clock when __schedule() starts, the probe
 * at the tracepoint a few microseconds later (after picking the next task,
 * and any idle balancing); the wakeup path differs the same way. Over a
 * 100 us thread that jitter is a large fraction of the life, so threads
 * shorter than this count in the totals but are not compared one by one.
 */
#define FOLD_CHECK_MIN_LIFETIME_NS 10000000ull

/*
 * Add one thread to a cross-check: a figure and the kernel's (or another
 * source's) figure for it, as a fraction of base; threads that lived less
 * than FOLD_CHECK_MIN_LIFETIME_NS count in the sums only. Then
 * fold_check_close() once every thread is in.
 */
void fold_check_thread(struct cross_check *c, uint64_t ebpf, uint64_t kernel, uint64_t base,
		       uint64_t lifetime, uint32_t tid, uint64_t *sum_e, uint64_t *sum_k);
void fold_check_close(struct cross_check *c, uint64_t sum_e, uint64_t sum_k);

/*
 * A thread's runqueue time as the kernel's run_delay can hold it: without
 * the waits the kernel never stamped (tsarun.h, unstamped_wait_ns), which
 * fold_convert() keeps within the runqueue time.
 */
static inline uint64_t fold_runq_stamped(const struct thread_acct *t)
{
	return t->state_ns[TSA_ST_RUNQ] - t->unstamped_wait_ns;
}

#endif /* TSARUN_FOLD_H */
