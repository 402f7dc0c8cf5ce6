// SPDX-License-Identifier: MIT
/* The bash profile as folded stacks and as a readable tree. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "bashprof.h"
#include "flame.h"
#include "run.h"
#include "termwrap.h"
#include "textsafe.h"
#include "tsa_wire.h"
#include "tsarun.h"

/*
 * A one-line, bounded rendering of a text: newlines and tabs become spaces.
 * Folded (bash.folded, the flame graph's frames): no ';' and, as in the
 * stacks' folded files, no control character (the tree escapes them).
 */
static void flat(char *out, size_t outlen, const char *s, bool folded)
{
	size_t j = 0;

	for (size_t i = 0; s && s[i] && j + 1 < outlen; i++) {
		char c = s[i];

		if (c == '\n' || c == '\t' || c == '\r')
			c = ' ';
		if (folded && c == ';')
			c = ',';
		if (folded && ((unsigned char)c < 0x20 || c == 0x7f))
			c = '?';
		out[j++] = c;
	}
	out[j] = '\0';
}

/* What a node is called in a stack or in the tree. */
static void label(char *out, size_t outlen, const struct bash_node *n, bool folded)
{
	char t[200];

	flat(t, sizeof(t), n->text, folded);
	switch (n->kind) {
	case BK_SCRIPT:
		snprintf(out, outlen, "%s", folded ? "bash" : "(script)");
		break;
	case BK_TRAP:
		flat(t, sizeof(t), n->file, folded);
		snprintf(out, outlen, "TRAP (%s): %s", n->text, t);
		break;
	case BK_PIPELINE:
		snprintf(out, outlen, "%s", t);
		break;
	case BK_SUBSHELL:
	case BK_BACKGROUND:
	case BK_COMSUB:
	case BK_PROCSUB:
	case BK_COPROC:
	case BK_PIPE_PART:
	case BK_FORK:
	case BK_BASH:
		if (t[0])
			snprintf(out, outlen, "%s", t);
		else
			snprintf(out, outlen, "<< (%s) >>", bash_kind_name(n->kind));
		if (t[0] && !n->orphan && n->kind == BK_BACKGROUND)
			snprintf(out + strlen(out), outlen - strlen(out), " &");
		break;
	default:
		snprintf(out, outlen, "%s%s", n->pipe_part ? "| " : "", t[0] ? t : "(in trap)");
		break;
	}
}

static void frame_name(const struct bash_node *n, char *out, size_t len);

static void folded_path(const struct bash_node *n, char *buf, size_t len)
{
	char l[BASHPROF_LABEL_MAX + 40];
	size_t used;

	if (!n->parent) {
		snprintf(buf, len, "bash");
		return;
	}
	folded_path(n->parent, buf, len);
	frame_name(n, l, sizeof(l));
	used = strlen(buf);
	snprintf(buf + used, len - used, ";%s", l);
}

/*
 * A node's time less its children's. Background children run beside it,
 * not in it; a pipeline's parts run beside one another within it, so its
 * wall time less the longest part's is its own.
 */
static uint64_t self_time(const struct bash_node *n, bool cpu)
{
	uint64_t kids = 0, v = cpu ? n->cpu_ns : n->wall_ns;

	for (const struct bash_node *c = n->child; c; c = c->next) {
		if (cpu)
			kids += c->cpu_ns;
		else if (n->kind == BK_PIPELINE)
			kids = c->wall_ns > kids ? c->wall_ns : kids;
		else if (c->kind != BK_BACKGROUND && c->kind != BK_COPROC && c->kind != BK_PROCSUB)
			kids += c->wall_ns;
	}
	return v > kids ? v - kids : 0;
}

int bashprof__write_folded(const struct bashprof *bp, FILE *f)
{
	static char path[16384];

	for (size_t i = 0; i < bashprof__nodes(bp); i++) {
		const struct bash_node *n = bashprof__node(bp, i);
		uint64_t self = self_time(n, false);

		/* In nanoseconds, as the stacks' folded files are. */
		if (!self)
			continue;
		folded_path(n, path, sizeof(path));
		if (fprintf(f, "%s %llu\n", path, (unsigned long long)self) < 0)
			return -1;
	}
	return 0;
}

int bashprof__each_self(const struct bashprof *bp,
			int (*fn)(void *ctx, const char *path, uint64_t wall_ns, uint64_t cpu_ns),
			void *ctx)
{
	static char path[16384];
	int ret = 0;

	for (size_t i = 0; !ret && i < bashprof__nodes(bp); i++) {
		const struct bash_node *n = bashprof__node(bp, i);
		uint64_t wall = self_time(n, false), cpu = self_time(n, true);

		if (!wall && !cpu)
			continue;
		folded_path(n, path, sizeof(path));
		ret = fn(ctx, path, wall, cpu);
	}
	return ret;
}

enum { FL_COMMAND, FL_FRAME, FL_FORK, FL_TRAP, FL_BASH };

static int flame_cat(const struct bash_node *n)
{
	switch (n->kind) {
	case BK_FUNCTION:
	case BK_SOURCE:
	case BK_EVAL:
		return FL_FRAME;
	case BK_TRAP:
		return FL_TRAP;
	case BK_BASH:
		return FL_BASH;
	case BK_SUBSHELL:
	case BK_BACKGROUND:
	case BK_PIPE_PART:
	case BK_COMSUB:
	case BK_PROCSUB:
	case BK_COPROC:
	case BK_FORK:
		return FL_FORK;
	default:
		return FL_COMMAND;
	}
}

/* A node's frame name: as in bash.folded ("LINE: text" for commands). */
static void frame_name(const struct bash_node *n, char *out, size_t len)
{
	char l[BASHPROF_LABEL_MAX + 32];

	if (!n->parent) {
		snprintf(out, len, "bash");
		return;
	}
	label(l, sizeof(l) - 24, n, true);
	if (n->kind == BK_COMMAND || n->kind == BK_FUNCTION || n->kind == BK_SOURCE ||
	    n->kind == BK_EVAL || n->kind == BK_PIPELINE || (n->orphan && n->line))
		snprintf(out, len, "%u: %s", n->line, l);
	else
		snprintf(out, len, "%s", l);
}

int bashprof__flame(const struct bashprof *bp, struct flame *f, bool cpu)
{
	size_t nn = bashprof__nodes(bp), cap = 64;
	const char **frames = malloc(cap * sizeof(*frames));
	int *cats = malloc(cap * sizeof(*cats));
	char *names = NULL;
	int ret = 0;

	flame__set_category(f, FL_COMMAND, "command", FLAME_PAL_HOT);
	flame__set_category(f, FL_FRAME, "function, source, eval", FLAME_PAL_BLUE);
	flame__set_category(f, FL_FORK, "subshell, pipeline part, substitution, background",
			    FLAME_PAL_AQUA);
	flame__set_category(f, FL_TRAP, "trap", FLAME_PAL_PURPLE);
	flame__set_category(f, FL_BASH, "nested bash", FLAME_PAL_GREEN);
	names = malloc(nn * (BASHPROF_LABEL_MAX + 40));
	if (!frames || !cats || !names) {
		ret = -ENOMEM;
		goto out;
	}
	/* Every node's name once, in id order (parents first). */
	for (size_t i = 0; i < nn; i++)
		frame_name(bashprof__node(bp, i), names + i * (BASHPROF_LABEL_MAX + 40),
			   BASHPROF_LABEL_MAX + 40);
	for (size_t i = 0; i < nn && !ret; i++) {
		const struct bash_node *n = bashprof__node(bp, i), *p;
		uint64_t v = self_time(n, cpu);
		size_t depth = 0, k;

		if (!v)
			continue;
		for (p = n; p; p = p->parent)
			depth++;
		if (depth > cap) {
			const char **fv = realloc(frames, depth * sizeof(*fv));
			int *cv = fv ? realloc(cats, depth * sizeof(*cv)) : NULL;

			if (fv)
				frames = fv;
			if (!fv || !cv) {
				ret = -ENOMEM;
				break;
			}
			cats = cv;
			cap = depth;
		}
		for (p = n, k = depth; p; p = p->parent) {
			k--;
			frames[k] = names + p->id * (BASHPROF_LABEL_MAX + 40);
			cats[k] = flame_cat(p);
		}
		ret = flame__add_ex(f, frames, cats, depth, v, flame_cat(n));
	}
out:
	free(frames);
	free(cats);
	free(names);
	return ret;
}

static void fmt_dur(char *out, size_t len, uint64_t ns)
{
	if (ns >= 10000000000ull)
		snprintf(out, len, "%.2f s", ns / 1e9);
	else if (ns >= 1000000000ull)
		snprintf(out, len, "%.3f s", ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(out, len, "%.2f ms", ns / 1e6);
	else
		snprintf(out, len, "%.1f us", ns / 1e3);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static bool is_async(const struct bash_node *n)
{
	return n->kind == BK_BACKGROUND || n->kind == BK_COPROC || n->kind == BK_PROCSUB;
}

/*
 * The file a node's line is in: its innermost function's (where it was
 * defined) or sourced file's, else the script's; NULL in a nested bash
 * (another script, whose name the records do not carry).
 */
static const char *node_file(const struct bash_node *n, const char *script)
{
	for (const struct bash_node *p = n->parent; p; p = p->parent) {
		if (p->kind == BK_FUNCTION && p->file[0])
			return p->file;
		if (p->kind == BK_SOURCE && p->text[0])
			return p->text;
		if (p->kind == BK_BASH)
			return NULL;
	}
	return script;
}

/* "file:line", the file by its last component; "-" for no line. */
static void where_of(char *out, size_t len, const struct bash_node *n, const char *script)
{
	const char *file = node_file(n, script), *slash;

	if (!n->line) {
		snprintf(out, len, "-");
		return;
	}
	if (!file || !*file) {
		snprintf(out, len, "%u", n->line);
		return;
	}
	slash = strrchr(file, '/');
	snprintf(out, len, "%s:%u", slash && slash[1] ? slash + 1 : file, n->line);
}

/* Cut s to at most max bytes, on a UTF-8 character's start, with "…" when cut. */
static void fit(char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max || max < 4)
		return;
	n = max - 3;
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(s + n, "…", sizeof("…"));
}

/*
 * The columns before the command, by the width they get (0: left out). Every
 * column on a wide terminal, a file or a pipe; under 120 columns the tree's
 * DEPTH and %PARENT go (the tree's indent and %TOTAL tell them) and the
 * others narrow, so that an 80-column terminal keeps 33 for the tree.
 */
struct layout {
	int where, depth, wall, pct, parent, cpu, count;
	size_t before; /* columns taken before the command (the tree's indent) */
};

/* Where the start-up part of the trap's cost came from (bashprof.h, cal_cached). */
static const char *cal_how(const struct bash_quality *q)
{
	return q->cal_cached ? "measured by an earlier run and cached" : "measured at start-up";
}

static struct layout layout_for(unsigned width)
{
	struct layout l = width && width < 120 ? (struct layout){12, 0, 9, 6, 0, 9, 5, 0}
					       : (struct layout){18, 5, 11, 7, 7, 11, 8, 0};
	const int w[] = {l.where, l.depth, l.wall, l.pct, l.parent, l.cpu, l.count};

	l.before = 1;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		l.before += w[i] ? (size_t)w[i] + 1 : 0;
	return l;
}

/* The columns of a row, each right-aligned to its width, then the gap before the command. */
static void put_cols(FILE *f, const struct layout *l, const char *where, const char *depth,
		     const char *wall, const char *pct, const char *parent, const char *cpu,
		     const char *count)
{
	const struct {
		int w;
		const char *s;
	} c[] = {{l->where, where},   {l->depth, depth}, {l->wall, wall},  {l->pct, pct},
		 {l->parent, parent}, {l->cpu, cpu},	 {l->count, count}};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (c[i].w)
			fprintf(f, "%*s ", c[i].w, c[i].s);
	fputc(' ', f);
}

/* Prose under the tree, wrapped to the width at word boundaries (as given without one). */
static void __attribute__((format(printf, 3, 4))) say(FILE *f, unsigned width, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	termwrap_fputs(f, text, width);
}

/* A child that ran beside its parent, not within it (its time is not the parent's). */
static bool beside(const struct bash_node *n)
{
	return is_async(n) || n->kind == BK_PIPE_PART || n->pipe_part ||
	       (n->parent && n->parent->kind == BK_PIPELINE);
}

/*
 * The node's own time: its wall time less that of the children that ran
 * within it; a pipeline's, less its longest part (the parts run side by
 * side and hold the rest).
 */
static uint64_t self_ns(const struct bash_node *n)
{
	uint64_t in = 0;

	for (const struct bash_node *c = n->child; c; c = c->next)
		if (n->kind == BK_PIPELINE)
			in = c->wall_ns > in ? c->wall_ns : in;
		else if (!beside(c))
			in += c->wall_ns;
	return n->wall_ns > in ? n->wall_ns - in : 0;
}

/* The calls above a node, outermost first: "f > g" (function names, sources, subshells). */
static void call_path(char *out, size_t len, const struct bash_node *n)
{
	const struct bash_node *v[16];
	size_t k = 0, used = 0;

	out[0] = '\0';
	for (const struct bash_node *p = n->parent; p && p->parent && k < 16; p = p->parent)
		v[k++] = p;
	while (k-- > 0 && used < len) {
		char t[64];
		size_t w;

		flat(t, sizeof(t), v[k]->text, false);
		/* A call or a command by its first word, a trap by its signal, the rest by kind. */
		w = strcspn(t, " \t");
		if (!t[0] || (v[k]->kind != BK_FUNCTION && v[k]->kind != BK_COMMAND &&
			      v[k]->kind != BK_TRAP && v[k]->kind != BK_SOURCE))
			snprintf(t, sizeof(t), "(%s)", bash_kind_name(v[k]->kind));
		else
			t[w < 24 ? w : 24] = '\0';
		used += (size_t)snprintf(out + used, len - used, "%s%s", used ? " > " : "", t);
	}
}

static int cmp_node_desc(const void *a, const void *b, void *ctx)
{
	const struct bash_node *x = *(const struct bash_node *const *)a;
	const struct bash_node *y = *(const struct bash_node *const *)b;
	bool self = *(const bool *)ctx;
	uint64_t vx = self ? self_ns(x) : x->wall_ns, vy = self ? self_ns(y) : y->wall_ns;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The costliest commands, by self time then by total time: what to look at first. */
static void print_hot(FILE *f, const struct bashprof *bp, uint64_t total,
		      const struct bashprof_print_opts *o, int top)
{
	size_t nn = bashprof__nodes(bp), k = 0;
	const struct bash_node **v = nn > 1 ? malloc((nn - 1) * sizeof(*v)) : NULL;
	const struct layout L = layout_for(o->width);
	/* The hot lists' WHERE: as the tree's, with room for a longer name. */
	int where_w = L.where + 2;
	size_t before = (size_t)(2 * L.wall + L.pct + L.count + where_w) + 6;

	if (!v)
		return;
	for (size_t i = 1; i < nn; i++)
		v[k++] = bashprof__node(bp, i);
	for (int pass = 0; pass < 2; pass++) {
		bool self = pass == 0;

		qsort_r(v, k, sizeof(*v), cmp_node_desc, &self);
		fprintf(f, "%s\n%*s %*s %*s %*s  %-*s %s\n",
			self ? "hot commands by self time (their own, less what ran below them):"
			     : "hot commands by total time (with what ran below them):",
			L.wall, self ? "SELF" : "TOTAL", L.pct, "%TOTAL", L.wall,
			self ? "TOTAL" : "SELF", L.count, "COUNT", where_w, "WHERE",
			"COMMAND  < called from");
		for (size_t i = 0; i < k && i < (size_t)top; i++) {
			const struct bash_node *n = v[i];
			uint64_t a = self ? self_ns(n) : n->wall_ns,
				 b = self ? n->wall_ns : self_ns(n);
			char va[32], vb[32], where[64], lbl[BASHPROF_LABEL_MAX + 32], path[160];
			char row[BASHPROF_LABEL_MAX + 256];

			if (!a)
				break;
			fmt_dur(va, sizeof(va), a);
			fmt_dur(vb, sizeof(vb), b);
			where_of(where, sizeof(where), n, o->script);
			fit(where, (size_t)where_w);
			label(lbl, sizeof(lbl), n, false);
			call_path(path, sizeof(path), n);
			snprintf(row, sizeof(row), "%s%s%s", lbl, path[0] ? "  < " : "", path);
			if (o->width)
				fit(row, o->width > before + 8 ? o->width - before : 8);
			fprintf(f, "%*s %*.1f%% %*s %*llu  %-*s ", L.wall, va, L.pct - 1,
				pct(a, total), L.wall, vb, L.count, (unsigned long long)n->count,
				where_w, where);
			textsafe_fput(f, textsafe_term, row, TEXTSAFE_NUL);
			fputc('\n', f);
		}
	}
	fputc('\n', f);
	free(v);
}

static bool folded_here(const struct bash_node *x, uint64_t total,
			const struct bashprof_print_opts *o)
{
	return (o->max_depth && x->depth > o->max_depth) ||
	       (o->min_percent > 0 && pct(x->wall_ns, total) < o->min_percent);
}

static void print_node(FILE *f, const struct bash_node *n, const char *prefix, bool last,
		       uint64_t total, const struct bashprof_print_opts *o)
{
	char lbl[BASHPROF_LABEL_MAX + 32], w[32], c[32], pre[512], where[64];
	char depth[16], share[16], of_parent[16], count[24];
	uint64_t parent = n->parent ? n->parent->wall_ns : 0;
	uint64_t folded_ns = 0, folded = 0;
	const struct layout L = layout_for(o->width);
	size_t cols;

	label(lbl, sizeof(lbl) - 24, n, false);
	/* The columns before the label, and the tree's own: what is left of the width. */
	cols = L.before + 2 * (size_t)n->depth +
	       (n->kind == BK_FUNCTION || n->kind == BK_SOURCE ? sizeof("  [function]") : 0);
	if (o->width)
		fit(lbl, o->width > cols + 8 ? o->width - cols : 8);
	fmt_dur(w, sizeof(w), n->wall_ns);
	fmt_dur(c, sizeof(c), n->cpu_ns);
	where_of(where, sizeof(where), n, o->script);
	fit(where, (size_t)L.where);
	snprintf(depth, sizeof(depth), "%u", n->depth);
	snprintf(share, sizeof(share), "%.1f%%", pct(n->wall_ns, total));
	snprintf(count, sizeof(count), "%llu", (unsigned long long)n->count);
	/*
	 * A node that ran beside its parent, not within it, has no share of the
	 * parent's time; nor has what a background job ran below the node of
	 * its launch (a node of the job's own process has no text: its life).
	 */
	if (!n->parent)
		of_parent[0] = '\0';
	else if (is_async(n) || (is_async(n->parent) && n->parent->text[0]))
		snprintf(of_parent, sizeof(of_parent), "-");
	else
		snprintf(of_parent, sizeof(of_parent), "%.1f%%", pct(n->wall_ns, parent));
	put_cols(f, &L, where, depth, w, share, of_parent, c, count);
	if (n->parent)
		fprintf(f, "%s%s", prefix, last ? "└─" : "├─");
	/* The script's text: its control bytes and bad UTF-8 are shown, never sent. */
	textsafe_fput(f, textsafe_term, lbl, TEXTSAFE_NUL);
	if (n->kind == BK_FUNCTION || n->kind == BK_SOURCE)
		fprintf(f, "  [%s]", n->kind == BK_FUNCTION ? "function" : "source");
	fputc('\n', f);
	snprintf(pre, sizeof(pre), "%s%s", prefix, n->parent ? (last ? "  " : "│ ") : "");
	for (uint32_t i = 0; i < n->nprocs; i++) {
		const struct bash_procs *p = &n->procs[i];
		char pw[32], pc[32], pr[32], ps[32], pd[32], rest[96], tail[512];
		char comm[TEXTSAFE_SIZE(sizeof(p->comm))]; /* the command's name: escaped */

		fmt_dur(pw, sizeof(pw), p->wall_ns);
		fmt_dur(pc, sizeof(pc), p->state_ns[TSA_ST_ONCPU]);
		fmt_dur(pr, sizeof(pr), p->state_ns[TSA_ST_RUNQ]);
		fmt_dur(ps, sizeof(ps), p->state_ns[TSA_ST_SLEEP]);
		fmt_dur(pd, sizeof(pd), p->state_ns[TSA_ST_DISK]);
		if (p->unmeasured & ACCT_NO_STATES) {
			/* Known by their taskstats records: the rest of their life is not split. */
			uint64_t on = p->state_ns[TSA_ST_ONCPU] + p->state_ns[TSA_ST_RUNQ];

			fmt_dur(ps, sizeof(ps), p->wall_ns > on ? p->wall_ns - on : 0);
			snprintf(rest, sizeof(rest), "%s off-CPU, not split by state", ps);
		} else {
			snprintf(rest, sizeof(rest), "%s S + %s D", ps, pd);
		}
		textsafe_term(comm, sizeof(comm), p->comm, TEXTSAFE_NUL);
		snprintf(tail, sizeof(tail), "↳ %s (pid %u%s%s): %s = %s CPU + %s runq + %s", comm,
			 p->first_pid, p->count > 1 ? ", ..." : "",
			 p->with_bash ? ", with the script's commands before its exec" : "", pw, pc,
			 pr, rest);
		cols = L.before + termwrap_cols(pre, strlen(pre)) + 2;
		if (o->width)
			fit(tail, o->width > cols + 8 ? o->width - cols : 8);
		snprintf(count, sizeof(count), "%u", p->count);
		put_cols(f, &L, "", "", "", "", "", "", count);
		fprintf(f, "%s  %s\n", pre, tail);
	}
	/* Children below the depth or the share are folded into one line, last. */
	for (const struct bash_node *ch = n->child; ch; ch = ch->next)
		if (folded_here(ch, total, o)) {
			folded++;
			folded_ns += beside(ch) ? 0 : ch->wall_ns;
		}
	for (const struct bash_node *ch = n->child; ch; ch = ch->next)
		if (!folded_here(ch, total, o))
			print_node(f, ch, pre, !ch->next && !folded, total, o);
	if (folded) {
		char fw[32];

		fmt_dur(fw, sizeof(fw), folded_ns);
		put_cols(f, &L, "", "", fw, "", "", "", "");
		fprintf(f, "%s└─… %llu more (%s)\n", pre, (unsigned long long)folded,
			o->max_depth && n->depth + 1 > o->max_depth ? "below --bash-depth"
								    : "each below the share shown");
	}
}

void bashprof__print(const struct bashprof *bp, FILE *f, const struct bashprof_print_opts *o)
{
	const struct bash_total *t = bashprof__total(bp);
	const struct bash_quality *q = bashprof__quality(bp);
	struct bashprof_print_opts po;
	char sw[32], tw[32], cpu[32];
	struct layout L;
	unsigned W = o->width;

	fmt_dur(sw, sizeof(sw), t->self_wall_ns);
	fmt_dur(tw, sizeof(tw), t->total_wall_ns);
	fmt_dur(cpu, sizeof(cpu), t->cpu_ns);
	fprintf(f, "\nbash profile (%s): %llu commands\n",
		q->fallback ? "pure-bash trap: the builtin could not be loaded"
			    : "tsarun-trap builtin",
		(unsigned long long)t->commands);
	if (q->fallback)
		fprintf(f, "note: with the pure-bash trap, %s\n", BASHPROF_FALLBACK_LIMITS);
	po = *o;
	if (po.min_percent < 0)
		po.min_percent =
		    bashprof__nodes(bp) > BASHPROF_FOLD_LINES ? BASHPROF_FOLD_PERCENT : 0;
	if (po.top < 0)
		po.top = 5;
	if (po.top)
		print_hot(f, bp, t->self_wall_ns, &po, po.top);
	if (po.min_percent > 0 || po.max_depth)
		fprintf(f,
			"the tree%s%s (every node is in the artifact's bash.commands and in "
			"bash.folded):\n",
			po.max_depth ? ", to --bash-depth" : "",
			po.min_percent > 0 ? ", without what is below a share of the total" : "");
	L = layout_for(o->width);
	put_cols(f, &L, "WHERE", "DEPTH", "WALL", "%TOTAL", "%PARENT", "CPU", "COUNT");
	fprintf(f, "COMMAND\n");
	print_node(f, bashprof__root(bp), "", true, t->self_wall_ns, &po);
	fprintf(f, "SELF RUN TIME:  %s   (the script's own wall time)\n", sw);
	fprintf(f, "TOTAL RUN TIME: %s   (every bash process of the tree, summed)\n", tw);
	fprintf(f, "TOTAL CPU TIME: %s\n", cpu);
	if (q->calibrated && q->timed_runs)
		say(f, W,
		    "times exclude the trap's own cost: %.2f us a command on average, timed as "
		    "each ran, plus %.2f us CPU %s (+%.2f us once a process "
		    "has had children), x%.2f in wall time (waits for a CPU)\n",
		    (double)q->timed_ns / (double)q->timed_runs / 1e3,
		    q->cal[BASH_COST_BASE].cpu_ns / 1e3, cal_how(q),
		    (q->cal[BASH_COST_TTY].cpu_ns + q->cal[BASH_COST_JOBS].cpu_ns) / 1e3,
		    q->stretch_milli / 1e3);
	else if (q->calibrated)
		say(f, W,
		    "times exclude the trap's own cost, %s: %.2f us CPU per "
		    "command (+%.2f us once a process has had children), x%.2f in wall time "
		    "(waits for a CPU)\n",
		    cal_how(q), q->cal[BASH_COST_BASE].cpu_ns / 1e3,
		    (q->cal[BASH_COST_TTY].cpu_ns + q->cal[BASH_COST_JOBS].cpu_ns) / 1e3,
		    q->stretch_milli / 1e3);
	else
		say(f, W, "times include the trap's own cost (not measured)\n");
	if (q->trap_lost_streams)
		say(f, W,
		    "note: %llu bash process%s replaced or removed tsarun's DEBUG trap (trap ... "
		    "DEBUG): %s commands after that are not in the profile\n",
		    (unsigned long long)q->trap_lost_streams, q->trap_lost_streams == 1 ? "" : "es",
		    q->trap_lost_streams == 1 ? "its" : "their");
	if (q->functrace_off_streams)
		say(f, W,
		    "note: %llu bash process%s turned functrace off (set +T): functions, command "
		    "substitutions and subshells run after that are not in the profile\n",
		    (unsigned long long)q->functrace_off_streams,
		    q->functrace_off_streams == 1 ? "" : "es");
	if (q->deep_streams)
		say(f, W,
		    "note: %llu bash process%s nested functions, sourced files and evals "
		    "deeper than %d: what ran deeper is folded into the deepest frame kept\n",
		    (unsigned long long)q->deep_streams, q->deep_streams == 1 ? "" : "es",
		    TSA_MAX_FRAMES);
	if (q->silent_bash)
		say(f, W,
		    "warning: %llu bash process%s of the tree recorded nothing (in posix mode: "
		    "bash --posix, POSIXLY_CORRECT; BASH_ENV cleared; --bash-no-follow; or "
		    "killed before its first command): %s commands are not in the profile\n",
		    (unsigned long long)q->silent_bash, q->silent_bash == 1 ? "" : "es",
		    q->silent_bash == 1 ? "its" : "their");
	if (q->limit_drops)
		say(f, W,
		    "warning: %llu bash record%s dropped at the profile's memory limits (%d text "
		    "ids and %d frames a bash process, %u MiB in all): the script sent more than "
		    "a real one does (forged records?), and the profile is incomplete\n",
		    (unsigned long long)q->limit_drops, q->limit_drops == 1 ? " was" : "s were",
		    BASHPROF_STREAM_IDS, BASHPROF_STREAM_LEVELS, BASHPROF_MEM_MAX >> 20);
	if (q->lost_records || q->bad_records || q->bad_datagrams || q->unterminated)
		say(f, W,
		    "records: %llu lost, %llu malformed, %llu bad datagrams, %llu processes "
		    "killed before their last records\n",
		    (unsigned long long)q->lost_records, (unsigned long long)q->bad_records,
		    (unsigned long long)q->bad_datagrams, (unsigned long long)q->unterminated);
}
