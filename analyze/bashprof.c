// SPDX-License-Identifier: MIT
/*
 * Decoder and call-tree builder for the bash record stream (bashprof.h).
 *
 * Each stream (one bash process) keeps a stack of levels: the script's
 * top level, then one per function call, sourced file, eval or trap. A
 * level has at most one open command: a CMD record closes it (its wall
 * and CPU are the difference to the new record) and opens the next one.
 * A closed command is added to its node, found by (parent, kind, line,
 * text): a loop's 20,000 iterations are one node with count 20,000.
 *
 * A fork point (FORK record) remembers the node of the command that
 * forked. A forked child's stream starts below that node; a process that
 * never says anything (an external command) is attached to it at the end
 * from the eBPF tree: the k-th child process of a bash process, in start
 * order, is its k-th fork.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bashprof.h"
#include "hash.h"
#include "hashmap.h"
#include "run.h"
#include "tsa_wire.h"
#include "vec.h"

_Static_assert((int)BASH_COST_NR == (int)TSA_COST_NR && (int)BASH_COST_TTY == (int)TSA_COST_TTY &&
		   (int)BASH_COST_JOBS == (int)TSA_COST_JOBS,
	       "bash_cost_kind mirrors tsa_cost_kind");

static const char *const kind_names[BK_NR] = {
    [BK_SCRIPT] = "script",
    [BK_COMMAND] = "command",
    [BK_FUNCTION] = "function",
    [BK_SOURCE] = "source",
    [BK_EVAL] = "eval",
    [BK_TRAP] = "trap",
    [BK_SUBSHELL] = "subshell",
    [BK_BACKGROUND] = "background",
    [BK_PIPE_PART] = "pipeline_part",
    [BK_COMSUB] = "command_substitution",
    [BK_PROCSUB] = "process_substitution",
    [BK_COPROC] = "coproc",
    [BK_FORK] = "fork",
    [BK_BASH] = "bash",
    [BK_PIPELINE] = "pipeline",
};

const char *bash_kind_name(enum bash_kind k)
{
	return (unsigned)k < BK_NR && kind_names[k] ? kind_names[k] : "command";
}

/* Interned strings: one copy of each text, compared by pointer afterwards. */
struct strtab {
	char **v; /* the copies */
	size_t n, cap;
	struct hmap map; /* a text -> its copy's index in v */
};

/* A text looked up before it is copied. */
struct text_probe {
	const char *s;
	size_t n;
};

static bool strtab_equal(uint32_t i, const void *probe, void *ctx)
{
	const struct strtab *t = ctx;
	const struct text_probe *p = probe;

	return !strncmp(t->v[i], p->s, p->n) && !t->v[i][p->n];
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

struct bashprof;
static bool mem_take(struct bashprof *bp, size_t n);
static void mem_give(struct bashprof *bp, size_t n);

/* Records make what they name: bp's memory limit holds (NULL past it). */
static const char *strtab_intern(struct bashprof *bp, struct strtab *t, const char *s, size_t n)
{
	uint64_t h = hash_fnv1a(s, n, HASH_FNV1A_BASIS);
	struct text_probe probe = {s, n};
	size_t grow, cap = t->cap;
	uint32_t i;
	char *copy, **v;

	/* A text already held costs nothing, past the limit too. */
	if (hmap__find(&t->map, h, strtab_equal, &probe, &i))
		return t->v[i];
	grow = hmap__insert_cost(&t->map);
	if (grow && !mem_take(bp, grow))
		return NULL;
	if (hmap__reserve(&t->map)) {
		mem_give(bp, grow);
		return NULL;
	}
	if (t->n == t->cap) {
		/* Full: vec_grow() doubles it (1024 at first), counted before. */
		size_t more = (t->cap ? t->cap : 1024) * sizeof(*v);

		if (!mem_take(bp, more))
			return NULL;
		v = vec_grow(t->v, &cap, t->n + 1, sizeof(*v), 1024);
		if (!v) {
			mem_give(bp, more);
			return NULL;
		}
		t->v = v;
		t->cap = cap;
	}
	if (!mem_take(bp, n + 1))
		return NULL;
	copy = malloc(n + 1);
	if (!copy) {
		mem_give(bp, n + 1);
		return NULL;
	}
	memcpy(copy, s, n);
	copy[n] = '\0';
	t->v[t->n] = copy;
	hmap__insert(&t->map, h, (uint32_t)t->n++); /* reserved above */
	return copy;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	hmap__free(&t->map);
}

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

/*
 * n more bytes for what records make: refused (and the drop counted) past
 * BASHPROF_MEM_MAX. What bashprof__finish() makes of them (pipeline nodes,
 * at most one for two nodes) is counted, never refused.
 */
static bool mem_take(struct bashprof *bp, size_t n)
{
	if (!bp->ending && n > BASHPROF_MEM_MAX - bp->mem) {
		bp->q.limit_drops++;
		return false;
	}
	bp->mem += n;
	if (bp->mem > bp->q.mem_bytes)
		bp->q.mem_bytes = bp->mem;
	return true;
}

static void mem_give(struct bashprof *bp, size_t n)
{
	bp->mem -= n < bp->mem ? n : bp->mem;
}

static struct bash_node *node_new(struct bashprof *bp, struct bash_node *parent, uint8_t kind,
				  uint32_t line, const char *text, const char *file)
{
	struct bash_node *n;

	if (bp->nnodes == bp->capnodes) {
		size_t cap = bp->capnodes ? bp->capnodes * 2 : 256;
		struct bash_node **v;

		if (!mem_take(bp, (cap - bp->capnodes) * sizeof(*v)))
			return NULL;
		v = realloc(bp->nodes, cap * sizeof(*v));
		if (!v) {
			mem_give(bp, (cap - bp->capnodes) * sizeof(*v));
			return NULL;
		}
		bp->nodes = v;
		bp->capnodes = cap;
	}
	if (!mem_take(bp, sizeof(*n)))
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n) {
		mem_give(bp, sizeof(*n));
		return NULL;
	}
	n->id = (uint32_t)bp->nnodes;
	n->kind = kind;
	n->key_kind = kind;
	n->line = line;
	n->text = text ? text : "";
	n->file = file ? file : "";
	n->parent = parent;
	if (parent) {
		n->depth = parent->depth + 1;
		if (parent->last_child)
			parent->last_child->next = n;
		else
			parent->child = n;
		parent->last_child = n;
	}
	bp->nodes[bp->nnodes++] = n;
	return n;
}

/* Not mixed: the node index's Fibonacci hashing does that (lib/hashmap.h). */
static uint64_t node_hash(const struct bash_node *parent, uint8_t kind, uint32_t line,
			  const char *text)
{
	return (uintptr_t)parent * 31 + (uintptr_t)text * 17 + line * 7 + kind;
}

/* A node's key, looked up before the node is made. */
struct node_probe {
	const struct bash_node *parent;
	const char *text;
	uint32_t line;
	uint8_t kind;
	struct bash_node *const *nodes; /* bp->nodes: held here, one load fewer a lookup */
};

static bool nk_equal(uint32_t i, const void *probe, void *ctx)
{
	const struct node_probe *p = probe;
	const struct bash_node *n = p->nodes[i];

	return n->parent == p->parent && n->key_kind == p->kind && n->line == p->line &&
	       n->text == p->text;
}

/* The child of parent with this key, created when missing. */
static struct bash_node *child_of(struct bashprof *bp, struct bash_node *parent, uint8_t kind,
				  uint32_t line, const char *text, const char *file)
{
	struct node_probe probe = {parent, text, line, kind, bp->nodes};
	uint64_t h = node_hash(parent, kind, line, text);
	size_t grow;
	uint32_t i;
	struct bash_node *n;

	if (hmap__find(&bp->nk, h, nk_equal, &probe, &i))
		return bp->nodes[i];
	/* Room first: a node once made stays in the tree. */
	grow = hmap__insert_cost(&bp->nk);
	if (grow && !mem_take(bp, grow))
		return NULL;
	if (hmap__reserve(&bp->nk)) {
		mem_give(bp, grow);
		return NULL;
	}
	n = node_new(bp, parent, kind, line, text, file);
	if (!n)
		return NULL;
	hmap__insert(&bp->nk, h, (uint32_t)(bp->nnodes - 1)); /* reserved above */
	return n;
}

/* A node, or where it was merged. */
static struct bash_node *live(struct bash_node *n)
{
	while (n && n->dead)
		n = n->merged_into;
	return n;
}

struct bashprof *bashprof__new(void)
{
	struct bashprof *bp = calloc(1, sizeof(*bp));

	if (!bp)
		return NULL;
	hmap__init(&bp->strs.map, &bp->strs);
	hmap__init(&bp->nk, bp);
	/* "" is held from the start: records that need it get it past the memory limit too. */
	if (!node_new(bp, NULL, BK_SCRIPT, 0, "", "") || !strtab_intern(bp, &bp->strs, "", 0)) {
		bashprof__free(bp);
		errno = ENOMEM;
		return NULL;
	}
	return bp;
}

/* What only an open stream needs: its ids, levels and pending children. */
static void stream_release(struct bashprof *bp, struct stream *s)
{
	mem_give(bp, s->capids * sizeof(*s->ids) + (size_t)s->caplv * sizeof(*s->lv) +
			 s->cappend * sizeof(*s->pend));
	free(s->ids);
	free(s->lv);
	free(s->pend);
	s->pend = NULL;
	s->npend = s->cappend = 0;
	s->ids = NULL;
	s->lv = NULL;
	s->nids = s->capids = 0;
	s->nlv = s->caplv = 0;
}

void bashprof__free(struct bashprof *bp)
{
	if (!bp)
		return;
	for (size_t i = 0; i < bp->nnodes; i++) {
		free(bp->nodes[i]->procs);
		free(bp->nodes[i]);
	}
	while (bp->gone) {
		struct bash_node *n = bp->gone;

		bp->gone = n->next;
		free(n->procs);
		free(n);
	}
	free(bp->nodes);
	hmap__free(&bp->nk);
	for (size_t i = 0; i < bp->nall; i++) {
		stream_release(bp, bp->all[i]);
		free(bp->all[i]->forks);
		free(bp->all[i]);
	}
	free(bp->all);
	free(bp->sh);
	free(bp->pt);
	strtab_free(&bp->strs);
	free(bp);
}

static size_t sh_slot(struct stream **v, size_t cap, uint32_t pid, uint32_t gen)
{
	size_t i = mix(((uint64_t)pid << 32) | gen) & (cap - 1);

	while (v[i] && !(v[i]->pid == pid && v[i]->gen == gen))
		i = (i + 1) & (cap - 1);
	return i;
}

static size_t pt_slot(struct stream **v, size_t cap, uint32_t pid)
{
	size_t i = mix(pid) & (cap - 1);

	while (v[i] && v[i]->pid != pid)
		i = (i + 1) & (cap - 1);
	return i;
}

/* The latest stream of pid (older ones: prev_pid), or NULL. */
static struct stream *pid_latest(const struct bashprof *bp, uint32_t pid)
{
	return bp->ptcap ? bp->pt[pt_slot(bp->pt, bp->ptcap, pid)] : NULL;
}

static struct stream *stream_find(struct bashprof *bp, uint32_t pid, uint32_t gen)
{
	if (!bp->shcap)
		return NULL;
	return bp->sh[sh_slot(bp->sh, bp->shcap, pid, gen)];
}

static struct stream *stream_add(struct bashprof *bp, uint32_t pid, uint32_t gen)
{
	struct stream *s;

	if ((bp->shn + 1) * 2 >= bp->shcap) {
		size_t cap = bp->shcap ? bp->shcap * 2 : 64;
		struct stream **v;

		if (!mem_take(bp, (cap - bp->shcap) * sizeof(*v)))
			return NULL;
		v = calloc(cap, sizeof(*v));
		if (!v) {
			mem_give(bp, (cap - bp->shcap) * sizeof(*v));
			return NULL;
		}
		for (size_t j = 0; j < bp->shcap; j++)
			if (bp->sh[j])
				v[sh_slot(v, cap, bp->sh[j]->pid, bp->sh[j]->gen)] = bp->sh[j];
		free(bp->sh);
		bp->sh = v;
		bp->shcap = cap;
	}
	if ((bp->ptn + 1) * 2 >= bp->ptcap) {
		size_t cap = bp->ptcap ? bp->ptcap * 2 : 64;
		struct stream **v;

		if (!mem_take(bp, (cap - bp->ptcap) * sizeof(*v)))
			return NULL;
		v = calloc(cap, sizeof(*v));
		if (!v) {
			mem_give(bp, (cap - bp->ptcap) * sizeof(*v));
			return NULL;
		}
		for (size_t j = 0; j < bp->ptcap; j++)
			if (bp->pt[j])
				v[pt_slot(v, cap, bp->pt[j]->pid)] = bp->pt[j];
		free(bp->pt);
		bp->pt = v;
		bp->ptcap = cap;
	}
	if (bp->nall == bp->capall) {
		size_t cap = bp->capall ? bp->capall * 2 : 64;
		struct stream **v;

		if (!mem_take(bp, (cap - bp->capall) * sizeof(*v)))
			return NULL;
		v = realloc(bp->all, cap * sizeof(*v));
		if (!v) {
			mem_give(bp, (cap - bp->capall) * sizeof(*v));
			return NULL;
		}
		bp->all = v;
		bp->capall = cap;
	}
	if (!mem_take(bp, sizeof(*s)))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		mem_give(bp, sizeof(*s));
		return NULL;
	}
	s->pid = pid;
	s->gen = gen;
	bp->sh[sh_slot(bp->sh, bp->shcap, pid, gen)] = s;
	bp->shn++;
	{
		size_t k = pt_slot(bp->pt, bp->ptcap, pid);

		s->prev_pid = bp->pt[k];
		if (!bp->pt[k])
			bp->ptn++;
		bp->pt[k] = s;
	}
	bp->all[bp->nall++] = s;
	bp->q.streams++;
	return s;
}

/* The stream whose pid is pid and that exec'd most recently (a nested bash's former self). */
static struct stream *stream_execed(struct bashprof *bp, uint32_t pid, const struct stream * not )
{
	for (struct stream *x = pid_latest(bp, pid); x; x = x->prev_pid)
		if (x != not )
			return x->execed ? x : NULL;
	return NULL;
}

static struct level *level_push(struct bashprof *bp, struct stream *s, struct bash_node *ctx)
{
	struct level *l;

	if (s->nlv == s->caplv) {
		int cap = s->caplv ? s->caplv * 2 : 8;
		struct level *v;

		if (cap > BASHPROF_STREAM_LEVELS) {
			bp->q.limit_drops++;
			return NULL;
		}
		if (!mem_take(bp, (size_t)(cap - s->caplv) * sizeof(*v)))
			return NULL;
		v = realloc(s->lv, (size_t)cap * sizeof(*v));
		if (!v) {
			mem_give(bp, (size_t)(cap - s->caplv) * sizeof(*v));
			return NULL;
		}
		s->lv = v;
		s->caplv = cap;
	}
	l = &s->lv[s->nlv++];
	memset(l, 0, sizeof(*l));
	l->ctx = ctx;
	return l;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* A span of n: wall, own CPU, CPU of children reaped in it, trap cost charged in it. */
static void add_span(struct bash_node *n, uint64_t wall, uint64_t own_cpu, uint64_t child_cpu,
		     struct cost since, struct cost now)
{
	n->raw_wall_ns += wall;
	n->raw_cpu_ns += own_cpu + child_cpu;
	n->raw_own_cpu_ns += own_cpu;
	n->cor_wall_ns += sub0(now.w, since.w);
	n->cor_cpu_ns += sub0(now.c, since.c);
}

static void charge(struct stream *s, uint64_t c)
{
	s->ovh.w += c;
	s->ovh.c += c;
	s->own.w += c;
	s->own.c += c;
}

/* A start-up cost at the speed of the stream's last trap run. */
static uint64_t at_speed(const struct stream *s, uint64_t ns)
{
	return s->speed ? ns * s->speed / 1000 : ns;
}

/* The rest of the stream's last trap run: after its clock read, the tail flags say. */
static uint64_t trap_rest(const struct stream *s, uint8_t flags)
{
	uint64_t base = s->cal[TSA_COST_BASE].cpu_ns;
	uint64_t c = base - base * s->cal_pre / 1000;

	if (flags & TSA_TAIL_TTY)
		c += s->cal[TSA_COST_TTY].cpu_ns;
	if (flags & TSA_TAIL_JOBS)
		c += s->cal[TSA_COST_JOBS].cpu_ns;
	return at_speed(s, c);
}

/*
 * A trap run starts (TSA_RUN). The span it closes holds the start of this
 * run (up to the builtin's clock read) and the rest of the run before it,
 * whose tail the flags describe. When the run was timed (timed: its SPAN
 * record's time, the head of this run and the tail of the last), the
 * start-up costs are what it cost besides, and they are charged at the
 * speed the timed parts show: the same code, timed at start-up and now
 * (a shared machine changes speed twofold within a second).
 */
static void charge_trap(struct stream *s, uint8_t flags, uint32_t timed)
{
	uint64_t c;

	if (timed && timed <= 1000000000u && s->span_med && s->had_trap) {
		uint64_t then = s->span_med + (flags & TSA_TAIL_TTY ? s->span_tty : 0);
		uint64_t v = (uint64_t)timed * 1000 / then;

		s->speed = (uint32_t)(v < 250 ? 250 : v > 4000 ? 4000 : v);
	}
	c = at_speed(s, s->cal[TSA_COST_BASE].cpu_ns * s->cal_pre / 1000);
	if (s->had_trap)
		c += trap_rest(s, flags);
	s->had_trap = true;
	s->crossings++;
	charge(s, c);
}

/* The process exits or execs: its last span holds the rest of its last trap run. */
static void charge_last(struct stream *s, uint8_t flags)
{
	if (s->had_trap && !s->last_charged)
		charge(s, trap_rest(s, flags));
	s->last_charged = true;
}

static bool is_wait(const char *text)
{
	return !strncmp(text, "wait", 4) && (!text[4] || text[4] == ' ' || text[4] == '\t');
}

/*
 * A `wait` from t0 to t1 waited for the background children that ran then.
 * Each child's trap runs delayed its own end by the part of its trap cost
 * that fell in the wait (spread evenly over its life): without them it
 * would have ended that much earlier, and the wait would have ended when
 * the last of them did. Children that ran side by side delayed the wait
 * once, not once each (their sum could exceed the wait itself); where
 * they shared a CPU, the waits for it stretch the cost like any other
 * (bashprof__finish()). Never more than the sum: a wait that was held by
 * something else (a program run in the background) ends when it does.
 */
static void charge_wait(struct stream *s, uint64_t t0, uint64_t t1)
{
	uint64_t sum = 0, ends = t0, delay;

	for (uint32_t i = 0; i < s->npend; i++) {
		struct pending_child *e = &s->pend[i];
		uint64_t a = t0 > e->t0 ? t0 : e->t0, b = t1 < e->t1 ? t1 : e->t1, part;

		if (!e->w_left || b <= a)
			continue;
		part = (uint64_t)((double)e->w * (double)(b - a) / (double)(e->t1 - e->t0));
		if (part > e->w_left)
			part = e->w_left;
		e->w_left -= part;
		sum += part;
		if (b - part > ends)
			ends = b - part;
	}
	delay = t1 - ends;
	s->ovh.w += delay < sum ? delay : sum;
}

/*
 * A child's trap runs, as its parent measured them. A synchronous child
 * (subshell, command substitution, pipeline part, a nested bash run as a
 * command) ran while its parent waited in one command: the parent's spans
 * then hold the child's trap CPU (reaped with it) and, in wall time, the
 * trap cost of the slowest of the children it waited for together (the
 * parts of a pipeline run side by side). A background child is paid for
 * later: its CPU when the parent reaps it, its wall time only by a `wait`
 * that waited for it. Records of one socket arrive in the order they were
 * sent, and a child says it ended before its parent can reap it, so the
 * child is known here before any record of its parent that follows.
 */
static void give_to_parent(struct bashprof *bp, struct stream *s, uint64_t t_end)
{
	struct stream *p = s->parent;
	struct pending_child *e;

	if (s->charged || !p || p->ended)
		return;
	s->charged = true;
	if (!s->async) {
		p->ovh.c += s->ovh.c;
		if (s->ovh.w > p->ep_w)
			p->ep_w = s->ovh.w;
		return;
	}
	if (p->npend == p->cappend) {
		uint32_t cap = p->cappend ? p->cappend * 2 : 8;
		struct pending_child *v;

		if (!mem_take(bp, (cap - p->cappend) * sizeof(*v)))
			return;
		v = realloc(p->pend, cap * sizeof(*v));
		if (!v) {
			mem_give(bp, (cap - p->cappend) * sizeof(*v));
			return;
		}
		p->pend = v;
		p->cappend = cap;
	}
	e = &p->pend[p->npend++];
	e->t0 = s->t_start;
	e->t1 = t_end > s->t_start ? t_end : s->t_start;
	e->w = e->w_left = s->ovh.w;
	e->c = s->ovh.c;
	e->reaped = false;
}

/* Before a record of s: the synchronous children it waited for are over. */
static void settle_children(struct stream *s)
{
	s->ovh.w += s->ep_w;
	s->ep_w = 0;
}

/* s reaped children (its children's CPU grew) at t: those that had ended are paid for. */
static void charge_reaped(struct stream *s, uint64_t t)
{
	for (uint32_t i = 0; i < s->npend; i++) {
		struct pending_child *e = &s->pend[i];

		if (!e->reaped && e->t1 <= t) {
			s->ovh.c += e->c;
			e->reaped = true;
		}
	}
}

/* A command opened at t: children reaped and over before it are paid for in full. */
static void prune_children(struct stream *s, uint64_t t)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < s->npend; i++)
		if (!(s->pend[i].reaped && s->pend[i].t1 <= t))
			s->pend[k++] = s->pend[i];
	s->npend = k;
}

/* Close a level's open command at time t. */
static void close_cmd(struct stream *s, struct level *l, uint64_t t, uint64_t cpu)
{
	struct open_cmd *c = &l->cmd;

	if (!c->node)
		return;
	if (s->npend && is_wait(c->node->text))
		charge_wait(s, c->t0, t);
	/* The command's span holds the trap runs charged since it opened. */
	add_span(c->node, sub0(t, c->t0), sub0(cpu, c->c0), sub0(s->child_cpu, c->cc0), c->o0,
		 s->ovh);
	c->node = NULL;
}

static void open_cmd(struct stream *s, struct level *l, struct bash_node *n, uint64_t t,
		     uint64_t cpu)
{
	l->cmd.node = n;
	l->cmd.t0 = t;
	l->cmd.c0 = cpu;
	l->cmd.cc0 = s->child_cpu;
	l->cmd.o0 = s->ovh;
	if (n)
		n->count++;
}

static void pop_level(struct stream *s, uint64_t t, uint64_t cpu)
{
	struct level *l = &s->lv[s->nlv - 1];

	close_cmd(s, l, t, cpu);
	if (l->timed && l->ctx)
		add_span(l->ctx, sub0(t, l->t0), sub0(cpu, l->c0), sub0(s->child_cpu, l->cc0),
			 l->o0, s->ovh);
	s->nlv--;
}

static uint32_t id_slot(const struct stream *s, uint32_t id)
{
	uint32_t i = (uint32_t)mix(id) & (s->capids - 1);

	while (s->ids[i].id && s->ids[i].id != id)
		i = (i + 1) & (s->capids - 1);
	return i;
}

static const char *id_text(const struct stream *s, uint32_t id)
{
	if (id == 0 || !s->capids)
		return NULL;
	return s->ids[id_slot(s, id)].s;
}

/* A record named a text id the stream did not define: malformed, or dropped at a limit. */
static void id_missing(struct bashprof *bp, const struct stream *s)
{
	if (s->ids_dropped)
		bp->q.limit_drops++;
	else
		bp->q.bad_records++;
}

static enum bash_kind kind_from_env(uint32_t env, const char *text)
{
	if (text && !strncmp(text, "coproc", 6))
		return BK_COPROC;
	if (env & 0x40)
		return BK_COPROC;
	if (env & 0x20)
		return BK_PROCSUB;
	if (env & 0x04)
		return BK_COMSUB;
	if (env & 0x10)
		return BK_PIPE_PART;
	if (env & 0x01)
		return BK_BACKGROUND;
	if (env & 0x02)
		return BK_SUBSHELL;
	return BK_FORK;
}

/*
 * What a fork made of a child, from its subshell_environment: the bits it
 * inherited stay, but a pipeline part's forks are not parts of that
 * pipeline, nor a background job's forks background jobs (bash keeps
 * SUBSHELL_PIPE and SUBSHELL_ASYNC in its subshells). A substitution (or a
 * coproc) inside another keeps the outer one's bit too: the bit this fork
 * set says what it is (a $() inside a <() is a command substitution).
 */
static uint32_t own_env(uint32_t env, const struct stream *parent)
{
	uint32_t fresh = env & ~parent->subshell_env;

	env &= ~(parent->subshell_env & (0x10 | 0x01));
	if (fresh & (0x04 | 0x20 | 0x40))
		env &= ~(parent->subshell_env & (0x04 | 0x20 | 0x40));
	else if ((fresh & 0x80) && !(fresh & 0x02) && (env & 0x20))
		/*
		 * A process substitution has SUBSHELL_COMSUB set already, so
		 * a command substitution in it sets only SUBSHELL_RESETTRAP
		 * (a ( list ) sets it too, with SUBSHELL_PAREN).
		 */
		env = (env & ~(0x20 | 0x40)) | 0x04;
	return env;
}

/* Where a stream's top-level commands go; made when the first one comes. */
static struct bash_node *stream_base(struct bashprof *bp, struct stream *s)
{
	if (s->base)
		return s->base;
	if (s->anchor && s->anchor->orphan && s->parent) {
		/* ( list ), { list; } &, coproc: the forked construct is the node. */
		s->base = s->anchor;
	} else if (s->anchor) {
		enum bash_kind k = s->parent && !s->nested
				       ? kind_from_env(own_env(s->subshell_env, s->parent), NULL)
				       : BK_BASH;

		s->base = child_of(bp, s->anchor, (uint8_t)k, s->anchor->line,
				   strtab_intern(bp, &bp->strs, "", 0), "");
		if (s->base)
			s->base->count++;
	} else {
		s->base = bp->nodes[0];
	}
	if (s->nlv)
		s->lv[0].ctx = s->base;
	return s->base;
}

static struct level *top_level(struct bashprof *bp, struct stream *s)
{
	if (!s->nlv && !level_push(bp, s, NULL))
		return NULL;
	if (!s->lv[0].ctx)
		s->lv[0].ctx = stream_base(bp, s);
	return &s->lv[s->nlv - 1];
}

static void stream_time(struct stream *s, uint64_t t, uint64_t cpu)
{
	if (t > s->last_t)
		s->last_t = t;
	if (cpu > s->last_cpu)
		s->last_cpu = cpu;
}

static void do_hello(struct bashprof *bp, const struct tsa_chunk *c, const struct tsa_hello *h)
{
	struct stream *s = stream_find(bp, c->pid, c->gen);
	struct stream *parent = NULL;

	if (s || h->pid != c->pid) {
		bp->q.bad_records++;
		return;
	}
	s = stream_add(bp, c->pid, c->gen);
	if (!s)
		return;
	s->ppid = h->ppid;
	s->t_start = s->last_t = h->t;
	s->cpu_start = s->last_cpu = h->cpu;
	s->child_cpu = s->child_cpu0 = h->child_cpu;
	s->subshell_env = h->subshell_env;
	s->fork_index = h->fork_index;
	s->root = (h->hflags & TSA_HF_ROOT) != 0;
	s->fallback = (h->hflags & TSA_HF_FALLBACK) != 0;
	if (h->hflags & TSA_HF_CALIBRATED) {
		memcpy(s->cal, h->cal, sizeof(s->cal));
		if (s->root || !bp->q.calibrated) {
			for (int k = 0; k < TSA_COST_NR; k++) {
				bp->q.cal[k].wall_ns = h->cal[k].wall_ns;
				bp->q.cal[k].cpu_ns = h->cal[k].cpu_ns;
			}
			bp->q.calibrated = true;
			bp->q.cal_pre_permille = h->cal_pre_permille;
			bp->q.cal_cached = (h->hflags & TSA_HF_CAL_CACHED) != 0;
			bp->q.cal_spent_cpu_ns = h->cal_spent_cpu_ns;
		}
	}
	/* Unknown (not measured, or out of range): half before the clock read. */
	s->cal_pre = h->cal_pre_permille && h->cal_pre_permille < 1000 ? h->cal_pre_permille : 500;
	s->span_med = h->span_med_ns;
	s->span_tty = h->span_tty_ns;
	if (s->fallback)
		bp->q.fallback = true;
	if (h->h.arg == TSA_HELLO_FORK) {
		parent = stream_find(bp, h->ppid, h->parent_gen);
		if (parent) {
			struct fork_point *f = NULL;
			uint32_t lo = 0, hi = parent->nforks;

			while (lo < hi) {
				uint32_t mid = (lo + hi) / 2;

				if (parent->forks[mid].index < h->fork_index)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < parent->nforks && parent->forks[lo].index == h->fork_index)
				f = &parent->forks[lo];
			s->parent = parent;
			/* It runs as fast as its parent did when it forked, until it shows otherwise. */
			s->speed = parent->speed;
			/* Background relative to its parent (a pipeline in a background job is not). */
			s->async =
			    (h->subshell_env & ~parent->subshell_env & (0x01 | 0x20 | 0x40)) != 0;
			if (f) {
				uint32_t env = own_env(h->subshell_env, parent);

				f->has_stream = true;
				s->anchor = f->node;
				if (f->node && f->orphan && f->node->kind == BK_SUBSHELL)
					f->node->kind = (uint8_t)kind_from_env(env, f->node->text);
				else if (f->node && f->node->kind == BK_COMMAND && (env & 0x01) &&
					 !(env & 0x24))
					f->node->kind = BK_BACKGROUND;
				else if (f->node && (env & 0x10) && !(env & 0x24))
					f->node->pipe_part = true;
			}
		}
	} else {
		/* A new bash image: the script, or a nested bash that exec'd from a fork. */
		struct stream *prev = stream_execed(bp, c->pid, s);
		struct stream *prog = stream_execed(bp, h->ppid, s);

		/*
		 * A bash image that ran commands before its exec (`exec bash ...`,
		 * a subshell's last `exec bash`): below the command that exec'd,
		 * which its open commands pay for as they wait. A fork that exec'd
		 * bash at once is placed from the process tree (limbo, below), as
		 * any nested bash.
		 */
		if (prev && prev->exec_node && (prev->crossings || prev->root)) {
			s->parent = prev->parent;
			s->async = prev->async;
			s->anchor = prev->exec_node;
			s->nested = true;
			s->image_of = prev;
			prev->image = s;
			prev->image_t = h->t;
		} else if (prog && prog->exec_node) {
			/*
			 * Run by a program a bash of the tree forked and exec'd
			 * (timeout, xargs, env, nohup): below the command that ran
			 * it, paid for by that bash as it waited for the program.
			 */
			s->parent = prog->parent;
			s->async = prog->async;
			s->anchor = prog->exec_node;
			s->nested = true;
		} else if (!s->root && !s->fallback) {
			/* Further away (make -> sh -> bash): placed at the end, from the process tree. */
			if (!bp->limbo)
				bp->limbo = node_new(bp, NULL, BK_BASH, 0, "", "");
			s->base = bp->limbo ? node_new(bp, bp->limbo, BK_BASH, 0, "", "") : NULL;
			if (s->base)
				s->base->count++;
			s->unplaced = s->base != NULL;
			s->anchor = bp->limbo;
		} else if (!s->root) {
			bp->q.orphan_streams++;
			s->anchor = bp->nodes[0];
		}
	}
	if (!s->anchor && !s->root && !parent)
		s->anchor = NULL;
}

static void do_text(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	size_t n = r->len - sizeof(struct tsa_text);
	const char *p = (const char *)r + sizeof(struct tsa_text);
	const char *text;
	uint32_t slot, oc;

	if (r->arg == 0 || r->arg >= TSA_WIRE_MAX_IDS) {
		bp->q.bad_records++;
		return;
	}
	/* The writer pads with NULs to 8 bytes. */
	while (n && p[n - 1] == '\0')
		n--;
	if (n > TSA_WIRE_TEXT_MAX) {
		bp->q.bad_records++;
		return;
	}
	slot = s->capids ? id_slot(s, r->arg) : 0;
	if (!s->capids || !s->ids[slot].id) {
		/* A new id: the table grows with the ids defined, at load 1/2. */
		if (s->nids >= BASHPROF_STREAM_IDS) {
			bp->q.limit_drops++;
			s->ids_dropped = true;
			return;
		}
		if ((s->nids + 1) * 2 > s->capids) {
			uint32_t cap = s->capids ? s->capids * 2 : 16;
			struct id_slot *v, *old = s->ids;

			if (!mem_take(bp, (cap - s->capids) * sizeof(*v))) {
				s->ids_dropped = true;
				return;
			}
			v = calloc(cap, sizeof(*v));
			if (!v) {
				mem_give(bp, (cap - s->capids) * sizeof(*v));
				s->ids_dropped = true;
				return;
			}
			oc = s->capids;
			s->ids = v;
			s->capids = cap;
			for (uint32_t j = 0; j < oc; j++)
				if (old[j].id)
					v[id_slot(s, old[j].id)] = old[j];
			free(old);
			slot = id_slot(s, r->arg);
		}
		text = strtab_intern(bp, &bp->strs, p, n);
		if (!text) {
			s->ids_dropped = true;
			return;
		}
		s->ids[slot].id = r->arg;
		s->nids++;
	} else {
		text = strtab_intern(bp, &bp->strs, p, n);
		if (!text)
			s->ids_dropped = true;
	}
	s->ids[slot].s = text;
}

static void do_cmd(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	const struct tsa_cmd *c = (const struct tsa_cmd *)r;
	const char *text = id_text(s, c->text);
	struct level *l;
	struct bash_node *n;

	if (!text) {
		id_missing(bp, s);
		return;
	}
	if (r->flags & TSA_CF_CHILD_CPU && r->len < sizeof(struct tsa_cmd_cc)) {
		bp->q.bad_records++;
		return;
	}
	if (r->flags & TSA_CF_CHILD_CPU) {
		uint64_t cc = ((const struct tsa_cmd_cc *)r)->child_cpu;

		if (cc >= s->child_cpu)
			s->child_cpu = cc;
	}
	l = top_level(bp, s);
	if (!l)
		return;
	if (r->flags & TSA_CF_CHILD_CPU && s->npend)
		charge_reaped(s, c->t);
	close_cmd(s, l, c->t, c->cpu);
	stream_time(s, c->t, c->cpu);
	if (r->flags & TSA_CF_IN_TRAP)
		text = strtab_intern(bp, &bp->strs, "", 0);
	n = l->ctx ? child_of(bp, l->ctx, BK_COMMAND, r->arg, text, "") : NULL;
	open_cmd(s, l, n, c->t, c->cpu);
	if (s->npend)
		prune_children(s, c->t);
}

/*
 * A PUSH or POP that says children were reaped since the last record: their
 * CPU is the command's that ends now (it goes in before the frame change
 * closes it). The child_cpu is the record's last field; cc_len its size.
 * Returns -1 for a malformed record.
 */
static int frame_child_cpu(struct bashprof *bp, struct stream *s, const struct tsa_rec *r,
			   size_t cc_len, uint64_t t)
{
	uint64_t cc;

	if (!(r->flags & TSA_FR_CHILD_CPU))
		return 0;
	if (r->len < cc_len) {
		bp->q.bad_records++;
		return -1;
	}
	memcpy(&cc, (const char *)r + cc_len - sizeof(cc), sizeof(cc));
	if (cc > s->child_cpu)
		s->child_cpu = cc;
	if (s->npend)
		charge_reaped(s, t);
	return 0;
}

static void do_push(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	const struct tsa_push *p = (const struct tsa_push *)r;
	const char *name = id_text(s, p->name), *file = id_text(s, p->file);
	struct level *l = top_level(bp, s), *nl;
	struct bash_node *ctx = NULL;

	if (!l)
		return;
	if (!name)
		name = strtab_intern(bp, &bp->strs, "", 0);
	if (!file)
		file = strtab_intern(bp, &bp->strs, "", 0);
	if (frame_child_cpu(bp, s, r, sizeof(struct tsa_push_cc), p->t))
		return;
	stream_time(s, p->t, p->cpu);
	switch (r->flags & TSA_FR_KIND_MASK) {
	case TSA_FR_FUNC:
	case TSA_FR_SOURCE:
	case TSA_FR_EVAL:
		/* The frame hangs below the command that called, sourced or eval'd. */
		/* A forked child that starts in a function (f &): below its own node. */
		ctx = l->cmd.node ? l->cmd.node : (s->nlv == 1 ? l->ctx : NULL);
		if (ctx && ctx == l->cmd.node) {
			uint8_t k = r->flags & TSA_FR_KIND_MASK;

			if (ctx->kind == BK_COMMAND)
				ctx->kind = k == TSA_FR_FUNC	 ? BK_FUNCTION
					    : k == TSA_FR_SOURCE ? BK_SOURCE
								 : BK_EVAL;
			if (k != TSA_FR_EVAL && !ctx->file[0])
				ctx->file = file;
		}
		nl = level_push(bp, s, ctx);
		break;
	case TSA_FR_TRAP:
		/* A trap interrupts the current command and runs as a node of its own. */
		close_cmd(s, l, p->t, p->cpu);
		ctx = l->ctx ? child_of(bp, l->ctx, BK_TRAP, r->arg, name, file) : NULL;
		if (ctx)
			ctx->count++;
		nl = level_push(bp, s, ctx);
		if (nl) {
			nl->timed = true;
			nl->t0 = p->t;
			nl->c0 = p->cpu;
			nl->cc0 = s->child_cpu;
			nl->o0 = s->ovh;
		}
		break;
	default:
		bp->q.bad_records++;
		return;
	}
}

static void do_pop(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	const struct tsa_pop *p = (const struct tsa_pop *)r;
	uint32_t left = r->arg + 1; /* levels: the top level is not a frame */

	if (frame_child_cpu(bp, s, r, sizeof(struct tsa_pop_cc), p->t))
		return;
	stream_time(s, p->t, p->cpu);
	if (left >= (uint32_t)s->nlv) {
		bp->q.bad_records++;
		return;
	}
	while ((uint32_t)s->nlv > left)
		pop_level(s, p->t, p->cpu);
}

static void do_fork(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	const struct tsa_fork *f = (const struct tsa_fork *)r;
	struct level *l = top_level(bp, s);
	struct fork_point *fp;
	struct bash_node *n;

	if (!l)
		return;
	if (s->nforks && f->index <= s->forks[s->nforks - 1].index) {
		bp->q.bad_records++;
		return;
	}
	stream_time(s, f->t, f->cpu);
	if (r->flags & TSA_FF_CHILD_CPU) {
		uint64_t cc;

		if (r->len < sizeof(struct tsa_fork_cc)) {
			bp->q.bad_records++;
			return;
		}
		cc = ((const struct tsa_fork_cc *)r)->child_cpu;
		if (cc > s->child_cpu)
			s->child_cpu = cc;
		if (s->npend)
			charge_reaped(s, f->t);
	}
	if (r->flags & TSA_FF_ORPHAN) {
		const char *text = id_text(s, f->text);

		if (!text) {
			id_missing(bp, s);
			return;
		}
		/* A construct no DEBUG trap announced: it starts now. */
		close_cmd(s, l, f->t, f->cpu);
		n = l->ctx ? child_of(bp, l->ctx, BK_SUBSHELL, r->arg, text, "") : NULL;
		if (n)
			n->orphan = true;
		open_cmd(s, l, n, f->t, f->cpu);
	}
	n = l->cmd.node;
	/*
	 * The k-th part of a pipeline (k >= 1) follows the part before it in
	 * this stream's forks: the parts are launched one after another, and
	 * the first one (k = 0) heads the pipeline. A node keeps the first
	 * pipeline it was seen in (a loop's iterations give the same nodes).
	 */
	if (f->pipe >= 1 && n && s->nforks && s->forks[s->nforks - 1].pipe == f->pipe - 1) {
		struct bash_node *prev = s->forks[s->nforks - 1].node;
		struct bash_node *head = prev && f->pipe > 1 ? prev->pipe_head : prev;

		/*
		 * A part with the text of an earlier part (sleep 1 | sleep 1)
		 * found that part's node: it has a node of its own, keyed by its
		 * place in the pipeline. (A command of its own: a record opened
		 * it since the fork before.)
		 */
		if (head && l->cmd.node == n && !(r->flags & TSA_FF_ORPHAN) &&
		    s->forks[s->nforks - 1].cmd_t0 != l->cmd.t0 &&
		    (n == head || n->pipe_head == head) && n->pipe_pos != f->pipe && n->parent) {
			struct bash_node *own = child_of(
			    bp, n->parent, (uint8_t)(BK_NR + (f->pipe < 100 ? f->pipe : 100)),
			    n->line, n->text, n->file);

			if (own && own != n) {
				own->kind = n->kind;
				n->count--;
				own->count++;
				l->cmd.node = own;
				n = own;
			}
		}
		if (head && head != n && head->parent == n->parent) {
			if (!head->pipe_head)
				head->pipe_head = head;
			if (!n->pipe_head) {
				n->pipe_head = head;
				n->pipe_pos = f->pipe;
			}
			head->pipe_part = true;
			n->pipe_part = true;
		}
	}
	if (s->nforks == s->capforks) {
		uint32_t cap = s->capforks ? s->capforks * 2 : 16;
		struct fork_point *v;

		if (!mem_take(bp, (cap - s->capforks) * sizeof(*v)))
			return;
		v = realloc(s->forks, cap * sizeof(*v));
		if (!v) {
			mem_give(bp, (cap - s->capforks) * sizeof(*v));
			return;
		}
		s->forks = v;
		s->capforks = cap;
	}
	fp = &s->forks[s->nforks++];
	memset(fp, 0, sizeof(*fp));
	fp->t = f->t;
	fp->node = n;
	fp->cmd_t0 = l->cmd.t0;
	fp->index = f->index;
	fp->pipe = f->pipe;
	fp->orphan = (r->flags & TSA_FF_ORPHAN) != 0;
}

/* The process is over as this stream: close everything at t. */
static void stream_close(struct bashprof *bp, struct stream *s, uint64_t t, uint64_t cpu,
			 uint8_t tail)
{
	charge_last(s, tail);
	settle_children(s);
	while (s->nlv > 0)
		pop_level(s, t, cpu);
	s->t_end = t;
	s->last_cpu = cpu > s->last_cpu ? cpu : s->last_cpu;
	s->ended = true;
	/* A forked child's own span goes to the node made for it. */
	if (s->base && s->base != bp->nodes[0] && s->base != s->anchor)
		add_span(s->base, sub0(t, s->t_start), sub0(s->last_cpu, s->cpu_start),
			 sub0(s->child_cpu, s->child_cpu0), (struct cost){0, 0}, s->ovh);
	give_to_parent(bp, s, t);
	/* The image it exec'd from is the same process: its open commands waited. */
	if (s->image_of && !s->image_of->ended) {
		s->image_of->ovh.w += s->ovh.w;
		s->image_of->ovh.c += s->ovh.c;
	}
	stream_release(bp, s);
}

/* A bash process that ran commands of its own (not a fork that exec'd a program) lost them. */
static void count_lost(struct bashprof *bp, const struct stream *s, uint8_t flags)
{
	if (!s->crossings && !s->root)
		return;
	if (flags & TSA_EF_DEEP)
		bp->q.deep_streams++;
	if (flags & TSA_EF_TRAP_LOST)
		bp->q.trap_lost_streams++;
	else if (flags & TSA_EF_NO_FUNCTRACE)
		bp->q.functrace_off_streams++;
}

static void do_end(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	const struct tsa_end *e = (const struct tsa_end *)r;

	if (e->child_cpu > s->child_cpu)
		s->child_cpu = e->child_cpu;
	count_lost(bp, s, r->flags);
	/* Children reaped since the last record: their trap CPU goes with their CPU. */
	if (s->npend)
		charge_reaped(s, e->t);
	stream_time(s, e->t, e->cpu);
	stream_close(bp, s, e->t, e->cpu, r->flags);
}

/*
 * Trap time the builtin timed: the head of the run this record begins and
 * the tail of the one before, charged like the start-up estimate (to the
 * spans open now). A second of trap in one record is not a trap run.
 */
static void do_span(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	if (r->arg > 1000000000u) {
		bp->q.bad_records++;
		return;
	}
	if (r->flags & TSA_RUN)
		bp->q.timed_runs++;
	if (r->flags & TSA_SF_GUESSED)
		bp->q.guessed_parts++;
	if (r->flags & TSA_SF_STALL)
		bp->q.stall_ns += r->arg;
	else
		bp->q.timed_ns += r->arg;
	charge(s, r->arg);
}

static void do_exec(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	const struct tsa_exec *x = (const struct tsa_exec *)r;

	stream_time(s, x->t, x->cpu);
	count_lost(bp, s, r->flags);
	/* An exec that fails returns: records may follow. Close on the next HELLO or at the end. */
	s->execed = true;
	/* What it cost as bash is over: the parent waits for the program now. */
	charge_last(s, r->flags);
	settle_children(s);
	give_to_parent(bp, s, x->t);
	/*
	 * What runs after the exec is that command's process (`( cmd )`, `exec
	 * cmd`); a fork that execs at once (an external command) is the command
	 * that forked it.
	 */
	if (s->nlv && s->lv[s->nlv - 1].cmd.node)
		s->exec_node = s->lv[s->nlv - 1].cmd.node;
	else if (s->parent && s->anchor && !s->base)
		s->exec_node = s->anchor;
}

static const size_t min_len[TSA_R_NR] = {
    [TSA_R_HELLO] = sizeof(struct tsa_hello),	 [TSA_R_TEXT] = sizeof(struct tsa_text),
    [TSA_R_TEXT_RESET] = sizeof(struct tsa_rec), [TSA_R_CMD] = sizeof(struct tsa_cmd),
    [TSA_R_PUSH] = sizeof(struct tsa_push),	 [TSA_R_POP] = sizeof(struct tsa_pop),
    [TSA_R_FORK] = sizeof(struct tsa_fork),	 [TSA_R_EXEC] = sizeof(struct tsa_exec),
    [TSA_R_END] = sizeof(struct tsa_end),	 [TSA_R_SPAN] = sizeof(struct tsa_rec),
};

void bashprof__feed(struct bashprof *bp, const void *data, size_t len)
{
	struct tsa_chunk c;
	const unsigned char *p = data;
	struct stream *s;
	size_t off;
	/* Records are read from an aligned copy: the input buffer may be anywhere. */
	uint64_t rec[(TSA_WIRE_MAX_CHUNK + 7) / 8];

	bp->q.datagrams++;
	if (bp->finished || len < sizeof(c) || len > TSA_WIRE_MAX_CHUNK) {
		bp->q.bad_datagrams++;
		return;
	}
	memcpy(&c, p, sizeof(c));
	if (c.magic != TSA_WIRE_MAGIC || c.version != TSA_WIRE_VERSION || c.hdr_len != sizeof(c) ||
	    c.nrec > len / sizeof(struct tsa_rec)) {
		bp->q.bad_datagrams++;
		return;
	}
	if (c.pid == 0)
		return; /* sent while the builtin measured its cost (tsa_wire.h) */
	s = stream_find(bp, c.pid, c.gen);
	if (s) {
		if (c.seq > s->next_seq)
			bp->q.lost_records += c.seq - s->next_seq;
		else if (c.seq < s->next_seq) {
			bp->q.bad_datagrams++; /* replayed or reordered */
			return;
		}
		s->next_seq = c.seq + c.nrec;
	} else if (c.seq != 0) {
		bp->q.unknown_streams++;
		bp->q.lost_records += c.nrec;
		return;
	}
	off = sizeof(c);
	for (uint32_t i = 0; i < c.nrec; i++) {
		struct tsa_rec h;

		if (len - off < sizeof(h)) {
			bp->q.bad_records += c.nrec - i;
			break;
		}
		memcpy(&h, p + off, sizeof(h));
		if (h.len < sizeof(h) || h.len % 8 || h.len > len - off) {
			bp->q.bad_records += c.nrec - i;
			break;
		}
		memcpy(rec, p + off, h.len);
		off += h.len;
		bp->q.records++;
		if (h.type == 0 || h.type >= TSA_R_NR || h.len < min_len[h.type]) {
			bp->q.bad_records++;
			continue;
		}
		if (h.type == TSA_R_HELLO) {
			if (s || i != 0) {
				bp->q.bad_records++;
				continue;
			}
			do_hello(bp, &c, (const struct tsa_hello *)rec);
			s = stream_find(bp, c.pid, c.gen);
			if (s)
				s->next_seq = c.nrec;
			continue;
		}
		if (!s) {
			bp->q.unknown_streams++;
			bp->q.lost_records += c.nrec - i;
			break;
		}
		if (s->ended) {
			bp->q.bad_records++;
			continue;
		}
		if (h.type != TSA_R_TEXT && h.type != TSA_R_TEXT_RESET)
			settle_children(s);
		/* A trap run starts: its cost goes to the spans open now, before any closes. */
		if (h.flags & TSA_RUN && h.type != TSA_R_END && h.type != TSA_R_EXEC)
			charge_trap(s, h.flags, h.type == TSA_R_SPAN ? h.arg : 0);
		switch (h.type) {
		case TSA_R_TEXT:
			do_text(bp, s, (const struct tsa_rec *)rec);
			break;
		case TSA_R_TEXT_RESET:
			if (s->ids)
				memset(s->ids, 0, s->capids * sizeof(*s->ids));
			s->nids = 0;
			s->ids_dropped = false;
			break;
		case TSA_R_CMD:
			do_cmd(bp, s, (const struct tsa_rec *)rec);
			break;
		case TSA_R_PUSH:
			do_push(bp, s, (const struct tsa_rec *)rec);
			break;
		case TSA_R_POP:
			do_pop(bp, s, (const struct tsa_rec *)rec);
			break;
		case TSA_R_FORK:
			do_fork(bp, s, (const struct tsa_rec *)rec);
			break;
		case TSA_R_EXEC:
			do_exec(bp, s, (const struct tsa_rec *)rec);
			break;
		case TSA_R_END:
			do_end(bp, s, (const struct tsa_rec *)rec);
			break;
		case TSA_R_SPAN:
			do_span(bp, s, (const struct tsa_rec *)rec);
			break;
		}
	}
}

static bool is_source_text(const char *t)
{
	return t && (!strncmp(t, ". ", 2) || !strncmp(t, "source ", 7));
}

void bashprof__feed_fallback(struct bashprof *bp, FILE *f, int64_t real_minus_mono_ns)
{
	char line[4096];
	const char *empty = strtab_intern(bp, &bp->strs, "", 0);

	while (fgets(line, sizeof(line), f)) {
		unsigned pid, lineno, depth;
		unsigned long long sec, usec;
		int used = 0;
		struct stream *s;
		struct level *l;
		uint64_t t;
		char *text;
		const char *itext;
		size_t n;

		bp->q.records++;
		if (sscanf(line, "%u %llu.%llu %u %u %n", &pid, &sec, &usec, &lineno, &depth,
			   &used) < 5 ||
		    !used || depth > 1000 || usec >= 1000000) {
			bp->q.bad_records++;
			continue;
		}
		t = sec * 1000000000ull + usec * 1000ull;
		t = (int64_t)t - real_minus_mono_ns > 0
			? (uint64_t)((int64_t)t - real_minus_mono_ns)
			: 0;
		text = line + used;
		n = strcspn(text, "\n");
		if (n > TSA_WIRE_TEXT_MAX)
			n = TSA_WIRE_TEXT_MAX;
		s = stream_find(bp, pid, UINT32_MAX);
		if (!s) {
			bool first = bp->nall == 0;

			s = stream_add(bp, pid, UINT32_MAX);
			if (!s)
				continue; /* past the memory limit: counted */
			s->fallback = true;
			s->root = first;
			s->t_start = s->last_t = t;
			s->anchor = first ? NULL : bp->nodes[0];
			if (!first)
				bp->q.orphan_streams++;
			bp->q.fallback = true;
		}
		if (s->ended)
			continue;
		l = top_level(bp, s);
		if (!l)
			continue;
		/*
		 * Depth counts the functions and sourced files running: a deeper
		 * line is the first of one the last command called, which
		 * becomes a function (or a source: `.` and `source` are builtins
		 * the trap cannot tell from a function otherwise).
		 */
		if (depth > (uint32_t)(s->nlv - 1)) {
			struct bash_node *ctx = l->cmd.node;
			/* bash runs the trap at a function's entry, for the call; not at a source's. */
			bool entry = ctx && ctx->text && strlen(ctx->text) == n &&
				     !strncmp(ctx->text, text, n);

			while ((uint32_t)(s->nlv - 1) < depth) {
				if (ctx && ctx->kind == BK_COMMAND)
					ctx->kind =
					    is_source_text(ctx->text) ? BK_SOURCE : BK_FUNCTION;
				if (!level_push(bp, s, ctx))
					break; /* past a limit (counted): at the deepest level kept */
				ctx = NULL;
			}
			if (entry) {
				charge_trap(s, 0, 0); /* no measured cost: counted only */
				stream_time(s, t, 0);
				continue;
			}
		}
		while ((uint32_t)(s->nlv - 1) > depth && s->nlv > 1)
			pop_level(s, t, 0);
		l = &s->lv[s->nlv - 1];
		charge_trap(s, 0, 0);
		close_cmd(s, l, t, 0);
		stream_time(s, t, 0);
		itext = strtab_intern(bp, &bp->strs, text, n);
		open_cmd(s, l,
			 l->ctx && itext ? child_of(bp, l->ctx, BK_COMMAND, lineno, itext, empty)
					 : NULL,
			 t, 0);
	}
}

/* Attach processes from the eBPF tree to the fork points of the streams. */
static struct bash_procs *procs_slot(struct bash_node *n, const char *comm)
{
	for (uint32_t i = 0; i < n->nprocs; i++)
		if (!strncmp(n->procs[i].comm, comm, sizeof(n->procs[i].comm)))
			return &n->procs[i];
	{
		struct bash_procs *v = realloc(n->procs, (n->nprocs + 1) * sizeof(*v));

		if (!v)
			return NULL;
		n->procs = v;
		memset(&v[n->nprocs], 0, sizeof(*v));
		snprintf(v[n->nprocs].comm, sizeof(v[0].comm), "%s", comm);
		return &v[n->nprocs++];
	}
}

static int cmp_proc_start(const void *a, const void *b)
{
	const struct proc_acct *x = *(const struct proc_acct *const *)a;
	const struct proc_acct *y = *(const struct proc_acct *const *)b;

	if (x->ppid != y->ppid)
		return x->ppid < y->ppid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The live stream of pid at time t (relative to origin): the last one that began before t. */
static struct stream *stream_at(struct bashprof *bp, uint32_t pid, uint64_t t)
{
	struct stream *best = NULL;

	/* Newest first: of two that began at once, the later one. */
	for (struct stream *s = pid_latest(bp, pid); s; s = s->prev_pid)
		if (s->t_start <= t && (!best || s->t_start > best->t_start))
			best = s;
	return best;
}

static int cmp_proc_pid(const void *a, const void *b);
static const struct proc_acct *proc_at(const struct proc_acct **v, size_t n, uint32_t pid,
				       int64_t at);

/*
 * The on-CPU time of each process (by index in r->procs) and of all its
 * descendants, from the parent each had when it was forked. NULL when
 * out of memory.
 */
static uint64_t *tree_cpu(const struct run *r, const struct proc_acct **by_start)
{
	size_t n = r->nprocs;
	uint64_t *t = calloc(n, sizeof(*t));
	const struct proc_acct **by_pid = malloc(n * sizeof(*by_pid));

	if (!t || !by_pid) {
		free(t);
		free(by_pid);
		return NULL;
	}
	memcpy(by_pid, by_start, n * sizeof(*by_pid));
	qsort(by_pid, n, sizeof(*by_pid), cmp_proc_pid);
	/* Children start after their parents: the latest first hands its sum up. */
	for (size_t i = n; i-- > 0;) {
		const struct proc_acct *p = by_start[i], *up;
		size_t k = (size_t)(p - r->procs);

		t[k] += p->state_ns[TSA_ST_ONCPU];
		up = p->ppid ? proc_at(by_pid, n, p->ppid, p->start_ns) : NULL;
		if (up && up != p && up->start_ns <= p->start_ns)
			t[up - r->procs] += t[k];
	}
	free(by_pid);
	return t;
}

static void attach_processes(struct bashprof *bp, const struct run *r, uint64_t origin)
{
	const struct proc_acct **v;
	size_t n = r->nprocs;
	uint64_t *tree;

	if (!n)
		return;
	v = malloc(n * sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = &r->procs[i];
	qsort(v, n, sizeof(*v), cmp_proc_start);
	tree = tree_cpu(r, v);
	for (size_t i = 0; i < n; i++) {
		const struct proc_acct *p = v[i];
		uint64_t start = origin + (uint64_t)(p->start_ns > 0 ? p->start_ns : 0);
		struct stream *s = stream_at(bp, p->ppid, start);
		const struct stream *last = NULL;

		/*
		 * A bash that said nothing (posix mode, BASH_ENV cleared): no stream
		 * of its pid, or the last one exec'd (into this bash) and no image
		 * of bash followed. Its commands are missing.
		 */
		last = pid_latest(bp, p->pid);
		if (!strncmp(p->comm, "bash", sizeof(p->comm)) && (!last || last->execed))
			bp->q.silent_bash++;
		struct fork_point *f = NULL;
		struct bash_node *node;
		struct bash_procs *slot;
		bool with_bash;

		node = NULL;
		with_bash = false;
		/* A bash process that exec'd a program in place: that command's process. */
		for (struct stream *x = pid_latest(bp, p->pid); x; x = x->prev_pid)
			if (x->exec_node) {
				node = live(x->exec_node);
				with_bash = x->crossings > 1 || x->root;
				break;
			}
		if (node)
			goto attach;
		if (!s || !s->nforks) {
			bp->q.unattached_processes++;
			continue;
		}
		/* The fork that made it: the last one before it started. */
		for (uint32_t k = s->nforks; k-- > 0;)
			if (s->forks[k].t <= start) {
				f = &s->forks[k];
				break;
			}
		if (!f || !f->node) {
			bp->q.unattached_processes++;
			continue;
		}
		node = live(f->node);
	attach:
		slot = procs_slot(node, p->comm);
		if (!slot)
			continue;
		if (!slot->count)
			slot->first_pid = p->pid;
		slot->count++;
		slot->with_bash += with_bash;
		/* In unsigned arithmetic: the difference of any two times is defined. */
		slot->wall_ns +=
		    p->end_ns > p->start_ns ? (uint64_t)p->end_ns - (uint64_t)p->start_ns : 0;
		for (int st = 0; st < 5 && st < TSA_ST_NR; st++)
			slot->state_ns[st] += p->state_ns[st];
		slot->unmeasured |= p->unmeasured;
		node->tree_cpu_ns += tree ? tree[p - r->procs] : p->state_ns[TSA_ST_ONCPU];
		bp->q.attached_processes++;
	}
	free(tree);
	free(v);
}

/*
 * Nested bash processes that a program ran below another program (make ->
 * sh -> bash) began in limbo; the process tree now says where they go: up
 * their parents to a bash of the tree, and there the command that started
 * the first of them (a fork child's exec, or the last fork before it). The
 * nested bash goes below that command (merged with others there: a loop
 * that runs make collapses), and that command and those above it pay for
 * its trap runs, as they waited for it (up to a background job, which its
 * parent did not wait for). What cannot be placed goes below the script.
 */
static struct bash_node *find_child(struct bash_node *parent, uint8_t kind, uint32_t line,
				    const char *text)
{
	for (struct bash_node *c = parent->child; c; c = c->next)
		if (!c->dead && c->key_kind == kind && c->line == line && c->text == text)
			return c;
	return NULL;
}

static void unlink_child(struct bash_node *n)
{
	struct bash_node *p = n->parent, *prev = NULL;

	if (!p)
		return;
	for (struct bash_node *c = p->child; c; prev = c, c = c->next) {
		if (c != n)
			continue;
		if (prev)
			prev->next = c->next;
		else
			p->child = c->next;
		if (p->last_child == c)
			p->last_child = prev;
		break;
	}
	n->next = NULL;
	n->parent = NULL;
}

static void link_child(struct bash_node *parent, struct bash_node *n)
{
	n->parent = parent;
	n->next = NULL;
	if (parent->last_child)
		parent->last_child->next = n;
	else
		parent->child = n;
	parent->last_child = n;
}

/* src's figures and children into dst, which has the same key; src is then dead. */
static void merge_node(struct bash_node *dst, struct bash_node *src)
{
	struct bash_node *c = src->child, *next;

	dst->count += src->count;
	dst->raw_wall_ns += src->raw_wall_ns;
	dst->raw_cpu_ns += src->raw_cpu_ns;
	dst->raw_own_cpu_ns += src->raw_own_cpu_ns;
	dst->cor_wall_ns += src->cor_wall_ns;
	dst->cor_cpu_ns += src->cor_cpu_ns;
	dst->pipe_part |= src->pipe_part;
	if (!dst->pipe_head)
		dst->pipe_head = src->pipe_head;
	for (; c; c = next) {
		struct bash_node *same = find_child(dst, c->key_kind, c->line, c->text);

		next = c->next;
		if (same) {
			merge_node(same, c);
		} else {
			c->next = NULL;
			link_child(dst, c);
		}
	}
	src->child = src->last_child = NULL;
	src->dead = true;
	src->merged_into = dst;
}

static int cmp_proc_pid(const void *a, const void *b)
{
	const struct proc_acct *x = *(const struct proc_acct *const *)a;
	const struct proc_acct *y = *(const struct proc_acct *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The process pid that was alive at at (relative to the run): the last started before. */
static const struct proc_acct *proc_at(const struct proc_acct **v, size_t n, uint32_t pid,
				       int64_t at)
{
	const struct proc_acct *best = NULL;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && v[lo]->pid == pid; lo++)
		if (!best || v[lo]->start_ns <= at)
			best = v[lo];
	return best;
}

static struct stream *stream_at(struct bashprof *bp, uint32_t pid, uint64_t t);

/* Where the nested bash s goes: the command of a bash of the tree that started its ancestors. */
static struct bash_node *place_target(struct bashprof *bp, const struct stream *s,
				      const struct proc_acct **v, size_t n, uint64_t origin)
{
	uint32_t child = s->pid, p = s->ppid;
	uint64_t child_start = s->t_start;

	for (int hops = 0; hops < 64 && p > 1; hops++) {
		struct stream *x = stream_at(bp, p, child_start);
		const struct proc_acct *pr;

		if (x && x->execed && x->exec_node && x->last_t <= child_start)
			return live(x->exec_node); /* a program a bash fork exec'd */
		if (x) {
			/* A bash: its fork child that exec'd, else its last fork before. */
			for (struct stream *y = pid_latest(bp, child); y; y = y->prev_pid)
				if (y->exec_node && y->parent == x)
					return live(y->exec_node);
			for (uint32_t k = x->nforks; k-- > 0;)
				if (x->forks[k].t <= child_start && x->forks[k].node)
					return live(x->forks[k].node);
			return NULL;
		}
		pr = proc_at(v, n, p, (int64_t)(child_start - origin));
		if (!pr)
			return NULL;
		child = p;
		child_start = origin + (uint64_t)(pr->start_ns > 0 ? pr->start_ns : 0);
		p = pr->ppid;
	}
	return NULL;
}

/* Is n top, or below it? (Every parent link ends at the root or the limbo: no cycle yet.) */
static bool within(const struct bash_node *n, const struct bash_node *top)
{
	for (; n; n = n->parent)
		if (n == top)
			return true;
	return false;
}

static void place_nested(struct bashprof *bp, const struct run *r, uint64_t origin)
{
	const struct proc_acct **v = NULL;
	size_t n = r ? r->nprocs : 0;
	struct stream *root = NULL;

	if (!bp->limbo)
		return;
	if (n && (v = malloc(n * sizeof(*v)))) {
		for (size_t i = 0; i < n; i++)
			v[i] = &r->procs[i];
		qsort(v, n, sizeof(*v), cmp_proc_pid);
	}
	for (size_t i = 0; i < bp->nall; i++)
		if (bp->all[i]->root && !bp->all[i]->parent)
			root = bp->all[i];
	for (size_t i = 0; i < bp->nall; i++) {
		struct stream *s = bp->all[i];
		struct bash_node *target = NULL, *same;

		if (!s->unplaced)
			continue;
		if (v)
			target = place_target(bp, s, v, n, origin);
		/*
		 * Records and a process tree that place a bash below its own
		 * commands (forged: a real tree cannot) would make a cycle,
		 * and the walk to the root below would never end.
		 */
		if (target && within(target, s->base))
			target = NULL;
		if (target) {
			bp->q.placed_streams++;
		} else {
			bp->q.orphan_streams++;
			target = bp->nodes[0];
		}
		unlink_child(s->base);
		s->base->line = target->line;
		same = find_child(target, BK_BASH, target->line, s->base->text);
		if (same)
			merge_node(same, s->base);
		else
			link_child(target, s->base);
		/* The commands that waited for it pay for its trap runs. */
		for (struct bash_node *a = target; a; a = a->parent) {
			if (!a->parent && root) {
				root->ovh.w += s->ovh.w;
				root->ovh.c += s->ovh.c;
				break;
			}
			a->cor_wall_ns += s->ovh.w;
			a->cor_cpu_ns += s->ovh.c;
			if (a->kind == BK_BACKGROUND || a->kind == BK_COPROC ||
			    a->kind == BK_PROCSUB)
				break;
		}
	}
	free(v);
}

/*
 * The nodes in depth-first order from the root, numbered again (parents
 * before children, as bashprof.h says): placed nodes may have been made
 * before their new parents. Merged nodes and the limbo go.
 */
static void renumber(struct bashprof *bp)
{
	struct bash_node **out = calloc(bp->nnodes, sizeof(*out)), **stack = NULL;
	size_t k = 0, sp = 0, cap = 64;

	if (!out)
		return;
	stack = malloc(cap * sizeof(*stack));
	if (!stack) {
		free(out);
		return;
	}
	stack[sp++] = bp->nodes[0];
	while (sp) {
		struct bash_node *nd = stack[--sp], *c;
		size_t nk = 0;

		/* Each node is in one list once: more than there are is a broken tree. */
		if (k == bp->nnodes)
			break;

		nd->id = (uint32_t)k;
		nd->depth = nd->parent ? nd->parent->depth + 1 : 0;
		out[k++] = nd;
		for (c = nd->child; c; c = c->next)
			nk++;
		if (sp + nk > cap) {
			struct bash_node **ns = vec_grow(stack, &cap, sp + nk, sizeof(*ns), 64);

			if (!ns) {
				/* Out of memory: keep the old order, ids as they were. */
				for (size_t i = 0; i < bp->nnodes; i++)
					bp->nodes[i]->id = (uint32_t)i;
				free(stack);
				free(out);
				return;
			}
			stack = ns;
		}
		/* Children pushed last first, so that they come out in order. */
		sp += nk;
		{
			size_t j = sp;

			for (c = nd->child; c; c = c->next)
				stack[--j] = c;
		}
	}
	free(stack);
	/* The rest stays allocated (fork points may name it) until bashprof__free(). */
	for (size_t i = 0; i < bp->nnodes; i++) {
		struct bash_node *nd = bp->nodes[i];

		if (nd->id < k && out[nd->id] == nd)
			continue;
		nd->next = bp->gone;
		bp->gone = nd;
	}
	free(bp->nodes);
	bp->nodes = out;
	/* out holds as many as there were: node_new() grows it from there. */
	bp->capnodes = bp->nnodes;
	bp->nnodes = k;
	/* The key table points at nodes that may be gone: nothing looks up after the end. */
	hmap__free(&bp->nk);
	bp->limbo = NULL;
}

/*
 * A pipeline's parts run side by side in processes of their own while the
 * script waits for them all; its records show the parts one after another,
 * the launch of each, then the wait in the last. Each pipeline becomes a
 * node of its own, at the place of its first part, holding what the script
 * spent on it (the parts' spans); the parts go below it with what their
 * processes did: their lives, and the CPU time of each and of everything
 * it started, less the trap runs in it (what the nodes below the part were
 * charged). A part that ran in the script's own process (lastpipe) keeps
 * its span. Loops give the same nodes, so a pipeline in a loop is one node
 * with its count.
 */
static void group_pipelines(struct bashprof *bp)
{
	size_t nn = bp->nnodes;
	bool made = false;

	for (size_t i = 0; i < nn; i++) {
		struct bash_node *h = bp->nodes[i], *c = h->parent, *pl, *x, *next, *prev = NULL;
		char text[BASHPROF_LABEL_MAX];
		size_t used = 0, parts = 0;

		if (h->dead || !c || live(h->pipe_head) != h)
			continue;
		for (x = c->child; x; x = x->next)
			if (!x->dead && live(x->pipe_head) == h)
				parts++;
		if (parts < 2)
			continue;
		pl = node_new(bp, NULL, BK_PIPELINE, h->line, "", "");
		if (!pl)
			return;
		made = true;
		/* In the parent's list, where its first part was. */
		for (x = c->child; x && x != h; x = x->next)
			prev = x;
		pl->parent = c;
		pl->next = h;
		if (prev)
			prev->next = pl;
		else
			c->child = pl;
		pl->count = h->count;
		for (x = pl->next; x; x = next) {
			struct bash_node *k;
			uint64_t life = 0, cw = 0, cc = 0;

			next = x->next;
			if (x->dead || live(x->pipe_head) != h)
				continue;
			unlink_child(x);
			link_child(pl, x);
			pl->raw_wall_ns += x->raw_wall_ns;
			pl->raw_cpu_ns += x->raw_cpu_ns;
			pl->raw_own_cpu_ns += x->raw_own_cpu_ns;
			pl->cor_wall_ns += x->cor_wall_ns;
			pl->cor_cpu_ns += x->cor_cpu_ns;
			used += (size_t)snprintf(text + used,
						 used < sizeof(text) ? sizeof(text) - used : 0,
						 "%s%s", used ? " | " : "", x->text);
			if (!x->nprocs)
				continue;
			for (uint32_t q = 0; q < x->nprocs; q++)
				life += x->procs[q].wall_ns;
			for (k = x->child; k; k = k->next) {
				if (k->dead)
					continue;
				cw += k->cor_wall_ns;
				cc += k->cor_cpu_ns;
				if (!k->text[0] && k->kind == BK_FORK)
					k->kind = BK_PIPE_PART;
			}
			x->raw_wall_ns = life;
			x->raw_cpu_ns = x->tree_cpu_ns;
			x->raw_own_cpu_ns = 0;
			x->cor_wall_ns = cw;
			x->cor_cpu_ns = cc;
		}
		if (used >= sizeof(text))
			used = sizeof(text) - 1;
		pl->text = strtab_intern(bp, &bp->strs, text, used);
		if (!pl->text)
			pl->text = "";
	}
	/* Pipelines were made after their parts: number the nodes again. */
	if (made)
		renumber(bp);
}

/* The end of a stream that neither exited nor exec'd in the records. */
static uint64_t stream_end_time(const struct stream *s, const struct run *r, uint64_t origin)
{
	if (r) {
		for (size_t i = 0; i < r->nprocs; i++)
			if (r->procs[i].pid == s->pid && r->procs[i].end_ns > 0 &&
			    origin + (uint64_t)r->procs[i].end_ns >= s->last_t)
				return origin + (uint64_t)r->procs[i].end_ns;
	}
	return s->last_t;
}

/*
 * A stream that exec'd a program in place (`exec cmd`, the last command of
 * a subshell): the command that exec'd, and the commands and frames open
 * around it, run on until that process ends, and its CPU time is the
 * process's on-CPU time then (the eBPF tree). Without it, the exec; and a
 * fork that exec'd at once (an external command) ran no command of its
 * own: its command is its parent's, timed there.
 */
static void exec_end(const struct stream *s, const struct run *r, uint64_t origin, uint64_t *t,
		     uint64_t *cpu)
{
	*t = s->last_t;
	*cpu = s->last_cpu;
	if (!r || (!s->crossings && !s->root))
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct proc_acct *p = &r->procs[i];

		/* The process that was this bash at its exec (a later one may reuse the pid). */
		if (p->pid != s->pid || p->end_ns <= 0 ||
		    origin + (uint64_t)p->end_ns < s->last_t ||
		    origin + (uint64_t)(p->start_ns > 0 ? p->start_ns : 0) > s->last_t)
			continue;
		*t = origin + (uint64_t)p->end_ns;
		if (p->state_ns[TSA_ST_ONCPU] > *cpu)
			*cpu = p->state_ns[TSA_ST_ONCPU];
		return;
	}
}

/* A thousand times longer on or waiting for a CPU than on one: beyond that, no figure. */
#define STRETCH_MAX 1000.0

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * How much longer than its CPU time a trap run took in wall time: the bash
 * processes' time on a CPU or waiting for one, over their CPU time (steal
 * counts as waiting: the CPU clocks leave it out). Without the eBPF tree,
 * the start-up measurement's own wall over CPU.
 */
static double runnable_stretch(const struct bashprof *bp, const struct run *r)
{
	const struct bash_cost *b = &bp->q.cal[BASH_COST_BASE];
	double run = 0, cpu = 0;
	uint32_t *pids;
	size_t n = 0;

	if (r && r->nthreads && bp->nall && (pids = malloc(bp->nall * sizeof(*pids)))) {
		for (size_t i = 0; i < bp->nall; i++)
			pids[n++] = bp->all[i]->pid;
		qsort(pids, n, sizeof(*pids), cmp_u32);
		for (size_t i = 0; i < r->nthreads; i++) {
			const struct thread_acct *t = &r->threads[i];
			uint64_t on = t->state_ns[TSA_ST_ONCPU], steal = t->steal_ns;

			if (!bsearch(&t->pid, pids, n, sizeof(*pids), cmp_u32))
				continue;
			run += (double)(on + t->state_ns[TSA_ST_RUNQ]);
			cpu += (double)(on > steal ? on - steal : 0);
		}
		free(pids);
		if (cpu > 0 && run >= cpu)
			return run / cpu < STRETCH_MAX ? run / cpu : STRETCH_MAX;
	}
	/* From the stream, untrusted: a ratio beyond any load is not a stretch. */
	if (b->cpu_ns && b->wall_ns > b->cpu_ns && b->wall_ns / b->cpu_ns < STRETCH_MAX)
		return (double)b->wall_ns / b->cpu_ns;
	return 1.0;
}

/*
 * The stretch of a span's trap cost: the processes' average over the run,
 * unless the span itself ran less stretched (its wall over its bash
 * process's CPU: the load of those moments). A bash's start-up measurement
 * can wait for a CPU while its script later runs alone; the average would
 * then remove twice the trap's cost from a tight loop's wall time (it read
 * 0 for a 28 ms script whose own stretch was 1.01 and the run's 1.99).
 */
static double span_stretch(double st, uint64_t wall, uint64_t own_cpu)
{
	double ns = st;

	if (own_cpu && (double)wall < st * (double)own_cpu)
		ns = (double)wall / (double)own_cpu;
	return ns < 1.0 ? 1.0 : ns;
}

/* A child that ran beside its parent's span, not within it in turn. */
static bool runs_beside(const struct bash_node *n)
{
	return n->kind == BK_BACKGROUND || n->kind == BK_COPROC || n->kind == BK_PROCSUB ||
	       n->kind == BK_PIPE_PART || n->pipe_part ||
	       (n->parent && n->parent->kind == BK_PIPELINE);
}

/*
 * Each node's trap cost is removed at the stretch of its own spans: a
 * command that waited for a nested bash (its process asleep, its spans
 * stretched by the machine's load) once lost more to that bash's trap
 * runs than the bash's own node did, and came out below its child (374%).
 * No node is corrected below what its children took one after another
 * (nor above its raw figure). Children come after their parents. The
 * script's own figures (the root's) are its stream's, corrected over its
 * whole span, which the suites hold to its bare run: raising them to its
 * commands' once made a script waiting for background jobs 149% of it.
 */
static void floor_children(struct bashprof *bp)
{
	uint64_t *sum = calloc(bp->nnodes * 2, sizeof(*sum));

	if (!sum)
		return;
	for (size_t i = bp->nnodes; i-- > 1;) {
		struct bash_node *n = bp->nodes[i];

		if (n->wall_ns < sum[2 * i])
			n->wall_ns = sum[2 * i] < n->raw_wall_ns ? sum[2 * i] : n->raw_wall_ns;
		if (n->cpu_ns < sum[2 * i + 1])
			n->cpu_ns = sum[2 * i + 1] < n->raw_cpu_ns ? sum[2 * i + 1] : n->raw_cpu_ns;
		if (n->parent && n->parent->id < i && !runs_beside(n)) {
			sum[2 * n->parent->id] += n->wall_ns;
			sum[2 * n->parent->id + 1] += n->cpu_ns;
		}
	}
	free(sum);
}

void bashprof__finish(struct bashprof *bp, const struct run *r, uint64_t origin_ns)
{
	double st;

	if (bp->finished)
		return;
	bp->ending = true;
	/* Streams still open: killed, or exec'd into something else. Oldest last. */
	for (size_t i = bp->nall; i-- > 0;) {
		struct stream *s = bp->all[i];

		uint64_t t, cpu;

		if (s->ended)
			continue;
		if (s->execed) {
			exec_end(s, r, origin_ns, &t, &cpu);
		} else {
			bp->q.unterminated++;
			t = stream_end_time(s, r, origin_ns);
			cpu = s->last_cpu;
		}
		stream_close(bp, s, t, cpu, 0);
	}
	place_nested(bp, r, origin_ns);
	if (bp->limbo)
		renumber(bp);
	if (r)
		attach_processes(bp, r, origin_ns);
	group_pipelines(bp);
	/*
	 * A part no pipeline node took (the first part of a lastpipe pipeline,
	 * whose last part ran in the script) lasts at least its processes' life.
	 */
	for (size_t i = 0; i < bp->nnodes; i++) {
		struct bash_node *n = bp->nodes[i];
		uint64_t life = 0;

		if (!n->pipe_part || (n->parent && n->parent->kind == BK_PIPELINE))
			continue;
		for (uint32_t k = 0; k < n->nprocs; k++)
			life += n->procs[k].wall_ns;
		if (life > n->raw_wall_ns)
			n->raw_wall_ns = life;
	}
	st = runnable_stretch(bp, r);
	bp->q.stretch_milli = (uint32_t)(st * 1000 + 0.5);
	/*
	 * The trap's cost charged to each node's spans is removed. In wall
	 * time, at the stretch the node's own spans had (wall over the bash
	 * process's CPU in them: the load of those moments), unless they also
	 * waited for something else (then more than the processes' average,
	 * which is used instead).
	 */
	for (size_t i = 0; i < bp->nnodes; i++) {
		struct bash_node *n = bp->nodes[i];
		double ns = span_stretch(st, n->raw_wall_ns, n->raw_own_cpu_ns);

		n->cor_wall_ns = (uint64_t)((double)n->cor_wall_ns * ns);
		n->wall_ns = sub0(n->raw_wall_ns, n->cor_wall_ns);
		n->cpu_ns = sub0(n->raw_cpu_ns, n->cor_cpu_ns);
	}
	floor_children(bp);
	for (size_t i = 0; i < bp->nall; i++) {
		struct stream *s = bp->all[i];
		uint64_t wall = sub0(s->t_end, s->t_start);
		/* The same rule as for a node, over the stream's span and its own CPU. */
		double ss = span_stretch(st, wall, sub0(s->last_cpu, s->cpu_start));
		/* Every bash process summed: an image a bash image followed counts to its exec. */
		uint64_t own_wall = s->image ? sub0(s->image_t, s->t_start) : wall;

		bp->tot.commands += s->crossings;
		bp->tot.total_wall_ns += sub0(own_wall, (uint64_t)((double)s->own.w * ss));
		if (s->root && !s->parent) {
			bp->tot.raw_self_wall_ns = wall;
			bp->tot.self_wall_ns = sub0(wall, (uint64_t)((double)s->ovh.w * ss));
			/*
			 * Over the same span as its wall time, from its HELLO (after
			 * the start-up measurement) on, with its reaped children: bash's
			 * own start-up before it once made a tiny script's CPU time 20
			 * times its wall time.
			 */
			const struct stream *last = s;

			/*
			 * A script that exec'd bash (a test framework's runner): its
			 * process's children, reaped by its later images, count too
			 * (getrusage keeps them across exec), as its on-CPU time does
			 * (exec_end) and their trap runs (image_of) are taken out.
			 */
			while (last->image)
				last = last->image;
			bp->tot.raw_cpu_ns =
			    sub0(s->last_cpu, s->cpu_start) + sub0(last->child_cpu, s->child_cpu0);
			bp->tot.cpu_ns = sub0(bp->tot.raw_cpu_ns, s->ovh.c);
		}
	}
	/* The root node is the script: its figures are the totals. */
	bp->nodes[0]->count = 1;
	bp->nodes[0]->wall_ns = bp->tot.self_wall_ns;
	bp->nodes[0]->cpu_ns = bp->tot.cpu_ns;
	bp->nodes[0]->raw_wall_ns = bp->tot.raw_self_wall_ns;
	bp->nodes[0]->raw_cpu_ns = bp->tot.raw_cpu_ns;
	bp->finished = true;
}

const struct bash_node *bashprof__root(const struct bashprof *bp)
{
	return bp->nodes[0];
}

size_t bashprof__nodes(const struct bashprof *bp)
{
	return bp->nnodes;
}

const struct bash_node *bashprof__node(const struct bashprof *bp, size_t i)
{
	return i < bp->nnodes ? bp->nodes[i] : NULL;
}

const struct bash_quality *bashprof__quality(const struct bashprof *bp)
{
	return &bp->q;
}

const struct bash_total *bashprof__total(const struct bashprof *bp)
{
	return &bp->tot;
}
