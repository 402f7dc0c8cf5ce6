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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_threads_csv),
	};

	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
