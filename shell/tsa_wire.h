/* SPDX-License-Identifier: MIT */
/*
 * The record stream from every instrumented bash process to tsarun.
 *
 * Each bash process (the script, its subshells, nested bash processes) is
 * one stream. A stream begins with a HELLO record and has its own record
 * sequence numbers, so a gap (lost records) is seen and counted. Records
 * travel in datagrams on an AF_UNIX SOCK_DGRAM socket: one datagram is one
 * chunk, a header followed by whole records, written by one process with
 * one send, so chunks from concurrent processes never interleave.
 *
 * Only fixed-width fields, host byte order (writer and reader are on the
 * same machine), every record a multiple of 8 bytes long. The reader
 * treats all of it as untrusted input (analyze/bashprof.c).
 *
 * Times are CLOCK_MONOTONIC nanoseconds; CPU times are the process's own
 * (CLOCK_PROCESS_CPUTIME_ID), and "children" CPU is what getrusage
 * (RUSAGE_CHILDREN) says of reaped children.
 *
 * A chunk whose pid is 0 was sent while the builtin measured its own cost
 * at start-up (it sends as it would in a run, so that the cost of sending
 * is in the measurement); the reader drops it.
 */
#ifndef TSARUN_TSA_WIRE_H
#define TSARUN_TSA_WIRE_H

#include <stdint.h>

#define TSA_WIRE_MAGIC	   0x42415354u /* "TSAB" */
#define TSA_WIRE_VERSION   3
#define TSA_WIRE_MAX_CHUNK 16384 /* bytes in one datagram, header included */
#define TSA_WIRE_TEXT_MAX  240	 /* bytes of a command text that are kept */
#define TSA_WIRE_MAX_IDS   65536 /* text ids are below this */
#define TSA_MAX_FRAMES	   512	 /* frames the builtin keeps (deeper: TSA_EF_DEEP) */

/* Environment shared by tsarun, the injector and the builtin. */
#define TSA_ENV_SOCK	 "TSARUN_BASH_SOCK"	/* the socket's path */
#define TSA_ENV_SO	 "TSARUN_BASH_SO"	/* the builtin's path */
#define TSA_ENV_USER_ENV "TSARUN_BASH_USER_ENV" /* the user's own BASH_ENV, when set */
#define TSA_ENV_CAL	 "TSARUN_BASH_CAL"	/* the start-up figures (tsarun-trap.c, start()) */
#define TSA_ENV_NOFOLLOW "TSARUN_BASH_NOFOLLOW" /* set: nested bash processes are not followed */
#define TSA_ENV_ROOT	 "TSARUN_BASH_ROOT"	/* pid of the profiled script's bash */
/* posix mode for the script: "--posix" (its #! line), or "=VALUE" (POSIXLY_CORRECT's) */
#define TSA_ENV_POSIX	 "TSARUN_BASH_POSIX"
/* set: the script's #! line asks for -v, which the injector turns on as its last step */
#define TSA_ENV_VERBOSE	 "TSARUN_BASH_VERBOSE"
/* set: measure the trap's cost at start-up whatever the user's cache holds */
#define TSA_ENV_RECAL	 "TSARUN_BASH_RECALIBRATE"

struct tsa_chunk {
	uint32_t magic;
	uint16_t version;
	uint16_t hdr_len; /* sizeof(struct tsa_chunk) */
	uint32_t pid;
	uint32_t gen;  /* the stream: pid + gen name it (gen is set by HELLO) */
	uint32_t seq;  /* records this stream sent before this chunk */
	uint32_t nrec; /* records in this chunk */
};

enum tsa_rec_type {
	TSA_R_HELLO = 1, /* a stream begins */
	TSA_R_TEXT,	 /* defines a text id: command, function, file or trap text */
	TSA_R_TEXT_RESET,
	TSA_R_CMD,  /* the DEBUG trap: a command is about to run */
	TSA_R_PUSH, /* a frame begins: function, source, eval, trap */
	TSA_R_POP,  /* the innermost frame ended */
	TSA_R_FORK, /* this process is about to fork */
	TSA_R_EXEC, /* this process is about to exec (what it was is over) */
	TSA_R_END,  /* this process exits */
	TSA_R_SPAN, /* the part of trap runs that was timed, not estimated */
	TSA_R_NR,
};

/* Every record starts with this. len counts the header and is a multiple of 8. */
struct tsa_rec {
	uint8_t type;
	uint8_t flags;
	uint16_t len;
	uint32_t arg; /* line number, text id, or kind, per type */
};

enum tsa_hello_how {
	TSA_HELLO_START = 0, /* a new bash image (the script, a nested bash) */
	TSA_HELLO_FORK = 1,  /* a forked child of the stream parent_pid/parent_gen */
};

enum tsa_hello_flags {
	TSA_HF_FALLBACK = 1u << 0, /* recorded by the pure-bash trap, not the builtin */
	TSA_HF_CALIBRATED = 1u << 1,
	TSA_HF_ROOT = 1u << 2, /* the profiled script itself */
	/* CALIBRATED from the user's cache of an earlier measurement, not in this run */
	TSA_HF_CAL_CACHED = 1u << 3,
	/* CALIBRATED in this run though the cache had entries: measured at other speeds */
	TSA_HF_CAL_RESPEED = 1u << 4,
};

/*
 * What one DEBUG trap run costs the script, measured at start-up in the
 * script's own process. A trap run's cost is the base, plus the terminal
 * hand-back and the job-table walk bash adds to the trap's tail once the
 * process has children (trap.c, run_debug_trap(): give_terminal_to() when
 * pipeline_pgrp is set, notify_and_cleanup() when a job table exists).
 * Which of these each trap run paid is in the flags of the record that
 * follows it (TSA_TAIL_*).
 */
enum tsa_cost_kind {
	TSA_COST_BASE = 0,
	TSA_COST_TTY,  /* added by give_terminal_to() */
	TSA_COST_JOBS, /* added by the job-table walk */
	TSA_COST_NR,
};

struct tsa_cost {
	uint32_t wall_ns;
	uint32_t cpu_ns;
};

/* arg: enum tsa_hello_how */
struct tsa_hello {
	struct tsa_rec h;
	uint64_t t;
	uint64_t cpu;
	uint64_t child_cpu;
	uint32_t pid;
	uint32_t ppid;
	uint32_t parent_gen;
	uint32_t fork_index; /* which fork of the parent this is (0 = its first) */
	uint32_t subshell_env;
	uint32_t subshell_level;
	uint32_t hflags;		  /* enum tsa_hello_flags */
	uint32_t bash_version;		  /* major * 100 + minor */
	struct tsa_cost cal[TSA_COST_NR]; /* CALIBRATED: the trap's cost (else zeros) */
	uint64_t cal_spent_cpu_ns;	  /* CPU the measurement itself took in this process */
	/*
	 * The part of a trap run's base cost before the builtin reads the clock,
	 * in thousandths: a record's span holds that part of its own trap run
	 * and the rest of the run before it.
	 */
	uint32_t cal_pre_permille;
	/*
	 * A trap run's timed parts at start-up, in ns (0: untimed): the
	 * medians of its head and base tail, summed, and what the terminal's
	 * part of the tail adds (TSA_TAIL_TTY). A SPAN record over them is how
	 * fast bash runs now next to then: the start-up costs are charged at
	 * that speed.
	 */
	uint16_t span_med_ns;
	uint16_t span_tty_ns;
};

/* arg: the id. Followed by the bytes (no NUL), padded to 8. flags: unused. */
struct tsa_text {
	struct tsa_rec h;
};

enum tsa_cmd_flags {
	TSA_CF_CHILD_CPU = 1u << 0, /* child_cpu follows */
	TSA_CF_IN_TRAP = 1u << 1,   /* the text is not the command's (bash hides it in traps) */
};

/*
 * The first record of every trap run (whatever its type) carries TSA_RUN,
 * and what the tail of the stream's previous trap run cost: the tail runs
 * after the builtin returns, in the span that record closes. EXEC and END
 * say it of the last trap run. These bits are free in every record type.
 */
enum tsa_run_flags {
	TSA_RUN = 1u << 5,	 /* a trap run starts with this record */
	TSA_TAIL_TTY = 1u << 6,	 /* bash gave the terminal back (TSA_COST_TTY) */
	TSA_TAIL_JOBS = 1u << 7, /* bash walked its job table (TSA_COST_JOBS) */
	TSA_TAIL_MASK = TSA_TAIL_TTY | TSA_TAIL_JOBS,
};

/* TSA_R_END and TSA_R_EXEC, besides the tail: what the script did to the recording. */
enum tsa_end_flags {
	TSA_EF_TRAP_LOST = 1u << 0,    /* the DEBUG trap is not ours any more (set or removed) */
	TSA_EF_NO_FUNCTRACE = 1u << 1, /* functrace is off (set +T): functions are not traced */
	TSA_EF_DEEP =
	    1u << 2, /* frames nested deeper than the builtin keeps: folded into its last */
};

/* arg: line */
struct tsa_cmd {
	struct tsa_rec h;
	uint64_t t;
	uint64_t cpu;
	uint32_t text; /* text id */
	uint32_t pad;
};

struct tsa_cmd_cc {
	struct tsa_cmd c;
	uint64_t child_cpu;
};

enum tsa_frame_kind {
	TSA_FR_FUNC = 1,
	TSA_FR_SOURCE = 2,
	TSA_FR_EVAL = 3,
	TSA_FR_TRAP = 4,
	TSA_FR_KIND_MASK = 0x0f,
	/*
	 * PUSH and POP: child_cpu follows (struct tsa_push_cc, tsa_pop_cc).
	 * Children reaped since the last record are the command's that just
	 * ended, not the trap or the caller's command that a frame change
	 * starts (an awk that failed, and the ERR trap that runs next).
	 */
	TSA_FR_CHILD_CPU = 1u << 4,
};

/* arg: line. flags: enum tsa_frame_kind (TSA_FR_KIND_MASK), TSA_FR_CHILD_CPU */
struct tsa_push {
	struct tsa_rec h;
	uint64_t t;
	uint64_t cpu;
	uint32_t name; /* text id: function name, file, trap signal name */
	uint32_t file; /* text id: source file (functions), trap string (traps) */
};

struct tsa_push_cc {
	struct tsa_push p;
	uint64_t child_cpu;
};

/* arg: frames left after the pop. flags: TSA_FR_CHILD_CPU */
struct tsa_pop {
	struct tsa_rec h;
	uint64_t t;
	uint64_t cpu;
};

struct tsa_pop_cc {
	struct tsa_pop p;
	uint64_t child_cpu;
};

enum tsa_fork_flags {
	TSA_FF_ORPHAN = 1u << 0, /* no DEBUG trap announced this fork's command: text says it */
	TSA_FF_CHILD_CPU =
	    1u << 1, /* child_cpu follows (struct tsa_fork_cc): children reaped since */
};

/* arg: line */
struct tsa_fork {
	struct tsa_rec h;
	uint64_t t;
	uint64_t cpu;
	uint32_t index; /* this stream's fork count before this fork */
	uint32_t pipe;	/* processes already in the pipeline being built */
	uint32_t text;	/* text id of the forked construct (ORPHAN), else 0 */
	uint32_t pad;
};

/*
 * A fork after children were reaped since the last record: what they cost
 * goes with the command that reaped them, not the construct that forks
 * now (a subshell after a `wait` has no DEBUG trap of its own).
 */
struct tsa_fork_cc {
	struct tsa_fork f;
	uint64_t child_cpu;
};

/* arg: text id of the program. flags: enum tsa_run_flags (tail) */
struct tsa_exec {
	struct tsa_rec h;
	uint64_t t;
	uint64_t cpu;
};

/* arg: the exit status bash is about to return. flags: enum tsa_run_flags (tail) */
struct tsa_end {
	struct tsa_rec h;
	uint64_t t;
	uint64_t cpu;
	uint64_t child_cpu;
};

/*
 * A SPAN record is a bare header: arg is the time the builtin timed of
 * trap runs since the last SPAN, in ns: the head of the run it begins (up
 * to the clock read) and the tail of the one before (from its clock read
 * to restore_pipeline()); with TSA_RUN it is the first record of that
 * run. Before END and EXEC it carries the last run's tail. The start-up
 * costs (TSA_COST_*) are then what a trap run costs besides. A bash that
 * cannot time its trap runs sends none, and its start-up costs are the
 * whole cost. One with TSA_SF_STALL follows a run's first record: what
 * its parts charged at their median held beyond it on the CPU (a vCPU
 * stopped by the host, interrupts), charged as timed but not a reading of
 * the run's speed.
 */
enum tsa_span_flags {
	TSA_SF_GUESSED = 1u << 0, /* a part held a wait (or was missed): its start-up median */
	TSA_SF_STALL = 1u << 1,	  /* arg: on-CPU time beyond the medians of GUESSED parts */
};

_Static_assert(sizeof(struct tsa_chunk) == 24, "tsa_chunk");
_Static_assert(sizeof(struct tsa_rec) == 8, "tsa_rec");
_Static_assert(sizeof(struct tsa_hello) == 104, "tsa_hello");
_Static_assert(sizeof(struct tsa_cmd) == 32, "tsa_cmd");
_Static_assert(sizeof(struct tsa_cmd_cc) == 40, "tsa_cmd_cc");
_Static_assert(sizeof(struct tsa_push) == 32, "tsa_push");
_Static_assert(sizeof(struct tsa_pop) == 24, "tsa_pop");
_Static_assert(sizeof(struct tsa_push_cc) == 40, "tsa_push_cc");
_Static_assert(sizeof(struct tsa_pop_cc) == 32, "tsa_pop_cc");
_Static_assert(sizeof(struct tsa_fork) == 40, "tsa_fork");
_Static_assert(sizeof(struct tsa_fork_cc) == 48, "tsa_fork_cc");
_Static_assert(sizeof(struct tsa_exec) == 24, "tsa_exec");
_Static_assert(sizeof(struct tsa_end) == 32, "tsa_end");

#endif /* TSARUN_TSA_WIRE_H */
