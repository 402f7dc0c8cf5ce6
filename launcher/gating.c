// SPDX-License-Identifier: MIT
/* The gate around a series of runs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact.h"
#include "gating.h"
#include "options.h"
#include "probes.h"
#include "series.h"

int gating__prepare(struct gating *g, const struct tsarun_opts *o, char *err, size_t errlen)
{
	char what[600];
	int ret;

	memset(g, 0, sizeof(*g));
	g->o = o;
	if (o->baseline_path) {
		ret = artifact_read(o->baseline_path,
				    &(struct artifact_read_opts){.what = "baseline"}, &g->base, err,
				    errlen);
		if (ret)
			return ret;
		ret = gate_side_init(&g->bside, g->base.runs, g->base.nruns, &g->base.host);
		if (ret) {
			snprintf(err, errlen, "out of memory");
			return ret;
		}
		g->have_bside = true;
		snprintf(what, sizeof(what), "baseline '%s'", o->baseline_path);
		ret = gate_check_mode(g->base.mode, o->bash ? "bash" : "run", what, "this run", err,
				      errlen);
		if (!ret)
			ret = gate_check_available(&o->gate_spec, &g->bside, what, err, errlen);
		if (!ret)
			ret = gate_check_runs(&g->bside, what, err, errlen);
		if (ret)
			return ret;
		g->cmp.baseline_kind = "artifact";
		g->cmp.baseline_name = o->baseline_path;
		g->cmp.base_command = session_command(&g->base);
		return 0;
	}
	/*
	 * A command without shell syntax is split into words like a shell would
	 * (quotes, variables, globs) and executed directly, as the command is,
	 * so neither side pays for a shell the other does not run. Pipes,
	 * redirections, lists and command substitutions go to /bin/sh -c.
	 */
	ret = wordexp(o->baseline_cmd, &g->we, WRDE_NOCMD);
	if (ret == 0 && g->we.we_wordc > 0) {
		g->have_we = true;
		g->base_argv = g->we.we_wordv;
		g->base_argc = (int)g->we.we_wordc;
	} else if (ret == 0 || ret == WRDE_BADCHAR || ret == WRDE_CMDSUB) {
		if (ret == 0)
			wordfree(&g->we);
		g->sh_argv[0] = "/bin/sh";
		g->sh_argv[1] = "-c";
		g->sh_argv[2] = (char *)o->baseline_cmd;
		g->sh_argv[3] = NULL;
		g->base_argv = g->sh_argv;
		g->base_argc = 3;
	} else {
		snprintf(err, errlen, "--baseline-cmd '%s': %s", o->baseline_cmd,
			 ret == WRDE_SYNTAX ? "unbalanced quotes or bad syntax"
					    : "cannot be parsed");
		return -EINVAL;
	}
	g->cmp.baseline_kind = "command";
	g->cmp.baseline_name = o->baseline_cmd;
	return 0;
}

int gating__check_machine(const struct gating *g, const struct probeset *ps, char *err,
			  size_t errlen)
{
	const struct gate_spec *spec = &g->o->gate_spec;

	for (int m = 0; m < METRIC_NR; m++) {
		const char *why = NULL;

		if (!spec->gated[m])
			continue;
		if (m == METRIC_INSTRUCTIONS) {
			for (int i = 0; i < ps->nunavailable; i++)
				if (!strcmp(ps->unavailable[i].name, "perf"))
					why = ps->unavailable[i].reason;
		} else if (m != METRIC_WALL && m != METRIC_CPU && m != METRIC_MAX_RSS &&
			   !ps->sched) {
			for (int i = 0; i < ps->nunavailable; i++)
				if (!strcmp(ps->unavailable[i].name, "ebpf"))
					why = ps->unavailable[i].reason;
			if (!why)
				why = "the ebpf source is not available";
		}
		if (why) {
			snprintf(err, errlen, "cannot gate '%s' on this machine: %s",
				 metric_def(m)->name, why);
			return -ENODATA;
		}
	}
	return 0;
}

static int compare(struct gating *g, struct series *se, struct session *s, char *err, size_t errlen)
{
	struct gate_side bside, nside;
	bool paired = se->sv[SERIES_BASE] != NULL;
	char what[64];
	int ret;

	ret = gate_side_init(&nside, se->runs[SERIES_NEW], se->n[SERIES_NEW], &s->host);
	if (ret)
		goto out_nomem;
	if (paired) {
		ret = gate_side_init(&bside, se->runs[SERIES_BASE], se->n[SERIES_BASE], NULL);
		if (ret) {
			gate_side_free(&nside);
			goto out_nomem;
		}
		nside.host = NULL;
	}
	/* The command ran on this machine; a metric missing now is a surprise worth naming. */
	snprintf(what, sizeof(what), "this run");
	ret = gate_check_available(&g->o->gate_spec, &nside, what, err, errlen);
	if (!ret && paired)
		ret = gate_check_available(&g->o->gate_spec, &bside, "the baseline command's run",
					   err, errlen);
	if (!ret) {
		g->cmp.new_command = session_command(s);
		ret = gate_compare(&g->o->gate_spec, paired ? &bside : &g->bside, &nside, paired,
				   &g->cmp);
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (ret && ret != -ENODATA)
		snprintf(err, errlen, "cannot compare with the baseline: %s", strerror(-ret));
	gate_side_free(&nside);
	if (paired)
		gate_side_free(&bside);
	return ret;
out_nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

int gating__run(struct gating *g, struct series *se, struct session *s, char *err, size_t errlen)
{
	unsigned added = 0;
	int ret;

	g->compared = false;
	if (se->stopped)
		return 0;
	ret = compare(g, se, s, err, errlen);
	while (!ret && !se->stopped && gate_wants_more(&g->cmp) &&
	       se->measured[SERIES_NEW] < g->o->gate_spec.max_runs) {
		if (g->o->verbose)
			fprintf(stderr, "tsarun: inconclusive after %u runs: one more\n",
				se->measured[SERIES_NEW]);
		ret = series_run(se, 0, 1, err, errlen);
		if (ret || se->stopped)
			break;
		added++;
		ret = compare(g, se, s, err, errlen);
	}
	if (ret)
		return ret;
	/* A run added here may have failed: the command's status then wins, no verdict. */
	if (se->stopped)
		return 0;
	g->cmp.runs_added = added;
	g->compared = true;
	return 0;
}

void gating__free(struct gating *g)
{
	if (g->have_bside)
		gate_side_free(&g->bside);
	session__free(&g->base);
	if (g->have_we)
		wordfree(&g->we);
	comparison__free(&g->cmp);
}
