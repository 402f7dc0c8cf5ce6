/* SPDX-License-Identifier: MIT */
/*
 * The eBPF scheduler probe (bpf/sched.bpf.c): load, attach, mark the
 * command, collect one record per thread.
 *
 * Records arrive through a ring buffer as threads exit; sched_probe__drain()
 * converts them into the probe's thread array, which the caller takes with
 * sched_probe__take(). Threads still alive at the end are read with
 * sched_probe__survivors().
 */
#ifndef TSARUN_SCHED_H
#define TSARUN_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tsarun.h"

struct sched_probe;
struct thread_acct;

struct sched_probe_opts {
	uint64_t ringbuf_bytes;
	/* Off-CPU stacks (bpf/sched.bpf.c, targ_stacks); off: the code is not even verified. */
	bool stacks;
	uint64_t offcpu_min_ns;
	bool waker;
	/*
	 * Load the survivors' iterator with the rest, not when a run first needs
	 * it: under the sandbox no program can be loaded later, and verifying it
	 * with the rest costs less than a second instance of the object.
	 */
	bool survivors_now;
	/* --timeline: every state interval (bpf/sched.bpf.c, targ_timeline); 0 bytes: off. */
	uint64_t timeline_bytes;
	uint64_t timeline_max; /* intervals kept per run */
	size_t width;	       /* of stderr, for its warnings (0: whole lines) */
};

/* The stack maps, for the stacks probe (launcher/stacks.c) to read and clear. */
struct sched_stack_maps {
	int kstacks;   /* struct tsa_stack_key -> struct tsa_kstack */
	int ustacks;   /* struct tsa_stack_key -> struct tsa_ustack */
	int offcpu;    /* struct tsa_offcpu_key -> struct tsa_agg */
	int pending;   /* tid -> struct tsa_pending */
	int counters;  /* per-CPU __u64[TSA_C_NR] */
	int tasks;     /* task storage, for the on-CPU sampler */
	int scratch;   /* per-CPU stack scratch */
	bool deferred; /* user stacks of sleeps in system calls are taken at sys_exit */
	/* What the kernel lacks, for the on-CPU sampler to load as the probe did. */
	bool compat_obj;     /* no bpf_loop(): the TSA_COMPAT objects */
	bool no_btf_current; /* no bpf_get_current_task_btf() */
	bool no_task_regs;   /* no bpf_task_pt_regs() */
};

/* Fill m; returns -ENOENT when the probe was loaded without stacks. */
int sched_probe__stack_maps(const struct sched_probe *p, struct sched_stack_maps *m);

/* After the pending map was cleared: no thread waits for its user stack. */
void sched_probe__reset_pending(struct sched_probe *p);

/* Sum of counter which over CPUs (absolute, not a delta). */
uint64_t sched_probe__counter(const struct sched_probe *p, int which);

/* Totals of the probe's own counters, as deltas since the last reset. */
struct sched_probe_stats {
	uint64_t rb_drops;
	uint64_t storage_fail;
	uint64_t unknown_switch;
	uint64_t untraced_in;
	uint64_t tracked;
	uint64_t emitted;
	uint64_t stale; /* records of earlier generations, dropped */
	struct tsa_lost lost;
	uint64_t tl_sent; /* --timeline: events sent, and lost (the ring buffer was full) */
	uint64_t tl_drops;
};

/* Open, size, load and attach. Returns NULL with errno set and a reason in err. */
struct sched_probe *sched_probe__new(const struct sched_probe_opts *o, char *err, size_t errlen);

/*
 * After sched_probe__new() failed: what the kernel refused (the program,
 * or a map it would not create) and its last words about it, or NULL when
 * it did not say (no privilege, no BTF); and the refused program's
 * verifier log (its tail), or NULL. Valid until the next sched_probe__new().
 */
struct sched_load_failure {
	char object[64];   /* "tsa_switch", "tasks" */
	bool is_map;	   /* object is a map the kernel would not create */
	char message[160]; /* the verifier's last message, or the error */
};
const struct sched_load_failure *sched_probe_failure(void);
const char *sched_probe_verifier_log(void);
void sched_probe__free(struct sched_probe *p);

/*
 * Track the process behind pidfd (and everything it forks) from its next
 * scheduler event on. flags adds TSA_F_ROOT or TSA_F_PREEXISTING. For a
 * pre-existing task, start_ns is the attach time; 0 lets the first event
 * start the clock. kstart, when not NULL, holds the task's kernel counters
 * (TSA_K_*) as of now, read while it is blocked: its first event need not
 * read them (and may be a switch-out whose switch-in went unseen). Returns
 * 0 or -errno.
 */
int sched_probe__mark(struct sched_probe *p, int pidfd, pid_t tid, pid_t pid, pid_t ppid,
		      uint32_t flags, uint64_t start_ns, const uint64_t *kstart);

/*
 * Start a new generation (a new run): records of tasks tracked in an earlier
 * generation (survivors left running) are dropped and counted from now on.
 */
void sched_probe__new_generation(struct sched_probe *p);

/* Which variant of the probe this kernel took, in words (for doctor and -v). */
const char *sched_probe__variant(const struct sched_probe *p);

/* The ring buffer's epoll descriptor, for the event loop. */
int sched_probe__fd(const struct sched_probe *p);

/* Move every record waiting in the ring buffer to the array. Returns count or -errno. */
int sched_probe__drain(struct sched_probe *p);

/* Tracked threads whose final record has not been sent yet. */
int64_t sched_probe__live(const struct sched_probe *p);

/*
 * Wait (draining) up to timeout_ms for every tracked thread's record;
 * a thread reaped by its parent is still on its way to its final switch.
 * Returns the number still outstanding.
 */
int64_t sched_probe__settle(struct sched_probe *p, int timeout_ms);

/* Append snapshots of tracked threads still alive. Returns count or -errno. */
int sched_probe__survivors(struct sched_probe *p);

/*
 * --interval: snapshots of the tracked threads alive now, each closed at
 * now as the end-of-run read closes them (the live records are not
 * changed), converted (times relative to the run's start) into *buf, the
 * caller's array of *cap entries (NULL and 0 at first), grown as needed
 * and kept from one call to the next (a new array at each tick would be
 * mapped and faulted in again). *n: how many. The probe's records are
 * left as they are. Returns 0 or -errno.
 */
int sched_probe__snapshot(struct sched_probe *p, struct thread_acct **buf, size_t *cap, size_t *n);

/* The records collected so far this run (exit records, in arrival order); borrowed. */
const struct thread_acct *sched_probe__records(const struct sched_probe *p, size_t *n);

/*
 * Hand the collected threads (converted as they arrived, times relative to
 * the run's start) to the caller, who frees them; start a new array.
 */
struct thread_acct *sched_probe__take(struct sched_probe *p, size_t *n);

/* Counter deltas since the previous call. */
int sched_probe__stats(struct sched_probe *p, struct sched_probe_stats *st);

struct probe;

/*
 * Present the probe to the supervisor: arm marks the command, on_ready
 * drains the ring buffer, collect settles, reads survivors and folds the
 * records into the run (threads, processes, totals, quality).
 */
void sched_probe__as_probe(struct sched_probe *sp, struct probe *out);

#endif /* TSARUN_SCHED_H */
