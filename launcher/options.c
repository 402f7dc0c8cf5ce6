// SPDX-License-Identifier: MIT
/* Command-line parsing: pure, no output, no exit. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confine.h"
#include "errf.h"
#include "options.h"
#include "probe_set.h"
#include "probe_stacks.h"
#include "timeline.h"

static const char usage[] =
    "Usage: tsarun [OPTIONS] [--] COMMAND [ARG...]\n"
    "       tsarun [OPTIONS] --bash SCRIPT [ARG...]\n"
    "       tsarun [OPTIONS] --bash -c 'COMMANDS' [ARG...]\n"
    "       tsarun compare BASE.json NEW.json [--fail-over SPEC] [--metric LIST]\n"
    "                      [--inconclusive WHAT] [--junit FILE] [--markdown FILE]\n"
    "                      [--html FILE] [--flame-diff DIR] [--wide] [--color WHEN]\n"
    "                      [-q]\n"
    "       tsarun report RUN.json [--format table|markdown|folded|svg|trace|html|\n"
    "                      csv|runs-csv|hyperfine]\n"
    "                      [--view VIEW] [--inverted] [--reverse] [--sort KEY]\n"
    "                      [--top N] [--wide] [--color WHEN]\n"
    "       tsarun -p PID [--interval DUR] [--count N] [--output table|json]\n"
    "                      [--tid TID] [--comm PATTERN] [--sort KEY] [--show-idle]\n"
    "                      [--no-header]\n"
    "       tsarun doctor [--json]\n"
    "\n"
    "Run COMMAND and account for where every thread of it, and of every process\n"
    "it forks, spent its time: on a CPU, waiting in the runqueue, asleep (S), in\n"
    "uninterruptible sleep (D), stopped, and what could not be attributed.\n"
    "The report goes to stderr; the artifact (JSON) to tsarun.json.\n"
    "The command owns stdin, stdout and the terminal; tsarun exits with its status.\n"
    "\n"
    "Output (each a regular file made anew and renamed over its path; - or\n"
    "/dev/fd/N writes to a descriptor, the null device and terminals in place; a\n"
    "FIFO, another device or a socket at the path is refused. Under sudo every\n"
    "file is made with the invoking user's rights, never through a link that\n"
    "neither root nor that user owns):\n"
    "      --json FILE          write the artifact to FILE (default: tsarun.json;\n"
    "                           - for stdout); the one it replaces stays as\n"
    "                           FILE.old; the files tsarun names start with its\n"
    "                           stem (run.json: run.wall.svg, run.trace.json)\n"
    "      --out-dir DIR        write every artifact into DIR (created if needed)\n"
    "      --report FILE        write the table to FILE instead of stderr (also\n"
    "                           with --no-table or -q)\n"
    "      --html FILE          write the whole run as one self-contained HTML page\n"
    "                           (no network): header, threads, flame graphs, the\n"
    "                           timeline, the bash tree, runs and verdict, as\n"
    "                           recorded\n"
    "      --export-csv FILE    write the last run's threads as CSV (times in ns)\n"
    "      --export-runs-csv FILE\n"
    "                           write every run as CSV, a row per run\n"
    "      --export-hyperfine FILE\n"
    "                           write the runs in the layout of hyperfine's JSON\n"
    "                           export\n"
    "      --no-table           do not print the table\n"
    "  -q, --quiet              print nothing but errors (implies --no-table;\n"
    "                           not with -v)\n"
    "      --sort KEY           order threads by wall (default), cpu, runq, sleep,\n"
    "                           disk, offcpu, switches, wakeup, tid\n"
    "      --top N              thread rows before the rest are folded (default 20)\n"
    "      --wide               every column of the tables, however wide the terminal\n"
    "                           (on a terminal the table fits its width, COLUMNS or\n"
    "                           the terminal's own; files and pipes get every column)\n"
    "      --color WHEN         auto (default), always, never; NO_COLOR is honoured\n"
    "  -v, --verbose            say more about what tsarun does (repeatable)\n"
    "\n"
    "Running:\n"
    "      --user USER          run the command as USER (name or uid; root allowed;\n"
    "                           a uid with no passwd entry gets the group of the\n"
    "                           same number). Default under sudo: the invoking user.\n"
    "      --descendants WHAT   when the command exits while processes it started\n"
    "                           still run: wait (default) for them, leave them\n"
    "                           running, or kill them (SIGTERM, then SIGKILL).\n"
    "                           A killed tsarun ends the command and what it\n"
    "                           started the same way, except with leave\n"
    "      --kill-grace DUR     time between SIGTERM and SIGKILL (default 2s); also\n"
    "                           how long an interrupted run waits for what the\n"
    "                           command left running\n"
    "      --ringbuf SIZE       BPF ring buffer for thread records (default 4M)\n"
    "      --no-sandbox         do not confine tsarun once the command runs: no\n"
    "                           seccomp filter, no Landlock, root kept (for\n"
    "                           debugging: valgrind, strace -f)\n"
    "\n"
    "Sources:\n"
    "  -b, --backend LIST       where the per-thread figures come from. auto\n"
    "                           (default): eBPF and taskstats when they work;\n"
    "                           without eBPF, procfs sampling (and taskstats when\n"
    "                           it works). Or a list of ebpf, taskstats, proc: only\n"
    "                           those (and rusage); tsarun fails (125) when one is\n"
    "                           unavailable. ebpf,proc samples procfs beside eBPF\n"
    "                           as a cross-check\n"
    "      --sample DUR         procfs sampling interval (default 10ms, 1ms to 60s)\n"
    "      --no-delayacct       leave kernel.task_delayacct as it is. By default\n"
    "                           tsarun (as root) switches it on for the session, so\n"
    "                           that taskstats counts block I/O, swap-in, reclaim and\n"
    "                           the other delays of the command's threads, and puts\n"
    "                           the previous value back when it ends\n"
    "\n"
    "Repeated runs:\n"
    "  -r, --runs N             run the command N times (default 1); the artifact\n"
    "                           keeps every run's figures and their summary (median,\n"
    "                           mean, stddev, cv, min, max, outliers) per metric\n"
    "      --warmup N           run it N times first, not counted\n"
    "\n"
    "Bash scripts:\n"
    "      --bash SCRIPT [ARG...]   profile a bash script command by command (traps\n"
    "                           injected through BASH_ENV; the script is unchanged).\n"
    "                           Everything after SCRIPT belongs to the script;\n"
    "                           bash options on its #! line are kept, a #! line\n"
    "                           for another interpreter (not bash, sh) is refused.\n"
    "      --bash -c CMDS [ARG...]  the same for a command string, as bash -c\n"
    "      --bash-no-follow     do not profile nested bash processes (bash -c, ...)\n"
    "      --bash-recalibrate   measure the trap's cost again, not from the cache of\n"
    "                           an earlier run (~/.cache/tsarun/bash-trap-cost)\n"
    "      --bash-top N         the N costliest commands first, by self and by total\n"
    "                           time (default 5; 0: none)\n"
    "      --bash-depth N       the tree to depth N (default: all; a tree of more\n"
    "                           than 200 lines folds what is below 0.5% of the total)\n"
    "                           The tree goes to stderr after the table, the profile\n"
    "                           into the artifact's \"bash\" key, folded stacks to\n"
    "                           STEM.bash.folded beside the artifact (STEM: the\n"
    "                           artifact's name less .json, tsarun by default).\n"
    "\n"
    "Regression gate (exit 3 when the command succeeded and the gate failed):\n"
    "      --baseline FILE      compare with an earlier artifact (default 10 runs)\n"
    "      --baseline-cmd CMD   run CMD alongside, interleaved run by run (paired\n"
    "                           mode: the most reliable setup in CI)\n"
    "      --fail-over SPEC     thresholds: 10% (for the gated metrics: default cpu,\n"
    "                           and wall too with --baseline-cmd)\n"
    "                           or per metric, cpu=5%,wall=15%; default 10%\n"
    "      --metric LIST        gate these metrics (wall, cpu, on_cpu, runqueue,\n"
    "                           blocked, uninterruptible, voluntary_switches,\n"
    "                           involuntary_switches, max_rss, instructions)\n"
    "      --max-runs N         add runs up to N while a verdict is inconclusive\n"
    "                           and more runs could settle it (default 30)\n"
    "      --inconclusive WHAT  warn (default, exit 0) or fail (exit 3)\n"
    "      --junit FILE         the verdict as JUnit XML, a test case per metric\n"
    "      --markdown FILE      the verdict as a Markdown table\n"
    "      In GitHub Actions (GITHUB_ACTIONS=true) the table is appended to\n"
    "      $GITHUB_STEP_SUMMARY and failures and warnings become annotations.\n"
    "      A gate that fails or warns says where it moved: the change by process,\n"
    "      thread and state, stack (both sides with --stacks or --flame) and bash\n"
    "      command (both --bash), threads matched by name and creation order, a\n"
    "      part blamed only beyond its own run-to-run noise; with --flame also\n"
    "      differential flame graphs {offcpu,oncpu,wall}.diff.{folded,svg}.\n"
    "\n"
    "Where time went (stacks):\n"
    "      --stacks             off-CPU stacks: charge every sleep (S and D) to the\n"
    "                           thread's user and kernel stacks where it blocked\n"
    "      --offcpu-min DUR     sleeps shorter than DUR are counted and summed per\n"
    "                           thread, not charged to a stack (default 10us; 0:\n"
    "                           every sleep); implies --stacks\n"
    "      --waker              also the stacks of whoever woke each sleep; implies\n"
    "                           --stacks\n"
    "      --flame              --stacks, on-CPU samples, and flame graphs: the\n"
    "                           folded files STEM.offcpu.folded, STEM.oncpu.folded,\n"
    "                           STEM.wall.folded and interactive SVGs, next to the\n"
    "                           artifact (or in --out-dir); with --bash also\n"
    "                           STEM.bash.svg and STEM.bash-cpu.svg, the script's\n"
    "                           commands by wall and CPU time\n"
    "      --freq HZ            --flame's on-CPU samples per second of CPU time\n"
    "                           (default 99)\n"
    "\n"
    "Timeline (eBPF only; not with -p):\n"
    "      --timeline           record every state interval of every thread (on a CPU\n"
    "                           and which, runqueue after a wakeup or a preemption,\n"
    "                           S, D, stopped) and its names across exec, into the\n"
    "                           artifact's \"timeline\" key; a thread's intervals sum\n"
    "                           to its account. Also writes STEM.trace.json (Chrome\n"
    "                           trace: open it in ui.perfetto.dev) beside the\n"
    "                           artifact (or in --out-dir)\n"
    "      --timeline-buffer SIZE  its BPF ring buffer (default 8M); events it has\n"
    "                           no room for are counted and reported, never hidden\n"
    "      --timeline-max N     intervals kept per run (default 1000000); later ones\n"
    "                           are counted, with their time, and the timeline says\n"
    "                           where it was cut\n"
    "      --critical-path      the same: the timeline records who woke each sleep,\n"
    "                           and the critical path is walked back from the end\n"
    "                           along the wakeups: which threads, states and\n"
    "                           outside wakers (block I/O completion, timer, kernel\n"
    "                           threads, other processes) the wall time waited for.\n"
    "                           Printed after the table, in the artifact's\n"
    "                           \"critical_path\", as a track of the trace, and with\n"
    "                           --flame as STEM.critpath.{folded,svg}\n"
    "\n"
    "Monitor mode (attach to a running process):\n"
    "  -p, --pid PID            report the threads of process PID every --interval,\n"
    "                           from procfs samples (every --sample) and taskstats\n"
    "                           queries when permitted; Ctrl-C ends with a report of\n"
    "                           the whole attach. No command is run.\n"
    "      --interval DUR       report interval (default 1s; a bare number is\n"
    "                           seconds)\n"
    "      --count N            stop after N intervals (default: until interrupted or\n"
    "                           the process ends)\n"
    "      --output FMT         table (default, on stderr) or json: one JSON line per\n"
    "                           interval on stdout\n"
    "      --tid TID            only this thread\n"
    "      --comm PATTERN       only threads whose name contains PATTERN, or matches\n"
    "                           it when it has * ? or [ (a glob)\n"
    "      --sort KEY           as above but wakeup (default tid)\n"
    "      --show-idle          also threads that did nothing in the interval (no\n"
    "                           CPU, no runqueue wait, only seen asleep in S)\n"
    "      --no-header          no table header\n"
    "\n"
    "Interval stream (a command's run):\n"
    "      --interval DUR       every DUR (10ms to 24h), one JSON line of where each\n"
    "                           thread's time went in that interval, per thread,\n"
    "                           process and in total (doc/tsarun-stream.schema.json);\n"
    "                           summed over a run's lines, a thread's figures are\n"
    "                           the artifact's\n"
    "      --stream FILE        where the lines go, each flushed as written (- for\n"
    "                           stderr; in --out-dir when relative; default: beside\n"
    "                           the artifact, named after it: tsarun.jsonl; never\n"
    "                           through a link). A FIFO's reader must be there\n"
    "                           within a second. A FIFO, pipe, socket or terminal\n"
    "                           is written without ever\n"
    "                           waiting: what its reader has not taken waits in a\n"
    "                           backlog, lines that would overflow it are dropped\n"
    "                           whole and counted (artifact: runs[].stream); at a\n"
    "                           run's end what waits gets 2 s. A file is written\n"
    "                           whole, as each line is made\n"
    "      --stream-backlog SIZE\n"
    "                           what may wait in memory for a slow reader (default\n"
    "                           1M; 0: nothing beyond the rest of a line begun)\n"
    "\n"
    "Other:\n"
    "  -h, --help               show this help\n"
    "  -V, --version            show the version\n"
    "\n"
    "Subcommands:\n"
    "  compare BASE NEW         the gate's verdict on two artifacts, offline, and\n"
    "                           where the change came from; --html FILE: both\n"
    "                           sides and the verdict as a page; --flame-diff DIR:\n"
    "                           differential flame graphs (recorded with --flame)\n"
    "                           {offcpu,oncpu,wall}.diff.{folded,svg}, red grew,\n"
    "                           blue shrank; --wide: every column, however wide\n"
    "                           the terminal\n"
    "  report RUN.json          the report of a stored artifact, again: the table\n"
    "                           (default) or Markdown, to stdout; --format folded\n"
    "                           or svg: its stacks (recorded with --stacks or\n"
    "                           --flame) as folded text or a flame graph, --view\n"
    "                           wall (every thread's life, the default), offcpu\n"
    "                           or oncpu, and with --inverted an icicle graph (the\n"
    "                           root on top), with --reverse the stacks reversed\n"
    "                           (rooted where they end, callers above, merged);\n"
    "                           --format trace: Chrome Trace Event JSON\n"
    "                           for ui.perfetto.dev, a track per thread (its states\n"
    "                           with --timeline, else its life and account);\n"
    "                           --format html: the run's HTML page (as --html);\n"
    "                           --format csv: the last run's threads, runs-csv:\n"
    "                           every run, as CSV (integer ns); --format hyperfine:\n"
    "                           the runs in the layout of hyperfine's JSON export\n"
    "  doctor [--json]          what this machine and user allow, and why\n"
    "\n"
    "Exit status: the command's own; 128+N when it was killed by signal N;\n"
    "3 when it succeeded but the regression gate failed;\n"
    "125 when tsarun itself failed; 126 when COMMAND could not be executed;\n"
    "127 when it was not found. A command named like a subcommand runs after --.\n"
    "\n"
    "Examples:\n"
    "  sudo tsarun -- ./bench                  account for every thread of ./bench\n"
    "  sudo tsarun --sort runq -- make -j8     who waited for a CPU the longest\n"
    "  sudo tsarun --json run.json -q -- ./t   artifact only, no table\n"
    "  sudo tsarun --bash ./deploy.sh prod     where a bash script spends its time\n"
    "  sudo tsarun --baseline base.json --fail-over 10% -- ./bench\n"
    "                                          fail on a 10% CPU-time regression\n"
    "  sudo tsarun --baseline-cmd ./bench-old --fail-over cpu=5%,wall=10% -- ./bench\n"
    "                                          old and new interleaved, in one job\n"
    "  sudo tsarun --interval 1s -- ./long-job where its threads spend each second,\n"
    "                                          live in tsarun.jsonl (tail -f)\n"
    "  tsarun -p 1234 --interval 1s --count 10 where 1234's threads spend each second\n"
    "  tsarun doctor                           which sources work here\n";

const char *options_usage(void)
{
	return usage;
}

void options_defaults(struct tsarun_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = MODE_RUN;
	o->color = COLOR_AUTO;
	o->descendants = DESC_WAIT;
	o->kill_grace_ns = 2000000000ull;
	o->sort = SORT_WALL;
	o->top = 20;
	o->bash_top = -1;
	o->ringbuf_bytes = 4ull << 20;
	o->stream_backlog_bytes = 1ull << 20;
	o->offcpu_min_ns = OFFCPU_MIN_DEFAULT_NS;
	o->freq = 99;
	o->timeline_bytes = TIMELINE_BUFFER_DEFAULT;
	o->timeline_max = TIMELINE_MAX_DEFAULT;
	o->report_profile = -1;
	o->runs = 1;
	o->sample_ns = 10000000ull;
	o->interval_ns = 1000000000ull;
	gate_spec_defaults(&o->gate_spec);
}

struct outputs_opts options_for_outputs(const struct tsarun_opts *o)
{
	return (struct outputs_opts){
	    .json_path = o->json_path,
	    .out_dir = o->out_dir,
	    .report_path = o->report_path,
	    .stream_path = o->stream_path,
	    .junit_path = o->junit_path,
	    .markdown_path = o->markdown_path,
	    .html_path = o->html_path,
	    .export_csv_path = o->export_csv_path,
	    .export_runs_csv_path = o->export_runs_csv_path,
	    .export_hyperfine_path = o->export_hyperfine_path,
	    .flame_diff_dir = o->flame_diff_dir,
	    .baseline_path = o->baseline_path,
	    .interval = o->interval_given,
	    .bash = o->bash,
	    .flame = o->flame,
	    .timeline = o->timeline,
	    .gate = o->gate,
	    .no_table = o->no_table,
	    .quiet = o->quiet,
	    .wide = o->wide,
	    .color = o->color,
	    .sort = o->sort,
	    .top = o->top,
	    .bash_depth = o->bash_depth,
	    .bash_top = o->bash_top,
	    .script = !o->bash_command && o->argc ? o->argv[0] : NULL,
	};
}

struct probeset_opts options_for_probeset(const struct tsarun_opts *o)
{
	return (struct probeset_opts){
	    .backends = o->backends,
	    .ringbuf_bytes = o->ringbuf_bytes,
	    .sample_ns = o->sample_ns,
	    .sample_given = o->sample_given,
	    .no_delayacct = o->no_delayacct,
	    .stacks = o->stacks,
	    .offcpu_min_ns = o->offcpu_min_ns,
	    .waker = o->waker,
	    .flame = o->flame,
	    .freq = o->freq,
	    .timeline = o->timeline,
	    .timeline_bytes = o->timeline_bytes,
	    .timeline_max = o->timeline_max,
	    .interval = o->interval_given,
	    .no_sandbox = o->no_sandbox,
	    .quiet = o->quiet,
	    .verbose = o->verbose,
	    .wide = o->wide,
	};
}

struct confine_opts options_for_confine(const struct tsarun_opts *o)
{
	return (struct confine_opts){
	    .stacks = o->stacks,
	    .timeline = o->timeline,
	    .no_sandbox = o->no_sandbox,
	    .verbose = o->verbose,
	    .wide = o->wide,
	};
}

int parse_backends(const char *s, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {
	    {"ebpf", BACKEND_EBPF},
	    {"taskstats", BACKEND_TASKSTATS},
	    {"proc", BACKEND_PROC},
	    {"procfs", BACKEND_PROC},
	};
	unsigned bits = 0;
	const char *p = s;

	if (!strcmp(s, "auto")) {
		*out = 0;
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (len == strlen(names[i].name) && !strncmp(p, names[i].name, len))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -EINVAL;
		bits |= names[i].bit;
		if (!p[len])
			break;
		p += len + 1;
	}
	*out = bits;
	return 0;
}

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A non-negative decimal with an optional fraction; the rest is returned in *end. */
static int parse_decimal(const char *s, double *v, const char **end)
{
	char *e;

	if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &e);
	if (errno || e == s || !isfinite(*v) || *v < 0)
		return -EINVAL;
	/* strtod accepts hex and exponents; durations do not. */
	for (const char *p = s; p < e; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '.'))
			return -EINVAL;
	*end = e;
	return 0;
}

int parse_duration_ns(const char *s, bool allow_bare_seconds, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {
	    {"ns", 1},	  {"us", 1e3}, {"ms", 1e6},   {"s", 1e9},
	    {"sec", 1e9}, {"m", 60e9}, {"min", 60e9}, {"h", 3600e9},
	};
	const char *unit;
	double v, ns;
	size_t i;

	if (parse_decimal(s, &v, &unit))
		return -EINVAL;
	if (!*unit) {
		if (!allow_bare_seconds)
			return -EINVAL;
		unit = "s";
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(unit, units[i].unit))
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		return -EINVAL;
	ns = v * units[i].ns;
	if (ns >= 1.8e19)
		return -EINVAL;
	*out = (uint64_t)(ns + 0.5);
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	const char *unit;
	double v, mul = 1;

	if (parse_decimal(s, &v, &unit))
		return -EINVAL;
	if (!strcmp(unit, "") || !strcmp(unit, "B"))
		mul = 1;
	else if (!strcmp(unit, "K") || !strcmp(unit, "k") || !strcmp(unit, "KiB"))
		mul = 1024;
	else if (!strcmp(unit, "M") || !strcmp(unit, "MiB"))
		mul = 1024.0 * 1024;
	else if (!strcmp(unit, "G") || !strcmp(unit, "GiB"))
		mul = 1024.0 * 1024 * 1024;
	else
		return -EINVAL;
	if (v * mul >= 1.8e19 || v * mul != (double)(uint64_t)(v * mul))
		return -EINVAL;
	*out = (uint64_t)(v * mul);
	return 0;
}

static int parse_enum(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return i;
	return -1;
}

static const char *const sort_names[] = {
    [SORT_WALL] = "wall",	  [SORT_CPU] = "cpu",		[SORT_RUNQ] = "runq",
    [SORT_SLEEP] = "sleep",	  [SORT_DISK] = "disk",		[SORT_OFFCPU] = "offcpu",
    [SORT_SWITCHES] = "switches", [SORT_WAKEUP_LAT] = "wakeup", [SORT_TID] = "tid",
};

enum {
	OPT_JSON = 256,
	OPT_OUT_DIR,
	OPT_REPORT,
	OPT_NO_TABLE,
	OPT_SORT,
	OPT_TOP,
	OPT_COLOR,
	OPT_USER,
	OPT_DESCENDANTS,
	OPT_KILL_GRACE,
	OPT_RINGBUF,
	OPT_WARMUP,
	OPT_BASH,
	OPT_BASH_NO_FOLLOW,
	OPT_BASH_RECALIBRATE,
	OPT_BASH_TOP,
	OPT_BASH_DEPTH,
	OPT_NO_SANDBOX,
	OPT_BASELINE,
	OPT_BASELINE_CMD,
	OPT_FAIL_OVER,
	OPT_METRIC,
	OPT_MAX_RUNS,
	OPT_INCONCLUSIVE,
	OPT_JUNIT,
	OPT_MARKDOWN,
	OPT_HTML,
	OPT_EXPORT_CSV,
	OPT_EXPORT_RUNS_CSV,
	OPT_EXPORT_HYPERFINE,
	OPT_FLAME_DIFF,
	OPT_STACKS,
	OPT_OFFCPU_MIN,
	OPT_WAKER,
	OPT_FLAME,
	OPT_FREQ,
	OPT_NO_DELAYACCT,
	OPT_SAMPLE,
	OPT_INTERVAL,
	OPT_COUNT,
	OPT_OUTPUT,
	OPT_TID,
	OPT_COMM,
	OPT_SHOW_IDLE,
	OPT_NO_HEADER,
	OPT_VIEW,
	OPT_STREAM,
	OPT_STREAM_BACKLOG,
	OPT_TIMELINE,
	OPT_TIMELINE_BUFFER,
	OPT_TIMELINE_MAX,
	OPT_WIDE,
	OPT_INVERTED,
	OPT_REVERSE,
	OPT_CRITICAL_PATH,
};

static const struct option long_opts[] = {
    {"json", required_argument, NULL, OPT_JSON},
    {"out-dir", required_argument, NULL, OPT_OUT_DIR},
    {"report", required_argument, NULL, OPT_REPORT},
    {"no-table", no_argument, NULL, OPT_NO_TABLE},
    {"quiet", no_argument, NULL, 'q'},
    {"sort", required_argument, NULL, OPT_SORT},
    {"top", required_argument, NULL, OPT_TOP},
    {"wide", no_argument, NULL, OPT_WIDE},
    {"color", required_argument, NULL, OPT_COLOR},
    {"colour", required_argument, NULL, OPT_COLOR},
    {"verbose", no_argument, NULL, 'v'},
    {"user", required_argument, NULL, OPT_USER},
    {"descendants", required_argument, NULL, OPT_DESCENDANTS},
    {"kill-grace", required_argument, NULL, OPT_KILL_GRACE},
    {"ringbuf", required_argument, NULL, OPT_RINGBUF},
    {"no-delayacct", no_argument, NULL, OPT_NO_DELAYACCT},
    {"backend", required_argument, NULL, 'b'},
    {"sample", required_argument, NULL, OPT_SAMPLE},
    {"pid", required_argument, NULL, 'p'},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"stream", required_argument, NULL, OPT_STREAM},
    {"stream-backlog", required_argument, NULL, OPT_STREAM_BACKLOG},
    {"count", required_argument, NULL, OPT_COUNT},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"tid", required_argument, NULL, OPT_TID},
    {"comm", required_argument, NULL, OPT_COMM},
    {"show-idle", no_argument, NULL, OPT_SHOW_IDLE},
    {"no-header", no_argument, NULL, OPT_NO_HEADER},
    {"runs", required_argument, NULL, 'r'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"bash", no_argument, NULL, OPT_BASH},
    {"bash-no-follow", no_argument, NULL, OPT_BASH_NO_FOLLOW},
    {"bash-recalibrate", no_argument, NULL, OPT_BASH_RECALIBRATE},
    {"bash-top", required_argument, NULL, OPT_BASH_TOP},
    {"bash-depth", required_argument, NULL, OPT_BASH_DEPTH},
    {"no-sandbox", no_argument, NULL, OPT_NO_SANDBOX},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"baseline-cmd", required_argument, NULL, OPT_BASELINE_CMD},
    {"fail-over", required_argument, NULL, OPT_FAIL_OVER},
    {"metric", required_argument, NULL, OPT_METRIC},
    {"max-runs", required_argument, NULL, OPT_MAX_RUNS},
    {"inconclusive", required_argument, NULL, OPT_INCONCLUSIVE},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"markdown", required_argument, NULL, OPT_MARKDOWN},
    {"html", required_argument, NULL, OPT_HTML},
    {"export-csv", required_argument, NULL, OPT_EXPORT_CSV},
    {"export-runs-csv", required_argument, NULL, OPT_EXPORT_RUNS_CSV},
    {"export-hyperfine", required_argument, NULL, OPT_EXPORT_HYPERFINE},
    {"stacks", no_argument, NULL, OPT_STACKS},
    {"offcpu-min", required_argument, NULL, OPT_OFFCPU_MIN},
    {"waker", no_argument, NULL, OPT_WAKER},
    {"flame", no_argument, NULL, OPT_FLAME},
    {"freq", required_argument, NULL, OPT_FREQ},
    {"timeline", no_argument, NULL, OPT_TIMELINE},
    {"critical-path", no_argument, NULL, OPT_CRITICAL_PATH},
    {"timeline-buffer", required_argument, NULL, OPT_TIMELINE_BUFFER},
    {"timeline-max", required_argument, NULL, OPT_TIMELINE_MAX},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/*
 * The options that say how a comparison is judged, shared by a run with a
 * baseline and by `tsarun compare`. Returns 1 when c is not one of them.
 */
static int gate_option(struct tsarun_opts *o, int c, const char *arg, const char **used, char *err,
		       size_t errlen)
{
	uint64_t v;

	switch (c) {
	case OPT_FAIL_OVER:
		*used = "--fail-over";
		return gate_parse_fail_over(&o->gate_spec, arg, err, errlen);
	case OPT_METRIC:
		*used = "--metric";
		return gate_parse_metrics(&o->gate_spec, arg, err, errlen);
	case OPT_MAX_RUNS:
		*used = "--max-runs";
		if (parse_uint(arg, 1, 10000, &v))
			return errf(err, errlen, "--max-runs: '%s' is not a number from 1 to 10000",
				    arg);
		o->gate_spec.max_runs = (unsigned)v;
		o->max_runs_given = true;
		return 0;
	case OPT_INCONCLUSIVE:
		*used = "--inconclusive";
		if (!strcmp(arg, "warn"))
			o->gate_spec.inconclusive_fails = false;
		else if (!strcmp(arg, "fail"))
			o->gate_spec.inconclusive_fails = true;
		else
			return errf(err, errlen, "--inconclusive: '%s' is not warn or fail", arg);
		return 0;
	case OPT_JUNIT:
		*used = "--junit";
		if (!*arg)
			return errf(err, errlen, "--junit: empty file name");
		o->junit_path = arg;
		return 0;
	case OPT_MARKDOWN:
		*used = "--markdown";
		if (!*arg)
			return errf(err, errlen, "--markdown: empty file name");
		o->markdown_path = arg;
		return 0;
	}
	return 1;
}

static const struct option compare_opts[] = {
    {"fail-over", required_argument, NULL, OPT_FAIL_OVER},
    {"metric", required_argument, NULL, OPT_METRIC},
    {"inconclusive", required_argument, NULL, OPT_INCONCLUSIVE},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"markdown", required_argument, NULL, OPT_MARKDOWN},
    {"html", required_argument, NULL, OPT_HTML},
    {"flame-diff", required_argument, NULL, OPT_FLAME_DIFF},
    {"wide", no_argument, NULL, OPT_WIDE},
    {"color", required_argument, NULL, OPT_COLOR},
    {"colour", required_argument, NULL, OPT_COLOR},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse_compare(struct tsarun_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	const struct option *opts = compare_opts;
	const char *used = NULL;
	int c, ret, npos = 0;

	o->mode = MODE_COMPARE;
	o->gate = true;
	optind = 0;
	opterr = 0;
	/* Permuting: options may come before, between or after the two files. */
	while ((c = getopt_long(argc - 1, argv + 1, options_short_table(MODE_COMPARE), opts,
				NULL)) != -1) {
		ret = gate_option(o, c, optarg, &used, err, errlen);
		if (ret <= 0) {
			if (ret)
				return ret;
			continue;
		}
		switch (c) {
		case OPT_HTML:
			if (!*optarg)
				return errf(err, errlen, "--html: empty file name");
			o->html_path = optarg;
			break;
		case OPT_FLAME_DIFF:
			if (!*optarg)
				return errf(err, errlen, "--flame-diff: empty directory name");
			o->flame_diff_dir = optarg;
			break;
		case OPT_WIDE:
			o->wide = true;
			break;
		case OPT_COLOR: {
			static const char *const names[] = {"auto", "always", "never"};
			int i = parse_enum(optarg, names, 3);

			if (i < 0)
				return errf(err, errlen,
					    "--color: '%s' is not auto, always or never", optarg);
			o->color = i;
			break;
		}
		case 'q':
			o->quiet = true;
			o->no_table = true;
			break;
		case 'h':
			o->mode = MODE_HELP;
			return 0;
		case ':':
			return errf(err, errlen, "compare: option '%s' needs a value",
				    argv[optind]);
		default:
			return errf(err, errlen,
				    "compare: unknown option '%s' (usage: tsarun compare BASE.json "
				    "NEW.json [--fail-over SPEC] [--metric LIST])",
				    argv[optind]);
		}
	}
	for (int i = optind + 1; i < argc; i++) {
		if (npos == 0)
			o->compare_base = argv[i];
		else if (npos == 1)
			o->compare_new = argv[i];
		npos++;
	}
	if (npos != 2)
		return errf(err, errlen,
			    "compare: needs two artifacts, got %d (usage: tsarun compare BASE.json "
			    "NEW.json [--fail-over SPEC])",
			    npos);
	gate_spec_finish(&o->gate_spec, false);
	return 0;
}

static const struct option report_opts[] = {
    {"format", required_argument, NULL, 'f'},
    {"view", required_argument, NULL, OPT_VIEW},
    {"inverted", no_argument, NULL, OPT_INVERTED},
    {"reverse", no_argument, NULL, OPT_REVERSE},
    {"sort", required_argument, NULL, OPT_SORT},
    {"top", required_argument, NULL, OPT_TOP},
    {"wide", no_argument, NULL, OPT_WIDE},
    {"color", required_argument, NULL, OPT_COLOR},
    {"colour", required_argument, NULL, OPT_COLOR},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse_report(struct tsarun_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	const struct option *opts = report_opts;
	static const char *const colors[] = {"auto", "always", "never"};
	static const char *const formats[] = {"table", "markdown", "folded",   "svg",	   "trace",
					      "html",  "csv",	   "runs-csv", "hyperfine"};
	static const char *const views[] = {"offcpu", "oncpu", "wall"};
	int c, i, npos = 0, view = -1, format = 0;
	uint64_t v;

	o->mode = MODE_REPORT;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, options_short_table(MODE_REPORT), opts,
				NULL)) != -1) {
		switch (c) {
		case 'f':
			format = parse_enum(optarg, formats, 9);
			if (format < 0)
				return errf(err, errlen,
					    "report: --format '%s' is not table, markdown, folded, "
					    "svg, trace, html, csv, runs-csv or hyperfine",
					    optarg);
			break;
		case OPT_VIEW:
			view = parse_enum(optarg, views, 3);
			if (view < 0)
				return errf(err, errlen,
					    "report: --view '%s' is not offcpu, oncpu or wall",
					    optarg);
			break;
		case OPT_SORT:
			i = parse_enum(optarg, sort_names,
				       sizeof(sort_names) / sizeof(sort_names[0]));
			if (i < 0)
				return errf(err, errlen, "--sort: unknown key '%s'", optarg);
			o->sort = i;
			break;
		case OPT_TOP:
			if (parse_uint(optarg, 1, 100000, &v))
				return errf(err, errlen,
					    "--top: '%s' is not a number from 1 to 100000", optarg);
			o->top = (int)v;
			break;
		case OPT_WIDE:
			o->wide = true;
			break;
		case OPT_INVERTED:
			o->report_inverted = true;
			break;
		case OPT_REVERSE:
			o->report_reversed = true;
			break;
		case OPT_COLOR:
			i = parse_enum(optarg, colors, 3);
			if (i < 0)
				return errf(err, errlen,
					    "--color: '%s' is not auto, always or never", optarg);
			o->color = i;
			break;
		case 'h':
			o->mode = MODE_HELP;
			return 0;
		case ':':
			return errf(err, errlen, "report: option '%s' needs a value", argv[optind]);
		default:
			return errf(err, errlen,
				    "report: unknown option '%s' (usage: tsarun report RUN.json "
				    "[--format table|markdown|folded|svg|trace|html])",
				    argv[optind]);
		}
	}
	o->report_markdown = format == 1;
	o->report_trace = format == 4;
	o->report_html = format == 5;
	o->report_export = format >= 6 ? format - 5 : 0;
	/* folded and svg are a stacked view: the whole life of every thread unless told. */
	if (format == 2 || format == 3) {
		o->report_profile = view >= 0 ? view : REPORT_WALL;
		o->report_svg = format == 3;
	} else if (view >= 0) {
		return errf(err, errlen,
			    "report: --view is for --format folded or svg (the %s is not a "
			    "stacked view)",
			    format == 4	  ? "trace"
			    : format == 5 ? "html page"
			    : format >= 6 ? "export"
					  : "table");
	}
	if (o->report_inverted && !o->report_svg)
		return errf(err, errlen, "report: --inverted is for --format svg (a flame graph)");
	if (o->report_reversed && !o->report_svg)
		return errf(err, errlen, "report: --reverse is for --format svg (a flame graph)");
	for (i = optind + 1; i < argc; i++, npos++)
		if (npos == 0)
			o->report_artifact = argv[i];
	if (npos != 1)
		return errf(err, errlen,
			    "report: needs one artifact, got %d (usage: tsarun report RUN.json "
			    "[--format table|markdown|folded|svg|trace|html])",
			    npos);
	return 0;
}

static const struct option doctor_opts[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* doctor takes flags only, each whole (no abbreviation, no value). */
static int parse_doctor(struct tsarun_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	o->mode = MODE_DOCTOR;
	for (int i = 2; i < argc; i++) {
		const struct option *l = doctor_opts;

		if (!strcmp(argv[i], "-h"))
			l = &doctor_opts[1];
		else if (!strncmp(argv[i], "--", 2))
			while (l->name && strcmp(argv[i] + 2, l->name))
				l++;
		else
			l = &doctor_opts[2];
		switch (l->val) {
		case OPT_JSON:
			o->doctor_json = true;
			break;
		case 'h':
			o->mode = MODE_HELP;
			break;
		default:
			return errf(err, errlen,
				    "doctor: unknown argument '%s' (try 'tsarun doctor --json')",
				    argv[i]);
		}
	}
	return 0;
}

const struct option *options_long_table(enum tsarun_mode mode)
{
	switch (mode) {
	case MODE_RUN:
		return long_opts;
	case MODE_COMPARE:
		return compare_opts;
	case MODE_REPORT:
		return report_opts;
	case MODE_DOCTOR:
		return doctor_opts;
	default:
		return NULL;
	}
}

const char *options_short_table(enum tsarun_mode mode)
{
	switch (mode) {
	case MODE_RUN:
		/* '+': stop at the first non-option, which belongs to the command. */
		return "+:hVqvr:b:p:";
	case MODE_COMPARE:
		return ":qh";
	case MODE_REPORT:
		return ":f:h";
	case MODE_DOCTOR:
		return "h";
	default:
		return NULL;
	}
}

/* "--name" of a long option by its value, for messages about the option, not its argument. */
static const char *long_name(int val)
{
	static char name[32];

	for (const struct option *l = long_opts; l->name; l++) {
		if (l->val == val) {
			snprintf(name, sizeof(name), "--%s", l->name);
			return name;
		}
	}
	return "an option";
}

int options_parse(struct tsarun_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	const char *gate_used = NULL;
	/* The first option given that only a command's run uses. */
	char run_only[32] = "", quiet[32] = "";
	bool freq_given = false, tl_tuned = false;
	uint64_t v;
	int c, i;

	err[0] = '\0';
	if (argc >= 2 && !strcmp(argv[1], "doctor"))
		return parse_doctor(o, argc, argv, err, errlen);
	if (argc >= 2 && !strcmp(argv[1], "compare"))
		return parse_compare(o, argc, argv, err, errlen);
	if (argc >= 2 && !strcmp(argv[1], "report"))
		return parse_report(o, argc, argv, err, errlen);

	optind = 0; /* GNU: full reinitialisation, so repeated calls (tests) work */
	opterr = 0;
	while (!o->bash && (c = getopt_long(argc, argv, options_short_table(MODE_RUN), long_opts,
					    NULL)) != -1) {
		switch (c) {
		case OPT_NO_TABLE:
		case 'q':
			if (!quiet[0])
				snprintf(quiet, sizeof(quiet), "%s", long_name(c));
			break;
		case OPT_TOP:
		case OPT_WIDE:
		case OPT_COLOR:
		case OPT_DESCENDANTS:
		case OPT_KILL_GRACE:
		case OPT_NO_DELAYACCT:
		case OPT_RINGBUF:
		case OPT_FREQ:
		case OPT_BASH_NO_FOLLOW:
		case OPT_BASH_RECALIBRATE:
		case OPT_BASH_TOP:
		case OPT_BASH_DEPTH:
		case OPT_STREAM:
		case OPT_STREAM_BACKLOG:
		case OPT_TIMELINE:
		case OPT_TIMELINE_BUFFER:
		case OPT_TIMELINE_MAX:
		case OPT_CRITICAL_PATH:
		case OPT_EXPORT_CSV:
		case OPT_EXPORT_RUNS_CSV:
		case OPT_EXPORT_HYPERFINE:
			if (!run_only[0])
				snprintf(run_only, sizeof(run_only), "%s", long_name(c));
			break;
		}
		switch (c) {
		case OPT_JSON:
			if (!*optarg)
				return errf(err, errlen, "--json: empty file name");
			o->json_path = optarg;
			break;
		case OPT_OUT_DIR:
			if (!*optarg)
				return errf(err, errlen, "--out-dir: empty directory name");
			o->out_dir = optarg;
			break;
		case OPT_REPORT:
			if (!*optarg)
				return errf(err, errlen, "--report: empty file name");
			o->report_path = optarg;
			break;
		case OPT_EXPORT_CSV:
		case OPT_EXPORT_RUNS_CSV:
		case OPT_EXPORT_HYPERFINE:
			if (!*optarg)
				return errf(err, errlen, "%s: empty file name", long_name(c));
			*(c == OPT_EXPORT_CSV	     ? &o->export_csv_path
			  : c == OPT_EXPORT_RUNS_CSV ? &o->export_runs_csv_path
						     : &o->export_hyperfine_path) = optarg;
			break;
		case OPT_NO_TABLE:
			o->no_table = true;
			break;
		case OPT_WIDE:
			o->wide = true;
			break;
		case 'q':
			o->quiet = true;
			o->no_table = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case OPT_SORT:
			i = parse_enum(optarg, sort_names,
				       sizeof(sort_names) / sizeof(sort_names[0]));
			if (i < 0)
				return errf(
				    err, errlen,
				    "--sort: unknown key '%s' (wall, cpu, runq, sleep, disk, "
				    "offcpu, switches, wakeup, tid)",
				    optarg);
			o->sort = i;
			o->sort_given = true;
			break;
		case OPT_TOP:
			if (parse_uint(optarg, 1, 100000, &v))
				return errf(err, errlen,
					    "--top: '%s' is not a number from 1 to 100000", optarg);
			o->top = (int)v;
			break;
		case OPT_COLOR: {
			static const char *const names[] = {"auto", "always", "never"};

			i = parse_enum(optarg, names, 3);
			if (i < 0)
				return errf(err, errlen,
					    "--color: '%s' is not auto, always or never", optarg);
			o->color = i;
			break;
		}
		case OPT_USER:
			if (!*optarg)
				return errf(err, errlen, "--user: empty user name");
			o->user = optarg;
			break;
		case OPT_DESCENDANTS: {
			static const char *const names[] = {"wait", "leave", "kill"};

			i = parse_enum(optarg, names, 3);
			if (i < 0)
				return errf(err, errlen,
					    "--descendants: '%s' is not wait, leave or kill",
					    optarg);
			o->descendants = i;
			break;
		}
		case OPT_KILL_GRACE:
			if (parse_duration_ns(optarg, false, &o->kill_grace_ns))
				return errf(err, errlen,
					    "--kill-grace: '%s' is not a duration (e.g. 500ms, 2s)",
					    optarg);
			break;
		case OPT_NO_DELAYACCT:
			o->no_delayacct = true;
			break;
		case 'b':
			if (parse_backends(optarg, &o->backends))
				return errf(err, errlen,
					    "--backend: '%s' is not auto or a list of ebpf, "
					    "taskstats, proc (e.g. ebpf,proc)",
					    optarg);
			break;
		case 'p':
			if (parse_uint(optarg, 1, 4194304, &v))
				return errf(err, errlen, "--pid: '%s' is not a process id", optarg);
			o->pid = (uint32_t)v;
			break;
		case OPT_INTERVAL:
			/* A bare number is seconds, as top and vmstat take it. */
			if (parse_duration_ns(optarg, true, &o->interval_ns) ||
			    o->interval_ns < 10000000ull || o->interval_ns > 86400000000000ull)
				return errf(err, errlen,
					    "--interval: '%s' is not a duration from 10ms to 24h "
					    "(e.g. 1s, 300ms)",
					    optarg);
			o->interval_given = true;
			break;
		case OPT_STREAM:
			if (!*optarg)
				return errf(err, errlen,
					    "--stream: empty file name (- for stderr)");
			o->stream_path = optarg;
			break;
		case OPT_STREAM_BACKLOG:
			if (parse_size(optarg, &v) || v > (1ull << 30))
				return errf(err, errlen,
					    "--stream-backlog: '%s' is not a size from 0 to 1G "
					    "(e.g. 1M)",
					    optarg);
			o->stream_backlog_bytes = v;
			o->stream_backlog_given = true;
			break;
		case OPT_COUNT:
			if (parse_uint(optarg, 1, UINT32_MAX, &o->count))
				return errf(err, errlen, "--count: '%s' is not a number from 1",
					    optarg);
			break;
		case OPT_OUTPUT:
			if (!strcmp(optarg, "json"))
				o->output_json = true;
			else if (!strcmp(optarg, "table"))
				o->output_json = false;
			else
				return errf(err, errlen, "--output: '%s' is not table or json",
					    optarg);
			break;
		case OPT_TID:
			if (parse_uint(optarg, 1, 4194304, &v))
				return errf(err, errlen, "--tid: '%s' is not a thread id", optarg);
			o->tid = (uint32_t)v;
			break;
		case OPT_COMM:
			if (!*optarg)
				return errf(err, errlen, "--comm: empty pattern");
			o->comm = optarg;
			break;
		case OPT_SHOW_IDLE:
			o->show_idle = true;
			break;
		case OPT_NO_HEADER:
			o->no_header = true;
			break;
		case OPT_SAMPLE:
			if (parse_duration_ns(optarg, false, &o->sample_ns) ||
			    o->sample_ns < 1000000ull || o->sample_ns > 60000000000ull)
				return errf(err, errlen,
					    "--sample: '%s' is not a duration from 1ms to 60s "
					    "(e.g. 10ms)",
					    optarg);
			o->sample_given = true;
			break;
		case OPT_RINGBUF:
			if (parse_size(optarg, &v) || v < 4096 || v > (1ull << 30))
				return errf(err, errlen,
					    "--ringbuf: '%s' is not a size from 4K to 1G (e.g. 4M)",
					    optarg);
			o->ringbuf_bytes = v;
			break;
		case 'r':
			if (parse_uint(optarg, 1, 10000, &v))
				return errf(err, errlen,
					    "--runs: '%s' is not a number from 1 to 10000", optarg);
			o->runs = (unsigned)v;
			o->runs_given = true;
			break;
		case OPT_BASELINE:
			if (!*optarg)
				return errf(err, errlen, "--baseline: empty file name");
			o->baseline_path = optarg;
			break;
		case OPT_BASELINE_CMD:
			if (!*optarg)
				return errf(err, errlen, "--baseline-cmd: empty command");
			o->baseline_cmd = optarg;
			break;
		case OPT_HTML:
			if (!*optarg)
				return errf(err, errlen, "--html: empty file name");
			o->html_path = optarg;
			break;
		case OPT_FAIL_OVER:
		case OPT_METRIC:
		case OPT_MAX_RUNS:
		case OPT_INCONCLUSIVE:
		case OPT_JUNIT:
		case OPT_MARKDOWN: {
			int ret = gate_option(o, c, optarg, &gate_used, err, errlen);

			if (ret)
				return ret;
			break;
		}
		case OPT_WARMUP:
			if (parse_uint(optarg, 0, 1000, &v))
				return errf(err, errlen,
					    "--warmup: '%s' is not a number from 0 to 1000",
					    optarg);
			o->warmup = (unsigned)v;
			break;
		case OPT_BASH:
			/* Everything after --bash belongs to the script (or to -c). */
			o->bash = true;
			break;
		case OPT_BASH_NO_FOLLOW:
			o->bash_no_follow = true;
			break;
		case OPT_BASH_RECALIBRATE:
			o->bash_recalibrate = true;
			break;
		case OPT_BASH_TOP:
			if (parse_uint(optarg, 0, 100000, &v))
				return errf(err, errlen,
					    "--bash-top: '%s' is not a number from 0 to 100000",
					    optarg);
			o->bash_top = (int)v;
			break;
		case OPT_BASH_DEPTH:
			if (parse_uint(optarg, 0, 100000, &v))
				return errf(err, errlen,
					    "--bash-depth: '%s' is not a number from 0 to 100000",
					    optarg);
			o->bash_depth = (unsigned)v;
			break;
		case OPT_STACKS:
			o->stacks = true;
			break;
		case OPT_OFFCPU_MIN:
			/* "0" needs no unit: every sleep is charged. */
			if (strcmp(optarg, "0") &&
			    (parse_duration_ns(optarg, false, &o->offcpu_min_ns) ||
			     o->offcpu_min_ns > 3600000000000ull))
				return errf(err, errlen,
					    "--offcpu-min: '%s' is not a duration up to 1h (e.g. "
					    "0, 10us, 1ms)",
					    optarg);
			if (!strcmp(optarg, "0"))
				o->offcpu_min_ns = 0;
			o->stacks = true;
			break;
		case OPT_WAKER:
			o->waker = true;
			o->stacks = true;
			break;
		case OPT_FLAME:
			o->flame = true;
			o->stacks = true;
			break;
		case OPT_FREQ:
			if (parse_uint(optarg, 1, 10000, &v))
				return errf(err, errlen,
					    "--freq: '%s' is not a rate from 1 to 10000 (Hz)",
					    optarg);
			o->freq = (unsigned)v;
			freq_given = true;
			break;
		case OPT_TIMELINE:
		case OPT_CRITICAL_PATH: /* the walk needs the timeline and its wakeups */
			o->timeline = true;
			break;
		case OPT_TIMELINE_BUFFER:
			if (parse_size(optarg, &v) || v < 4096 || v > (1ull << 30))
				return errf(
				    err, errlen,
				    "--timeline-buffer: '%s' is not a size from 4K to 1G (e.g. "
				    "8M)",
				    optarg);
			o->timeline_bytes = v;
			tl_tuned = true;
			break;
		case OPT_TIMELINE_MAX:
			if (parse_uint(optarg, 1, 100000000, &v))
				return errf(
				    err, errlen,
				    "--timeline-max: '%s' is not a number of intervals from 1 "
				    "to 100000000",
				    optarg);
			o->timeline_max = v;
			tl_tuned = true;
			break;
		case OPT_NO_SANDBOX:
			o->no_sandbox = true;
			break;
		case 'h':
			o->mode = MODE_HELP;
			return 0;
		case 'V':
			o->mode = MODE_VERSION;
			return 0;
		case ':':
			return errf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
		case '?':
		default:
			if (optopt && optopt < 256)
				return errf(err, errlen, "unknown option '-%c' (see tsarun --help)",
					    optopt);
			return errf(err, errlen, "unknown option '%s' (see tsarun --help)",
				    argv[optind - 1]);
		}
	}

	/* Neither wins silently: the user meant one of them, and tsarun cannot tell which. */
	if (o->quiet && o->verbose)
		return errf(
		    err, errlen,
		    "-q and -v contradict each other (-q prints nothing but errors, -v says "
		    "more): choose one");
	if (o->pid) {
		/* Monitor mode: the process runs already; no command. */
		if (o->bash || optind < argc)
			return errf(
			    err, errlen,
			    "-p attaches to a running process: no command (usage: tsarun -p "
			    "PID [--interval DUR] [--count N])");
		if (o->backends & BACKEND_EBPF)
			return errf(err, errlen,
				    "--backend ebpf: monitor mode (-p) samples procfs and queries "
				    "taskstats; choose auto, proc or taskstats");
		/* Options of a command's run would be silently ignored: say so instead. */
		if (o->json_path || o->out_dir || o->report_path || o->runs_given || o->warmup ||
		    o->baseline_path || o->baseline_cmd || o->stacks || o->user)
			return errf(
			    err, errlen,
			    "-p: --json, --out-dir, --report, --runs, --warmup, --baseline, "
			    "--stacks and --user are for running a command (monitor mode "
			    "writes JSON Lines with --output json)");
		if (gate_used)
			return errf(
			    err, errlen,
			    "-p: %s is for the regression gate of a command's runs, not for "
			    "monitor mode",
			    gate_used);
		if (quiet[0] && !o->output_json)
			return errf(err, errlen,
				    "-p: %s would leave monitor mode with no output: its report is "
				    "the table (or JSON Lines on stdout with --output json)",
				    quiet);
		if (run_only[0])
			return errf(err, errlen,
				    "-p: %s is for running a command, not for monitor mode (its "
				    "report is the table on stderr, or --output json)",
				    run_only);
		if (o->sort == SORT_WAKEUP_LAT)
			return errf(
			    err, errlen,
			    "-p --sort wakeup: monitor mode measures no wakeup latency "
			    "(its counters are procfs's and taskstats's); --sort runq orders "
			    "by the time waited for a CPU");
		if (o->sample_ns >= o->interval_ns)
			return errf(err, errlen,
				    "--sample must be shorter than --interval (%llu ms >= %llu ms)",
				    (unsigned long long)(o->sample_ns / 1000000),
				    (unsigned long long)(o->interval_ns / 1000000));
		o->mode = MODE_MONITOR;
		return 0;
	}
	if (o->tid || o->comm || o->count || o->output_json || o->show_idle || o->no_header)
		return errf(err, errlen,
			    "--tid, --comm, --count, --output, --show-idle and --no-header are for "
			    "monitor mode (-p PID)");
	if (o->stream_path && !o->interval_given)
		return errf(err, errlen,
			    "--stream names where --interval's lines go: add --interval DUR (e.g. "
			    "--interval 1s)");
	if (o->stream_backlog_given && !o->interval_given)
		return errf(err, errlen,
			    "--stream-backlog bounds what waits for --interval's reader: add "
			    "--interval DUR (e.g. --interval 1s)");
	if (o->interval_given && o->baseline_cmd)
		return errf(
		    err, errlen,
		    "--interval with --baseline-cmd: the stream follows one command's runs, "
		    "and both commands would write to it (stream the baseline apart, and "
		    "compare with --baseline FILE)");
	if (o->interval_given && o->sample_given && o->sample_ns >= o->interval_ns)
		return errf(err, errlen,
			    "--sample must be shorter than --interval (%llu ms >= %llu ms)",
			    (unsigned long long)(o->sample_ns / 1000000),
			    (unsigned long long)(o->interval_ns / 1000000));
	if (o->bash_no_follow && !o->bash)
		return errf(err, errlen,
			    "--bash-no-follow is for --bash (give it before --bash SCRIPT)");
	if (o->bash_recalibrate && !o->bash)
		return errf(err, errlen,
			    "--bash-recalibrate is for --bash (give it before --bash SCRIPT)");
	if ((o->bash_top >= 0 || o->bash_depth) && !o->bash)
		return errf(err, errlen,
			    "--bash-top and --bash-depth are for --bash (give them before --bash "
			    "SCRIPT)");
	if (freq_given && !o->flame)
		return errf(err, errlen,
			    "--freq sets the rate of --flame's on-CPU samples: add --flame");
	if (tl_tuned && !o->timeline)
		return errf(err, errlen,
			    "--timeline-buffer and --timeline-max size --timeline: add --timeline");
	if (o->bash) {
		if (optind < argc && !strcmp(argv[optind], "--"))
			optind++;
		if (optind < argc && !strcmp(argv[optind], "-c")) {
			o->bash_command = true;
			optind++;
			if (optind >= argc)
				return errf(err, errlen, "--bash -c: no commands given");
		}
		if (optind >= argc)
			return errf(
			    err, errlen,
			    "--bash: no script given (usage: tsarun [OPTIONS] --bash SCRIPT "
			    "[ARG...])");
	}
	if (optind >= argc)
		return errf(err, errlen,
			    "no command given (usage: tsarun [OPTIONS] -- COMMAND [ARG...])");
	o->argv = &argv[optind];
	o->argc = argc - optind;

	if (o->backends && !(o->backends & BACKEND_PROC) && o->sample_given)
		return errf(err, errlen,
			    "--sample is the procfs source's interval, and --backend leaves procfs "
			    "out: add proc to the list (e.g. --backend ebpf,proc)");
	if (o->backends && !(o->backends & BACKEND_EBPF) && o->stacks)
		return errf(err, errlen,
			    "--stacks, --offcpu-min, --waker and --flame need the ebpf backend "
			    "(add it to --backend)");
	if (o->backends && !(o->backends & BACKEND_EBPF) && o->timeline)
		return errf(err, errlen,
			    "--timeline records scheduler events: it needs the ebpf backend (add "
			    "it to --backend; procfs samples and taskstats have no state "
			    "intervals)");
	if (o->baseline_path && o->baseline_cmd)
		return errf(err, errlen,
			    "--baseline and --baseline-cmd: choose one (a stored artifact, or a "
			    "command run alongside)");
	if (o->baseline_cmd && o->bash)
		return errf(err, errlen,
			    "--baseline-cmd with --bash: the two sides would not be measured alike "
			    "(record a --bash baseline and use --baseline FILE)");
	o->gate = o->baseline_path || o->baseline_cmd;
	if (!o->gate && gate_used)
		return errf(err, errlen,
			    "%s needs a baseline: --baseline FILE (an earlier artifact) or "
			    "--baseline-cmd 'CMD' (run alongside)",
			    gate_used);
	if (o->gate) {
		if (!o->runs_given)
			o->runs = 10;
		if (!o->max_runs_given && o->gate_spec.max_runs < o->runs)
			o->gate_spec.max_runs = o->runs;
		if (o->gate_spec.max_runs < o->runs)
			return errf(err, errlen, "--max-runs %u is less than --runs %u%s",
				    o->gate_spec.max_runs, o->runs,
				    o->runs_given ? ""
						  : " (the default with a baseline; give --runs N "
						    "to run fewer)");
		gate_spec_finish(&o->gate_spec, o->baseline_cmd != NULL);
	}
	return 0;
}
