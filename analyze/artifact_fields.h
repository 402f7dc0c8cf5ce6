/* SPDX-License-Identifier: MIT */
/*
 * The artifact's plain figures, written down once: the JSON name of each
 * count and duration of a thread row and of a run's totals, where its value
 * is kept, when it is null (what a source could not measure is null, never
 * 0) and whether it is read back (by `tsarun report`, `compare` and a
 * --baseline). artifact.c writes these fields from the tables, in their
 * order, and artifact_read.c reads them from the same tables; a null read
 * back sets the bits it was written for. The rest of a row (names,
 * objects, arrays) is written and read around them. doc/artifact.md and
 * doc/tsarun.schema.json describe every field.
 */
#ifndef TSARUN_ARTIFACT_FIELDS_H
#define TSARUN_ARTIFACT_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARTIFACT_FIELD_NONE ((size_t)-1) /* not a field of that row */

/* A state's time: on_cpu_ns ... stopped_ns, by its index in state_ns[]. */
struct artifact_state_field {
	const char *name;
	int state;	     /* TSA_ST_* */
	uint32_t unmeasured; /* ACCT_NO_* bits that make it null */
};

extern const struct artifact_state_field artifact_state_fields[];
extern const size_t artifact_nstate_fields;

/* The rows that have counts. */
enum artifact_row {
	ARTIFACT_ROW_THREAD = 1u << 0, /* runs[].threads[] */
	ARTIFACT_ROW_TOTALS = 1u << 1, /* runs[].totals */
};

/* A count or a duration (uint64_t) of a thread row and of the run's totals. */
struct artifact_count_field {
	const char *name;
	size_t off[2];	     /* [0] in struct thread_acct, [1] in struct run_totals, or NONE */
	uint32_t unmeasured; /* ACCT_NO_* bits that make it null; a null read sets them */
	bool ebpf_only;	     /* a thread's: null unless its figures came from eBPF */
	bool read;	     /* read back; else written for people and tools only */
	unsigned required;   /* enum artifact_row: the rows refused without it */
};

extern const struct artifact_count_field artifact_count_fields[];
extern const size_t artifact_ncount_fields;

/* Where field f is kept in a row of that kind; NONE when the row has no such field. */
static inline size_t artifact_field_off(const struct artifact_count_field *f, enum artifact_row row)
{
	return f->off[row == ARTIFACT_ROW_TOTALS];
}

/* What procfs samples said of a thread beyond its counters (struct thread_sampled). */
struct artifact_sampled_field {
	const char *name;
	size_t off; /* of a uint64_t in struct thread_sampled */
};

extern const struct artifact_sampled_field artifact_sampled_fields[];
extern const size_t artifact_nsampled_fields;
/* by_state_ns's keys, by its index: R, S (and I), D, T (and t). */
extern const char *const artifact_sampled_states[4];

#endif /* TSARUN_ARTIFACT_FIELDS_H */
