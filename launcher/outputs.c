// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/outfile.h"

#include "artifact.h"
#include "bashprof.h"
#include "critpath.h"
#include "export.h"
#include "flame.h"
#include "gate.h"
#include "gate_report.h"
#include "outputs.h"
#include "report_html.h"
#include "report_text.h"
#include "run.h"
#include "stacks.h"
#include "table.h"
#include "termwrap.h"
#include "textsafe.h"
#include "flamediff.h"
#include "trace.h"
#include "user.h"

/* Every file a session may write, planned before the command runs. */
enum {
	OUT_ARTIFACT,
	OUT_REPORT,
	OUT_JUNIT,
	OUT_MARKDOWN,
	OUT_SUMMARY,
	OUT_STREAM,
	OUT_FOLDED, /* bash.folded, beside the artifact */
	/* --flame and --timeline, in the profile directory */
	OUT_BASH_SVG,
	OUT_BASH_CPU_SVG,
	OUT_OFFCPU_FOLDED,
	OUT_ONCPU_FOLDED,
	OUT_WALL_FOLDED,
	OUT_OFFCPU_SVG,
	OUT_ONCPU_SVG,
	OUT_WALL_SVG,
	OUT_TRACE,
	OUT_CRITPATH_FOLDED, /* --flame with the critical path */
	OUT_CRITPATH_SVG,
	/* a comparison's differential flame graphs: --flame with a baseline, compare --flame-diff */
	OUT_OFFCPU_DIFF_FOLDED,
	OUT_ONCPU_DIFF_FOLDED,
	OUT_WALL_DIFF_FOLDED,
	OUT_OFFCPU_DIFF_SVG,
	OUT_ONCPU_DIFF_SVG,
	OUT_WALL_DIFF_SVG,
	OUT_HTML, /* --html */
	OUT_EXPORT_CSV,
	OUT_EXPORT_RUNS_CSV,
	OUT_EXPORT_HYPERFINE,
	OUT_N,
};

_Static_assert(OUT_N <= 64, "struct outputs keeps the files written in a 64-bit mask");

/* The files tsarun names: after the artifact's stem (tsarun.json: tsarun.wall.svg). */
static const char *const profile_names[OUT_N] = {
    [OUT_FOLDED] = "bash.folded",
    [OUT_BASH_SVG] = "bash.svg",
    [OUT_BASH_CPU_SVG] = "bash-cpu.svg",
    [OUT_OFFCPU_FOLDED] = "offcpu.folded",
    [OUT_ONCPU_FOLDED] = "oncpu.folded",
    [OUT_WALL_FOLDED] = "wall.folded",
    [OUT_OFFCPU_SVG] = "offcpu.svg",
    [OUT_ONCPU_SVG] = "oncpu.svg",
    [OUT_WALL_SVG] = "wall.svg",
    [OUT_TRACE] = "trace.json",
    [OUT_CRITPATH_FOLDED] = "critpath.folded",
    [OUT_CRITPATH_SVG] = "critpath.svg",
    [OUT_OFFCPU_DIFF_FOLDED] = "offcpu.diff.folded",
    [OUT_ONCPU_DIFF_FOLDED] = "oncpu.diff.folded",
    [OUT_WALL_DIFF_FOLDED] = "wall.diff.folded",
    [OUT_OFFCPU_DIFF_SVG] = "offcpu.diff.svg",
    [OUT_ONCPU_DIFF_SVG] = "oncpu.diff.svg",
    [OUT_WALL_DIFF_SVG] = "wall.diff.svg",
};

struct outputs {
	struct outfile *f[OUT_N];
	struct outdir *out_dir; /* --out-dir, made with the user's rights */
	char *artifact_path;
	char *profile_dir; /* where --flame's and --timeline's files go, for messages */
	char *stem;	   /* the artifact's name less ".json": what those files start with */
	uint64_t named;	   /* which of the files tsarun names were written (1 << OUT_*) */
	char *stream_name;
	bool stream_dash; /* --stream -: stderr, which the stream probe reopens itself */
	bool wide;	  /* --wide: the line of what was written is not wrapped */
	/* The user the command ran as (-1: tsarun's own), whose the step summary must be. */
	uid_t cmd_uid;
};

bool outputs_use_color(enum color_mode color, FILE *f)
{
	const char *no = getenv("NO_COLOR");

	if (color == COLOR_NEVER)
		return false;
	if (color == COLOR_ALWAYS)
		return true;
	if (no && *no)
		return false;
	return isatty(fileno(f));
}

size_t outputs_stderr_width(bool wide)
{
	return wide ? 0 : termwrap_width(STDERR_FILENO);
}

/* path, or dir/path when path is relative and dir given. NULL: out of memory. */
static char *join(const char *dir, const char *path)
{
	char *out;

	if (!dir || path[0] == '/')
		return strdup(path);
	return asprintf(&out, "%s/%s", dir, path) < 0 ? NULL : out;
}

/*
 * The artifact's name less its ".json": run.json's flame graph is
 * run.wall.svg, beside it, so that two profiles in one folder keep apart.
 * "tsarun" for an artifact that goes to a device or a pipe.
 */
static char *stem_of(const char *artifact, bool in_place)
{
	const char *base = artifact ? strrchr(artifact, '/') : NULL;
	size_t n;

	base = base ? base + 1 : artifact;
	if (in_place || !base || !*base)
		return strdup("tsarun");
	n = strlen(base);
	if (n > 5 && !strcmp(base + n - 5, ".json"))
		n -= 5;
	return strndup(base, n);
}

/*
 * A file tsarun names: DIR/STEM.NAME, or DIR/NAME where there is no stem
 * (--flame-diff DIR); STEM.NAME without a DIR (an artifact named without one).
 */
static char *named_path(const struct outputs *out, const char *dir, int i)
{
	char *path;
	int n;

	if (out->stem)
		n = asprintf(&path, "%s%s%s.%s", dir ? dir : "", dir ? "/" : "", out->stem,
			     profile_names[i]);
	else
		n = asprintf(&path, "%s%s%s", dir ? dir : "", dir ? "/" : "", profile_names[i]);
	return n < 0 ? NULL : path;
}

/* path made absolute, its links resolved (its directory's, when it does not exist yet). */
static char *canonical(const char *path)
{
	char *dir, *out = realpath(path, NULL), *slash, *real;

	if (out || errno != ENOENT)
		return out;
	dir = strdup(path);
	if (!dir)
		return NULL;
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	real = realpath(slash ? dir : ".", NULL);
	if (real && asprintf(&out, "%s/%s", real, slash ? strrchr(path, '/') + 1 : path) < 0)
		out = NULL;
	free(real);
	free(dir);
	return out;
}

/* Is the stream's file one of the files tsarun reads or writes besides it? Which one, or NULL. */
static const char *stream_clash(const struct outputs_opts *o, const char *stream,
				const char *artifact)
{
	const struct {
		const char *path, *what;
	} others[] = {
	    {artifact, "the artifact"},
	    {o->report_path, "--report"},
	    {o->junit_path, "--junit"},
	    {o->markdown_path, "--markdown"},
	    {o->baseline_path, "--baseline"},
	    {o->html_path, "--html"},
	    {o->export_csv_path, "--export-csv"},
	    {o->export_runs_csv_path, "--export-runs-csv"},
	    {o->export_hyperfine_path, "--export-hyperfine"},
	};
	char *s = canonical(stream);
	const char *clash = NULL;

	for (size_t i = 0; s && !clash && i < sizeof(others) / sizeof(others[0]); i++) {
		char *c = others[i].path ? canonical(others[i].path) : NULL;

		if (c && !strcmp(c, s))
			clash = others[i].what;
		free(c);
	}
	free(s);
	return clash;
}

/* What each output is called in a message: its option, or its file's name. */
static const char *output_name(int i)
{
	static const char *const names[OUT_N] = {
	    [OUT_ARTIFACT] = "the artifact",
	    [OUT_REPORT] = "--report",
	    [OUT_JUNIT] = "--junit",
	    [OUT_MARKDOWN] = "--markdown",
	    [OUT_SUMMARY] = "the step summary",
	    [OUT_STREAM] = "the stream",
	    [OUT_HTML] = "--html",
	    [OUT_EXPORT_CSV] = "--export-csv",
	    [OUT_EXPORT_RUNS_CSV] = "--export-runs-csv",
	    [OUT_EXPORT_HYPERFINE] = "--export-hyperfine",
	};

	return names[i] ? names[i] : profile_names[i];
}

/*
 * Two outputs at one file (--report tsarun.json) would leave only the one
 * written last: refuse before the command runs. Written in place (a
 * descriptor, the null device) any number may share it.
 */
static int same_file(const struct outputs *out, char *err, size_t errlen)
{
	char *paths[OUT_N] = {0};
	int ret = 0;

	for (int i = 0; i < OUT_N; i++)
		if (out->f[i] && !outfile__in_place(out->f[i]))
			paths[i] = canonical(outfile__path(out->f[i]));
	for (int i = 0; !ret && i < OUT_N; i++)
		for (int j = i + 1; !ret && paths[i] && j < OUT_N; j++)
			if (paths[j] && !strcmp(paths[i], paths[j])) {
				snprintf(err, errlen, "%s and %s would both be written to '%s'",
					 output_name(i), output_name(j), outfile__path(out->f[j]));
				ret = -EINVAL;
			}
	for (int i = 0; i < OUT_N; i++)
		free(paths[i]);
	return ret;
}

static int plan(struct outputs *out, int i, const char *path, const struct outfile_opts *base,
		enum outfile_mode mode, const char *what, const char *hint, char *err,
		size_t errlen)
{
	struct outfile_opts fo = *base;

	fo.mode = mode;
	fo.what = what;
	fo.hint = hint;
	out->f[i] = outfile__plan(path, &fo, err, errlen);
	return out->f[i] ? 0 : -EINVAL;
}

/*
 * --interval: the stream, opened before the command runs, so that a typo
 * does not cost a run and a link the command puts there later is not
 * followed. --stream FILE, "-" for stderr; by default beside the artifact,
 * named after it (tsarun.json: tsarun.jsonl).
 */
static int plan_stream(struct outputs *out, const struct outputs_opts *o,
		       const struct outfile_opts *base, char *err, size_t errlen)
{
	const char *artifact = out->artifact_path;
	size_t len;

	if (o->stream_path && !strcmp(o->stream_path, "-")) {
		out->stream_dash = true;
		out->stream_name = strdup("stderr");
		return out->stream_name ? 0 : -ENOMEM;
	}
	if (o->stream_path) {
		/* Like --json: every file a run leaves goes into --out-dir. */
		out->stream_name = join(o->out_dir, o->stream_path);
	} else if (outputs__artifact_in_place(out)) {
		snprintf(err, errlen,
			 "--interval: the artifact goes to '%s', not a file: name the stream's "
			 "file with --stream FILE (- for stderr)",
			 artifact);
		return -EINVAL;
	} else {
		len = strlen(artifact);
		if (len > 5 && !strcmp(artifact + len - 5, ".json"))
			len -= 5;
		if (asprintf(&out->stream_name, "%.*s.jsonl", (int)len, artifact) < 0)
			out->stream_name = NULL;
	}
	if (!out->stream_name) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* Opening it truncates it: never a file tsarun reads or writes otherwise. */
	if (stream_clash(o, out->stream_name, artifact)) {
		snprintf(err, errlen, "--stream '%s' is also %s's file: give each its own",
			 out->stream_name, stream_clash(o, out->stream_name, artifact));
		return -EINVAL;
	}
	{
		struct outfile_opts so = *base;

		/* A FIFO's reader started just before tsarun gets a second to open it. */
		so.wait_reader_ms = 1000;
		return plan(out, OUT_STREAM, out->stream_name, &so, OUTFILE_STREAM,
			    "the interval stream", " (use --stream FILE, - for stderr)", err,
			    errlen);
	}
}

/* --flame and --timeline: into --out-dir, else beside the artifact, else here. */
static int plan_profiles(struct outputs *out, const struct outputs_opts *o,
			 const struct outfile_opts *base, char *err, size_t errlen)
{
	const char *slash;
	int ret = 0;

	if (o->out_dir)
		out->profile_dir = strdup(o->out_dir);
	else if (outputs__artifact_in_place(out))
		out->profile_dir = strdup("."); /* --json /dev/null: not next to a device */
	else if ((slash = strrchr(out->artifact_path, '/')))
		out->profile_dir =
		    slash == out->artifact_path
			? strdup("/")
			: strndup(out->artifact_path, (size_t)(slash - out->artifact_path));
	else
		out->profile_dir = strdup(".");
	if (!out->profile_dir)
		return -ENOMEM;
	for (int i = OUT_BASH_SVG; !ret && i <= OUT_WALL_DIFF_SVG; i++) {
		bool want = i == OUT_TRACE ? o->timeline
			    : i == OUT_CRITPATH_FOLDED || i == OUT_CRITPATH_SVG
				? o->timeline && o->flame
			    : i == OUT_BASH_SVG || i == OUT_BASH_CPU_SVG ? o->flame && o->bash
			    : i > OUT_CRITPATH_SVG			 ? o->flame && o->gate
									 : o->flame;
		char *path;

		if (!want)
			continue;
		if (!(path = named_path(out, out->profile_dir, i)))
			return -ENOMEM;
		ret = plan(out, i, path, base, OUTFILE_REPLACE, NULL, NULL, err, errlen);
		free(path);
	}
	return ret;
}

struct outputs *outputs__plan(const struct outputs_opts *o, const struct target_user *user,
			      bool run, char *err, size_t errlen)
{
	struct outputs *out = calloc(1, sizeof(*out));
	const char *gha = getenv("GITHUB_ACTIONS"), *summary = getenv("GITHUB_STEP_SUMMARY");
	struct outfile_opts base = {.dash = OUTFILE_DASH_STDOUT};
	int ret = 0;

	if (!out) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	out->cmd_uid = user && user->change ? user->uid : (uid_t)-1;
	out->wide = o->wide;
	/*
	 * Root that runs the command as someone else, for no one (no sudo):
	 * the new files are that user's, as the command's are. Under sudo they
	 * are the invoking user's, made with that user's rights.
	 */
	if (user && user->change && !user->on_behalf && user->uid != 0) {
		base.give = true;
		base.give_uid = user->uid;
		base.give_gid = user->gid;
	}
	if (run) {
		const char *name = o->json_path ? o->json_path : "tsarun.json";

		if (o->out_dir) {
			char why[600];

			out->out_dir = outdir__open(NULL, o->out_dir, true, why, sizeof(why));
			if (!out->out_dir) {
				snprintf(err, errlen, "cannot create --out-dir '%s': %s",
					 o->out_dir, why);
				goto fail;
			}
		}
		out->artifact_path = join(o->out_dir, name);
		if (!out->artifact_path) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		{
			/* The last run's artifact stays, as PATH.old (perf's perf.data.old). */
			struct outfile_opts ao = base;

			ao.keep_old = true;
			ret = plan(out, OUT_ARTIFACT, out->artifact_path, &ao, OUTFILE_REPLACE,
				   "the artifact", " (use --json FILE or --out-dir DIR)", err,
				   errlen);
		}
		if (!ret && o->interval)
			ret = plan_stream(out, o, &base, err, errlen);
		if (!ret && o->report_path)
			ret = plan(out, OUT_REPORT, o->report_path, &base, OUTFILE_REPLACE,
				   "the report", " (use --report FILE)", err, errlen);
		if (!ret && o->export_csv_path)
			ret = plan(out, OUT_EXPORT_CSV, o->export_csv_path, &base, OUTFILE_REPLACE,
				   "the threads' CSV", " (use --export-csv FILE)", err, errlen);
		if (!ret && o->export_runs_csv_path)
			ret = plan(out, OUT_EXPORT_RUNS_CSV, o->export_runs_csv_path, &base,
				   OUTFILE_REPLACE, "the runs' CSV",
				   " (use --export-runs-csv FILE)", err, errlen);
		if (!ret && o->export_hyperfine_path)
			ret = plan(out, OUT_EXPORT_HYPERFINE, o->export_hyperfine_path, &base,
				   OUTFILE_REPLACE, "the hyperfine export",
				   " (use --export-hyperfine FILE)", err, errlen);
	}
	if (!ret && o->junit_path)
		ret = plan(out, OUT_JUNIT, o->junit_path, &base, OUTFILE_REPLACE,
			   "the JUnit report", " (use --junit FILE)", err, errlen);
	if (!ret && o->markdown_path)
		ret = plan(out, OUT_MARKDOWN, o->markdown_path, &base, OUTFILE_REPLACE,
			   "the Markdown report", " (use --markdown FILE)", err, errlen);
	if (!ret && o->html_path)
		ret = plan(out, OUT_HTML, o->html_path, &base, OUTFILE_REPLACE, "the HTML report",
			   " (use --html FILE)", err, errlen);
	/* The runner's file: opened when the verdict is there, never through a link. */
	if (!ret && o->gate && gha && !strcmp(gha, "true") && summary && *summary)
		ret = plan(out, OUT_SUMMARY, summary, &base, OUTFILE_APPEND,
			   "the step summary (GITHUB_STEP_SUMMARY)", NULL, err, errlen);
	if (!ret && run &&
	    !(out->stem = stem_of(out->artifact_path, outputs__artifact_in_place(out)))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (!ret && run && o->bash && !outputs__artifact_in_place(out)) {
		/* STEM.bash.folded beside the artifact; there is no beside to a device or a pipe. */
		const char *slash = strrchr(out->artifact_path, '/');
		char *dir = slash
				? strndup(out->artifact_path, (size_t)(slash - out->artifact_path))
				: NULL;
		char *path = !slash || dir ? named_path(out, dir, OUT_FOLDED) : NULL;

		free(dir);
		if (!path) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		ret = plan(out, OUT_FOLDED, path, &base, OUTFILE_REPLACE, NULL, NULL, err, errlen);
		free(path);
	}
	if (!ret && run && (o->flame || o->timeline))
		ret = plan_profiles(out, o, &base, err, errlen);
	/* compare --flame-diff DIR: the directory made as --out-dir is, the files in it. */
	if (!ret && !run && o->flame_diff_dir) {
		char why[600];

		out->out_dir = outdir__open(NULL, o->flame_diff_dir, true, why, sizeof(why));
		out->profile_dir = strdup(o->flame_diff_dir);
		if (!out->out_dir || !out->profile_dir) {
			snprintf(err, errlen, "cannot create --flame-diff '%s': %s",
				 o->flame_diff_dir, out->out_dir ? "out of memory" : why);
			goto fail;
		}
		for (int i = OUT_OFFCPU_DIFF_FOLDED; !ret && i <= OUT_WALL_DIFF_SVG; i++) {
			char *path = named_path(out, o->flame_diff_dir, i);

			if (!path) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			ret = plan(out, i, path, &base, OUTFILE_REPLACE, NULL, NULL, err, errlen);
			free(path);
		}
	}
	if (!ret)
		ret = same_file(out, err, errlen);
	if (ret)
		goto fail;
	return out;
fail:
	outputs__free(out);
	return NULL;
}

void outputs__abort(struct outputs *out)
{
	for (int i = 0; out && i < OUT_N; i++)
		outfile__abort(out->f[i]);
}

void outputs__free(struct outputs *out)
{
	if (!out)
		return;
	for (int i = 0; i < OUT_N; i++)
		outfile__free(out->f[i]);
	outdir__free(out->out_dir);
	free(out->artifact_path);
	free(out->profile_dir);
	free(out->stem);
	free(out->stream_name);
	free(out);
}

const char *outputs__artifact_path(const struct outputs *out)
{
	return out->artifact_path;
}

bool outputs__artifact_in_place(const struct outputs *out)
{
	return out->f[OUT_ARTIFACT] && outfile__in_place(out->f[OUT_ARTIFACT]);
}

int outputs__take_stream(struct outputs *out, const char **name, bool *shared)
{
	*name = out->stream_name;
	*shared = false;
	if (out->stream_dash)
		return 2;
	if (!out->f[OUT_STREAM])
		return -1;
	*shared = outfile__shared(out->f[OUT_STREAM]);
	return outfile__take_fd(out->f[OUT_STREAM]);
}

/* Write f's output: render into it and commit. 0, or -errno with the message on stderr. */
typedef int (*renderer)(FILE *f, const void *ctx);

static int write_one(struct outfile *of, renderer render, const void *ctx)
{
	char err[700];
	FILE *f = outfile__open(of, err, sizeof(err));
	int ret;

	if (!f) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		return -EIO;
	}
	ret = render(f, ctx);
	if (ret) {
		outfile__abort(of);
		snprintf(err, sizeof(err), "cannot write '%s': %s", outfile__path(of),
			 strerror(-ret));
		textsafe_term_line(stderr, "tsarun: ", err, "");
		return ret;
	}
	ret = outfile__commit(of, err, sizeof(err));
	if (ret)
		textsafe_term_line(stderr, "tsarun: ", err, "");
	return ret;
}

/* A file tsarun names, written: said in the one line of what went where. */
static int write_named(struct outputs *out, int i, renderer render, const void *ctx)
{
	int ret = write_one(out->f[i], render, ctx);

	if (!ret)
		out->named |= 1ull << i;
	return ret;
}

/*
 * One line for every file tsarun named and wrote, by folder:
 * "tsarun: wrote run.bash.folded, run.wall.svg in ./out". A file whose
 * name the user gave (--report, --html, ...) is where they said.
 */
static void say_named(const struct outputs *out, bool quiet)
{
	char line[4096], seen[OUT_N] = {0}, *safe, *text;
	size_t n = 0;

	if (quiet || !out->named)
		return;
	n += (size_t)snprintf(line, sizeof(line), "wrote ");
	for (int i = 0; i < OUT_N; i++) {
		const char *p = out->f[i] ? outfile__path(out->f[i]) : NULL, *slash;
		size_t dlen;

		if (!(out->named & (1ull << i)) || seen[i] || !p)
			continue;
		slash = strrchr(p, '/');
		dlen = slash ? (size_t)(slash - p) : 0;
		/* This file and every later one in the same folder, then the folder. */
		for (int j = i, first = 1; j < OUT_N; j++) {
			const char *q = out->f[j] ? outfile__path(out->f[j]) : NULL, *qs;

			if (!(out->named & (1ull << j)) || seen[j] || !q)
				continue;
			qs = strrchr(q, '/');
			if ((qs ? (size_t)(qs - q) : 0) != dlen || strncmp(p, q, dlen))
				continue;
			seen[j] = 1;
			n += (size_t)snprintf(line + (n < sizeof(line) ? n : sizeof(line)),
					      n < sizeof(line) ? sizeof(line) - n : 0, "%s%s",
					      first ? "" : ", ", qs ? qs + 1 : q);
			first = 0;
		}
		n += (size_t)snprintf(line + (n < sizeof(line) ? n : sizeof(line)),
				      n < sizeof(line) ? sizeof(line) - n : 0, " in %.*s; ",
				      slash ? (int)(dlen ? dlen : 1) : 1, slash ? p : ".");
	}
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	if (n > 2 && line[n - 2] == ';')
		line[n -= 2] = '\0';
	if (out->named & (1ull << OUT_TRACE))
		snprintf(line + n, sizeof(line) - n, " (ui.perfetto.dev opens the trace)");
	/*
	 * The names are the user's (the artifact's stem, --out-dir): escaped,
	 * then wrapped at the terminal's width (many files make a long line).
	 */
	if (!(safe = textsafe_dup(textsafe_term, line, strlen(line))) ||
	    asprintf(&text, "tsarun: %s\n", safe) < 0) {
		free(safe);
		textsafe_term_line(stderr, "tsarun: ", line, "");
		return;
	}
	termwrap_fputs(stderr, text, out->wide ? 0 : termwrap_width(STDERR_FILENO));
	free(text);
	free(safe);
}

struct table_ctx {
	const struct session *s;
	const struct outputs_opts *o;
	const char *artifact_path;
	const struct outputs *out;
};

static int render_table(FILE *f, const void *ctx)
{
	const struct table_ctx *c = ctx;
	struct report_text_opts ro = {
	    .table =
		{
		    .sort = c->o->sort,
		    .top = c->o->top,
		    .color = outputs_use_color(c->o->color, f),
		    .artifact = c->artifact_path,
		    .artifact_keeps_old = outfile__keeps_old(c->out->f[OUT_ARTIFACT]),
		    .width = c->o->wide ? 0 : termwrap_width(fileno(f)),
		},
	    .bash =
		{
		    .max_depth = c->o->bash_depth,
		    .min_percent = -1,
		    .top = c->o->bash_top,
		    .script = c->o->script,
		},
	};

	return report_text_print(f, c->s, &ro);
}

/* Returns 0, or -errno when the --report file could not be written whole. */
static int write_table(const struct session *s, const struct outputs_opts *o, struct outputs *out)
{
	struct table_ctx c = {.s = s, .o = o, .artifact_path = out->artifact_path, .out = out};

	/*
	 * A command that never started has no table to show: the one line
	 * that said why (as env(1) and timeout(1) say it) is the report. The
	 * artifact still records the attempt; --report still gets the table.
	 */
	if (!out->f[OUT_REPORT] && s->nruns == 1 && !s->cmp && s->runs[0].status == RUN_NOT_STARTED)
		return 0;
	if (!out->f[OUT_REPORT]) {
		render_table(stderr, &c);
		return 0;
	}
	return write_one(out->f[OUT_REPORT], render_table, &c);
}

static int render_threads_csv(FILE *f, const void *ctx)
{
	const struct session *s = ctx;

	return export_threads_csv(f, &s->runs[s->nruns - 1]);
}

static int render_runs_csv(FILE *f, const void *ctx)
{
	return export_runs_csv(f, ctx);
}

static int render_hyperfine(FILE *f, const void *ctx)
{
	return export_hyperfine_json(f, ctx);
}

/* --export-csv, --export-runs-csv, --export-hyperfine: those asked for. */
static int write_exports(const struct session *s, struct outputs *out)
{
	static const struct {
		int i;
		renderer render;
	} exports[] = {
	    {OUT_EXPORT_CSV, render_threads_csv},
	    {OUT_EXPORT_RUNS_CSV, render_runs_csv},
	    {OUT_EXPORT_HYPERFINE, render_hyperfine},
	};
	int ret = 0;

	for (size_t k = 0; k < sizeof(exports) / sizeof(exports[0]); k++)
		if (out->f[exports[k].i] && write_one(out->f[exports[k].i], exports[k].render, s))
			ret = -EIO;
	return ret;
}

static int render_folded(FILE *f, const void *ctx)
{
	return bashprof__write_folded(ctx, f);
}

struct gate_ctx {
	const struct comparison *c;
	const char *command;
	void (*render)(FILE *f, const struct comparison *c, const char *command);
};

static int render_gate(FILE *f, const void *ctx)
{
	const struct gate_ctx *g = ctx;

	g->render(f, g->c, g->command);
	return ferror(f) ? -EIO : 0;
}

/* The runner's file, when the command ran as another user: one name, that user's (or tsarun's). */
static void summary_policy(const struct outputs *out, const struct stat *st, char *err,
			   size_t errlen)
{
	if (out->cmd_uid != (uid_t)-1 && st->st_nlink != 1)
		snprintf(err, errlen,
			 "it has %ju names (hard links), and tsarun appends only to the runner's "
			 "own file",
			 (uintmax_t)st->st_nlink);
	else if (out->cmd_uid != (uid_t)-1 && st->st_uid != out->cmd_uid && st->st_uid != geteuid())
		snprintf(err, errlen,
			 "it belongs to uid %ju, not to the user the command ran as (uid %ju)",
			 (uintmax_t)st->st_uid, (uintmax_t)out->cmd_uid);
}

/*
 * $GITHUB_STEP_SUMMARY is the CI runner's file, and the command ran (as
 * the invoking user) before tsarun appends to it, so it could have
 * replaced it: opened never through a link, only a regular file (outfile),
 * and when the command ran as another user, only a file with one name that
 * belongs to that user or to tsarun's own, so a hard link to another file
 * is refused too.
 */
static int write_summary(struct outputs *out, const struct comparison *c, const char *command)
{
	struct outfile *of = out->f[OUT_SUMMARY];
	const char *what = "the step summary (GITHUB_STEP_SUMMARY)";
	char err[700];
	struct stat st;
	FILE *f;

	/* The runner's rules first, on what is there; the open then checks the user's rights. */
	err[0] = '\0';
	if (!outfile__lstat(of, &st) && S_ISREG(st.st_mode))
		summary_policy(out, &st, err, sizeof(err));
	if (!err[0]) {
		f = outfile__open(of, err, sizeof(err));
		if (!f) {
			textsafe_term_line(stderr, "tsarun: ", err, "");
			return -EIO;
		}
		/* And on what was opened: the file may have changed in between. */
		if (!fstat(fileno(f), &st))
			summary_policy(out, &st, err, sizeof(err));
	}
	if (!err[0]) {
		gate_report_markdown(f, c, command);
		if (outfile__commit(of, err, sizeof(err))) {
			textsafe_term_line(stderr, "tsarun: ", err, "");
			return -EIO;
		}
		return 0;
	}
	outfile__abort(of);
	{
		char msg[1024];

		snprintf(msg, sizeof(msg), "cannot write %s '%s': %s", what, outfile__path(of),
			 err);
		textsafe_term_line(stderr, "tsarun: ", msg, "");
	}
	return -EPERM;
}

void outputs_stamp(struct comparison *c)
{
	c->judged_at = (int64_t)time(NULL);
	if (gethostname(c->hostname, sizeof(c->hostname) - 1))
		c->hostname[0] = '\0';
	c->hostname[sizeof(c->hostname) - 1] = '\0';
}

int outputs_gate(const struct comparison *c, const char *command, struct outputs *out)
{
	const char *gha = getenv("GITHUB_ACTIONS");
	int ret = 0, r;

	if (out->f[OUT_JUNIT]) {
		struct gate_ctx g = {c, command, gate_report_junit};

		r = write_one(out->f[OUT_JUNIT], render_gate, &g);
		ret = ret ? ret : r;
	}
	if (out->f[OUT_MARKDOWN]) {
		struct gate_ctx g = {c, command, gate_report_markdown};

		r = write_one(out->f[OUT_MARKDOWN], render_gate, &g);
		ret = ret ? ret : r;
	}
	if (!gha || strcmp(gha, "true"))
		return ret;
	if (out->f[OUT_SUMMARY]) {
		r = write_summary(out, c, command);
		ret = ret ? ret : r;
	}
	fflush(stderr);
	gate_report_annotations(stderr, c, command);
	fflush(stderr);
	return ret;
}

static int render_html(FILE *f, const void *ctx)
{
	return report_html_write(f, ctx);
}

int outputs_html(struct outputs *out, const struct report_html *h)
{
	return out->f[OUT_HTML] ? write_one(out->f[OUT_HTML], render_html, h) : 0;
}

/* --html on a run: the artifact as written, and what the page derives from the session. */
static int write_run_html(const struct session *s, const struct outputs_opts *o,
			  struct outputs *out)
{
	char *text = artifact_render(s);
	struct report_html h = {
	    .run = {.artifact = text,
		    .artifact_len = text ? strlen(text) : 0,
		    .s = s,
		    .name = out->artifact_path},
	};
	int ret;

	if (!text) {
		outfile__abort(out->f[OUT_HTML]);
		textsafe_term_line(stderr, "tsarun: cannot write the HTML report '",
				   outfile__path(out->f[OUT_HTML]), "': out of memory");
		return -ENOMEM;
	}
	ret = outputs_html(out, &h);
	free(text);
	if (!ret && !o->quiet)
		textsafe_term_line(stderr, "tsarun: HTML report: ", outfile__path(out->f[OUT_HTML]),
				   "");
	return ret;
}

enum { PROF_FOLDED, PROF_SVG, PROF_BASH_SVG, PROF_TRACE, PROF_CRITPATH_FOLDED, PROF_CRITPATH_SVG };

int outputs_stack_profile(FILE *f, const struct run *r, int which, bool svg,
			  struct stack_profile_layout layout, const char *command)
{
	static const char *const titles[] = {"Off-CPU time: where threads blocked",
					     "On-CPU samples: where threads ran",
					     "Wall-clock time: every thread's whole life"};
	static const char *const units[] = {"ns", "samples", "ns"};
	struct flame *fl;
	char sub[256];
	int ret;

	if (!svg)
		return which == 0   ? stacks_write_offcpu_folded(f, r)
		       : which == 1 ? stacks_write_oncpu_folded(f, r)
				    : stacks_write_wall_folded(f, r);
	fl = flame__new();
	snprintf(sub, sizeof(sub), "tsarun -- %s (run %d)%s%s", command ? command : "", r->index,
		 layout.inverted ? ", inverted: the root on top" : "",
		 layout.reversed ? ", reversed: rooted where stacks end, callers above" : "");
	if (fl)
		flame__set_reversed(fl, layout.reversed);
	ret = fl ? stacks_flame(fl, r, which) : -ENOMEM;
	if (!ret)
		ret = flame__write_svg(fl, f,
				       &(struct flame_svg_opts){.title = titles[which],
								.subtitle = sub,
								.units = units[which],
								.inverted = layout.inverted});
	flame__free(fl);
	return ret;
}

struct profile_ctx {
	const struct run *r;
	int which, kind;
	const char *command;
};

static int render_profile(FILE *f, const void *ctx)
{
	const struct profile_ctx *p = ctx;
	int ret;

	if (p->kind == PROF_BASH_SVG) {
		struct flame *fl = flame__new();
		char sub[256];

		snprintf(sub, sizeof(sub), "tsarun --bash %s (run %d): each command's own %s",
			 p->command ? p->command : "", p->r->index,
			 p->which ? "CPU time" : "wall time");
		ret = fl ? bashprof__flame(p->r->bash, fl, p->which == 1) : -ENOMEM;
		if (!ret)
			ret =
			    flame__write_svg(fl, f,
					     &(struct flame_svg_opts){
						 .title = p->which ? "bash: CPU time per command"
								   : "bash: wall time per command",
						 .subtitle = sub,
						 .units = "ns"});
		flame__free(fl);
		return ret;
	}
	if (p->kind == PROF_TRACE)
		return trace_write(f, p->r, p->command);
	if (p->kind == PROF_CRITPATH_FOLDED)
		return critpath_write_folded(f, p->r->critpath);
	if (p->kind == PROF_CRITPATH_SVG) {
		struct flame *fl = flame__new();
		char sub[256];

		snprintf(sub, sizeof(sub),
			 "tsarun -- %s (run %d): the segments the wall time waited for",
			 p->command ? p->command : "", p->r->index);
		ret = fl ? critpath_flame(fl, p->r->critpath) : -ENOMEM;
		if (!ret)
			ret = flame__write_svg(fl, f,
					       &(struct flame_svg_opts){.title = "critical path",
									.subtitle = sub,
									.units = "ns"});
		flame__free(fl);
		return ret;
	}
	return outputs_stack_profile(f, p->r, p->which, p->kind == PROF_SVG,
				     (struct stack_profile_layout){0}, p->command);
}

static int write_profile(struct outputs *out, int i, const struct run *r, int which, int kind,
			 const char *command)
{
	struct profile_ctx p = {.r = r, .which = which, .kind = kind, .command = command};

	return out->f[i] ? write_named(out, i, render_profile, &p) : 0;
}

struct diff_ctx {
	const struct comparison_sides *sides;
	int view;
	bool svg;
	const char *command;
};

static int render_diff(FILE *f, const void *ctx)
{
	const struct diff_ctx *c = ctx;

	return flamediff_write(f, c->sides->base, c->sides->nbase, c->sides->new, c->sides->nnew,
			       c->view, c->svg ? FLAMEDIFF_SVG : FLAMEDIFF_FOLDED, c->command);
}

int outputs_flame_diff(struct outputs *out, const struct comparison_sides *sides,
		       const char *command, bool quiet)
{
	char why[256];
	int ret = 0;

	if (!out->f[OUT_WALL_DIFF_SVG])
		return 0;
	if (flamediff_check(sides->base, sides->nbase, sides->new, sides->nnew, why, sizeof(why))) {
		/* --flame-diff was asked for by name: say why there is none. */
		if (!quiet || out->out_dir)
			textsafe_term_line(stderr, "tsarun: no differential flame graphs: ", why,
					   "");
		return out->out_dir && !out->artifact_path ? -ENODATA : 0;
	}
	for (int v = 0; v < FLAMEDIFF_NVIEWS; v++) {
		for (int svg = 0; svg < 2; svg++) {
			struct diff_ctx c = {
			    .sides = sides, .view = v, .svg = svg, .command = command};
			int i = (svg ? OUT_OFFCPU_DIFF_SVG : OUT_OFFCPU_DIFF_FOLDED) + v;

			if (write_named(out, i, render_diff, &c))
				ret = -EIO;
		}
	}
	/* compare --flame-diff: these are all it writes (a run says them with the rest). */
	if (!out->artifact_path)
		say_named(out, quiet);
	return ret;
}

/* --flame: folded profiles and their SVG flame graphs for the last run. */
static int write_profiles(const struct session *s, const struct outputs_opts *o,
			  struct outputs *out)
{
	static const int folded[] = {OUT_OFFCPU_FOLDED, OUT_ONCPU_FOLDED, OUT_WALL_FOLDED};
	static const int svg[] = {OUT_OFFCPU_SVG, OUT_ONCPU_SVG, OUT_WALL_SVG};
	const struct run *r = &s->runs[s->nruns - 1];
	int ret = 0;

	if (r->bash &&
	    (write_profile(out, OUT_BASH_SVG, r, 0, PROF_BASH_SVG, session_command(s)) ||
	     write_profile(out, OUT_BASH_CPU_SVG, r, 1, PROF_BASH_SVG, session_command(s))))
		ret = -EIO;
	if (!r->stacks)
		return ret;
	for (int w = 0; w < 3; w++) {
		if (w == 1 && !r->stacks->oncpu)
			continue; /* said in the report and the artifact */
		if (write_profile(out, folded[w], r, w, PROF_FOLDED, session_command(s)) ||
		    write_profile(out, svg[w], r, w, PROF_SVG, session_command(s)))
			ret = -EIO;
	}
	return ret;
}

/*
 * --timeline: the last run as a Chrome trace (STEM.trace.json) where
 * --flame puts its files; `tsarun report --format trace` writes the same
 * from the artifact.
 */
static int write_trace(const struct session *s, const struct outputs_opts *o, struct outputs *out)
{
	const struct run *r = &s->runs[s->nruns - 1];
	int ret;

	if (!r->timeline)
		return 0; /* unavailable: said with the sources */
	ret = write_profile(out, OUT_TRACE, r, 0, PROF_TRACE, session_command(s));
	if (!ret && r->critpath && o->flame) {
		ret = write_profile(out, OUT_CRITPATH_FOLDED, r, 0, PROF_CRITPATH_FOLDED,
				    session_command(s));
		if (!ret)
			ret = write_profile(out, OUT_CRITPATH_SVG, r, 0, PROF_CRITPATH_SVG,
					    session_command(s));
	}
	return ret;
}

int outputs_write(struct session *s, const struct outputs_opts *o, struct outputs *out)
{
	struct rusage self;
	char err[700];
	int ret = 0;

	if (s->nruns && s->runs[s->nruns - 1].bash && out->f[OUT_FOLDED]) {
		if (write_named(out, OUT_FOLDED, render_folded, s->runs[s->nruns - 1].bash))
			ret = -EIO;
		else
			s->bash_folded = outfile__path(out->f[OUT_FOLDED]);
	}
	/* A --report file asked for is written, with -q or --no-table too: they quiet stderr. */
	if ((!o->no_table || out->f[OUT_REPORT]) && s->nruns) {
		if (write_table(s, o, out))
			ret = -EIO;
	}
	if ((o->no_table || !s->nruns) && s->cmp && !o->quiet) {
		char head[512];

		/* Without the table, the gate still says what it decided. */
		gate_report_headline(s->cmp, head, sizeof(head));
		fprintf(stderr, "tsarun: gate %s: %s\n",
			s->cmp->outcome == GATE_FAIL   ? "FAILED"
			: s->cmp->outcome == GATE_WARN ? "passed with a warning"
						       : "passed",
			head);
		/* ... and where a failing or warning metric's change came from. */
		for (int i = 0; i < s->cmp->nmetrics; i++) {
			char why[2048];

			if (s->cmp->metrics[i].outcome == GATE_OK)
				continue;
			gate_report_explain_gist(s->cmp, s->cmp->metrics[i].metric, why,
						 sizeof(why));
			if (why[0])
				textsafe_term_line(stderr, "tsarun: ", why, "");
		}
	}
	if (!getrusage(RUSAGE_SELF, &self))
		s->supervisor_max_rss_kb = self.ru_maxrss;
	if (s->cmp && outputs_gate(s->cmp, session_command(s), out))
		ret = -EIO;
	if (artifact_write(s, out->f[OUT_ARTIFACT], err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		ret = -EIO;
	}
	if (s->nruns && write_exports(s, out))
		ret = -EIO;
	/* Before bash_folded goes: the page's artifact is the one written. */
	if (out->f[OUT_HTML] && s->nruns && write_run_html(s, o, out))
		ret = -EIO;
	s->bash_folded = NULL;
	if (o->flame && s->nruns && write_profiles(s, o, out))
		ret = -EIO;
	if (o->flame && s->cmp && s->cmp_base_runs &&
	    outputs_flame_diff(out,
			       &(struct comparison_sides){.base = s->cmp_base_runs,
							  .nbase = s->ncmp_base_runs,
							  .new = s->runs,
							  .nnew = s->nruns},
			       session_command(s), o->quiet))
		ret = -EIO;
	if (o->timeline && s->nruns && write_trace(s, o, out))
		ret = -EIO;
	say_named(out, o->quiet);
	/* What was planned and not needed (no on-CPU samples, no stacks) leaves nothing. */
	outputs__abort(out);
	return ret;
}
