/* SPDX-License-Identifier: MIT */
/*
 * The accounting fold: per-thread records from the probes become the run's
 * threads[], procs[], totals and quality. Pure: no I/O, no kernel.
 */
#ifndef TSARUN_FOLD_H
#define TSARUN_FOLD_H

#include <stddef.h>

#include "run.h"

/*
 * Fold n records into r (r->start_mono_ns must be set; r->ru too, for the
 * tree cross-check; r->quality.lost for records lost in transit). Records
 * of the same thread (tid and task start) are merged: an exit record wins
 * over a survivor snapshot. Returns 0 or -ENOMEM.
 */
int fold_run(struct run *r, const struct tsa_thread *recs, size_t n);

/* Fraction helper shared with the table: |a - b| / base, 0 when base is 0. */
double fold_frac(uint64_t a, uint64_t b, uint64_t base);

#endif /* TSARUN_FOLD_H */
