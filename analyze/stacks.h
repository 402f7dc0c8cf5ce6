/* SPDX-License-Identifier: MIT */
/*
 * Stacks of one run, symbolized: where threads blocked (off-CPU: time by
 * thread, state, user and kernel stack, and the waker's stacks with
 * --waker) and where they ran (on-CPU samples by thread and stacks).
 * Built by the stacks probe after the run, read by the artifact, the table
 * and the folded and SVG writers. Pure: no I/O but the writers' FILE.
 *
 * Frames are strings, root (outermost caller) first. Kernel frames end in
 * "_[k]" (the flamegraph convention); a frame that could not be resolved to
 * a symbol is "module+0xoffset", or "[unknown]+0xaddress" when even the
 * module is unknown. A stack that could not be taken at all is one frame in
 * brackets saying why ("[user stack not captured: exited]").
 *
 * Ownership: a run_stacks owns its traces (and their strings) and aggs.
 */
#ifndef TSARUN_STACKS_H
#define TSARUN_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tsarun.h"

struct run;
struct thread_acct;

struct stack_trace {
	uint32_t nframes;
	char **frames;	/* root first */
	uint8_t status; /* enum tsa_stack_status */
	bool kernel;
	bool truncated;	   /* deeper than the kernel kept: the outermost frames are missing */
	bool cut;	   /* of those, the unwinding from the stack's top ended early */
	uint32_t repaired; /* user frames the frame-pointer walk skipped, recovered from CFI */
};

enum stack_agg_kind {
	STACK_OFFCPU = 0,
	STACK_ONCPU,
};

struct stack_agg {
	enum stack_agg_kind kind;
	uint32_t pid;
	uint32_t tid;
	int state;	 /* TSA_ST_SLEEP / TSA_ST_DISK; TSA_ST_ONCPU for samples */
	uint32_t ustack; /* index into traces */
	uint32_t kstack;
	bool has_waker;
	uint32_t waker_pid;
	uint32_t waker_tid;
	char waker_comm[TSA_COMM_LEN];
	uint32_t waker_ustack;
	uint32_t waker_kstack;
	uint64_t count;	   /* sleeps, or samples */
	uint64_t total_ns; /* off-CPU: blocked time; on-CPU: 0 */
	/*
	 * The thread's name when the stack was taken, when that is not its
	 * last: a process that exec'd later ("": the thread's comm).
	 */
	char comm[TSA_COMM_LEN];
};

/* Why stacks are missing or partial, for quality.stack_drops and the report. */
struct stack_drops {
	uint64_t kstack_fail; /* kernel stacks the helper could not take */
	uint64_t ustack_fail; /* user stacks the helper could not take (or empty) */
	uint64_t map_full;    /* stacks the stack maps had no room for */
	uint64_t truncated;   /* stacks deeper than the kernel keeps */
	uint64_t agg_full;    /* sleeps the aggregate map had no room for (time lost) */
	uint64_t agg_full_ns; /* their time */
	uint64_t
	    pending_lost; /* sleeps charged without a user stack (pending map full or overflow) */
	uint64_t waker_missed; /* sleeps charged without the waker's stacks */
	uint64_t oncpu_full;   /* on-CPU samples lost: aggregate map full */
	uint64_t
	    perf_lost; /* mapping records the kernel could not deliver (symbols may be missing) */
	uint64_t unresolved; /* user frames with no module known */
	/*
	 * Sleeps and samples whose user stack was taken, but whose unwinding
	 * from the copied top of the stack ended before its outermost frames
	 * (marked truncated). Not a drop: the frames it has are right.
	 */
	uint64_t cut;
};

struct run_stacks {
	bool offcpu;
	bool oncpu;
	bool waker;
	uint64_t offcpu_min_ns;
	unsigned freq;		  /* on-CPU samples per second of CPU time */
	uint64_t oncpu_period_ns; /* CPU time each sample stands for */
	uint64_t oncpu_samples;	  /* samples of tracked threads */
	char user_symbols[192];	  /* "" or why user frames are not symbolized */
	char kernel_symbols[192]; /* "" or why kernel frames are not symbolized */
	char oncpu_reason[192];	  /* "" or why on-CPU sampling is unavailable */
	struct stack_drops drops;
	struct stack_trace *traces;
	size_t ntraces, traces_cap;
	struct stack_agg *aggs;
	size_t naggs, aggs_cap;
};

struct run_stacks *run_stacks__new(void);
void run_stacks__free(struct run_stacks *s);

/* Add a trace (frames copied, root first). Returns its index, or -ENOMEM. */
int64_t run_stacks__add_trace(struct run_stacks *s, const char *const *frames, size_t n,
			      uint8_t status, bool kernel, bool truncated, uint32_t repaired);

/* A one-frame trace saying why a stack is missing ("[user stack not captured: ...]"). */
int64_t run_stacks__add_missing(struct run_stacks *s, bool kernel, uint8_t status);

int run_stacks__add_agg(struct run_stacks *s, const struct stack_agg *a);

/* The name of the thread an aggregate is of, as it was when its stack was taken. */
const char *stack_agg_comm(const struct run *r, const struct stack_agg *a);

/*
 * Merge traces that read the same and aggregates that then match, and sort:
 * off-CPU first, by total time (then count) descending.
 */
void run_stacks__sort(struct run_stacks *s);

/* Total stack drops, for quality.stack_drops. */
uint64_t stack_drops_total(const struct stack_drops *d);

/* Name of a stack status: "ok", "exited", ... */
const char *stack_status_name(int status);

/* Per thread: the time and count charged to off-CPU stacks (summed over aggs). */
void run_stacks__thread_sums(const struct run_stacks *s, uint32_t tid, uint32_t pid, uint64_t *ns,
			     uint64_t *count);

/*
 * Folded profiles (one line per stack: frames separated by ';', a space,
 * an integer), which flamegraph.pl, inferno and speedscope read. Each
 * stack is rooted at "comm-pid;comm-tid" of its thread (names from r's
 * threads). Lines are written in a stable order.
 *
 * offcpu: blocked nanoseconds; the state is a frame above the thread
 *   ("[S]"/"[D]"), user frames then kernel frames. With waker pairs, the
 *   waker's stacks follow after a "--" frame, leaf-first, as bcc does.
 * oncpu: sample counts.
 * wall: nanoseconds per thread that add up to its lifetime: on-CPU time
 *   spread over its sample stacks (in proportion to their counts),
 *   "[runqueue]", blocked time on its stacks, "[sleeping < offcpu-min]"
 *   for sleeps below the threshold, "[sleeping, no stack]" for what the
 *   stacks do not hold (sleeps still open at the end, lost ones),
 *   "[stopped]" and "[unattributed]" (the residual).
 */
int stacks_write_offcpu_folded(FILE *f, const struct run *r);
int stacks_write_oncpu_folded(FILE *f, const struct run *r);
int stacks_write_wall_folded(FILE *f, const struct run *r);

/* Flame categories of the wall view, shared by the folded and SVG writers. */
enum wall_cat {
	WALL_ONCPU = 0,
	WALL_RUNQ,
	WALL_SLEEP,
	WALL_DISK,
	WALL_OTHER,
	WALL_NR,
};

/*
 * The wall view of one thread (as stacks_write_wall_folded() writes it),
 * given to emit one stack at a time: frames[0] and frames[1] are the
 * "comm-pid" and "comm-tid" labels, then the state's frame or the stack,
 * value in nanoseconds, cat an enum wall_cat. Returns 0, the first
 * non-zero return of emit, -ENOENT without stacks, or -ENOMEM.
 */
typedef int (*stacks_emit_fn)(void *ctx, const char *const *frames, size_t n, uint64_t v, int cat);
int stacks_walk_thread_wall(const struct run *r, const struct thread_acct *t, stacks_emit_fn emit,
			    void *ctx);

struct flame;

/*
 * Fill a flame with a profile: which is 0 off-CPU, 1 on-CPU, 2 wall. The
 * categories are set (on-CPU, runqueue, S, D, other) and each stack is
 * added under its state's category.
 */
int stacks_flame(struct flame *fl, const struct run *r, int which);

#endif /* TSARUN_STACKS_H */
