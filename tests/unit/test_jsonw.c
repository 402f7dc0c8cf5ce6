// SPDX-License-Identifier: MIT
/* lib/jsonw: separators, nesting, escaping, exact integers, the layouts, sticky errors. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "jsonw.h"

/* The memory mode's text; the writer is freed. */
static char *take(struct jsonw *w)
{
	char *s;

	assert_int_equal(jsonw__finish(w), 0);
	s = jsonw__take(w, NULL);
	assert_non_null(s);
	jsonw__free(w);
	return s;
}

static void expect(struct jsonw *w, const char *want)
{
	char *s = take(w);

	assert_string_equal(s, want);
	free(s);
}

static void test_nesting_and_commas(void **state)
{
	struct jsonw *w = jsonw__new(NULL, 0);

	(void)state;
	assert_non_null(w);
	jsonw__obj_open(w);
	jsonw__str_field(w, "a", "x");
	jsonw__key(w, "b");
	jsonw__arr_open(w);
	jsonw__int(w, 1);
	jsonw__obj_open(w);
	jsonw__obj_close(w);
	jsonw__arr_open(w);
	jsonw__arr_close(w);
	jsonw__null(w);
	jsonw__arr_open(w);
	jsonw__bool(w, true);
	jsonw__bool(w, false);
	jsonw__arr_close(w);
	jsonw__arr_close(w);
	jsonw__key(w, "c");
	jsonw__obj_open(w);
	jsonw__null_field(w, "d");
	jsonw__obj_close(w);
	jsonw__obj_close(w);
	expect(w, "{\"a\":\"x\",\"b\":[1,{},[],null,[true,false]],\"c\":{\"d\":null}}");

	/* A scalar document, a trailing newline, and take() gives a fresh writer. */
	w = jsonw__new(NULL, JSONW_NEWLINE);
	assert_non_null(w);
	jsonw__str(w, NULL);
	assert_int_equal(jsonw__finish(w), 0);
	{
		size_t len;
		char *s = jsonw__take(w, &len);

		assert_string_equal(s, "\"\"\n");
		assert_int_equal(len, 3);
		free(s);
	}
	jsonw__uint(w, 7);
	expect(w, "7\n");
}

static void test_hostile_strings(void **state)
{
	struct jsonw *w = jsonw__new(NULL, 0);
	char *s;

	(void)state;
	jsonw__arr_open(w);
	jsonw__str(w, "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f");
	jsonw__str(w, "\xff\xc3(\xe2\x82");    /* ill-formed: each subpart U+FFFD */
	jsonw__str(w, "\xc3\xa9\xe2\x80\xae"); /* é kept, U+202E (bidi) escaped */
	jsonw__str(w, "a##[error]x");
	jsonw__str(w, "::set-output");
	jsonw__strn(w, "n\0ul", 4);
	jsonw__arr_close(w);
	s = take(w);
	assert_string_equal(s, "[\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\","
			       "\"\\ufffd\\ufffd(\\ufffd\","
			       "\"\xc3\xa9\\u202e\","
			       "\"a##\\u005berror]x\","
			       "\"\\u003a:set-output\","
			       "\"n\\u0000ul\"]");
	free(s);

	/* Keys are escaped the same way. */
	w = jsonw__new(NULL, 0);
	jsonw__obj_open(w);
	jsonw__int_field(w, "k\"\n##[", 1);
	jsonw__obj_close(w);
	expect(w, "{\"k\\\"\\n##\\u005b\":1}");

	/* A long string grows the buffer: all of it, escaped. */
	{
		size_t n = 100000;
		char *big = malloc(n + 1);

		memset(big, '\n', n);
		big[n] = '\0';
		w = jsonw__new(NULL, 0);
		jsonw__str(w, big);
		s = take(w);
		assert_int_equal(strlen(s), 2 * n + 2);
		assert_memory_equal(s, "\"\\n\\n", 5);
		assert_int_equal(s[2 * n + 1], '"');
		free(s);
		free(big);
	}
}

static void test_integer_extremes(void **state)
{
	struct jsonw *w = jsonw__new(NULL, 0);

	(void)state;
	jsonw__arr_open(w);
	jsonw__int(w, INT64_MIN);
	jsonw__int(w, INT64_MAX);
	jsonw__int(w, 0);
	jsonw__int(w, -1);
	jsonw__uint(w, UINT64_MAX);
	jsonw__uint(w, 9007199254740993ULL); /* 2^53 + 1: no double holds it */
	jsonw__arr_close(w);
	expect(w, "[-9223372036854775808,9223372036854775807,0,-1,18446744073709551615,"
		  "9007199254740993]");
}

static void test_doubles_and_raw(void **state)
{
	struct jsonw *w = jsonw__new(NULL, 0);

	(void)state;
	jsonw__arr_open(w);
	jsonw__double(w, 0.1);
	jsonw__double(w, NAN);
	jsonw__double(w, -INFINITY);
	jsonw__fixed(w, 1.5, 9);
	jsonw__fixed(w, INFINITY, 3);
	jsonw__raw(w, "12.345", 6);
	jsonw__raw(w, "{\"x\":[1]}", 9);
	jsonw__arr_close(w);
	expect(w, "[0.10000000000000001,null,null,1.500000000,null,12.345,{\"x\":[1]}]");
}

static void test_lines(void **state)
{
	struct jsonw *w = jsonw__new(NULL, JSONW_NEWLINE);

	(void)state;
	jsonw__obj_open(w);
	jsonw__int_field(w, "n", 2);
	jsonw__key(w, "events");
	jsonw__arr_open_lines(w);
	jsonw__obj_open(w);
	jsonw__int_field(w, "a", 1);
	jsonw__obj_close(w);
	jsonw__obj_open(w);
	jsonw__obj_close(w);
	jsonw__arr_close(w);
	jsonw__obj_close(w);
	expect(w, "{\"n\":2,\"events\":[\n{\"a\":1},\n{}\n]}\n");

	/* Empty, the closing bracket still on a line of its own. */
	w = jsonw__new(NULL, 0);
	jsonw__arr_open_lines(w);
	jsonw__arr_close(w);
	expect(w, "[\n]");
}

/* The layout tsarun's hyperfine export has always had. */
static void test_pretty(void **state)
{
	struct jsonw *w = jsonw__new(NULL, JSONW_PRETTY | JSONW_NEWLINE);

	(void)state;
	jsonw__obj_open(w);
	jsonw__key(w, "results");
	jsonw__arr_open(w);
	jsonw__obj_open(w);
	jsonw__str_field(w, "command", "sleep 1");
	jsonw__key(w, "mean");
	jsonw__fixed(w, 1.0, 3);
	jsonw__key(w, "times");
	jsonw__arr_open(w);
	jsonw__fixed(w, 1.0, 1);
	jsonw__fixed(w, 2.0, 1);
	jsonw__arr_close(w);
	jsonw__key(w, "none");
	jsonw__arr_open(w);
	jsonw__arr_close(w);
	jsonw__key(w, "empty");
	jsonw__obj_open(w);
	jsonw__obj_close(w);
	jsonw__obj_close(w);
	jsonw__obj_open(w);
	jsonw__null_field(w, "mean");
	jsonw__obj_close(w);
	jsonw__arr_close(w);
	jsonw__obj_close(w);
	expect(w, "{\n"
		  "  \"results\": [\n"
		  "    {\n"
		  "      \"command\": \"sleep 1\",\n"
		  "      \"mean\": 1.000,\n"
		  "      \"times\": [1.0, 2.0],\n"
		  "      \"none\": [],\n"
		  "      \"empty\": {}\n"
		  "    },\n"
		  "    {\n"
		  "      \"mean\": null\n"
		  "    }\n"
		  "  ]\n"
		  "}\n");
}

/* Calls out of place: the first error is kept, nothing more is written. */
static void test_misuse_is_sticky(void **state)
{
	struct jsonw *w;

	(void)state;
	w = jsonw__new(NULL, 0);
	jsonw__obj_open(w);
	jsonw__int(w, 1); /* a value where a key is due */
	assert_int_equal(jsonw__error(w), -EINVAL);
	jsonw__key(w, "a");
	jsonw__obj_close(w);
	assert_int_equal(jsonw__finish(w), -EINVAL);
	assert_null(jsonw__take(w, NULL));
	jsonw__free(w);

	w = jsonw__new(NULL, 0);
	jsonw__key(w, "a"); /* a key outside an object */
	assert_int_equal(jsonw__error(w), -EINVAL);
	jsonw__free(w);

	w = jsonw__new(NULL, 0);
	jsonw__arr_open(w);
	jsonw__obj_close(w); /* a close of another kind */
	assert_int_equal(jsonw__error(w), -EINVAL);
	jsonw__free(w);

	w = jsonw__new(NULL, 0);
	jsonw__obj_open(w);
	jsonw__key(w, "a");
	jsonw__obj_close(w); /* the key's value missing */
	assert_int_equal(jsonw__error(w), -EINVAL);
	jsonw__free(w);

	w = jsonw__new(NULL, 0);
	jsonw__null(w);
	jsonw__null(w); /* a second document */
	assert_int_equal(jsonw__error(w), -EINVAL);
	jsonw__free(w);

	w = jsonw__new(NULL, 0);
	jsonw__arr_open(w); /* never closed */
	assert_int_equal(jsonw__finish(w), -EINVAL);
	jsonw__free(w);

	w = jsonw__new(NULL, 0);
	for (int i = 0; i <= JSONW_MAX_DEPTH; i++)
		jsonw__arr_open(w);
	assert_int_equal(jsonw__error(w), -EINVAL);
	jsonw__free(w);

	/* jsonw__file() has no FILE in memory mode. */
	w = jsonw__new(NULL, 0);
	jsonw__arr_open(w);
	assert_null(jsonw__file(w));
	assert_int_equal(jsonw__error(w), -EINVAL);
	jsonw__free(w);
	jsonw__free(NULL);
}

static void test_file(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct jsonw *w = jsonw__new(f, JSONW_NEWLINE);
	FILE *raw;

	(void)state;
	assert_non_null(w);
	jsonw__obj_open(w);
	jsonw__key(w, "big");
	jsonw__arr_open(w);
	for (int i = 0; i < 20000; i++)
		jsonw__int(w, i);
	jsonw__arr_close(w);
	jsonw__key(w, "other");
	raw = jsonw__file(w);
	assert_ptr_equal(raw, f);
	fputs("{\"from\":\"elsewhere\"}", raw);
	jsonw__bool_field(w, "after", true);
	jsonw__obj_close(w);
	assert_int_equal(jsonw__finish(w), 0);
	jsonw__free(w);
	fclose(f);
	assert_memory_equal(text, "{\"big\":[0,1,2,", 14);
	assert_non_null(
	    strstr(text, ",19998,19999],\"other\":{\"from\":\"elsewhere\"},\"after\":true}\n"));
	assert_int_equal(strlen(text), len);
	free(text);
}

/* A FILE that fails: -EIO, at the latest from jsonw__finish(). */
static void test_failing_file(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	struct jsonw *w;

	(void)state;
	if (!f)
		skip();
	w = jsonw__new(f, 0);
	jsonw__arr_open(w);
	for (int i = 0; i < 100000 && !jsonw__error(w); i++)
		jsonw__str(w, "some text");
	jsonw__arr_close(w);
	assert_int_equal(jsonw__finish(w), -EIO);
	jsonw__free(w);
	fclose(f);

	/* A small document, wholly buffered: the flush at the end fails. */
	f = fopen("/dev/full", "w");
	w = jsonw__new(f, 0);
	jsonw__null(w);
	assert_int_equal(jsonw__error(w), 0);
	assert_int_equal(jsonw__finish(w), -EIO);
	jsonw__free(w);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nesting_and_commas),
	    cmocka_unit_test(test_hostile_strings),
	    cmocka_unit_test(test_integer_extremes),
	    cmocka_unit_test(test_doubles_and_raw),
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_pretty),
	    cmocka_unit_test(test_misuse_is_sticky),
	    cmocka_unit_test(test_file),
	    cmocka_unit_test(test_failing_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
