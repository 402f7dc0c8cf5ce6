// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <stdlib.h>

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
			    strncmp(q, "&apos;", 6) && strncmp(q, "&#", 2))
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
						     "overlong\xc0\xaf", "surrogate\xed\xa0\x80",
						     "::error::x\t##[warning]y\xc2\x9b"},
				    8, 10, 0),
			 0);
	svg = render(f, &(struct flame_svg_opts){.title = "a <b> & \"c\"", .subtitle = "\x01"});
	assert_clean_xml_text(svg);
	assert_null(strstr(svg, "<script>&amp\""));
	assert_non_null(strstr(svg, "&lt;script&gt;&amp;amp&quot;&apos;"));
	/* Controls and ill-formed bytes are shown as escapes (lib/textsafe.h). */
	assert_non_null(strstr(svg, "bad\\xff\\xfeutf8"));
	assert_non_null(strstr(svg, "ctl\\x01\\x1b[31m"));
	assert_non_null(strstr(svg, "ok \xc3\xa9t\xc3\xa9"));
	assert_non_null(strstr(svg, "<title>[unknown]\n"));
	assert_non_null(strstr(svg, "overlong\\xc0\\xaf"));
	assert_non_null(strstr(svg, "surrogate\\xed\\xa0\\x80"));
	/* No workflow command for GitHub's runner if the SVG is printed in a CI log. */
	assert_non_null(strstr(svg, "&#58;:error::x&#9;##&#91;warning]y\\u009b"));
	assert_null(strstr(svg, "##["));
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

/* The graph as data: depth-first, children in name order, values inclusive, names strict JSON. */
static void test_json(void **state)
{
	struct flame *f = flame__new();
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	cJSON *j, *frames, *names, *fr;
	const char *want[][2] = {
	    {"0", "all"}, {"1", "main"}, {"2", "a</script>\x1b"}, {"2", "b"}, {"1", "zz"}};
	int i = 0;

	assert_non_null(f);
	flame__set_category(f, 1, "sleeping (S)", FLAME_PAL_BLUE);
	assert_int_equal(flame__add(f, (const char *[]){"zz"}, 1, 5, 0), 0);
	assert_int_equal(flame__add(f, (const char *[]){"main", "b"}, 2, 7, 1), 0);
	assert_int_equal(flame__add(f, (const char *[]){"main", "a</script>\x1b"}, 2, 3, 0), 0);
	assert_int_equal(flame__write_json(f, m, "ns"), 0);
	fclose(m);
	assert_true(fx_utf8_valid(text));
	j = cJSON_Parse(text);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "units")->valuestring, "ns");
	assert_int_equal(cJSON_GetObjectItem(j, "total")->valuedouble, 15);
	frames = cJSON_GetObjectItem(j, "frames");
	names = cJSON_GetObjectItem(j, "names");
	assert_int_equal(cJSON_GetArraySize(frames), 5);
	cJSON_ArrayForEach(fr, frames)
	{
		int depth = cJSON_GetArrayItem(fr, 0)->valueint;
		const char *name =
		    cJSON_GetArrayItem(names, cJSON_GetArrayItem(fr, 1)->valueint)->valuestring;

		assert_int_equal(depth, atoi(want[i][0]));
		assert_string_equal(name, want[i][1]);
		i++;
	}
	/* Inclusive: main holds a and b; the split by category where there are two. */
	fr = cJSON_GetArrayItem(frames, 1);
	assert_int_equal(cJSON_GetArrayItem(fr, 2)->valuedouble, 10);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetArrayItem(fr, 4)), 4);
	/* The colour is the SVG's: a number, 0xRRGGBB. */
	assert_true(cJSON_IsNumber(cJSON_GetArrayItem(fr, 3)));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "categories")), 2);
	cJSON_Delete(j);
	free(text);
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

/* The y of the frame whose title starts with name. */
static double frame_y(const char *svg, const char *name)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s\n", name);
	p = strstr(svg, key);
	assert_non_null(p);
	p = strstr(p, " y=\"");
	assert_non_null(p);
	return strtod(p + 4, NULL);
}

/*
 * What a flamegraph.pl user expects: kernel frames shown without their
 * "_[k]" mark, in a shade of their own with a legend entry; the Search
 * button with room for "Reset Search" inside the picture; --inverted, an
 * icicle graph with the root on top, and zoom told which way is up.
 */
static void test_flamegraph_conventions(void **state)
{
	static const char text[] = "t;main;read;vfs_read_[k];__schedule_[k] 25\n"
				   "t;main;compute 40\n";
	struct flame *f = flame__new();
	char *svg, *inv;
	const char *p;
	double x;

	flame__set_category(f, 0, "on-CPU", FLAME_PAL_HOT);
	assert_int_equal(flame__parse_folded(f, text, strlen(text), 0, NULL), 0);
	svg = render(f, &(struct flame_svg_opts){.width = 1200});
	/* The mark is gone from labels and titles; the title says kernel instead. */
	assert_null(strstr(svg, "_[k]"));
	assert_non_null(strstr(svg, "<title>vfs_read [kernel]\n"));
	assert_non_null(strstr(svg, ">vfs_read</text>"));
	assert_non_null(strstr(svg, "kernel frames: their state's colour, toward orange"));
	/* A kernel frame's fill is not its user neighbour's palette shade. */
	assert_string_not_equal(strstr(strstr(svg, "<title>vfs_read [kernel]"), "fill="),
				strstr(strstr(svg, "<title>read\n"), "fill="));
	/* "Reset Search" (12 characters of 12 px * 0.59) ends inside the 1200 px picture. */
	p = strstr(svg, "<text id=\"search\" x=\"");
	assert_non_null(p);
	x = strtod(p + strlen("<text id=\"search\" x=\""), NULL);
	assert_true(x + 12 * 12 * 0.59 <= 1200 - 10);
	assert_non_null(strstr(svg, "data-inverted=\"0\""));
	/* Bottom up: a callee above (a smaller y than) its caller. */
	assert_true(frame_y(svg, "read") < frame_y(svg, "main"));
	inv = render(f, &(struct flame_svg_opts){.width = 1200, .inverted = true});
	assert_non_null(strstr(inv, "data-inverted=\"1\""));
	assert_non_null(strstr(inv, ">Icicle Graph</text>"));
	assert_true(frame_y(inv, "read") > frame_y(inv, "main"));
	assert_true(frame_y(inv, "t") < frame_y(inv, "main"));
	/* The script's zoom reads the direction. */
	assert_non_null(strstr(inv, "INV ? y < ymin : y > ymin"));
	free(svg);
	free(inv);
	flame__free(f);
}

/*
 * --reverse: stacks go in leaf first, so where they end is the root's
 * child, merged across callers, and the callers stand above it. A folded
 * line parsed and a stack with frame categories go the same way; a diff
 * walks its path back the same way.
 */
static void test_reversed(void **state)
{
	struct flame *f = flame__new(), *d = flame__new();
	char *svg;

	assert_non_null(f);
	flame__set_reversed(f, true);
	assert_int_equal(flame__add(f, (const char *[]){"main", "a", "read"}, 3, 30, 0), 0);
	assert_int_equal(flame__add(f, (const char *[]){"main", "b", "read"}, 3, 10, 0), 0);
	assert_int_equal(flame__parse_folded(f, "main;b;write 5\n", 15, 0, NULL), 0);
	assert_int_equal(
	    flame__add_ex(f, (const char *[]){"t", "read"}, (const int[]){-1, 2}, 2, 1, 0), 0);
	svg = render(f, &(struct flame_svg_opts){.units = "samples"});
	/* read is one frame of 41 under the root, its callers above it. */
	assert_non_null(strstr(svg, "<title>read\n41 samples"));
	assert_non_null(strstr(svg, "<title>write\n5 samples"));
	assert_non_null(strstr(svg, "<title>a\n30 samples"));
	assert_non_null(
	    strstr(svg, "<title>b\n10 samples"));	  /* b under read; b under write apart */
	assert_int_equal(count(svg, "<title>main\n"), 3); /* above a, b (read) and b (write) */
	assert_true(frame_y(svg, "read") > frame_y(svg, "a"));
	assert_true(frame_y(svg, "a") > frame_y(svg, "main"));
	free(svg);
	flame__free(f);

	assert_non_null(d);
	flame__set_reversed(d, true);
	assert_int_equal(flame__add_diff(d, (const char *[]){"main", "read"}, 2, 10, 30), 0);
	svg = render(d, &(struct flame_svg_opts){.units = "ns"});
	assert_non_null(strstr(svg, "<title>read\n"));
	assert_true(frame_y(svg, "read") > frame_y(svg, "main"));
	assert_non_null(strstr(svg, "grown: baseline 10 ns, new 30 ns"));
	free(svg);
	flame__free(d);
}

/* Every colour a frame is drawn in is in the legend, with no time of its own too. */
static void test_legend_names_every_colour_drawn(void **state)
{
	struct flame *f = flame__new();
	char *svg;

	assert_non_null(f);
	flame__set_category(f, 0, "command", FLAME_PAL_HOT);
	flame__set_category(f, 3, "trap", FLAME_PAL_PURPLE);
	flame__set_category(f, 4, "unused", FLAME_PAL_GREEN);
	assert_int_equal(flame__add_ex(f, (const char *[]){"TRAP (EXIT)", "echo"},
				       (const int[]){3, 0}, 2, 100, 0),
			 0);
	svg = render(f, &(struct flame_svg_opts){.units = "ns"});
	assert_non_null(strstr(svg, ">command 100 ns (100.0%)</text>"));
	assert_non_null(strstr(svg, ">trap (frames)</text>"));
	assert_null(strstr(svg, ">unused"));
	free(svg);
	flame__free(f);
}

/*
 * A legend wider than the picture goes on in rows below, and the frames move
 * down under it: every legend text ends inside the width (as the browser
 * measures it, 12 px at 0.59 em a character), and no frame starts above the
 * last row.
 */
static void test_legend_wraps_to_the_width(void **state)
{
	static const char *const names[] = {"on-CPU", "runqueue", "sleeping (S)",
					    "uninterruptible (D)", "stopped"};
	struct flame *f = flame__new();
	int rows = 0, top_frame = 1 << 30;
	char *svg;

	assert_non_null(f);
	for (int c = 0; c < 5; c++) {
		flame__set_category(f, c, names[c], FLAME_PAL_HOT);
		assert_int_equal(flame__add(f, (const char *[]){"main", names[c], "read_[k]"}, 3,
					    123456789 + c, c),
				 0);
	}
	svg = render(f, &(struct flame_svg_opts){.units = "ns", .width = 500});
	for (const char *p = strstr(svg, "<text x=\""); p; p = strstr(p + 1, "<text x=\"")) {
		int x, y, n;
		const char *b, *e;

		if (sscanf(p, "<text x=\"%d\" y=\"%d\">", &x, &y) != 2 || y < 50 || y > 200)
			continue;
		/* the legend's rows: y 54, 70, ... (the frames' labels are not in a row of their own) */
		if ((y - 54) % 16)
			continue;
		b = strchr(p, '>') + 1;
		e = strstr(b, "</text>");
		n = (int)(e - b);
		assert_true(x + n * 12 * 0.59 <= 500 - 10 + 1);
		if ((y - 54) / 16 + 1 > rows)
			rows = (y - 54) / 16 + 1;
	}
	assert_true(rows >= 2);
	for (const char *p = strstr(svg, "<rect x=\""); p; p = strstr(p + 1, "<rect x=\"")) {
		double x, y;

		if (sscanf(p, "<rect x=\"%lf\" y=\"%lf\"", &x, &y) == 2 && strstr(p, "rx=") &&
		    strstr(p, "rx=") < strchr(p, '>') && y < top_frame)
			top_frame = (int)y;
	}
	assert_true(top_frame >= 44 + rows * 16);
	free(svg);
	flame__free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flamegraph_conventions),
	    cmocka_unit_test(test_values_are_inclusive),
	    cmocka_unit_test(test_parse_folded),
	    cmocka_unit_test(test_categories_colour_and_split),
	    cmocka_unit_test(test_frame_category_wins),
	    cmocka_unit_test(test_hostile_names),
	    cmocka_unit_test(test_narrow_frames_left_out),
	    cmocka_unit_test(test_long_labels_cut),
	    cmocka_unit_test(test_json),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_golden_small),
	    cmocka_unit_test(test_reversed),
	    cmocka_unit_test(test_legend_names_every_colour_drawn),
	    cmocka_unit_test(test_legend_wraps_to_the_width),
	};

	return cmocka_run_group_tests_name("flame", tests, NULL, NULL);
}
