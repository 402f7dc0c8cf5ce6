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
#define CLOCK_MAX_STEP_NS 2000ull     /* how far a window may raise it (drift) */

/*
 * A sample of the offset: now from bpf_ktime_get_ns(), clk a runqueue clock
 * refreshed a moment ago. A sample is late by the time since the refresh,
 * never early, so the smallest is the best: one below the offset lowers it
 * at once. Raising it (the clocks drift apart) waits for a whole window's
 * smallest sample, and only by a step drift can explain, so that neither a
 * refresh that was skipped unnoticed nor one window's late samples push the
 * clock forward. A window's first sample alone once raised it: beside
 * another tracer of sched_switch, whose handler runs before ours and makes
 * every sample late by its cost, wakeups placed from it came late by that
 * much until a later sample of the window lowered it again: with perf
 * sched record beside it, 92-115 of a direct-I/O dd's 1,508 runqueue waits
 * came out under a microsecond, against 1-10 alone (issue 30).
 */
static __always_inline void sample_offset(struct tsa_cpu_clock *c, __u64 clk, __u64 now)
{
	__u64 sample = now - clk;

	if (!c->sampled) {
		c->offset = sample;
		c->window_min = sample;
		c->window_at = clk;
		c->sampled = 1;
		__sync_fetch_and_add(&clocks_unset, -1);
		return;
	}
	if (clk - c->window_at >= CLOCK_WINDOW_NS) {
		/* The window that ended: its smallest sample, at most a step up. */
		if ((__s64)(c->window_min - c->offset) > 0)
			c->offset = c->window_min - c->offset <= CLOCK_MAX_STEP_NS
					? c->window_min
					: c->offset + CLOCK_MAX_STEP_NS;
		c->window_min = sample;
		c->window_at = clk;
	} else if ((__s64)(sample - c->window_min) < 0) {
		c->window_min = sample;
	}
	/*
	 * Signed: compared as unsigned values, a late sample of a negative
	 * offset is "smaller" than the offset once it is past zero, and it
	 * stuck there (2 ms late, found on a kvm-clock guest).
	 */
	if ((__s64)(sample - c->offset) < 0)
		c->offset = sample;
}

#endif
