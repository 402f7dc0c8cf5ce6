// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "unit.h"

#include "fixtures.h"
#include "account.h"
#include "run.h"
#include "status.h"
#include "table.h"

static char *render(struct run *r, const struct table_opts *o)
{
	char *text = calloc(1, 1 << 20);
	FILE *f = fmemopen(text, (1 << 20) - 1, "w");

	assert_non_null(f);
	table_print(f, r, o);
	fclose(f);
	return text;
}

static void make_run(struct run *r, struct tsa_thread *t, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->start_mono_ns = T0;
	r->wall_ns = 500 * MS;
	r->ru.user_ns = 650 * MS;
	r->ru.sys_ns = 40 * MS;
	r->ru.max_rss_kb = 20480;
	r->ru.minflt = 1000;
	r->ru.nvcsw = 50;
	r->ru.nivcsw = 7;
	run__source(r, "ebpf", true, NULL);
	run__source(r, "rusage", true, NULL);
	status_from_wait(r, 0);
	assert_int_equal(fold_run(r, t, n), 0);
}

static void test_golden_small(void **state)
{
	struct tsa_thread t[3] = {
	    fx_thread(100, 100, 99, "bench", 0, 500, 300, 20, 170, 10),
	    fx_thread(101, 100, 99, "worker", 1, 400, 350, 40, 9, 0),
	    fx_thread(200, 200, 100, "helper", 10, 50, 5, 1, 34, 0),
	};
	struct table_opts o = {
	    .sort = SORT_WALL, .top = 20, .command = "./bench", .artifact = "tsarun.json"};
	struct run r;
	char *text;

	make_run(&r, t, 3);
	text = render(&r, &o);
	assert_int_equal(golden_check("table-small.txt", text), 0);
	free(text);
	run__free_detail(&r);
}

static void test_many_threads_fold(void **state)
{
	enum { N = 3000 };
	struct tsa_thread *t = calloc(N, sizeof(*t));
	struct table_opts o = {
	    .sort = SORT_CPU, .top = 10, .command = "./many", .artifact = "out.json"};
	struct run r;
	char *text, *p;
	int rows = 0;

	t[0] = fx_thread(1000, 1000, 1, "main", 0, 1000, 10, 0, 990, 0);
	for (int i = 1; i < N; i++)
		t[i] = fx_thread(1000 + (uint32_t)i, 1000, 1, "w", i * 0.1, i * 0.1 + 5, 1 + i % 7,
				 0, 4 - (i % 7 > 4 ? 4 : i % 7), 0);
	make_run(&r, t, N);
	text = render(&r, &o);
	/* Ten thread rows, then one line for the other 2990, pointing at the artifact. */
	assert_non_null(strstr(text, "2990 more threads"));
	assert_non_null(strstr(text, "out.json"));
	for (p = text; (p = strstr(p, "\n           ")); p++)
		rows++;
	assert_true(rows <= 14);
	/* The heaviest threads come first under --sort cpu: 7 ms (i % 7 == 6). */
	p = strstr(text, "avg/max");
	assert_non_null(p);
	p = strchr(p, '\n') + 1;	     /* process row */
	p = strchr(p, '\n') + 1;	     /* first thread row */
	assert_non_null(strstr(p, "10.00")); /* main has the most CPU: 10 ms */
	free(text);
	free(t);
	run__free_detail(&r);
}

static void test_color_only_when_asked(void **state)
{
	struct tsa_thread t = fx_thread(100, 100, 99, "bench", 0, 500, 300, 20, 170, 10);
	struct table_opts o = {.top = 20, .command = "x"};
	struct run r;
	char *text;

	make_run(&r, &t, 1);
	text = render(&r, &o);
	assert_null(strchr(text, '\033'));
	free(text);
	o.color = true;
	text = render(&r, &o);
	assert_non_null(strchr(text, '\033'));
	free(text);
	run__free_detail(&r);
}

static void test_formats(void **state)
{
	char b[32];

	assert_string_equal(fmt_ms(0, b, sizeof(b)), "0");
	assert_string_equal(fmt_ms(123456, b, sizeof(b)), "0.123");
	assert_string_equal(fmt_ms(12345678, b, sizeof(b)), "12.35");
	assert_string_equal(fmt_ms(1234567890, b, sizeof(b)), "1234.6");
	assert_string_equal(fmt_dur(1500, b, sizeof(b)), "2 us");
	assert_string_equal(fmt_dur(999, b, sizeof(b)), "999 ns");
	assert_string_equal(fmt_dur(12300000, b, sizeof(b)), "12.3 ms");
	assert_string_equal(fmt_dur(2500000000ull, b, sizeof(b)), "2.500 s");
	assert_string_equal(fmt_dur(0, b, sizeof(b)), "0"); /* nothing, in no unit */
}

/* The widest line of text, in columns (a character of UTF-8 is one). */
static size_t widest(const char *text)
{
	size_t best = 0, cols = 0;

	for (const char *p = text; *p; p++) {
		if (*p == '\n') {
			best = cols > best ? cols : best;
			cols = 0;
		} else if ((*p & 0xc0) != 0x80) {
			cols++;
		}
	}
	return cols > best ? cols : best;
}

/*
 * A terminal of 80, 120 or 200 columns: every line fits (the notes and the
 * quality line wrapped at word boundaries, continued two columns deeper);
 * at 80 the table merges PID and TID and leaves out what matters least,
 * and says so; at 200 and with no width (a file) it has every column.
 */
static void test_terminal_width(void **state)
{
	struct tsa_thread t[3] = {
	    fx_thread(100, 100, 99, "bench", 0, 500, 300, 20, 170, 10),
	    fx_thread(101, 100, 99, "worker", 1, 400, 350, 40, 9, 0),
	    fx_thread(200, 200, 100, "helper", 10, 50, 5, 1, 34, 0),
	};
	struct table_opts o = {
	    .sort = SORT_WALL, .top = 20, .command = "./bench", .artifact = "tsarun.json"};
	static const size_t widths[] = {80, 120, 200};
	struct run r;
	char *text, *full;

	make_run(&r, t, 3);
	run__note(&r, "%s",
		  "a note long enough that it cannot fit on one line of eighty columns, "
		  "so that it has to be wrapped at a word boundary somewhere");
	full = render(&r, &o);
	assert_true(widest(full) > 120); /* the quality line and the note, unwrapped */
	assert_non_null(strstr(full, "SWITCHES"));
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		o.width = widths[i];
		text = render(&r, &o);
		assert_true(widest(text) <= widths[i]);
		/* The same words, only the line breaks differ. */
		assert_non_null(strstr(text, "  note: a note long enough"));
		if (widths[i] == 80) {
			assert_non_null(strstr(text, "PID/TID"));
			assert_null(strstr(text, "SWITCHES  "));
			assert_non_null(strstr(text, "(left out for 80 columns: SWITCHES"));
			assert_non_null(strstr(text, "see --wide)"));
			/* The word the line broke before starts the next, indented 4. */
			assert_non_null(strstr(text, "\n    "));
			assert_int_equal(golden_check("table-80.txt", text), 0);
		} else {
			assert_non_null(strstr(text, "SWITCHES"));
			assert_null(strstr(text, "left out for"));
			assert_non_null(strstr(text, "    PID     TID  COMM"));
		}
		if (widths[i] == 200)
			assert_string_equal(text, full);
		free(text);
	}
	free(full);
	run__free_detail(&r);
}

/* One unit per column, in the header; three decimals; 0 for nothing. */
static void test_units(void **state)
{
	struct tsa_thread t[2] = {
	    fx_thread(100, 100, 99, "bench", 0, 500, 300, 20, 170, 10),
	    fx_thread(200, 200, 100, "idle", 10, 60, 0, 0, 50, 0),
	};
	struct table_opts o = {.sort = SORT_WALL, .top = 20, .command = "./bench"};
	struct run r;
	char *text, *p;

	make_run(&r, t, 2);
	text = render(&r, &o);
	/* The unit line under the names: ms under each of the six times. */
	p = strstr(text, "avg/max us");
	assert_non_null(p);
	while (p > text && p[-1] != '\n')
		p--;
	{
		int ms = 0;

		for (const char *q = p; (q = strstr(q, " ms")) && q < strstr(p, "avg/max"); q++)
			ms++;
		assert_int_equal(ms, 6);
	}
	assert_non_null(strstr(text, "500.000"));
	assert_null(strstr(text, " 0.0 "));
	assert_null(strstr(text, " 0.000 "));
	assert_null(strstr(text, " ns"));
	/* idle: no CPU, no runqueue, no D: "0", not 0.000. */
	p = strstr(text, "idle");
	assert_non_null(p);

	assert_non_null(strstr(p, "  50.000        0       0    50.000       0      0"));
	free(text);
	run__free_detail(&r);
}

static void test_not_started(void **state)
{
	struct table_opts o = {.top = 20, .command = "nope"};
	struct run r;
	char *text;

	memset(&r, 0, sizeof(r));
	r.status = RUN_NOT_STARTED;
	status_from_wait(&r, 127 << 8);
	text = render(&r, &o);
	assert_non_null(strstr(text, "not started (exit 127)"));
	free(text);
}

/* The quality notes count in English: one switch-in, two switch-ins. */
static void test_untraced_note(void **state)
{
	struct tsa_thread t[1] = {fx_thread(100, 100, 99, "bench", 0, 500, 300, 20, 170, 10)};
	struct table_opts o = {.sort = SORT_WALL, .top = 20, .command = "./bench"};
	struct run r;
	char *text;

	make_run(&r, t, 1);
	r.quality.untraced_switch_ins = 1;
	text = render(&r, &o);
	assert_non_null(strstr(text, "note: 1 switch-in had no scheduler event; it was timed"));
	free(text);
	r.quality.untraced_switch_ins = 2;
	text = render(&r, &o);
	assert_non_null(strstr(text, "note: 2 switch-ins had no scheduler event; each was timed"));
	free(text);
	run__free_detail(&r);
}

/* Each kind of throttling has its own note, and only when there was some. */
static void test_throttling_notes(void **state)
{
	struct tsa_thread t[1] = {fx_thread(100, 100, 99, "bench", 0, 500, 300, 20, 170, 10)};
	struct table_opts o = {.sort = SORT_WALL, .top = 20, .command = "./bench"};
	struct run r;
	char *text;

	t[0].rt_throttled_ns = 15 * MS;
	make_run(&r, t, 1);
	text = render(&r, &o);
	assert_non_null(strstr(text,
			       "note: 15.0 ms of RUNQ was real-time throttling: "
			       "SCHED_FIFO/SCHED_RR threads were held off by the RT bandwidth "
			       "limit"));
	assert_null(strstr(text, "of RUNQ was throttling"));
	free(text);
	run__free_detail(&r);
}

/*
 * A thread that exec'd from a non-main thread took the main one's tid: its
 * row is marked and the note says which tid it had; past three, the note
 * counts the rest.
 */
static void test_exec_renamed(void **state)
{
	struct tsa_thread t[7] = {
	    fx_thread(100, 100, 99, "bench", 0, 200, 10, 1, 189, 0),
	    fx_thread(100, 100, 99, "bench", 5, 500, 300, 20, 170, 5),
	    fx_thread(300, 300, 100, "w", 10, 50, 5, 1, 34, 0),
	    fx_thread(400, 400, 100, "w", 10, 50, 5, 1, 34, 0),
	    fx_thread(500, 500, 100, "w", 10, 50, 5, 1, 34, 0),
	    fx_thread(600, 600, 100, "w", 10, 50, 5, 1, 34, 0),
	    fx_thread(700, 700, 100, "w", 10, 50, 5, 1, 34, 0),
	};
	struct table_opts o = {.sort = SORT_WALL, .top = 20, .command = "./bench"};
	struct run r;
	char *text;

	t[1].tid_before_exec = 101;
	make_run(&r, t, 2);
	text = render(&r, &o);
	/* The process row, the exec'd thread (marked, the longest first), the old leader. */
	assert_non_null(strstr(text, "\n           100*  bench "));
	assert_non_null(strstr(text, "\n            100  bench "));
	assert_non_null(strstr(text, "note: * 1 thread called exec from a thread other than the "
				     "main one and took the main thread's tid and start time (101 "
				     "became 100, bench): its row, under the new tid, covers its "
				     "whole life"));
	free(text);
	run__free_detail(&r);

	for (int i = 2; i < 7; i++)
		t[i].tid_before_exec = t[i].tid + 1;
	make_run(&r, t, 7);
	text = render(&r, &o);
	assert_non_null(strstr(text, "\n    300    300*  w "));
	assert_non_null(strstr(text, "note: * 6 threads called exec"));
	assert_non_null(strstr(text, "; 3 more in the artifact's tid_before_exec): their rows"));
	free(text);
	run__free_detail(&r);
}

/* Display columns of s up to p: a CJK character (lead E3-E9) is two, other characters one. */
static size_t cols_to(const char *s, const char *p)
{
	size_t c = 0;

	for (const unsigned char *q = (const unsigned char *)s; q < (const unsigned char *)p; q++)
		if ((*q & 0xc0) != 0x80)
			c += *q >= 0xe3 && *q <= 0xe9 ? 2 : 1;
	return c;
}

/* The column where the first figure after needle ends, on the line holding needle. */
static size_t figure_col(const char *text, const char *needle)
{
	const char *at = strstr(text, needle), *line, *p;

	assert_non_null(at);
	for (line = at; line > text && line[-1] != '\n'; line--)
		;
	for (p = at + strlen(needle); *p == ' '; p++)
		;
	while (*p && *p != ' ' && *p != '\n')
		p++; /* figures are right-aligned: where it ends */
	return cols_to(line, p);
}

/*
 * Names are the command's text: escape sequences, an 8-bit CSI, bad UTF-8
 * and a workflow command are shown escaped, never sent, and the columns
 * stay aligned by display width (escapes and wide characters alike).
 */
static void test_hostile_names(void **state)
{
	struct tsa_thread t[3] = {
	    fx_thread(100, 100, 99, "x", 0, 500, 300, 20, 170, 10),
	    fx_thread(101, 100, 99, "x", 1, 400, 350, 40, 9, 0),
	    fx_thread(200, 200, 100, "plain", 10, 50, 5, 1, 34, 0),
	};
	struct table_opts o = {.sort = SORT_WALL,
			       .top = 20,
			       .command = "./x\n::error::y\033[2J",
			       .artifact = "a\033]0;T\007.json"};
	struct run r;
	char *text;

	memcpy(t[0].comm, "\033]0;T\007\x9b\xff", 9);
	memcpy(t[1].comm,
	       "\xe6\x97\xa5\xe6\x9c\xac"
	       "ab",
	       9);
	make_run(&r, t, 3);
	run__note(&r, "%s", "::warning::\033[31m");
	text = render(&r, &o);
	assert_null(strchr(text, '\033'));
	assert_null(strchr(text, '\007'));
	assert_null(strchr(text, '\x9b'));
	assert_null(strchr(text, '\xff'));
	assert_non_null(strstr(text, "tsarun: ./x\\n::error::y\\x1b[2J: exit 0\n"));
	assert_non_null(strstr(text, "  note: \\x3a:warning::\\x1b[31m\n"));
	assert_non_null(strstr(text, "  artifact: a\\x1b]0;T\\x07.json\n"));
	/* 16 columns: "\x1b]0;T\x07\x9b" fills the cell, "\xff" is cut. */
	assert_non_null(strstr(text, "  \\x1b]0;T\\x07\\x9b "));
	assert_null(strstr(text, "\\xff"));
	assert_int_equal(figure_col(text, "\\x1b]0;T\\x07\\x9b"), figure_col(text, "plain"));
	assert_int_equal(figure_col(text, "\xe6\x97\xa5\xe6\x9c\xac"
					  "ab"),
			 figure_col(text, "plain"));
	free(text);
	run__free_detail(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden_small),
	    cmocka_unit_test(test_many_threads_fold),
	    cmocka_unit_test(test_color_only_when_asked),
	    cmocka_unit_test(test_formats),
	    cmocka_unit_test(test_not_started),
	    cmocka_unit_test(test_untraced_note),
	    cmocka_unit_test(test_exec_renamed),
	    cmocka_unit_test(test_throttling_notes),
	    cmocka_unit_test(test_hostile_names),
	    cmocka_unit_test(test_terminal_width),
	    cmocka_unit_test(test_units),
	};

	return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}
