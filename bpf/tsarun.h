/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one header shared by the BPF programs and user space: constants, enums
 * and fixed-width records. Nothing else belongs here. User space checks the
 * record sizes with _Static_assert, so a change on one side cannot silently
 * shift fields on the other.
 */
#ifndef TSARUN_BPF_H
#define TSARUN_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space; BPF gets the types from vmlinux.h */
#endif

/* Where a tracked thread's time goes. The first TSA_ST_NR are accounted. */
enum tsa_state {
	TSA_ST_ONCPU = 0,
	TSA_ST_RUNQ = 1,    /* runnable, waiting for a CPU */
	TSA_ST_SLEEP = 2,   /* interruptible sleep (S), and TASK_IDLE (I) */
	TSA_ST_DISK = 3,    /* uninterruptible sleep (D), killable waits included */
	TSA_ST_STOPPED = 4, /* stopped, traced or frozen (T, t) */
	TSA_ST_NR = 5,
	TSA_ST_UNKNOWN = 5, /* tracked, but no event has told us the state yet */
	TSA_ST_DEAD = 6,    /* final switch-out seen; the record has been sent */
};

/* Off-CPU histogram: slot i counts intervals d with 2^i <= d/1us < 2^(i+1). */
#define TSA_HIST_SLOTS	32
#define TSA_HIST_STATES 4 /* RUNQ, SLEEP, DISK, STOPPED: index = state - 1 */

#define TSA_COMM_LEN 16

/* tsa_thread.flags */
enum tsa_thread_flags {
	TSA_F_TRACKED = 1u << 0,
	TSA_F_ROOT = 1u << 1,	     /* the command itself, marked by the supervisor */
	TSA_F_LEADER = 1u << 2,	     /* thread group leader (tid == pid) */
	TSA_F_GROUP_DEAD = 1u << 3,  /* last thread of its process: exit_status is the process's */
	TSA_F_EXITED = 1u << 4,	     /* exited: exit_status is valid */
	TSA_F_SURVIVOR = 1u << 5,    /* still alive when read at the end (snapshot) */
	TSA_F_WOKEN = 1u << 6,	     /* runnable because of a wakeup: latency clock running */
	TSA_F_PREEXISTING = 1u << 7, /* existed before tracking began (monitor mode) */
	TSA_F_EXECED = 1u << 8,	     /* called exec at least once */
};

/* Which kernel counters are sampled at the start and the end of tracking. */
enum tsa_kcounter {
	TSA_K_SUM_EXEC = 0, /* se.sum_exec_runtime */
	TSA_K_RUN_DELAY,    /* sched_info.run_delay */
	TSA_K_PCOUNT,	    /* sched_info.pcount */
	TSA_K_NVCSW,
	TSA_K_NIVCSW,
	TSA_K_NR,
};

/*
 * One thread's closing account. It lives in task storage while the thread
 * runs and travels to user space once: through the ring buffer at the
 * thread's final switch-out, or through the task iterator for survivors.
 * All times are CLOCK_MONOTONIC nanoseconds. The fields every scheduler
 * event touches come first, so an event touches three cache lines.
 */
struct tsa_thread {
	/* Hot: read or written at every event. */
	__u32 state;	/* enum tsa_state */
	__u32 flags;	/* enum tsa_thread_flags */
	__u64 since_ns; /* when the current state began */
	__u64 state_ns[TSA_ST_NR];
	__u64 woken_ns;	  /* last successful wakeup, for wakeup latency */
	__u64 steal_mark; /* rq->clock - rq->clock_task at the last switch-in */
	__u64 exec_mark;  /* se.sum_exec_runtime when the thread last left the CPU */
	__u64 delay_mark; /* sched_info.run_delay then: the waits the kernel counts since */
	__u32 last_cpu;
	__u32 gen;    /* the run that started tracking it (inherited by its children) */
	__u64 slices; /* switch-ins */
	__u64 voluntary;
	__u64 involuntary;
	__u64 wakeups;
	__u64 migrations;
	__u64 wakeup_lat_sum;
	__u64 wakeup_lat_max;
	__u64 wakeup_lat_count;
	/*
	 * Time taken from the thread while it was on a CPU: steal time of the
	 * virtual CPU (and IRQ time with CONFIG_IRQ_TIME_ACCOUNTING), read as
	 * the growth of rq->clock - rq->clock_task over its slices. Part of
	 * state_ns[TSA_ST_ONCPU]; the kernel leaves it out of sum_exec_runtime.
	 */
	__u64 steal_ns;
	__u64 untraced; /* switch-ins the kernel did not trace, inferred at the switch-out */

	/* Cold: identity, the start and the end. */
	__u32 tid;
	__u32 pid;
	__u32 ppid;		/* real parent's tgid when tracking began */
	__s32 exit_status;	/* wait(2) status, valid with TSA_F_EXITED */
	__u64 start_ns;		/* tracking began (wakeup_new for new tasks) */
	__u64 end_ns;		/* final switch-out, or the snapshot time */
	__u64 task_start_ns;	/* task->start_time: identity, with tid */
	__u64 boot_start_ns;	/* task->start_boottime: /proc starttime is this in ticks */
	__u64 kstart[TSA_K_NR]; /* kernel counters when tracking began */
	__u64 kend[TSA_K_NR];	/* and at the end */
	__u32 execs;
	__u32 exec_id0; /* task->self_exec_id when tracking began (low 32 bits) */
	char comm[TSA_COMM_LEN];
	/* Warm: one counter per off-CPU interval. */
	__u32 hist[TSA_HIST_STATES][TSA_HIST_SLOTS];
};

#define TSA_THREAD_SIZE 840

/* Global counters kept in a per-CPU array and summed by user space. */
enum tsa_counter {
	TSA_C_RB_DROPS = 0,   /* thread records the ring buffer had no room for */
	TSA_C_STORAGE_FAIL,   /* forked tasks we could not track (storage alloc failed) */
	TSA_C_UNKNOWN_SWITCH, /* a tracked task seen in a state the machine did not expect */
	TSA_C_UNTRACED_IN,    /* switch-ins without a sched_switch event, repaired */
	TSA_C_TRACKED,	      /* tasks that started being tracked */
	TSA_C_EMITTED,	      /* records sent at exit */
	TSA_C_NR,
};

/*
 * When a record cannot be sent, its times still count: they are added here
 * so that the tree's totals close even though the thread's detail is lost.
 */
struct tsa_lost {
	__u64 records;
	__u64 lifetime_ns;
	__u64 state_ns[TSA_ST_NR];
};

#endif /* TSARUN_BPF_H */
