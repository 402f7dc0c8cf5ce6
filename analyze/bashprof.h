/* SPDX-License-Identifier: MIT */
/*
 * The bash profile: decodes the record stream of tsarun-trap.so
 * (shell/tsa_wire.h) and builds a call tree of commands as it goes.
 *
 * Pure logic: bashprof__feed() takes one datagram at a time, as received;
 * bashprof__finish() closes what the streams left open, attaches the
 * processes of the eBPF tree (struct run) to the commands that forked
 * them, and corrects times for the trap's own cost. The input is
 * untrusted: malformed, truncated or hostile records are counted and
 * skipped. Memory grows with the call tree (distinct commands, frames and
 * processes), never with the number of records: loops collapse into one
 * node per (call path, kind, line, text) with a count.
 *
 * Ownership: the profile owns its nodes and strings; nodes live until
 * bashprof__free().
 */
#ifndef TSARUN_BASHPROF_H
#define TSARUN_BASHPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct run;

#define BASHPROF_LABEL_MAX 300 /* bytes of a node's label in the outputs */

/*
 * What records can make root allocate. They come from the profiled
 * script, which can forge any of them (issue 23), so every allocation
 * they size is bounded; what would exceed a bound is dropped and counted
 * (bash_quality.limit_drops), never silently.
 *
 * - Text ids a stream holds at once: the builtin starts its table over
 *   (TEXT_RESET) after 6,000 texts (tsarun-trap.c, TEXT_MAX_ENTRIES), so
 *   8,192 never drops a real one. The table is hashed and grows with the
 *   ids a stream defines, not with the largest id a record names: at most
 *   16,384 slots of 16 bytes (256 KiB) a stream.
 * - Levels a stream nests: the builtin keeps 512 frames (TSA_MAX_FRAMES,
 *   deeper ones fold, TSA_EF_DEEP), the fallback's lines at most 1,000.
 * - Bytes of everything records make, together: streams and their ids,
 *   levels, fork points and pending children, call-tree nodes and interned
 *   texts. A real script has at most some thousands of distinct command
 *   texts, and its tree some tens of thousands of nodes (about 250 bytes
 *   each with their text) and streams (one per subshell, command
 *   substitution or pipeline part; about 450 bytes each, ended ones
 *   included): some tens of MiB at the very most. 128 MiB is ten times
 *   that, and what a forged flood can make root hold.
 */
#define BASHPROF_STREAM_IDS    8192
#define BASHPROF_STREAM_LEVELS 1024
#define BASHPROF_MEM_MAX       (128u << 20)

/*
 * What the pure-bash trap (the fallback) does not do that the builtin
 * does: said in the report and in the artifact (bash.recorder_limits).
 */
#define BASHPROF_FALLBACK_LIMITS                                                                \
	"functions and sourced files nest as with the builtin, but eval, trap bodies, "         \
	"subshells, command substitutions, background jobs and pipeline parts are not told "    \
	"apart (forked ones go below the script, as a nested bash), no process is attached to " \
	"its command, the trap's cost is not removed, and the script sees functrace on (its "   \
	"RETURN trap fires at every function's return, trap -p lists the DEBUG trap, set +T "   \
	"stops the recording of functions)"

enum bash_kind {
	BK_SCRIPT = 0, /* the root: the profiled script */
	BK_COMMAND,
	BK_FUNCTION, /* a command that called a function (body below) */
	BK_SOURCE,   /* `source` / `.` */
	BK_EVAL,
	BK_TRAP,       /* a trap body (RETURN, EXIT, ERR, signals) */
	BK_SUBSHELL,   /* ( list ) */
	BK_BACKGROUND, /* cmd &, { list; } & */
	BK_PIPE_PART,  /* a pipeline part's own bash process (a subshell) */
	BK_COMSUB,     /* $(...) */
	BK_PROCSUB,    /* <(...) >(...) */
	BK_COPROC,
	BK_FORK,     /* a forked copy of the shell running one command */
	BK_BASH,     /* a nested bash process */
	BK_PIPELINE, /* a whole pipeline: its parts are its children */
	BK_NR,
};

const char *bash_kind_name(enum bash_kind k);

/* Processes of one name attached to a node, with their eBPF accounting. */
struct bash_procs {
	char comm[16];
	uint32_t count;
	uint32_t first_pid;
	uint64_t wall_ns;     /* sum of lifetimes */
	uint64_t state_ns[5]; /* on-CPU, runqueue, S, D, stopped (TSA_ST_*) */
	/*
	 * Of count, processes that ran commands of the script before exec made
	 * them this program (`exec cmd`, a subshell's last command): their
	 * figures, which are the process's, hold those commands too.
	 */
	uint32_t with_bash;
	uint32_t
	    unmeasured; /* enum acct_unmeasured, of any of them (ACCT_NO_STATES: S, D unsplit) */
};

struct bash_node {
	uint32_t id; /* 0 is the root; parents have smaller ids */
	uint8_t kind;
	uint8_t key_kind; /* the kind it was made with (kind is refined later) */
	bool pipe_part;
	/* internal: the first part of the pipeline this node is a part of, and its place in it */
	struct bash_node *pipe_head;
	uint32_t pipe_pos;
	/* internal: on-CPU time of its processes and all their descendants (eBPF) */
	uint64_t tree_cpu_ns;
	bool orphan; /* a forked construct that no DEBUG trap announced */
	bool dead;   /* merged into another node: not in the tree any more */
	uint32_t line;
	uint32_t depth;
	const char *text; /* command text; for frames the function name, file or signal */
	const char *file; /* source file of a function, trap string of a trap */
	struct bash_node *parent, *child, *last_child, *next;
	uint64_t count;
	uint64_t wall_ns; /* corrected, summed over count */
	uint64_t cpu_ns;
	uint64_t raw_wall_ns; /* as measured, trap cost included */
	uint64_t raw_cpu_ns;
	uint64_t raw_own_cpu_ns; /* of raw_cpu_ns, the bash process's own (not reaped children's) */
	uint64_t cor_wall_ns;	 /* the trap cost removed from raw_wall_ns */
	uint64_t cor_cpu_ns;
	struct bash_procs *procs;
	uint32_t nprocs;
	struct bash_node *merged_into; /* internal: where a dead node went */
};

enum bash_cost_kind {
	BASH_COST_BASE = 0,
	BASH_COST_TTY,
	BASH_COST_JOBS,
	BASH_COST_NR,
};

struct bash_quality {
	uint64_t datagrams;
	uint64_t records;
	uint64_t bad_datagrams;	  /* no valid chunk header */
	uint64_t bad_records;	  /* malformed: wrong length, bad ids, impossible values */
	uint64_t unknown_streams; /* chunks of a stream that never said HELLO */
	uint64_t lost_records;	  /* gaps in a stream's sequence numbers */
	uint64_t streams;
	uint64_t unterminated; /* streams that neither exited nor exec'd (killed) */
	uint64_t
	    orphan_streams; /* nested bash processes that could not be placed (below the root) */
	uint64_t placed_streams; /* nested bash processes placed through the process tree */
	uint64_t attached_processes;
	uint64_t unattached_processes;
	/* bash processes whose DEBUG trap the script replaced or removed, or that turned functrace off. */
	uint64_t trap_lost_streams;
	uint64_t functrace_off_streams;
	/* bash processes whose functions, sources and evals nested deeper than the builtin keeps */
	uint64_t deep_streams;
	/*
	 * Processes named bash in the tree that sent no record: posix mode (no
	 * BASH_ENV), BASH_ENV cleared, or not followed (--bash-no-follow).
	 */
	uint64_t silent_bash;
	/*
	 * Records dropped because what they make would have passed a limit
	 * above (BASHPROF_STREAM_IDS, BASHPROF_STREAM_LEVELS, BASHPROF_MEM_MAX),
	 * and records that named what was dropped; mem_bytes: the most the
	 * records made the profile hold at once (bytes asked of malloc).
	 */
	uint64_t limit_drops;
	uint64_t mem_bytes;
	/*
	 * Trap runs whose main part the builtin timed as it ran (tsa_wire.h,
	 * TSA_R_SPAN): how many, the time they took, and how many parts held a
	 * wait (or were missed) and were charged at their start-up median;
	 * and what such parts held beyond their median on the CPU (a host's
	 * stops of the vCPU, interrupts), charged as timed besides.
	 */
	uint64_t timed_runs;
	uint64_t timed_ns;
	uint64_t guessed_parts;
	uint64_t stall_ns;
	bool fallback;		   /* recorded by the pure-bash trap */
	bool calibrated;	   /* the trap's cost was measured (cal is set) */
	bool cal_cached;	   /* ... in an earlier run, read from the user's cache */
	bool cal_respeed;	   /* ... in this run, the cache's being of another speed */
	uint64_t cal_spent_cpu_ns; /* CPU the script's bash spent measuring it in this run */
	/*
	 * One trap run, as measured at start-up (tsa_wire.h, enum tsa_cost_kind),
	 * besides what was timed (timed_ns): the base, and what bash adds to a trap run's tail once a process has
	 * had children (terminal hand-back, job-table walk).
	 */
	struct bash_cost {
		uint32_t wall_ns, cpu_ns;
	} cal[BASH_COST_NR];
	/*
	 * A trap run's wall cost is its CPU cost times this (in thousandths):
	 * the bash processes' runnable time over their CPU time (bashprof.c).
	 */
	uint32_t stretch_milli;
	/* The part of a trap run before the builtin reads the clock, in thousandths. */
	uint32_t cal_pre_permille;
};

struct bash_total {
	uint64_t self_wall_ns;	/* the script's own wall time, corrected */
	uint64_t total_wall_ns; /* the wall time of every bash process of the tree, summed */
	uint64_t cpu_ns;	/* the script's CPU with its reaped children, corrected */
	/* (CPU: since exec, without what the start-up measurement of the trap took) */
	uint64_t commands; /* commands run (trap runs recorded) */
	uint64_t raw_self_wall_ns;
	uint64_t raw_cpu_ns;
};

struct bashprof;

struct bashprof *bashprof__new(void);
void bashprof__free(struct bashprof *bp);

/* One datagram as received. Never fails: what cannot be used is counted. */
void bashprof__feed(struct bashprof *bp, const void *data, size_t len);

/*
 * The pure-bash fallback's lines ("PID EPOCHREALTIME LINENO DEPTH COMMAND",
 * one per DEBUG trap, from tsarun-env.bash when the builtin cannot be
 * loaded). real_minus_mono_ns converts its wall-clock times to
 * CLOCK_MONOTONIC. No CPU times, no fork points: subshells hang below the
 * script's root. Bad lines are counted as bad records.
 */
void bashprof__feed_fallback(struct bashprof *bp, FILE *f, int64_t real_minus_mono_ns);

/*
 * Close open commands (at the end time of their process when r knows it),
 * attach r's processes to the commands that forked them, apply the trap
 * cost correction and sum the totals. r may be NULL (no eBPF tree). Call
 * once, after the last feed; origin_ns is the run's CLOCK_MONOTONIC origin.
 */
void bashprof__finish(struct bashprof *bp, const struct run *r, uint64_t origin_ns);

const struct bash_node *bashprof__root(const struct bashprof *bp);
size_t bashprof__nodes(const struct bashprof *bp);
/* Nodes in id order (parents before children). */
const struct bash_node *bashprof__node(const struct bashprof *bp, size_t i);
const struct bash_quality *bashprof__quality(const struct bashprof *bp);
const struct bash_total *bashprof__total(const struct bashprof *bp);

/* Folded stacks (one line per leaf path, wall microseconds), no pids in frames. */
int bashprof__write_folded(const struct bashprof *bp, FILE *f);

/*
 * Each node with own wall time, with its path as bash.folded names it
 * ("bash;12: make_all;3: sleep 0.05"), its own wall and CPU time (less its
 * children's), in id order. Stops at the first non-zero return of fn.
 */
int bashprof__each_self(const struct bashprof *bp,
			int (*fn)(void *ctx, const char *path, uint64_t wall_ns, uint64_t cpu_ns),
			void *ctx);

/*
 * The profile as a flame graph (analyze/flame.h): one stack per node, its
 * frames named as in bash.folded, valued by the node's own wall time (or
 * CPU time with cpu) in nanoseconds, coloured by kind of node.
 */
struct flame;
int bashprof__flame(const struct bashprof *bp, struct flame *f, bool cpu);

/* The readable tree (like timep's out.profile). */
struct bashprof_print_opts {
	bool color;
	uint32_t max_depth; /* 0: no limit */
	/*
	 * Fold nodes below this share of the total into one line per parent
	 * (0: all shown; < 0: BASHPROF_FOLD_PERCENT once the tree has more than
	 * BASHPROF_FOLD_LINES nodes).
	 */
	double min_percent;
	int top;	    /* hot commands listed first, by self and by total time (< 0: 5) */
	const char *script; /* the script's file, for lines outside functions and sources */
	unsigned width;	    /* columns to fit the rows in (0: no limit) */
};
#define BASHPROF_FOLD_LINES   200
#define BASHPROF_FOLD_PERCENT 0.5
void bashprof__print(const struct bashprof *bp, FILE *f, const struct bashprof_print_opts *o);

#endif /* TSARUN_BASHPROF_H */
