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
	TSA_F_THROTTLED = 1u << 9,   /* its runqueue wait began with its CPU quota spent */
	TSA_F_KSTART = 1u << 10,     /* kstart read by user space at the mark (the command) */
	TSA_F_RT_THROTTLED = 1u << 11, /* its runqueue wait began with its RT bandwidth spent */
	TSA_F_TL_QUIET = 1u << 12, /* --timeline: a snapshot of --interval, which sends nothing */
	TSA_F_IOWAIT = 1u << 13,   /* its open sleep began in io_schedule() (task->in_iowait) */
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
 * Stacks (--stacks, --flame). A stack is stored once, under a 96-bit hash
 * of its frames (two independent hashes and the frame count), in a hash map
 * of its own; aggregates refer to it by that id. Different stacks share an
 * id only if both hashes collide (probability about n^2 / 2^97 for n
 * stacks), so no stack map collision goes unnoticed the way a stack map's
 * bucket collisions would. A stack that could not be taken or stored has a
 * status instead, and its time is still charged (to that status).
 */
#define TSA_STACK_DEPTH	 64  /* frames kept per stack; deeper ones are marked truncated */
#define TSA_REGION_BYTES 512 /* top of the user stack kept to recover leaf frames */

enum tsa_stack_status {
	TSA_SS_NONE = 0, /* not asked for: no waker, or a thread without user space */
	TSA_SS_OK = 1,	 /* stored: look it up by id */
	TSA_SS_EMPTY,	 /* the unwinder returned no frames */
	TSA_SS_FAILED,	 /* the helper failed */
	TSA_SS_MAP_FULL, /* the stack map had no room */
	TSA_SS_EXITED,	 /* the thread exited before it returned to user space */
	TSA_SS_EXECED,	 /* exec replaced the address space before the user stack was taken */
	TSA_SS_OVERFLOW, /* too many distinct sleeps in one system call waiting for its stack */
	TSA_SS_AT_END,	 /* still in the kernel when the run ended */
	TSA_SS_MISSED,	 /* not seen: the waker, or a stack gone when the sleep's end was seen */
	TSA_SS_NR,
};

enum tsa_stack_flags {
	TSA_SF_TRUNCATED = 1u << 0, /* more than TSA_STACK_DEPTH frames */
	TSA_SF_USER = 1u << 1,
};

struct tsa_stack_id {
	__u64 h1;
	__u32 h2;
	__u16 nr;    /* frames */
	__u8 status; /* enum tsa_stack_status */
	__u8 flags;  /* enum tsa_stack_flags */
};

/* A kernel stack, innermost frame first. */
struct tsa_kstack {
	__u32 nr;
	__u32 flags;
	__u64 ip[TSA_STACK_DEPTH];
};

/*
 * A user stack, innermost frame first, as the kernel's frame-pointer walk
 * found it, with what user space needs to recover the frames that walk
 * skips (the callers inside code built without frame pointers, such as the
 * C library's wrappers): the registers and the top of the stack, from sp up
 * to the first frame pointer (at most TSA_REGION_BYTES). Addresses belong
 * to process pid's address space as it was at time_ns (CLOCK_MONOTONIC).
 */
struct tsa_ustack {
	__u32 pid;
	__u32 nr;
	__u64 time_ns;
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u32 region_len;
	__u32 flags;
	__u64 frames[TSA_STACK_DEPTH];
	__u8 region[TSA_REGION_BYTES];
};

/* How the user stack of a sleep is taken (tsa_thread.stk_mode). */
enum tsa_stk_mode {
	TSA_STK_NOW = 0, /* at the switch-out: ustack holds it */
	TSA_STK_DEFER,	 /* at the end of the system call it sleeps in (x86 syscall exit) */
	TSA_STK_NONE,	 /* the thread has no user space (kernel or io_uring worker) */
};

/* Off-CPU aggregate: blocked time by thread, state and stacks (and the waker's). */
struct tsa_offcpu_key {
	__u32 pid;
	__u32 tid;
	__u32 state; /* TSA_ST_SLEEP or TSA_ST_DISK */
	__u32 waker_pid;
	__u32 waker_tid;
	__u32 pad;
	char waker_comm[TSA_COMM_LEN];
	struct tsa_stack_id ustack;
	struct tsa_stack_id kstack;
	struct tsa_stack_id waker_ustack;
	struct tsa_stack_id waker_kstack;
};

struct tsa_agg {
	__u64 count;
	__u64 total_ns;
};

/*
 * Sleeps charged at wakeup whose user stack is taken when the thread
 * leaves the system call it slept in (key.ustack is filled in then). A
 * power of two. 8 distinct sleeps in one call: on PREEMPT_RT an execve
 * waits in D on several sleeping locks, each its own stack, and 4
 * overflowed there (counted as pending_lost).
 */
#define TSA_PENDING_MAX 8

struct tsa_pending_one {
	struct tsa_offcpu_key key;
	struct tsa_agg agg;
};

struct tsa_pending {
	__u64 task_start; /* identity of the thread (a tid can be reused) */
	__u32 exec_id;	  /* low bits of self_exec_id when the first sleep was charged */
	__u32 n;
	struct tsa_pending_one e[TSA_PENDING_MAX];
};

/* On-CPU samples: count by thread and stacks. */
struct tsa_oncpu_key {
	__u32 pid;
	__u32 tid;
	struct tsa_stack_id ustack;
	struct tsa_stack_id kstack;
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
	/*
	 * Where the kernel's clock lagged the switch (for the cross-check). At
	 * a switch the kernel stops the previous task's sum_exec_runtime, and
	 * starts the next one's and ends its run_delay, at the runqueue clock's
	 * refresh in __schedule(). That refresh is skipped after a wakeup that
	 * asked for the switch (rq_clock_skip_update()), leaving the clock at
	 * the wakeup, and a virtual CPU stopped by its host between the
	 * refresh and the switch (unreported on some guests) leaves it behind
	 * too. The time from that refresh to the switch, summed over the
	 * switches where it exceeds TSA_KLAG_MIN_NS: at switch-outs leaving
	 * the thread runnable, at its other switch-outs, at its switch-ins.
	 */
	__u64 klag_out_run_ns;
	__u64 klag_out_blocked_ns;
	__u64 klag_in_ns;
	__u64 klag_switches; /* switch-outs and -ins with such a lag */
	__u64 untraced;	     /* switch-ins the kernel did not trace, inferred at the switch-out */
	/*
	 * Switch-ins with no queue stamp (sched_info.last_queued 0) that the
	 * kernel counts in no sched_info.pcount (since 5.14; before, it counts
	 * them there, and in either case adds their wait to no run_delay).
	 */
	__u64 unstamped;
	/*
	 * The runqueue waits those switch-ins ended. A task preempted while its
	 * state already says it is going to sleep is left on the runqueue
	 * unstamped (sched_info_depart() stamps only running tasks): it waits
	 * for a CPU like any other, and run_delay never sees that wait.
	 */
	__u64 unstamped_wait_ns;
	/*
	 * Of the runqueue time, the waits that began when its task group had
	 * spent its CPU quota (cgroup cpu.max, cpu.cfs_quota_us): throttled,
	 * not waiting for a free CPU. The kernel counts them in run_delay.
	 */
	__u64 throttled_ns;
	/*
	 * Of the runqueue time, the waits of a real-time (SCHED_FIFO, SCHED_RR)
	 * thread held off by the RT bandwidth limit while lower classes ran
	 * (the fair class's deadline server, or a throttled RT runqueue: see
	 * rt_throttled() in sched.bpf.c), not waiting for a free CPU. In
	 * run_delay too.
	 */
	__u64 rt_throttled_ns;
	/*
	 * Of the sleeping and uninterruptible time, the sleeps that began in
	 * io_schedule() (task->in_iowait at the switch-out), and their number:
	 * the block I/O waits as the probe saw them. The kernel's own counter
	 * of them (taskstats' blkio delay) misses waits with the scheduler's
	 * delayed dequeue (see check_counter() in analyze/delays.c).
	 */
	__u64 iowait_ns;
	__u64 iowait_waits;

	/* Cold: identity, the start and the end. */
	__u32 tid;
	__u32 pid;
	__u32 ppid;	   /* real parent's tgid when tracking began */
	__s32 exit_status; /* wait(2) status, valid with TSA_F_EXITED */
	/*
	 * The tid it had before an exec from a thread other than the main one
	 * gave it the main thread's (0: none). The kernel also gives it the main
	 * thread's start_time; task_start_ns stays its own.
	 */
	__u32 tid_before_exec;
	__u32 reserved;
	__u64 start_ns;		/* tracking began (wakeup_new for new tasks) */
	__u64 end_ns;		/* final switch-out, or the snapshot time */
	__u64 task_start_ns;	/* task->start_time: identity, with tid */
	__u64 boot_start_ns;	/* task->start_boottime: /proc starttime is this in ticks */
	__u64 kstart[TSA_K_NR]; /* kernel counters when tracking began */
	__u64 kend[TSA_K_NR];	/* and at the end */
	/*
	 * When the kernel last brought kend's clocks up to date: the runqueue
	 * clock's refresh at the top of the final __schedule(), in
	 * CLOCK_MONOTONIC (0: unknown). The final switch-out (end_ns) comes
	 * after the scheduler has picked the next task, tens of microseconds
	 * later when that CPU balances its load on going idle.
	 */
	__u64 kend_ns;
	__u32 execs;
	__u32 exec_id0; /* task->self_exec_id when tracking began (low 32 bits) */
	char comm[TSA_COMM_LEN];
	/* Warm: one counter per off-CPU interval. */
	__u32 hist[TSA_HIST_STATES][TSA_HIST_SLOTS];

	/* With --stacks: sleeps shorter than --offcpu-min, not charged to a stack. */
	__u64 below_count;
	__u64 below_ns;
	__u64 below_disk_ns; /* the part of below_ns spent in D */
	__u64 charged_ns;    /* sleeps charged to a stack aggregate (or to a pending one) */
	/* The open sleep's user stack: how it will be (or was) taken. */
	__u32 stk_mode; /* enum tsa_stk_mode */
	__u32 waker_tid;
	struct tsa_stack_id ustack; /* taken at the switch-out (TSA_STK_NOW) */
	/* With --waker: the stacks of whoever woke the open sleep (at sched_waking). */
	__u32 waker_pid;
	__u32 waker_ok;
	char waker_comm[TSA_COMM_LEN];
	struct tsa_stack_id waker_ustack;
	struct tsa_stack_id waker_kstack;

	/* With --timeline: intervals the timeline ring buffer had no room for. */
	__u64 tl_lost;
	__u64 tl_lost_ns;
	__u32 tl_exec_id; /* 1 + low bits of self_exec_id when its name was last sent (0: never) */
	/*
	 * The tid of the tracked thread that woke the open sleep (0: none, or
	 * woken from outside the tree: a struct tsa_tl_wake says who). Sent
	 * with the sleep's interval, in its cpu field: the hot path's wakeups
	 * (a thread of the tree waking another) cost no event of their own.
	 */
	__u32 tl_waker;
};

#define TSA_THREAD_SIZE 1072

/* Global counters kept in a per-CPU array and summed by user space. */
enum tsa_counter {
	TSA_C_RB_DROPS = 0,   /* thread records the ring buffer had no room for */
	TSA_C_STORAGE_FAIL,   /* forked tasks we could not track (storage alloc failed) */
	TSA_C_UNKNOWN_SWITCH, /* a tracked task seen in a state the machine did not expect */
	TSA_C_UNTRACED_IN,    /* switch-ins without a sched_switch event, repaired */
	TSA_C_TRACKED,	      /* tasks that started being tracked */
	TSA_C_EMITTED,	      /* records sent at exit */
	/* Stacks: every one that could not be taken or stored, by reason. */
	TSA_C_KSTACK_FAIL,   /* kernel stack: the helper failed or found nothing */
	TSA_C_USTACK_FAIL,   /* user stack: the helper failed or found nothing */
	TSA_C_STACK_FULL,    /* a stack map was full */
	TSA_C_TRUNCATED,     /* stacks deeper than TSA_STACK_DEPTH, cut */
	TSA_C_AGG_FULL,	     /* the off-CPU aggregate map was full: sleeps lost */
	TSA_C_AGG_FULL_NS,   /* ... and their time */
	TSA_C_PENDING_FULL,  /* the pending map was full: charged without a user stack */
	TSA_C_PENDING_OVER,  /* too many distinct sleeps in one system call */
	TSA_C_WAKER_MISSED,  /* sleeps charged without the waker's stacks */
	TSA_C_ONCPU_SAMPLES, /* on-CPU samples of tracked threads */
	TSA_C_ONCPU_FULL,    /* on-CPU samples lost: the aggregate map was full */
	TSA_C_TL_SENT,	     /* --timeline: events sent */
	TSA_C_TL_DROPS,	     /* --timeline: events the ring buffer had no room for */
	TSA_C_NR,
};

/*
 * --timeline: every state interval of a tracked thread, sent through the
 * timeline ring buffer when the interval closes, with the same times the
 * closing account adds up (close_interval()), so that a thread's intervals
 * sum to its account exactly, less what was lost (tsa_thread.tl_lost_ns).
 */
enum tsa_tl_kind {
	TSA_TL_ONCPU = 0,
	TSA_TL_ONCPU_INFERRED, /* a switch-in without a sched_switch event: start from sum_exec_runtime */
	TSA_TL_RUNQ_WAKEUP,    /* woken, waiting for a CPU */
	TSA_TL_RUNQ_PREEMPTED, /* preempted (or yielded) while running, waiting for a CPU again */
	TSA_TL_RUNQ_NEW,       /* new, or released from the barrier: waiting for its first CPU */
	TSA_TL_SLEEP,	       /* S */
	TSA_TL_DISK,	       /* D */
	TSA_TL_STOPPED,	       /* T, t */
	TSA_TL_NR,
	TSA_TL_WAKE =
	    14, /* not an interval: who woke the thread, or created it (struct tsa_tl_wake) */
	TSA_TL_NAME =
	    15, /* not an interval: the thread's name from start_ns on (struct tsa_tl_name) */
};

struct tsa_tl_event {
	__u64 task_start_ns; /* identity, with tid (its own: kept across an exec) */
	__u64 start_ns;	     /* CLOCK_MONOTONIC */
	__u64 end_ns;
	__u32 tid; /* as tracking began (an exec from another thread changes it later) */
	__u32 gen;
	/*
	 * On-CPU intervals: the CPU. S, D and stopped: the tid of the tracked
	 * thread that woke it (tsa_thread.tl_waker), if not 0. Others (__u32)-1.
	 */
	__u32 cpu;
	__u32 kind; /* enum tsa_tl_kind */
};

struct tsa_tl_name {
	struct tsa_tl_event h; /* kind TSA_TL_NAME; start_ns: from when; end_ns: execs so far */
	char comm[TSA_COMM_LEN];
};

/*
 * --timeline and --critical-path: at every wakeup of a tracked thread that
 * was asleep (S, D or stopped) by anything but a thread of the tree (whose
 * tid the sleep's interval carries), and at the first wakeup of a new one,
 * who did it, from sched_waking (in the waker's context) or wakeup_new (in its
 * creator's). A wakeup from an interrupt (hard or soft) is told by the
 * stack it runs on (sched.bpf.c: on_task_stack()), and carries the
 * interrupt's kernel frames, which say what it was.
 */
enum tsa_wake_ctx {
	TSA_WK_TRACKED = 0, /* a thread of the tree, in task context: waker_tid, end_ns its start */
	TSA_WK_IRQ,	    /* an interrupt or softirq (on the interrupt stack) */
	TSA_WK_KTHREAD,	    /* a kernel thread (kworker/..., ksoftirqd/..., irq/...) */
	TSA_WK_PROCESS,	    /* a task of another process tree */
	TSA_WK_IDLE,	    /* the idle task: an interrupt on an idle CPU */
	TSA_WK_NR,
};

enum tsa_wake_flags {
	TSA_WKF_NEW = 1u << 0,	  /* wake_up_new_task(): the waker created the thread */
	TSA_WKF_IOWAIT = 1u << 1, /* the wakee slept in io_schedule() (task->in_iowait) */
	TSA_WKF_FRAMES = 1u << 2, /* struct tsa_tl_wake_irq: the interrupt's kernel frames */
};

#define TSA_WAKE_FRAMES 24 /* kernel frames kept of a wakeup from interrupt context */

struct tsa_tl_wake {
	/*
	 * kind TSA_TL_WAKE; task_start_ns, tid, gen: the wakee; start_ns: the
	 * wakeup; end_ns: a tracked waker's own start time (its identity with
	 * waker_tid), else 0; cpu: the waker's CPU.
	 */
	struct tsa_tl_event h;
	__u32 waker_tid;
	__u32 waker_pid;
	__u32 ctx;		 /* enum tsa_wake_ctx */
	__u32 flags;		 /* enum tsa_wake_flags */
	char comm[TSA_COMM_LEN]; /* the waker's (current's: the interrupted task in an interrupt) */
};

/* With TSA_WKF_FRAMES: a wakeup from interrupt context, with its kernel frames. */
struct tsa_tl_wake_irq {
	struct tsa_tl_wake w;
	__u32 nr;
	__u32 pad;
	__u64 ip[TSA_WAKE_FRAMES];
};

/* A lag of the kernel's clock at a switch worth counting (tsa_thread.klag_*). */
#define TSA_KLAG_MIN_NS 10000

/* Per CPU: how its runqueue clock maps to CLOCK_MONOTONIC (the clocks map). */
struct tsa_cpu_clock {
	/*
	 * CLOCK_MONOTONIC - rq->clock, modulo 2^64: negative where the
	 * scheduler's clock runs ahead (kvm-clock: sched_clock is 1.4 ms ahead
	 * on one guest here), so samples are compared by their signed
	 * difference, never as unsigned values.
	 */
	__u64 offset;
	__u64 window_at;  /* rq->clock when the current 10 ms window began */
	__u64 window_min; /* the smallest sample of that window (modulo 2^64, as offset) */
	__u64 woke_clock; /* with targ_wakeup_events: the clock the last wakeup left */
	__u64 sampled;	  /* nonzero once offset holds a sample */
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
