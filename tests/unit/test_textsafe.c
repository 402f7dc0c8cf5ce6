// SPDX-License-Identifier: MIT
/* lib/textsafe: each sink on hostile text (escape sequences, workflow commands, bad UTF-8). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "unit.h"

#include "textsafe.h"

/* Hostile inputs shared by the tests. */
#define CSI_RED	  "\033[31mred\033[0m"
#define OSC_TITLE "\033]0;owned\007"
#define C1_CSI_RAW \
	"\x9b"     \
	"31m" /* 8-bit CSI, a stray byte */
#define C1_CSI_U8  \
	"\xc2\x9b" \
	"31m" /* U+009B, well formed */
#define GH_INJECT "x\n::error::pwned"
#define SURROGATE "\xed\xa0\x80"
#define OVERLONG  "\xc0\xaf"

static char *run(textsafe_fn *fn, const char *s, size_t len)
{
	char *out = textsafe_dup(fn, s, len);

	assert_non_null(out);
	return out;
}

static void expect(textsafe_fn *fn, const char *in, size_t len, const char *want)
{
	char *got = run(fn, in, len);

	assert_string_equal(got, want);
	free(got);
}

#define EXPECT(fn, in, want) expect(fn, in, sizeof(in) - 1, want)

/* Is s well-formed UTF-8 (Unicode's table 3-7)? */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t need;
		unsigned char lo = 0x80, hi = 0xbf;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 2;
		else if (c >= 0xe0 && c <= 0xef)
			need = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		else
			return false;
		if (i + need > n || s[i + 1] < lo || s[i + 1] > hi)
			return false;
		for (size_t k = 2; k < need; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xbf)
				return false;
		i += need;
	}
	return true;
}

/* No C0, DEL or C1 (as bytes or as well-formed characters) in s. */
static bool no_controls(const unsigned char *s, size_t n, bool allow_layout)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] < 0x20 &&
		    !(allow_layout && (s[i] == '\t' || s[i] == '\n' || s[i] == '\r')))
			return false;
		if (s[i] == 0x7f || (s[i] >= 0x80 && s[i] <= 0x9f && (!i || s[i - 1] == 0xc2)))
			return false;
	}
	return true;
}

/* A line GitHub's runner would take as a workflow command: "::" after white space, or "##[". */
static bool workflow_command(const char *s)
{
	while (*s == ' ')
		s++;
	return !strncmp(s, "::", 2) || strstr(s, "##[");
}

static void test_term_escape_sequences(void **state)
{
	EXPECT(textsafe_term, CSI_RED, "\\x1b[31mred\\x1b[0m");
	EXPECT(textsafe_term, OSC_TITLE, "\\x1b]0;owned\\x07");
	EXPECT(textsafe_term, C1_CSI_RAW, "\\x9b31m");
	EXPECT(textsafe_term, C1_CSI_U8, "\\u009b31m");
	EXPECT(textsafe_term, "a\tb\nc\rd\x7f", "a\\tb\\nc\\rd\\x7f");
	EXPECT(textsafe_term, "a\0b", "a\\x00b");
	/* Trojan Source: the bidirectional overrides are shown, not obeyed. */
	EXPECT(textsafe_term,
	       "ab\xe2\x80\xae"
	       "cd\xe2\x81\xa6",
	       "ab\\u202ecd\\u2066");
	EXPECT(textsafe_term, "line\xe2\x80\xa8next", "line\\u2028next");
	/* Ordinary text is left alone, backslashes and all. */
	EXPECT(textsafe_term,
	       "sleep 0.1 | grep 'a\\nb' > /dev/null # \xc3\xa9t\xc3\xa9 \xe6\x97\xa5",
	       "sleep 0.1 | grep 'a\\nb' > /dev/null # \xc3\xa9t\xc3\xa9 \xe6\x97\xa5");
}

static void test_term_bad_utf8(void **state)
{
	EXPECT(textsafe_term, SURROGATE, "\\xed\\xa0\\x80");
	EXPECT(textsafe_term, OVERLONG, "\\xc0\\xaf");
	EXPECT(textsafe_term, "\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	EXPECT(textsafe_term, "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	EXPECT(textsafe_term,
	       "\xf0\x9f\x98"
	       "a",
	       "\\xf0\\x9f\\x98a"); /* cut: one subpart */
	EXPECT(textsafe_term, "\xff\xfe", "\\xff\\xfe");
	EXPECT(textsafe_term, "\xe2\x82", "\\xe2\\x82");
	EXPECT(textsafe_term, "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"); /* a well-formed emoji */
}

static void test_term_workflow_commands(void **state)
{
	EXPECT(textsafe_term, GH_INJECT, "x\\n::error::pwned"); /* no new line: no command */
	EXPECT(textsafe_term, "::error::pwned", "\\x3a:error::pwned");
	EXPECT(textsafe_term, "  ::warning file=x::y", "  \\x3a:warning file=x::y");
	EXPECT(textsafe_term, "\xc2\xa0::error::y", "\xc2\xa0\\x3a:error::y"); /* NBSP trims too */
	EXPECT(textsafe_term, "a ##[error]b", "a ##\\x5berror]b");
	EXPECT(textsafe_term, "##[set-output name=x]y", "##\\x5bset-output name=x]y");
	/* C++ and paths keep their colons; one '#' or '[' is not a command. */
	EXPECT(textsafe_term, "std::vector::at", "std::vector::at");
	EXPECT(textsafe_term, ":x ::y #[a] ##", ":x ::y #[a] ##");
}

static void test_term_width_and_cells(void **state)
{
	char cell[128];

	assert_int_equal(textsafe_term_width("abc", TEXTSAFE_NUL), 3);
	assert_int_equal(textsafe_term_width("\033", TEXTSAFE_NUL), 4);
	assert_int_equal(textsafe_term_width("\xe6\x97\xa5\xe6\x9c\xac", TEXTSAFE_NUL), 4);
	assert_int_equal(textsafe_term_width("e\xcc\x81", TEXTSAFE_NUL), 1); /* e + acute */
	assert_int_equal(textsafe_term_width("\xc3\xa9", TEXTSAFE_NUL), 1);

	textsafe_term_cell(cell, sizeof(cell), "sleep", TEXTSAFE_NUL, 8);
	assert_string_equal(cell, "sleep   ");
	/* Escapes count what they show; a cut never splits one. */
	textsafe_term_cell(cell, sizeof(cell), "\033]0;x\007", TEXTSAFE_NUL, 16);
	assert_string_equal(cell, "\\x1b]0;x\\x07    ");
	textsafe_term_cell(cell, sizeof(cell), "\033\033\033\033\033", TEXTSAFE_NUL, 10);
	assert_string_equal(cell, "\\x1b\\x1b  ");
	assert_int_equal(textsafe_term_width(cell, TEXTSAFE_NUL), 10);
	/* A wide character that would cross the edge is left for padding. */
	textsafe_term_cell(cell, sizeof(cell), "a\xe6\x97\xa5\xe6\x9c\xac", TEXTSAFE_NUL, 4);
	assert_string_equal(cell, "a\xe6\x97\xa5 ");
	textsafe_term_cell(cell, sizeof(cell), "0123456789abcdefXYZ", TEXTSAFE_NUL, 16);
	assert_string_equal(cell, "0123456789abcdef");

	textsafe_term_tail(cell, sizeof(cell), "short", TEXTSAFE_NUL, 10);
	assert_string_equal(cell, "short");
	textsafe_term_tail(cell, sizeof(cell), "0123456789abcdef", TEXTSAFE_NUL, 10);
	assert_string_equal(cell, "...9abcdef");
	textsafe_term_tail(cell, sizeof(cell), "0123456789\033x", TEXTSAFE_NUL, 10);
	assert_string_equal(cell, "...89\\x1bx"); /* the escape whole, within 10 columns */
	assert_true(textsafe_term_width(cell, TEXTSAFE_NUL) <= 10);
}

static void test_truncation_keeps_units(void **state)
{
	char buf[8];
	size_t n;

	/* snprintf's contract: the full length back, whole escapes in the buffer. */
	n = textsafe_term(buf, sizeof(buf), "ab\033cd", TEXTSAFE_NUL);
	assert_int_equal(n, 8);
	assert_string_equal(buf, "ab\\x1bc");
	n = textsafe_term(buf, 5, "ab\033cd", TEXTSAFE_NUL);
	assert_string_equal(buf, "ab");
	n = textsafe_term(buf, 6, "a\xe6\x97\xa5\xe6\x9c\xac", TEXTSAFE_NUL);
	assert_string_equal(buf, "a\xe6\x97\xa5");
	assert_int_equal(textsafe_term(NULL, 0, NULL, TEXTSAFE_NUL), 0);
	assert_int_equal(textsafe_term(NULL, 0, "\033", TEXTSAFE_NUL), 4);
	/* An explicit length: the NUL is text like any other byte. */
	assert_int_equal(textsafe_term(buf, sizeof(buf), "a\0b", 3), 6);
	assert_string_equal(buf, "a\\x00b");
}

static void test_gh(void **state)
{
	EXPECT(textsafe_gh_data, "50% of \r\n::error::x", "50%25 of %0D%0A::error::x");
	EXPECT(textsafe_gh_data, CSI_RED, "\\x1b[31mred\\x1b[0m");
	EXPECT(textsafe_gh_data, OSC_TITLE C1_CSI_RAW, "\\x1b]0;owned\\x07\\x9b31m");
	EXPECT(textsafe_gh_data, SURROGATE, "\\xed\\xa0\\x80");
	EXPECT(textsafe_gh_data, "a:b,c", "a:b,c");
	EXPECT(textsafe_gh_prop, "a:b,c%\n", "a%3Ab%2Cc%25%0A");
	EXPECT(textsafe_gh_prop, "t::error::x\033", "t%3A%3Aerror%3A%3Ax\\x1b");
}

static void test_gh_annotation_stays_one_line(void **state)
{
	/* Whatever the message holds, a command is one line that starts with its own "::". */
	const char *hostile[] = {GH_INJECT, "\r::warning::x", "%0A::error::x", "\xe2\x80\xa8::x",
				 "\x85::x"};

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		char *d = run(textsafe_gh_data, hostile[i], TEXTSAFE_NUL);

		assert_null(strchr(d, '\n'));
		assert_null(strchr(d, '\r'));
		assert_true(no_controls((const unsigned char *)d, strlen(d), false));
		assert_true(utf8_valid((const unsigned char *)d, strlen(d)));
		free(d);
	}
}

static void test_md(void **state)
{
	EXPECT(textsafe_md, "a|b", "a\\|b");
	EXPECT(textsafe_md, "`x` *y* _z_ ~w~ $m$", "\\`x\\` \\*y\\* \\_z\\_ \\~w\\~ \\$m\\$");
	EXPECT(textsafe_md, "<img src=x onerror=alert(1)>", "\\<img src=x onerror=alert(1)\\>");
	EXPECT(textsafe_md, "&amp; [l](http://x) # h", "\\&amp; \\[l\\](http://x) \\# h");
	EXPECT(textsafe_md, "a\nb\tc\r", "a\\nb\\tc\\r");
	EXPECT(textsafe_md, CSI_RED, "\\x1b\\[31mred\\x1b\\[0m");
	EXPECT(textsafe_md, "::error::x", "\\::error::x");
	EXPECT(textsafe_md, "##[error]x", "\\#\\#\\[error\\]x");
	EXPECT(textsafe_md, OVERLONG "\\", "\\xc0\\xaf\\\\");
	EXPECT(textsafe_md, "sleep 0.1", "sleep 0.1");
}

/* A Markdown table row keeps its cells: no unescaped pipe, no line break. */
static void test_md_cell_keeps_columns(void **state)
{
	const char *hostile[] = {"a|b", "a\\|b",  "a\n| x | y |", "`|`",
				 "\\",	"a\r\nb", "<td>x</td>"};

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		char *m = run(textsafe_md, hostile[i], TEXTSAFE_NUL);
		int backslashes = 0;

		assert_null(strchr(m, '\n'));
		assert_null(strchr(m, '\r'));
		for (const char *p = m; *p; p++) {
			if (*p == '|' || *p == '<' || *p == '`')
				assert_int_equal(backslashes % 2, 1); /* escaped */
			backslashes = *p == '\\' ? backslashes + 1 : 0;
		}
		assert_int_equal(backslashes % 2, 0); /* nothing escapes what follows the cell */
		free(m);
	}
}

static void test_md_code(void **state)
{
	EXPECT(textsafe_md_code, "make -j2", "` make -j2 `");
	EXPECT(textsafe_md_code, "a `b` c", "`` a `b` c ``");
	EXPECT(textsafe_md_code, "a``b", "``` a``b ```");
	EXPECT(textsafe_md_code, "x\ny" OSC_TITLE, "` x\\ny\\x1b]0;owned\\x07 `");
	EXPECT(textsafe_md_code, "<b>*x*</b>", "` <b>*x*</b> `");
	EXPECT(textsafe_md_code, SURROGATE, "` \\xed\\xa0\\x80 `");
	/* Nothing is escaped in a code span: "##[" is written as text instead. */
	EXPECT(textsafe_md_code, "echo ##[error]x", "echo \\#\\#\\[error\\]x");
	EXPECT(textsafe_md_code, NULL, "`  `");
}

static void test_xml(void **state)
{
	EXPECT(textsafe_xml, "<a href=\"x\">'&'</a>",
	       "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;");
	EXPECT(textsafe_xml, "a\tb\nc\rd", "a&#9;b&#10;c&#13;d");
	/* Not allowed in XML 1.0 even as references: shown instead. */
	EXPECT(textsafe_xml, "\033[31m\001\x7f", "\\x1b[31m\\x01\\x7f");
	EXPECT(textsafe_xml, "a\0b", "a\\x00b");
	EXPECT(textsafe_xml, "\xef\xbf\xbe\xef\xbf\xbf", "\\ufffe\\uffff");
	EXPECT(textsafe_xml, C1_CSI_U8 C1_CSI_RAW, "\\u009b31m\\x9b31m");
	EXPECT(textsafe_xml, SURROGATE OVERLONG, "\\xed\\xa0\\x80\\xc0\\xaf");
	EXPECT(textsafe_xml, "::error::x ##[warning]y", "&#58;:error::x ##&#91;warning]y");
	EXPECT(textsafe_xml, "main;f\xc3\xa9;\xe6\x97\xa5", "main;f\xc3\xa9;\xe6\x97\xa5");
}

static void test_xml_cut(void **state)
{
	char buf[64];

	textsafe_xml_cut(buf, sizeof(buf), "abcdef", TEXTSAFE_NUL, 6);
	assert_string_equal(buf, "abcdef");
	textsafe_xml_cut(buf, sizeof(buf), "abcdefg", TEXTSAFE_NUL, 6);
	assert_string_equal(buf, "abcd..");
	/* An entity is one character; a cut never splits one. */
	textsafe_xml_cut(buf, sizeof(buf), "a&b&c&d", TEXTSAFE_NUL, 6);
	assert_string_equal(buf, "a&amp;b&amp;..");
	textsafe_xml_cut(buf, sizeof(buf), "ab\033cdef", TEXTSAFE_NUL, 6);
	assert_string_equal(buf, "ab..");
}

/* XML 1.0's Char production. */
static bool xml_chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!utf8_valid(p, strlen(s)))
		return false;
	for (; *p; p++) {
		if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
			return false;
		if (p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
			return false;
	}
	return true;
}

static void test_json(void **state)
{
	EXPECT(textsafe_json, "a\"b\\c", "a\\\"b\\\\c");
	EXPECT(textsafe_json, "\b\f\n\r\t\001\033", "\\b\\f\\n\\r\\t\\u0001\\u001b");
	EXPECT(textsafe_json, "\x7f" C1_CSI_U8 "\xe2\x80\xa8\xe2\x80\xae",
	       "\\u007f\\u009b31m\\u2028\\u202e");
	/* Ill-formed: one U+FFFD per maximal subpart, as Python's errors='replace'. */
	EXPECT(textsafe_json, C1_CSI_RAW, "\\ufffd31m");
	EXPECT(textsafe_json, SURROGATE, "\\ufffd\\ufffd\\ufffd");
	EXPECT(textsafe_json, OVERLONG, "\\ufffd\\ufffd");
	EXPECT(textsafe_json,
	       "\xf0\x9f\x98"
	       "a",
	       "\\ufffda");
	EXPECT(textsafe_json, "\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd");
	EXPECT(textsafe_json, "a\0b", "a\\u0000b");
	EXPECT(textsafe_json, "::error::x ##[y]", "\\u003a:error::x ##\\u005by]");
	EXPECT(textsafe_json, "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80",
	       "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80");
}

/* What a JSON parser reads back from textsafe_json's string. */
static void test_json_reads_back(void **state)
{
	static const struct {
		const char *in, *back;
	} cases[] = {
	    {CSI_RED, CSI_RED},
	    {C1_CSI_U8, C1_CSI_U8},
	    {C1_CSI_RAW, "\xef\xbf\xbd"
			 "31m"},
	    {SURROGATE, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
	    {GH_INJECT, GH_INJECT},
	    {"##[x] \"q\" \\", "##[x] \"q\" \\"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *e = run(textsafe_json, cases[i].in, TEXTSAFE_NUL), *doc;
		cJSON *j;

		assert_true(asprintf(&doc, "[\"%s\"]", e) > 0);
		j = cJSON_Parse(doc);
		assert_non_null(j);
		assert_string_equal(cJSON_GetArrayItem(j, 0)->valuestring, cases[i].back);
		cJSON_Delete(j);
		free(doc);
		free(e);
	}
}

static void test_json_doc(void **state)
{
	cJSON *o = cJSON_CreateObject(), *back;
	char *printed, *fixed;

	/* cJSON copies every byte it does not have to escape: the document is not UTF-8. */
	cJSON_AddStringToObject(o, "comm", "a" C1_CSI_RAW SURROGATE "\x7f" C1_CSI_U8 "##[x]");
	printed = cJSON_PrintUnformatted(o);
	assert_false(utf8_valid((const unsigned char *)printed, strlen(printed)));
	fixed = run(textsafe_json_doc, printed, TEXTSAFE_NUL);
	assert_string_equal(fixed, "{\"comm\":\"a\\ufffd31m\\ufffd\\ufffd\\ufffd\\u007f\\u009b31m"
				   "##\\u005bx]\"}");
	back = cJSON_Parse(fixed);
	assert_non_null(back);
	assert_string_equal(cJSON_GetObjectItem(back, "comm")->valuestring,
			    "a\xef\xbf\xbd"
			    "31m\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\x7f\xc2\x9b"
			    "31m##[x]");
	cJSON_Delete(back);
	free(fixed);
	cJSON_free(printed);
	/* A formatted document keeps its layout; a clean one is unchanged. */
	EXPECT(textsafe_json_doc, "{\n\t\"a\":\t\"b\\u0001\"\n}", "{\n\t\"a\":\t\"b\\u0001\"\n}");
	cJSON_Delete(o);
}

/* A document for an HTML script element: nothing in a string can close or open one. */
static void test_json_html(void **state)
{
	const char *doc = "{\"comm\":\"</script><img src=x onerror=alert(1)><!-- \xe2\x80\xa8&\","
			  "\"n\":[1,2]}";
	char *fixed = run(textsafe_json_html, doc, TEXTSAFE_NUL);
	cJSON *back;

	assert_null(strchr(fixed, '<'));
	assert_null(strchr(fixed, '>'));
	assert_null(strchr(fixed, '&'));
	assert_null(strstr(fixed, "\xe2\x80\xa8"));
	assert_string_equal(fixed, "{\"comm\":\"\\u003c/script\\u003e\\u003cimg src=x "
				   "onerror=alert(1)\\u003e\\u003c!-- \\u2028\\u0026\","
				   "\"n\":[1,2]}");
	back = cJSON_Parse(fixed);
	assert_non_null(back);
	assert_string_equal(cJSON_GetObjectItem(back, "comm")->valuestring,
			    "</script><img src=x onerror=alert(1)><!-- \xe2\x80\xa8&");
	cJSON_Delete(back);
	free(fixed);
	/* Ill-formed bytes as in any JSON sink; a clean document without the three is unchanged. */
	EXPECT(textsafe_json_html, "[\"\xff\"]", "[\"\\ufffd\"]");
	EXPECT(textsafe_json_html, "{\n\t\"a\": 1}", "{\n\t\"a\": 1}");
}

/*
 * Random bytes, biased to the hostile ones, through every sink: each result
 * is well-formed UTF-8 without controls (JSON parses), and a short buffer
 * holds a prefix of the whole.
 */
static void test_random_bytes(void **state)
{
	static const unsigned char pick[] = {0x1b, 0x9b, 0x07, '\n', '\r', '\t', ':',  '#',  '[',
					     '%',  '|',	 '<',  '&',  '"',  '\\', 0xc2, 0xe2, 0x80,
					     0xa8, 0xed, 0xa0, 0xf0, 0xf4, 0x90, 0xff, 'a'};
	textsafe_fn *const fns[] = {textsafe_term, textsafe_gh_data,  textsafe_gh_prop,
				    textsafe_md,   textsafe_md_code,  textsafe_xml,
				    textsafe_json, textsafe_json_doc, textsafe_json_html};
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (int iter = 0; iter < 20000; iter++) {
		unsigned char in[24];
		size_t n = (size_t)(iter % 23) + 1;

		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			in[i] = (x & 1) ? pick[(x >> 8) % sizeof(pick)] : (unsigned char)(x >> 16);
		}
		for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
			char full[TEXTSAFE_SIZE(24)], part[TEXTSAFE_SIZE(24)];
			size_t len = fns[f]((char *)full, sizeof(full), (const char *)in, n), cut;

			assert_true(len < TEXTSAFE_SIZE(n));
			assert_int_equal(strlen(full), len);
			assert_true(utf8_valid((const unsigned char *)full, len));
			assert_true(no_controls((const unsigned char *)full, len,
						fns[f] == textsafe_json_doc ||
						    fns[f] == textsafe_json_html));
			if (fns[f] == textsafe_json_html)
				assert_true(!strpbrk(full, "<>&"));
			if (fns[f] != textsafe_json_doc && fns[f] != textsafe_json_html) {
				assert_false(workflow_command(full) && fns[f] != textsafe_gh_data &&
					     fns[f] != textsafe_gh_prop &&
					     fns[f] != textsafe_md_code);
			}
			if (fns[f] == textsafe_xml)
				assert_true(xml_chars(full));
			if (fns[f] == textsafe_json) {
				char doc[TEXTSAFE_SIZE(24) + 4];
				cJSON *j;

				snprintf(doc, sizeof(doc), "[\"%s\"]", full);
				j = cJSON_Parse(doc);
				assert_non_null(j);
				cJSON_Delete(j);
			}
			cut = (size_t)(x >> 32) % (len + 1);
			assert_int_equal(fns[f](part, cut + 1, (const char *)in, n), len);
			assert_true(strlen(part) <= cut);
			assert_memory_equal(part, full, strlen(part));
			assert_true(utf8_valid((const unsigned char *)part, strlen(part)));
		}
	}
}

static void test_fput(void **state)
{
	char *text = NULL, big[2000];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(textsafe_fput(f, textsafe_term, OSC_TITLE, TEXTSAFE_NUL), 0);
	memset(big, '\033', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(textsafe_fput(f, textsafe_term, big, TEXTSAFE_NUL), 0);
	fclose(f);
	assert_int_equal(len, 16 + 4 * (sizeof(big) - 1));
	assert_memory_equal(text, "\\x1b]0;owned\\x07\\x1b", 20);
	assert_true(no_controls((const unsigned char *)text, len, false));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_term_escape_sequences),
	    cmocka_unit_test(test_term_bad_utf8),
	    cmocka_unit_test(test_term_workflow_commands),
	    cmocka_unit_test(test_term_width_and_cells),
	    cmocka_unit_test(test_truncation_keeps_units),
	    cmocka_unit_test(test_gh),
	    cmocka_unit_test(test_gh_annotation_stays_one_line),
	    cmocka_unit_test(test_md),
	    cmocka_unit_test(test_md_cell_keeps_columns),
	    cmocka_unit_test(test_md_code),
	    cmocka_unit_test(test_xml),
	    cmocka_unit_test(test_xml_cut),
	    cmocka_unit_test(test_json),
	    cmocka_unit_test(test_json_reads_back),
	    cmocka_unit_test(test_json_doc),
	    cmocka_unit_test(test_json_html),
	    cmocka_unit_test(test_random_bytes),
	    cmocka_unit_test(test_fput),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
