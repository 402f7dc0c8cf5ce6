// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "unit.h"

#include "confine.h"
#include "options.h"
#include "probe_set.h"

static int parse(struct tsarun_opts *o, char *err, const char **args)
{
	static char *argv[64]; /* o->argv points into it after we return */
	int argc = 0;

	argv[argc++] = "tsarun";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	options_defaults(o);
	return options_parse(o, argc, argv, err, 256);
}

#define PARSE(o, err, ...) parse(o, err, (const char *[]){__VA_ARGS__, NULL})

static void test_command_after_dashdash(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "--", "ls", "-l"), 0);
	assert_int_equal(o.mode, MODE_RUN);
	assert_int_equal(o.argc, 2);
	assert_string_equal(o.argv[0], "ls");
	assert_string_equal(o.argv[1], "-l");
	assert_null(o.argv[2]);
}

static void test_command_without_dashdash_stops_at_first_word(void **state)
{
	struct tsarun_opts o;
	char err[256];

	/* Options after the command belong to the command. */
	assert_int_equal(PARSE(&o, err, "-q", "make", "-j8", "--quiet"), 0);
	assert_true(o.quiet);
	assert_int_equal(o.argc, 3);
	assert_string_equal(o.argv[1], "-j8");
	assert_string_equal(o.argv[2], "--quiet");
}

/* --bash: everything after it belongs to the script, or to -c's commands. */
static void test_bash(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-q", "--bash", "deploy.sh", "prod", "--json", "x", "-r"),
			 0);
	assert_true(o.bash);
	assert_false(o.bash_command);
	assert_false(o.bash_no_follow);
	assert_int_equal(o.mode, MODE_RUN);
	assert_true(o.quiet);
	/* The options after the script are the script's. */
	assert_null(o.json_path);
	assert_int_equal(o.runs, 1);
	assert_int_equal(o.argc, 5);
	assert_string_equal(o.argv[0], "deploy.sh");
	assert_string_equal(o.argv[2], "--json");
	assert_string_equal(o.argv[4], "-r");
	assert_null(o.argv[5]);

	assert_int_equal(PARSE(&o, err, "--bash", "-c", "for i in 1 2; do :; done", "a0", "a1"), 0);
	assert_true(o.bash);
	assert_true(o.bash_command);
	assert_int_equal(o.argc, 3);
	assert_string_equal(o.argv[0], "for i in 1 2; do :; done");
	assert_string_equal(o.argv[1], "a0");

	/* A script named -x is reached through --. */
	assert_int_equal(PARSE(&o, err, "--bash", "--", "-x.sh"), 0);
	assert_false(o.bash_command);
	assert_string_equal(o.argv[0], "-x.sh");

	/* Options before --bash are tsarun's. */
	assert_int_equal(PARSE(&o, err, "--bash-no-follow", "-r", "3", "--warmup", "1", "--flame",
			       "--json", "b.json", "--bash", "-c", ":"),
			 0);
	assert_true(o.bash_no_follow);
	assert_int_equal(o.runs, 3);
	assert_int_equal(o.warmup, 1);
	assert_true(o.flame);
	assert_true(o.stacks);
	assert_string_equal(o.json_path, "b.json");
	assert_string_equal(o.argv[0], ":");

	assert_int_equal(PARSE(&o, err, "--bash"), -EINVAL);
	assert_non_null(strstr(err, "--bash: no script given"));
	assert_int_equal(PARSE(&o, err, "--bash", "-c"), -EINVAL);
	assert_non_null(strstr(err, "--bash -c: no commands given"));
	assert_int_equal(PARSE(&o, err, "--bash", "--"), -EINVAL);
	assert_non_null(strstr(err, "--bash: no script given"));
}

static void test_defaults(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "true"), 0);
	assert_null(o.json_path);
	assert_false(o.no_table);
	assert_int_equal(o.descendants, DESC_WAIT);
	assert_int_equal(o.sort, SORT_WALL);
	assert_int_equal(o.top, 20);
	assert_int_equal(o.ringbuf_bytes, 4u << 20);
	assert_false(o.no_delayacct);
	assert_int_equal(o.color, COLOR_AUTO);
	assert_int_equal(o.runs, 1);
	assert_false(o.runs_given);
	assert_int_equal(o.warmup, 0);
}

static void test_runs(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-r", "10", "--warmup", "2", "--", "true"), 0);
	assert_int_equal(o.runs, 10);
	assert_true(o.runs_given);
	assert_int_equal(o.warmup, 2);
	assert_int_equal(PARSE(&o, err, "--runs=3", "--warmup=0", "true"), 0);
	assert_int_equal(o.runs, 3);
	assert_int_equal(o.warmup, 0);
}

static void test_values(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "--json", "x.json", "--out-dir", "out", "--sort", "runq",
			       "--top", "5", "--descendants", "kill", "--kill-grace", "500ms",
			       "--ringbuf", "64K", "--color", "never", "--user", "nobody", "-v",
			       "-v", "--no-delayacct", "--", "true"),
			 0);
	assert_string_equal(o.json_path, "x.json");
	assert_string_equal(o.out_dir, "out");
	assert_int_equal(o.sort, SORT_RUNQ);
	assert_int_equal(o.top, 5);
	assert_int_equal(o.descendants, DESC_KILL);
	assert_int_equal(o.kill_grace_ns, 500000000ull);
	assert_int_equal(o.ringbuf_bytes, 65536);
	assert_int_equal(o.color, COLOR_NEVER);
	assert_string_equal(o.user, "nobody");
	assert_int_equal(o.verbose, 2);
	assert_true(o.no_delayacct);
}

static void test_gate_options(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(
	    PARSE(&o, err, "--baseline", "b.json", "--fail-over", "cpu=5%,wall=15%", "--", "true"),
	    0);
	assert_true(o.gate);
	assert_string_equal(o.baseline_path, "b.json");
	assert_int_equal(o.runs, 10); /* the gate's default */
	assert_int_equal(o.gate_spec.max_runs, 30);
	assert_true(o.gate_spec.gated[METRIC_CPU] && o.gate_spec.gated[METRIC_WALL]);
	assert_false(o.gate_spec.inconclusive_fails);

	assert_int_equal(PARSE(&o, err, "--baseline-cmd", "./old", "-r", "40", "--metric",
			       "max_rss", "--inconclusive", "fail", "true"),
			 0);
	assert_string_equal(o.baseline_cmd, "./old");
	assert_int_equal(o.runs, 40);
	assert_int_equal(o.gate_spec.max_runs, 40); /* at least --runs */
	assert_true(o.gate_spec.gated[METRIC_MAX_RSS] && !o.gate_spec.gated[METRIC_CPU]);
	assert_true(o.gate_spec.inconclusive_fails);

	/* Nothing named: cpu at 10%. */
	assert_int_equal(PARSE(&o, err, "--baseline", "b.json", "true"), 0);
	assert_true(o.gate_spec.gated[METRIC_CPU]);

	assert_int_equal(PARSE(&o, err, "--fail-over", "10%", "true"), -EINVAL);
	assert_non_null(strstr(err, "--fail-over needs a baseline"));
	assert_int_equal(PARSE(&o, err, "--metric", "cpu", "true"), -EINVAL);
	assert_non_null(strstr(err, "--metric needs a baseline"));
	assert_int_equal(PARSE(&o, err, "--baseline", "b", "--baseline-cmd", "c", "true"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--baseline", "b", "-r", "5", "--max-runs", "4", "true"),
			 -EINVAL);
	assert_non_null(strstr(err, "--max-runs 4 is less than --runs 5"));
	/* A --runs the user did not give is explained. */
	assert_int_equal(PARSE(&o, err, "--baseline", "b", "--max-runs", "4", "true"), -EINVAL);
	assert_non_null(strstr(err, "--runs 10 (the default with a baseline; give --runs N"));
	assert_int_equal(PARSE(&o, err, "--baseline-cmd", "./old", "--bash", "-c", "true"),
			 -EINVAL);
	assert_non_null(strstr(err, "--baseline-cmd with --bash"));
	assert_int_equal(PARSE(&o, err, "--baseline", "b", "--fail-over", "10", "true"), -EINVAL);
	assert_non_null(strstr(err, "needs a percent sign"));
}

/* -q and -v: contradictory, refused in either order, with the long names too. */
static void test_quiet_and_verbose(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-q", "-v", "true"), -EINVAL);
	assert_non_null(strstr(err, "-q and -v contradict each other"));
	assert_int_equal(PARSE(&o, err, "-v", "-v", "--quiet", "true"), -EINVAL);
	assert_non_null(strstr(err, "-q and -v contradict each other"));
	assert_int_equal(PARSE(&o, err, "-qv", "true"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--verbose", "-q", "-p", "1", "--output", "json"), -EINVAL);
	assert_non_null(strstr(err, "choose one"));
	/* Each alone, and -v with --no-table (quiet table, not quiet tsarun), still work. */
	assert_int_equal(PARSE(&o, err, "-q", "true"), 0);
	assert_true(o.quiet);
	assert_int_equal(PARSE(&o, err, "-v", "-v", "true"), 0);
	assert_int_equal(o.verbose, 2);
	assert_int_equal(PARSE(&o, err, "-v", "--no-table", "true"), 0);
	assert_true(o.no_table);
	assert_false(o.quiet);
	/* After the command, -v is the command's. */
	assert_int_equal(PARSE(&o, err, "-q", "grep", "-v", "x"), 0);
}

static void test_compare(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "compare", "a.json", "--fail-over", "5%", "b.json"), 0);
	assert_int_equal(o.mode, MODE_COMPARE);
	assert_string_equal(o.compare_base, "a.json");
	assert_string_equal(o.compare_new, "b.json");
	assert_true(o.gate_spec.gated[METRIC_CPU]);
	assert_true(o.gate_spec.threshold[METRIC_CPU] > 0.049 &&
		    o.gate_spec.threshold[METRIC_CPU] < 0.051);
	assert_int_equal(PARSE(&o, err, "compare", "--metric", "wall", "a", "b"), 0);
	assert_true(o.gate_spec.gated[METRIC_WALL] && !o.gate_spec.gated[METRIC_CPU]);
	assert_int_equal(PARSE(&o, err, "compare", "a.json"), -EINVAL);
	assert_non_null(strstr(err, "needs two artifacts, got 1"));
	assert_int_equal(PARSE(&o, err, "compare", "a", "b", "c"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "compare", "a", "b", "--bogus"), -EINVAL);
	assert_non_null(strstr(err, "unknown option '--bogus'"));
	assert_int_equal(PARSE(&o, err, "compare", "a", "b", "--fail-over", "ten%"), -EINVAL);
	assert_non_null(strstr(err, "'ten%' is not a percentage"));
	assert_int_equal(PARSE(&o, err, "compare", "a", "b", "--fail-over"), -EINVAL);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--format", "markdown", "--top", "3"),
			 0);
	assert_int_equal(o.mode, MODE_REPORT);
	assert_string_equal(o.report_artifact, "r.json");
	assert_true(o.report_markdown);
	assert_int_equal(o.top, 3);
	assert_int_equal(o.report_profile, -1);
	/* folded and svg: the stacks, the wall view unless --view says. */
	options_defaults(&o);
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--format", "svg"), 0);
	assert_int_equal(o.report_profile, REPORT_WALL);
	assert_true(o.report_svg);
	options_defaults(&o);
	assert_int_equal(
	    PARSE(&o, err, "report", "r.json", "--format", "folded", "--view", "oncpu"), 0);
	assert_int_equal(o.report_profile, REPORT_ONCPU);
	assert_false(o.report_svg);
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--view", "offcpu"), -EINVAL);
	assert_non_null(strstr(err, "--view is for --format folded or svg"));
	options_defaults(&o);
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--format", "trace"), 0);
	assert_true(o.report_trace);
	assert_int_equal(o.report_profile, -1);
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--format", "trace", "--view", "wall"),
			 -EINVAL);
	assert_non_null(strstr(err, "the trace is not a stacked view"));
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--format", "chrome"), -EINVAL);
	assert_non_null(strstr(
	    err, "is not table, markdown, folded, svg, trace, html, csv, runs-csv or hyperfine"));
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--format", "html"), 0);
	assert_true(o.report_html);
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--format", "hyperfine"), 0);
	assert_int_equal(o.report_export, 3);
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--format", "runs-csv", "--wide"), 0);
	assert_int_equal(o.report_export, 2);
	assert_true(o.wide);
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--format", "svg", "--inverted"), 0);
	assert_true(o.report_inverted && o.report_svg);
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--inverted"), -EINVAL);
	assert_non_null(strstr(err, "--inverted is for --format svg"));
	assert_int_equal(PARSE(&o, err, "report", "r.json", "--format", "html", "--view", "wall"),
			 -EINVAL);
	options_defaults(&o);
	assert_int_equal(PARSE(&o, err, "--html", "p.html", "--", "true"), 0);
	assert_string_equal(o.html_path, "p.html");
	options_defaults(&o);
	assert_int_equal(PARSE(&o, err, "--export-csv", "t.csv", "--export-runs-csv", "r.csv",
			       "--export-hyperfine", "h.json", "--", "true"),
			 0);
	assert_string_equal(o.export_csv_path, "t.csv");
	assert_string_equal(o.export_runs_csv_path, "r.csv");
	assert_string_equal(o.export_hyperfine_path, "h.json");
	options_defaults(&o);
	assert_int_equal(PARSE(&o, err, "compare", "a.json", "b.json", "--html", "c.html"), 0);
	assert_string_equal(o.html_path, "c.html");
	options_defaults(&o);
	assert_int_equal(PARSE(&o, err, "compare", "--wide", "a.json", "b.json"), 0);
	assert_true(o.wide);
	assert_int_equal(PARSE(&o, err, "report"), -EINVAL);
	assert_non_null(strstr(err, "needs one artifact, got 0"));
	/* A command called compare runs after --. */
	assert_int_equal(PARSE(&o, err, "--", "compare"), 0);
	assert_int_equal(o.mode, MODE_RUN);
}

/* --backend: auto, or the sources named; --sample: the procfs interval. */
static void test_backend_and_sample(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "--", "true"), 0);
	assert_int_equal(o.backends, 0);
	assert_int_equal(o.sample_ns, 10000000);
	assert_int_equal(PARSE(&o, err, "-b", "proc", "--", "true"), 0);
	assert_int_equal(o.backends, BACKEND_PROC);
	assert_int_equal(PARSE(&o, err, "--backend", "ebpf,procfs", "--", "true"), 0);
	assert_int_equal(o.backends, BACKEND_EBPF | BACKEND_PROC);
	assert_int_equal(PARSE(&o, err, "--backend=taskstats,proc", "--", "true"), 0);
	assert_int_equal(o.backends, BACKEND_TASKSTATS | BACKEND_PROC);
	assert_int_equal(PARSE(&o, err, "-b", "proc", "--backend", "auto", "--", "true"), 0);
	assert_int_equal(o.backends, 0);
	assert_int_equal(PARSE(&o, err, "--sample", "2.5ms", "--", "true"), 0);
	assert_int_equal(o.sample_ns, 2500000);
	/* Stacks come from the eBPF probe only. */
	assert_int_equal(PARSE(&o, err, "-b", "proc", "--stacks", "--", "true"), -EINVAL);
	assert_non_null(strstr(err, "ebpf"));
	assert_int_equal(PARSE(&o, err, "-b", "ebpf,proc", "--flame", "--", "true"), 0);
}

/* -p PID: monitor mode, no command; its options only with it. */
static void test_monitor(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-p", "123"), 0);
	assert_int_equal(o.mode, MODE_MONITOR);
	assert_int_equal(o.pid, 123);
	assert_int_equal(o.interval_ns, 1000000000);
	assert_int_equal(o.count, 0);
	assert_false(o.output_json);
	assert_int_equal(PARSE(&o, err, "-p", "5", "--interval", "300ms", "--count", "3",
			       "--output", "json", "--tid", "7", "--comm", "w*", "--show-idle",
			       "--no-header"),
			 0);
	assert_int_equal(o.interval_ns, 300000000);
	assert_int_equal(o.count, 3);
	assert_true(o.output_json);
	assert_int_equal(o.tid, 7);
	assert_string_equal(o.comm, "w*");
	assert_true(o.show_idle);
	assert_true(o.no_header);
	/* A bare interval is seconds. */
	assert_int_equal(PARSE(&o, err, "--pid", "5", "--interval", "2"), 0);
	assert_int_equal(o.interval_ns, 2000000000);
	assert_int_equal(PARSE(&o, err, "-p", "5", "--", "true"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-p", "5", "-b", "ebpf"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-p", "5", "--interval", "20ms", "--sample", "20ms"),
			 -EINVAL);
	assert_int_equal(PARSE(&o, err, "--count", "3", "--", "true"), -EINVAL);
	assert_non_null(strstr(err, "monitor mode"));
	/* A run's options are not silently ignored. */
	assert_int_equal(PARSE(&o, err, "-p", "5", "--json", "a.json"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-p", "5", "--runs", "3"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-p", "5", "--stacks"), -EINVAL);
	/* Neither are the gate's, nor the other options only a command's run reads. */
	assert_int_equal(PARSE(&o, err, "-p", "5", "--fail-over", "10%"), -EINVAL);
	assert_non_null(strstr(err, "--fail-over"));
	assert_int_equal(PARSE(&o, err, "-p", "5", "--junit", "j.xml"), -EINVAL);
	{
		static const char *const run_only[][2] = {
		    {"--top", "5"},
		    {"--color", "always"},
		    {"--descendants", "kill"},
		    {"--kill-grace", "1s"},
		    {"--ringbuf", "8M"},
		    {"--freq", "50"},
		    {"--no-delayacct", NULL},
		    {"--bash-no-follow", NULL},
		    {"--bash-recalibrate", NULL},
		    {"--stream", "s.jsonl"},
		    {"--stream-backlog", "1M"},
		    {"--timeline", NULL},
		    {"--timeline-buffer", "8M"},
		    {"--timeline-max", "10"},
		};

		for (size_t i = 0; i < sizeof(run_only) / sizeof(run_only[0]); i++) {
			int ret = run_only[i][1]
				      ? PARSE(&o, err, "-p", "5", run_only[i][0], run_only[i][1])
				      : PARSE(&o, err, "-p", "5", run_only[i][0]);

			assert_int_equal(ret, -EINVAL);
			assert_non_null(strstr(err, run_only[i][0]));
		}
	}
	/* -q with the table would leave nothing; with JSON Lines it changes nothing. */
	assert_int_equal(PARSE(&o, err, "-p", "5", "-q"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-p", "5", "--no-table"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-p", "5", "-q", "--output", "json"), 0);
	/* Monitor mode measures no wakeup latency: no order by one. */
	assert_int_equal(PARSE(&o, err, "-p", "5", "--sort", "wakeup"), -EINVAL);
	assert_non_null(strstr(err, "--sort wakeup"));
	assert_int_equal(PARSE(&o, err, "-p", "5", "--sort", "runq"), 0);
	/* A command's run streams its intervals (JSON Lines) with --interval. */
	assert_int_equal(PARSE(&o, err, "--interval", "250ms", "--", "true"), 0);
	assert_true(o.interval_given);
	assert_int_equal(o.interval_ns, 250000000);
	assert_null(o.stream_path);
	assert_int_equal(PARSE(&o, err, "--interval", "1s", "--stream", "-", "--", "true"), 0);
	assert_string_equal(o.stream_path, "-");
	/* What may wait for a slow reader: 1M unless said, 0 allowed (nothing waits). */
	assert_int_equal(o.stream_backlog_bytes, 1u << 20);
	assert_int_equal(
	    PARSE(&o, err, "--interval", "1s", "--stream-backlog", "64K", "--", "true"), 0);
	assert_int_equal(o.stream_backlog_bytes, 64 << 10);
	assert_int_equal(PARSE(&o, err, "--interval", "1s", "--stream-backlog", "0", "--", "true"),
			 0);
	assert_int_equal(o.stream_backlog_bytes, 0);
	assert_int_equal(PARSE(&o, err, "--stream-backlog", "64K", "--", "true"), -EINVAL);
	assert_non_null(strstr(err, "--interval"));
	assert_int_equal(PARSE(&o, err, "--", "true"), 0);
	assert_false(o.interval_given);
	/* --stream without --interval would write nothing: it says what to add. */
	assert_int_equal(PARSE(&o, err, "--stream", "s.jsonl", "--", "true"), -EINVAL);
	assert_non_null(strstr(err, "--interval"));
	/* Two commands in one stream; a sample no shorter than the interval. */
	assert_int_equal(PARSE(&o, err, "--interval", "1s", "--baseline-cmd", "old", "--", "true"),
			 -EINVAL);
	assert_non_null(strstr(err, "--baseline-cmd"));
	assert_int_equal(
	    PARSE(&o, err, "--interval", "100ms", "--sample", "100ms", "-b", "proc", "--", "true"),
	    -EINVAL);
	assert_non_null(strstr(err, "--sample"));
	assert_int_equal(
	    PARSE(&o, err, "--interval", "100ms", "--sample", "20ms", "-b", "proc", "--", "true"),
	    0);
	/* Options that only mean something with another one say which. */
	assert_int_equal(PARSE(&o, err, "--freq", "50", "--", "true"), -EINVAL);
	assert_non_null(strstr(err, "--flame"));
	assert_int_equal(PARSE(&o, err, "--freq", "50", "--flame", "--", "true"), 0);
	assert_int_equal(PARSE(&o, err, "--bash-no-follow", "--", "true"), -EINVAL);
	assert_non_null(strstr(err, "--bash"));
	assert_int_equal(PARSE(&o, err, "--bash-no-follow", "--bash", "s.sh"), 0);
	assert_int_equal(PARSE(&o, err, "--bash-recalibrate", "--", "true"), -EINVAL);
	assert_non_null(strstr(err, "--bash-recalibrate is for --bash"));
	assert_int_equal(PARSE(&o, err, "--bash-recalibrate", "--bash", "s.sh"), 0);
	assert_true(o.bash_recalibrate);
	/* --sample with a --backend list that leaves procfs out would sample nothing. */
	assert_int_equal(PARSE(&o, err, "-b", "ebpf", "--sample", "5ms", "--", "true"), -EINVAL);
	assert_non_null(strstr(err, "--sample"));
	assert_int_equal(PARSE(&o, err, "-b", "ebpf,proc", "--sample", "5ms", "--", "true"), 0);
	assert_int_equal(PARSE(&o, err, "--sample", "5ms", "--", "true"), 0);
	/* --timeline: scheduler events, so eBPF; its sizes mean nothing without it. */
	options_defaults(&o);
	assert_int_equal(PARSE(&o, err, "--timeline", "--", "true"), 0);
	assert_true(o.timeline);
	assert_int_equal(o.timeline_bytes, 8ull << 20);
	assert_int_equal(o.timeline_max, 1000000);
	assert_int_equal(PARSE(&o, err, "--timeline", "--timeline-buffer", "64K", "--timeline-max",
			       "500", "--", "true"),
			 0);
	assert_int_equal(o.timeline_bytes, 65536);
	assert_int_equal(o.timeline_max, 500);
	assert_int_equal(PARSE(&o, err, "--timeline", "-b", "proc", "--", "true"), -EINVAL);
	assert_non_null(strstr(err, "--timeline records scheduler events: it needs the ebpf"));
	assert_int_equal(PARSE(&o, err, "--timeline", "-b", "taskstats", "--", "true"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--timeline", "-b", "ebpf,proc", "--", "true"), 0);
	options_defaults(&o);
	assert_int_equal(PARSE(&o, err, "--timeline-max", "5", "--", "true"), -EINVAL);
	assert_non_null(strstr(err, "add --timeline"));
	options_defaults(&o);
	assert_int_equal(PARSE(&o, err, "-p", "5", "--timeline"), -EINVAL);
	assert_non_null(strstr(err, "-p: --timeline is for running a command"));
}

static void test_quiet_implies_no_table(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "-q", "true"), 0);
	assert_true(o.no_table);
}

/* Every malformed value is refused, and the message names it. */
static void test_bad_values_are_named(void **state)
{
	static const struct {
		const char *opt, *val, *needle;
	} bad[] = {
	    {"--top", "abc", "--top: 'abc'"},
	    {"--top", "0", "--top: '0'"},
	    {"--top", "-3", "--top: '-3'"},
	    {"--sort", "nope", "--sort: unknown key 'nope'"},
	    {"--color", "sometimes", "--color: 'sometimes'"},
	    {"--descendants", "forget", "--descendants: 'forget'"},
	    {"--kill-grace", "5 parsecs", "--kill-grace: '5 parsecs'"},
	    {"--kill-grace", "-1s", "--kill-grace: '-1s'"},
	    {"--kill-grace", "10", "--kill-grace: '10'"},
	    {"--ringbuf", "5 parsecs", "--ringbuf: '5 parsecs'"},
	    {"--ringbuf", "100", "--ringbuf: '100'"},
	    {"--ringbuf", "2G", "--ringbuf: '2G'"},
	    {"--json", "", "--json: empty"},
	    {"--user", "", "--user: empty"},
	    {"--runs", "0", "--runs: '0'"},
	    {"-r", "x", "--runs: 'x'"},
	    {"--runs", "10001", "--runs: '10001'"},
	    {"--warmup", "-1", "--warmup: '-1'"},
	    {"--warmup", "1001", "--warmup: '1001'"},
	};
	struct tsarun_opts o;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(PARSE(&o, err, bad[i].opt, bad[i].val, "--", "true"), -EINVAL);
		if (!strstr(err, bad[i].needle))
			fail_msg("'%s %s': message '%s' does not name it", bad[i].opt, bad[i].val,
				 err);
	}
}

/*
 * Every option that takes a value, in every mode, refuses malformed values
 * with a message that names the option and the value. The list of options
 * comes from the parsers' own getopt tables: an option added without a row
 * here fails this test, so the table stays complete as options land.
 */
static const struct {
	enum tsarun_mode mode;
	const char *name; /* long name, without the dashes */
	const char *bad[10];
} malformed[] = {
    {MODE_RUN, "json", {""}},
    {MODE_RUN, "out-dir", {""}},
    {MODE_RUN, "report", {""}},
    {MODE_RUN, "sort", {"nope", "", "WALL", "wall,cpu"}},
    {MODE_RUN, "top", {"abc", "0", "-1", "+5", " 5", "5x", "1.5", "100001", ""}},
    {MODE_RUN, "color", {"sometimes", "", "yes"}},
    {MODE_RUN, "colour", {"sometimes", ""}},
    {MODE_RUN, "user", {""}},
    {MODE_RUN, "descendants", {"all", "", "Wait"}},
    {MODE_RUN, "kill-grace", {"-1", "5", "5 parsecs", "1e3s", "0x10s", "abc", "inf", ".s", ""}},
    {MODE_RUN, "ringbuf", {"5 parsecs", "1K", "4095", "2G", "-4K", "4Q", "0.5", "nan", ""}},
    {MODE_RUN, "runs", {"abc", "0", "-1", "10001", "99999999999999999999", "1e3", ""}},
    {MODE_RUN, "warmup", {"x", "-1", "1001", ""}},
    {MODE_RUN, "baseline", {""}},
    {MODE_RUN, "baseline-cmd", {""}},
    {MODE_RUN, "fail-over", {"10", "-5%", "abc", "cpu=", "=5%", "cpu=5%,", "nope=5%", "0%", ""}},
    {MODE_RUN, "metric", {"nope", "", "cpu,,wall", "cpu,"}},
    {MODE_RUN, "max-runs", {"0", "abc", "10001", ""}},
    {MODE_RUN, "inconclusive", {"maybe", ""}},
    {MODE_RUN, "junit", {""}},
    {MODE_RUN, "markdown", {""}},
    {MODE_RUN, "html", {""}},
    {MODE_RUN, "export-csv", {""}},
    {MODE_RUN, "export-runs-csv", {""}},
    {MODE_RUN, "export-hyperfine", {""}},
    {MODE_RUN, "offcpu-min", {"5 parsecs", "-1ms", "5", "abc", "2h", "1e3us", ""}},
    {MODE_RUN, "freq", {"0", "abc", "10001", "-1", "99Hz", ""}},
    {MODE_RUN, "timeline-buffer", {"5 parsecs", "1K", "4095", "2G", "-4K", "abc", ""}},
    {MODE_RUN, "timeline-max", {"0", "abc", "-1", "1.5", "100000001", ""}},
    {MODE_RUN, "backend", {"nope", "", "ebpf,", ",proc", "EBPF", "auto,ebpf", "ebpf;proc"}},
    {MODE_RUN, "sample", {"-1", "abc", "5 parsecs", "0", "0.5ms", "61s", "10", ""}},
    {MODE_RUN, "pid", {"abc", "0", "-1", "1.5", "99999999", ""}},
    {MODE_RUN, "interval", {"-1", "abc", "5ms", "25h", "1e3", ""}},
    {MODE_RUN, "stream", {""}},
    {MODE_RUN, "stream-backlog", {"2G", "-1", "1Q", "0.5", "nan", ""}},
    {MODE_RUN, "count", {"abc", "-1", "0", "1.5", ""}},
    {MODE_RUN, "output", {"xml", "", "JSON"}},
    {MODE_RUN, "tid", {"abc", "0", "-1", ""}},
    {MODE_RUN, "comm", {""}},
    {MODE_RUN, "bash-top", {"abc", "-1", "+5", "5x", "1.5", "100001", ""}},
    {MODE_RUN, "bash-depth", {"abc", "-1", "2x", "100001", ""}},
    {MODE_COMPARE, "fail-over", {"10", "x%", ""}},
    {MODE_COMPARE, "metric", {"nope", ""}},
    {MODE_COMPARE, "inconclusive", {"maybe"}},
    {MODE_COMPARE, "junit", {""}},
    {MODE_COMPARE, "markdown", {""}},
    {MODE_COMPARE, "html", {""}},
    {MODE_COMPARE, "flame-diff", {""}},
    {MODE_COMPARE, "color", {"sometimes"}},
    {MODE_COMPARE, "colour", {"sometimes"}},
    {MODE_REPORT, "format", {"svg2", "", "TABLE"}},
    {MODE_REPORT, "view", {"off-cpu", "", "WALL"}},
    {MODE_REPORT, "sort", {"nope", ""}},
    {MODE_REPORT, "top", {"0", "abc", ""}},
    {MODE_REPORT, "color", {"sometimes"}},
    {MODE_REPORT, "colour", {"sometimes"}},
};

static int parse_in_mode(enum tsarun_mode mode, struct tsarun_opts *o, char *err, const char *opt,
			 const char *val)
{
	switch (mode) {
	case MODE_COMPARE:
		return PARSE(o, err, "compare", "base.json", "new.json", opt, val);
	case MODE_REPORT:
		return PARSE(o, err, "report", "run.json", opt, val);
	default:
		return PARSE(o, err, opt, val, "--", "true");
	}
}

static void test_every_option_refuses_malformed_values(void **state)
{
	static const enum tsarun_mode modes[] = {MODE_RUN, MODE_COMPARE, MODE_REPORT};
	const size_t nrows = sizeof(malformed) / sizeof(malformed[0]);
	struct tsarun_opts o;
	char err[256], opt[64], quoted[80];
	int checked = 0;

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		const struct option *t = options_long_table(modes[m]);

		assert_non_null(t);
		for (; t->name; t++) {
			size_t row;

			if (t->has_arg == no_argument)
				continue;
			for (row = 0; row < nrows; row++)
				if (malformed[row].mode == modes[m] &&
				    !strcmp(malformed[row].name, t->name))
					break;
			if (row == nrows)
				fail_msg(
				    "option --%s (mode %d) takes a value but has no row in "
				    "malformed[] (tests/unit/test_options.c): add its malformed "
				    "values",
				    t->name, (int)modes[m]);
			snprintf(opt, sizeof(opt), "--%s", t->name);
			for (const char *const *v = malformed[row].bad; *v; v++) {
				if (parse_in_mode(modes[m], &o, err, opt, *v) != -EINVAL)
					fail_msg("%s '%s' was accepted", opt, *v);
				/* --colour is reported as --color; the message names it either way. */
				if (!strstr(err, opt) &&
				    !(strcmp(t->name, "colour") == 0 && strstr(err, "--color")))
					fail_msg(
					    "%s '%s': the message '%s' does not name the option",
					    opt, *v, err);
				snprintf(quoted, sizeof(quoted), "'%s'", *v);
				if (**v && !strstr(err, quoted))
					fail_msg(
					    "%s '%s': the message '%s' does not name the value",
					    opt, *v, err);
				checked++;
			}
		}
	}
	/* Rows for options that no longer exist are stale: remove them. */
	for (size_t row = 0; row < nrows; row++) {
		const struct option *t = options_long_table(malformed[row].mode);

		while (t->name && strcmp(t->name, malformed[row].name))
			t++;
		if (!t->name)
			fail_msg("malformed[] has a row for --%s, which mode %d does not have",
				 malformed[row].name, (int)malformed[row].mode);
	}
	/* ... and every value of every row was tried. */
	for (size_t row = 0; row < nrows; row++)
		for (const char *const *v = malformed[row].bad; *v; v++)
			checked--;
	assert_int_equal(checked, 0);
}

static void test_errors(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "--bogus", "true"), -EINVAL);
	assert_non_null(strstr(err, "unknown option '--bogus'"));
	assert_int_equal(PARSE(&o, err, "-Z", "true"), -EINVAL);
	assert_non_null(strstr(err, "'-Z'"));
	assert_int_equal(PARSE(&o, err, "--json"), -EINVAL);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(PARSE(&o, err, "-q"), -EINVAL);
	assert_non_null(strstr(err, "no command given"));
	assert_int_equal(PARSE(&o, err, "--"), -EINVAL);
}

static void test_help_version_doctor(void **state)
{
	struct tsarun_opts o;
	char err[256];

	assert_int_equal(PARSE(&o, err, "--help"), 0);
	assert_int_equal(o.mode, MODE_HELP);
	assert_int_equal(PARSE(&o, err, "-V"), 0);
	assert_int_equal(o.mode, MODE_VERSION);
	assert_int_equal(PARSE(&o, err, "doctor"), 0);
	assert_int_equal(o.mode, MODE_DOCTOR);
	assert_false(o.doctor_json);
	assert_int_equal(PARSE(&o, err, "doctor", "--json"), 0);
	assert_true(o.doctor_json);
	assert_int_equal(PARSE(&o, err, "doctor", "--xml"), -EINVAL);
	/* A command called doctor runs after --. */
	assert_int_equal(PARSE(&o, err, "--", "doctor"), 0);
	assert_int_equal(o.mode, MODE_RUN);
	assert_string_equal(o.argv[0], "doctor");
	assert_non_null(strstr(options_usage(), "Exit status"));
}

static void test_durations(void **state)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} good[] = {
	    {"1ns", 1},		  {"250us", 250000},	   {"10ms", 10000000},
	    {"1.5s", 1500000000}, {"2m", 120000000000ull}, {"1h", 3600000000000ull},
	    {"0ms", 0},		  {".5s", 500000000},	   {"3sec", 3000000000ull},
	};
	static const char *const bad[] = {"",	    "ms",     "10",    "-1s",
					  "1e3ms",  "0x10ms", "10 ms", "10parsecs",
					  "1.2.3s", "nan",    "inf",   "99999999999h"};
	uint64_t v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(parse_duration_ns(good[i].s, false, &v), 0);
		assert_int_equal(v, good[i].ns);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse_duration_ns(bad[i], false, &v) != -EINVAL)
			fail_msg("duration '%s' was accepted", bad[i]);
	assert_int_equal(parse_duration_ns("2", true, &v), 0);
	assert_int_equal(v, 2000000000ull);
}

static void test_sizes(void **state)
{
	uint64_t v;

	assert_int_equal(parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("64K", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(parse_size("4M", &v), 0);
	assert_int_equal(v, 4u << 20);
	assert_int_equal(parse_size("1G", &v), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(parse_size("1.5K", &v), 0);
	assert_int_equal(v, 1536);
	assert_int_equal(parse_size("0.3", &v), -EINVAL);
	assert_int_equal(parse_size("4T", &v), -EINVAL);
	assert_int_equal(parse_size("-4K", &v), -EINVAL);
	assert_int_equal(parse_uint("18446744073709551616", 0, UINT64_MAX, &v), -EINVAL);
	assert_int_equal(parse_uint(" 5", 0, 10, &v), -EINVAL);
}

/* Each module's part of the options (options_for_*()): the fields as parsed. */
static void test_module_parts(void **state)
{
	struct outputs_opts out;
	struct probeset_opts ps;
	struct confine_opts c;
	struct tsarun_opts o;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&o, err, "--json", "a.json", "--out-dir", "d", "--report", "r.txt",
			       "--interval", "1s", "--stream", "s.jsonl", "--junit", "j.xml",
			       "--markdown", "m.md", "--html", "h.html", "--export-csv", "c.csv",
			       "--export-runs-csv", "rc.csv", "--export-hyperfine", "hf.json",
			       "--baseline", "b.json", "--flame", "--timeline", "--wide", "--color",
			       "never", "--top", "5", "--sort", "cpu", "--no-sandbox", "--backend",
			       "ebpf,proc", "--sample", "20ms", "--no-delayacct", "--ringbuf", "8M",
			       "--offcpu-min", "1ms", "--waker", "--freq", "49", "-v", "--", "ls"),
			 0);
	out = options_for_outputs(&o);
	assert_string_equal(out.json_path, "a.json");
	assert_string_equal(out.out_dir, "d");
	assert_string_equal(out.report_path, "r.txt");
	assert_string_equal(out.stream_path, "s.jsonl");
	assert_string_equal(out.junit_path, "j.xml");
	assert_string_equal(out.markdown_path, "m.md");
	assert_string_equal(out.html_path, "h.html");
	assert_string_equal(out.export_csv_path, "c.csv");
	assert_string_equal(out.export_runs_csv_path, "rc.csv");
	assert_string_equal(out.export_hyperfine_path, "hf.json");
	assert_string_equal(out.baseline_path, "b.json");
	assert_null(out.flame_diff_dir);
	assert_true(out.interval && out.flame && out.timeline && out.gate && out.wide);
	assert_false(out.bash || out.no_table || out.quiet);
	assert_int_equal(out.color, COLOR_NEVER);
	assert_int_equal(out.sort, SORT_CPU);
	assert_int_equal(out.top, 5);
	assert_int_equal(out.bash_top, -1);
	assert_string_equal(out.script, "ls");
	ps = options_for_probeset(&o);
	assert_int_equal(ps.backends, BACKEND_EBPF | BACKEND_PROC);
	assert_int_equal(ps.ringbuf_bytes, 8u << 20);
	assert_int_equal(ps.sample_ns, 20000000u);
	assert_true(ps.sample_given && ps.no_delayacct && ps.waker && ps.flame && ps.timeline);
	assert_true(ps.stacks); /* --flame is off-CPU stacks too */
	assert_int_equal(ps.offcpu_min_ns, 1000000u);
	assert_int_equal(ps.freq, 49);
	assert_int_equal(ps.timeline_bytes, o.timeline_bytes);
	assert_int_equal(ps.timeline_max, o.timeline_max);
	assert_true(ps.interval && ps.no_sandbox && ps.wide);
	assert_false(ps.quiet);
	assert_int_equal(ps.verbose, 1);
	c = options_for_confine(&o);
	assert_true(c.stacks && c.timeline && c.no_sandbox && c.wide);
	assert_int_equal(c.verbose, 1);

	/* The bash report's script: SCRIPT, and none for -c's commands. */
	assert_int_equal(PARSE(&o, err, "--bash", "deploy.sh", "prod"), 0);
	out = options_for_outputs(&o);
	assert_true(out.bash);
	assert_string_equal(out.script, "deploy.sh");
	assert_int_equal(PARSE(&o, err, "--bash", "-c", "echo hi"), 0);
	assert_null(options_for_outputs(&o).script);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_command_after_dashdash),
	    cmocka_unit_test(test_command_without_dashdash_stops_at_first_word),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_bash),
	    cmocka_unit_test(test_values),
	    cmocka_unit_test(test_runs),
	    cmocka_unit_test(test_gate_options),
	    cmocka_unit_test(test_compare),
	    cmocka_unit_test(test_quiet_implies_no_table),
	    cmocka_unit_test(test_bad_values_are_named),
	    cmocka_unit_test(test_every_option_refuses_malformed_values),
	    cmocka_unit_test(test_quiet_and_verbose),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_help_version_doctor),
	    cmocka_unit_test(test_durations),
	    cmocka_unit_test(test_backend_and_sample),
	    cmocka_unit_test(test_monitor),
	    cmocka_unit_test(test_sizes),
	    cmocka_unit_test(test_module_parts),
	};

	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
