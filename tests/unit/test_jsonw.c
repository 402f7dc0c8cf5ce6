// SPDX-License-Identifier: MIT
/* lib/jsonw: separators, nesting, escaping, exact integers, the layouts, sticky errors. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "unit.h"

#include "jsonw.h"
#include "textsafe.h"

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

/* What cJSON prints for v, or for the tree o (freed); malloc'd. */
static char *cjson_text(cJSON *o, bool formatted)
{
	char *t = formatted ? cJSON_Print(o) : cJSON_PrintUnformatted(o);

	assert_non_null(t);
	cJSON_Delete(o);
	return t;
}

static void same_as_cjson(double v)
{
	struct jsonw *w = jsonw__new(NULL, 0);
	char *want = cjson_text(cJSON_CreateNumber(v), false), *got;

	assert_non_null(w);
	jsonw__cjson(w, v);
	got = take(w);
	if (strcmp(got, want))
		fail_msg("%.17g: jsonw__cjson wrote %s, cJSON %s", v, got, want);
	free(got);
	free(want);
}

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* jsonw__cjson() against cJSON's own printing, value by value. */
static void test_cjson_numbers(void **state)
{
	static const double fixed[] = {
	    0,
	    -0.0,
	    1,
	    -1,
	    7,
	    0.5,
	    1.5,
	    -2.5,
	    1e6 + 0.5,
	    2147483646.5,
	    0.1,
	    0.2,
	    0.1 + 0.2,
	    1.0 / 3,
	    -1.0 / 3,
	    M_PI,
	    2.0 / 3 * 1e-9,
	    11.8314878,
	    99.99999999999999,
	    INT32_MAX,
	    (double)INT32_MAX + 1,
	    (double)INT32_MAX - 0.5,
	    INT32_MIN,
	    (double)INT32_MIN - 1,
	    (double)INT32_MIN + 0.5,
	    4294967295.0,
	    4294967296.0,
	    999999999999999.0,
	    999999999999999.5,
	    1e15,
	    1e15 + 1,
	    1e15 + 0.5,
	    2e15 + 2,
	    4503599627370497.0,
	    9e15,
	    9007199254740991.0,
	    9007199254740992.0,
	    9007199254740993.0,
	    1e16,
	    1e16 + 2,
	    12345678901234567.0,
	    1e17,
	    1e18,
	    1e19,
	    1e20,
	    1e20 + 65536,
	    1e21,
	    1e22,
	    (double)UINT64_MAX,
	    (double)INT64_MAX,
	    (double)INT64_MIN,
	    1234567890123456789.0,
	    18446744073709551615.0,
	    1e-5,
	    1e-6,
	    1e-7,
	    1e-300,
	    5e-324,
	    2.2250738585072014e-308,
	    1.7976931348623157e308,
	    -1.7976931348623157e308,
	    -1e-300,
	    NAN,
	    INFINITY,
	    -INFINITY,
	};
	uint64_t x = 88172645463325252ull;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++, n++)
		same_as_cjson(fixed[i]);
	for (int i = 0; i < 200000; i++, n++) {
		uint64_t r = next_rand(&x);
		double v;

		switch (i % 8) {
		case 0: /* any bits: tiny, huge, negative, NaN */
			memcpy(&v, &r, sizeof(v));
			break;
		case 1: /* a u64 count of nanoseconds */
			v = (double)r;
			break;
		case 2: /* around 1e15..1e20, where %1.15g stops being exact */
			v = (double)(r % 100000000000000000ull) * (double)(1 + r % 1000);
			break;
		case 3: /* halves and small integers */
			v = (double)(int64_t)(r % 2000001 - 1000000) / 2;
			break;
		case 4: /* a ratio of two counts */
			v = (double)(r >> 40) / (double)((r & 0xffffff) + 1);
			break;
		case 5: /* a percent */
			v = (double)(r % 100000000) / 1e6;
			break;
		case 6: /* around int's ends */
			v = (double)INT32_MAX + (double)(int64_t)(r % 2001 - 1000) / 4;
			break;
		default: /* a power of ten, scaled */
			v = pow(10, (double)(int)(r % 60) - 30) * (double)(r % 1000 + 1);
			break;
		}
		same_as_cjson(v);
	}
	print_message("%zu numbers written as cJSON writes them\n", n);
}

static char *exact_text(double v, int prec)
{
	struct jsonw *w = jsonw__new(NULL, 0);

	assert_non_null(w);
	jsonw__exact(w, v, prec);
	return take(w);
}

/* jsonw__exact(): reads back as v, and no fewer digits (from prec) would. */
static void test_exact_numbers(void **state)
{
	uint64_t x = 2463534242ull;
	char *t;

	(void)state;
	t = exact_text(11.8314878, 6);
	assert_string_equal(t, "11.8314878");
	free(t);
	t = exact_text(0.5, 6);
	assert_string_equal(t, "0.5");
	free(t);
	t = exact_text(1e15, 15);
	assert_string_equal(t, "1e+15");
	free(t);
	t = exact_text(0.1 + 0.2, 15);
	assert_string_equal(t, "0.30000000000000004");
	free(t);
	t = exact_text(NAN, 6);
	assert_string_equal(t, "null");
	free(t);
	for (int i = 0; i < 100000; i++) {
		uint64_t r = next_rand(&x);
		int prec = i % 2 ? 6 : 15;
		double v =
		    i % 3 ? (double)(r % 1000000000) / (double)(r % 9999 + 1) : (double)r * 1e-9;
		char shorter[40];

		t = exact_text(v, prec);
		if (strtod(t, NULL) != v)
			fail_msg("%.17g written as %s", v, t);
		for (int p = prec; p < 17; p++) {
			snprintf(shorter, sizeof(shorter), "%.*g", p, v);
			if (strtod(shorter, NULL) == v) {
				assert_string_equal(t, shorter);
				break;
			}
		}
		free(t);
	}
}

/* JSONW_TABS is cJSON_Print()'s layout, empty containers and arrays of objects too. */
static void test_tabs_layout(void **state)
{
	struct jsonw *w = jsonw__new(NULL, JSONW_TABS);
	cJSON *o = cJSON_CreateObject(), *a, *e;
	char *want, *got;

	(void)state;
	cJSON_AddStringToObject(o, "schema", "x/1");
	e = cJSON_AddObjectToObject(o, "tool");
	cJSON_AddStringToObject(e, "name", "tsarun");
	cJSON_AddObjectToObject(e, "empty");
	cJSON_AddArrayToObject(o, "none");
	a = cJSON_AddArrayToObject(o, "nums");
	cJSON_AddItemToArray(a, cJSON_CreateNumber(1));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(2.5));
	a = cJSON_AddArrayToObject(o, "checks");
	for (int i = 0; i < 2; i++) {
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", i ? "b" : "a");
		cJSON_AddBoolToObject(e, "available", i);
		cJSON_AddItemToArray(a, e);
	}
	cJSON_AddNullToObject(o, "last");
	want = cjson_text(o, true);

	jsonw__obj_open(w);
	jsonw__str_field(w, "schema", "x/1");
	jsonw__key(w, "tool");
	jsonw__obj_open(w);
	jsonw__str_field(w, "name", "tsarun");
	jsonw__key(w, "empty");
	jsonw__obj_open(w);
	jsonw__obj_close(w);
	jsonw__obj_close(w);
	jsonw__key(w, "none");
	jsonw__arr_open(w);
	jsonw__arr_close(w);
	jsonw__key(w, "nums");
	jsonw__arr_open(w);
	jsonw__cjson(w, 1);
	jsonw__cjson(w, 2.5);
	jsonw__arr_close(w);
	jsonw__key(w, "checks");
	jsonw__arr_open(w);
	for (int i = 0; i < 2; i++) {
		jsonw__obj_open(w);
		jsonw__str_field(w, "name", i ? "b" : "a");
		jsonw__bool_field(w, "available", i);
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
	jsonw__null_field(w, "last");
	jsonw__obj_close(w);
	got = take(w);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* JSONW_KEEP_COLONS: a string as cJSON printed it, made strict by textsafe_json_doc. */
static void test_keep_colons(void **state)
{
	static const char *const strs[] = {
	    "",
	    "plain",
	    "::error::x",
	    "  ::warning::y ##[z]",
	    "a\"b\\c/d",
	    "\b\f\n\r\t\001\037\x7f",
	    "\xc2\x9b[31m\xe2\x80\xae\xe2\x80\xa8",
	    "\xff\xfe\xed\xa0\x80\xf4\x90\x80\x80\xc0\xaf",
	    "##[",
	    "#\001##[x",
	    ":",
	    ":::",
	    "\t::x",
	    "caf\xc3\xa9 \xe6\x97\xa5",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		char *c = cjson_text(cJSON_CreateString(strs[i]), false), *want, *got;
		size_t need = textsafe_json_doc(NULL, 0, c, strlen(c));
		struct jsonw *w = jsonw__new(NULL, JSONW_KEEP_COLONS);

		want = malloc(need + 1);
		assert_non_null(want);
		textsafe_json_doc(want, need + 1, c, strlen(c));
		jsonw__str(w, strs[i]);
		got = take(w);
		if (strcmp(got, want))
			fail_msg("string %zu: jsonw wrote %s, cJSON %s", i, got, want);
		free(got);
		free(want);
		free(c);
	}
}

/* The artifact's layout: a member, a run, a thread a line; brackets follow the last. */
static void test_rows(void **state)
{
	struct jsonw *w = jsonw__new(NULL, JSONW_NEWLINE);

	(void)state;
	jsonw__obj_open_rows(w);
	jsonw__str_field(w, "schema", "x/1");
	jsonw__key(w, "runs");
	jsonw__arr_open_rows(w);
	jsonw__obj_open_rows(w);
	jsonw__uint_field(w, "index", 0);
	jsonw__key(w, "threads");
	jsonw__arr_open_rows(w);
	jsonw__arr_close(w);
	jsonw__key(w, "t");
	jsonw__obj_open(w);
	jsonw__uint_field(w, "a", 1);
	jsonw__uint_field(w, "b", 2);
	jsonw__obj_close(w);
	jsonw__obj_close(w);
	jsonw__obj_open_rows(w);
	jsonw__obj_close(w);
	jsonw__arr_close(w);
	jsonw__null_field(w, "comparison");
	jsonw__obj_close(w);
	expect(w, "{\"schema\":\"x/1\",\n\"runs\":[\n{\"index\":0,\n\"threads\":[],\n"
		  "\"t\":{\"a\":1,\"b\":2}},\n{}],\n\"comparison\":null}\n");
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
	    cmocka_unit_test(test_cjson_numbers),
	    cmocka_unit_test(test_exact_numbers),
	    cmocka_unit_test(test_tabs_layout),
	    cmocka_unit_test(test_keep_colons),
	    cmocka_unit_test(test_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
