/* SPDX-License-Identifier: MIT */
/*
 * Command-line parsing. options_parse() is pure: it reads argv, fills a
 * struct tsarun_opts and never prints or exits, so unit tests can feed it
 * anything. The struct borrows pointers into argv; it owns nothing.
 */
#ifndef TSARUN_OPTIONS_H
#define TSARUN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate.h"      /* struct gate_spec */
#include "outputs.h"   /* enum color_mode */
#include "supervise.h" /* enum descendants_policy */
#include "table.h"     /* enum sort_key */

struct confine_opts;
struct probeset_opts;

enum tsarun_mode {
	MODE_RUN = 0, /* tsarun [OPTIONS] -- COMMAND [ARG...], or --bash SCRIPT */
	MODE_DOCTOR,  /* tsarun doctor [--json] */
	MODE_COMPARE, /* tsarun compare BASE.json NEW.json [--fail-over SPEC] */
	MODE_REPORT,  /* tsarun report RUN.json [--format table|markdown|...|html] */
	MODE_MONITOR, /* tsarun -p PID [--interval DUR] [--count N]: attach to a running process */
	MODE_HELP,
	MODE_VERSION,
};

/* tsarun report --format folded|svg --view: which stacked view of the run (stacks.h). */
enum report_profile {
	REPORT_OFFCPU = 0, /* blocked time by stack */
	REPORT_ONCPU,	   /* on-CPU samples by stack */
	REPORT_WALL,	   /* every thread's life by state, stacks where known */
};

struct tsarun_opts {
	enum tsarun_mode mode;
	char *const *argv; /* the command, NULL-terminated, points into the caller's argv */
	int argc;

	const char *json_path; /* NULL: default name, in out_dir when given */
	const char *out_dir;
	const char *report_path; /* the table goes here instead of stderr */
	bool no_table;
	bool quiet;
	bool no_sandbox; /* --no-sandbox: the supervisor stays unconfined (debugging) */
	int verbose;
	enum color_mode color;

	const char *user; /* --user: run the command as this user (name or uid) */
	enum descendants_policy descendants;
	uint64_t kill_grace_ns;

	enum sort_key sort;
	int top;   /* thread rows in the table before the rest are folded */
	bool wide; /* --wide: every column, whatever the terminal's width */
	uint64_t ringbuf_bytes;
	bool no_delayacct;  /* leave kernel.task_delayacct as it is */
	unsigned backends;  /* --backend: BACKEND_* bits (probe_set.h); 0: auto */
	uint64_t sample_ns; /* --sample: the procfs source's interval */
	bool sample_given;

	/* Monitor mode (-p PID); --interval also streams a command's run. */
	uint32_t pid;
	uint64_t interval_ns; /* --interval (default 1s) */
	bool interval_given;
	const char *stream_path; /* --stream: the run's JSON Lines ("-": stderr; NULL: default) */
	uint64_t count;		 /* --count: intervals; 0: until interrupted or the process ends */
	bool output_json;	 /* --output json: JSON Lines on stdout */
	uint32_t tid;		 /* --tid: only this thread */
	const char *comm;	 /* --comm: substring, or glob when it has * ? [ */
	bool show_idle;		 /* --show-idle: threads that did nothing too */
	bool no_header;
	bool sort_given;

	/* --stream-backlog: what of --interval's lines may wait for a slow reader (bytes). */
	uint64_t stream_backlog_bytes;
	bool stream_backlog_given;

	bool doctor_json;

	/* Repeated runs (-r/--runs, --warmup). */
	unsigned runs; /* measured runs (default 1) */
	bool runs_given;
	unsigned warmup; /* runs before them, not counted */

	/* --bash SCRIPT [ARG...] or --bash -c CMDS [ARG...]: argv is SCRIPT or CMDS onwards */
	bool bash;
	bool bash_command; /* -c */
	bool bash_no_follow;
	bool bash_recalibrate; /* measure the trap's cost, not from the user's cache */
	int bash_top;	       /* --bash-top: hot commands listed first (0: none; -1: not given) */
	unsigned bash_depth;   /* --bash-depth: tree levels shown (0: all) */
	/* The regression gate: a baseline, what is gated and how. */
	const char *baseline_path; /* --baseline FILE: an earlier artifact */
	const char *baseline_cmd;  /* --baseline-cmd 'CMD': paired mode */
	bool gate;		   /* either was given (or compare mode) */
	struct gate_spec gate_spec;
	bool max_runs_given;
	const char *junit_path;	    /* --junit FILE */
	const char *markdown_path;  /* --markdown FILE */
	const char *flame_diff_dir; /* compare --flame-diff DIR: differential flame graphs */
	const char *html_path;	    /* --html FILE: the run (or compare's verdict) as a page */
	/* --export-csv, --export-runs-csv, --export-hyperfine FILE: a run's exports */
	const char *export_csv_path;
	const char *export_runs_csv_path;
	const char *export_hyperfine_path;

	/* tsarun compare BASE NEW */
	const char *compare_base;
	const char *compare_new;

	/* tsarun report RUN.json */
	const char *report_artifact;
	bool report_markdown; /* --format markdown (default: table) */
	int report_profile;   /* --format folded|svg: enum report_profile (-1: a table) */
	bool report_svg;      /* ... as an SVG flame graph, not folded text */
	bool report_inverted; /* report --format svg --inverted: an icicle graph */
	bool report_reversed; /* report --format svg --reverse: stacks leaf first */
	int report_export;    /* --format csv (1), runs-csv (2), hyperfine (3); 0: none */
	bool report_trace;    /* --format trace: Chrome Trace Event JSON (Perfetto) */
	bool report_html;     /* --format html: the self-contained HTML page */

	/* Stacks (--stacks, --offcpu-min, --waker, --flame, --freq). */
	bool stacks;		/* off-CPU stacks of sleeps */
	uint64_t offcpu_min_ns; /* shorter sleeps are counted, not stack-walked */
	bool waker;		/* and the waker's stacks */
	bool flame;		/* on-CPU samples too, folded files and SVG flame graphs */
	unsigned freq;		/* on-CPU samples per second of a thread's CPU time */

	/* --timeline, --timeline-buffer, --timeline-max */
	bool timeline;		 /* every state interval of every thread, and the trace */
	uint64_t timeline_bytes; /* the ring buffer */
	uint64_t timeline_max;	 /* intervals kept per run */
};

/* Fill *o with the defaults. */
void options_defaults(struct tsarun_opts *o);

/*
 * What each module below the commands receives of the options: its part,
 * filled here, where every option's field is defined, so that a new option
 * meets its parser and the modules it is for in one file.
 */
struct outputs_opts options_for_outputs(const struct tsarun_opts *o);
struct probeset_opts options_for_probeset(const struct tsarun_opts *o);
struct confine_opts options_for_confine(const struct tsarun_opts *o);

/*
 * Parse argv. Returns 0, or -EINVAL with a one-line message in err that
 * names the offending option or value (no "tsarun: " prefix).
 */
int options_parse(struct tsarun_opts *o, int argc, char **argv, char *err, size_t errlen);

/*
 * The long options of a mode's parser (MODE_RUN, which -p's monitor mode
 * shares, MODE_COMPARE, MODE_REPORT, MODE_DOCTOR; NULL for the others) and
 * its getopt short-option string, as the parser itself reads them: tests
 * hold every option that takes a value, --help and the man page to them.
 */
struct option;
const struct option *options_long_table(enum tsarun_mode mode);
const char *options_short_table(enum tsarun_mode mode);

/* The --help text. */
const char *options_usage(void);

/*
 * Value parsers shared with other modules; each returns 0 or -EINVAL and
 * accepts only the whole string.
 * Durations: "250us", "10ms", "1.5s", "2m", "1h"; a bare number is an error
 * unless allow_bare_seconds.
 * Sizes: "4096", "64K", "4M", "1G" (powers of 1024).
 */
int parse_duration_ns(const char *s, bool allow_bare_seconds, uint64_t *out);
int parse_size(const char *s, uint64_t *out);
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* --backend: "auto" (0) or a comma-separated list of ebpf, taskstats, proc (BACKEND_* bits). */
int parse_backends(const char *s, unsigned *out);

#endif /* TSARUN_OPTIONS_H */
