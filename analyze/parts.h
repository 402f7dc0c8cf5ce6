/* SPDX-License-Identifier: MIT */
/*
 * A run's time in parts whose names mean the same in every run: what an
 * explained comparison (explain.h) sets side by side, run by run. Built
 * from a run's threads, stacks and bash profile while it still has them
 * (only the last run keeps its rows), kept for every run, written into the
 * artifact (runs[].parts) and read back, so a stored baseline can be
 * explained as well as a live one.
 *
 * A thread is named by where it sits, never by its pid:
 *   process path  the root process's comm, then each descendant's comm down
 *                 to the thread's process, "/"-separated; a process that is
 *                 not the first of its parent's children of that name gets
 *                 "#k", k its place among them by start time (then pid);
 *   thread        the process path, ":", the thread's comm, "#k" likewise
 *                 among the process's threads of that name.
 * Past PARTS_MAX_ORDINAL same-name siblings, the rest share one name
 * ("worker#16+"): a thousand short threads of one name are one part, not a
 * thousand that come and go with the machine's timing.
 *
 * Parts: each thread's time by state (on-CPU, runqueue, S, D, stopped, and
 * the residual), each thread's wall view by stack when the run has stacks
 * (stacks.h: on-CPU samples spread over its on-CPU time, off-CPU stacks
 * with their blocked time, the rest under bracketed frames), at most
 * PARTS_MAX_STACKS of them (the rest per thread and state under
 * "[other stacks]"), and with --bash each command's own wall and CPU time.
 *
 * Ownership: a run_parts owns its strings. Functions return 0 or -errno.
 */
#ifndef TSARUN_PARTS_H
#define TSARUN_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct run;

#define PARTS_MAX_ORDINAL 16
#define PARTS_MAX_STACKS  400
#define PARTS_ST_RESIDUAL 5 /* after TSA_ST_STOPPED: a state index for the residual */
#define PARTS_NSTATES	  6

enum part_kind {
	PART_THREAD = 0, /* a thread's time in one state */
	PART_STACK,	 /* ... at one stack */
	PART_BASH,	 /* a bash command's own time (ns: wall, cpu_ns: CPU) */
};

struct part {
	uint8_t kind;
	uint8_t state;	 /* PART_THREAD/STACK: TSA_ST_* or PARTS_ST_RESIDUAL */
	char *thread;	 /* PART_THREAD/STACK: the thread's name (above) */
	char *stack;	 /* PART_STACK: folded frames, root first; PART_BASH: the command's path */
	uint64_t ns;	 /* time in that state (at that stack); PART_BASH: own wall time */
	uint64_t cpu_ns; /* PART_BASH: own CPU time; on-CPU parts: ns less steal (rusage's CPU) */
};

struct run_parts {
	char
	    *root; /* the command's first thread: its life is the run's wall time (NULL: unknown) */
	bool stacks; /* the run had stacks: PART_STACK parts are there */
	bool bash;   /* the run had a bash profile: PART_BASH parts are there */
	struct part *v;
	size_t n, cap;
};

/* The parts of a run that still has its rows (r->detailed), or NULL (errno set). */
struct run_parts *run_parts__build(const struct run *r);
struct run_parts *run_parts__new(void);
void run_parts__free(struct run_parts *p);

/* Add one part (strings copied; NULL where the kind has none). */
int run_parts__add(struct run_parts *p, enum part_kind kind, int state, const char *thread,
		   const char *stack, uint64_t ns, uint64_t cpu_ns);

/* "on_cpu", "runqueue", "sleeping", "uninterruptible", "stopped", "residual"; -1 if none. */
const char *parts_state_name(int state);
int parts_state_by_name(const char *name);

#endif /* TSARUN_PARTS_H */
