// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

#include "fixtures.h"
#include "flame.h"

static char *render(struct flame *f, const struct flame_svg_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	assert_non_null(m);
	assert_int_equal(flame__write_svg(f, m, o), 0);
	fclose(m);
	return text;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/*
 * Outside CDATA sections: valid UTF-8, no control characters but newlines
 * and tabs, every '&' starts an entity.
 */
static void assert_clean_xml_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		if (!strncmp((const char *)p, "<![CDATA[", 9)) {
			const char *end = strstr((const char *)p, "]]>");

			assert_non_null(end);
			p = (const unsigned char *)end + 3;
			continue;
		}
		if (*p < 0x20 && *p != '\n' && *p != '\t')
			fail_msg("control character 0x%02x at offset %zu", *p,
				 (size_t)(p - (const unsigned char *)s));
		if (*p == '&') {
			const char *q = (const char *)p;

			if (strncmp(q, "&amp;", 5) && strncmp(q, "&lt;", 4) &&
			    strncmp(q, "&gt;", 4) && strncmp(q, "&quot;", 6) &&
			    strncmp(q, "&apos;", 6))
				fail_msg("bare '&' at offset %zu",
					 (size_t)(p - (const unsigned char *)s));
		}
		if (*p < 0x80) {
			p++;
			continue;
		}
		{
			int need = (*p & 0xe0) == 0xc0	 ? 2
				   : (*p & 0xf0) == 0xe0 ? 3
				   : (*p & 0xf8) == 0xf0 ? 4
							 : 0;

			assert_true(need > 0);
			for (int k = 1; k < need; k++)
				assert_true((p[k] & 0xc0) == 0x80);
			p += need;
		}
	}
}

static void test_values_are_inclusive(void **state)
{
	struct flame *f = flame__new();
	char *svg;

	assert_non_null(f);
	assert_int_equal(flame__add(f, (const char *[]){"main", "a", "read"}, 3, 30, 0), 0);
	assert_int_equal(flame__add(f, (const char *[]){"main", "a"}, 2, 10, 0), 0);
	assert_int_equal(flame__add(f, (const char *[]){"main", "b"}, 2, 60, 0), 0);
	assert_int_equal(flame__total(f), 100);
	svg = render(f, &(struct flame_svg_opts){.units = "samples"});
	assert_non_null(strstr(svg, "<title>all\n100 samples, 100.00%"));
	assert_non_null(strstr(svg, "<title>main\n100 samples, 100.00%"));
	assert_non_null(strstr(svg, "<title>a\n40 samples, 40.00%"));
	assert_non_null(strstr(svg, "<title>read\n30 samples, 30.00%"));
	assert_non_null(strstr(svg, "<title>b\n60 samples, 60.00%"));
	/* all, main, a, read, b: five frames, each a group */
	assert_int_equal(count(svg, "<g>\n"), 5);
	assert_int_equal(count(svg, "</g>\n"), 6); /* and the frames group */
	free(svg);
	flame__free(f);
}

static void test_parse_folded(void **state)
{
	static const char text[] = "# a comment\n"
				   "main;a;read 30\n"
				   "main;a 10\r\n"
				   "\n"
				   "main;b 60\n"
				   "no value\n"
				   "main;c -5\n"
				   "main;c 1.5\n"
				   " 7\n"
				   "main;with space in name 5";
	struct flame *f = flame__new();
	size_t bad = 99;
	char *svg;

	assert_int_equal(flame__parse_folded(f, text, strlen(text), 0, &bad), 0);
	assert_int_equal(bad, 4);
	assert_int_equal(flame__total(f), 105);
	svg = render(f, NULL);
	assert_non_null(strstr(svg, "<title>with space in name\n5 samples"));
	free(svg);
	flame__free(f);
}

static void test_categories_colour_and_split(void **state)
{
	struct flame *f = flame__new();
	char *svg;

	assert_int_equal(flame__set_category(f, 0, "on-CPU", FLAME_PAL_HOT), 0);
	assert_int_equal(flame__set_category(f, 2, "sleeping (S)", FLAME_PAL_BLUE), 0);
	assert_int_equal(flame__set_category(f, FLAME_MAX_CATS, "x", FLAME_PAL_HOT), -EINVAL);
	assert_int_equal(flame__add(f, (const char *[]){"t", "work"}, 2, 3000000, 0), 0);
	assert_int_equal(
	    flame__add(f, (const char *[]){"t", "wait", "futex_wait_[k]"}, 3, 7000000, 2), 0);
	assert_int_equal(flame__add(f, (const char *[]){"t"}, 1, 1, FLAME_MAX_CATS), -EINVAL);
	svg = render(f, &(struct flame_svg_opts){.units = "ns", .title = "wall"});
	/* The shared frame shows the split; the legend names both categories. */
	assert_non_null(strstr(svg,
			       "<title>t\n10.00 ms, 100.00%\non-CPU 3.00 ms (30.0%), sleeping (S) "
			       "7.00 ms (70.0%)"));
	assert_non_null(strstr(svg, ">on-CPU 3.00 ms (30.0%)</text>"));
	assert_non_null(strstr(svg, ">sleeping (S) 7.00 ms (70.0%)</text>"));
	free(svg);
	flame__free(f);
}

static void test_frame_category_wins(void **state)
{
	struct flame *f = flame__new();
	char *a, *b;

	flame__set_category(f, 1, "one", FLAME_PAL_BLUE);
	flame__set_category(f, 3, "three", FLAME_PAL_GREEN);
	assert_int_equal(
	    flame__add_ex(f, (const char *[]){"x", "y"}, (const int[]){3, -1}, 2, 5, 1), 0);
	a = render(f, NULL);
	flame__free(f);
	f = flame__new();
	flame__set_category(f, 1, "one", FLAME_PAL_BLUE);
	flame__set_category(f, 3, "three", FLAME_PAL_GREEN);
	assert_int_equal(flame__add(f, (const char *[]){"x", "y"}, 2, 5, 1), 0);
	b = render(f, NULL);
	/* Frame x is green in the first (its own category), blue in the second. */
	assert_string_not_equal(a, b);
	flame__free(f);
	free(a);
	free(b);
}

static void test_hostile_names(void **state)
{
	struct flame *f = flame__new();
	char *svg;

	assert_int_equal(flame__add(f,
				    (const char *[]){"<script>&amp\"'", "bad\xff\xfeutf8",
						     "ctl\x01\x1b[31m", "ok \xc3\xa9t\xc3\xa9", "",
						     "overlong\xc0\xaf", "surrogate\xed\xa0\x80"},
				    7, 10, 0),
			 0);
	svg = render(f, &(struct flame_svg_opts){.title = "a <b> & \"c\"", .subtitle = "\x01"});
	assert_clean_xml_text(svg);
	assert_null(strstr(svg, "<script>&amp\""));
	assert_non_null(strstr(svg, "&lt;script&gt;&amp;amp&quot;&apos;"));
	assert_non_null(strstr(svg, "bad??utf8"));
	assert_non_null(strstr(svg, "ctl??[31m"));
	assert_non_null(strstr(svg, "ok \xc3\xa9t\xc3\xa9"));
	assert_non_null(strstr(svg, "<title>[unknown]\n"));
	assert_non_null(strstr(svg, "overlong??"));
	assert_non_null(strstr(svg, "surrogate???"));
	free(svg);
	flame__free(f);
}

static void test_narrow_frames_left_out(void **state)
{
	struct flame *f = flame__new();
	char *svg;

	flame__add(f, (const char *[]){"big"}, 1, 1000000, 0);
	flame__add(f, (const char *[]){"tiny", "tinier"}, 2, 1, 0);
	svg = render(f, &(struct flame_svg_opts){.width = 1200, .min_width_px = 0.5});
	assert_non_null(strstr(svg, "<title>big\n"));
	assert_null(strstr(svg, "<title>tiny\n"));
	assert_null(strstr(svg, "<title>tinier\n"));
	free(svg);
	flame__free(f);
}

static void test_long_labels_cut(void **state)
{
	struct flame *f = flame__new();
	char name[400], *svg;

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memcpy(name, "&&&", 3);
	flame__add(f, (const char *[]){name}, 1, 1, 0);
	flame__add(f, (const char *[]){"other"}, 1, 9, 0);
	svg = render(f, &(struct flame_svg_opts){.width = 1200});
	/* The 10% frame is 118 px wide: room for 15 characters, the last two "..". */
	assert_clean_xml_text(svg);
	assert_non_null(strstr(svg, ">&amp;&amp;&amp;xxxxxxxxxx..</text>"));
	flame__free(f);
	free(svg);
	f = flame__new();
	flame__add(f, (const char *[]){name}, 1, 1, 0);
	flame__add(f, (const char *[]){"other"}, 1, 99, 0);
	svg = render(f, &(struct flame_svg_opts){.width = 1200});
	/* 1% is 11.8 px: no room for a label at all. */
	assert_non_null(strstr(svg, "\"></text>"));
	free(svg);
	flame__free(f);
}

static void test_empty(void **state)
{
	struct flame *f = flame__new();
	char *svg = render(f, NULL);

	assert_non_null(strstr(svg, "no samples: nothing to draw"));
	assert_non_null(strstr(svg, "</svg>\n"));
	free(svg);
	flame__free(f);
}

static void test_golden_small(void **state)
{
	static const char text[] = "bench-100;worker-101;main;compute 40\n"
				   "bench-100;worker-101;main;read;vfs_read_[k];__schedule_[k] 25\n"
				   "bench-100;worker-101;[runqueue] 5\n"
				   "bench-100;main-100;main;wait4_[k] 30\n";
	struct flame *f = flame__new();
	char *svg;

	flame__set_category(f, 0, "on-CPU", FLAME_PAL_HOT);
	flame__set_category(f, 1, "runqueue", FLAME_PAL_YELLOW);
	flame__set_category(f, 2, "sleeping (S)", FLAME_PAL_BLUE);
	assert_int_equal(flame__parse_folded(f, text, strlen(text), 0, NULL), 0);
	flame__add(f, (const char *[]){"bench-100", "main-100", "[stopped]"}, 3, 1, 2);
	svg = render(
	    f, &(struct flame_svg_opts){.title = "golden", .subtitle = "small", .units = "us"});
	assert_int_equal(golden_check("flame-small.svg", svg), 0);
	free(svg);
	flame__free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_values_are_inclusive),
	    cmocka_unit_test(test_parse_folded),
	    cmocka_unit_test(test_categories_colour_and_split),
	    cmocka_unit_test(test_frame_category_wins),
	    cmocka_unit_test(test_hostile_names),
	    cmocka_unit_test(test_narrow_frames_left_out),
	    cmocka_unit_test(test_long_labels_cut),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_golden_small),
	};

	return cmocka_run_group_tests_name("flame", tests, NULL, NULL);
}
