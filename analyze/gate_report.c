// SPDX-License-Identifier: MIT
/* Text, Markdown and JUnit reports of the series and the gate. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "gate_report.h"
#include "metrics.h"
#include "run.h"
#include "status.h"
#include "table.h"

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

void gate_report_runs(FILE *f, const struct run *runs, size_t n, bool color)
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
	fprintf(f, "\n  %d measured run%s", counted, counted == 1 ? "" : "s");
	if (warm)
		fprintf(f, " after %zu warmup%s", warm, warm == 1 ? "" : "s");
	if (failed)
		fprintf(f, " (%zu more did not complete)", failed);
	fprintf(f, "; every run's figures are in the artifact, thread detail of the last\n");
	/* The last run's table says it for that run; the summary includes the others. */
	for (size_t i = 0; i + 1 < n; i++) {
		const struct run_quality *q = &runs[i].quality;

		if (!q->unsettled && !q->lost.records)
			continue;
		fprintf(f,
			"%s  warning: run %zu of %zu%s: %llu thread%s without a final record, %llu "
			"records lost; that run's eBPF figures lack them%s\n",
			color ? C_YELLOW : "", i + 1, n, runs[i].warmup ? " (warmup)" : "",
			(unsigned long long)q->unsettled, q->unsettled == 1 ? "" : "s",
			(unsigned long long)q->lost.records, color ? C_RESET : "");
	}
	if (!counted)
		return;
	fprintf(f, "%s  %-22s %11s %11s %11s %7s %11s %11s %8s%s\n", color ? C_BOLD : "", "METRIC",
		"MEDIAN", "MEAN", "STDDEV", "CV", "MIN", "MAX", "OUTLIERS", color ? C_RESET : "");
	for (int m = 0; m < METRIC_NR; m++) {
		char med[24], mean[24], sd[24], cv[16], lo[24], hi[24];

		if (!ms[m].available) {
			fprintf(f, "%s  %-22s n/a: %s%s\n", color ? C_DIM : "", metric_def(m)->name,
				ms[m].why, color ? C_RESET : "");
			continue;
		}
		fprintf(f, "  %-22s %11s %11s %11s %7s %11s %11s %8zu\n", metric_def(m)->name,
			gate_fmt_value(m, ms[m].median, med, sizeof(med)),
			gate_fmt_value(m, ms[m].mean, mean, sizeof(mean)),
			isnan(ms[m].stddev) ? "-" : gate_fmt_value(m, ms[m].stddev, sd, sizeof(sd)),
			fmt_pct(ms[m].cv, cv, sizeof(cv)),
			gate_fmt_value(m, ms[m].min, lo, sizeof(lo)),
			gate_fmt_value(m, ms[m].max, hi, sizeof(hi)), ms[m].outliers);
	}
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

void gate_report_comparison(FILE *f, const struct comparison *c, const char *command, bool color)
{
	const char *b = color ? C_BOLD : "", *r = color ? C_RESET : "";
	char head[512];

	fprintf(f, "\n%sregression gate%s: %s against %s %s", b, r, command ? command : "",
		!strcmp(c->baseline_kind, "command") ? "the baseline command" : "the baseline",
		c->baseline_name);
	if (c->paired)
		fprintf(f, " (paired: runs interleaved)");
	fprintf(f,
		"\n  ratio of medians (new / baseline), %.0f%% bootstrap interval (%u resamples, "
		"seed %llu)",
		c->confidence * 100, c->resamples, (unsigned long long)c->seed);
	if (c->runs_added)
		fprintf(f, "; %u run%s added while inconclusive", c->runs_added,
			c->runs_added == 1 ? "" : "s");
	fprintf(f, "\n%s  %-22s %11s %11s %6s  %-26s %9s  %s%s\n", b, "METRIC", "BASELINE", "NEW",
		"RUNS", "CHANGE [95% interval]", "THRESHOLD", "VERDICT", r);
	for (int i = 0; i < c->nmetrics; i++) {
		const struct gate_metric *gm = &c->metrics[i];
		char bm[24], nm[24], runs[16], ch[64], th[16], verdict[32];

		snprintf(runs, sizeof(runs), "%zu/%zu", gm->nb, gm->nn);
		snprintf(th, sizeof(th), "+%g%%", gm->threshold * 100);
		snprintf(verdict, sizeof(verdict), "%s%s", gate_verdict_name(gm->verdict),
			 gm->outcome == GATE_WARN && gm->verdict != GATE_INCONCLUSIVE ? " (warning)"
			 : gm->outcome == GATE_FAIL && gm->verdict == GATE_INCONCLUSIVE ? " (fail)"
											: "");
		fprintf(f, "  %-22s %11s %11s %6s  %-26s %9s  %s%s%s\n",
			metric_def(gm->metric)->name,
			gate_fmt_value(gm->metric, gm->base_median, bm, sizeof(bm)),
			gate_fmt_value(gm->metric, gm->new_median, nm, sizeof(nm)), runs,
			fmt_change_ci(gm, ch, sizeof(ch)), th,
			color ? outcome_color(gm->outcome) : "", verdict, r);
		if (gm->note[0])
			fprintf(f, "  %-22s %s\n", "", gm->note);
	}
	gate_report_headline(c, head, sizeof(head));
	fprintf(f, "  %sgate %s%s: %s\n", color ? outcome_color(c->outcome) : "",
		c->outcome == GATE_FAIL	  ? "FAILED"
		: c->outcome == GATE_WARN ? "passed with a warning"
					  : "passed",
		r, head);
	for (int i = 0; i < c->nnotes; i++)
		fprintf(f, "  note: %s\n", c->notes[i]);
}

/* Backslash-escape what Markdown would read as markup; control characters become spaces. */
static void md_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f)
			fputc(' ', f);
		else if (strchr("\\`*_[]<>|~#&", ch))
			fprintf(f, "\\%c", ch);
		else
			fputc(ch, f);
	}
}

/* A code span that holds any text: a fence longer than the longest run of backticks inside. */
static void md_code(FILE *f, const char *s)
{
	int run = 0, longest = 0;

	for (const char *p = s; p && *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (int i = 0; i <= longest; i++)
		fputc('`', f);
	fputc(' ', f);
	for (const char *p = s; p && *p; p++)
		fputc((unsigned char)*p < 0x20 ? ' ' : *p, f);
	fputc(' ', f);
	for (int i = 0; i <= longest; i++)
		fputc('`', f);
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
}

/* XML character data and attribute values: the five entities; invalid characters as '?'. */
static void xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		switch (ch) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			fputc(ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r' ? '?' : ch, f);
		}
	}
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

void gate_report_junit(FILE *f, const struct comparison *c, const char *command)
{
	int failures = 0;

	for (int i = 0; i < c->nmetrics; i++)
		failures += c->metrics[i].outcome == GATE_FAIL;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"tsarun\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n",
		c->nmetrics, failures);
	fprintf(f, "  <testsuite name=\"tsarun regression gate: ");
	xml_text(f, command);
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n", c->nmetrics,
		failures);
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
		char msg[512];

		metric_message(gm, msg, sizeof(msg));
		fprintf(f, "    <testcase classname=\"tsarun.gate\" name=\"%s\">",
			metric_def(gm->metric)->name);
		if (gm->outcome == GATE_FAIL) {
			fprintf(f, "\n      <failure type=\"%s\" message=\"",
				gate_verdict_name(gm->verdict));
			xml_text(f, msg);
			fprintf(f, "\">");
			xml_text(f, msg);
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

/* Workflow command data: %, CR and LF escaped; properties also ':' and ','. */
static void gh_escape(FILE *f, const char *s, bool property)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '%':
			fputs("%25", f);
			break;
		case '\r':
			fputs("%0D", f);
			break;
		case '\n':
			fputs("%0A", f);
			break;
		case ':':
			fputs(property ? "%3A" : ":", f);
			break;
		case ',':
			fputs(property ? "%2C" : ",", f);
			break;
		default:
			fputc(*s, f);
		}
	}
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
		char title[96], msg[1024], m[512];
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
		snprintf(msg, sizeof(msg), "%s, %s against %s%s%s%s", m, command ? command : "",
			 c->baseline_name, gm->note[0] ? ". " : "", gm->note,
			 gm->verdict == GATE_IMPROVED ? ". The baseline may be refreshed." : "");
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
	fprintf(f, "\n\ntsarun %s on ", s->tool_version ? s->tool_version : "(version unknown)");
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
