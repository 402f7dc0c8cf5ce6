// SPDX-License-Identifier: MIT
/* Warmups, measured runs, paired interleaving. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "run.h"
#include "series.h"
#include "status.h"
#include "supervise.h"

static const char *side_name(int side)
{
	return side == SERIES_BASE ? "the baseline command" : "the command";
}

/* One run of one side. */
static int run_one(struct series *se, int side, bool warmup, char *err, size_t errlen)
{
	struct run *r;
	char st[96];
	int ret;

	if (se->n[side] == se->cap[side]) {
		size_t cap = se->cap[side] ? 2 * se->cap[side] : 8;
		struct run *nr = realloc(se->runs[side], cap * sizeof(*nr));

		if (!nr) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		se->runs[side] = nr;
		se->cap[side] = cap;
	}
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
		run__free_detail(r);
		return ret;
	}
	probeset__conclude(se->ps, r);
	se->n[side]++;
	if (!warmup)
		se->measured[side]++;
	if (r->status == RUN_EXITED && r->exit_code == 0 && !r->term_signal &&
	    !se->sv[side]->interrupted)
		return 0;
	se->stopped = true;
	se->stop_side = side;
	se->stop_index = se->n[side] - 1;
	if (!se->quiet && (se->planned > 1 || se->sv[SERIES_BASE])) {
		status_describe(r, st, sizeof(st));
		fprintf(stderr, "tsarun: %s run %zu of %s: %s; the series stops here\n",
			warmup ? "warmup" : "measured", (size_t)r->index + 1, side_name(side), st);
	}
	return 0;
}

int series_run(struct series *se, unsigned warmup, unsigned n, char *err, size_t errlen)
{
	bool paired = se->sv[SERIES_BASE] != NULL;
	unsigned total = warmup + n;
	int ret;

	se->planned += total;
	for (unsigned i = 0; i < total && !se->stopped; i++) {
		bool w = i < warmup;
		/* ABBA: in even pairs the baseline goes first, in odd ones the command. */
		unsigned pair = w ? i : se->measured[SERIES_NEW];
		int first = paired && pair % 2 == 0 ? SERIES_BASE : SERIES_NEW;

		if (se->verbose)
			fprintf(stderr, "tsarun: %s run %u of %u\n", w ? "warmup" : "measured",
				w ? i + 1 : i - warmup + 1, w ? warmup : n);
		ret = run_one(se, first, w, err, errlen);
		if (ret)
			return ret;
		if (!paired || se->stopped)
			continue;
		ret = run_one(se, first == SERIES_NEW ? SERIES_BASE : SERIES_NEW, w, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

void series__free(struct series *se)
{
	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < se->n[side]; i++)
			run__free_detail(&se->runs[side][i]);
		free(se->runs[side]);
		se->runs[side] = NULL;
		se->n[side] = se->cap[side] = 0;
	}
}
