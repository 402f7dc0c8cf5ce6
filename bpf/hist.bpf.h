/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The off-CPU histograms' slot for a wait: floor(log2) of its length in
 * microseconds (tsa_thread.hist). Included by sched.bpf.c; plain C, so
 * that tests/unit/test_hist.c runs it over every boundary.
 */
#ifndef TSARUN_HIST_BPF_H
#define TSARUN_HIST_BPF_H

/* 1 when ns >= 1000 << k, else 0: both are below 2^63, so the difference's sign says. */
#define HIST_AT_LEAST(ns, k) ((((1000ull << (k)) - 1 - (ns)) >> 63))

/*
 * The slot is found by comparing ns with 1000 << k rather than dividing:
 * a 64-bit division is the dearest instruction on the switch path. Slot 0
 * also holds sub-microsecond waits; the last slot (31, TSA_HIST_SLOTS - 1)
 * holds everything from 2^31 us up. ns is a difference of two ktime values,
 * far below 2^63.
 *
 * Without a branch: a binary search with a branch per step gave the
 * verifier 32 paths out of here, one for each slot, and it walked the
 * rest of every caller once for each; that was half of its work on the
 * switch program (12,895 instructions processed; 6,808 this way), and
 * 4/5 of it on the survivors' iterator (5,012; 1,135).
 */
static __always_inline __u32 log2_slot(__u64 ns)
{
	__u64 r;

	r = HIST_AT_LEAST(ns, 16) << 4;
	r += HIST_AT_LEAST(ns, r + 8) << 3;
	r += HIST_AT_LEAST(ns, r + 4) << 2;
	r += HIST_AT_LEAST(ns, r + 2) << 1;
	r += HIST_AT_LEAST(ns, r + 1);
	return (__u32)r;
}

#endif /* TSARUN_HIST_BPF_H */
