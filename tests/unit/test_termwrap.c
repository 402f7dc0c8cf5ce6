// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "termwrap.h"

static char *wrap(const char *text, size_t width)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	assert_non_null(m);
	termwrap_fputs(m, text, width);
	fclose(m);
	return out;
}

/* Width 0 is no limit: the text as given. */
static void test_no_width(void **state)
{
	const char *s = "  quality: residual 0.000%   lost records 0   kernel cross-check 0.012%\n";
	char *out = wrap(s, 0);

	assert_string_equal(out, s);
	free(out);
}

/* At spaces, continued two columns deeper; a group of figures (three spaces) kept whole. */
static void test_word_boundaries(void **state)
{
	char *out = wrap("  quality: residual 0.000%   lost records 0   kernel cross-check 0.012% "
			 "(worst thread 0.006%)\n",
			 54);

	assert_string_equal(out, "  quality: residual 0.000%   lost records 0\n"
				 "    kernel cross-check 0.012% (worst thread 0.006%)\n");
	free(out);
	out = wrap("  note: one two three four five six seven eight nine ten\n", 20);
	assert_string_equal(out, "  note: one two\n"
				 "    three four five\n"
				 "    six seven eight\n"
				 "    nine ten\n");
	free(out);
}

/* A word wider than the line stays whole; colours take no columns; UTF-8 is one a character. */
static void test_long_words_and_escapes(void **state)
{
	char *out = wrap("  artifact: /a/very/long/path/that/cannot/be/broken.json done\n", 20);

	assert_string_equal(out, "  artifact:\n"
				 "    /a/very/long/path/that/cannot/be/broken.json\n"
				 "    done\n");
	free(out);
	out = wrap("\033[33m  warning: \xc3\xa9t\xc3\xa9 ok\033[0m\n", 18);
	assert_string_equal(out, "\033[33m  warning: \xc3\xa9t\xc3\xa9 ok\033[0m\n");
	free(out);
	assert_int_equal(termwrap_cols("\033[1mab\xc3\xa9\033[0m", (size_t)-1), 3);
}

/* Not a terminal: no width, whatever COLUMNS says. */
static void test_width_of_a_file(void **state)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	setenv("COLUMNS", "80", 1);
	assert_int_equal(termwrap_width(fileno(f)), 0);
	fclose(f);
}

/* A formatted line of tsarun's own (a restored sysctl, at 80 columns), wrapped the same way. */
static void test_printf(void **state)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	(void)state;
	assert_non_null(m);
	termwrap_printf(m, 80,
			"tsarun: restored kernel.task_delayacct=%d, left at %d by tsarun (pid %d), "
			"which did not exit cleanly\n",
			0, 1, 12345);
	fclose(m);
	assert_string_equal(
	    out, "tsarun: restored kernel.task_delayacct=0, left at 1 by tsarun (pid 12345),\n"
		 "  which did not exit cleanly\n");
	free(out);
}

/* A message from outside (a reason holding a path): escaped, then wrapped after the prefix. */
static void test_say(void **state)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	(void)state;
	assert_non_null(m);
	termwrap_say(m, 60, "tsarun: warning: ", "running unconfined: cannot open '%s': %s",
		     "/tmp/a\033[2Jb", "Permission denied");
	fclose(m);
	assert_string_equal(out, "tsarun: warning: running unconfined: cannot open\n"
				 "  '/tmp/a\\x1b[2Jb': Permission denied\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_width),
	    cmocka_unit_test(test_word_boundaries),
	    cmocka_unit_test(test_long_words_and_escapes),
	    cmocka_unit_test(test_width_of_a_file),
	    cmocka_unit_test(test_printf),
	    cmocka_unit_test(test_say),
	};

	return cmocka_run_group_tests_name("termwrap", tests, NULL, NULL);
}
