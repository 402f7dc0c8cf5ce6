/* SPDX-License-Identifier: MIT */
/*
 * The instruction counter: one perf event on the command, inherited by
 * every thread and process it creates, enabled at its exec (so the
 * barrier and the exec itself are not counted) and read once the tree has
 * ended: children's counts are added to it as they exit. A hardware
 * counter needs a PMU; perf_probe__new() says why there is none.
 */
#ifndef TSARUN_PERF_H
#define TSARUN_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct probe;

struct perf_probe_opts {
	uint32_t type;	 /* PERF_TYPE_HARDWARE, or PERF_TYPE_SOFTWARE in tests */
	uint64_t config; /* PERF_COUNT_HW_INSTRUCTIONS */
	bool exclude_kernel;
};

/*
 * Check that the event can be opened here (on tsarun itself), and prepare.
 * Returns NULL with the reason in err when it cannot ("no hardware PMU",
 * "not permitted ...").
 */
struct perf_probe *perf_probe__new(const struct perf_probe_opts *o, char *err, size_t errlen);
void perf_probe__free(struct perf_probe *pp);

/* The probe the supervisor drives: arm at the barrier, collect after the tree ended. */
void perf_probe__as_probe(struct perf_probe *pp, struct probe *p);

/*
 * The same steps without a supervisor, for tests: open the counter on pid
 * (stopped before its exec), and read it after the tree has ended. read
 * gives the count, scaled when the counter did not run all the time
 * (*scaled then says by how much it ran: running / enabled).
 */
int perf_probe__open(struct perf_probe *pp, int pid);
int perf_probe__read(struct perf_probe *pp, uint64_t *count, double *running_fraction);

#endif /* TSARUN_PERF_H */
