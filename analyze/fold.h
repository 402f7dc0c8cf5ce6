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

/* Fraction helper shared with the table: |a - b| / base, 0 when base is 0. */
double fold_frac(uint64_t a, uint64_t b, uint64_t base);

#endif /* TSARUN_FOLD_H */
