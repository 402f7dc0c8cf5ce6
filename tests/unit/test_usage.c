// SPDX-License-Identifier: MIT
/*
 * --help, the man page and the parser cannot disagree: every option of each
 * mode's parser table (options_long_table, options_short_table) is in
 * --help and in doc/tsarun.1, with a value exactly when the parser takes
 * one and under the same short letter, and neither names an option the
 * parser does not have. For a command's run (and -p, which shares its
 * table) the option lists are compared; for the subcommands, every synopsis
 * (--help's usage lines, the man page's SYNOPSIS and its SUBCOMMANDS entry).
 * The completion scripts are held to --help by 14-completion. And --help
 * fits 80 columns.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "fixtures.h"
#include "options.h"

#define MAX_OPTS 128

struct doc_opt {
	char name[40]; /* without "--"; "" for a short option alone */
	char letter;   /* its short option, 0 if none */
	bool arg;      /* shown with a value / takes one */
};

struct doc_set {
	const char *where;
	struct doc_opt v[MAX_OPTS];
	size_t n;
};

static struct doc_opt *set_find(struct doc_set *s, const char *name, char letter)
{
	for (size_t i = 0; i < s->n; i++)
		if ((*name && !strcmp(s->v[i].name, name)) || (letter && s->v[i].letter == letter))
			return &s->v[i];
	return NULL;
}

/* Adds an option (once: an option shown twice, as --sort is, must agree with itself). */
static void set_add(struct doc_set *s, const char *name, size_t len, char letter, bool arg)
{
	char n[40];
	struct doc_opt *o;

	assert_true(len < sizeof(n));
	memcpy(n, name, len);
	n[len] = '\0';
	o = set_find(s, n, letter);
	if (o) {
		if (o->arg != arg)
			fail_msg("%s shows --%s both with and without a value", s->where, n);
		if (letter && !o->letter)
			o->letter = letter;
		if (*n && !*o->name)
			snprintf(o->name, sizeof(o->name), "%s", n);
		return;
	}
	assert_true(s->n < MAX_OPTS);
	o = &s->v[s->n++];
	snprintf(o->name, sizeof(o->name), "%s", n);
	o->letter = letter;
	o->arg = arg;
}

/* The parser's options of a mode, aliases (a later entry of the same value) left out. */
static void from_parser(struct doc_set *s, enum tsarun_mode mode, bool with_help)
{
	const struct option *t = options_long_table(mode), *l;
	const char *shorts = options_short_table(mode);

	assert_non_null(t);
	assert_non_null(shorts);
	s->where = "the parser";
	for (l = t; l->name; l++) {
		const struct option *e = t;

		while (e < l && e->val != l->val)
			e++;
		if (e < l || (!with_help && !strcmp(l->name, "help")))
			continue;
		set_add(s, l->name, strlen(l->name), 0, l->has_arg != no_argument);
	}
	for (const char *c = shorts; *c; c++) {
		bool arg = c[1] == ':';

		if (*c == '+' || *c == ':' || (!with_help && *c == 'h'))
			continue;
		for (l = t; l->name && l->val != *c; l++)
			;
		if (!l->name)
			fail_msg("the parser's -%c of mode %d has no long option", *c, (int)mode);
		if ((l->has_arg != no_argument) != arg)
			fail_msg("the parser's -%c and --%s differ on taking a value", *c, l->name);
		set_find(s, l->name, 0)->letter = *c;
		c += arg;
	}
}

/* man(7) text as read: no font changes, "\-" as '-', no quotes. */
static char *demangle(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	assert_non_null(out);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len && s[i + 1] == 'f' && i + 2 < len) {
			i += 2;
			continue;
		}
		if (s[i] == '\\' && i + 1 < len && s[i + 1] == '-') {
			*o++ = '-';
			i++;
			continue;
		}
		if (s[i] != '"')
			*o++ = s[i];
	}
	*o = '\0';
	return out;
}

static size_t name_len(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '-')
		n++;
	return n;
}

/*
 * An option's heading: "-q, --quiet", "--json FILE", "-b, --backend LIST",
 * "--output table|json"; what follows the name before two spaces (--help's
 * column) or the end is its value.
 */
static void add_heading(struct doc_set *s, const char *h, bool help_column)
{
	char letter = 0;
	size_t n;

	while (*h == ' ' || *h == '.' || (*h >= 'A' && *h <= 'Z'))
		h++; /* the macro: .B, .BI, .BR */
	if (h[0] == '-' && h[1] != '-') {
		letter = h[1];
		h += 2;
		while (*h == ' ' || *h == ',')
			h++;
	}
	if (strncmp(h, "--", 2))
		fail_msg("%s: '%s' is no option heading", s->where, h);
	h += 2;
	n = name_len(h);
	if (help_column)
		/* --help: the value one space after the name, the text two spaces on */
		set_add(s, h, n, letter, h[n] == ' ' && h[n + 1] != ' ' && h[n + 1] != '\n');
	else
		set_add(s, h, n, letter, h[n + strspn(h + n, " ")] != '\0');
}

/* --help's option lines ("  -q, --quiet", "      --json FILE") before its subcommands. */
static void from_help(struct doc_set *s, const char *usage)
{
	const char *end = strstr(usage, "\nSubcommands:\n");

	s->where = "--help";
	assert_non_null(end);
	for (const char *l = usage; l && l < end; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (!strncmp(l, "  -", 3) && l[3] != '-' && l[4] == ',')
			add_heading(s, l + 2, true);
		else if (!strncmp(l, "      --", 8))
			add_heading(s, l + 6, true);
	}
}

/* The man page's headings of .TP items under OPTIONS. */
static void from_man(struct doc_set *s, const char *man)
{
	const char *l = strstr(man, "\n.SH OPTIONS\n"), *end = strstr(man, "\n.SH SUBCOMMANDS\n");

	s->where = "doc/tsarun.1 OPTIONS";
	assert_true(l && end && l < end);
	while ((l = strstr(l, "\n.TP\n")) && l < end) {
		const char *h = l + 5, *e = strchr(h, '\n');
		char *t = demangle(h, (size_t)(e - h));

		add_heading(s, t, false);
		free(t);
		l = e;
	}
}

/* A synopsis' options: each "[--name VALUE]", "[--flag]" or "[-q]". */
static void from_synopsis(struct doc_set *s, const char *text)
{
	for (const char *b = strchr(text, '['); b; b = strchr(b + 1, '[')) {
		const char *e = strchr(b, ']'), *h = b + 1;
		char letter = 0;
		size_t n = 0;

		assert_non_null(e);
		if (*h != '-')
			continue; /* [ARG...], [OPTIONS] */
		if (h[1] != '-') {
			letter = h[1];
			h += 2;
		} else {
			h += 2;
			n = name_len(h);
		}
		set_add(s, h, n, letter, h + n + strspn(h + n, " \n") < e);
	}
}

/*
 * The synopsis of one form in --help's usage lines: the line naming it
 * ("tsarun compare", "tsarun -p") and its continuations, up to the next form.
 */
static char *help_synopsis(const char *usage, const char *form)
{
	const char *b = strstr(usage, form), *e;

	assert_non_null(b);
	e = strstr(b + 1, "\n       tsarun ");
	if (!e)
		e = strstr(b, "\n\n");
	return strndup(b, (size_t)(e - b));
}

/*
 * The man page's SYNOPSIS entry of a form, demangled: the one from ".B
 * tsarun" to ".br" that starts with form (".B tsarun compare\n", or
 * ".B tsarun\n-p " for a form named by its first option).
 */
static char *man_synopsis(const char *man, const char *form)
{
	const char *b = strstr(man, "\n.SH SYNOPSIS\n"), *end = strstr(man, "\n.SH DESCRIPTION\n");

	assert_true(b && end);
	for (b = strstr(b, "\n.B tsarun"); b && b < end; b = strstr(b + 1, "\n.B tsarun")) {
		const char *e = strstr(b + 1, "\n.br\n");
		char *d;

		if (!e || e > end)
			e = end;
		d = demangle(b + 1, (size_t)(e - b - 1));
		if (!strncmp(d, form, strlen(form)))
			return d;
		free(d);
	}
	fail_msg("doc/tsarun.1 has no SYNOPSIS entry '%s'", form);
	return NULL;
}

/* The man page's SUBCOMMANDS heading of a subcommand (".TP\n.B compare ..."), demangled. */
static char *man_subcommand(const char *man, const char *sub)
{
	char key[64];
	const char *b, *e;

	snprintf(key, sizeof(key), "\n.TP\n.B %s ", sub);
	b = strstr(strstr(man, "\n.SH SUBCOMMANDS\n"), key);
	if (!b)
		fail_msg("doc/tsarun.1 SUBCOMMANDS has no '%s' entry", sub);
	b += 4;
	e = strchr(b + 1, '\n');
	return demangle(b, (size_t)(e - b));
}

/*
 * Every option of want is in got, the same way (under the same short
 * letter too, with letters: a synopsis shows an option by either); got
 * has nothing else.
 */
static void assert_same(struct doc_set *want, struct doc_set *got, bool letters)
{
	for (size_t i = 0; i < want->n; i++) {
		const struct doc_opt *w = &want->v[i];
		/* a synopsis may show an option by its letter alone ([-q]) */
		const struct doc_opt *g = set_find(got, w->name, w->letter);

		if (!g)
			fail_msg("%s has --%s, %s does not", want->where, w->name, got->where);
		if (g->arg != w->arg)
			fail_msg("--%s takes %s in %s, %s in %s", w->name,
				 w->arg ? "a value" : "none", want->where,
				 g->arg ? "a value" : "none", got->where);
		if (letters && g->letter != w->letter)
			fail_msg("--%s: short option '%c' in %s, '%c' in %s", w->name,
				 w->letter ? w->letter : ' ', want->where,
				 g->letter ? g->letter : ' ', got->where);
	}
	for (size_t i = 0; i < got->n; i++) {
		const struct doc_opt *g = &got->v[i];

		if (!set_find(want, g->name, g->letter))
			fail_msg("%s shows %s%s%c, which %s does not have", got->where,
				 *g->name ? "--" : "-", g->name, *g->name ? ' ' : g->letter,
				 want->where);
	}
}

static char *man_page(void)
{
	char *text = fx_read_file("doc/tsarun.1", NULL);

	assert_non_null(text);
	return text;
}

static void test_run_options(void **state)
{
	static struct doc_set parser, help, man;
	char *page = man_page();
	struct doc_opt *bash;

	(void)state;
	from_parser(&parser, MODE_RUN, true);
	/* --bash takes no value: the script and its arguments are the command */
	bash = set_find(&parser, "bash", 0);
	assert_non_null(bash);
	assert_false(bash->arg);
	bash->arg = true;
	from_help(&help, options_usage());
	from_man(&man, page);
	print_message("%zu options: parser %zu, --help %zu, man %zu\n", parser.n, parser.n, help.n,
		      man.n);
	assert_same(&parser, &help, true);
	assert_same(&parser, &man, true);
	free(page);
}

static void test_subcommand_synopses(void **state)
{
	static const struct {
		enum tsarun_mode mode;
		const char *name;
	} subs[] = {{MODE_COMPARE, "compare"}, {MODE_REPORT, "report"}, {MODE_DOCTOR, "doctor"}};
	char *page = man_page();

	(void)state;
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		static struct doc_set parser, help, syn, sub;
		char form[32], where[3][64], *t;

		memset(&parser, 0, sizeof(parser));
		memset(&help, 0, sizeof(help));
		memset(&syn, 0, sizeof(syn));
		memset(&sub, 0, sizeof(sub));
		from_parser(&parser, subs[i].mode, false);
		snprintf(form, sizeof(form), "tsarun %s ", subs[i].name);
		t = help_synopsis(options_usage(), form);
		snprintf(where[0], sizeof(where[0]), "--help's 'tsarun %s'", subs[i].name);
		help.where = where[0];
		from_synopsis(&help, t);
		free(t);
		snprintf(form, sizeof(form), ".B tsarun %s\n", subs[i].name);
		t = man_synopsis(page, form);
		snprintf(where[1], sizeof(where[1]), "doc/tsarun.1 SYNOPSIS 'tsarun %s'",
			 subs[i].name);
		syn.where = where[1];
		from_synopsis(&syn, t);
		free(t);
		t = man_subcommand(page, subs[i].name);
		snprintf(where[2], sizeof(where[2]), "doc/tsarun.1 SUBCOMMANDS '%s'", subs[i].name);
		sub.where = where[2];
		from_synopsis(&sub, t);
		free(t);
		print_message("%s: %zu options\n", subs[i].name, parser.n);
		assert_same(&parser, &help, false);
		assert_same(&parser, &syn, false);
		assert_same(&parser, &sub, false);
	}
	free(page);
}

/* tsarun -p: --help's and the man page's synopses agree, and the parser has each option. */
static void test_monitor_synopsis(void **state)
{
	static struct doc_set parser, help, man;
	char *page = man_page(), *t;

	(void)state;
	from_parser(&parser, MODE_RUN, false);
	t = help_synopsis(options_usage(), "tsarun -p ");
	help.where = "--help's 'tsarun -p'";
	from_synopsis(&help, t);
	free(t);
	t = man_synopsis(page, ".B tsarun\n-p ");
	man.where = "doc/tsarun.1 SYNOPSIS 'tsarun -p'";
	from_synopsis(&man, t);
	free(t);
	print_message("-p: %zu options\n", help.n);
	assert_same(&help, &man, false);
	for (size_t i = 0; i < help.n; i++) {
		const struct doc_opt *o = set_find(&parser, help.v[i].name, help.v[i].letter);

		if (!o || o->arg != help.v[i].arg)
			fail_msg("--help's 'tsarun -p' shows --%s, not as the parser has it",
				 help.v[i].name);
	}
	free(page);
}

/* --help fits a terminal of 80 columns: no line of it wraps. */
static void test_help_fits_80_columns(void **state)
{
	const char *l = options_usage();
	int line = 1;

	(void)state;
	for (const char *e; (e = strchr(l, '\n')); l = e + 1, line++)
		if (e - l > 80)
			fail_msg("--help line %d is %d columns: '%.*s'", line, (int)(e - l),
				 (int)(e - l), l);
	assert_int_equal(*l, '\0'); /* it ends with a newline */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_run_options),
	    cmocka_unit_test(test_subcommand_synopses),
	    cmocka_unit_test(test_monitor_synopsis),
	    cmocka_unit_test(test_help_fits_80_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
