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
#include "bashprof_int.h"
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
const char *bp_strtab_intern(struct bashprof *bp, struct strtab *t, const char *s, size_t n)
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

struct bash_node *bp_node_new(struct bashprof *bp, struct bash_node *parent, uint8_t kind,
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
	n = bp_node_new(bp, parent, kind, line, text, file);
	if (!n)
		return NULL;
	hmap__insert(&bp->nk, h, (uint32_t)(bp->nnodes - 1)); /* reserved above */
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
	if (!bp_node_new(bp, NULL, BK_SCRIPT, 0, "", "") ||
	    !bp_strtab_intern(bp, &bp->strs, "", 0)) {
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
struct stream *bp_pid_latest(const struct bashprof *bp, uint32_t pid)
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
	for (struct stream *x = bp_pid_latest(bp, pid); x; x = x->prev_pid)
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
				   bp_strtab_intern(bp, &bp->strs, "", 0), "");
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
			bp->q.cal_respeed = !bp->q.cal_cached && (h->hflags & TSA_HF_CAL_RESPEED);
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
				bp->limbo = bp_node_new(bp, NULL, BK_BASH, 0, "", "");
			s->base = bp->limbo ? bp_node_new(bp, bp->limbo, BK_BASH, 0, "", "") : NULL;
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
		text = bp_strtab_intern(bp, &bp->strs, p, n);
		if (!text) {
			s->ids_dropped = true;
			return;
		}
		s->ids[slot].id = r->arg;
		s->nids++;
	} else {
		text = bp_strtab_intern(bp, &bp->strs, p, n);
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
		text = bp_strtab_intern(bp, &bp->strs, "", 0);
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
		name = bp_strtab_intern(bp, &bp->strs, "", 0);
	if (!file)
		file = bp_strtab_intern(bp, &bp->strs, "", 0);
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
void bp_stream_close(struct bashprof *bp, struct stream *s, uint64_t t, uint64_t cpu, uint8_t tail)
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
	bp_stream_close(bp, s, e->t, e->cpu, r->flags);
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
	const char *empty = bp_strtab_intern(bp, &bp->strs, "", 0);

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
		itext = bp_strtab_intern(bp, &bp->strs, text, n);
		open_cmd(s, l,
			 l->ctx && itext ? child_of(bp, l->ctx, BK_COMMAND, lineno, itext, empty)
					 : NULL,
			 t, 0);
	}
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
