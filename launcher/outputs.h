/* SPDX-License-Identifier: MIT */
/*
 * Everything a session leaves behind once its runs are over: the table on
 * stderr (or --report), the artifact, the stream, the gate's files, the
 * folded stacks, flame graphs and trace. Every file is planned before the
 * command runs (outputs__plan(): lib/outfile.h, with the rights of the
 * user tsarun works for), so that a typo does not cost a run and nothing
 * the command puts at a path later is followed; written after.
 */
#ifndef TSARUN_OUTPUTS_H
#define TSARUN_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "table.h" /* enum sort_key */

struct comparison;
struct outputs;
struct run;
struct session;
struct target_user;

/* --color: colour on a terminal (auto), always, or never. */
enum color_mode {
	COLOR_AUTO = 0,
	COLOR_ALWAYS,
	COLOR_NEVER,
};

/* What the outputs were asked for (options.h holds them for the session; options_for_outputs()). */
struct outputs_opts {
	/* The files a run names: its artifact and beside it, the folder of them all. */
	const char *json_path;	     /* --json FILE; NULL: tsarun.json */
	const char *out_dir;	     /* --out-dir DIR, or NULL */
	const char *report_path;     /* --report FILE: the table there, not on stderr */
	const char *stream_path;     /* --stream FILE ("-": stderr; NULL: beside the artifact) */
	const char *junit_path;	     /* --junit FILE */
	const char *markdown_path;   /* --markdown FILE */
	const char *html_path;	     /* --html FILE */
	const char *export_csv_path; /* --export-csv FILE */
	const char *export_runs_csv_path;  /* --export-runs-csv FILE */
	const char *export_hyperfine_path; /* --export-hyperfine FILE */
	const char *flame_diff_dir;	   /* compare --flame-diff DIR */
	const char *baseline_path;	   /* --baseline FILE: read, so never the stream's file */
	/* Which of them a run has. */
	bool interval; /* --interval: the stream */
	bool bash;     /* --bash: the folded profile, the bash flame graphs */
	bool flame;    /* --flame: folded stacks and flame graphs */
	bool timeline; /* --timeline: the trace */
	bool gate;     /* a baseline: the gate's files, the differential flame graphs */
	/* The table, and tsarun's lines on stderr. */
	bool no_table;
	bool quiet;
	bool wide; /* --wide: every column, lines unwrapped */
	enum color_mode color;
	enum sort_key sort;
	int top;	     /* thread rows before the rest are folded */
	unsigned bash_depth; /* --bash-depth: tree levels shown (0: all) */
	int bash_top;	     /* --bash-top: hot commands listed first (0: none; -1: not given) */
	const char *script;  /* the bash report's script: the command's argv[0] unless -c */
};

/*
 * Plan the files of a run (run: the artifact, the stream, the profile
 * files) or of `tsarun compare` (the gate's files only). user (NULL for
 * compare) says whom new files are given to, when tsarun is root running
 * the command as someone else. Returns NULL with the message in err.
 */
struct outputs *outputs__plan(const struct outputs_opts *o, const struct target_user *user,
			      bool run, char *err, size_t errlen);
void outputs__free(struct outputs *out);

/* The artifact's path, for messages and the report. */
const char *outputs__artifact_path(const struct outputs *out);
bool outputs__artifact_in_place(const struct outputs *out);

/*
 * --interval: the stream's descriptor, taken (the caller owns it), its
 * name for messages, and whether its description is shared with others
 * (inherited: never made non-blocking). -1 when no stream was planned.
 */
int outputs__take_stream(struct outputs *out, const char **name, bool *shared);

/*
 * Write every output. Returns 0, or -errno when an output could not be
 * written (the message is already on stderr); the caller still returns
 * the command's status when that is non-zero.
 */
int outputs_write(struct session *s, const struct outputs_opts *o, struct outputs *out);

/* When and where a comparison was made (now, this host), for JUnit's timestamp and hostname. */
void outputs_stamp(struct comparison *c);

/*
 * The gate's verdict for CI: --junit and --markdown files, and in GitHub
 * Actions (GITHUB_ACTIONS=true) the Markdown table appended to
 * $GITHUB_STEP_SUMMARY and annotations on stderr (the runner reads
 * workflow commands from both streams; stdout stays the command's).
 * Returns 0, or -errno when a file could not be written (the message is
 * on stderr).
 */
int outputs_gate(const struct comparison *c, const char *command, struct outputs *out);

/* Abandon every planned file: nothing of them is left. */
void outputs__abort(struct outputs *out);

/*
 * Colour on f: --color always or never, else on a terminal unless NO_COLOR
 * is set to something (an empty NO_COLOR is unset, as no-color.org says).
 */
bool outputs_use_color(enum color_mode color, FILE *f);

/* The width tsarun's own lines on stderr wrap at: the terminal's; 0 (whole) in a pipe, with --wide. */
size_t outputs_stderr_width(bool wide);

/*
 * One stacked view of a run (enum report_profile: off-CPU, on-CPU, wall)
 * to f, as folded text or an SVG flame graph titled for command: the
 * files --flame writes, and tsarun report --format folded|svg. The SVG
 * drawn as an icicle (inverted: the root on top) and with every stack
 * reversed (flamegraph.pl's --reverse) on report's asking. Returns 0,
 * -ENOENT when the run has no stacks, or -errno.
 */
struct stack_profile_layout {
	bool inverted, reversed;
};
int outputs_stack_profile(FILE *f, const struct run *r, int which, bool svg,
			  struct stack_profile_layout layout, const char *command);

/* The two sides of a comparison, their runs (with their parts). */
struct comparison_sides {
	const struct run *base;
	size_t nbase;
	const struct run *new;
	size_t nnew;
};

/*
 * A comparison's differential flame graphs (flamediff.h) into the files
 * planned for them: with --flame and a baseline beside the other profiles,
 * with compare --flame-diff DIR there. Nothing when none was planned; when
 * a side has no stacks, says so (and fails for --flame-diff). Returns 0 or
 * -errno (the message is on stderr).
 */
int outputs_flame_diff(struct outputs *out, const struct comparison_sides *sides,
		       const char *command, bool quiet);

struct report_html;

/*
 * --html FILE of `tsarun compare` (and of `report`'s callers that have a
 * page): h written to the planned --html file (nothing when none was
 * planned). Returns 0, or -errno (the message is on stderr).
 */
int outputs_html(struct outputs *out, const struct report_html *h);

#endif /* TSARUN_OUTPUTS_H */
