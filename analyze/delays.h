/* SPDX-License-Identifier: MIT */
/*
 * Attaching taskstats records to the run's threads. Pure: records and
 * threads in, delays and quality figures out.
 *
 * A record goes to a thread only when their identities provably agree: the
 * same tid (and tgid), and a start time and kernel counters that fit. A
 * tid alone proves nothing: tids are reused (pid_max can be 32768), so a
 * record could belong to an earlier or later thread with the same number.
 *
 * What a record says about its thread's start: the kernel computes
 * ac_etime (elapsed, in us) when it writes the record, at a moment T that
 * user space does not see directly:
 *  - for a query, T lies between the request and the reply;
 *  - for an exit record, T lies before the record was received, and before
 *    the thread's final switch-out. When the eBPF probe read the thread's
 *    counters at that final switch, the time from T to the switch is known
 *    too: the CPU time (sum_exec_runtime grew by it), the runqueue time
 *    (run_delay grew by it) and, when the thread was not switched out again
 *    after T (pcount did not grow), nothing else, up to the counters' last
 *    update at the top of that final __schedule(). The start it implies
 *    must then match task->start_time to within a microsecond and the
 *    clocks' disagreement.
 * Counters only grow: a record whose counters exceed the thread's final
 * ones is not that thread's. When several threads of one tid fit a record,
 * records with a single candidate claim theirs first; what stays ambiguous
 * is counted, never attached.
 */
#ifndef TSARUN_DELAYS_H
#define TSARUN_DELAYS_H

#include <stdbool.h>
#include <stddef.h>

struct run;
struct ts_record;

/*
 * How far the eBPF probe's times converted from the runqueue clock (with a
 * sampled offset, see bpf/sched.bpf.c: a thread's start, the last update
 * of its counters) and the kernel's ktime may disagree at one instant, and
 * the slack allowed for it.
 */
#define DELAYS_CLOCK_SLACK_NS 50000ull

struct delays_opts {
	/* kernel.task_delayacct was on when the run's threads started */
	bool non_cpu_live;
	/* ... and when threads that existed before tracking began had started */
	bool non_cpu_live_preexisting;
	/*
	 * Records with no thread of their tid become threads of their own
	 * (when no scheduler source saw them: short-lived threads between
	 * procfs samples).
	 */
	bool create_missing;
};

/*
 * Attach the n records recs[] point to to r's threads (r->threads sorted or not), fill
 * r->quality.ts and the taskstats CPU delay cross-check. With
 * create_missing, threads may be added: call fold_finish() after.
 * Returns 0 or -ENOMEM.
 */
int delays_attach(struct run *r, const struct ts_record *const *recs, size_t n,
		  const struct delays_opts *o);

#endif /* TSARUN_DELAYS_H */
