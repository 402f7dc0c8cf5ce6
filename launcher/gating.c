// SPDX-License-Identifier: MIT
/* The gate around a series of runs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fscreds.h"

#include "artifact.h"
#include "gate_report.h"
#include "gating.h"
#include "outputs.h"
#include "probe_set.h"
#include "series.h"

/*
 * The baseline's bytes, read with the rights of the user tsarun works for
 * (a file anyone may have written), without blocking on a device or a FIFO
 * left there; parsed later, confined (gating__parse()).
 */
static int read_baseline(struct gating *g, const char *path, char *err, size_t errlen)
{
	struct fscreds_save sv;
	struct stat st;
	size_t cap = 0;
	int fd, ret;

	ret = fscreds_enter(NULL, &sv);
	if (ret) {
		snprintf(err, errlen, "cannot read baseline '%s': %s", path, strerror(-ret));
		return ret;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	ret = fd < 0 ? -errno : 0;
	fscreds_leave(&sv);
	if (ret) {
		snprintf(err, errlen, "cannot read baseline '%s': %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		snprintf(err, errlen, "cannot read baseline '%s': %s", path,
			 S_ISDIR(st.st_mode) ? "it is a directory"
					     : "not a regular file or a pipe");
		goto out;
	}
	/* A pipe is read to its end, waiting for its writer (signals still end tsarun here). */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	for (;;) {
		ssize_t n;

		if (g->base_len + 1 >= cap) {
			char *t;

			cap = cap ? 2 * cap : 64 * 1024;
			if (cap > (1ull << 30) + 2) {
				ret = -EFBIG;
				snprintf(err, errlen, "baseline '%s' is larger than 1 GiB", path);
				goto out;
			}
			t = realloc(g->base_text, cap);
			if (!t) {
				ret = -ENOMEM;
				snprintf(err, errlen, "cannot read baseline '%s': out of memory",
					 path);
				goto out;
			}
			g->base_text = t;
		}
		n = read(fd, g->base_text + g->base_len, cap - g->base_len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot read baseline '%s': %s", path,
				 strerror(-ret));
			goto out;
		}
		if (n == 0)
			break;
		g->base_len += (size_t)n;
	}
	g->base_text[g->base_len] = '\0';
out:
	close(fd);
	return ret;
}

int gating__parse(struct gating *g, char *err, size_t errlen)
{
	const struct gating_opts *o = &g->o;
	char what[600];
	int ret;

	if (!o->baseline_path || g->have_bside)
		return 0;
	ret =
	    artifact_parse(g->base_text, g->base_len, o->baseline_path,
			   &(struct artifact_read_opts){.what = "baseline"}, &g->base, err, errlen);
	free(g->base_text);
	g->base_text = NULL;
	if (ret)
		return ret;
	{
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
			ret = gate_check_available(o->spec, &g->bside, what, err, errlen);
		if (!ret)
			ret = gate_check_runs(&g->bside, what, err, errlen);
		if (ret)
			return ret;
		g->cmp.baseline_kind = "artifact";
		g->cmp.baseline_name = o->baseline_path;
		g->cmp.base_command = session_command(&g->base);
		return 0;
	}
}

int gating__prepare(struct gating *g, const struct gating_opts *o, char *err, size_t errlen)
{
	int ret;

	memset(g, 0, sizeof(*g));
	g->o = *o;
	if (o->baseline_path)
		return read_baseline(g, o->baseline_path, err, errlen);
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
	const struct gate_spec *spec = g->o.spec;

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
	ret = gate_check_available(g->o.spec, &nside, what, err, errlen);
	if (!ret && paired)
		ret = gate_check_available(g->o.spec, &bside, "the baseline command's run", err,
					   errlen);
	if (!ret) {
		g->cmp.new_command = session_command(s);
		ret = gate_compare(g->o.spec, paired ? &bside : &g->bside, &nside, paired, &g->cmp);
		if (!ret)
			outputs_stamp(&g->cmp);
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
	       se->measured[SERIES_NEW] < g->o.spec->max_runs) {
		if (g->o.verbose)
			fprintf(stderr, "tsarun: inconclusive after %u runs: one more\n",
				se->measured[SERIES_NEW]);
		if (se->progress) {
			char head[512];

			gate_report_headline(&g->cmp, head, sizeof(head));
			snprintf(se->added_why, sizeof(se->added_why), "%.*s",
				 (int)sizeof(se->added_why) - 1, head);
			se->max_runs = g->o.spec->max_runs;
		}
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
	free(g->base_text);
	g->base_text = NULL;
	if (g->have_bside)
		gate_side_free(&g->bside);
	session__free(&g->base);
	if (g->have_we)
		wordfree(&g->we);
	comparison__free(&g->cmp);
}
