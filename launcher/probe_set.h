/* SPDX-License-Identifier: MIT */
/*
 * The set of sources a session uses. probeset__new() prepares every source
 * the options ask for (loading BPF objects, opening sockets) before the
 * first run; a source that cannot be used is recorded with the reason and
 * the session goes on without it. Each run then arms the available ones
 * at the exec barrier (probe.h).
 */
#ifndef TSARUN_PROBES_H
#define TSARUN_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#include "probe.h"

struct run;
struct sched_probe;
struct perf_probe;
struct ts_probe;
struct delayacct_hold;
struct bash_probe;
struct stacks_probe;
struct proc_probe;
struct stream_probe;

#define PROBESET_MAX PROBE_MAX

/* The sources --backend chooses (0: auto, every one that works, procfs when eBPF does not). */
enum backend_bits {
	BACKEND_EBPF = 1u << 0,
	BACKEND_TASKSTATS = 1u << 1,
	BACKEND_PROC = 1u << 2,
};

/* What the session's sources were asked for (options.h holds them; options_for_probeset()). */
struct probeset_opts {
	unsigned backends;	 /* --backend: BACKEND_* bits; 0: auto */
	uint64_t ringbuf_bytes;	 /* --ringbuf: the scheduler probe's ring buffer */
	uint64_t sample_ns;	 /* --sample: the procfs source's interval */
	bool sample_given;	 /* ... given, to say when it is not applied */
	bool no_delayacct;	 /* --no-delayacct: kernel.task_delayacct left as it is */
	bool stacks;		 /* --stacks: off-CPU stacks of sleeps */
	uint64_t offcpu_min_ns;	 /* --offcpu-min: shorter sleeps are counted, not stack-walked */
	bool waker;		 /* --waker: the waker's stacks too */
	bool flame;		 /* --flame: on-CPU samples too */
	unsigned freq;		 /* --freq: on-CPU samples per second of a thread's CPU time */
	bool timeline;		 /* --timeline: every state interval of every thread */
	uint64_t timeline_bytes; /* --timeline-buffer: its ring buffer */
	uint64_t timeline_max;	 /* --timeline-max: intervals kept per run */
	bool interval;		 /* --interval: the live threads are read at every tick */
	bool no_sandbox;	 /* --no-sandbox: programs may still be loaded after set-up */
	bool quiet;
	int verbose;
	bool wide; /* --wide: tsarun's lines on stderr unwrapped (outputs_stderr_width()) */
};

struct probeset {
	struct probe probes[PROBESET_MAX]; /* in arm and collect order */
	int nprobes;
	struct sched_probe *sched;
	struct perf_probe *perf; /* the instruction counter, NULL without a PMU */
	struct stacks_probe *stacks;
	struct ts_probe *ts;
	struct proc_probe *proc;	  /* procfs sampling, or NULL */
	struct delayacct_hold *delayacct; /* kernel.task_delayacct, held on for the session */
	struct stream_probe *stream;	  /* --interval: the run's JSON Lines, or NULL */
	struct {
		const char *name;
		char reason[192];
	} unavailable[PROBESET_MAX];
	int nunavailable;
	/* eBPF was expected here (privileged, BTF) and did not load: see run_quality.ebpf_load. */
	bool ebpf_failed;
	bool ebpf_failed_map;
	char ebpf_object[64];
	char ebpf_message[192];
	char ebpf_reason[192]; /* the whole reason, for the options that need eBPF */
};

/* Prepare the sources. Returns NULL only when out of memory. */
struct probeset *probeset__new(const struct probeset_opts *o);
void probeset__free(struct probeset *ps); /* also puts kernel.task_delayacct back */

/*
 * --backend named a source that cannot be used: -ENODEV with a message
 * (tsarun exits 125 before running anything).
 */
int probeset__check_forced(const struct probeset *ps, const struct probeset_opts *o, char *err,
			   size_t errlen);

/* Record a source that cannot be used this session, with the reason. */
void probeset__unavailable(struct probeset *ps, const char *name, const char *reason, int verbose);

/* --bash: read the script's records; after the eBPF probe, which folds the tree first. */
void probeset__add_bash(struct probeset *ps, struct bash_probe *b);

/* --interval: the stream, last of all (it reads what the others collected); taken. 0 or -ENOSPC. */
int probeset__add_stream(struct probeset *ps, struct stream_probe *sp);

/* Record in r which sources are active and which are not, with reasons. */
void probeset__describe(const struct probeset *ps, struct run *r);

/* After a run: what only then can be said (kernel.task_delayacct during the run). */
void probeset__conclude(const struct probeset *ps, struct run *r);

#endif /* TSARUN_PROBES_H */
