// SPDX-License-Identifier: MIT
/* Where the change came from, as the gate's reports say it (gate_report.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "explain.h"
#include "gate.h"
#include "gate_report.h"
#include "metrics.h"
#include "textsafe.h"

#define C_BOLD	"\033[1m"
#define C_DIM	"\033[2m"
#define C_RESET "\033[0m"

#define TERM_TOP 5 /* blamed parts shown at the lead level */
#define TERM_SUB 3 /* ... at the others */

static const char *fmt_signed(double ns, char *buf, size_t len)
{
	char v[32];

	if (isnan(ns)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	gate_fmt_value(METRIC_WALL, fabs(ns), v, sizeof(v));
	snprintf(buf, len, "%s%s", ns < 0 ? "-" : "+", v);
	return buf;
}

static const char *fmt_share(double s, char *buf, size_t len)
{
	if (isnan(s))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", s * 100);
	return buf;
}

/* The gate's metric of an explained one, or NULL (wall explained without being gated). */
static const struct gate_metric *gated(const struct comparison *c, enum metric_id m)
{
	for (int i = 0; i < c->nmetrics; i++)
		if (c->metrics[i].metric == m)
			return &c->metrics[i];
	return NULL;
}

/*
 * Worth a section when the gate failed or warned (a passing gate has nothing
 * to explain; the artifact still holds it): a metric that did, or one with a
 * part beyond noise (wall, shown for context).
 */
static bool worth(const struct comparison *c, const struct explain_metric *em)
{
	const struct gate_metric *gm = gated(c, em->metric);
	int l = explain_lead_level(em);

	if (c->outcome == GATE_OK)
		return false;
	if (gm && gm->outcome != GATE_OK)
		return true;
	return em->available && l >= 0 && em->level[l].nblamed > 0;
}

static void term_level(FILE *f, const struct explain_metric *em, int l, int top, bool color)
{
	const struct explain_levelset *ls = &em->level[l];
	char d[40], sh[16], lo[40], hi[40], iv[96], lab[1400];
	int shown = 0;

	fprintf(f, "    by %s (%zu part%s", explain_level_name(l), ls->nparts,
		ls->nparts == 1 ? "" : "s");
	if (em->judged)
		fprintf(f, ", %zu of %zu that moved judged at %.2f%% each", ls->tested,
			ls->compared, ls->confidence * 100);
	fprintf(f, "):\n");
	for (size_t i = 0; i < ls->nparts && shown < top; i++) {
		const struct explain_part *p = &ls->parts[i];

		if (!p->blamed && em->judged)
			break;
		if (p->delta == 0)
			break;
		if (isnan(p->low))
			snprintf(iv, sizeof(iv), "%s", em->judged ? "" : "(not judged)");
		else
			snprintf(iv, sizeof(iv), "[%s, %s]", fmt_signed(p->low, lo, sizeof(lo)),
				 fmt_signed(p->high, hi, sizeof(hi)));
		fprintf(f, "      %11s %6s  %-26s ", fmt_signed(p->delta, d, sizeof(d)),
			fmt_share(p->share, sh, sizeof(sh)), iv);
		textsafe_fput(f, textsafe_term, explain_part_label(p, l, lab, sizeof(lab)),
			      TEXTSAFE_NUL);
		fputc('\n', f);
		shown++;
	}
	if (shown < (int)ls->nblamed)
		fprintf(f, "      %s(%zu more beyond noise: see the artifact)%s\n",
			color ? C_DIM : "", ls->nblamed - (size_t)shown, color ? C_RESET : "");
	if (em->judged)
		fprintf(f, "      %11s %6s  %-26s within noise (%zu part%s that changed)\n",
			fmt_signed(ls->noise_ns, d, sizeof(d)),
			fmt_share(em->total ? ls->noise_ns / em->total : NAN, sh, sizeof(sh)), "",
			ls->nnoise, ls->nnoise == 1 ? "" : "s");
	fprintf(f, "      %11s %6s  %-26s %s\n", fmt_signed(ls->remainder_ns, d, sizeof(d)),
		fmt_share(em->total ? ls->remainder_ns / em->total : NAN, sh, sizeof(sh)), "",
		explain_remainder_name(em->metric));
}

/* The explained metrics in the order to report them: the gated ones first, as the gate lists them. */
static int report_order(const struct comparison *c, const struct explain_metric *out[METRIC_NR])
{
	const struct explain *e = c->explain;
	int k = 0;

	for (int i = 0; i < c->nmetrics; i++) {
		const struct explain_metric *em = explain_find(e, c->metrics[i].metric);

		if (em)
			out[k++] = em;
	}
	for (int i = 0; i < e->n; i++)
		if (!gated(c, e->m[i].metric))
			out[k++] = &e->m[i];
	return k;
}

void gate_report_explain(FILE *f, const struct comparison *c, bool color)
{
	const char *b = color ? C_BOLD : "", *r = color ? C_RESET : "";
	const struct explain_metric *order[METRIC_NR];
	int n;

	if (!c->explain)
		return;
	n = report_order(c, order);
	for (int i = 0; i < n; i++) {
		const struct explain_metric *em = order[i];
		char tot[40], bm[32], nm[32];
		int lead = explain_lead_level(em);

		if (!worth(c, em)) {
			if (c->outcome != GATE_OK && em->available && gated(c, em->metric))
				fprintf(
				    f,
				    "  %swhere it moved: %s: no part changed beyond its noise%s\n",
				    color ? C_DIM : "", metric_def(em->metric)->name, r);
			continue;
		}
		if (!em->available) {
			fprintf(f, "  %swhere it moved%s: %s: not explained: ", b, r,
				metric_def(em->metric)->name);
			textsafe_fput(f, textsafe_term, em->why, TEXTSAFE_NUL);
			fputc('\n', f);
			continue;
		}
		fprintf(f,
			"  %swhere it moved%s: %s %s per run (median %s -> %s; %zu and %zu runs)\n",
			b, r, metric_def(em->metric)->name, fmt_signed(em->total, tot, sizeof(tot)),
			gate_fmt_value(em->metric, em->base_median, bm, sizeof(bm)),
			gate_fmt_value(em->metric, em->new_median, nm, sizeof(nm)), em->nb, em->nn);
		fprintf(f, "    %s", color ? C_DIM : "");
		textsafe_fput(f, textsafe_term, em->scope, TEXTSAFE_NUL);
		if (em->root) {
			fputs(" (", f);
			textsafe_fput(f, textsafe_term, em->root, TEXTSAFE_NUL);
			fputs(")", f);
		}
		if (em->judged && em->floor_ns > 0)
			fprintf(f,
				"; a part is blamed when its whole interval lies %s or more "
				"from zero, beyond its own run-to-run noise%s\n",
				fmt_signed(em->floor_ns, tot, sizeof(tot)) + 1, r);
		else if (em->judged)
			fprintf(f,
				"; a part is blamed when its whole interval lies beyond zero, "
				"beyond its own run-to-run noise%s\n",
				r);
		else
			fprintf(f, "; fewer than %d runs a side: parts are not told from noise%s\n",
				EXPLAIN_MIN_RUNS, r);
		if (lead < 0)
			continue;
		term_level(f, em, lead, TERM_TOP, color);
		if (lead != EXPLAIN_THREAD && em->level[EXPLAIN_THREAD].available)
			term_level(f, em, EXPLAIN_THREAD, TERM_SUB, color);
		if (em->level[EXPLAIN_PROCESS].available && em->level[EXPLAIN_PROCESS].nparts > 1)
			term_level(f, em, EXPLAIN_PROCESS, TERM_SUB, color);
	}
}

/* The gist for a failing metric's annotation and JUnit message: its top three parts. */
const char *gate_report_explain_gist(const struct comparison *c, enum metric_id m, char *buf,
				     size_t len)
{
	const struct explain_metric *em = explain_find(c->explain, m);
	char g[1600], tot[40];

	if (!em) {
		buf[0] = '\0';
		return buf;
	}
	explain_gist(em, 3, g, sizeof(g));
	snprintf(buf, len, "Where it moved (%s %s per run): %s", metric_def(m)->name,
		 em->available ? fmt_signed(em->total, tot, sizeof(tot)) : "n/a", g);
	return buf;
}

static void md_text(FILE *f, const char *s)
{
	textsafe_fput(f, textsafe_md, s, TEXTSAFE_NUL);
}

static void md_code(FILE *f, const char *s)
{
	textsafe_fput(f, textsafe_md_code, s, TEXTSAFE_NUL);
}

static void md_level(FILE *f, const struct explain_metric *em, int l, int top)
{
	const struct explain_levelset *ls = &em->level[l];
	char d[40], sh[16], lo[40], hi[40], lab[1400];
	int shown = 0;

	fprintf(f,
		"\nBy %s (%zu parts):\n\n| Change | Share | Interval | Part |\n|--:|--:|:--|:--|\n",
		explain_level_name(l), ls->nparts);
	for (size_t i = 0; i < ls->nparts && shown < top; i++) {
		const struct explain_part *p = &ls->parts[i];

		if ((!p->blamed && em->judged) || p->delta == 0)
			break;
		fprintf(f, "| %s | %s | ", fmt_signed(p->delta, d, sizeof(d)),
			fmt_share(p->share, sh, sizeof(sh)));
		if (!isnan(p->low))
			fprintf(f, "[%s, %s]", fmt_signed(p->low, lo, sizeof(lo)),
				fmt_signed(p->high, hi, sizeof(hi)));
		fprintf(f, " | ");
		md_text(f, explain_part_label(p, l, lab, sizeof(lab)));
		if (p->stack && l == EXPLAIN_STACK) {
			fprintf(f, "<br>");
			md_code(f, p->stack);
		}
		fprintf(f, " |\n");
		shown++;
	}
	if (em->judged)
		fprintf(f, "| %s | %s | | within noise (%zu parts that changed) |\n",
			fmt_signed(ls->noise_ns, d, sizeof(d)),
			fmt_share(em->total ? ls->noise_ns / em->total : NAN, sh, sizeof(sh)),
			ls->nnoise);
	fprintf(f, "| %s | %s | | ", fmt_signed(ls->remainder_ns, d, sizeof(d)),
		fmt_share(em->total ? ls->remainder_ns / em->total : NAN, sh, sizeof(sh)));
	md_text(f, explain_remainder_name(em->metric));
	fprintf(f, " |\n");
}

void gate_report_explain_markdown(FILE *f, const struct comparison *c)
{
	const struct explain_metric *order[METRIC_NR];
	int n;

	if (!c->explain)
		return;
	n = report_order(c, order);
	for (int i = 0; i < n; i++) {
		const struct explain_metric *em = order[i];
		char tot[40];
		int lead = explain_lead_level(em);

		if (!worth(c, em))
			continue;
		fprintf(f, "#### Where it moved: %s", metric_def(em->metric)->name);
		if (!em->available) {
			fprintf(f, "\n\nNot explained: ");
			md_text(f, em->why);
			fprintf(f, "\n\n");
			continue;
		}
		fprintf(f, " %s per run\n\n", fmt_signed(em->total, tot, sizeof(tot)));
		md_text(f, em->scope);
		if (em->root) {
			fprintf(f, " (");
			md_code(f, em->root);
			fprintf(f, ")");
		}
		fprintf(f, "; %zu and %zu runs.", em->nb, em->nn);
		if (em->judged)
			fprintf(f,
				" A part is blamed when its whole interval lies %s or more from "
				"zero, beyond its own run-to-run noise.\n",
				fmt_signed(em->floor_ns, tot, sizeof(tot)) + 1);
		else
			fprintf(f, " Fewer than %d runs a side: parts are not told from noise.\n",
				EXPLAIN_MIN_RUNS);
		if (lead >= 0)
			md_level(f, em, lead, TERM_TOP);
		if (lead != EXPLAIN_THREAD && em->level[EXPLAIN_THREAD].available)
			md_level(f, em, EXPLAIN_THREAD, TERM_SUB);
		fputc('\n', f);
	}
}
