// SPDX-License-Identifier: MIT
/* Text, Markdown and JUnit reports of the series and the gate. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "gate_report.h"
#include "metrics.h"
#include "run.h"

#define C_BOLD	"\033[1m"
#define C_DIM	"\033[2m"
#define C_RESET "\033[0m"

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
