// SPDX-License-Identifier: MIT
/* Warmups, measured runs, paired interleaving. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parts.h"
#include "probe_set.h"
#include "run.h"
#include "series.h"
#include "status.h"
#include "supervise.h"
#include "table.h"
#include "termwrap.h"
#include "vec.h"

static const char *side_name(int side)
{
	return side == SERIES_BASE ? "the baseline command" : "the command";
}

static void progress_clear(struct series *se)
{
	if (!se->progress_shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	se->progress_shown = false;
}

/* One run of one side. */
static int run_one(struct series *se, int side, bool warmup, char *err, size_t errlen)
{
	struct run *r;
	char st[96];
	int ret;

	r = vec_grow(se->runs[side], &se->cap[side], se->n[side] + 1, sizeof(*r), 8);
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	se->runs[side] = r;
	/* The previous run of this side gives up its detail: only the last keeps it. */
	if (se->n[side])
		run__free_detail(&se->runs[side][se->n[side] - 1]);
	r = &se->runs[side][se->n[side]];
	memset(r, 0, sizeof(*r));
	r->index = (int)se->n[side];
	r->warmup = warmup;
	probeset__describe(se->ps, r);
	ret = supervise_run(se->sv[side], r, err, errlen);
	if (ret) {
		run__free(r);
		return ret;
	}
	probeset__conclude(se->ps, r);
	/* Before the rows go (the next run frees them): what a comparison explains with. */
	if (r->detailed && !r->parts) {
		r->parts = run_parts__build(r);
		if (!r->parts) {
			snprintf(err, errlen, "out of memory");
			run__free(r);
			return -ENOMEM;
		}
	}
	se->n[side]++;
	if (!warmup)
		se->measured[side]++;
	if (r->status == RUN_EXITED && r->exit_code == 0 && !r->term_signal &&
	    !se->sv[side]->interrupted)
		return 0;
	progress_clear(se);
	se->stopped = true;
	se->stop_side = side;
	se->stop_index = se->n[side] - 1;
	/* A command that never started has said why in its one line. */
	if (r->status == RUN_NOT_STARTED && !se->sv[SERIES_BASE] && se->n[side] == 1)
		return 0;
	if (!se->quiet && (se->planned > 1 || se->sv[SERIES_BASE])) {
		status_describe(r, st, sizeof(st));
		fprintf(stderr, "tsarun: %s run %zu of %s: %s; the series stops here\n",
			warmup ? "warmup" : "measured", (size_t)r->index + 1, side_name(side), st);
	}
	return 0;
}

/*
 * The progress line, before run `i` (0-based) of `total` in this call: what
 * runs now, the mean and spread of the measured runs' wall time and their
 * CPU time so far, and the time the rest should take (every run so far,
 * warmups and the baseline's included, at their mean wall time).
 */
static void progress_show(struct series *se, unsigned i, unsigned warmup, unsigned total)
{
	const struct run *runs = se->runs[SERIES_NEW];
	size_t n = se->n[SERIES_NEW], width = termwrap_width(2), len = 0;
	double sum = 0, sq = 0, cpu = 0, all = 0;
	unsigned measured = 0, runs_so_far = 0, left;
	char line[512], a[32], b[32], c[32];

	for (size_t k = 0; k < n; k++) {
		double w = (double)runs[k].wall_ns;

		all += w;
		runs_so_far++;
		if (runs[k].warmup)
			continue;
		measured++;
		sum += w;
		sq += w * w;
		cpu += (double)(runs[k].ru.user_ns + runs[k].ru.sys_ns);
	}
	for (size_t k = 0; se->sv[SERIES_BASE] && k < se->n[SERIES_BASE]; k++) {
		all += (double)se->runs[SERIES_BASE][k].wall_ns;
		runs_so_far++;
	}
	if (i < warmup)
		len = (size_t)snprintf(line, sizeof(line), "tsarun: warmup %u/%u", i + 1, warmup);
	else if (se->added_why[0])
		len = (size_t)snprintf(line, sizeof(line), "tsarun: run %u, added (%s; up to %u)",
				       se->measured[SERIES_NEW] + 1, se->added_why, se->max_runs);
	else
		len = (size_t)snprintf(line, sizeof(line), "tsarun: run %u/%u",
				       se->measured[SERIES_NEW] + 1, total - warmup);
	if (measured && len < sizeof(line)) {
		double mean = sum / measured, var = sq / measured - mean * mean;

		len += (size_t)snprintf(line + len, sizeof(line) - len, "   wall %s",
					fmt_dur((uint64_t)mean, a, sizeof(a)));
		if (measured > 1 && len < sizeof(line))
			len += (size_t)snprintf(
			    line + len, sizeof(line) - len, " +- %s",
			    fmt_dur((uint64_t)sqrt(var > 0 ? var * measured / (measured - 1) : 0),
				    b, sizeof(b)));
		if (len < sizeof(line))
			len += (size_t)snprintf(line + len, sizeof(line) - len, ", cpu %s",
						fmt_dur((uint64_t)(cpu / measured), c, sizeof(c)));
	}
	left = se->added_why[0] ? se->max_runs - se->measured[SERIES_NEW] : total - i;
	if (runs_so_far && len < sizeof(line)) {
		/* In paired mode each step runs both commands. */
		double per = all / runs_so_far * (se->sv[SERIES_BASE] ? 2 : 1);

		len += (size_t)snprintf(line + len, sizeof(line) - len, "   %s %s",
					se->added_why[0] ? "at most" : "ETA",
					fmt_dur((uint64_t)(per * left), a, sizeof(a)));
	}
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	/* One line, never wrapped, or the next \r would rewrite only its end. */
	if (width > 1 && len > width - 1)
		len = width - 1;
	fprintf(stderr, "\r\033[K%.*s", (int)len, line);
	fflush(stderr);
	se->progress_shown = true;
}

int series_run(struct series *se, unsigned warmup, unsigned n, char *err, size_t errlen)
{
	bool paired = se->sv[SERIES_BASE] != NULL;
	unsigned total = warmup + n;
	int ret = 0;

	se->planned += total;
	for (unsigned i = 0; i < total && !se->stopped; i++) {
		bool w = i < warmup;
		/* ABBA: in even pairs the baseline goes first, in odd ones the command. */
		unsigned pair = w ? i : se->measured[SERIES_NEW];
		int first = paired && pair % 2 == 0 ? SERIES_BASE : SERIES_NEW;

		if (se->verbose)
			fprintf(stderr, "tsarun: %s run %u of %u\n", w ? "warmup" : "measured",
				w ? i + 1 : i - warmup + 1, w ? warmup : n);
		else if (se->progress && se->n[SERIES_NEW])
			progress_show(se, i, warmup, total);
		ret = run_one(se, first, w, err, errlen);
		if (ret)
			break;
		if (!paired || se->stopped)
			continue;
		ret = run_one(se, first == SERIES_NEW ? SERIES_BASE : SERIES_NEW, w, err, errlen);
		if (ret)
			break;
	}
	progress_clear(se);
	return ret;
}

void series__free(struct series *se)
{
	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < se->n[side]; i++)
			run__free(&se->runs[side][i]);
		free(se->runs[side]);
		se->runs[side] = NULL;
		se->n[side] = se->cap[side] = 0;
	}
}
