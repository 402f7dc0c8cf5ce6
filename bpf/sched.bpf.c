// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-thread scheduler accounting for one process tree.
 *
 * A tracked task carries a struct tsa_thread in task storage. Every
 * scheduler event on a tracked task closes the interval of the state it was
 * in and opens the next, so at any moment each nanosecond of a thread's
 * tracked life lies in exactly one state. Untracked tasks cost two task
 * storage lookups that find nothing and return.
 *
 * Tracking starts when the supervisor marks the command through its pidfd
 * (before exec) and spreads to every thread and process the tree creates.
 * A thread's record goes to user space once, at its final switch-out;
 * survivors are read at the end by the task iterator.
 *
 * Task storage is only touched with interrupts off (switch, wakeup,
 * wakeup_new). A tracing program's bpf_task_storage_get() fails when
 * another task-storage operation is in progress on the same CPU, and one
 * made from a preemptible context (fork, exec, exit tracepoints) can be
 * preempted while it holds that per-CPU guard: the switch that follows
 * would lose its events. So a new task is adopted at wakeup_new (in its
 * creator's context, under the runqueue lock), and exec and exit are read
 * from the task at its final switch (self_exec_id, exit_code, signal).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tsarun.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Task states (include/linux/sched.h); stable values, not in BTF. */
#define TASK_RUNNING	     0x0000
#define TASK_INTERRUPTIBLE   0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define __TASK_STOPPED	     0x0004
#define __TASK_TRACED	     0x0008
#define TASK_PARKED	     0x0040
#define TASK_DEAD	     0x0080
#define TASK_NOLOAD	     0x0400
#define TASK_RTLOCK_WAIT     0x1000
#define TASK_FROZEN	     0x8000

#define SIGNAL_GROUP_EXIT 0x00000004 /* include/linux/sched/signal.h */

/*
 * sched_switch passes prev_state since 5.18. User space loads with this set
 * and, if the verifier refuses the fourth argument, loads again without it;
 * then prev->__state (->state before 5.14) is read instead.
 */
const volatile bool targ_switch_has_state = true;

/*
 * Off-CPU stacks (--stacks). Everything below is removed by the verifier
 * when targ_stacks is false, so the accounting alone pays nothing for it.
 *
 * A sleep (S or D) is charged to stacks when it ends (at the sleeper's
 * switch-in, where its wakeup is inferred; at sched_wakeup where that
 * tracepoint is used), and only when it lasted at least targ_offcpu_min_ns:
 * shorter ones just add to the thread's below-threshold count and sum,
 * without a stack taken. The sleeper's kernel stack is read then
 * (bpf_get_task_stack: the task is not running yet, its kernel stack is
 * still the one it slept on). Its user stack can only
 * be walked while it is current; on x86 a sleep inside a system call
 * handler (the usual case) defers that walk to the end of the system call
 * (raw_syscalls:sys_exit, still in the kernel, with the same user
 * registers and stack), so it too is taken only for sleeps above the
 * threshold: the switch path costs nothing more than a few loads. Sleeps
 * outside a system call (page faults) and other architectures take the
 * user stack at the switch-out.
 */
const volatile bool targ_stacks = false;
const volatile __u64 targ_offcpu_min_ns = 0;
const volatile bool targ_waker = false;	     /* --waker: the waker's stacks too */
const volatile bool targ_defer_user = false; /* x86 with sys_exit attached */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* resized by user space (--timeline-buffer) */
} timeline SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tsa_thread);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); /* resized by user space (--ringbuf) */
} records SEC(".maps");

/*
 * Before 5.11 tracing programs have no task storage: user space makes
 * tasks a hash map keyed by the task (targ_task_hash), by the address of
 * its kernel stack, which no other live task has and which, unlike its tid,
 * stays when a thread's exec gives it its leader's. A record found under a
 * key is its task's only if the task started no later than the record: a
 * stack freed with its task is reused, and the record of one whose end went
 * unseen is then not taken for the new one's. User
 * space, which knows a task by its tid, marks it in marks, and the task's
 * first event moves the record to tasks (task_get()).
 */
const volatile bool targ_task_hash = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* set by user space */
	__type(key, __u32);
	__type(value, struct tsa_thread);
} marks SEC(".maps");

/* Records in marks: task_get() looks there only while there are some. */
__s64 marks_pending = 0;

/* An all-zero record, to create a task's in the hash map. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tsa_thread);
} zero_thread SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TSA_C_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tsa_lost);
} lost SEC(".maps");

/*
 * Timestamps. A switch is timed with bpf_ktime_get_ns() in the tracepoint,
 * where perf times it too. The runqueue's clock (rq->clock, a load away)
 * cannot time a switch: __schedule() skips its refresh after a wakeup that
 * asked for a reschedule (rq_clock_skip_update), and then the clock still
 * holds the wakeup's time, microseconds back. The task switched in need
 * not be one that wakeup queued and stamped with that clock (it may have
 * found its task already queued, or a third task may be picked), and the
 * clock gives no sign, so no test short of the real clock tells a stale
 * refresh from a fresh one: timing some switches by rq->clock once
 * moved up to 1.4 ms, 3% of their CPU time, between the two threads of a
 * ping-pong sharing its CPU with a third task (tests/integration/
 * 22-perf-events.sh measures it against perf's own record).
 *
 * Other events are timed by the runqueue's clock plus the offset between
 * CLOCK_MONOTONIC and that CPU's rq->clock, sampled at the switches (see
 * sample_offset()): a new task at wakeup_new, where the scheduler has just
 * refreshed the clock, and a wakeup, from the kernel's stamp in that clock.
 *
 * Wakeups. The kernel stamps a task when it is queued (sched_info.
 * last_queued, from the clock the wakeup just refreshed) and adds each wait
 * to sched_info.run_delay, migrations included. So when a sleeping thread
 * is switched in, the switch itself says when it was woken: now minus the
 * wait the kernel has counted since the thread left the CPU. That spares
 * the hottest path a tracepoint (sched_wakeup fires for every wakeup on
 * the machine). On kernels without sched_info (CONFIG_SCHED_INFO off) the
 * object is loaded with targ_wakeup_events, and sched_wakeup marks
 * wakeups as they happen.
 */
const volatile bool targ_wakeup_events = false;

/*
 * Since 5.14 the kernel's arrival skips a task with no queue stamp
 * altogether (before, it counted it in pcount, with no wait in run_delay;
 * switch_in()). Told by what came with it in the same release, by CO-RE,
 * not by the version string: task_struct's state became __state.
 */
#define KERNEL_SKIPS_UNSTAMPED bpf_core_field_exists(((struct task_struct *)0)->__state)

/*
 * Tests only (TSARUN_TEST_DROP_SWITCH_IN=N): every Nth switch-in of a
 * tracked thread goes unseen, as this VM's kernel leaves some at random,
 * so that the repair of one is tested on purpose. 0 (always, outside
 * tests): the verifier removes it.
 */
const volatile __u32 targ_test_drop_in = 0;
__u32 test_drop_seq = 0;

/*
 * Tests only (TSARUN_TEST_SLOW_SEND=1): a thread's final record is sent
 * 200 us late, as when the hypervisor takes the CPU in the middle, so that
 * user space is seen to wait for it (send_record()).
 */
const volatile bool targ_test_slow_send = false;

/*
 * Tests only (TSARUN_TEST_EARLY_WAKE=NS): the command's wakeup from its
 * barrier is stamped NS early, as a remote wakeup's clock can make it, so
 * that after_release() is seen to hold its life to the run's.
 */
const volatile __u64 targ_test_early_wake = 0;

/*
 * Tests only (TSARUN_TEST_BPF_FAIL=1): tsa_switch calls a helper that no
 * tracing program may call, so that the verifier refuses it for real and
 * the loud failure that follows (the report's warning, doctor, the 125 of
 * the options that need eBPF) is tested on any kernel.
 */
const volatile bool targ_test_fail = false;

/*
 * The object the usual set's loader is written from (bpf/mkloader.c) is
 * built with TSA_USUAL: in that set the options below have one value each,
 * and as constants the code they rule out is gone before the kernel sees
 * the programs, rather than checked and removed by it at every load
 * (tsa_switch: 2,358 instructions instead of 5,121; 1.5 to 2 ms less of
 * the loader's run here). launcher/probe_sched.c loads it with these values only.
 */
#ifdef TSA_USUAL
#define targ_switch_has_state true
#define targ_stacks	      false
#define targ_waker	      false
#define targ_defer_user	      false
#define targ_wakeup_events    false
#define targ_test_fail	      false
#define targ_task_hash	      false
#endif

static __always_inline void stall(__u64 ns)
{
	__u64 t0 = bpf_ktime_get_ns();

	/* At most 2000 clock reads: a bound the verifier can walk. */
	for (int i = 0; i < 2000; i++)
		if (bpf_ktime_get_ns() - t0 >= ns)
			break;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* one per possible CPU, set by user space */
	__type(key, __u32);
	__type(value, struct tsa_cpu_clock);
} clocks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* set by user space */
	__type(key, struct tsa_offcpu_key);
	__type(value, struct tsa_agg);
} offcpu SEC(".maps");

/* Sleeps waiting for their thread's user stack, by tid (see targ_stacks). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* set by user space */
	__type(key, __u32);
	__type(value, struct tsa_pending);
} pending SEC(".maps");

/* Threads with entries in pending: sys_exit returns at once while there are none. */
__s64 pending_threads = 0;

/* Scratch for the iterator's snapshots (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tsa_thread);
} scratch SEC(".maps");

/* Tracked tasks whose record has not been sent yet. */
__s64 live_tasks = 0;

/* CPUs without a clock offset yet: user space sets it to the online CPUs. */
__s64 clocks_unset = 0;

/*
 * CLOCK_MONOTONIC when the supervisor opens the command's exec barrier,
 * stored before it does: the run's wall time starts there, and so does the
 * command's life (after_release()).
 */
__u64 release_ns = 0;

/*
 * The command's wakeup from its barrier, stamped ts and seen at now: never
 * before the barrier opened. A wakeup from another CPU is queued with a
 * runqueue clock read there (sched_clock_remote() takes the larger of the
 * two CPUs' last readings), which on a guest whose sched_clock is unstable
 * may run behind the clock of the CPU the stamp is converted for: once in
 * 180 runs under load here, the command outlived its run by 27 us.
 */
static __always_inline __u64 after_release(const struct tsa_thread *t, __u64 ts, __u64 now)
{
	__u64 rel = release_ns;

	return (t->flags & TSA_F_ROOT) && ts < rel && rel <= now ? rel : ts;
}

#include "clock.bpf.h"

struct task_struct___pre_5_14 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		*c += 1;
}

/* The record of a tracked task, or NULL (see targ_task_hash). */
static __always_inline struct tsa_thread *task_get(struct task_struct *p)
{
	struct tsa_thread *t, *m;
	__u64 key;
	__u32 tid;

	if (!targ_task_hash)
		return bpf_task_storage_get(&tasks, p, NULL, 0);
	key = (__u64)BPF_CORE_READ(p, stack);
	t = bpf_map_lookup_elem(&tasks, &key);
	if (t) {
		/*
		 * A task that reused a dead one's stack started after it. (A
		 * thread's exec moves its start time back, to its leader's; a
		 * record marked by user space gets its start at its first event.)
		 */
		if (t->task_start_ns && BPF_CORE_READ(p, start_time) > t->task_start_ns)
			return NULL;
		return t;
	}
	if (marks_pending <= 0)
		return NULL;
	tid = BPF_CORE_READ(p, pid);
	m = bpf_map_lookup_elem(&marks, &tid);
	if (!m || bpf_map_update_elem(&tasks, &key, m, BPF_ANY))
		return NULL;
	bpf_map_delete_elem(&marks, &tid);
	__sync_fetch_and_add(&marks_pending, -1);
	return bpf_map_lookup_elem(&tasks, &key);
}

/* A new task's record, all zero, or NULL when there is no room. */
static __always_inline struct tsa_thread *task_new(struct task_struct *p)
{
	struct tsa_thread *z;
	__u32 zero = 0;
	__u64 key;

	if (!targ_task_hash)
		return bpf_task_storage_get(&tasks, p, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	key = (__u64)BPF_CORE_READ(p, stack);
	z = bpf_map_lookup_elem(&zero_thread, &zero);
	/* Whatever a dead task left under this key is not this one's. */
	if (!z || bpf_map_update_elem(&tasks, &key, z, BPF_ANY))
		return NULL;
	return bpf_map_lookup_elem(&tasks, &key);
}

static __always_inline void task_forget(struct task_struct *p)
{
	__u64 key;

	if (!targ_task_hash) {
		bpf_task_storage_delete(&tasks, p);
		return;
	}
	key = (__u64)BPF_CORE_READ(p, stack);
	bpf_map_delete_elem(&tasks, &key);
}

#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef ENOSYS
#define ENOSYS 38
#endif

#include "stacks.bpf.h"
#include "hist.bpf.h"

/* What an event needs from the runqueue of the task it concerns. */
struct rqinfo {
	__u64 clock; /* rq->clock: sched_clock at the runqueue's last refresh */
	__u64 taken; /* rq->clock - rq->clock_task: steal (and IRQ) time so far */
	__u32 cpu;
	bool ok;
};

#ifdef TSA_RDONLY_CAST
/*
 * Linux 6.2 and later. The object built with it is the one whose loader is
 * written at build time (bpf/mkloader.c); tried first where the kernel may
 * have the kfunc, it falls back to the object without (probe_sched.c).
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#endif

/*
 * Read p's runqueue (the one it is on, or is being switched in on). It is
 * reached through the task: runqueues is a per-CPU data symbol, absent from
 * kallsyms without CONFIG_KALLSYMS_ALL. Direct loads where the kernel has
 * cfs_rq->rq (group scheduling), for the switch, which runs at every
 * tracked event. The verifier checks a direct load of a pointer field
 * (p->se.cfs_rq) by searching the kernel's whole BTF by name, at every walk
 * of it: this is called from one place only, and read_rq_cold() serves
 * every other.
 */
static __always_inline void read_rq(struct task_struct *tp, struct rqinfo *ri)
{
#ifdef TSA_RDONLY_CAST
	/*
	 * Loads through the same task, cast as untrusted: the verifier checks
	 * them as probed loads (PROBE_MEM: a load and an exception table
	 * entry), without searching the kernel's BTF at each walk. tsa_switch
	 * then verifies in about 1.2 ms less on this VM.
	 */
	struct task_struct *p = bpf_rdonly_cast(tp, bpf_core_type_id_kernel(struct task_struct));
#else
	struct task_struct *p = tp;
#endif
	struct cfs_rq *cfs = p->se.cfs_rq;
	struct rq *rq;

	ri->clock = 0;
	ri->taken = 0;
	ri->cpu = 0;
	ri->ok = false;
	if (!cfs)
		return;
	if (bpf_core_field_exists(cfs->rq)) {
		rq = cfs->rq;
		if (!rq)
			return;
		ri->clock = rq->clock;
		ri->taken = ri->clock - rq->clock_task;
		ri->cpu = (__u32)rq->cpu;
	} else {
		/* Without group scheduling the only cfs_rq is embedded in the rq. */
		rq = (void *)cfs - bpf_core_field_offset(struct rq, cfs);
		ri->clock = BPF_CORE_READ(rq, clock);
		ri->taken = ri->clock - BPF_CORE_READ(rq, clock_task);
		ri->cpu = BPF_CORE_READ(rq, cpu);
	}
	ri->ok = true;
}

/*
 * The same with probe reads, for what runs once per thread or less (its
 * first event, its creation, the survivors' iterator, sampling clocks):
 * they cost the verifier nothing to speak of. In the iterator alone the
 * direct loads made a third of tsarun's start-up.
 */
static __always_inline void read_rq_cold(struct task_struct *p, struct rqinfo *ri)
{
	struct cfs_rq *cfs = BPF_CORE_READ(p, se.cfs_rq);
	struct rq *rq;

	ri->clock = 0;
	ri->taken = 0;
	ri->cpu = 0;
	ri->ok = false;
	if (!cfs)
		return;
	if (bpf_core_field_exists(cfs->rq))
		rq = BPF_CORE_READ(cfs, rq);
	else
		rq = (void *)cfs - bpf_core_field_offset(struct rq, cfs);
	if (!rq)
		return;
	ri->clock = BPF_CORE_READ(rq, clock);
	ri->taken = ri->clock - BPF_CORE_READ(rq, clock_task);
	ri->cpu = BPF_CORE_READ(rq, cpu);
	ri->ok = true;
}

/*
 * CLOCK_MONOTONIC of an event on a runqueue whose clock was just refreshed:
 * that clock, through the CPU's offset, after a sample of the offset from
 * the real clock read now. The sample is late by the time since the
 * refresh, so the offset it leaves is no worse than either, and the event
 * keeps the runqueue clock's time, where the kernel's own stamp
 * (sched_info.last_queued) puts it. The offset alone could still be high
 * from samples the scheduler's skipped refreshes made late: creations came
 * 2-18 us late with it on a PVM guest, at a command's start, before a
 * better sample lowered it. now is read as early in the handler as can be,
 * so that such a sample is late by little more than what ran before it
 * (perf's handler of the same tracepoint, a vCPU stop), as is a CPU's first
 * sample, which has no offset before it and times the event by now.
 */
static __always_inline __u64 fresh_time(const struct rqinfo *ri, __u64 now)
{
	__u32 cpu = ri->cpu;
	struct tsa_cpu_clock *c;

	if (!ri->ok)
		return now;
	c = bpf_map_lookup_elem(&clocks, &cpu);
	if (!c)
		return now;
	sample_offset(c, ri->clock, now);
	return ri->clock + c->offset;
}

/* CLOCK_MONOTONIC of a runqueue clock value of this CPU (0 if no offset yet). */
static __always_inline __u64 clock_to_mono(__u32 cpu, __u64 clk)
{
	struct tsa_cpu_clock *c = bpf_map_lookup_elem(&clocks, &cpu);

	return c && c->sampled ? clk + c->offset : 0;
}

/* With targ_wakeup_events, every wakeup notes the clock it left on its runqueue. */
static __always_inline void note_wakeup_clock(const struct rqinfo *ri)
{
	__u32 cpu = ri->cpu;
	struct tsa_cpu_clock *c;

	if (!ri->ok)
		return;
	c = bpf_map_lookup_elem(&clocks, &cpu);
	if (c)
		c->woke_clock = ri->clock;
}

/*
 * A switch at now (bpf_ktime_get_ns()) samples this CPU's runqueue clock
 * offset, where __schedule() has refreshed the clock: not a switch whose
 * clock equals the stamp of the task switched in (next_lq), queued at that
 * clock by a wakeup (the refresh was skipped, or nothing ran since). A
 * stale clock missed that way gives a larger sample, which the smallest of
 * the window outweighs; sampling every switch, the offset is the best of
 * many long before the command starts. Returns CLOCK_MONOTONIC of the
 * runqueue clock (0: this CPU has no offset yet).
 */
static __always_inline __u64 sample_switch(const struct rqinfo *ri, __u64 next_lq, __u64 now)
{
	__u32 cpu = ri->cpu;
	struct tsa_cpu_clock *c;
	bool stale;

	if (!ri->ok)
		return 0;
	c = bpf_map_lookup_elem(&clocks, &cpu);
	if (!c)
		return 0;
	if (targ_wakeup_events)
		stale = ri->clock == c->woke_clock;
	else
		stale = ri->clock == next_lq;
	if (!stale)
		sample_offset(c, ri->clock, now);
	return c->sampled ? ri->clock + c->offset : 0;
}

static __always_inline void read_kcounters(struct task_struct *p, __u64 *k)
{
	k[TSA_K_SUM_EXEC] = BPF_CORE_READ(p, se.sum_exec_runtime);
	if (bpf_core_field_exists(p->sched_info)) {
		k[TSA_K_RUN_DELAY] = BPF_CORE_READ(p, sched_info.run_delay);
		k[TSA_K_PCOUNT] = BPF_CORE_READ(p, sched_info.pcount);
	}
	k[TSA_K_NVCSW] = BPF_CORE_READ(p, nvcsw);
	k[TSA_K_NIVCSW] = BPF_CORE_READ(p, nivcsw);
}

/* task->self_exec_id grows by one at every exec (u32 before 5.9ish, u64 after). */
static __always_inline __u32 exec_id(struct task_struct *p)
{
	if (bpf_core_field_size(p->self_exec_id) == 8)
		return (__u32)BPF_CORE_READ(p, self_exec_id);
	else {
		__u32 v = 0;

		bpf_core_read(&v, sizeof(v), &p->self_exec_id);
		return v;
	}
}

/*
 * --timeline (targ_timeline): each state interval a thread's account adds
 * up goes to user space as it closes, with the same start and end, so a
 * thread's intervals sum to its account exactly (less tl_lost_ns). Off, the
 * verifier removes all of it but the load of targ_timeline at each site (a
 * constant it then jumps over): the account alone pays nothing measurable
 * (tests/bench/13-sched-pipe-timeline.sh). Events are
 * sent without waking user space until targ_tl_wake_bytes wait (it also
 * drains at the end); an event the ring buffer has no room for is counted,
 * by thread and in all, never lost silently.
 */
const volatile bool targ_timeline = false;
const volatile __u64 targ_tl_wake_bytes = 0;
/*
 * The usual set has two loaders (bpf/mkloader.c): this one is for runs
 * without --timeline, and has none of its code for the kernel to check and
 * remove at every start (about 0.5 ms of it here).
 */
#ifdef TSA_NO_TIMELINE
#define targ_timeline false
#endif
/*
 * The survivors' iterator closes each one's last interval and sends it (set
 * by user space for that last read); --interval's snapshots with the same
 * iterator send nothing, or every tick would send the open intervals again.
 */
__u32 tl_iter_send = 0;

/* --timeline's events (see targ_timeline); defined first, as each object orders its maps. */

static __always_inline __u64 tl_wake_flags(void)
{
	return bpf_ringbuf_query(&timeline, BPF_RB_AVAIL_DATA) >= targ_tl_wake_bytes
		   ? BPF_RB_FORCE_WAKEUP
		   : BPF_RB_NO_WAKEUP;
}

/*
 * A global function: the verifier walks it once, not at each of the
 * places where an interval closes (with --timeline, a third less CPU time
 * at start-up). Off, its calls are removed and it is never called.
 */
#ifdef TSA_COMPAT
/* Before 5.12 a global function cannot take a pointer: a static one, checked at each call. */
static __noinline
#else
__noinline
#endif
    int
    tl_send(struct tsa_thread *t, __u32 kind, __u32 cpu, __u64 start, __u64 end)
{
	struct tsa_tl_event *e;

	if (!t || (t->flags & TSA_F_TL_QUIET))
		return 0;
	e = bpf_ringbuf_reserve(&timeline, sizeof(*e), 0);
	if (!e) {
		t->tl_lost++;
		t->tl_lost_ns += end - start;
		count(TSA_C_TL_DROPS);
		return 0;
	}
	e->task_start_ns = t->task_start_ns;
	e->start_ns = start;
	e->end_ns = end;
	e->tid = t->tid;
	e->gen = t->gen;
	e->cpu = cpu;
	e->kind = kind;
	bpf_ringbuf_submit(e, tl_wake_flags());
	count(TSA_C_TL_SENT);
	return 0;
}

/* The interval of state st from since_ns to now closes (see close_interval()). */
static __always_inline void tl_interval(struct tsa_thread *t, __u32 st, __u64 now)
{
	__u32 kind;

	if (st == TSA_ST_ONCPU)
		kind = TSA_TL_ONCPU;
	else if (st == TSA_ST_RUNQ)
		kind = (t->flags & TSA_F_WOKEN) ? TSA_TL_RUNQ_WAKEUP
		       : t->slices		? TSA_TL_RUNQ_PREEMPTED
						: TSA_TL_RUNQ_NEW;
	else
		kind = TSA_TL_SLEEP + (st - TSA_ST_SLEEP);
	if (st == TSA_ST_ONCPU) {
		tl_send(t, kind, t->last_cpu, t->since_ns, now);
	} else if (st == TSA_ST_RUNQ) {
		tl_send(t, kind, (__u32)-1, t->since_ns, now);
	} else {
		/* The sleep's tracked waker, if one woke it (tl_wake()). */
		tl_send(t, kind, t->tl_waker ? t->tl_waker : (__u32)-1, t->since_ns, now);
		t->tl_waker = 0;
	}
}

/* The thread's name, when first seen and after each exec (sent at a switch-out). */
static __always_inline void tl_name(struct tsa_thread *t, struct task_struct *p, __u64 when)
{
	__u32 id = exec_id(p) + 1;
	struct tsa_tl_name *e;

	if (id == t->tl_exec_id)
		return;
	t->tl_exec_id = id;
	e = bpf_ringbuf_reserve(&timeline, sizeof(*e), 0);
	if (!e) {
		t->tl_lost++;
		count(TSA_C_TL_DROPS);
		return;
	}
	e->h.task_start_ns = t->task_start_ns;
	e->h.start_ns = when;
	e->h.end_ns = id - 1 - t->exec_id0;
	e->h.tid = t->tid;
	e->h.gen = t->gen;
	e->h.cpu = (__u32)-1;
	e->h.kind = TSA_TL_NAME;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), &p->comm);
	bpf_ringbuf_submit(e, tl_wake_flags());
	count(TSA_C_TL_SENT);
}

/*
 * Whether a wakeup runs in an interrupt (hard or soft). No per-CPU variable
 * says so portably: the preempt count is __preempt_count, or pcpu_hot's
 * field (6.2 to 6.14), and neither is in kallsyms without
 * CONFIG_KALLSYMS_ALL. An interrupt of kernel code runs on the CPU's
 * interrupt stack, off current's kernel stack, whose top is its pt_regs
 * (before 5.15 assumed THREAD_SIZE 16K above its base, as task_regs()
 * does). Where this runs is told by the tracepoint's arguments, which the
 * kernel's bpf_trace_run*() keeps on the stack it runs on: not by this
 * program's frame (r10), which since 6.13 may be a per-CPU private stack.
 * Comparing their address needs the privileges tsarun loads with (the
 * verifier lets them compare pointers). An interrupt of user code runs on
 * the task's stack (x86: call_on_irqstack_cond()), below the user
 * registers it saved: on x86-64 a task in a system call has -ENOSYS in
 * their ax until the call returns (the entry code puts it there); one
 * interrupted in user mode has its own ax (a page fault's wakeups, rare,
 * are taken for an interrupt's).
 */
static __always_inline bool on_irq_stack(void *ctx, struct task_struct *cur)
{
	__u64 here = (__u64)ctx, base = (__u64)BPF_CORE_READ(cur, stack), top;

	if (targ_no_task_regs)
		top = base + 16384;
	else
		top = (__u64)bpf_task_pt_regs(cur);
	return here <= base || here > top;
}

/* A task on its own stack (flags: its flags): interrupted in user mode (x86-64)? */
static __always_inline bool user_interrupted(struct task_struct *cur, __u32 flags)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs;

	/* No user space (has_user_space(), from the flags read once), or leaving it. */
	if (flags & (PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER | PF_EXITING))
		return false;
	regs = task_regs(cur);
	return regs && REGS_READ(regs, ax) != (__u64)-38 /* -ENOSYS */ &&
	       (REGS_READ(regs, cs) & 3) == 3;
#else
	return false;
#endif
}

/* Where a wakeup runs; a tracked waker's record in *w (else NULL). */
static __always_inline __u32 wake_context(void *ctx, struct task_struct *cur, struct tsa_thread **w)
{
	__u32 flags;

	*w = NULL;
	if (!BPF_CORE_READ(cur, pid))
		return TSA_WK_IDLE;
	if (on_irq_stack(ctx, cur))
		return TSA_WK_IRQ;
	flags = BPF_CORE_READ(cur, flags);
	if (flags & PF_KTHREAD)
		return TSA_WK_KTHREAD;
	if (user_interrupted(cur, flags))
		return TSA_WK_IRQ;
	*w = task_get(cur);
	return *w ? TSA_WK_TRACKED : TSA_WK_PROCESS;
}

/*
 * Who woke t (or created it: TSA_WKF_NEW), for the critical path: cur is
 * current, in the waker's context. A wakeup from interrupt context carries its kernel
 * frames, which say what the interrupt was (a timer, a block I/O
 * completion): a few per second, never on the hot path of a tree's threads.
 */
static __always_inline void tl_wake(void *ctx, struct tsa_thread *t, struct task_struct *p,
				    struct task_struct *cur, __u32 flags)
{
	struct tsa_thread *w = NULL;
	struct tsa_tl_wake *e;
	__u32 wctx;

	if (t->flags & TSA_F_TL_QUIET)
		return;
	if (flags & TSA_WKF_NEW) {
		wctx = TSA_WK_TRACKED;
		w = task_get(cur);
	} else {
		wctx = wake_context(ctx, cur, &w);
		if (w) {
			/* The hot path: the sleep's interval says who (tsa_thread.tl_waker). */
			t->tl_waker = w->tid;
			return;
		}
	}
	t->tl_waker = 0;
	if (BPF_CORE_READ_BITFIELD_PROBED(p, in_iowait))
		flags |= TSA_WKF_IOWAIT;
	if (wctx == TSA_WK_IRQ || wctx == TSA_WK_IDLE) {
		struct tsa_tl_wake_irq *ei = bpf_ringbuf_reserve(&timeline, sizeof(*ei), 0);
		long n;

		if (!ei)
			goto lost;
		n = bpf_get_stack(ctx, ei->ip, sizeof(ei->ip), 0);
		ei->nr = n > 0 ? (__u32)(n / sizeof(__u64)) : 0;
		ei->pad = 0;
		flags |= TSA_WKF_FRAMES;
		e = &ei->w;
	} else {
		e = bpf_ringbuf_reserve(&timeline, sizeof(*e), 0);
		if (!e)
			goto lost;
	}
	e->h.task_start_ns = t->task_start_ns;
	e->h.start_ns = bpf_ktime_get_ns();
	e->h.end_ns = w ? w->task_start_ns : 0;
	e->h.tid = t->tid;
	e->h.gen = t->gen;
	e->h.cpu = bpf_get_smp_processor_id();
	e->h.kind = TSA_TL_WAKE;
	/* A tracked waker by the tid its events carry (the one tracking began with). */
	e->waker_tid = w ? w->tid : BPF_CORE_READ(cur, pid);
	e->waker_pid = BPF_CORE_READ(cur, tgid);
	e->ctx = wctx;
	e->flags = flags;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), &cur->comm);
	bpf_ringbuf_submit(e, tl_wake_flags());
	count(TSA_C_TL_SENT);
	return;
lost:
	t->tl_lost++;
	count(TSA_C_TL_DROPS);
}

/*
 * A thread's first switch-out in state UNKNOWN: its account has just got
 * its time on a CPU until now (an unseen switch-in's, inferred, when
 * first_in_unseen() placed it) and the wait before it. Sent after begin(),
 * which gives the thread its identity.
 */
static __always_inline void tl_first_out(struct tsa_thread *t, __u64 now)
{
	__u64 ran = t->state_ns[TSA_ST_ONCPU], wait = t->state_ns[TSA_ST_RUNQ];

	if (wait)
		tl_send(t, TSA_TL_RUNQ_WAKEUP, (__u32)-1, now - ran - wait, now - ran);
	if (ran)
		tl_send(t, t->untraced ? TSA_TL_ONCPU_INFERRED : TSA_TL_ONCPU,
			bpf_get_smp_processor_id(), now - ran, now);
}

/* First event for a task marked by user space (state unknown until now). */
static __always_inline void begin(struct tsa_thread *t, struct task_struct *p, __u64 now)
{
	if (!t->start_ns)
		t->start_ns = now; /* the command: its life starts when the barrier opens */
	/* Marked from user space, which cannot read the start time to the nanosecond. */
	t->task_start_ns = BPF_CORE_READ(p, start_time);
	t->boot_start_ns = BPF_CORE_READ(p, start_boottime);
	t->since_ns = now;
	t->exec_id0 = exec_id(p);
	/*
	 * The command's counters were read at the mark, while it was blocked
	 * at its barrier: they are its counters as the barrier opens.
	 */
	if (!(t->flags & TSA_F_KSTART))
		read_kcounters(p, t->kstart);
	t->exec_mark = t->kstart[TSA_K_SUM_EXEC];
	t->delay_mark = t->kstart[TSA_K_RUN_DELAY];
	/*
	 * A task queued before tracking began (a thread marked in monitor
	 * mode) has waited since last_queued: the kernel adds that wait to
	 * run_delay at its next switch-in, though part of it came before now.
	 * Count that part as already there, so that the kernel's delta covers
	 * what we cover.
	 */
	if (!(t->flags & TSA_F_KSTART) && bpf_core_field_exists(p->sched_info.last_queued)) {
		__u64 lq = BPF_CORE_READ(p, sched_info.last_queued), lqm;
		struct rqinfo ri;

		read_rq_cold(p, &ri);
		lqm = lq && ri.ok ? clock_to_mono(ri.cpu, lq) : 0;
		if (lqm && now > lqm)
			t->kstart[TSA_K_RUN_DELAY] += now - lqm;
		else if (!lqm && lq && ri.ok && ri.clock > lq)
			t->kstart[TSA_K_RUN_DELAY] += ri.clock - lq;
	}
	__sync_fetch_and_add(&live_tasks, 1);
	count(TSA_C_TRACKED);
	if (targ_timeline)
		tl_name(t, p, now); /* the command: its name before its exec */
}

/*
 * In the usual set's objects (Linux 6.2 and later), the larger parts of the
 * switch path are global functions (close_interval(), switch_out_usual(),
 * switch_in_usual()): the verifier checks each once, on its own, rather
 * than once for each path that reaches it. tsa_switch then takes about
 * 3,700 instructions to verify instead of 7,000 to 7,600, and the loader's
 * run 5.7 ms instead of 7.2 here; the switch path is no slower. They take
 * the thread's record, plain values, and structures of plain values on the
 * stack: before 6.8 a global function cannot be given the task. Elsewhere
 * they are inline, as kernels before 5.12 pass no pointer to a global
 * function. Their pointer arguments may be NULL as far as the verifier
 * knows, hence the checks.
 */
#ifdef TSA_USUAL
#define TSA_GLOBAL __noinline
#else
#define TSA_GLOBAL static __always_inline
#endif

/* Close the interval of the current state at now. */
TSA_GLOBAL int close_interval(struct tsa_thread *t, __u64 now)
{
	__u32 st;
	__u64 d;

	if (!t)
		return 0;
	st = t->state;
	if (st >= TSA_ST_NR || now <= t->since_ns)
		return 0;
	if (targ_timeline)
		tl_interval(t, st, now);
	d = now - t->since_ns;
	t->state_ns[st] += d;
	if ((t->flags & TSA_F_IOWAIT) && (st == TSA_ST_SLEEP || st == TSA_ST_DISK))
		t->iowait_ns += d;
	if (st != TSA_ST_ONCPU) {
		__u32 h = st - 1, slot = log2_slot(d);

		/*
		 * clang knows log2_slot() is below TSA_HIST_SLOTS and drops the
		 * test (and h's, from st's); the 6.1 verifier cannot follow the
		 * shifts by a variable that bound the slot, and refuses the
		 * index as unbounded. The barriers keep the tests for it to see.
		 */
		barrier_var(h);
		barrier_var(slot);
		if (h < TSA_HIST_STATES && slot < TSA_HIST_SLOTS)
			t->hist[h][slot]++;
	}
	return 0;
}

static __always_inline __u32 classify(unsigned int st)
{
	if (st == TASK_RUNNING)
		return TSA_ST_RUNQ;
	if (st & (__TASK_STOPPED | __TASK_TRACED | TASK_FROZEN))
		return TSA_ST_STOPPED;
	if (st & TASK_UNINTERRUPTIBLE)
		/* TASK_IDLE is D without load: ps shows it as I, we count it as sleeping. */
		return (st & TASK_NOLOAD) ? TSA_ST_SLEEP : TSA_ST_DISK;
	if (st & TASK_RTLOCK_WAIT)
		return TSA_ST_DISK;
	return TSA_ST_SLEEP; /* interruptible, parked */
}

/*
 * A runnable task switching out: is it leaving because its task group has
 * spent its CPU quota (CFS bandwidth: cgroup cpu.max, cpu.cfs_quota_us)?
 * Since 6.18 a throttled task is taken off the runqueue on its way back to
 * user space and marked (task->throttled) until its group gets quota
 * again; it may run in the kernel before that, so the mark, not the group,
 * says so. Before, the whole group leaves the runqueue at once, and its
 * tasks wait until it is unthrottled. Either way the kernel counts the
 * wait in run_delay, as tsarun counts it in runqueue.
 */
static __always_inline bool throttled(struct task_struct *p)
{
	if (bpf_core_field_exists(p->throttled))
		return p->throttled;
	if (bpf_core_field_exists(struct cfs_rq, throttle_count))
		return BPF_CORE_READ(p, se.cfs_rq, throttle_count) > 0;
	return false;
}

/*
 * A real-time thread (SCHED_FIFO, SCHED_RR) switching out runnable: is it
 * held off by the RT bandwidth limit, so that lower classes run, rather
 * than waiting for a CPU? Two mechanisms, either of which a kernel may
 * use: since 6.12 a deadline server reserves the fair class its share of
 * each period (/sys/kernel/debug/sched/fair_server) and preempts RT tasks
 * to run a fair task, which it marks (next->dl_server); and the RT
 * runqueue is throttled once it has run sched_rt_runtime_us of a
 * sched_rt_period_us (its rt_throttled flag: with RT group scheduling the
 * thread's group's, else the CPU's one RT runqueue). Either way the thread
 * stays runnable and its wait is in run_delay. Only on a preemption, and
 * one load for a thread that is not real-time (rt_prio()). Whether the
 * next task runs for a deadline server is read from next here, where it
 * is given: the global switch_out_usual() is told it (next_server).
 */
static __always_inline bool rt_prio(struct task_struct *p)
{
	int prio = p->prio;

	return prio >= 0 && prio < 100; /* SCHED_FIFO or SCHED_RR (below MAX_RT_PRIO) */
}

static __always_inline bool next_for_server(struct task_struct *next)
{
	return bpf_core_field_exists(next->dl_server) && BPF_CORE_READ(next, dl_server);
}

static __always_inline bool rt_throttled(struct task_struct *p, struct task_struct *next,
					 bool next_server)
{
	struct cfs_rq *cfs;
	struct rq *rq;

	if (!rt_prio(p))
		return false;
	if (next ? next_for_server(next) : next_server)
		return true;
	if (bpf_core_field_exists(p->rt.rt_rq)) {
		/*
		 * The field is read as if its rt_rq were the one embedded in a
		 * struct rq: the same address, with a relocation rooted at
		 * struct rq. One on struct rt_rq would make the kernel search
		 * its whole BTF for it at every load, since its name and rq's
		 * share a slot of the kernel's CO-RE candidate cache, each
		 * evicting the other (about 0.7 ms of the start-up here).
		 */
		void *rt_rq = BPF_CORE_READ(p, rt.rt_rq);

		return rt_rq && bpf_core_field_exists(((struct rq *)0)->rt.rt_throttled) &&
		       BPF_CORE_READ((struct rq *)(rt_rq - bpf_core_field_offset(struct rq, rt)),
				     rt.rt_throttled) != 0;
	}
	/*
	 * Since 6.12 the flag exists only with RT group scheduling: without
	 * it, the deadline server above is how the RT limit holds threads off.
	 */
	if (!bpf_core_field_exists(((struct rq *)0)->rt.rt_throttled))
		return false;
	cfs = BPF_CORE_READ(p, se.cfs_rq);
	if (!cfs)
		return false;
	if (bpf_core_field_exists(cfs->rq))
		rq = BPF_CORE_READ(cfs, rq);
	else
		rq = (void *)cfs - bpf_core_field_offset(struct rq, cfs);
	return rq && BPF_CORE_READ(rq, rt.rt_throttled) != 0;
}

#define TSA_F_ANY_THROTTLED (TSA_F_THROTTLED | TSA_F_RT_THROTTLED)

/* A runqueue wait that began throttled (CPU quota or RT bandwidth) ends at now (the switch-in). */
static __always_inline void end_throttled(struct tsa_thread *t, __u64 now)
{
	if (t->state == TSA_ST_RUNQ && now > t->since_ns) {
		if (t->flags & TSA_F_THROTTLED)
			t->throttled_ns += now - t->since_ns;
		else
			t->rt_throttled_ns += now - t->since_ns;
	}
	t->flags &= ~TSA_F_ANY_THROTTLED;
}

/* The task is dead: what it exited with, and whether its process is done. */
static __always_inline void read_exit(struct tsa_thread *t, struct task_struct *p)
{
	struct signal_struct *sig = BPF_CORE_READ(p, signal);

	t->flags |= TSA_F_EXITED;
	t->exit_status = BPF_CORE_READ(p, exit_code);
	/* signal->live counts threads that have not passed do_exit(); zero: the process is done. */
	if (BPF_CORE_READ(sig, live.counter) == 0) {
		t->flags |= TSA_F_GROUP_DEAD;
		/* What wait(2) reports for the process (see wait_task_zombie). */
		if (BPF_CORE_READ(sig, flags) & SIGNAL_GROUP_EXIT)
			t->exit_status = BPF_CORE_READ(sig, group_exit_code);
		else
			t->exit_status = BPF_CORE_READ(p, group_leader, exit_code);
	}
}

static __always_inline void send_record(struct tsa_thread *t, struct task_struct *p, __u64 now)
{
	__u32 zero = 0, tid;

	t->end_ns = now;
	/* An exec from a non-leader thread gives it the leader's pid: read them now. */
	tid = BPF_CORE_READ(p, pid);
	t->pid = BPF_CORE_READ(p, tgid);
	/*
	 * The old main thread that such an exec replaced may leave with the
	 * exec'ing thread's tid (de_thread() exchanges them once it is a
	 * zombie, and may do so before its last switch, while its
	 * group_leader is still itself): it had the main thread's. Only that
	 * exchange gives a thread a tid that is neither its own nor the
	 * main thread's.
	 */
	if (tid != t->tid && tid != t->pid)
		tid = t->pid;
	if (t->tid && t->tid != tid && !t->tid_before_exec)
		t->tid_before_exec = t->tid;
	t->tid = tid;
	if (t->tid == t->pid) {
		t->flags |= TSA_F_LEADER;
		t->voluntary++; /* its final switch: in rusage (see switch_out()) */
	}
	t->execs = exec_id(p) - t->exec_id0;
	if (t->execs)
		t->flags |= TSA_F_EXECED;
	bpf_probe_read_kernel_str(t->comm, sizeof(t->comm), &p->comm);
	read_kcounters(p, t->kend);
	t->state = TSA_ST_DEAD;
	if (targ_test_slow_send)
		stall(200000);
	if (bpf_ringbuf_output(&records, t, sizeof(*t), 0)) {
		struct tsa_lost *l = bpf_map_lookup_elem(&lost, &zero);

		count(TSA_C_RB_DROPS);
		if (l) {
			l->records++;
			l->lifetime_ns += t->end_ns - t->start_ns;
			for (int i = 0; i < TSA_ST_NR; i++)
				l->state_ns[i] += t->state_ns[i];
		}
	} else {
		count(TSA_C_EMITTED);
	}
	/*
	 * Last: user space stops waiting for records when live_tasks reaches
	 * zero, so the record must be in the ring buffer by then (the atomic
	 * orders the commit and the count before it).
	 */
	__sync_fetch_and_add(&live_tasks, -1);
}

/* Off-CPU stacks (targ_stacks). */

static __always_inline __u64 sub_or_zero(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

static __always_inline void agg_add(const struct tsa_offcpu_key *k, __u64 count_, __u64 ns)
{
	struct tsa_agg *a = bpf_map_lookup_elem(&offcpu, k);

	if (!a) {
		struct tsa_agg zero = {};

		bpf_map_update_elem(&offcpu, k, &zero, BPF_NOEXIST);
		a = bpf_map_lookup_elem(&offcpu, k);
		if (!a) {
			count(TSA_C_AGG_FULL);
			__u32 which = TSA_C_AGG_FULL_NS;
			__u64 *c = bpf_map_lookup_elem(&counters, &which);

			if (c)
				*c += ns;
			return;
		}
	}
	__sync_fetch_and_add(&a->count, count_);
	__sync_fetch_and_add(&a->total_ns, ns);
}

/* Is the task asleep inside a system call handler (x86: orig_ax is the call, ax not yet set)? */
static __always_inline bool in_syscall_handler(struct task_struct *p)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs = task_regs(p);

	if (!regs)
		return false;
	return (long)REGS_READ(regs, orig_ax) != -1 && (long)REGS_READ(regs, ax) == -ENOSYS;
#else
	return false;
#endif
}

/* A tracked thread goes to sleep (S or D): decide how its user stack will be taken. */
static __always_inline void sleep_begins(void *ctx, struct tsa_thread *t, struct task_struct *p,
					 __u64 now)
{
	if (!has_user_space(p)) {
		t->stk_mode = TSA_STK_NONE;
		return;
	}
	if (targ_defer_user && in_syscall_handler(p)) {
		t->stk_mode = TSA_STK_DEFER;
		return;
	}
	t->stk_mode = TSA_STK_NOW;
	take_current_ustack(ctx, task_regs(p), BPF_CORE_READ(p, tgid), exec_id(p), now, false,
			    &t->ustack);
}

static __always_inline bool same_key(const struct tsa_offcpu_key *a, const struct tsa_offcpu_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	for (int i = 0; i < (int)(sizeof(*a) / 8); i++)
		if (x[i] != y[i])
			return false;
	return true;
}

/* Park a sleep until its thread's system call ends (the sys_exit program charges it). */
static __always_inline void park(struct tsa_thread *t, struct task_struct *p,
				 struct tsa_offcpu_key *k, __u64 d)
{
	__u32 tid = k->tid;
	__u64 start = BPF_CORE_READ(p, start_time);
	struct tsa_pending *pe = bpf_map_lookup_elem(&pending, &tid);
	struct stack_scratch *s;
	__u32 i, n;

	if (pe && pe->task_start != start) {
		/* A dead thread's leftovers under a reused tid: charge them as they are. */
		n = pe->n;
		for (i = 0; i < TSA_PENDING_MAX; i++) {
			if (i >= n)
				break;
			id_status(&pe->e[i].key.ustack, TSA_SS_EXITED);
			agg_add(&pe->e[i].key, pe->e[i].agg.count, pe->e[i].agg.total_ns);
		}
		pe->n = 0;
		pe->task_start = start;
		pe->exec_id = exec_id(p);
	}
	if (!pe) {
		s = scratch_get();
		if (!s)
			goto fail;
		__builtin_memset(&s->pend, 0, sizeof(s->pend));
		s->pend.task_start = start;
		s->pend.exec_id = exec_id(p);
		if (bpf_map_update_elem(&pending, &tid, &s->pend, BPF_NOEXIST))
			goto fail;
		pe = bpf_map_lookup_elem(&pending, &tid);
		if (!pe)
			goto fail;
		__sync_fetch_and_add(&pending_threads, 1);
	}
	n = pe->n;
	for (i = 0; i < TSA_PENDING_MAX; i++) {
		if (i >= n)
			break;
		if (same_key(&pe->e[i].key, k)) {
			pe->e[i].agg.count++;
			pe->e[i].agg.total_ns += d;
			return;
		}
	}
	if (n < TSA_PENDING_MAX) {
		pe->e[n & (TSA_PENDING_MAX - 1)].key = *k;
		pe->e[n & (TSA_PENDING_MAX - 1)].agg.count = 1;
		pe->e[n & (TSA_PENDING_MAX - 1)].agg.total_ns = d;
		pe->n = n + 1;
		return;
	}
	count(TSA_C_PENDING_OVER);
	id_status(&k->ustack, TSA_SS_OVERFLOW);
	agg_add(k, 1, d);
	return;
fail:
	count(TSA_C_PENDING_FULL);
	id_status(&k->ustack, TSA_SS_FAILED);
	agg_add(k, 1, d);
}

/*
 * A sleep of d ns ends: charge it. walk: the sleeper is still off the CPU
 * with the stack it slept on (at its wakeup or its switch-in); otherwise
 * its kernel stack is gone and is counted as not taken.
 */
static __always_inline void sleep_ends(struct tsa_thread *t, struct task_struct *p, __u32 state,
				       __u64 d, bool walk)
{
	struct stack_scratch *s;
	struct tsa_offcpu_key *k;
	bool waker = t->waker_ok;

	t->waker_ok = 0;
	if (d < targ_offcpu_min_ns) {
		t->below_count++;
		t->below_ns += d;
		if (state == TSA_ST_DISK)
			t->below_disk_ns += d;
		return;
	}
	s = scratch_get();
	if (!s)
		return;
	k = &s->key;
	__builtin_memset(k, 0, sizeof(*k));
	if (walk) {
		take_task_kstack(p, &k->kstack);
	} else {
		count(TSA_C_KSTACK_FAIL);
		id_status(&k->kstack, TSA_SS_MISSED);
	}
	k->pid = BPF_CORE_READ(p, tgid);
	k->tid = BPF_CORE_READ(p, pid);
	k->state = state;
	if (targ_waker) {
		if (waker) {
			k->waker_pid = t->waker_pid;
			k->waker_tid = t->waker_tid;
			__builtin_memcpy(k->waker_comm, t->waker_comm, sizeof(k->waker_comm));
			k->waker_ustack = t->waker_ustack;
			k->waker_kstack = t->waker_kstack;
		} else {
			count(TSA_C_WAKER_MISSED);
			id_status(&k->waker_kstack, TSA_SS_MISSED);
		}
	}
	t->charged_ns += d;
	/*
	 * Not walk: it has run since (a switch-in went untraced), so it has
	 * left the system call it slept in; the end of the next one would give
	 * another call's stack (seen: a 15 ms sleep in one function charged to
	 * the 5 ms sleeps of its neighbour, under load).
	 */
	if (t->stk_mode == TSA_STK_DEFER && walk) {
		park(t, p, k, d);
		return;
	}
	if (t->stk_mode == TSA_STK_NOW)
		k->ustack = t->ustack;
	else if (t->stk_mode == TSA_STK_DEFER)
		id_status(&k->ustack, TSA_SS_MISSED);
	else
		id_status(&k->ustack, TSA_SS_NONE);
	agg_add(k, 1, d);
}

/*
 * The wait before a thread now switched in, from the kernel's own stamps:
 * the waits it has finished counting since delay_mark (a migration while
 * queued ends one) plus the one in progress, since last_queued.
 */
static __always_inline __u64 queued_wait(struct tsa_thread *t, __u64 lq, __u64 rd, __u32 cpu,
					 __u64 now)
{
	__u64 wait = 0, lqm;

	if (rd > t->delay_mark)
		wait = rd - t->delay_mark;
	if (lq) {
		lqm = clock_to_mono(cpu, lq);
		if (lqm && now > lqm)
			wait += now - lqm;
	}
	return wait;
}

static __always_inline void wakeup_latency(struct tsa_thread *t, __u64 lat)
{
	t->wakeup_lat_sum += lat;
	t->wakeup_lat_count++;
	if (lat > t->wakeup_lat_max)
		t->wakeup_lat_max = lat;
}

/* A sleeping thread woke at wake (no later than now): close its sleep, open its wait. */
static __always_inline void woke(struct tsa_thread *t, __u64 wake)
{
	if (wake < t->since_ns)
		wake = t->since_ns;
	close_interval(t, wake);
	t->state = TSA_ST_RUNQ;
	t->since_ns = wake;
	t->woken_ns = wake;
	t->flags |= TSA_F_WOKEN;
	t->wakeups++;
}

/*
 * A thread not on a CPU in our books is switching out, so it was switched
 * in without a sched_switch event (some kernels switch away from certain
 * tasks, e.g. a paravirtualised agent's, without tracing it). How long it
 * ran comes from the kernel: the growth of se.sum_exec_runtime since it last
 * left a CPU; its wait before that, from run_delay. A thread preempted in
 * our books waited exactly that and was on a CPU for the rest of the
 * interval: the task clock leaves out the interrupts and the steal of its
 * slice, which a traced slice has. A sleeper's interval before its wait
 * stays in the state it was in.
 */
static __always_inline void repair_switch_in(struct tsa_thread *t, struct task_struct *p,
					     __u64 sum_exec, __u64 now)
{
	__u64 window = now - t->since_ns, ran = 0, wait = 0, on;

	if (sum_exec > t->exec_mark)
		ran = sum_exec - t->exec_mark;
	if (ran > window)
		ran = window;
	if (!targ_wakeup_events) {
		wait = p->sched_info.run_delay > t->delay_mark
			   ? p->sched_info.run_delay - t->delay_mark
			   : 0;
		if (wait > window - ran)
			wait = window - ran;
	}
	on = ran;
	if (t->state == TSA_ST_RUNQ) {
		/* What the task clock left out is what steal_ns counts of a traced slice. */
		if (!targ_wakeup_events) {
			on = window - wait;
			t->steal_ns += on - ran;
		}
	} else if (!targ_wakeup_events) {
		/*
		 * Asleep in our books: its wakeup went untraced with the
		 * switch-in. Switched out again since: the stack it slept on
		 * is gone.
		 */
		if (targ_stacks && (t->state == TSA_ST_SLEEP || t->state == TSA_ST_DISK))
			sleep_ends(t, p, t->state, sub_or_zero(now - ran - wait, t->since_ns),
				   false);
		woke(t, now - ran - wait);
	}
	if (t->flags & TSA_F_ANY_THROTTLED)
		end_throttled(t, now - on);
	close_interval(t, now - on); /* the runqueue wait ends at the inferred switch-in */
	t->state_ns[TSA_ST_ONCPU] += on;
	if (targ_timeline && on)
		tl_send(t, TSA_TL_ONCPU_INFERRED, bpf_get_smp_processor_id(), now - on, now);
	if (t->flags & TSA_F_WOKEN) {
		wakeup_latency(t, now - on - t->woken_ns);
		t->flags &= ~TSA_F_WOKEN;
	}
	if (t->slices && bpf_get_smp_processor_id() != t->last_cpu)
		t->migrations++;
	t->last_cpu = bpf_get_smp_processor_id();
	t->slices++;
	t->untraced++;
	count(TSA_C_UNTRACED_IN);
}

/*
 * The command switched out with no event before (its wakeup from the
 * barrier and its switch-in went unseen, as this VM's kernel leaves some):
 * blocked at its barrier since the mark, it has since waited for a CPU and
 * run, by the counters read at the mark. Its life starts at that wakeup.
 * Without sched_info's run_delay (the sched_wakeup variant) the wait is not
 * known, and its life starts at the switch-in.
 */
static __always_inline void first_in_unseen(struct tsa_thread *t, struct task_struct *p,
					    __u64 sum_exec, __u64 now)
{
	__u64 window = now - t->since_ns, ran = 0, wait = 0;

	if (sum_exec > t->kstart[TSA_K_SUM_EXEC])
		ran = sum_exec - t->kstart[TSA_K_SUM_EXEC];
	if (ran > window)
		ran = window;
	if (!targ_wakeup_events) {
		wait = p->sched_info.run_delay > t->kstart[TSA_K_RUN_DELAY]
			   ? p->sched_info.run_delay - t->kstart[TSA_K_RUN_DELAY]
			   : 0;
		if (wait > window - ran)
			wait = window - ran;
	}
	t->start_ns = now - ran - wait;
	t->state_ns[TSA_ST_RUNQ] += wait;
	t->state_ns[TSA_ST_ONCPU] += ran;
	if (wait) {
		t->wakeups++;
		wakeup_latency(t, wait);
	}
	t->last_cpu = bpf_get_smp_processor_id();
	t->slices++;
	t->untraced++;
	count(TSA_C_UNTRACED_IN);
}

/* What a switch tells switch_out() of the thread leaving the CPU, besides the task. */
struct switch_out_args {
	__u64 now;	 /* the switch, never before the thread's last event */
	__u64 taken;	 /* rq->clock - rq->clock_task now (steal) */
	__u64 refreshed; /* CLOCK_MONOTONIC of the runqueue clock where __schedule() last
			    brought the task's counters up to date (0: no offset yet) */
	__u64 klag;	 /* how far the kernel's clock lags the switch, if it counts */
	__u32 prev_state;
	__u32 preempt;
	__u32 next_server; /* switch_out_usual(): next runs for a deadline server */
	__u32 reserved;
};

static __always_inline void switch_out(void *ctx, struct tsa_thread *t, struct task_struct *p,
				       struct task_struct *next, const struct switch_out_args *a)
{
	__u64 sum_exec = p->se.sum_exec_runtime, now = a->now, taken = a->taken, klag = a->klag;
	unsigned int prev_state = a->prev_state;
	bool preempt = a->preempt;
	__u32 st;

	if (t->state == TSA_ST_DEAD)
		return;
	if (t->state == TSA_ST_UNKNOWN) {
		/* Unknown until now; a task that switches out was on a CPU. */
		if (t->start_ns)
			t->state_ns[TSA_ST_ONCPU] += now - t->since_ns;
		else if (t->flags & TSA_F_KSTART)
			first_in_unseen(t, p, sum_exec, now);
		begin(t, p, now);
		if (targ_timeline)
			tl_first_out(t, now);
	} else if (t->state == TSA_ST_RUNQ || (!targ_wakeup_events && t->state != TSA_ST_ONCPU)) {
		repair_switch_in(t, p, sum_exec, now);
	} else {
		if (t->state != TSA_ST_ONCPU)
			count(TSA_C_UNKNOWN_SWITCH);
		close_interval(t, now);
	}
	/* An exec happens on a CPU: its new name is seen when it leaves (since_ns: its slice). */
	if (targ_timeline)
		tl_name(t, p, t->state == TSA_ST_ONCPU ? t->since_ns : now);
	t->exec_mark = sum_exec;
	if (!targ_wakeup_events)
		t->delay_mark = p->sched_info.run_delay;
	if (t->steal_mark) {
		if (taken > t->steal_mark)
			t->steal_ns += taken - t->steal_mark;
		t->steal_mark = 0;
	}
	t->since_ns = now;
	if (klag) {
		if (preempt || prev_state == TASK_RUNNING)
			t->klag_out_run_ns += klag;
		else
			t->klag_out_blocked_ns += klag;
		t->klag_switches++;
	}
	/*
	 * The switch away from a dead task is counted as rusage counts it
	 * (send_record()): the kernel adds it to the task's nvcsw after a
	 * thread's counters went to its process, but wait(2) reads a zombie
	 * leader's own nvcsw, this switch included.
	 */
	if (!preempt && (prev_state & TASK_DEAD)) {
		t->state = TSA_ST_ONCPU;
		t->kend_ns = a->refreshed;
		read_exit(t, p);
		send_record(t, p, now);
		task_forget(p);
		return;
	}
	/* The kernel counts a switch as voluntary when not preempted with a non-running state. */
	if (!preempt && prev_state != TASK_RUNNING)
		t->voluntary++;
	else
		t->involuntary++;
	st = preempt ? TSA_ST_RUNQ : classify(prev_state);
	if (st == TSA_ST_RUNQ) {
		if (throttled(p))
			t->flags |= TSA_F_THROTTLED;
		else if (rt_throttled(p, next, a->next_server))
			t->flags |= TSA_F_RT_THROTTLED;
	}
	t->state = st;
	t->flags &= ~(TSA_F_WOKEN | TSA_F_IOWAIT); /* a preemption wait is not wakeup latency */
	if ((st == TSA_ST_SLEEP || st == TSA_ST_DISK) &&
	    BPF_CORE_READ_BITFIELD_PROBED(p, in_iowait)) {
		t->flags |= TSA_F_IOWAIT;
		t->iowait_waits++;
	}
	if (targ_stacks && (st == TSA_ST_SLEEP || st == TSA_ST_DISK))
		sleep_begins(ctx, t, p, now);
}

/* What a switch tells switch_in() of the thread coming onto the CPU, besides the task. */
struct switch_in_args {
	__u64 now;	   /* the switch, never before the thread's last event */
	__u64 taken;	   /* rq->clock - rq->clock_task now (steal) */
	__u64 klag;	   /* how far the kernel's clock lags the switch, if it counts */
	__u64 last_queued; /* its sched_info.last_queued: when it was queued (0: not stamped) */
	__u64 run_delay;   /* its sched_info.run_delay (without sched_wakeup events) */
	__u32 cpu;
	__u32 unstamped; /* no queue stamp: its wait is in no run_delay */
};

/* The end of every switch-in: the thread is on the CPU from now. */
static __always_inline void switch_in_done(struct tsa_thread *t, const struct switch_in_args *a)
{
	__u64 now = a->now;

	if (t->flags & TSA_F_WOKEN) {
		wakeup_latency(t, now - t->woken_ns);
		t->flags &= ~TSA_F_WOKEN;
	}
	if (t->slices && a->cpu != t->last_cpu)
		t->migrations++;
	t->last_cpu = a->cpu;
	t->steal_mark = a->taken | 1; /* never 0: 0 means no slice open */
	if (KERNEL_SKIPS_UNSTAMPED)
		t->unstamped += a->unstamped;
	t->slices++;
	t->state = TSA_ST_ONCPU;
	t->since_ns = now;
}

/* The first event of a thread marked by user space is its switch-in. */
static __always_inline void switch_in_first(struct tsa_thread *t, struct task_struct *p,
					    const struct switch_in_args *a)
{
	__u64 now = a->now, wake = now;

	if (!targ_wakeup_events) {
		/* Queued since last_queued: woken then (the command: its barrier opened). */
		__u64 lq = a->last_queued, lqm = lq ? clock_to_mono(a->cpu, lq) : 0;

		if (targ_test_early_wake && (t->flags & TSA_F_ROOT) && lqm > targ_test_early_wake)
			lqm -= targ_test_early_wake;
		if (lqm && lqm < now)
			wake = after_release(t, lqm > t->since_ns ? lqm : t->since_ns, now);
	} else if (t->start_ns) {
		/* A sleeping task is woken before it runs: it was runnable. */
		wake = t->since_ns;
	}
	begin(t, p, wake);
	t->state = TSA_ST_RUNQ;
	if (wake < now) {
		t->flags |= TSA_F_WOKEN;
		t->woken_ns = wake;
		t->wakeups++;
	}
	close_interval(t, now);
	switch_in_done(t, a);
}

/* Any other switch-in. The task is NULL in switch_in_usual(), whose object has no --stacks. */
static __always_inline void switch_in_known(struct tsa_thread *t, struct task_struct *p,
					    const struct switch_in_args *a)
{
	__u64 now = a->now, wake;

	if (!targ_wakeup_events &&
	    (t->state == TSA_ST_SLEEP || t->state == TSA_ST_DISK || t->state == TSA_ST_STOPPED)) {
		wake = queued_wait(t, a->last_queued, a->run_delay, a->cpu, now);
		wake = wake < now - t->since_ns ? now - wake : t->since_ns;
		/* Not yet running: its kernel stack is still the one it slept on. */
		if (targ_stacks && (t->state == TSA_ST_SLEEP || t->state == TSA_ST_DISK))
			sleep_ends(t, p, t->state, sub_or_zero(wake, t->since_ns), true);
		woke(t, wake);
	}
	if (t->state != TSA_ST_RUNQ)
		count(TSA_C_UNKNOWN_SWITCH);
	/*
	 * A sleeper switched in without its wakeup seen (the wakeup's
	 * task-storage lookup can fail when an interrupt lands on
	 * another program's storage operation): charge the sleep here,
	 * where its kernel stack is still intact, so the stacks still
	 * close on the blocked time.
	 */
	if (targ_stacks && (t->state == TSA_ST_SLEEP || t->state == TSA_ST_DISK))
		sleep_ends(t, p, t->state, now - t->since_ns, true);
	/* A wait the kernel's run_delay will not have (tsarun.h). */
	if (a->unstamped && t->state == TSA_ST_RUNQ && now > t->since_ns)
		t->unstamped_wait_ns += now - t->since_ns;
	if (t->flags & TSA_F_ANY_THROTTLED)
		end_throttled(t, now);
	close_interval(t, now);
	switch_in_done(t, a);
}

#ifdef TSA_USUAL
/* switch_out() as a global function (TSA_GLOBAL): prev is current at sched_switch. */
__noinline int switch_out_usual(struct tsa_thread *t, const struct switch_out_args *a)
{
	if (t && a)
		switch_out(NULL, t, bpf_get_current_task_btf(), NULL, a);
	return 0;
}

/* switch_in_known() as a global function: this object has no --stacks, for which the task was. */
__noinline int switch_in_usual(struct tsa_thread *t, const struct switch_in_args *a)
{
	if (t && a)
		switch_in_known(t, NULL, a);
	return 0;
}
#endif

static __always_inline void switch_in(struct tsa_thread *t, struct task_struct *p,
				      const struct switch_in_args *a)
{
	if (t->state == TSA_ST_DEAD)
		return;
	if (a->klag) {
		t->klag_in_ns += a->klag;
		t->klag_switches++;
	}
	if (t->state == TSA_ST_UNKNOWN)
		switch_in_first(t, p, a);
	else
#ifdef TSA_USUAL
		switch_in_usual(t, a);
#else
		switch_in_known(t, p, a);
#endif
}

/* Event times from two clocks can be out of order by a microsecond: never go back. */
static __always_inline __u64 not_before(struct tsa_thread *t, __u64 now)
{
	return now > t->since_ns ? now : t->since_ns;
}

static __always_inline void on_switch(void *ctx, bool preempt, struct task_struct *prev,
				      struct task_struct *next, unsigned int prev_state)
{
	struct tsa_thread *tp, *tn;
	struct rqinfo ri;
	__u64 now, next_lq, refreshed, klag;

	tp = task_get(prev);
	tn = task_get(next);
	/*
	 * Tested one at a time, with a barrier between: otherwise clang tests
	 * (tp | tn), an OR of pointers the verifier refuses.
	 */
	if (tp)
		goto tracked;
	asm volatile("" ::: "memory");
	if (!tn) {
		/*
		 * Until every CPU's offset is sampled, untracked switches
		 * sample it too. A CPU's first tracked event may be an idle
		 * CPU's switch to a task just woken, on a clock the scheduler
		 * did not refresh: it gives no sample, and without the CPU's
		 * offset the task's queue stamp cannot place its wakeup, so
		 * its wait would be counted as the sleep before it. Only
		 * CPUs without one do the work: one that tsarun may not run
		 * on could stay unsampled for long.
		 */
		if (clocks_unset > 0) {
			__u32 cpu = bpf_get_smp_processor_id();
			struct tsa_cpu_clock *c = bpf_map_lookup_elem(&clocks, &cpu);

			if (c && !c->sampled) {
				read_rq_cold(next, &ri);
				sample_switch(&ri, next->sched_info.last_queued,
					      bpf_ktime_get_ns());
			}
		}
		return;
	}
tracked:
	/* prev and next share this CPU's runqueue: read it once, through either. */
	read_rq(tp ? prev : next, &ri);
	next_lq = next->sched_info.last_queued;
	now = bpf_ktime_get_ns(); /* see Timestamps */
	refreshed = sample_switch(&ri, next_lq, now);
	/* How far the kernel's clock lags this switch (tsarun.h: klag), if it counts. */
	klag = refreshed && (__s64)(now - refreshed) > TSA_KLAG_MIN_NS ? now - refreshed : 0;
	if (tp) {
		if (!targ_switch_has_state) {
			if (bpf_core_field_exists(prev->__state))
				prev_state = BPF_CORE_READ(prev, __state);
			else
				prev_state =
				    BPF_CORE_READ((struct task_struct___pre_5_14 *)prev, state);
		}
		/*
		 * PREEMPT_RT: a task that blocks on a sleeping spinlock
		 * (spinlock_t, rwlock_t) is switched out in TASK_RTLOCK_WAIT by
		 * __schedule(SM_RTLOCK_WAIT): it leaves the runqueue, the kernel
		 * counts the switch as voluntary, /proc shows it in D, and so
		 * does classify(). 6.12-rt traces it as no preemption; where
		 * the tracepoint's preempt is set from the mode (sched_mode >
		 * SM_NONE), a task that is no longer queued (on_rq 0) was not
		 * preempted but blocked.
		 */
		if (preempt && (prev_state & TASK_RTLOCK_WAIT) && !prev->on_rq)
			preempt = false;
		struct switch_out_args a = {
		    .now = not_before(tp, now),
		    .taken = ri.taken,
		    .refreshed = refreshed,
		    .klag = klag,
		    .prev_state = prev_state,
		    .preempt = preempt,
		};

#ifdef TSA_USUAL
		/* Left runnable (preempted, or yielding) and real-time: for a deadline server? */
		if ((preempt || prev_state == TASK_RUNNING) && rt_prio(prev))
			a.next_server = next_for_server(next);
		switch_out_usual(tp, &a);
#else
		switch_out(ctx, tp, prev, next, &a);
#endif
	}
	/* (No atomic fetch, which older kernels refuse even where it is dead code.) */
	if (tn && targ_test_drop_in && ++test_drop_seq % targ_test_drop_in == 0)
		return;
	if (tn) {
		struct switch_in_args a = {
		    .now = not_before(tn, now),
		    .taken = ri.taken,
		    .klag = klag,
		    .last_queued = next_lq,
		    .run_delay = targ_wakeup_events ? 0 : next->sched_info.run_delay,
		    .cpu = ri.cpu,
		    /*
		     * The kernel's arrival, right after this event, adds no wait
		     * to run_delay for a task with no queue stamp (and since 5.14
		     * counts no arrival in pcount either): counted for the
		     * cross-check.
		     */
		    .unstamped = !next_lq,
		};

		switch_in(tn, next, &a);
	}
}

static __always_inline void on_wakeup(struct task_struct *p)
{
	struct tsa_thread *t = task_get(p);
	struct rqinfo ri;
	__u64 now, real;

	if (!targ_wakeup_events)
		return; /* not attached then; keeps the verifier from walking the rest */
	read_rq_cold(p, &ri);
	note_wakeup_clock(&ri);
	if (!t)
		return;
	/* Wakeups of a running or already runnable task change nothing. */
	if (t->state != TSA_ST_SLEEP && t->state != TSA_ST_DISK && t->state != TSA_ST_STOPPED &&
	    t->state != TSA_ST_UNKNOWN)
		return;
	real = bpf_ktime_get_ns();
	now = not_before(t, fresh_time(&ri, real));
	if (t->state == TSA_ST_UNKNOWN) {
		/* Blocked since before tracking, S or D we cannot tell: left as residual. */
		now = after_release(t, now, real);
		begin(t, p, now);
	} else {
		if (targ_stacks && (t->state == TSA_ST_SLEEP || t->state == TSA_ST_DISK))
			sleep_ends(t, p, t->state, now - t->since_ns, true);
		close_interval(t, now);
	}
	t->state = TSA_ST_RUNQ;
	t->since_ns = now;
	t->woken_ns = now;
	t->flags |= TSA_F_WOKEN;
	t->wakeups++;
}

/*
 * A new task is adopted when its creator wakes it for the first time:
 * wake_up_new_task() runs in the creator's context with the runqueue lock
 * held, so current is the parent (thread or process) and interrupts are off.
 */
static __always_inline void on_wakeup_new(struct task_struct *p)
{
	struct task_struct *parent = current_task();
	struct tsa_thread *pt, *t;
	__u64 now;

	struct rqinfo ri;

	read_rq_cold(p, &ri);
	if (targ_wakeup_events)
		note_wakeup_clock(&ri);
	pt = task_get(parent);
	if (!pt)
		return;
	/* Before the new task's storage is allocated (see fresh_time()). */
	now = bpf_ktime_get_ns();
	t = task_new(p);
	if (!t) {
		count(TSA_C_STORAGE_FAIL);
		return;
	}
	now = fresh_time(&ri, now);
	t->tid = BPF_CORE_READ(p, pid);
	t->pid = BPF_CORE_READ(p, tgid);
	t->ppid = BPF_CORE_READ(p, real_parent, tgid);
	t->gen = pt->gen;
	t->flags = TSA_F_TRACKED | (t->tid == t->pid ? TSA_F_LEADER : 0);
	t->task_start_ns = BPF_CORE_READ(p, start_time);
	t->boot_start_ns = BPF_CORE_READ(p, start_boottime);
	t->start_ns = now;
	t->since_ns = now;
	t->state = TSA_ST_RUNQ;
	t->exec_id0 = exec_id(p);
	read_kcounters(p, t->kstart);
	t->exec_mark = t->kstart[TSA_K_SUM_EXEC];
	t->delay_mark = t->kstart[TSA_K_RUN_DELAY];
	__sync_fetch_and_add(&live_tasks, 1);
	count(TSA_C_TRACKED);
	if (targ_timeline) {
		tl_name(t, p, now); /* the name it inherits */
		tl_wake(NULL, t, p, parent, TSA_WKF_NEW);
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tsa_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	unsigned int prev_state = 0;

	if (targ_test_fail)
		bpf_skb_load_bytes(ctx, 0, &prev_state, sizeof(prev_state));
	/* The fourth argument is read only where it exists. */
	if (targ_switch_has_state)
		prev_state = (unsigned int)ctx[3];
	on_switch(ctx, preempt, prev, next, prev_state);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(tsa_wakeup, struct task_struct *p)
{
	on_wakeup(p);
	return 0;
}

/*
 * --waker: who wakes a sleeper that will be charged to stacks. sched_waking
 * runs in the waker's context (sched_wakeup may not: a remote wakeup is
 * traced on the wakee's CPU), with the wakee's pi_lock held, interrupts
 * off, except when a task wakes itself, which is no sleep to charge.
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(tsa_waking, struct task_struct *p)
{
	struct task_struct *cur = current_task();
	struct tsa_thread *t;

	if ((!targ_timeline && (!targ_stacks || !targ_waker)) || p == cur)
		return 0;
	t = task_get(p);
	if (!t)
		return 0;
	/*
	 * --timeline: who woke it, for the critical path (a stopped thread's
	 * SIGCONT too). Still on its CPU in our books but off the runqueue: it
	 * is in __schedule(), going to sleep, and woken before the switch.
	 */
	if (targ_timeline &&
	    (t->state == TSA_ST_SLEEP || t->state == TSA_ST_DISK || t->state == TSA_ST_STOPPED ||
	     (t->state == TSA_ST_ONCPU && !BPF_CORE_READ(p, on_rq))))
		tl_wake(ctx, t, p, cur, 0);
	if (!targ_stacks || !targ_waker)
		return 0;
	/*
	 * A task that has left the runqueue to sleep (on_rq 0) can be woken
	 * from another CPU before its own CPU has traced the switch away from
	 * it: in our books it is still on the CPU, and its sleep, which
	 * begins at that switch, will end at this wakeup. Its waker is the one
	 * here (seen under QEMU, where a virtual CPU can stop for milliseconds
	 * between the two; there is no other wakeup to wait for). The sleep
	 * has not begun, so the threshold is for sleep_ends() to test.
	 */
	if (t->state == TSA_ST_ONCPU) {
		if (BPF_CORE_READ(p, on_rq))
			return 0;
	} else if (t->state != TSA_ST_SLEEP && t->state != TSA_ST_DISK) {
		return 0;
	} else if (targ_offcpu_min_ns && bpf_ktime_get_ns() - t->since_ns < targ_offcpu_min_ns) {
		/* The sleep ends at the wakeup that follows: the threshold is tested on the time so far. */
		return 0;
	}
	t->waker_pid = BPF_CORE_READ(cur, tgid);
	t->waker_tid = BPF_CORE_READ(cur, pid);
	bpf_probe_read_kernel_str(t->waker_comm, sizeof(t->waker_comm), &cur->comm);
	take_current_kstack(ctx, &t->waker_kstack);
	/*
	 * User frames only of wakers in the tree: only their mappings are
	 * known. A process on its way out that has let its memory go (its exit
	 * wakes its parent) has no user stack left to take: no failure.
	 */
	if (!has_user_space(cur) || !task_get(cur))
		id_status(&t->waker_ustack, TSA_SS_NONE);
	else if ((BPF_CORE_READ(cur, flags) & PF_EXITING) && !BPF_CORE_READ(cur, mm))
		id_status(&t->waker_ustack, TSA_SS_EXITED);
	else
		take_current_ustack(ctx, task_regs(cur), t->waker_pid, exec_id(cur),
				    bpf_ktime_get_ns(), false, &t->waker_ustack);
	t->waker_ok = 1;
	return 0;
}

/*
 * The end of a system call: a thread whose sleeps in it were charged at
 * their wakeups (see targ_stacks) is current again, still in the kernel,
 * with the user registers and stack it slept with. Every task on the
 * machine passes here; while no tracked thread waits, it costs one load.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(tsa_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *cur;
	struct tsa_pending *pe;
	struct tsa_stack_id uid;
	__u32 tid, n;

	if (!targ_stacks || !pending_threads)
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	pe = bpf_map_lookup_elem(&pending, &tid);
	if (!pe)
		return 0;
	cur = current_task();
	if (pe->task_start != BPF_CORE_READ(cur, start_time))
		id_status(&uid, TSA_SS_EXITED);
	else if (pe->exec_id != exec_id(cur))
		id_status(&uid, TSA_SS_EXECED);
	else
		take_current_ustack(ctx, regs, BPF_CORE_READ(cur, tgid), pe->exec_id,
				    bpf_ktime_get_ns(), false, &uid);
	n = pe->n;
	for (__u32 i = 0; i < TSA_PENDING_MAX; i++) {
		if (i >= n)
			break;
		pe->e[i].key.ustack = uid;
		agg_add(&pe->e[i].key, pe->e[i].agg.count, pe->e[i].agg.total_ns);
	}
	bpf_map_delete_elem(&pending, &tid);
	__sync_fetch_and_add(&pending_threads, -1);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(tsa_wakeup_new, struct task_struct *p)
{
	on_wakeup_new(p);
	return 0;
}

/*
 * Survivors: for every tracked task still alive, a snapshot of its record
 * with the current interval closed at now. The live record is not changed.
 */
/*
 * The iterator's context (struct bpf_iter__task) and its meta, declared
 * without CO-RE: their layout is the iterator interface's (the meta, then
 * the task; the seq_file first in the meta), and relocating them cost
 * libbpf two searches of the kernel's whole BTF at every start.
 */
struct tsa_iter_meta {
	struct seq_file *seq;
};

struct tsa_iter_task {
	struct tsa_iter_meta *meta;
	struct task_struct *task;
};

SEC("iter/task")
int tsa_survivors(struct tsa_iter_task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *p = ctx->task;
	struct tsa_thread *t, *s;
	__u32 zero = 0;
	__u64 now;

	if (!p)
		return 0;
	t = task_get(p);
	if (!t || t->state == TSA_ST_DEAD)
		return 0;
	/*
	 * A thread skipped here is not lost silently: user space counts the
	 * threads tracked in the run that came with no record, snapshot or
	 * counted loss as unsettled (sp_collect()).
	 */
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	/* A helper copy: clang inlines a copy of at most 1 KiB, and the record is more. */
	if (bpf_probe_read_kernel(s, sizeof(*s), t))
		return 0;
	if (targ_timeline && !tl_iter_send)
		s->flags |= TSA_F_TL_QUIET;
	now = bpf_ktime_get_ns();
	if (s->state == TSA_ST_UNKNOWN) {
		if (!s->start_ns)
			s->start_ns = now;
	} else {
		/* Woken and queued, not yet run: the kernel's stamp says since when. */
		if (!targ_wakeup_events && p->sched_info.last_queued &&
		    (s->state == TSA_ST_SLEEP || s->state == TSA_ST_DISK ||
		     s->state == TSA_ST_STOPPED)) {
			struct rqinfo ri;
			__u64 wait;

			read_rq_cold(p, &ri);
			wait = ri.ok ? queued_wait(s, p->sched_info.last_queued,
						   p->sched_info.run_delay, ri.cpu, now)
				     : 0;
			if (wait)
				woke(s, wait < now - s->since_ns ? now - wait : s->since_ns);
		}
		if (s->flags & TSA_F_ANY_THROTTLED)
			end_throttled(s, now); /* still throttled: so far */
		close_interval(s, now);
	}
	if (s->state == TSA_ST_ONCPU && s->steal_mark) {
		struct rqinfo ri;
		__u64 taken;

		read_rq_cold(p, &ri);
		taken = ri.ok ? ri.taken : 0;

		if (taken > s->steal_mark)
			s->steal_ns += taken - s->steal_mark;
	}
	s->end_ns = now;
	s->since_ns = now;
	s->flags |= TSA_F_SURVIVOR;
	if (s->tid && s->tid != (__u32)p->pid && !s->tid_before_exec)
		s->tid_before_exec = s->tid;
	s->tid = p->pid;
	s->pid = p->tgid;
	s->execs = exec_id(p) - s->exec_id0;
	bpf_probe_read_kernel_str(s->comm, sizeof(s->comm), &p->comm);
	read_kcounters(p, s->kend);
	s->flags &= ~TSA_F_TL_QUIET;
	bpf_seq_write(seq, s, sizeof(*s));
	return 0;
}
