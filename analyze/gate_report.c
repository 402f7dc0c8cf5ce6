// SPDX-License-Identifier: MIT
/* Text, Markdown and JUnit reports of the series and the gate. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gate.h"
#include "gate_report.h"
#include "metrics.h"
#include "run.h"
#include "status.h"
#include "table.h"
#include "termwrap.h"
#include "textsafe.h"

#define C_BOLD	 "\033[1m"
#define C_DIM	 "\033[2m"
#define C_RED	 "\033[31m"
#define C_GREEN	 "\033[32m"
#define C_YELLOW "\033[33m"
#define C_RESET	 "\033[0m"

static const char *fmt_pct(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", v * 100);
	return buf;
}

/*
 * The series' and the gate's tables, laid out to a terminal's width as the
 * thread table is (table.c): a first column as wide as its widest name, then
 * fixed columns; while the line is wider than the terminal, the least useful
 * columns go (in drop[]'s order), and a line under the table names them.
 * The last column is left-aligned and as wide as its widest cell (last_w).
 * Width 0 (a file, a pipe, --wide): every column.
 */
struct gcols {
	int n;
	const char *const *name;
	const size_t *w;
	const int *drop;
	int ndrop;
	size_t first_w;
	size_t last_w;	   /* 0: the last column is right-aligned in w[] like the others */
	const size_t *gap; /* spaces before each column (NULL: one) */
	unsigned left;	   /* columns left-aligned (bit i) */
	bool off[8];
};

static size_t gcols_gap(const struct gcols *g, int i)
{
	return g->gap ? g->gap[i] : 1;
}

static size_t gcols_total(const struct gcols *g)
{
	size_t t = 2 + g->first_w;

	for (int i = 0; i < g->n; i++)
		if (!g->off[i])
			t += gcols_gap(g, i) + (i == g->n - 1 && g->last_w ? g->last_w : g->w[i]);
	return t;
}

static void gcols_fit(struct gcols *g, size_t width)
{
	for (int d = 0; width && d < g->ndrop && gcols_total(g) > width; d++)
		g->off[g->drop[d]] = true;
}

static void gcols_print(FILE *f, const struct gcols *g, const char *first, const char *const *cell,
			const char *last_pre, const char *last_post)
{
	fprintf(f, "  %-*s", (int)g->first_w, first);
	for (int i = 0; i < g->n; i++) {
		if (g->off[i])
			continue;
		fprintf(f, "%*s", (int)gcols_gap(g, i), "");
		if (i == g->n - 1 && g->last_w)
			fprintf(f, "%s%s%s", last_pre, cell[i], last_post);
		else if (g->left & 1u << i)
			fprintf(f, "%-*s", (int)g->w[i], cell[i]);
		else
			fprintf(f, "%*s", (int)g->w[i], cell[i]);
	}
	fputc('\n', f);
}

static void gcols_head(FILE *f, const struct gcols *g, const char *first, const char *b,
		       const char *r)
{
	fputs(b, f);
	/* The header's last cell carries the reset: no colour runs into the rows. */
	gcols_print(f, g, first, g->name, "", r);
	if (!g->last_w)
		fputs(r, f);
}

static void gcols_row(FILE *f, const struct gcols *g, const char *first, const char *const *cell,
		      const char *last_pre, const char *last_post)
{
	gcols_print(f, g, first, cell, last_pre, last_post);
}

static void gcols_left_out(FILE *f, const struct gcols *g, size_t width)
{
	char what[128] = "";
	size_t len = 0;

	for (int i = 0; i < g->n; i++)
		if (g->off[i])
			len += snprintf(what + len, sizeof(what) - len, "%s%s", len ? ", " : "",
					g->name[i]);
	if (len)
		fprintf(f, "  (left out for %zu columns: %s; see --wide)\n", width, what);
}

/* Text of a terminal line from outside (a command, a file name): cut with "..." past avail. */
static void fput_cut(FILE *f, const char *s, size_t avail)
{
	size_t n = strlen(s), w;
	char *safe = malloc(TEXTSAFE_SIZE(n));

	if (!safe)
		return;
	textsafe_term(safe, TEXTSAFE_SIZE(n), s, n);
	w = textsafe_term_width(safe, strlen(safe));
	if (avail && w > avail) {
		size_t sz = TEXTSAFE_SIZE(n) + avail;
		char *cut = malloc(sz);

		if (cut) {
			size_t k = textsafe_term_cell(cut, sz, s, n, avail > 6 ? avail - 3 : 3);

			while (k && cut[k - 1] == ' ')
				k--;
			fprintf(f, "%.*s...", (int)k, cut);
			free(cut);
		}
	} else {
		fputs(safe, f);
	}
	free(safe);
}

/* A line of prose: wrapped at word boundaries to width (0: as it is). */
static void fput_wrapped(FILE *f, size_t width, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fput_wrapped(FILE *f, size_t width, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	termwrap_fputs(f, line, width);
}

void gate_report_runs(FILE *f, const struct run *runs, size_t n, bool color, size_t width)
{
	struct metric_summary ms[METRIC_NR];
	size_t warm = 0, failed = 0;
	int counted;

	counted = metrics_summarize(runs, n, ms);
	if (counted < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		warm += runs[i].warmup;
		failed += !runs[i].warmup && !metric_run_counts(&runs[i]);
	}
	{
		char wu[48] = "", nc[48] = "";

		if (warm)
			snprintf(wu, sizeof(wu), " after %zu warmup%s", warm, warm == 1 ? "" : "s");
		if (failed)
			snprintf(nc, sizeof(nc), " (%zu more did not complete)", failed);
		fputc('\n', f);
		fput_wrapped(f, width,
			     "  %d measured run%s%s%s; every run's figures are in the artifact, "
			     "thread detail of the last\n",
			     counted, counted == 1 ? "" : "s", wu, nc);
	}
	/* The last run's table says it for that run; the summary includes the others. */
	for (size_t i = 0; i + 1 < n; i++) {
		const struct run_quality *q = &runs[i].quality;

		if (!q->unsettled && !q->lost.records)
			continue;
		fput_wrapped(f, width,
			     "%s  warning: run %zu of %zu%s: %llu thread%s without a final record, "
			     "%llu records lost; that run's eBPF figures lack them%s\n",
			     color ? C_YELLOW : "", i + 1, n, runs[i].warmup ? " (warmup)" : "",
			     (unsigned long long)q->unsettled, q->unsettled == 1 ? "" : "s",
			     (unsigned long long)q->lost.records, color ? C_RESET : "");
	}
	if (!counted)
		return;
	enum { RC_MEDIAN, RC_MEAN, RC_STDDEV, RC_CV, RC_MIN, RC_MAX, RC_OUTLIERS, RC_NR };
	static const char *const rname[RC_NR] = {"MEDIAN", "MEAN", "STDDEV",  "CV",
						 "MIN",	   "MAX",  "OUTLIERS"};
	static const size_t rw[RC_NR] = {11, 11, 11, 7, 11, 11, 8};
	/* Least useful first: the outliers' count, the mean beside the median, the spread. */
	static const int rdrop[] = {RC_OUTLIERS, RC_MEAN, RC_STDDEV};
	struct gcols gc = {.n = RC_NR,
			   .name = rname,
			   .w = rw,
			   .drop = rdrop,
			   .ndrop = sizeof(rdrop) / sizeof(rdrop[0])};

	/* Files and pipes keep the long-standing 22 columns; a terminal gets the names' width. */
	gc.first_w = width ? strlen("METRIC") : 22;
	for (int m = 0; m < METRIC_NR; m++)
		if (strlen(metric_def(m)->name) > gc.first_w)
			gc.first_w = strlen(metric_def(m)->name);
	gcols_fit(&gc, width);
	gcols_head(f, &gc, "METRIC", color ? C_BOLD : "", color ? C_RESET : "");
	for (int m = 0; m < METRIC_NR; m++) {
		char cell[RC_NR][24], line[512];
		const char *cells[RC_NR];

		if (!ms[m].available) {
			snprintf(line, sizeof(line), "%s  %-*s n/a: %s%s\n", color ? C_DIM : "",
				 (int)gc.first_w, metric_def(m)->name, ms[m].why,
				 color ? C_RESET : "");
			termwrap_fputs(f, line, width);
			continue;
		}
		/* One unit a row, the median's: 1.677 s beside 133.17 ms read as apples and pears. */
		gate_fmt_value_as(m, ms[m].median, ms[m].median, cell[RC_MEDIAN], 24);
		gate_fmt_value_as(m, ms[m].mean, ms[m].median, cell[RC_MEAN], 24);
		if (isnan(ms[m].stddev))
			snprintf(cell[RC_STDDEV], 24, "-");
		else
			gate_fmt_value_as(m, ms[m].stddev, ms[m].median, cell[RC_STDDEV], 24);
		fmt_pct(ms[m].cv, cell[RC_CV], 24);
		gate_fmt_value_as(m, ms[m].min, ms[m].median, cell[RC_MIN], 24);
		gate_fmt_value_as(m, ms[m].max, ms[m].median, cell[RC_MAX], 24);
		snprintf(cell[RC_OUTLIERS], 24, "%zu", ms[m].outliers);
		for (int i = 0; i < RC_NR; i++)
			cells[i] = cell[i];
		gcols_row(f, &gc, metric_def(m)->name, cells, "", "");
	}
	gcols_left_out(f, &gc, width);
}

static const char *outcome_color(enum gate_outcome o)
{
	return o == GATE_FAIL ? C_RED : o == GATE_WARN ? C_YELLOW : C_GREEN;
}

/* "+25.0% [+24.6%, +25.4%]" */
static const char *fmt_change_ci(const struct gate_metric *gm, char *buf, size_t len)
{
	char a[24], lo[24], hi[24];

	gate_fmt_change(gm->ratio, a, sizeof(a));
	if (isnan(gm->ci_low))
		snprintf(buf, len, "%s [no interval]", a);
	else
		snprintf(buf, len, "%s [%s, %s]", a, gate_fmt_change(gm->ci_low, lo, sizeof(lo)),
			 gate_fmt_change(gm->ci_high, hi, sizeof(hi)));
	return buf;
}

static const struct gate_metric *worst(const struct comparison *c)
{
	const struct gate_metric *w = NULL;

	for (int i = 0; i < c->nmetrics; i++) {
		const struct gate_metric *gm = &c->metrics[i];

		if (!w || gm->outcome > w->outcome ||
		    (gm->outcome == w->outcome && gm->verdict > w->verdict))
			w = gm;
	}
	return w;
}

void gate_report_headline(const struct comparison *c, char *buf, size_t len)
{
	const struct gate_metric *w = worst(c);
	char ch[64];

	if (!w) {
		snprintf(buf, len, "no metric gated");
		return;
	}
	fmt_change_ci(w, ch, sizeof(ch));
	switch (w->verdict) {
	case GATE_REGRESSION:
		snprintf(buf, len, "%s: %s %s is over the +%g%% threshold%s",
			 w->outcome == GATE_FAIL ? "regression" : "regression (a warning)",
			 metric_def(w->metric)->name, ch, w->threshold * 100,
			 w->outcome == GATE_FAIL ? "" : ", see the notes");
		break;
	case GATE_INCONCLUSIVE:
		snprintf(buf, len, "inconclusive%s: %s %s against the +%g%% threshold",
			 w->outcome == GATE_FAIL ? " (--inconclusive fail)" : "",
			 metric_def(w->metric)->name, ch, w->threshold * 100);
		break;
	case GATE_IMPROVED:
		snprintf(buf, len, "improved: %s %s", metric_def(w->metric)->name, ch);
		break;
	case GATE_PASS:
		snprintf(buf, len, "pass: %s %s is within the +%g%% threshold",
			 metric_def(w->metric)->name, ch, w->threshold * 100);
		break;
	}
}

void gate_report_comparison(FILE *f, const struct comparison *c, const char *command, bool color,
			    size_t width)
{
	const char *b = color ? C_BOLD : "", *r = color ? C_RESET : "";
	char head[512];
	enum { CC_BASE, CC_NEW, CC_RUNS, CC_CHANGE, CC_TH, CC_VERDICT, CC_NR };
	static const char *const cname[CC_NR] = {
	    "BASELINE", "NEW", "RUNS", "CHANGE [95% interval]", "THRESHOLD", "VERDICT"};
	static const size_t cw[CC_NR] = {11, 11, 6, 26, 9, 7};
	static const size_t cgap[CC_NR] = {1, 1, 1, 2, 1, 2};
	/* Least useful first: the run counts, the threshold (the headline says it), the baseline. */
	static const int cdrop[] = {CC_RUNS, CC_TH, CC_BASE};
	struct gcols gc = {.n = CC_NR,
			   .name = cname,
			   .w = cw,
			   .gap = cgap,
			   .left = 1u << CC_CHANGE,
			   .drop = cdrop,
			   .ndrop = sizeof(cdrop) / sizeof(cdrop[0])};
	char cell[METRIC_NR][CC_NR][64];
	int nm = c->nmetrics < METRIC_NR ? c->nmetrics : METRIC_NR;

	/* Files and pipes keep the long-standing 22 columns; a terminal gets the names' width. */
	gc.first_w = width ? strlen("METRIC") : 22;
	gc.last_w = strlen("VERDICT");
	for (int i = 0; i < nm; i++) {
		const struct gate_metric *gm = &c->metrics[i];
		size_t l = strlen(metric_def(gm->metric)->name);

		if (l > gc.first_w)
			gc.first_w = l;
		/* Baseline and new in the baseline's unit. */
		gate_fmt_value_as(gm->metric, gm->base_median, gm->base_median, cell[i][CC_BASE],
				  64);
		gate_fmt_value_as(gm->metric, gm->new_median, gm->base_median, cell[i][CC_NEW], 64);
		snprintf(cell[i][CC_RUNS], 64, "%zu/%zu", gm->nb, gm->nn);
		fmt_change_ci(gm, cell[i][CC_CHANGE], 64);
		snprintf(cell[i][CC_TH], 64, "+%g%%", gm->threshold * 100);
		snprintf(cell[i][CC_VERDICT], 64, "%s%s", gate_verdict_name(gm->verdict),
			 gm->outcome == GATE_WARN && gm->verdict != GATE_INCONCLUSIVE ? " (warning)"
			 : gm->outcome == GATE_FAIL && gm->verdict == GATE_INCONCLUSIVE ? " (fail)"
											: "");
		if (strlen(cell[i][CC_VERDICT]) > gc.last_w)
			gc.last_w = strlen(cell[i][CC_VERDICT]);
	}
	gcols_fit(&gc, width);

	fprintf(f, "\n%sregression gate%s: ", b, r);
	/* The command and the baseline's name share what the line has left. */
	{
		const char *against =
		    !strcmp(c->baseline_kind, "command") ? "the baseline command" : "the baseline";
		size_t fixed = strlen("regression gate: ") + strlen(" against ") + strlen(against) +
			       1 + (c->paired ? strlen(" (paired: runs interleaved)") : 0);
		size_t avail = width > fixed + 24 ? width - fixed : (width ? 24 : 0);

		fput_cut(f, command, avail ? avail - avail / 3 : 0);
		fprintf(f, " against %s ", against);
		fput_cut(f, c->baseline_name, avail ? avail / 3 : 0);
	}
	if (c->paired)
		fprintf(f, " (paired: runs interleaved)");
	fputc('\n', f);
	{
		char added[64] = "";

		if (c->runs_added)
			snprintf(added, sizeof(added), "; %u run%s added while inconclusive",
				 c->runs_added, c->runs_added == 1 ? "" : "s");
		fput_wrapped(f, width,
			     "  ratio of medians (new / baseline), %.0f%% bootstrap interval (%u "
			     "resamples, seed %llu)%s\n",
			     c->confidence * 100, c->resamples, (unsigned long long)c->seed, added);
	}
	gcols_head(f, &gc, "METRIC", b, r);
	for (int i = 0; i < c->nmetrics; i++) {
		const struct gate_metric *gm = &c->metrics[i];
		const char *cells[CC_NR];

		if (i >= nm)
			break;
		for (int k = 0; k < CC_NR; k++)
			cells[k] = cell[i][k];
		gcols_row(f, &gc, metric_def(gm->metric)->name, cells,
			  color ? outcome_color(gm->outcome) : "", r);
		if (gm->note[0]) {
			size_t n = strlen(gm->note);
			char *safe = malloc(TEXTSAFE_SIZE(n));

			if (safe) {
				textsafe_term(safe, TEXTSAFE_SIZE(n), gm->note, n);
				fput_wrapped(f, width, "  %-*s %s\n", (int)gc.first_w, "", safe);
				free(safe);
			}
		}
	}
	gcols_left_out(f, &gc, width);
	gate_report_headline(c, head, sizeof(head));
	fput_wrapped(f, width, "  %sgate %s%s: %s\n", color ? outcome_color(c->outcome) : "",
		     c->outcome == GATE_FAIL   ? "FAILED"
		     : c->outcome == GATE_WARN ? "passed with a warning"
					       : "passed",
		     r, head);
	for (int i = 0; i < c->nnotes; i++) {
		size_t n = strlen(c->notes[i]);
		char *safe = malloc(TEXTSAFE_SIZE(n));

		if (!safe)
			continue;
		textsafe_term(safe, TEXTSAFE_SIZE(n), c->notes[i], n);
		fput_wrapped(f, width, "  note: %s\n", safe);
		free(safe);
	}
	if (!width) {
		gate_report_explain(f, c, color);
	} else {
		/* Where it moved, its lines wrapped at word boundaries as the notes are. */
		char *text = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&text, &len);

		if (mf) {
			gate_report_explain(mf, c, color);
			if (!fclose(mf))
				termwrap_fputs(f, text, width);
		}
		free(text);
	}
}

/* Markdown text and code spans: the command's, a path, a CPU model (lib/textsafe). */
static void md_text(FILE *f, const char *s)
{
	textsafe_fput(f, textsafe_md, s, TEXTSAFE_NUL);
}

static void md_code(FILE *f, const char *s)
{
	textsafe_fput(f, textsafe_md_code, s, TEXTSAFE_NUL);
}

static const char *md_mark(enum gate_outcome o, enum gate_verdict v)
{
	if (o == GATE_FAIL)
		return "\xe2\x9d\x8c"; /* cross mark */
	if (o == GATE_WARN)
		return "\xe2\x9a\xa0\xef\xb8\x8f";     /* warning sign */
	return v == GATE_IMPROVED ? "\xf0\x9f\x9a\x80" /* rocket */
				  : "\xe2\x9c\x85";    /* check mark */
}

void gate_report_markdown(FILE *f, const struct comparison *c, const char *command)
{
	char head[512];

	fprintf(f, "### tsarun regression gate: %s %s\n\n", md_mark(c->outcome, c->verdict),
		c->outcome == GATE_FAIL	  ? "failed"
		: c->outcome == GATE_WARN ? "passed with a warning"
					  : "passed");
	md_code(f, command ? command : "");
	fprintf(f, " against %s",
		!strcmp(c->baseline_kind, "command") ? "the baseline command " : "the baseline ");
	md_code(f, c->baseline_name);
	fprintf(f, "%s: ratio of medians (new / baseline) with a %.0f%% bootstrap interval",
		c->paired ? " (paired, runs interleaved)" : "", c->confidence * 100);
	if (c->runs_added)
		fprintf(f, "; %u run%s added while inconclusive", c->runs_added,
			c->runs_added == 1 ? "" : "s");
	fprintf(f,
		".\n\n| Metric | Baseline | New | Runs | Change [%.0f%% interval] | Threshold "
		"| Verdict |\n|:--|--:|--:|--:|:--|--:|:--|\n",
		c->confidence * 100);
	for (int i = 0; i < c->nmetrics; i++) {
		const struct gate_metric *gm = &c->metrics[i];
		char bm[24], nm[24], ch[64];

		fprintf(f, "| %s | %s | %s | %zu / %zu | %s | +%g%% | %s %s%s |\n",
			metric_def(gm->metric)->name,
			gate_fmt_value(gm->metric, gm->base_median, bm, sizeof(bm)),
			gate_fmt_value(gm->metric, gm->new_median, nm, sizeof(nm)), gm->nb, gm->nn,
			fmt_change_ci(gm, ch, sizeof(ch)), gm->threshold * 100,
			md_mark(gm->outcome, gm->verdict), gate_verdict_name(gm->verdict),
			gm->outcome == GATE_WARN && gm->verdict != GATE_INCONCLUSIVE ? " (warning)"
			: gm->outcome == GATE_FAIL && gm->verdict == GATE_INCONCLUSIVE ? " (fail)"
										       : "");
	}
	gate_report_headline(c, head, sizeof(head));
	fprintf(f, "\n**");
	md_text(f, head);
	fprintf(f, "**\n");
	for (int i = 0; i < c->nmetrics; i++) {
		if (!c->metrics[i].note[0])
			continue;
		fprintf(f, "\n- %s: ", metric_def(c->metrics[i].metric)->name);
		md_text(f, c->metrics[i].note);
	}
	for (int i = 0; i < c->nnotes; i++) {
		fprintf(f, "\n- ");
		md_text(f, c->notes[i]);
	}
	fprintf(f, "\n\n");
	gate_report_explain_markdown(f, c);
}

/* XML character data and attribute values (lib/textsafe). */
static void xml_text(FILE *f, const char *s)
{
	textsafe_fput(f, textsafe_xml, s, TEXTSAFE_NUL);
}

/* "cpu +24.5% [+23.8%, +24.6%] is over the +10% threshold (baseline 20.72 ms, new 25.80 ms)" */
static void metric_message(const struct gate_metric *gm, char *buf, size_t len)
{
	char ch[64], bm[24], nm[24];
	const char *what;

	switch (gm->verdict) {
	case GATE_REGRESSION:
		what = "is over";
		break;
	case GATE_INCONCLUSIVE:
		what = "straddles";
		break;
	default:
		what = "is within";
		break;
	}
	if (gm->verdict == GATE_INCONCLUSIVE && isnan(gm->ci_low))
		what = "cannot be judged against";
	snprintf(buf, len, "%s %s %s the +%g%% threshold (baseline %s, new %s; %zu and %zu runs)",
		 metric_def(gm->metric)->name, fmt_change_ci(gm, ch, sizeof(ch)), what,
		 gm->threshold * 100, gate_fmt_value(gm->metric, gm->base_median, bm, sizeof(bm)),
		 gate_fmt_value(gm->metric, gm->new_median, nm, sizeof(nm)), gm->nb, gm->nn);
}

/* Seconds for JUnit's time attribute (xs:decimal), to the microsecond. */
static const char *junit_seconds(uint64_t ns, char *buf, size_t len)
{
	snprintf(buf, len, "%llu.%06llu", (unsigned long long)(ns / 1000000000ull),
		 (unsigned long long)(ns % 1000000000ull / 1000));
	return buf;
}

void gate_report_junit(FILE *f, const struct comparison *c, const char *command)
{
	int failures = 0;
	char secs[32];

	for (int i = 0; i < c->nmetrics; i++)
		failures += c->metrics[i].outcome == GATE_FAIL;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f,
		"<testsuites name=\"tsarun\" tests=\"%d\" failures=\"%d\" errors=\"0\" "
		"time=\"%s\">\n",
		c->nmetrics, failures, junit_seconds(c->runs_wall_ns, secs, sizeof(secs)));
	fprintf(f, "  <testsuite name=\"tsarun regression gate: ");
	xml_text(f, command);
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\" time=\"%s\"",
		c->nmetrics, failures, junit_seconds(c->runs_wall_ns, secs, sizeof(secs)));
	if (c->judged_at > 0) {
		time_t t = (time_t)c->judged_at;
		struct tm tm;
		char ts[32];

		/* JUnit's timestamp: ISO 8601 without a zone (the XSD's xs:dateTime), UTC. */
		if (gmtime_r(&t, &tm) && strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm))
			fprintf(f, " timestamp=\"%s\"", ts);
	}
	if (c->hostname[0]) {
		fputs(" hostname=\"", f);
		xml_text(f, c->hostname);
		fputc('"', f);
	}
	fputs(">\n", f);
	fprintf(f, "    <properties>\n      <property name=\"baseline\" value=\"");
	xml_text(f, c->baseline_name);
	fprintf(f, "\"/>\n      <property name=\"baseline_kind\" value=\"%s\"/>\n",
		c->baseline_kind);
	fprintf(f, "      <property name=\"verdict\" value=\"%s\"/>\n",
		gate_verdict_name(c->verdict));
	fprintf(f, "      <property name=\"outcome\" value=\"%s\"/>\n",
		gate_outcome_name(c->outcome));
	fprintf(f, "    </properties>\n");
	for (int i = 0; i < c->nmetrics; i++) {
		const struct gate_metric *gm = &c->metrics[i];
		char msg[512], why[2048], full[2600];

		metric_message(gm, msg, sizeof(msg));
		/* Every metric is judged on the same runs: each case took their time. */
		fprintf(f, "    <testcase classname=\"tsarun.gate\" name=\"%s\" time=\"%s\">",
			metric_def(gm->metric)->name, secs);
		if (gm->outcome == GATE_FAIL) {
			gate_report_explain_gist(c, gm->metric, why, sizeof(why));
			snprintf(full, sizeof(full), "%s%s%s", msg, why[0] ? ". " : "", why);
			fprintf(f, "\n      <failure type=\"%s\" message=\"",
				gate_verdict_name(gm->verdict));
			xml_text(f, full);
			fprintf(f, "\">");
			xml_text(f, full);
			if (gm->note[0]) {
				fputs("\n", f);
				xml_text(f, gm->note);
			}
			fprintf(f, "</failure>\n    ");
		} else if (gm->outcome == GATE_WARN || gm->verdict == GATE_IMPROVED) {
			fprintf(f, "\n      <system-out>%s: ",
				gm->outcome == GATE_WARN ? "warning" : "improved");
			xml_text(f, msg);
			if (gm->note[0]) {
				fputs("\n", f);
				xml_text(f, gm->note);
			}
			fprintf(f, "</system-out>\n    ");
		}
		fprintf(f, "</testcase>\n");
	}
	if (c->nnotes) {
		fprintf(f, "    <system-out>");
		for (int i = 0; i < c->nnotes; i++) {
			fputs(i ? "\n" : "", f);
			xml_text(f, c->notes[i]);
		}
		fprintf(f, "</system-out>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
}

/* Workflow command data, or a property's value (lib/textsafe). */
static void gh_escape(FILE *f, const char *s, bool property)
{
	textsafe_fput(f, property ? textsafe_gh_prop : textsafe_gh_data, s, TEXTSAFE_NUL);
}

static void gh_command(FILE *f, const char *cmd, const char *title, const char *msg)
{
	fprintf(f, "::%s title=", cmd);
	gh_escape(f, title, true);
	fputs("::", f);
	gh_escape(f, msg, false);
	fputc('\n', f);
}

int gate_report_annotations(FILE *f, const struct comparison *c, const char *command)
{
	int n = 0;

	for (int i = 0; i < c->nmetrics; i++) {
		const struct gate_metric *gm = &c->metrics[i];
		char title[96], msg[3200], m[512], why[2048];
		const char *cmd;

		if (gm->outcome == GATE_OK && gm->verdict != GATE_IMPROVED)
			continue;
		cmd = gm->outcome == GATE_FAIL	 ? "error"
		      : gm->outcome == GATE_WARN ? "warning"
						 : "notice";
		snprintf(title, sizeof(title), "tsarun gate: %s %s%s", metric_def(gm->metric)->name,
			 gate_verdict_name(gm->verdict),
			 gm->outcome == GATE_WARN && gm->verdict == GATE_REGRESSION ? " (warning)"
										    : "");
		metric_message(gm, m, sizeof(m));
		why[0] = '\0';
		if (gm->outcome != GATE_OK && gm->verdict == GATE_REGRESSION)
			gate_report_explain_gist(c, gm->metric, why, sizeof(why));
		snprintf(msg, sizeof(msg), "%s, %s against %s%s%s%s%s%s", m, command ? command : "",
			 c->baseline_name, gm->note[0] ? ". " : "", gm->note,
			 gm->verdict == GATE_IMPROVED ? ". The baseline may be refreshed." : "",
			 why[0] ? ". " : "", why);
		gh_command(f, cmd, title, msg);
		n++;
	}
	for (int i = 0; i < c->nnotes; i++) {
		if (c->note_metric[i] >= 0)
			continue; /* restated by the metric's own annotation */
		gh_command(f, "warning", "tsarun gate", c->notes[i]);
		n++;
	}
	return n;
}

static void md_ms(FILE *f, uint64_t ns)
{
	fprintf(f, " %.2f |", (double)ns / 1e6);
}

void gate_report_session_markdown(FILE *f, const struct session *s, int top, enum sort_key sort)
{
	const struct run *r = s->nruns ? &s->runs[s->nruns - 1] : NULL;
	struct metric_summary ms[METRIC_NR];
	char st[96];
	int counted;

	fprintf(f, "### tsarun: ");
	md_code(f, session_command(s));
	if (r) {
		status_describe(r, st, sizeof(st));
		fprintf(f, ": ");
		md_text(f, st);
	}
	fprintf(f, "\n\ntsarun ");
	md_text(f, s->tool_version ? s->tool_version : "(version unknown)");
	fprintf(f, " on ");
	md_text(f, s->host.cpu_model);
	fprintf(f, " (%d CPUs, kernel ", s->host.cpus);
	md_text(f, s->host.kernel);
	fprintf(f, ", virtualisation ");
	md_text(f, s->host.virtualized);
	fprintf(f, ").\n");

	counted = metrics_summarize(s->runs, s->nruns, ms);
	if (counted > 0) {
		fprintf(
		    f,
		    "\n%d measured run%s.\n\n| Metric | Median | Mean | Stddev | CV | Min | Max "
		    "| Outliers |\n|:--|--:|--:|--:|--:|--:|--:|--:|\n",
		    counted, counted == 1 ? "" : "s");
		for (int m = 0; m < METRIC_NR; m++) {
			char a[24], b[24], c[24], d[16], e[24], g[24];

			if (!ms[m].available) {
				fprintf(f, "| %s | n/a: ", metric_def(m)->name);
				md_text(f, ms[m].why);
				fprintf(f, " | | | | | | |\n");
				continue;
			}
			fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %zu |\n",
				metric_def(m)->name, gate_fmt_value(m, ms[m].median, a, sizeof(a)),
				gate_fmt_value(m, ms[m].mean, b, sizeof(b)),
				isnan(ms[m].stddev) ? "-"
						    : gate_fmt_value(m, ms[m].stddev, c, sizeof(c)),
				fmt_pct(ms[m].cv, d, sizeof(d)),
				gate_fmt_value(m, ms[m].min, e, sizeof(e)),
				gate_fmt_value(m, ms[m].max, g, sizeof(g)), ms[m].outliers);
		}
	}
	if (r && r->detailed && r->nthreads) {
		size_t n = r->nthreads < (size_t)top ? r->nthreads : (size_t)top;
		size_t *order = table_thread_order(r, sort);

		if (order) {
			fprintf(f, "\n#### Threads of the last run, by %s (%zu of %zu)\n\n",
				sort_key_label(sort), n, r->nthreads);
			fprintf(f, "| PID | TID | COMM | WALL ms | ON-CPU | RUNQ | SLEEP (S) | D | "
				   "OTHER | SWITCHES vol/invol |\n"
				   "|--:|--:|:--|--:|--:|--:|--:|--:|--:|--:|\n");
			for (size_t i = 0; i < n; i++) {
				const struct thread_acct *t = &r->threads[order[i]];

				fprintf(f, "| %u | %u | ", t->pid, t->tid);
				md_text(f, t->comm);
				fprintf(f, " |");
				md_ms(f, t->lifetime_ns);
				md_ms(f, t->state_ns[TSA_ST_ONCPU]);
				md_ms(f, t->state_ns[TSA_ST_RUNQ]);
				if (t->unmeasured & ACCT_NO_STATES) {
					fprintf(f, " - | - |");
				} else {
					md_ms(f, t->state_ns[TSA_ST_SLEEP]);
					md_ms(f, t->state_ns[TSA_ST_DISK]);
				}
				md_ms(f, t->state_ns[TSA_ST_STOPPED] + t->residual_ns);
				/* Not counted (procfs, taskstats): no figure, not 0. */
				if (t->unmeasured & ACCT_NO_SWITCHES)
					fprintf(f, " - |\n");
				else
					fprintf(f, " %llu/%llu |\n",
						(unsigned long long)t->voluntary,
						(unsigned long long)t->involuntary);
			}
			free(order);
		}
	}
	fputc('\n', f);
	if (s->cmp)
		gate_report_markdown(f, s->cmp, session_command(s));
}
