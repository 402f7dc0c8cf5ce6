// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "fixtures.h"
#include "gate.h"
#include "gate_report.h"
#include "metrics.h"
#include "report_text.h"
#include "run.h"

/* n runs: cpu = cpu_ms[i] * scale, wall = 1.1 x that, runqueue runq_ms. */
static struct run *runs_of(const double *cpu_ms, size_t n, double scale, double runq_ms)
{
	struct run *r = calloc(n, sizeof(*r));

	for (size_t i = 0; i < n; i++) {
		r[i].status = RUN_EXITED;
		r[i].ru.user_ns = (uint64_t)(cpu_ms[i] * scale * MS);
		r[i].wall_ns = (uint64_t)(cpu_ms[i] * scale * MS * 1.1);
		r[i].ru.max_rss_kb = 4096;
		run__source(&r[i], "ebpf", true, NULL);
		r[i].totals.state_ns[TSA_ST_RUNQ] = (uint64_t)(runq_ms * MS);
	}
	return r;
}

static const double base10[] = {100, 101, 99, 100.5, 99.5, 100, 100.2, 99.8, 100.1, 99.9};

/*
 * A comparison with a bit of everything: cpu 25% slower (fails), wall 25%
 * slower on a busier machine (a warning by the noise sentinel), max_rss
 * unchanged (passes), a baseline name that needs escaping.
 */
static void make(struct comparison *c, const char *spec, double scale, double runq)
{
	struct gate_spec g;
	struct gate_side b, n;
	struct run *rb = runs_of(base10, 10, 1, 1), *rn = runs_of(base10, 10, scale, runq);
	char err[256];

	gate_spec_defaults(&g);
	assert_int_equal(gate_parse_fail_over(&g, spec, err, sizeof(err)), 0);
	gate_spec_finish(&g, false);
	assert_int_equal(gate_side_init(&b, rb, 10, NULL), 0);
	assert_int_equal(gate_side_init(&n, rn, 10, NULL), 0);
	memset(c, 0, sizeof(*c));
	c->baseline_kind = "artifact";
	c->baseline_name = "base|line`s <&>.json";
	assert_int_equal(gate_compare(&g, &b, &n, false, c), 0);
	/* The caller's: when and where (2026-12-02T05:00:00, a name to escape). */
	c->judged_at = 1796187600;
	snprintf(c->hostname, sizeof(c->hostname), "ci-1 <&>");
	gate_side_free(&b);
	gate_side_free(&n);
	free(rb);
	free(rn);
}

static char *render(void (*fn)(FILE *, const struct comparison *, const char *),
		    const struct comparison *c, const char *command)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	fn(f, c, command);
	fclose(f);
	return text;
}

static void annotations(FILE *f, const struct comparison *c, const char *command)
{
	gate_report_annotations(f, c, command);
}

static void text_table(FILE *f, const struct comparison *c, const char *command)
{
	gate_report_comparison(f, c, command, false, 0);
}

static void test_golden(void **state)
{
	static const struct {
		const char *golden;
		void (*fn)(FILE *, const struct comparison *, const char *);
	} outputs[] = {
	    {"gate-table.txt", text_table},
	    {"gate-summary.md", gate_report_markdown},
	    {"gate-junit.xml", gate_report_junit},
	    {"gate-annotations.txt", annotations},
	};
	struct comparison c;

	make(&c, "cpu=10%,wall=10%,max_rss=5%", 1.25, 40);
	assert_int_equal(c.outcome, GATE_FAIL);
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		char *text = render(outputs[i].fn, &c, "./bench --n=100,000");

		assert_int_equal(golden_check(outputs[i].golden, text), 0);
		free(text);
	}
	comparison__free(&c);
}

/* Workflow commands: one line each, %, CR, LF escaped; ':' and ',' in properties too. */
static void test_annotation_escaping(void **state)
{
	struct comparison c;
	char *text, *line, *save = NULL;
	int lines = 0;

	make(&c, "cpu=10%", 1.25, 1);
	text = render(annotations, &c, "./bench\nsecond line\r, 100%: done");
	assert_non_null(strstr(text, "./bench%0Asecond line%0D, 100%25: done"));
	assert_non_null(strstr(text, "::error title=tsarun gate%3A cpu regression::"));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		assert_true(!strncmp(line, "::error ", 8) || !strncmp(line, "::warning ", 10) ||
			    !strncmp(line, "::notice ", 9));
		lines++;
	}
	assert_int_equal(lines, 1); /* one failing metric, no other note */
	free(text);
	comparison__free(&c);

	/* A pass says nothing: no annotation at all. */
	make(&c, "cpu=10%", 1.0, 1);
	text = render(annotations, &c, "./bench");
	assert_string_equal(text, "");
	free(text);
	comparison__free(&c);
}

/* Markdown: the table stays a table whatever the names contain. */
static void test_markdown_escaping(void **state)
{
	struct comparison c;
	char *text;

	make(&c, "cpu=10%", 1.0, 1);
	text = render(gate_report_markdown, &c, "sh -c 'a | b` `c'");
	/* A code span fenced by more backticks than any run inside. */
	assert_non_null(strstr(text, "`` sh -c 'a | b` `c' ``"));
	assert_non_null(strstr(text, "`` base|line`s <&>.json ``"));
	assert_non_null(strstr(text, "| cpu | 100.00 ms | 100.00 ms | 10 / 10 |"));
	free(text);
	comparison__free(&c);
}

/*
 * tsarun report --format markdown names the command as the table does (and
 * as the run's own step summary did): for --bash the script, not "bash".
 */
static void test_session_markdown_command(void **state)
{
	char *argv[] = {"bash", "-c", "make test", NULL};
	struct session s = {.tool_version = "tsarun 0", .argv = argv, .argc = 3, .mode = "bash"};
	struct comparison c;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	make(&c, "cpu=10%", 1.0, 1);
	s.runs = runs_of(base10, 5, 1, 1);
	s.nruns = 5;
	s.cmp = &c;
	f = open_memstream(&text, &len);
	gate_report_session_markdown(f, &s, 5, SORT_WALL);
	fclose(f);
	assert_non_null(strstr(text, "### tsarun: ` make test `: exit 0"));
	assert_non_null(strstr(text, "` make test ` against the baseline "));
	assert_null(strstr(text, "` bash `"));
	free(text);
	free(s.runs);
	comparison__free(&c);
}

/*
 * The report a run prints and the one `tsarun report` prints of its
 * artifact are one composition: table, runs, verdict, in that order; a
 * stored --bash session (whose tree is not read back) adds where its
 * profile is, and nothing else differs.
 */
static void test_report_text_live_and_stored(void **state)
{
	char *argv[] = {"bash", "-c", "make test", NULL};
	struct session s = {.tool_version = "tsarun 0", .argv = argv, .argc = 3, .mode = "bash"};
	struct report_text_opts ro = {.table = {.sort = SORT_WALL, .top = 20}};
	struct comparison c;
	char *text[2] = {NULL, NULL}, *note, *table, *runs, *verdict;
	size_t len;

	(void)state;
	make(&c, "cpu=10%", 1.0, 1);
	s.runs = runs_of(base10, 5, 1, 1);
	s.nruns = 5;
	s.cmp = &c;
	for (int stored = 0; stored < 2; stored++) {
		FILE *f = open_memstream(&text[stored], &len);

		ro.stored = stored;
		assert_int_equal(report_text_print(f, &s, &ro), 0);
		fclose(f);
	}
	table = strstr(text[1], "tsarun: make test: exit 0\n");
	runs = strstr(text[1], "5 measured runs");
	verdict = strstr(text[1], "\nregression gate: make test against");
	note = strstr(text[1], "\n  the bash profile is in the artifact's \"bash\" key");
	assert_true(table && runs && verdict && note);
	assert_true(table < runs && runs < verdict && verdict < note);
	assert_null(strstr(text[0], "the bash profile is in the artifact"));
	/* the live report is the stored one less the note */
	assert_int_equal(strlen(text[0]), (size_t)(note - text[1]));
	assert_memory_equal(text[0], text[1], strlen(text[0]));
	free(text[0]);
	free(text[1]);
	free(s.runs);
	comparison__free(&c);
}

/* A row of figures in one unit, its reference's: never 1.677 s beside 133.17 ms. */
static void test_one_unit_a_row(void **state)
{
	char b[32];

	assert_string_equal(gate_fmt_value_as(METRIC_WALL, 133.17e6, 1.677e9, b, sizeof(b)),
			    "0.133 s");
	assert_string_equal(gate_fmt_value_as(METRIC_WALL, 2.5e9, 999e6, b, sizeof(b)),
			    "2500.00 ms");
	assert_string_equal(gate_fmt_value_as(METRIC_MAX_RSS, 900, 5.3 * 1024, b, sizeof(b)),
			    "0.9 MiB");
	/* Counts have no unit to share. */
	assert_string_equal(gate_fmt_value_as(METRIC_VOLUNTARY, 791, 5, b, sizeof(b)), "791");
}

/* JUnit: one test case per gated metric, a failure element only on failure. */
static void test_junit_structure(void **state)
{
	struct comparison c;
	char *text;

	make(&c, "cpu=10%,max_rss=5%", 1.25, 1);
	text = render(gate_report_junit, &c, "a<b & \"c\"");
	assert_non_null(strstr(text, "tests=\"2\" failures=\"1\""));
	assert_non_null(
	    strstr(text, "name=\"tsarun regression gate: a&lt;b &amp; &quot;c&quot;\""));
	/* Each case took the runs' time (seconds: ten runs of the fixture's wall). */
	assert_non_null(strstr(text, "<testcase classname=\"tsarun.gate\" name=\"cpu\" time=\""));
	assert_non_null(strstr(text, "\">\n      <failure type=\"regression\""));
	assert_non_null(strstr(text, "name=\"max_rss\" time=\""));
	assert_non_null(strstr(text, "\"></testcase>"));
	assert_non_null(
	    strstr(text, " timestamp=\"2026-12-02T05:00:00\" hostname=\"ci-1 &lt;&amp;&gt;\""));
	assert_null(strstr(text, "base|line`s <&>"));
	free(text);
	comparison__free(&c);
}

/* Is every byte of s well-formed UTF-8, with no control but LF (and none of "##[")? */
static void assert_safe_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	assert_null(strstr(s, "##["));
	while (*p) {
		size_t n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : 4;

		if (*p < 0x20 && *p != '\n')
			fail_msg("control 0x%02x in %s", *p, s);
		if (*p == 0x7f || (*p < 0xc2 && *p >= 0x80) || *p > 0xf4)
			fail_msg("byte 0x%02x in %s", *p, s);
		if (*p == 0xc2 && p[1] < 0xa0)
			fail_msg("C1 control in %s", s);
		for (size_t k = 1; k < n; k++)
			if ((p[k] & 0xc0) != 0x80)
				fail_msg("bad UTF-8 in %s", s);
		if (*p == 0xed && p[1] >= 0xa0)
			fail_msg("a surrogate in %s", s);
		p += n;
	}
}

/*
 * The command, the baseline's name and the notes are outside text: on the
 * terminal, in annotations, Markdown and JUnit they are shown escaped and
 * start no workflow command of their own.
 */
static void test_hostile_text(void **state)
{
	static const char cmd[] = "./b\033]0;T\007\x9b\xed\xa0\x80 ##[error]x\n::error::y";
	static const struct {
		void (*fn)(FILE *, const struct comparison *, const char *);
		const char *shown;
	} outputs[] = {
	    {text_table, "./b\\x1b]0;T\\x07\\x9b\\xed\\xa0\\x80 ##\\x5berror]x\\n::error::y"},
	    {annotations, "./b\\x1b]0;T\\x07\\x9b\\xed\\xa0\\x80 ##\\x5berror]x%0A::error::y"},
	    {gate_report_markdown,
	     "./b\\x1b\\]0;T\\x07\\x9b\\xed\\xa0\\x80 \\#\\#\\[error\\]x\\n::error::y"},
	    {gate_report_junit,
	     "./b\\x1b]0;T\\x07\\x9b\\xed\\xa0\\x80 ##&#91;error]x&#10;::error::y"},
	};
	struct comparison c;

	make(&c, "cpu=10%", 1.25, 1);
	c.baseline_name = "::warning::\033[31mbase\xff.json";
	snprintf(c.notes[c.nnotes], GATE_NOTE_LEN, "%s", "note \033]8;;http://x\007link");
	c.note_metric[c.nnotes++] = -1;
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		char *text = render(outputs[i].fn, &c, cmd), *line, *save = NULL;

		assert_safe_text(text);
		if (!strstr(text, outputs[i].shown))
			fail_msg("%s not in %s", outputs[i].shown, text);
		/* Only tsarun's own annotations open a line with "::". */
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			while (*line == ' ')
				line++;
			if (!strncmp(line, "::", 2))
				assert_true(!strncmp(line, "::error title=tsarun gate", 25) ||
					    !strncmp(line, "::warning title=tsarun gate", 27));
		}
		free(text);
	}
	comparison__free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden),
	    cmocka_unit_test(test_hostile_text),
	    cmocka_unit_test(test_annotation_escaping),
	    cmocka_unit_test(test_markdown_escaping),
	    cmocka_unit_test(test_junit_structure),
	    cmocka_unit_test(test_one_unit_a_row),
	    cmocka_unit_test(test_session_markdown_command),
	    cmocka_unit_test(test_report_text_live_and_stored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
