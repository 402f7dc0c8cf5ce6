// SPDX-License-Identifier: MIT
/*
 * The bash profile completed at the run's end (bashprof__finish()): the
 * processes of the eBPF tree attached to the fork points that made them,
 * nested bash processes placed below the command that ran them, the nodes
 * numbered again, pipelines grouped, and the trap cost's share of each
 * command's wall time stretched by the waits for a CPU (bashprof_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bashprof_int.h"
#include "run.h"
#include "vec.h"

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
	for (struct stream *s = bp_pid_latest(bp, pid); s; s = s->prev_pid)
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
		last = bp_pid_latest(bp, p->pid);
		if (!strncmp(p->comm, "bash", sizeof(p->comm)) && (!last || last->execed))
			bp->q.silent_bash++;
		struct fork_point *f = NULL;
		struct bash_node *node;
		struct bash_procs *slot;
		bool with_bash;

		node = NULL;
		with_bash = false;
		/* A bash process that exec'd a program in place: that command's process. */
		for (struct stream *x = bp_pid_latest(bp, p->pid); x; x = x->prev_pid)
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
			for (struct stream *y = bp_pid_latest(bp, child); y; y = y->prev_pid)
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
	/* out holds as many as there were: bp_node_new() grows it from there. */
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
		pl = bp_node_new(bp, NULL, BK_PIPELINE, h->line, "", "");
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
		pl->text = bp_strtab_intern(bp, &bp->strs, text, used);
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
		bp_stream_close(bp, s, t, cpu, 0);
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
