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
#include "jsonw.h"
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

/* A number as the artifact writes its statistics: integers exactly, the rest to 15 digits. */
static void json_num(struct jsonw *w, double v)
{
	char b[32];

	if (v != v || v - v != 0)
		jsonw__null(w);
	else if (v == (double)(long long)v && v < 9e15 && v > -9e15)
		jsonw__int(w, (long long)v);
	else
		jsonw__raw(w, b, (size_t)snprintf(b, sizeof(b), "%.15g", v));
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
static int flames(struct jsonw *w, const struct run *r)
{
	int ret = 0;

	if (!r->stacks) {
		jsonw__null(w);
		return 0;
	}
	jsonw__obj_open(w);
	for (int v = 2; v >= 0 && !ret; v--) {
		struct flame *fl;
		FILE *f;

		if (v == 1 && !r->stacks->oncpu) {
			jsonw__str_field(w, "oncpu_reason",
					 r->stacks->oncpu_reason[0]
					     ? r->stacks->oncpu_reason
					     : "no on-CPU samples were recorded "
					       "(record them with --flame)");
			continue;
		}
		fl = flame__new();
		if (!fl)
			return -ENOMEM;
		ret = stacks_flame(fl, r, v);
		if (!ret) {
			jsonw__key(w, view_names[v]);
			f = jsonw__file(w);
			ret = f ? flame__write_json(fl, f, view_units[v]) : jsonw__error(w);
		}
		flame__free(fl);
	}
	jsonw__obj_close(w);
	return ret;
}

/* Each metric's value in every measured run that counts, and the median's interval. */
static int metrics(struct jsonw *w, const struct session *s)
{
	double *v = malloc((s->nruns ? s->nruns : 1) * sizeof(*v)), lo, hi, cov;
	int *idx = malloc((s->nruns ? s->nruns : 1) * sizeof(*idx));
	int ret = 0;

	if (!v || !idx) {
		ret = -ENOMEM;
		goto out;
	}
	jsonw__arr_open(w);
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
		jsonw__obj_open(w);
		jsonw__str_field(w, "name", d->name);
		jsonw__str_field(w, "unit", metric_unit_name(d->unit));
		if (!ok || !k) {
			jsonw__str_field(w, "unavailable",
					 why[0] ? why : "no measured run completed");
			jsonw__obj_close(w);
			continue;
		}
		jsonw__key(w, "runs");
		jsonw__arr_open(w);
		for (size_t i = 0; i < k; i++)
			jsonw__int(w, idx[i]);
		jsonw__arr_close(w);
		jsonw__key(w, "values");
		jsonw__arr_open(w);
		for (size_t i = 0; i < k; i++)
			json_num(w, v[i]);
		jsonw__arr_close(w);
		/* v is sorted from here on. */
		if (!stats_median_interval(v, k, MEDIAN_CONFIDENCE, &lo, &hi, &cov)) {
			jsonw__key(w, "median");
			json_num(w, stats_median_inplace(v, k));
			jsonw__key(w, "interval");
			jsonw__obj_open(w);
			jsonw__key(w, "low");
			json_num(w, lo);
			jsonw__key(w, "high");
			json_num(w, hi);
			jsonw__key(w, "coverage");
			jsonw__fixed(w, cov, 6);
			jsonw__str_field(w, "method",
					 "order statistics of the runs (distribution-free)");
			jsonw__obj_close(w);
		}
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
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
	struct jsonw *w;
	FILE *f, *rf;
	int ret = 0;

	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	w = jsonw__new(f, 0);
	rf = open_memstream(&rep, &rlen);
	if (!rf || !w) {
		if (rf)
			fclose(rf);
		free(rep);
		jsonw__free(w);
		fclose(f);
		free(text);
		return NULL;
	}
	if (r)
		text_report(rf, side, false);
	if (s->cmp)
		gate_report_comparison(rf, s->cmp, session_command(s), false, 0);
	fclose(rf);
	jsonw__obj_open(w);
	jsonw__str_field(w, "report", rep);
	free(rep);
	if (verdict && h->cmp) {
		rep = NULL;
		rf = open_memstream(&rep, &rlen);
		if (rf) {
			gate_report_comparison(rf, h->cmp, session_command(s), false, 0);
			fclose(rf);
		}
		jsonw__str_field(w, "verdict_report", rep);
		free(rep);
	}
	jsonw__key(w, "flames");
	if (r && r->detailed)
		ret = flames(w, r);
	else
		jsonw__null(w);
	jsonw__key(w, "metrics");
	if (!ret)
		ret = metrics(w, s);
	jsonw__obj_close(w);
	if (!ret)
		ret = jsonw__finish(w);
	jsonw__free(w);
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
	struct jsonw *w;
	FILE *f;
	int ret = 0;

	if ((!b || !nb) && !s->cmp)
		return 0;
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	w = jsonw__new(f, 0);
	if (!w) {
		fclose(f);
		free(text);
		return -ENOMEM;
	}
	jsonw__obj_open(w);
	if (!b || !nb) {
		/* tsarun report of a run's artifact: its verdict, not the baseline's runs. */
		jsonw__str_field(
		    w, "reason",
		    "the artifact holds the verdict, not the baseline's stacks: tsarun "
		    "compare BASE.json NEW.json --html draws them");
	} else if (flamediff_check(b, nb, s->runs, s->nruns, why, sizeof(why))) {
		jsonw__str_field(w, "reason", why);
	} else {
		for (int v = FLAMEDIFF_WALL; v >= 0 && !ret; v--) {
			FILE *vf;

			jsonw__key(w, flamediff_view_name(v));
			vf = jsonw__file(w);
			ret = vf ? flamediff_write(vf, b, nb, s->runs, s->nruns, v, FLAMEDIFF_JSON,
						   NULL)
				 : jsonw__error(w);
		}
	}
	jsonw__obj_close(w);
	if (!ret)
		ret = jsonw__finish(w);
	jsonw__free(w);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (!ret)
		ret = block(out, "tsarun-diff-flames", text, len);
	free(text);
	return ret;
}

int report_html_write(FILE *f, const struct report_html *h)
{
	struct jsonw *w;
	char tool[64], *page;
	int ret;

	if (!h->run.s || !h->run.artifact)
		return -EINVAL;
	if (fwrite(report_html_head, 1, sizeof(report_html_head) - 1, f) !=
	    sizeof(report_html_head) - 1)
		return -EIO;
	w = jsonw__new(NULL, 0);
	if (!w)
		return -ENOMEM;
	snprintf(tool, sizeof(tool), "tsarun %s", TSARUN_VERSION);
	jsonw__obj_open(w);
	jsonw__str_field(w, "kind", h->base ? "compare" : "run");
	jsonw__str_field(w, "tool", tool);
	jsonw__obj_close(w);
	ret = jsonw__finish(w);
	page = ret ? NULL : jsonw__take(w, NULL);
	jsonw__free(w);
	if (!page)
		return ret ? ret : -ENOMEM;
	ret = block(f, "tsarun-page", page, strlen(page));
	free(page);
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
