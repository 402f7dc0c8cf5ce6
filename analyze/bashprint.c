// SPDX-License-Identifier: MIT
/* The bash profile as folded stacks and as a readable tree. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "bashprof.h"
#include "flame.h"
#include "run.h"
#include "tsarun.h"

/* A one-line, bounded rendering of a text: newlines and tabs become spaces. */
static void flat(char *out, size_t outlen, const char *s, bool folded)
{
	size_t j = 0;

	for (size_t i = 0; s && s[i] && j + 1 < outlen; i++) {
		char c = s[i];

		if (c == '\n' || c == '\t' || c == '\r')
			c = ' ';
		if (folded && c == ';')
			c = ',';
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

		if (self / 1000 == 0)
			continue;
		folded_path(n, path, sizeof(path));
		if (fprintf(f, "%s %llu\n", path, (unsigned long long)(self / 1000)) < 0)
			return -1;
	}
	return 0;
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
	flame__set_category(f, FL_FRAME, "function, source, eval", FLAME_PAL_ORANGE);
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

static void print_node(FILE *f, const struct bash_node *n, const char *prefix, bool last,
		       uint64_t total, const struct bashprof_print_opts *o)
{
	char lbl[BASHPROF_LABEL_MAX + 32], w[32], c[32], pre[512], where[24];
	uint64_t parent = n->parent ? n->parent->wall_ns : 0;

	if (o->max_depth && n->depth > o->max_depth)
		return;
	if (n->parent && o->min_percent > 0 && pct(n->wall_ns, total) < o->min_percent)
		return;
	label(lbl, sizeof(lbl) - 24, n, false);
	fmt_dur(w, sizeof(w), n->wall_ns);
	fmt_dur(c, sizeof(c), n->cpu_ns);
	if (n->line)
		snprintf(where, sizeof(where), "%u", n->line);
	else
		snprintf(where, sizeof(where), "-");
	if (n->parent && (is_async(n) || (is_async(n->parent) && n->parent->text[0])))
		/*
		 * It ran beside its parent, not within it: no share of the parent's
		 * time; nor has what a background job ran below the node of its
		 * launch (a node of the job's own process has no text: its life).
		 */
		fprintf(f, "%6s %5u %11s %6.1f%% %7s %11s %8llu  %s%s%s", where, n->depth, w,
			pct(n->wall_ns, total), "-", c, (unsigned long long)n->count, prefix,
			last ? "└─" : "├─", lbl);
	else if (n->parent)
		fprintf(f, "%6s %5u %11s %6.1f%% %6.1f%% %11s %8llu  %s%s%s", where, n->depth, w,
			pct(n->wall_ns, total), pct(n->wall_ns, parent), c,
			(unsigned long long)n->count, prefix, last ? "└─" : "├─", lbl);
	else
		fprintf(f, "%6s %5u %11s %6.1f%% %7s %11s %8llu  %s", where, n->depth, w,
			pct(n->wall_ns, total), "", c, (unsigned long long)n->count, lbl);
	if (n->kind == BK_FUNCTION || n->kind == BK_SOURCE)
		fprintf(f, "  [%s]", n->kind == BK_FUNCTION ? "function" : "source");
	fputc('\n', f);
	snprintf(pre, sizeof(pre), "%s%s", prefix, n->parent ? (last ? "  " : "│ ") : "");
	for (uint32_t i = 0; i < n->nprocs; i++) {
		const struct bash_procs *p = &n->procs[i];
		char pw[32], pc[32], pr[32], ps[32], pd[32], rest[96];

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
		fprintf(f,
			"%6s %5s %11s %7s %7s %11s %8u  %s  ↳ %s (pid %u%s%s): %s = %s CPU + %s "
			"runq + %s\n",
			"", "", "", "", "", "", p->count, pre, p->comm, p->first_pid,
			p->count > 1 ? ", ..." : "",
			p->with_bash ? ", with the script's commands before its exec" : "", pw, pc,
			pr, rest);
	}
	for (const struct bash_node *ch = n->child; ch; ch = ch->next)
		print_node(f, ch, pre, ch->next == NULL, total, o);
}

void bashprof__print(const struct bashprof *bp, FILE *f, const struct bashprof_print_opts *o)
{
	const struct bash_total *t = bashprof__total(bp);
	const struct bash_quality *q = bashprof__quality(bp);
	char sw[32], tw[32], cpu[32];

	fmt_dur(sw, sizeof(sw), t->self_wall_ns);
	fmt_dur(tw, sizeof(tw), t->total_wall_ns);
	fmt_dur(cpu, sizeof(cpu), t->cpu_ns);
	fprintf(f, "\nbash profile (%s): %llu commands\n",
		q->fallback ? "pure-bash trap: the builtin could not be loaded"
			    : "tsarun-trap builtin",
		(unsigned long long)t->commands);
	if (q->fallback)
		fprintf(f, "note: with the pure-bash trap, %s\n", BASHPROF_FALLBACK_LIMITS);
	fprintf(f, "%6s %5s %11s %7s %7s %11s %8s  %s\n", "LINE", "DEPTH", "WALL", "%TOTAL",
		"%PARENT", "CPU", "COUNT", "COMMAND");
	print_node(f, bashprof__root(bp), "", true, t->self_wall_ns, o);
	fprintf(f, "SELF RUN TIME:  %s   (the script's own wall time)\n", sw);
	fprintf(f, "TOTAL RUN TIME: %s   (every bash process of the tree, summed)\n", tw);
	fprintf(f, "TOTAL CPU TIME: %s\n", cpu);
	if (q->calibrated && q->timed_runs)
		fprintf(f,
			"times exclude the trap's own cost: %.2f us a command on average, timed as "
			"each ran, plus %.2f us CPU measured at start-up (+%.2f us once a process "
			"has had children), x%.2f in wall time (waits for a CPU)\n",
			(double)q->timed_ns / (double)q->timed_runs / 1e3,
			q->cal[BASH_COST_BASE].cpu_ns / 1e3,
			(q->cal[BASH_COST_TTY].cpu_ns + q->cal[BASH_COST_JOBS].cpu_ns) / 1e3,
			q->stretch_milli / 1e3);
	else if (q->calibrated)
		fprintf(f,
			"times exclude the trap's own cost, measured at start-up: %.2f us CPU per "
			"command (+%.2f us once a process has had children), x%.2f in wall time "
			"(waits for a CPU)\n",
			q->cal[BASH_COST_BASE].cpu_ns / 1e3,
			(q->cal[BASH_COST_TTY].cpu_ns + q->cal[BASH_COST_JOBS].cpu_ns) / 1e3,
			q->stretch_milli / 1e3);
	else
		fprintf(f, "times include the trap's own cost (not measured)\n");
	if (q->trap_lost_streams)
		fprintf(
		    f,
		    "note: %llu bash process%s replaced or removed tsarun's DEBUG trap (trap ... "
		    "DEBUG): %s commands after that are not in the profile\n",
		    (unsigned long long)q->trap_lost_streams, q->trap_lost_streams == 1 ? "" : "es",
		    q->trap_lost_streams == 1 ? "its" : "their");
	if (q->functrace_off_streams)
		fprintf(
		    f,
		    "note: %llu bash process%s turned functrace off (set +T): functions, command "
		    "substitutions and subshells run after that are not in the profile\n",
		    (unsigned long long)q->functrace_off_streams,
		    q->functrace_off_streams == 1 ? "" : "es");
	if (q->lost_records || q->bad_records || q->bad_datagrams || q->unterminated)
		fprintf(f,
			"records: %llu lost, %llu malformed, %llu bad datagrams, %llu processes "
			"killed before their last records\n",
			(unsigned long long)q->lost_records, (unsigned long long)q->bad_records,
			(unsigned long long)q->bad_datagrams, (unsigned long long)q->unterminated);
}
