/* SPDX-License-Identifier: MIT */
/*
 * The bash profile's insides (bashprof.h is its interface), shared by the
 * two halves of its making: bashprof.c decodes the records as they come
 * into streams, levels and the call tree; bashprof_finish.c completes the
 * tree at the run's end (the eBPF tree's processes at their fork points,
 * nested bash processes placed, pipelines grouped, the trap cost's waits).
 * Nothing outside those two files includes it.
 */
#ifndef TSARUN_BASHPROF_INT_H
#define TSARUN_BASHPROF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bashprof.h"
#include "hashmap.h"
#include "tsa_wire.h"

/* Interned strings: one copy of each text, compared by pointer afterwards. */
struct strtab {
	char **v; /* the copies */
	size_t n, cap;
	struct hmap map; /* a text -> its copy's index in v */
};

/*
 * The trap cost charged to a stream so far (what the correction removes).
 * A trap run is CPU work: in wall time it costs its CPU time stretched by
 * the waits for a CPU the processes had (bashprof__finish()), so w counts
 * CPU nanoseconds until then, with wall semantics (the slowest of children
 * run side by side, the part of a child a `wait` waited for).
 */
struct cost {
	uint64_t w, c;
};

/* A command being timed at one level of a stream. */
struct open_cmd {
	struct bash_node *node;
	uint64_t t0, c0, cc0; /* wall, own CPU, children's CPU at its start */
	struct cost o0;	      /* the stream's trap cost at its start */
};

struct level {
	struct bash_node *ctx; /* where commands of this level go */
	struct open_cmd cmd;
	bool timed; /* the frame is a node of its own (traps) */
	uint64_t t0, c0, cc0;
	struct cost o0;
};

struct fork_point {
	uint64_t t; /* CLOCK_MONOTONIC */
	struct bash_node *node;
	uint64_t cmd_t0; /* start of the command that forked */
	uint32_t index;
	uint32_t pipe; /* processes of its pipeline forked before it */
	bool orphan;
	bool has_stream; /* a child stream said HELLO for it */
};

/* A background child (&, coproc, process substitution) its parent has yet to pay for. */
struct pending_child {
	uint64_t t0, t1; /* its life as a bash process */
	uint64_t w;	 /* its trap wall cost */
	uint64_t w_left; /* the part not yet charged to a `wait` of the parent */
	uint64_t c;	 /* trap CPU cost, charged when the parent reaps it */
	bool reaped;
};

struct stream {
	uint32_t pid, gen;
	uint32_t ppid;
	uint32_t next_seq;
	bool ended, execed, fallback, root;
	struct stream *parent; /* for forked children */
	uint32_t fork_index;
	uint32_t subshell_env;
	/* text id -> interned string: hashed, as many slots as ids defined (BASHPROF_STREAM_IDS) */
	struct id_slot {
		uint32_t id; /* 0: free */
		const char *s;
	} * ids;
	uint32_t nids, capids;
	bool ids_dropped; /* a definition was dropped at a limit (since the last TEXT_RESET) */
	struct level *lv;
	int nlv, caplv;
	struct bash_node *anchor;    /* the fork point's node (forked children) */
	struct bash_node *base;	     /* where the top level's commands go (NULL: not yet) */
	struct bash_node *exec_node; /* the command that exec'd this process into another program */
	struct fork_point *forks;
	uint32_t nforks, capforks;
	uint64_t t_start, t_end, last_t, last_cpu, cpu_start, child_cpu, child_cpu0;
	struct tsa_cost cal[TSA_COST_NR]; /* one trap run's cost (its HELLO) */
	uint64_t crossings;		  /* this stream's trap runs */
	struct cost ovh;		  /* trap cost charged: its own and its waited children's */
	struct cost own;		  /* its own trap runs' cost */
	uint32_t cal_pre;		  /* permille of a trap run before its clock read */
	uint32_t span_med; /* a trap run's timed parts at start-up (ns; 0: untimed) */
	uint32_t span_tty; /* what the terminal's part adds to them */
	uint32_t speed;	   /* its last trap run's timed parts over span_med, permille */
	bool had_trap;	   /* a trap run was charged: its rest is due */
	bool last_charged; /* the last trap run's rest was charged */
	bool async;	   /* a background job, coproc or process substitution of its parent */
	bool nested;	   /* a bash run by a program of the tree, not by bash itself */
	bool unplaced;	   /* in limbo: its parent process was unknown when it began */
	bool charged;	   /* its trap cost went to its parent */
	/*
	 * The bash image this process exec'd from (`exec bash ...`, a fork that
	 * exec'd bash), while open: the commands open there wait for this one
	 * and pay for its trap runs. image: the bash image that followed this
	 * one's exec, from image_t on; in the sum over bash processes this one
	 * ends there.
	 */
	struct stream *image_of;
	struct stream *image; /* the bash image that followed this one's exec */
	uint64_t image_t;
	uint64_t
	    ep_w; /* synchronous children ended since the last record: their largest wall cost */
	struct pending_child *pend;
	uint32_t npend, cappend;
	struct stream *hnext;
	struct stream *prev_pid; /* the stream of the same pid before this one */
};

struct bashprof {
	struct strtab strs;
	size_t mem; /* bytes records made the profile hold (BASHPROF_MEM_MAX) */
	struct bash_node **nodes;
	size_t nnodes, capnodes;
	struct hmap nk;	    /* a node's parent, kind, line and text -> its index in nodes */
	struct stream **sh; /* (pid, gen) -> stream */
	size_t shcap, shn;
	/*
	 * pid -> its latest stream, the older ones by prev_pid: what finds a
	 * process's streams (its former image, its parent's at a fork) costs
	 * what that process sent, not a walk over every stream, which forged
	 * ones made quadratic (40,000 of them: 6 s of root's CPU).
	 */
	struct stream **pt;
	size_t ptcap, ptn;
	struct stream **all;
	size_t nall, capall;
	struct bash_quality q;
	struct bash_total tot;
	/*
	 * Nested bash processes whose parent is neither a bash of the tree nor a
	 * program one of them exec'd (make -> sh -> bash): their commands wait
	 * below this parentless node until bashprof__finish() places them.
	 */
	struct bash_node *limbo;
	struct bash_node *gone; /* nodes out of the tree (merged, the limbo), by next: freed last */
	bool finished;
	bool ending; /* in bashprof__finish(): what it makes is not refused */
};

/* A node, or where it was merged. */
static inline struct bash_node *live(struct bash_node *n)
{
	while (n && n->dead)
		n = n->merged_into;
	return n;
}

static inline uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* bashprof.c's, for bashprof_finish.c: */
const char *bp_strtab_intern(struct bashprof *bp, struct strtab *t, const char *s, size_t n);
struct bash_node *bp_node_new(struct bashprof *bp, struct bash_node *parent, uint8_t kind,
			      uint32_t line, const char *text, const char *file);
struct stream *bp_pid_latest(const struct bashprof *bp, uint32_t pid);
void bp_stream_close(struct bashprof *bp, struct stream *s, uint64_t t, uint64_t cpu, uint8_t tail);

#endif /* TSARUN_BASHPROF_INT_H */
