// SPDX-License-Identifier: MIT
/* The HTML report (report_html.h): the template, the inlined libraries and the data. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bashprof.h"
#include "flame.h"
#include "flamediff.h"
#include "gate.h"
#include "gate_report.h"
#include "metrics.h"
#include "report_html.h"
#include "run.h"
#include "stacks.h"
#include "stats.h"
#include "table.h"
#include "textsafe.h"

/* report_html_head[] and report_html_tail[]: the page around its data (the Makefile). */
#include "report_html_page.h"

/* The interval shown around each metric's median over the runs (stats_median_interval). */
#define MEDIAN_CONFIDENCE 0.95

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	textsafe_fput(f, textsafe_json, s ? s : "", TEXTSAFE_NUL);
	fputc('"', f);
}

/* A number as the artifact writes its statistics: integers exactly, the rest to 15 digits. */
static void json_num(FILE *f, double v)
{
	if (v != v || v - v != 0)
		fputs("null", f);
	else if (v == (double)(long long)v && v < 9e15 && v > -9e15)
		fprintf(f, "%lld", (long long)v);
	else
		fprintf(f, "%.15g", v);
}

/* One data element: text (JSON) escaped for the inside of a script element. */
static int block(FILE *f, const char *id, const char *text, size_t len)
{
	int ret;

	fprintf(f, "<script type=\"application/json\" id=\"%s\">", id);
	ret = textsafe_fput(f, textsafe_json_html, text, len);
	fputs("</script>\n", f);
	return ret;
}

/* The text report of a session, as `tsarun report` prints it (no colour). */
static void text_report(FILE *f, const struct report_html_side *side, bool runs_only)
{
	const struct session *s = side->s;
	const struct run *r = &s->runs[s->nruns - 1];
	struct table_opts to = {
	    .sort = SORT_WALL,
	    .top = 20,
	    .command = session_command(s),
	    .artifact = side->name,
	};

	if (r->detailed && !runs_only)
		table_print(f, r, &to);
	if (s->nruns > 1)
		gate_report_runs(f, s->runs, s->nruns, false, 0);
	if (r->bash && !runs_only) {
		struct bashprof_print_opts bo = {0};

		bashprof__print(r->bash, f, &bo);
	}
}

static const char *const view_names[] = {"offcpu", "oncpu", "wall"};
static const char *const view_units[] = {"ns", "samples", "ns"};

/* The last run's stacked views, as the SVG flame graphs draw them. */
static int flames(FILE *f, const struct run *r)
{
	bool first = true;
	int ret = 0;

	if (!r->stacks) {
		fputs("null", f);
		return 0;
	}
	fputc('{', f);
	for (int w = 2; w >= 0 && !ret; w--) {
		struct flame *fl;

		if (w == 1 && !r->stacks->oncpu) {
			fprintf(f, "%s\"oncpu_reason\":", first ? "" : ",");
			json_str(f, r->stacks->oncpu_reason[0] ? r->stacks->oncpu_reason
							       : "no on-CPU samples were recorded "
								 "(record them with --flame)");
			first = false;
			continue;
		}
		fl = flame__new();
		if (!fl)
			return -ENOMEM;
		ret = stacks_flame(fl, r, w);
		if (!ret) {
			fprintf(f, "%s\"%s\":", first ? "" : ",", view_names[w]);
			ret = flame__write_json(fl, f, view_units[w]);
		}
		flame__free(fl);
		first = false;
	}
	fputc('}', f);
	return ret;
}

/* Each metric's value in every measured run that counts, and the median's interval. */
static int metrics(FILE *f, const struct session *s)
{
	double *v = malloc((s->nruns ? s->nruns : 1) * sizeof(*v)), lo, hi, cov;
	int *idx = malloc((s->nruns ? s->nruns : 1) * sizeof(*idx));
	int ret = 0;

	if (!v || !idx) {
		ret = -ENOMEM;
		goto out;
	}
	fputc('[', f);
	for (int m = 0; m < METRIC_NR; m++) {
		const struct metric_def *d = metric_def(m);
		char why[256] = "";
		size_t k = 0;
		bool ok = true;

		for (size_t i = 0; i < s->nruns && ok; i++) {
			if (!metric_run_counts(&s->runs[i]))
				continue;
			ok = !metric_value(&s->runs[i], m, &v[k], why, sizeof(why));
			idx[k++] = s->runs[i].index;
		}
		fprintf(f, "%s{\"name\":\"%s\",\"unit\":\"%s\",", m ? "," : "", d->name,
			metric_unit_name(d->unit));
		if (!ok || !k) {
			fputs("\"unavailable\":", f);
			json_str(f, why[0] ? why : "no measured run completed");
			fputc('}', f);
			continue;
		}
		fputs("\"runs\":[", f);
		for (size_t i = 0; i < k; i++)
			fprintf(f, "%s%d", i ? "," : "", idx[i]);
		fputs("],\"values\":[", f);
		for (size_t i = 0; i < k; i++) {
			if (i)
				fputc(',', f);
			json_num(f, v[i]);
		}
		fputc(']', f);
		/* v is sorted from here on. */
		if (!stats_median_interval(v, k, MEDIAN_CONFIDENCE, &lo, &hi, &cov)) {
			fputs(",\"median\":", f);
			json_num(f, stats_median_inplace(v, k));
			fputs(",\"interval\":{\"low\":", f);
			json_num(f, lo);
			fputs(",\"high\":", f);
			json_num(f, hi);
			fprintf(f,
				",\"coverage\":%.6f,\"method\":\"order statistics of the runs "
				"(distribution-free)\"}",
				cov);
		}
		fputc('}', f);
	}
	fputc(']', f);
out:
	free(v);
	free(idx);
	return ret;
}

/* What the page shows as tsarun computed it: the text report, the flame graphs, the runs. */
static char *derived(const struct report_html_side *side, const struct report_html *h, bool verdict)
{
	const struct session *s = side->s;
	const struct run *r = s->nruns ? &s->runs[s->nruns - 1] : NULL;
	char *text = NULL, *rep = NULL;
	size_t len = 0, rlen = 0;
	FILE *f, *rf;
	int ret = 0;

	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	rf = open_memstream(&rep, &rlen);
	if (!rf) {
		fclose(f);
		free(text);
		return NULL;
	}
	if (r)
		text_report(rf, side, false);
	if (s->cmp)
		gate_report_comparison(rf, s->cmp, session_command(s), false, 0);
	fclose(rf);
	fputs("{\"report\":", f);
	json_str(f, rep);
	free(rep);
	if (verdict && h->cmp) {
		rep = NULL;
		rf = open_memstream(&rep, &rlen);
		if (rf) {
			gate_report_comparison(rf, h->cmp, session_command(s), false, 0);
			fclose(rf);
		}
		fputs(",\"verdict_report\":", f);
		json_str(f, rep);
		free(rep);
	}
	fputs(",\"flames\":", f);
	ret = r && r->detailed ? flames(f, r) : (fputs("null", f), 0);
	fputs(",\"metrics\":", f);
	if (!ret)
		ret = metrics(f, s);
	fputs("}", f);
	if (fclose(f) || ret) {
		free(text);
		return NULL;
	}
	return text;
}

static int side_blocks(FILE *f, const struct report_html_side *side, const struct report_html *h,
		       const char *id, const char *derived_id, bool verdict)
{
	char *d = derived(side, h, verdict);
	int ret;

	if (!d)
		return -ENOMEM;
	ret = block(f, id, side->artifact, side->artifact_len);
	if (!ret)
		ret = block(f, derived_id, d, strlen(d));
	free(d);
	return ret;
}

/*
 * With a baseline (compare, or a run's --baseline), both sides' stacks as
 * differential flame graphs, each view's data as flamediff writes it, or
 * the reason there are none.
 */
static int diff_flames(FILE *out, const struct report_html *h)
{
	const struct session *s = h->run.s;
	const struct run *b = h->base ? h->base->s->runs : s->cmp_base_runs;
	size_t nb = h->base ? h->base->s->nruns : s->ncmp_base_runs, len = 0;
	char why[256], *text = NULL;
	FILE *f;
	int ret = 0;

	if ((!b || !nb) && !s->cmp)
		return 0;
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	fputc('{', f);
	if (!b || !nb) {
		/* tsarun report of a run's artifact: its verdict, not the baseline's runs. */
		fputs("\"reason\":", f);
		json_str(f, "the artifact holds the verdict, not the baseline's stacks: tsarun "
			    "compare BASE.json NEW.json --html draws them");
	} else if (flamediff_check(b, nb, s->runs, s->nruns, why, sizeof(why))) {
		fputs("\"reason\":", f);
		json_str(f, why);
	} else {
		for (int v = FLAMEDIFF_WALL; v >= 0 && !ret; v--) {
			fprintf(f, "%s\"%s\":", v == FLAMEDIFF_WALL ? "" : ",",
				flamediff_view_name(v));
			ret = flamediff_write(f, b, nb, s->runs, s->nruns, v, FLAMEDIFF_JSON, NULL);
		}
	}
	fputc('}', f);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (!ret)
		ret = block(out, "tsarun-diff-flames", text, len);
	free(text);
	return ret;
}

int report_html_write(FILE *f, const struct report_html *h)
{
	char page[160];
	int ret;

	if (!h->run.s || !h->run.artifact)
		return -EINVAL;
	if (fwrite(report_html_head, 1, sizeof(report_html_head) - 1, f) !=
	    sizeof(report_html_head) - 1)
		return -EIO;
	snprintf(page, sizeof(page), "{\"kind\":\"%s\",\"tool\":\"tsarun %s\"}",
		 h->base ? "compare" : "run", TSARUN_VERSION);
	ret = block(f, "tsarun-page", page, strlen(page));
	if (!ret)
		ret = side_blocks(f, &h->run, h, "tsarun-artifact", "tsarun-derived", true);
	if (!ret && h->base)
		ret = side_blocks(f, h->base, h, "tsarun-base", "tsarun-base-derived", false);
	if (!ret && h->comparison)
		ret = block(f, "tsarun-comparison", h->comparison, strlen(h->comparison));
	if (!ret)
		ret = diff_flames(f, h);
	if (ret)
		return ret;
	if (fwrite(report_html_tail, 1, sizeof(report_html_tail) - 1, f) !=
	    sizeof(report_html_tail) - 1)
		return -EIO;
	return ferror(f) ? -EIO : 0;
}
