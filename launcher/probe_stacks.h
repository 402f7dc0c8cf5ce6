/* SPDX-License-Identifier: MIT */
/*
 * The stacks probe (--stacks, --flame): after the scheduler probe has
 * folded the threads, it reads the stack aggregates the BPF programs kept,
 * symbolizes them and attaches them to the run (analyze/stacks.h).
 *
 * At the exec barrier it opens one perf event per CPU on the command with
 * inherit: a software cpu-clock at --freq carrying the on-CPU sampler
 * (bpf/oncpu.bpf.c) with --flame, a dummy event otherwise. Either way the
 * event tracks the tree's mappings, forks and execs (MMAP2 with build IDs,
 * FORK, COMM-exec records, written by the kernel when they happen), which is
 * how user frames are symbolized after the processes are gone. Without
 * perf events, user frames stay module-less addresses and the run says why.
 */
#ifndef TSARUN_STACKPROBE_H
#define TSARUN_STACKPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct probe;
struct sched_probe;
struct stacks_probe;

/* What --stacks, --offcpu-min, --waker, --flame and --freq asked for. */
struct stacks_probe_opts {
	uint64_t offcpu_min_ns; /* shorter sleeps are counted, not charged to a stack */
	bool waker;		/* the waker's stacks too */
	bool flame;		/* on-CPU samples too */
	unsigned freq;		/* on-CPU samples per second of a thread's CPU time */
};

/* --offcpu-min's default. */
#define OFFCPU_MIN_DEFAULT_NS 10000ull /* 10 us */

/* NULL with errno set and a reason in err. */
struct stacks_probe *stacks_probe__new(const struct stacks_probe_opts *o, struct sched_probe *sched,
				       char *err, size_t errlen);
void stacks_probe__free(struct stacks_probe *p);

void stacks_probe__as_probe(struct stacks_probe *sp, struct probe *out);

#endif /* TSARUN_STACKPROBE_H */
