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

#include "probe.h"

struct run;
struct tsarun_opts;
struct sched_probe;
struct perf_probe;
struct ts_probe;
struct delayacct_hold;
struct bash_probe;
struct stacks_probe;
struct proc_probe;
struct stream_probe;

#define PROBESET_MAX PROBE_MAX

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
struct probeset *probeset__new(const struct tsarun_opts *o);
void probeset__free(struct probeset *ps); /* also puts kernel.task_delayacct back */

/*
 * --backend named a source that cannot be used: -ENODEV with a message
 * (tsarun exits 125 before running anything).
 */
int probeset__check_forced(const struct probeset *ps, const struct tsarun_opts *o, char *err,
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
