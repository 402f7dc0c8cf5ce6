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
#include "run.h"
#include "tsa_wire.h"

static const char *const kind_names[BK_NR] = {
    [BK_SCRIPT] = "script",
    [BK_COMMAND] = "command",
    [BK_FUNCTION] = "function",
    [BK_SOURCE] = "source",
    [BK_EVAL] = "eval",
    [BK_TRAP] = "trap",
    [BK_SUBSHELL] = "subshell",
    [BK_BACKGROUND] = "background",
    [BK_PIPELINE] = "pipeline",
    [BK_COMSUB] = "command_substitution",
    [BK_PROCSUB] = "process_substitution",
    [BK_COPROC] = "coproc",
    [BK_FORK] = "fork",
    [BK_BASH] = "bash",
};

const char *bash_kind_name(enum bash_kind k)
{
	return (unsigned)k < BK_NR && kind_names[k] ? kind_names[k] : "command";
}

/* Interned strings: one copy of each text, compared by pointer afterwards. */
struct strtab {
	struct str {
		uint64_t hash;
		char *s;
	} * slots;
	size_t cap, n;
};

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static const char *strtab_intern(struct strtab *t, const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n, 0xcbf29ce484222325ull) | 1;
	size_t i;

	if (t->n * 2 >= t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct str *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return NULL;
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->slots[j].s)
				continue;
			for (i = t->slots[j].hash & (cap - 1); slots[i].s; i = (i + 1) & (cap - 1))
				;
			slots[i] = t->slots[j];
		}
		free(t->slots);
		t->slots = slots;
		t->cap = cap;
	}
	for (i = h & (t->cap - 1); t->slots[i].s; i = (i + 1) & (t->cap - 1))
		if (t->slots[i].hash == h && !strncmp(t->slots[i].s, s, n) && !t->slots[i].s[n])
			return t->slots[i].s;
	t->slots[i].s = malloc(n + 1);
	if (!t->slots[i].s)
		return NULL;
	memcpy(t->slots[i].s, s, n);
	t->slots[i].s[n] = '\0';
	t->slots[i].hash = h;
	t->n++;
	return t->slots[i].s;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].s);
	free(t->slots);
}

/* A command being timed at one level of a stream. */
struct open_cmd {
	struct bash_node *node;
	uint64_t t0, c0, cc0; /* wall, own CPU, children's CPU at its start */
	uint64_t x0;	      /* the stream's trap runs at its start */
};

struct level {
	struct bash_node *ctx; /* where commands of this level go */
	struct open_cmd cmd;
	struct bash_node *prev; /* the last closed command (a pipeline's first part) */
	bool timed;		/* the frame is a node of its own (traps) */
	uint64_t t0, c0, cc0, x0;
};

struct fork_point {
	uint64_t t; /* CLOCK_MONOTONIC */
	struct bash_node *node;
	uint64_t cmd_t0; /* start of the command that forked */
	uint32_t index;
	bool orphan;
	bool has_stream; /* a child stream said HELLO for it */
};

struct stream {
	uint32_t pid, gen;
	uint32_t ppid;
	uint32_t next_seq;
	bool ended, execed, fallback, root;
	struct stream *parent; /* for forked children */
	uint32_t fork_index;
	uint32_t subshell_env;
	const char **ids; /* text id -> interned string */
	uint32_t nids;
	struct level *lv;
	int nlv, caplv;
	struct bash_node *anchor;    /* the fork point's node (forked children) */
	struct bash_node *base;	     /* where the top level's commands go (NULL: not yet) */
	struct bash_node *exec_node; /* the command that exec'd this process into another program */
	struct fork_point *forks;
	uint32_t nforks, capforks;
	uint64_t t_start, t_end, last_t, last_cpu, cpu_start, child_cpu, child_cpu0;
	uint64_t crossings;	/* this stream's trap runs, plus its waited children's */
	uint64_t own_crossings; /* this stream's alone */
	struct stream *hnext;
};

struct nodekey_slot {
	struct bash_node *n;
};

struct bashprof {
	struct strtab strs;
	struct bash_node **nodes;
	size_t nnodes, capnodes;
	struct nodekey_slot *nk;
	size_t nkcap, nkn;
	struct stream **sh; /* (pid, gen) -> stream */
	size_t shcap, shn;
	struct stream **all;
	size_t nall, capall;
	struct bash_quality q;
	struct bash_total tot;
	bool finished;
};

static struct bash_node *node_new(struct bashprof *bp, struct bash_node *parent, uint8_t kind,
				  uint32_t line, const char *text, const char *file)
{
	struct bash_node *n;

	if (bp->nnodes == bp->capnodes) {
		size_t cap = bp->capnodes ? bp->capnodes * 2 : 256;
		struct bash_node **v = realloc(bp->nodes, cap * sizeof(*v));

		if (!v)
			return NULL;
		bp->nodes = v;
		bp->capnodes = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
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

static uint64_t node_hash(const struct bash_node *parent, uint8_t kind, uint32_t line,
			  const char *text)
{
	return mix((uintptr_t)parent * 31 + (uintptr_t)text * 17 + line * 7 + kind);
}

static int nk_grow(struct bashprof *bp)
{
	size_t cap = bp->nkcap ? bp->nkcap * 2 : 1024;
	struct nodekey_slot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t j = 0; j < bp->nkcap; j++) {
		struct bash_node *n = bp->nk[j].n;
		size_t i;

		if (!n)
			continue;
		for (i = node_hash(n->parent, n->key_kind, n->line, n->text) & (cap - 1); v[i].n;
		     i = (i + 1) & (cap - 1))
			;
		v[i].n = n;
	}
	free(bp->nk);
	bp->nk = v;
	bp->nkcap = cap;
	return 0;
}

/* The child of parent with this key, created when missing. */
static struct bash_node *child_of(struct bashprof *bp, struct bash_node *parent, uint8_t kind,
				  uint32_t line, const char *text, const char *file)
{
	size_t i;
	struct bash_node *n;

	if ((bp->nkn + 1) * 2 >= bp->nkcap && nk_grow(bp))
		return NULL;
	for (i = node_hash(parent, kind, line, text) & (bp->nkcap - 1); (n = bp->nk[i].n);
	     i = (i + 1) & (bp->nkcap - 1))
		if (n->parent == parent && n->key_kind == kind && n->line == line &&
		    n->text == text)
			return n;
	n = node_new(bp, parent, kind, line, text, file);
	if (!n)
		return NULL;
	bp->nk[i].n = n;
	bp->nkn++;
	return n;
}

struct bashprof *bashprof__new(void)
{
	struct bashprof *bp = calloc(1, sizeof(*bp));

	if (!bp)
		return NULL;
	if (!node_new(bp, NULL, BK_SCRIPT, 0, "", "")) {
		free(bp);
		return NULL;
	}
	return bp;
}

static void stream_release(struct stream *s)
{
	free(s->ids);
	free(s->lv);
	s->ids = NULL;
	s->lv = NULL;
	s->nids = 0;
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
	free(bp->nodes);
	free(bp->nk);
	for (size_t i = 0; i < bp->nall; i++) {
		stream_release(bp->all[i]);
		free(bp->all[i]->forks);
		free(bp->all[i]);
	}
	free(bp->all);
	free(bp->sh);
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
		struct stream **v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t j = 0; j < bp->shcap; j++)
			if (bp->sh[j])
				v[sh_slot(v, cap, bp->sh[j]->pid, bp->sh[j]->gen)] = bp->sh[j];
		free(bp->sh);
		bp->sh = v;
		bp->shcap = cap;
	}
	if (bp->nall == bp->capall) {
		size_t cap = bp->capall ? bp->capall * 2 : 64;
		struct stream **v = realloc(bp->all, cap * sizeof(*v));

		if (!v)
			return NULL;
		bp->all = v;
		bp->capall = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pid = pid;
	s->gen = gen;
	bp->sh[sh_slot(bp->sh, bp->shcap, pid, gen)] = s;
	bp->shn++;
	bp->all[bp->nall++] = s;
	bp->q.streams++;
	return s;
}

/* The stream whose pid is pid and that exec'd most recently (a nested bash's former self). */
static struct stream *stream_execed(struct bashprof *bp, uint32_t pid)
{
	for (size_t i = bp->nall; i-- > 0;)
		if (bp->all[i]->pid == pid)
			return bp->all[i]->execed ? bp->all[i] : NULL;
	return NULL;
}

static struct level *level_push(struct stream *s, struct bash_node *ctx)
{
	struct level *l;

	if (s->nlv == s->caplv) {
		int cap = s->caplv ? s->caplv * 2 : 8;
		struct level *v;

		if (cap > 4096)
			return NULL;
		v = realloc(s->lv, (size_t)cap * sizeof(*v));
		if (!v)
			return NULL;
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

static void add_span(struct bash_node *n, uint64_t wall, uint64_t cpu, uint64_t crossings)
{
	n->raw_wall_ns += wall;
	n->raw_cpu_ns += cpu;
	n->crossings += crossings;
}

/* Close a level's open command at time t. */
static void close_cmd(struct stream *s, struct level *l, uint64_t t, uint64_t cpu)
{
	struct open_cmd *c = &l->cmd;

	if (!c->node)
		return;
	/* The command's span holds the trap runs inside it, plus the one that closes it. */
	add_span(c->node, sub0(t, c->t0), sub0(cpu, c->c0) + sub0(s->child_cpu, c->cc0),
		 s->crossings - c->x0 + 1);
	l->prev = c->node;
	c->node = NULL;
}

static void open_cmd(struct stream *s, struct level *l, struct bash_node *n, uint64_t t,
		     uint64_t cpu)
{
	l->cmd.node = n;
	l->cmd.t0 = t;
	l->cmd.c0 = cpu;
	l->cmd.cc0 = s->child_cpu;
	l->cmd.x0 = s->crossings;
	if (n)
		n->count++;
}

static void pop_level(struct stream *s, uint64_t t, uint64_t cpu)
{
	struct level *l = &s->lv[s->nlv - 1];

	close_cmd(s, l, t, cpu);
	if (l->timed && l->ctx)
		add_span(l->ctx, sub0(t, l->t0), sub0(cpu, l->c0) + sub0(s->child_cpu, l->cc0),
			 s->crossings - l->x0);
	s->nlv--;
}

static const char *id_text(struct stream *s, uint32_t id)
{
	if (id == 0)
		return NULL;
	if (id >= s->nids)
		return NULL;
	return s->ids[id];
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
		return BK_PIPELINE;
	if (env & 0x01)
		return BK_BACKGROUND;
	if (env & 0x02)
		return BK_SUBSHELL;
	return BK_FORK;
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
		enum bash_kind k = s->parent ? kind_from_env(s->subshell_env, NULL) : BK_BASH;

		s->base = child_of(bp, s->anchor, (uint8_t)k, s->anchor->line,
				   strtab_intern(&bp->strs, "", 0), "");
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
	if (!s->nlv && !level_push(s, NULL))
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
	if (s->root && h->cal_wall_ns) {
		bp->q.cal_wall_ns = h->cal_wall_ns;
		bp->q.cal_cpu_ns = h->cal_cpu_ns;
	}
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
			if (f) {
				f->has_stream = true;
				s->anchor = f->node;
				if (f->node && f->orphan && f->node->kind == BK_SUBSHELL)
					f->node->kind =
					    (uint8_t)kind_from_env(h->subshell_env, f->node->text);
				else if (f->node && f->node->kind == BK_COMMAND &&
					 (h->subshell_env & 0x01) && !(h->subshell_env & 0x24))
					f->node->kind = BK_BACKGROUND;
				else if (f->node && (h->subshell_env & 0x10) &&
					 !(h->subshell_env & 0x24))
					f->node->pipe_part = true;
			}
		}
	} else {
		/* A new bash image: the script, or a nested bash that exec'd from a fork. */
		struct stream *prev = stream_execed(bp, c->pid);

		if (prev) {
			s->parent = prev->parent;
			s->anchor = prev->base ? prev->base : prev->anchor;
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
	if (r->arg >= s->nids) {
		uint32_t cap = s->nids ? s->nids : 64;
		const char **v;

		while (cap <= r->arg)
			cap *= 2;
		v = realloc(s->ids, cap * sizeof(*v));
		if (!v)
			return;
		memset(v + s->nids, 0, (cap - s->nids) * sizeof(*v));
		s->ids = v;
		s->nids = cap;
	}
	s->ids[r->arg] = strtab_intern(&bp->strs, p, n);
}

static void do_cmd(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	const struct tsa_cmd *c = (const struct tsa_cmd *)r;
	const char *text = id_text(s, c->text);
	struct level *l;
	struct bash_node *n;

	if (!text || (r->flags & TSA_CF_CHILD_CPU && r->len < sizeof(struct tsa_cmd_cc))) {
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
	close_cmd(s, l, c->t, c->cpu);
	s->crossings++;
	s->own_crossings++;
	stream_time(s, c->t, c->cpu);
	if (r->flags & TSA_CF_IN_TRAP)
		text = strtab_intern(&bp->strs, "", 0);
	n = l->ctx ? child_of(bp, l->ctx, BK_COMMAND, r->arg, text, "") : NULL;
	open_cmd(s, l, n, c->t, c->cpu);
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
		name = strtab_intern(&bp->strs, "", 0);
	if (!file)
		file = strtab_intern(&bp->strs, "", 0);
	stream_time(s, p->t, p->cpu);
	switch (r->flags) {
	case TSA_FR_FUNC:
	case TSA_FR_SOURCE:
	case TSA_FR_EVAL:
		/* The frame hangs below the command that called, sourced or eval'd. */
		/* A forked child that starts in a function (f &): below its own node. */
		ctx = l->cmd.node ? l->cmd.node : (s->nlv == 1 ? l->ctx : NULL);
		if (ctx && ctx == l->cmd.node) {
			if (ctx->kind == BK_COMMAND)
				ctx->kind = r->flags == TSA_FR_FUNC	? BK_FUNCTION
					    : r->flags == TSA_FR_SOURCE ? BK_SOURCE
									: BK_EVAL;
			if (r->flags != TSA_FR_EVAL && !ctx->file[0])
				ctx->file = file;
		}
		if (r->flags == TSA_FR_FUNC) {
			/* The function's entry ran the DEBUG trap once more. */
			s->crossings++;
			s->own_crossings++;
		}
		nl = level_push(s, ctx);
		break;
	case TSA_FR_TRAP:
		/* A trap interrupts the current command and runs as a node of its own. */
		close_cmd(s, l, p->t, p->cpu);
		ctx = l->ctx ? child_of(bp, l->ctx, BK_TRAP, r->arg, name, file) : NULL;
		if (ctx)
			ctx->count++;
		nl = level_push(s, ctx);
		if (nl) {
			nl->timed = true;
			nl->t0 = p->t;
			nl->c0 = p->cpu;
			nl->cc0 = s->child_cpu;
			nl->x0 = s->crossings;
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
	if (r->flags & TSA_FF_ORPHAN) {
		const char *text = id_text(s, f->text);

		if (!text) {
			bp->q.bad_records++;
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
	if (f->pipe >= 1 && n && !(r->flags & TSA_FF_ORPHAN)) {
		n->pipe_part = true;
		if (f->pipe == 1 && l->prev && l->prev->line == n->line)
			l->prev->pipe_part = true;
	} else if (f->pipe >= 1 && n && f->pipe == 1 && l->prev && l->prev->line == n->line) {
		l->prev->pipe_part = true;
	}
	if (s->nforks == s->capforks) {
		uint32_t cap = s->capforks ? s->capforks * 2 : 16;
		struct fork_point *v = realloc(s->forks, cap * sizeof(*v));

		if (!v)
			return;
		s->forks = v;
		s->capforks = cap;
	}
	fp = &s->forks[s->nforks++];
	memset(fp, 0, sizeof(*fp));
	fp->t = f->t;
	fp->node = n;
	fp->cmd_t0 = l->cmd.t0;
	fp->index = f->index;
	fp->orphan = (r->flags & TSA_FF_ORPHAN) != 0;
}

/* The process is over as this stream: close everything at t. */
static void stream_close(struct bashprof *bp, struct stream *s, uint64_t t, uint64_t cpu)
{
	while (s->nlv > 0)
		pop_level(s, t, cpu);
	s->t_end = t;
	s->last_cpu = cpu > s->last_cpu ? cpu : s->last_cpu;
	s->ended = true;
	/* A forked child's own span goes to the node made for it. */
	if (s->base && s->base != bp->nodes[0] && s->base != s->anchor)
		add_span(s->base, sub0(t, s->t_start),
			 sub0(s->last_cpu, s->cpu_start) + sub0(s->child_cpu, s->child_cpu0),
			 s->crossings);
	/* A parent that waited for this child measured its trap runs too. */
	if (s->parent && !s->parent->ended && s->parent->nlv) {
		struct level *pl = &s->parent->lv[s->parent->nlv - 1];

		for (uint32_t i = 0; i < s->parent->nforks; i++) {
			struct fork_point *f = &s->parent->forks[i];

			if (f->index == s->fork_index && f->node && pl->cmd.node == f->node &&
			    pl->cmd.t0 == f->cmd_t0) {
				s->parent->crossings += s->crossings;
				break;
			}
		}
	}
	stream_release(s);
}

static void do_end(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	const struct tsa_end *e = (const struct tsa_end *)r;

	if (e->child_cpu > s->child_cpu)
		s->child_cpu = e->child_cpu;
	stream_time(s, e->t, e->cpu);
	stream_close(bp, s, e->t, e->cpu);
}

static void do_exec(struct bashprof *bp, struct stream *s, const struct tsa_rec *r)
{
	const struct tsa_exec *x = (const struct tsa_exec *)r;

	stream_time(s, x->t, x->cpu);
	/* An exec that fails returns: records may follow. Close on the next HELLO or at the end. */
	s->execed = true;
	/* What runs after the exec is that command's process (`( cmd )`, `exec cmd`). */
	if (s->nlv && s->lv[s->nlv - 1].cmd.node)
		s->exec_node = s->lv[s->nlv - 1].cmd.node;
}

static const size_t min_len[TSA_R_NR] = {
    [TSA_R_HELLO] = sizeof(struct tsa_hello),	 [TSA_R_TEXT] = sizeof(struct tsa_text),
    [TSA_R_TEXT_RESET] = sizeof(struct tsa_rec), [TSA_R_CMD] = sizeof(struct tsa_cmd),
    [TSA_R_PUSH] = sizeof(struct tsa_push),	 [TSA_R_POP] = sizeof(struct tsa_pop),
    [TSA_R_FORK] = sizeof(struct tsa_fork),	 [TSA_R_EXEC] = sizeof(struct tsa_exec),
    [TSA_R_END] = sizeof(struct tsa_end),
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
		switch (h.type) {
		case TSA_R_TEXT:
			do_text(bp, s, (const struct tsa_rec *)rec);
			break;
		case TSA_R_TEXT_RESET:
			if (s->ids)
				memset(s->ids, 0, s->nids * sizeof(*s->ids));
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
		}
	}
}

void bashprof__feed_fallback(struct bashprof *bp, FILE *f, int64_t real_minus_mono_ns)
{
	char line[4096];
	const char *empty = strtab_intern(&bp->strs, "", 0);

	while (fgets(line, sizeof(line), f)) {
		unsigned pid, lineno, depth;
		unsigned long long sec, usec;
		int used = 0;
		struct stream *s;
		struct level *l;
		uint64_t t;
		char *text;
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
				return;
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
			return;
		/* Depth is ${#FUNCNAME[@]}: a deeper line is a function's entry. */
		if (depth > (uint32_t)(s->nlv - 1)) {
			struct bash_node *ctx = l->cmd.node;

			while ((uint32_t)(s->nlv - 1) < depth) {
				if (ctx && ctx->kind == BK_COMMAND)
					ctx->kind = BK_FUNCTION;
				if (!level_push(s, ctx))
					return;
				ctx = NULL;
			}
			s->crossings++;
			s->own_crossings++;
			stream_time(s, t, 0);
			continue;
		}
		while ((uint32_t)(s->nlv - 1) > depth && s->nlv > 1)
			pop_level(s, t, 0);
		l = &s->lv[s->nlv - 1];
		close_cmd(s, l, t, 0);
		s->crossings++;
		s->own_crossings++;
		stream_time(s, t, 0);
		open_cmd(s, l,
			 l->ctx ? child_of(bp, l->ctx, BK_COMMAND, lineno,
					   strtab_intern(&bp->strs, text, n), empty)
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

	for (size_t i = 0; i < bp->nall; i++) {
		struct stream *s = bp->all[i];

		if (s->pid == pid && s->t_start <= t && (!best || s->t_start >= best->t_start))
			best = s;
	}
	return best;
}

static void attach_processes(struct bashprof *bp, const struct run *r, uint64_t origin)
{
	const struct proc_acct **v;
	size_t n = r->nprocs;

	if (!n)
		return;
	v = malloc(n * sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = &r->procs[i];
	qsort(v, n, sizeof(*v), cmp_proc_start);
	for (size_t i = 0; i < n; i++) {
		const struct proc_acct *p = v[i];
		uint64_t start = origin + (uint64_t)(p->start_ns > 0 ? p->start_ns : 0);
		struct stream *s = stream_at(bp, p->ppid, start);
		struct fork_point *f = NULL;
		struct bash_node *node;
		struct bash_procs *slot;

		node = NULL;
		/* A bash process that exec'd a program in place: that command's process. */
		for (size_t k = bp->nall; k-- > 0;)
			if (bp->all[k]->pid == p->pid && bp->all[k]->exec_node) {
				node = bp->all[k]->exec_node;
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
		node = f->node;
	attach:
		slot = procs_slot(node, p->comm);
		if (!slot)
			continue;
		if (!slot->count)
			slot->first_pid = p->pid;
		slot->count++;
		slot->wall_ns += p->end_ns > p->start_ns ? (uint64_t)(p->end_ns - p->start_ns) : 0;
		for (int st = 0; st < 5 && st < TSA_ST_NR; st++)
			slot->state_ns[st] += p->state_ns[st];
		bp->q.attached_processes++;
	}
	free(v);
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

void bashprof__finish(struct bashprof *bp, const struct run *r, uint64_t origin_ns)
{
	uint64_t ow, oc;

	if (bp->finished)
		return;
	/* Streams still open: killed, or exec'd into something else. Oldest last. */
	for (size_t i = bp->nall; i-- > 0;) {
		struct stream *s = bp->all[i];

		if (s->ended)
			continue;
		if (!s->execed)
			bp->q.unterminated++;
		stream_close(bp, s, s->execed ? s->last_t : stream_end_time(s, r, origin_ns),
			     s->last_cpu);
	}
	if (r)
		attach_processes(bp, r, origin_ns);
	/* The trap's cost, removed from every span in proportion to the trap runs in it. */
	ow = bp->q.cal_wall_ns;
	oc = bp->q.cal_cpu_ns;
	for (size_t i = 0; i < bp->nnodes; i++) {
		struct bash_node *n = bp->nodes[i];

		n->wall_ns = sub0(n->raw_wall_ns, ow * n->crossings);
		n->cpu_ns = sub0(n->raw_cpu_ns, oc * n->crossings);
	}
	for (size_t i = 0; i < bp->nall; i++) {
		struct stream *s = bp->all[i];
		uint64_t wall = sub0(s->t_end, s->t_start);

		bp->tot.commands += s->own_crossings;
		bp->tot.total_wall_ns += sub0(wall, ow * s->own_crossings);
		if (s->root && !s->parent) {
			bp->tot.raw_self_wall_ns = wall;
			bp->tot.self_wall_ns = sub0(wall, ow * s->crossings);
			bp->tot.raw_cpu_ns =
			    sub0(s->last_cpu, 0) + sub0(s->child_cpu, 0); /* since exec */
		}
	}
	bp->tot.cpu_ns = sub0(bp->tot.raw_cpu_ns, oc * bp->tot.commands);
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
