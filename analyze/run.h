/* SPDX-License-Identifier: MIT */
/*
 * The data model every other module reads and writes: one struct run per
 * execution of the command, and one struct session for the whole tsarun
 * invocation. Plain structs, no I/O, so the fold, the table, the artifact
 * writer and the tests share them without a kernel in sight.
 *
 * Ownership: a run owns its threads[] and procs[] arrays, its stacks and
 * its bash profile (run__free_detail), a session owns its runs[]
 * (session__free). Times are nanoseconds; times called *_ns that are points
 * in time are relative to the run's start.
 */
#ifndef TSARUN_RUN_H
#define TSARUN_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tsarun.h"

struct bashprof;
struct run_parts;
struct run_stacks;
struct run_timeline;
struct run_critpath;

/*
 * The name tsarun's spawner carries from its fork to the command's exec.
 * It is tsarun's, not the command's: reports never show it as a name the
 * command had (a thread that never exec'd is shown as RUN_SPAWNER_SHOWN).
 */
#define RUN_SPAWNER_COMM  "tsarun-spawner"
#define RUN_SPAWNER_SHOWN "(before exec)"

/* comm as a report shows it: the spawner's name, before any exec, as RUN_SPAWNER_SHOWN. */
const char *run_shown_comm(const char *comm, uint32_t execs);

#define RUN_MAX_SOURCES 8
#define RUN_REASON_LEN	192

/* A source of figures (ebpf, taskstats, proc, rusage) and whether it worked. */
struct source_status {
	char name[16];
	bool active;
	char reason[RUN_REASON_LEN]; /* why it is unavailable; empty when active */
};

enum delay_kind {
	DELAY_CPU = 0,
	DELAY_BLOCK_IO,
	DELAY_SWAP_IN,
	DELAY_RECLAIM,
	DELAY_THRASHING,
	DELAY_COMPACTION,
	DELAY_WPCOPY,
	DELAY_IRQ,
	DELAY_NR,
};

struct delay_counter {
	bool available;	    /* false: this kernel or record version does not have it */
	bool have_extremes; /* max_ns and min_ns are known (taskstats version 16+) */
	uint64_t count;
	uint64_t total_ns;
	uint64_t max_ns;  /* the longest single delay */
	uint64_t min_ns;  /* the shortest (0 when count is 0) */
	uint32_t dropped; /* waits the kernel timed from an unset start, left out */
	bool refused;	  /* the kernel's figure was impossible for this thread: not given */
	bool from_ebpf;	  /* block I/O: the kernel's missed waits; the probe's figure instead */
};

/* Where a thread's row came from. */
enum acct_source {
	ACCT_SRC_EBPF = 0,  /* scheduler events: every field measured */
	ACCT_SRC_PROC,	    /* /proc samples (states) and schedstat (on-CPU, runqueue) */
	ACCT_SRC_TASKSTATS, /* only a taskstats record: no state sampled */
};

/* Fields a source could not measure (thread_acct.unmeasured): written as null. */
enum acct_unmeasured {
	ACCT_NO_SWITCHES = 1u << 0, /* voluntary / involuntary switches */
	ACCT_NO_WAKEUPS = 1u << 1,  /* wakeups, wakeup latency */
	ACCT_NO_MIGRATIONS = 1u << 2,
	ACCT_NO_STEAL = 1u << 3,
	ACCT_NO_HIST = 1u << 4,	    /* off-CPU duration histogram */
	ACCT_NO_SLICES = 1u << 5,   /* switch-ins */
	ACCT_NO_THROTTLE = 1u << 6, /* throttled part of the runqueue time */
	ACCT_NO_STATES = 1u << 7,   /* sleeping, uninterruptible, stopped: off-CPU time not split */
};

/*
 * What /proc samples said of a thread (the procfs source): the kernel's
 * schedstat counters between two reads (exact), and states by sample.
 * For a thread of source ACCT_SRC_PROC these are its figures; beside an
 * eBPF account they are the cross-check.
 */
struct thread_sampled {
	uint64_t on_cpu_ns;	 /* schedstat: sum_exec_runtime over the covered span */
	uint64_t runqueue_ns;	 /* schedstat: run_delay over it */
	uint64_t slices;	 /* schedstat: pcount over it */
	uint64_t by_state_ns[4]; /* time by sampled state: R, S (and I), D, T (and t) */
	uint64_t samples;
	uint64_t transitions;	    /* state changes seen between two samples */
	uint64_t uncertainty_ns;    /* the gaps those changes fell in (one sample interval each) */
	uint64_t max_gap_ns;	    /* the largest gap between two samples of the thread */
	uint64_t unobserved_max_ns; /* of the life, at most this is covered by no counter read */
	uint64_t untimed_ns; /* running throughout a gap, left out by its task clock: residual */
	int64_t first_ns; /* the first and last sample of the thread alive, from the run's start */
	int64_t last_ns;
	bool from_birth; /* the counters cover the life from its start (they start at 0) */
	bool final;	 /* ... and to its end (read from the exited thread, a zombie) */
};

struct thread_acct {
	uint32_t tid;
	uint32_t pid;
	uint32_t ppid;
	uint32_t flags;		  /* TSA_F_* */
	uint32_t tid_before_exec; /* its tid before a non-main thread's exec took the main's (0) */
	char comm[TSA_COMM_LEN];
	int64_t start_ns; /* relative to the run's start */
	int64_t end_ns;
	uint64_t task_start_ns; /* identity: (tid, task_start_ns) */
	uint64_t boot_start_ns;
	uint64_t lifetime_ns;
	uint64_t state_ns[TSA_ST_NR];
	uint64_t residual_ns; /* lifetime not attributed to a state */
	uint64_t slices;
	uint64_t voluntary;
	uint64_t involuntary;
	uint64_t wakeups;
	uint64_t migrations;
	uint64_t untraced;  /* of the slices, how many switch-ins were inferred */
	uint64_t unstamped; /* of the slices, how many the kernel counts in no pcount (tsarun.h) */
	uint64_t unstamped_wait_ns; /* the runqueue waits they ended: in no run_delay (tsarun.h) */
	uint64_t wakeup_lat_sum;
	uint64_t wakeup_lat_max;
	uint64_t wakeup_lat_count;
	uint64_t steal_ns;	  /* part of on-CPU time the CPU gave to the hypervisor (or IRQs) */
	uint64_t throttled_ns;	  /* part of runqueue time out of CPU quota (tsarun.h) */
	uint64_t rt_throttled_ns; /* part of runqueue time out of RT bandwidth (tsarun.h) */
	uint64_t iowait_ns;	  /* sleeps begun in io_schedule(), eBPF (tsarun.h) */
	uint64_t iowait_waits;	  /* and their number */
	int exit_status;	  /* wait(2) status when TSA_F_EXITED */
	uint32_t execs;
	bool first_state_known;

	/* The kernel's own counters over the same life (the cross-check). */
	bool have_kernel;
	uint64_t
	    k_before_ns; /* sum_exec_runtime spent before tracking began (the command's fork) */
	uint64_t k_sum_exec_ns;
	uint64_t k_run_delay_ns;
	uint64_t k_pcount;
	uint64_t k_nvcsw;
	uint64_t k_nivcsw;
	/* Where the kernel's clock lagged its switches (tsarun.h: klag). */
	uint64_t klag_out_run_ns;
	uint64_t klag_out_blocked_ns;
	uint64_t klag_in_ns;
	uint64_t klag_switches;

	uint32_t hist[TSA_HIST_STATES][TSA_HIST_SLOTS];

	/* taskstats delay counters; present only on a proven identity match. */
	bool have_delays;
	bool delays_final; /* from the thread's exit record (else a query at the end) */
	uint32_t delays_version;
	struct delay_counter delays[DELAY_NR];

	/*
	 * The kernel's counters when tracking ended (absolute, not deltas):
	 * with task_start_ns they prove that a taskstats record is this
	 * thread's. have_kernel says whether they were read.
	 */
	uint64_t k_end_sum_exec_ns;
	uint64_t k_end_run_delay_ns;
	uint64_t k_end_pcount;
	/* CLOCK_MONOTONIC when the kernel last brought them up to date (0: unknown) */
	uint64_t k_end_at_ns;
	/* task_start_ns is known to within this (0 for eBPF; a clock tick for /proc). */
	uint64_t task_start_uncert_ns;

	uint8_t source;	     /* enum acct_source */
	uint32_t unmeasured; /* enum acct_unmeasured */
	bool have_sampled;   /* the procfs source saw it: sampled */
	/* procfs: on-CPU, runqueue and slices run to its taskstats exit record, not its last sample */
	bool counters_from_exit;
	struct thread_sampled sampled;

	/* Off-CPU intervals shorter than --offcpu-min (not charged to a stack). */
	bool have_below;
	uint64_t below_count;
	uint64_t below_ns;
	uint64_t below_disk_ns;	   /* the part of below_ns spent in D */
	uint64_t stack_charged_ns; /* sleeps charged to stacks (by the kernel's count) */

	/* --timeline: its events the ring buffer had no room for, and their time. */
	uint64_t tl_lost;
	uint64_t tl_lost_ns;
};

struct proc_acct {
	uint32_t pid;
	uint32_t ppid;
	char comm[TSA_COMM_LEN];
	int64_t start_ns;
	int64_t end_ns;
	bool exited;	 /* the whole process ended while we watched */
	int exit_status; /* wait(2) status, when exited */
	bool alive;	 /* still running when the run was closed */
	uint32_t threads;
	uint32_t execs;
	uint64_t thread_lifetime_ns; /* sum over its threads */
	uint64_t state_ns[TSA_ST_NR];
	uint64_t residual_ns;
	uint32_t unmeasured; /* enum acct_unmeasured: what some thread's source could not count */
};

struct run_totals {
	uint32_t processes;
	uint32_t threads;
	uint64_t lifetime_ns; /* sum of thread lifetimes */
	uint64_t state_ns[TSA_ST_NR];
	uint64_t residual_ns;
	uint64_t slices;
	uint64_t voluntary;
	uint64_t involuntary;
	uint64_t wakeups;
	uint64_t migrations;
	uint64_t wakeup_lat_sum;
	uint64_t wakeup_lat_max;
	uint64_t wakeup_lat_count;
	uint64_t steal_ns;
	uint64_t throttled_ns;
	uint64_t rt_throttled_ns;
	uint64_t max_threads_alive; /* peak concurrency of live threads */
	uint32_t unmeasured; /* enum acct_unmeasured: what some thread's source could not count */
	/*
	 * The threads' CPU time before their tracking began (sum_exec_runtime
	 * at the mark): the command's, from tsarun's fork to its barrier, which
	 * rusage counts and the accounting does not. Unknown when some thread's
	 * kernel counters are.
	 */
	uint64_t before_tracking_cpu_ns;
	bool before_tracking_known;
};

/* One comparison of an eBPF figure with the kernel's counter. */
struct cross_check {
	bool available;
	char reason[RUN_REASON_LEN];
	uint32_t compared;    /* threads (or 1 for the tree) compared */
	uint32_t short_lived; /* threads in the total but too short to compare one by one */
	double worst;	      /* largest |ebpf - kernel| as a fraction of the thread's lifetime */
	uint64_t worst_abs;   /* that difference in ns (or counts) */
	uint32_t worst_tid;
	double total;	   /* |sum ebpf - sum kernel| / sum kernel over all threads */
	uint64_t sum_ebpf; /* the sums behind total */
	uint64_t sum_kernel;
	/*
	 * For the tree check (rusage against the kernel's counters of the
	 * threads eBPF saw), the two directions mean different things: unseen
	 * is the fraction of rusage's CPU time no seen thread accounts for (a
	 * thread eBPF missed); excess_ns is what the threads' counters have and
	 * rusage does not (each thread's last microseconds, after the kernel
	 * folded its time into its process's rusage).
	 */
	bool directional;
	double unseen;
	uint64_t excess_ns;
};

/* What the taskstats source did in a run. */
struct taskstats_quality {
	bool active;
	uint64_t exit_records;	      /* exit records of the tree's threads */
	uint64_t queried;	      /* threads alive at the end, queried */
	uint64_t attached;	      /* threads given delays on a proven identity match */
	uint64_t identity_mismatches; /* records whose tid matched but whose identity did not */
	uint64_t unmatched_records;   /* records of the tree with no thread of that tid */
	uint64_t threads_without;     /* threads left without delays */
	uint64_t unreadable;	      /* records in a layout that cannot be read (version 15) */
	uint64_t implausible;	      /* counters refused: longer than the life, or the sleep */
	uint64_t dropped_waits;	      /* waits left out: timed from an unset start */
	uint64_t blkio_from_ebpf;   /* block I/O counters the kernel got wrong, the probe's given */
	uint64_t overruns;	    /* times the listener reported an overflow (ENOBUFS) */
	uint64_t foreign;	    /* exit records of other processes, ignored */
	uint64_t cpu_after_exit_ns; /* eBPF threads' sum_exec_runtime after their exit records */
	uint64_t cpu_after_exit_threads; /* ... over this many threads */
	uint32_t version_min;
	uint32_t version_max;
};

/* What the procfs sampling source did in a run. */
struct procfs_quality {
	bool active;
	uint64_t sample_ns;	   /* the asked interval (--sample) */
	uint64_t scans;		   /* scans of the tree */
	uint64_t max_scan_ns;	   /* the longest scan */
	uint64_t max_gap_ns;	   /* the largest gap between the starts of two scans */
	uint64_t threads_seen;	   /* threads (tid, start) sampled at least once */
	uint64_t threads_new;	   /* of them, born after tracking began */
	uint64_t threads_gone;	   /* ... that ended while sampled */
	uint64_t identity_changes; /* a tid whose counters went back (exec by a thread) */
	uint64_t unreadable;	   /* thread reads that failed for a reason other than its exit */
	uint64_t unseen_cpu_ns;	   /* rusage CPU of the reaped tree that no sampled thread has */
	const char *discovery;	   /* how the tree was found */
};

/* kernel.task_delayacct around a run. */
struct delayacct_quality {
	bool known;		     /* the fields below were filled in */
	int before;		     /* when tsarun started: -1 no such switch, 0 off, 1 on */
	int during;		     /* when the run ended */
	bool switched_on;	     /* tsarun turned it on for the run (and restores it) */
	bool non_cpu_live;	     /* block I/O, swap-in, reclaim... counted for every thread */
	char reason[RUN_REASON_LEN]; /* when not live: why */
};

struct run_quality {
	struct source_status sources[RUN_MAX_SOURCES];
	int nsources;
	uint64_t lost_events;	 /* records or events lost in transit (ring buffer full) */
	uint64_t map_full_drops; /* tasks that could not be tracked: storage allocation failed */
	uint64_t stack_drops;
	uint64_t taskstats_drops;
	uint64_t unexpected_transitions; /* the state machine saw an impossible order */
	uint64_t untraced_switch_ins;	 /* switch-ins with no event, timed from sum_exec_runtime */
	uint64_t unsettled;		 /* tracked threads whose final record never arrived */
	double residual_percent;
	struct tsa_lost lost; /* times of threads whose records were lost */
	/*
	 * The kernel's scheduler clock is not read again at a switch that
	 * follows a wakeup preemption (rq_clock_skip_update), so its counters
	 * put the time from such a wakeup to the switch into the woken task's
	 * sum_exec_runtime rather than its run_delay. tsarun timestamps the
	 * switch itself. The split between on-CPU and runqueue therefore
	 * differs by that time, while their sum agrees: `runnable` is the
	 * check that must hold, and kernel_shift_ns is how much time the
	 * kernel's own counters moved from runqueue to on-CPU.
	 */
	struct cross_check runnable; /* on-CPU + runqueue vs sum_exec_runtime + run_delay */
	struct cross_check on_cpu;   /* on-CPU vs se.sum_exec_runtime */
	struct cross_check runqueue; /* runqueue vs sched_info.run_delay */
	int64_t kernel_shift_ns;     /* sum of (sum_exec_runtime - on-CPU) over compared threads */
	/*
	 * Of that, what tsarun saw of it: the lag of the kernel's clock at the
	 * switches where it exceeded TSA_KLAG_MIN_NS (tsarun.h: klag), at
	 * either end, and how many switch-outs and switch-ins had one. The
	 * comparisons take the kernel's counters as they would be without it.
	 */
	uint64_t klag_ns;
	uint64_t klag_switches;
	/* Runqueue waits run_delay leaves out (never stamped), left out of the comparisons too. */
	uint64_t unstamped_wait_ns;
	struct cross_check slices;   /* switch-ins vs sched_info.pcount */
	struct cross_check switches; /* voluntary+involuntary vs nvcsw+nivcsw */
	struct cross_check tree_cpu; /* rusage user+sys vs the seen threads' sum_exec_runtime */
	struct cross_check ts_cpu;   /* taskstats CPU delay vs eBPF runqueue time */
	/*
	 * Of the difference: runqueue waits after the thread wrote its exit
	 * record (preempted on its way out), which the record cannot count.
	 */
	uint64_t ts_cpu_after_ns;
	struct taskstats_quality ts;
	struct procfs_quality procfs;
	/* With eBPF and procfs both active: procfs's counters against eBPF's figures. */
	struct cross_check procfs_on_cpu;
	struct cross_check procfs_runqueue;
	struct delayacct_quality delayacct;
	char notes[4][RUN_REASON_LEN];
	int nnotes;
	/*
	 * eBPF was expected (root or CAP_BPF, kernel BTF present) and the
	 * kernel refused it: the program it refused (or the map it would not
	 * create) and its last words. The report leads with it.
	 */
	struct {
		bool failed;
		bool is_map;
		char object[64];
		char message[RUN_REASON_LEN];
	} ebpf_load;
};

enum run_status {
	RUN_EXITED = 0,
	RUN_SIGNALED,
	RUN_INTERRUPTED,
	RUN_NOT_STARTED, /* exec failed */
};

struct run_rusage {
	uint64_t user_ns;
	uint64_t sys_ns;
	long max_rss_kb;
	long minflt;
	long majflt;
	long nvcsw;
	long nivcsw;
	long inblock;
	long oublock;
};

/* What happened to descendants still running when the command exited. */
struct run_descendants {
	uint32_t running_at_exit; /* processes of the tree alive when the command exited */
	uint32_t reaped_orphans;  /* orphans reparented to tsarun and reaped by it */
	uint32_t killed;
	uint32_t left_running;
	uint64_t waited_ns; /* time spent waiting for them after the command exited */
	int policy;	    /* enum descendants_policy */
};

/*
 * One interval of the stream: the tree's time in each state over it
 * (stream_interval.totals; signed, as a later account may correct an
 * earlier one). Kept for the HTML report's states over time.
 */
struct run_stream_point {
	int64_t start_ns; /* from the run's start */
	int64_t end_ns;
	int64_t state_ns[TSA_ST_NR];
};

/* The intervals kept per run (56 bytes each): 100,000 is 17 minutes at 10 ms, 27 hours at 1 s. */
#define RUN_STREAM_POINTS_MAX 100000

/* --interval: what became of the run's lines in the stream (probe_stream.c). */
struct run_stream {
	bool on;	  /* the run was streamed */
	bool nonblocking; /* written without ever waiting (FIFO, pipe, socket, terminal) */
	char blocking_reason
	    [RUN_REASON_LEN]; /* !nonblocking: why lines are written whole, waiting */
	uint64_t lines;	      /* lines made (one per tick that read, and the last) */
	uint64_t written;     /* written whole */
	uint64_t dropped;     /* dropped whole: the backlog was full */
	uint64_t
	    unsent;   /* not (wholly) written: the end-of-run wait ran out, or the stream failed */
	bool partial; /* one of those was begun: the reader has its beginning only */
	uint64_t backlog_limit; /* bytes (nonblocking) */
	uint64_t backlog_peak;	/* the most bytes waiting at once (nonblocking) */
	uint64_t final_wait_ns; /* the end-of-run wait for the backlog to go (nonblocking) */
	uint64_t final_wait_limit_ns;
	char error[RUN_REASON_LEN]; /* why streaming stopped during the run ("": it did not) */
	/* Detail (run__free_detail): each interval's totals in order, whether its line was written or not. */
	struct run_stream_point *points;
	size_t npoints, points_cap;
	uint64_t
	    points_beyond; /* intervals not kept: past RUN_STREAM_POINTS_MAX, or out of memory */
};

struct run {
	int index;
	bool warmup;
	bool detailed; /* threads[] and procs[] kept */
	enum run_status status;
	int wait_status;
	int exit_code;	 /* valid when RUN_EXITED (or interrupted and exited) */
	int term_signal; /* valid when the command was killed by a signal */
	bool core_dumped;
	int interrupt_signal; /* the signal that interrupted tsarun, 0 if none */
	bool interrupt_tty;   /* ... sent from the terminal (it reached the command's job too) */
	uint32_t root_pid;
	uint64_t start_mono_ns; /* CLOCK_MONOTONIC at the barrier's release */
	uint64_t wall_ns;
	struct run_rusage ru;
	struct run_descendants desc;
	struct run_stream stream;
	/* User-space instructions of the tree (a hardware counter); see metrics.h. */
	bool have_instructions;
	uint64_t instructions;

	struct run_stacks *stacks;     /* with --stacks/--flame (stacks.h), or NULL */
	struct run_timeline *timeline; /* with --timeline (timeline.h), or NULL */
	struct run_critpath *critpath; /* from the timeline (critpath.h), or NULL */

	struct thread_acct *threads;
	size_t nthreads;
	struct proc_acct *procs;
	size_t nprocs;
	struct run_totals totals;
	struct run_quality quality;
	struct bashprof *bash; /* --bash: the profile, owned by the run (session__free) */
	/*
	 * Its time in parts with stable names (parts.h), made while the rows
	 * were there and kept when they go: what an explained comparison
	 * reads. NULL: not made (no rows). Freed by run__free(), not with the detail.
	 */
	struct run_parts *parts;
};

struct host_info {
	char kernel[128];
	char arch[65];
	int cpus;
	char cpu_model[128];
	char virtualized[64]; /* "none", "kvm", ... */
	char container[32];   /* "none", "docker", ... */
	bool btf;
	int task_delayacct; /* -1: unknown */
	bool pmu;
	char pmu_reason[RUN_REASON_LEN];
	char ci[32]; /* "github-actions", "gitlab", ..., "none" */
};

struct comparison;

struct session {
	const char *tool_version;
	long supervisor_max_rss_kb; /* tsarun's own peak RSS, read when the artifact is written */
	struct host_info host;
	char *const *argv;
	int argc;
	const char *mode;	 /* "run", "bash" */
	const char *bash_folded; /* --bash: where the folded stacks went (NULL: not written) */
	/* The artifact's path named a device or a FIFO before the run: write there in place. */
	int artifact_in_place; /* 1; -1: a regular file, written by rename; 0: not decided */
	/* The supervisor's seccomp sandbox (sandbox.h); not reported unless known. */
	bool sandbox_known;
	bool sandboxed;
	const char *sandbox_reason; /* why not, when not */
	/* Landlock beside the filter: NULL when in force, else why not */
	bool landlock_known;
	const char *landlock_reason;
	/* root given up after set-up: to uid privileges_uid, or why not */
	bool privileges_known;
	bool privileges_dropped;
	unsigned privileges_uid;
	const char *privileges_reason;
	struct run *runs;
	size_t nruns;

	/* The regression gate (see gate.h); both NULL/0 without one. */
	struct comparison *cmp;		 /* borrowed: the caller frees it */
	const struct run *cmp_base_runs; /* the baseline's runs it compared with (borrowed) */
	size_t ncmp_base_runs;
	struct run *base_runs; /* paired mode: the baseline command's runs (owned) */
	size_t nbase_runs;
	char *const *base_argv; /* the baseline command (borrowed) */
	int base_argc;

	/* A session read back from an artifact owns what it points to. */
	char **owned_strings; /* argv points here: nowned_strings strings and a NULL */
	size_t nowned_strings;
	char *owned_tool_version;
};

void run__free_detail(struct run *r);
/* The detail and the parts: all a run owns. */
void run__free(struct run *r);
void session__free(struct session *s);

/*
 * The command as the user gave it, for reports: argv[0]; for --bash, the
 * script (or the -c string), which argv has after bash and the options of
 * the script's #! line. The same for a run and for its stored artifact.
 */
const char *session_command(const struct session *s);

/* Add a source's status to the run's quality. */
void run__source(struct run *r, const char *name, bool active, const char *reason);

/* Append a note (truncated, silently ignored beyond capacity). */
void run__note(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Names used in the artifact and the table. */
const char *run_status_name(enum run_status s);
const char *state_name(int st); /* "on_cpu", "runqueue", ... */
const char *delay_name(int d);	/* "cpu", "block_io", ... */

#endif /* TSARUN_RUN_H */
