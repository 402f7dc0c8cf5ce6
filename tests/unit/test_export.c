// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "export.h"
#include "fixtures.h"
#include "account.h"
#include "run.h"
#include "status.h"

static char *csv_of(const struct run *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	assert_non_null(m);
	assert_int_equal(export_threads_csv(m, r), 0);
	fclose(m);
	return text;
}

/* Does the row that starts with start hold needle? */
static bool row_has(const char *text, const char *start, const char *needle)
{
	const char *row = strstr(text, start), *end;

	if (!row)
		return false;
	end = strstr(row + 2, "\r\n");
	for (const char *q = strstr(row, needle); q; q = NULL)
		return !end || q < end;
	return false;
}

/*
 * Names are the command's text: a comma or a quote is quoted as RFC 4180
 * says, a control or a bad byte shown, a leading = made text; a figure the
 * source did not measure is an empty cell, never 0.
 */
static void test_threads_csv(void **state)
{
	struct tsa_thread t[3] = {
	    fx_thread(100, 100, 99, "a,b\"c", 0, 10, 4, 1, 5, 0),
	    fx_thread(101, 100, 99, "=cmd\n", 1, 9, 6, 2, 0, 0),
	    fx_thread(102, 100, 99, "plain", 1, 9, 6, 2, 0, 0),
	};
	struct run r;
	char *text;

	memset(&r, 0, sizeof(r));
	r.start_mono_ns = T0;
	run__source(&r, "ebpf", true, NULL);
	assert_int_equal(fold_run(&r, t, 3), 0);
	r.threads[2].unmeasured |= ACCT_NO_SWITCHES;
	text = csv_of(&r);
	assert_non_null(strstr(text, "pid,tid,comm,start_ns,lifetime_ns,"));
	assert_non_null(strstr(text, "\r\n100,100,\"a,b\"\"c\",0,10000000,"));
	assert_non_null(strstr(text, "\r\n100,101,'=cmd\\n,"));
	/* plain: switches unmeasured, empty cells. */
	assert_true(row_has(text, "\r\n100,102,plain,", ",,,"));
	assert_false(row_has(text, "\r\n100,100,", ",,,"));
	free(text);
	run__free_detail(&r);
}

static void fx_run(struct run *r, int index, bool warmup, uint64_t wall_ms, int code)
{
	memset(r, 0, sizeof(*r));
	r->index = index;
	r->warmup = warmup;
	r->status = code < 0 ? RUN_SIGNALED : RUN_EXITED;
	r->exit_code = code < 0 ? 0 : code;
	r->term_signal = code < 0 ? -code : 0;
	r->wall_ns = wall_ms * 1000000;
	r->ru.user_ns = wall_ms * 500000;
	r->ru.sys_ns = wall_ms * 250000;
}

/*
 * hyperfine's --export-json layout, byte for byte: a warmup left out, a
 * run a signal ended as a null exit code, a word with a quote quoted as a
 * shell takes it back, a quoted word's UTF-8 kept and its "##[" broken
 * (as textsafe_json has every string), and the baseline command's result
 * after the command's; a command with one run has a null stddev.
 */
static void test_hyperfine_json(void **state)
{
	char *const argv[] = {"sh", "-c", "it's", "\xc3\xa9 ##[x", NULL};
	char *const base_argv[] = {"true", NULL};
	struct run runs[4], base[1];
	struct session s = {
	    .argv = argv,
	    .argc = 4,
	    .runs = runs,
	    .nruns = 4,
	    .base_runs = base,
	    .nbase_runs = 1,
	    .base_argv = base_argv,
	    .base_argc = 1,
	};
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	(void)state;
	fx_run(&runs[0], 0, true, 50, 0);
	fx_run(&runs[1], 1, false, 100, 0);
	fx_run(&runs[2], 2, false, 300, 2);
	fx_run(&runs[3], 3, false, 200, -9);
	fx_run(&base[0], 1, false, 10, 0);
	assert_non_null(m);
	assert_int_equal(export_hyperfine_json(m, &s), 0);
	fclose(m);
	assert_string_equal(text,
			    "{\n"
			    "  \"results\": [\n"
			    "    {\n"
			    "      \"command\": \"sh -c 'it'\\\\''s' '\xc3\xa9 ##\\u005bx'\",\n"
			    "      \"mean\": 0.200000000,\n"
			    "      \"stddev\": 0.100000000,\n"
			    "      \"median\": 0.200000000,\n"
			    "      \"user\": 0.100000000,\n"
			    "      \"system\": 0.050000000,\n"
			    "      \"min\": 0.100000000,\n"
			    "      \"max\": 0.300000000,\n"
			    "      \"times\": [0.100000000, 0.300000000, 0.200000000],\n"
			    "      \"exit_codes\": [0, 2, null]\n"
			    "    },\n"
			    "    {\n"
			    "      \"command\": \"true\",\n"
			    "      \"mean\": 0.010000000,\n"
			    "      \"stddev\": null,\n"
			    "      \"median\": 0.010000000,\n"
			    "      \"user\": 0.005000000,\n"
			    "      \"system\": 0.002500000,\n"
			    "      \"min\": 0.010000000,\n"
			    "      \"max\": 0.010000000,\n"
			    "      \"times\": [0.010000000],\n"
			    "      \"exit_codes\": [0]\n"
			    "    }\n"
			    "  ]\n"
			    "}\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_threads_csv),
	    cmocka_unit_test(test_hyperfine_json),
	};

	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
