/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How a CPU's runqueue clock maps to CLOCK_MONOTONIC: the offset between
 * them, from samples taken where the scheduler has just refreshed the
 * clock. Included by sched.bpf.c, after clocks_unset; plain C, so that
 * tests/unit/test_clock.c runs it on sequences of samples.
 */
#ifndef TSARUN_CLOCK_BPF_H
#define TSARUN_CLOCK_BPF_H

#define CLOCK_WINDOW_NS	  10000000ull /* a window's smallest sample is the offset */
#define CLOCK_MAX_STEP_NS 2000ull     /* how far a new window may raise it (drift) */

/*
 * A sample of the offset: now from bpf_ktime_get_ns(), clk a runqueue clock
 * refreshed a moment ago. A sample is late by the time since the refresh,
 * never early, so the smallest sample of a window is the best; a new window
 * may raise the offset only by a step drift can explain, so a refresh that
 * was skipped unnoticed cannot push the clock forward.
 */
static __always_inline void sample_offset(struct tsa_cpu_clock *c, __u64 clk, __u64 now)
{
	__u64 sample = now - clk;

	if (!c->sampled) {
		c->offset = sample;
		c->window_at = clk;
		c->sampled = 1;
		__sync_fetch_and_add(&clocks_unset, -1);
	} else if ((__s64)(sample - c->offset) < 0) {
		/*
		 * Signed: compared as unsigned values, a late sample of a
		 * negative offset is "smaller" than the offset once it is past
		 * zero, and it stuck there (2 ms late, found on a kvm-clock
		 * guest).
		 */
		c->offset = sample;
	} else if (clk - c->window_at >= CLOCK_WINDOW_NS) {
		c->offset = sample - c->offset <= CLOCK_MAX_STEP_NS ? sample
								    : c->offset + CLOCK_MAX_STEP_NS;
		c->window_at = clk;
	}
}

#endif
