// SPDX-License-Identifier: MIT
/*
 * Text from outside made safe for each place it is written (textsafe.h).
 * One decoder cuts the input into units (a well-formed character, or a
 * maximal ill-formed subpart); each sink encodes a unit; the drivers write
 * the units whole, within a width when asked.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "textsafe.h"

enum sink {
	SK_TERM,
	SK_GH_DATA,
	SK_GH_PROP,
	SK_MD,
	SK_MD_CODE,
	SK_XML,
	SK_JSON,
	SK_JSON_KEEP, /* SK_JSON but a leading "::" */
	SK_JSON_DOC,
	SK_JSON_HTML,
};

#define BAD UINT32_MAX

/*
 * The unit at s: a well-formed character (its code point in *cp), or the
 * maximal ill-formed subpart (*cp = BAD): the longest prefix of a
 * well-formed sequence, at least one byte. Returns its length (len >= 1).
 */
static size_t u8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need;
	uint32_t v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0; /* no overlong form */
		else if (c == 0xed)
			hi = 0x9f; /* no surrogate */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90; /* no overlong form */
		else if (c == 0xf4)
			hi = 0x8f; /* nothing above U+10FFFF */
	} else {
		*cp = BAD; /* 80-C1 (continuation, overlong lead), F5-FF */
		return 1;
	}
	for (size_t k = 1; k < need; k++) {
		if (k >= len || s[k] < lo || s[k] > hi) {
			*cp = BAD;
			return k;
		}
		v = v << 6 | (s[k] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*cp = v;
	return need;
}

/* C0, DEL, C1, the bidirectional formatting characters, U+2028 and U+2029. */
static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
	       cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* White space the runner's TrimStart() removes, of what is not a control. */
static bool is_space(uint32_t cp)
{
	return cp == ' ' || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
	       cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

struct range {
	uint32_t lo, hi;
};

/* Combining marks and zero width characters of the common blocks. */
static const struct range zero_width[] = {
    {0x0300, 0x036f}, {0x0483, 0x0489},	  {0x0591, 0x05bd},   {0x05bf, 0x05bf},	  {0x05c1, 0x05c2},
    {0x05c4, 0x05c5}, {0x05c7, 0x05c7},	  {0x0610, 0x061a},   {0x064b, 0x065f},	  {0x0670, 0x0670},
    {0x06d6, 0x06dc}, {0x06df, 0x06e4},	  {0x06e7, 0x06e8},   {0x06ea, 0x06ed},	  {0x0900, 0x0902},
    {0x093c, 0x093c}, {0x0941, 0x0948},	  {0x094d, 0x094d},   {0x0951, 0x0957},	  {0x0962, 0x0963},
    {0x0e31, 0x0e31}, {0x0e34, 0x0e3a},	  {0x0e47, 0x0e4e},   {0x1160, 0x11ff},	  {0x1ab0, 0x1aff},
    {0x1dc0, 0x1dff}, {0x200b, 0x200f},	  {0x2060, 0x2064},   {0x20d0, 0x20ff},	  {0x302a, 0x302d},
    {0x3099, 0x309a}, {0xd7b0, 0xd7ff},	  {0xfb1e, 0xfb1e},   {0xfe00, 0xfe0f},	  {0xfe20, 0xfe2f},
    {0xfeff, 0xfeff}, {0xe0001, 0xe0001}, {0xe0020, 0xe007f}, {0xe0100, 0xe01ef},
};

/* East Asian wide and fullwidth characters (emoji included). */
static const struct range wide[] = {
    {0x1100, 0x115f},	{0x231a, 0x231b},   {0x2329, 0x232a},	{0x23e9, 0x23ec},
    {0x23f0, 0x23f0},	{0x23f3, 0x23f3},   {0x25fd, 0x25fe},	{0x2614, 0x2615},
    {0x2648, 0x2653},	{0x267f, 0x267f},   {0x2693, 0x2693},	{0x26a1, 0x26a1},
    {0x26aa, 0x26ab},	{0x26bd, 0x26be},   {0x26c4, 0x26c5},	{0x26ce, 0x26ce},
    {0x26d4, 0x26d4},	{0x26ea, 0x26ea},   {0x26f2, 0x26f3},	{0x26f5, 0x26f5},
    {0x26fa, 0x26fa},	{0x26fd, 0x26fd},   {0x2705, 0x2705},	{0x270a, 0x270b},
    {0x2728, 0x2728},	{0x274c, 0x274c},   {0x274e, 0x274e},	{0x2753, 0x2755},
    {0x2757, 0x2757},	{0x2795, 0x2797},   {0x27b0, 0x27b0},	{0x27bf, 0x27bf},
    {0x2b1b, 0x2b1c},	{0x2b50, 0x2b50},   {0x2b55, 0x2b55},	{0x2e80, 0x3029},
    {0x302e, 0x303e},	{0x3041, 0x3098},   {0x309b, 0x4dbf},	{0x4e00, 0xa4cf},
    {0xa960, 0xa97f},	{0xac00, 0xd7a3},   {0xf900, 0xfaff},	{0xfe10, 0xfe19},
    {0xfe30, 0xfe6f},	{0xff00, 0xff60},   {0xffe0, 0xffe6},	{0x16fe0, 0x16fe4},
    {0x17000, 0x18aff}, {0x1b000, 0x1b2ff}, {0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf},
    {0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f202}, {0x1f210, 0x1f23b},
    {0x1f240, 0x1f248}, {0x1f250, 0x1f251}, {0x1f260, 0x1f265}, {0x1f300, 0x1f64f},
    {0x1f680, 0x1f6ff}, {0x1f900, 0x1f9ff}, {0x1fa70, 0x1faff}, {0x20000, 0x2fffd},
    {0x30000, 0x3fffd},
};

static bool in_ranges(uint32_t cp, const struct range *r, size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp < r[mid].lo)
			hi = mid;
		else if (cp > r[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

static size_t char_width(uint32_t cp)
{
	if (cp < 0x300)
		return 1;
	if (in_ranges(cp, zero_width, sizeof(zero_width) / sizeof(zero_width[0])))
		return 0;
	if (in_ranges(cp, wide, sizeof(wide) / sizeof(wide[0])))
		return 2;
	return 1;
}

/* One unit, encoded: at most four ill-formed bytes as \xNN each. */
struct unit {
	char b[24];
	size_t n; /* bytes in b */
	size_t w; /* display columns */
};

struct cursor {
	enum sink k;
	const unsigned char *s;
	size_t len, i;
	bool lead; /* only white space so far: a "::" here would open a line */
};

static const char hex[] = "0123456789abcdef";

static void put_lit(struct unit *u, const char *lit)
{
	size_t n = strlen(lit);

	memcpy(u->b + u->n, lit, n);
	u->n += n;
	u->w += 1; /* what it stands for: one character */
}

/* \xNN, \uNNNN: what they say is what is seen, one column a byte. */
static void put_hex(struct unit *u, char kind, uint32_t v, int digits)
{
	u->b[u->n++] = '\\';
	u->b[u->n++] = kind;
	for (int d = digits - 1; d >= 0; d--)
		u->b[u->n++] = hex[(v >> (4 * d)) & 15];
	u->w += 2 + (size_t)digits;
}

/* A control in the visible form: \t \n \r, \xNN for the rest of C0 and DEL, else \uNNNN. */
static void put_visible(struct unit *u, uint32_t cp)
{
	if (cp == '\t' || cp == '\n' || cp == '\r') {
		u->b[u->n++] = '\\';
		u->b[u->n++] = cp == '\t' ? 't' : cp == '\n' ? 'n' : 'r';
		u->w += 2;
	} else if (cp < 0x80) {
		put_hex(u, 'x', cp, 2);
	} else {
		put_hex(u, 'u', cp, 4);
	}
}

static void put_control(enum sink k, struct unit *u, uint32_t cp, const unsigned char *p, size_t n)
{
	switch (k) {
	case SK_JSON:
	case SK_JSON_KEEP:
		if (cp == '\b' || cp == '\f' || cp == '\n' || cp == '\r' || cp == '\t') {
			u->b[u->n++] = '\\';
			u->b[u->n++] = cp == '\b'   ? 'b'
				       : cp == '\f' ? 'f'
				       : cp == '\n' ? 'n'
				       : cp == '\r' ? 'r'
						    : 't';
			u->w = 1;
		} else {
			put_hex(u, 'u', cp, 4);
		}
		return;
	case SK_JSON_DOC:
	case SK_JSON_HTML:
		if (cp == '\t' || cp == '\n' || cp == '\r') {
			/* A printed document's layout: its strings have none raw. */
			memcpy(u->b, p, n);
			u->n = n;
			u->w = 1;
		} else {
			put_hex(u, 'u', cp, 4);
		}
		return;
	case SK_XML:
		if (cp == '\t' || cp == '\n' || cp == '\r') {
			put_lit(u, cp == '\t' ? "&#9;" : cp == '\n' ? "&#10;" : "&#13;");
			return;
		}
		break;
	case SK_GH_DATA:
	case SK_GH_PROP:
		if (cp == '\r' || cp == '\n') {
			put_lit(u, cp == '\r' ? "%0D" : "%0A");
			return;
		}
		break;
	default:
		break;
	}
	put_visible(u, cp);
}

/* What breaks a workflow command in each text sink: for ':' and for '['. */
static void put_neutral(enum sink k, struct unit *u, char c)
{
	switch (k) {
	case SK_XML:
		put_lit(u, c == ':' ? "&#58;" : "&#91;");
		break;
	case SK_JSON:
	case SK_JSON_KEEP:
	case SK_JSON_DOC:
	case SK_JSON_HTML:
		put_hex(u, 'u', (unsigned char)c, 4);
		u->w = 1;
		break;
	case SK_MD:
		put_lit(u, c == ':' ? "\\:" : "\\[");
		break;
	default:
		put_hex(u, 'x', (unsigned char)c, 2);
		break;
	}
}

/* A character that is not a control, in sink k. */
static void put_char(enum sink k, struct unit *u, uint32_t cp, const unsigned char *p, size_t n)
{
	switch (k) {
	case SK_GH_PROP:
		if (cp == ':' || cp == ',') {
			put_lit(u, cp == ':' ? "%3A" : "%2C");
			return;
		}
		/* fall through */
	case SK_GH_DATA:
		if (cp == '%') {
			put_lit(u, "%25");
			return;
		}
		break;
	case SK_MD:
		if (cp < 0x80 && strchr("\\`*_[]<>|~#&$", (int)cp)) {
			u->b[u->n++] = '\\';
			u->b[u->n++] = (char)cp;
			u->w = 1;
			return;
		}
		break;
	case SK_XML:
		switch (cp) {
		case '&':
			put_lit(u, "&amp;");
			return;
		case '<':
			put_lit(u, "&lt;");
			return;
		case '>':
			put_lit(u, "&gt;");
			return;
		case '"':
			put_lit(u, "&quot;");
			return;
		case '\'':
			put_lit(u, "&apos;");
			return;
		case 0xfffe:
		case 0xffff:
			/* Not characters XML 1.0 allows, even as references. */
			put_visible(u, cp);
			return;
		}
		break;
	case SK_JSON_HTML:
		/* No "</script", "<!--" or entity: a script element's text ends at none. */
		if (cp == '<' || cp == '>' || cp == '&') {
			put_hex(u, 'u', cp, 4);
			u->w = 1;
			return;
		}
		break;
	case SK_JSON:
	case SK_JSON_KEEP:
		if (cp == '"' || cp == '\\') {
			u->b[u->n++] = '\\';
			u->b[u->n++] = (char)cp;
			u->w = 1;
			return;
		}
		break;
	default:
		break;
	}
	memcpy(u->b, p, n);
	u->n = n;
	u->w = char_width(cp);
}

static void cursor_init(struct cursor *c, enum sink k, const char *s, size_t len)
{
	c->k = k;
	c->s = (const unsigned char *)(s ? s : "");
	c->len = !s ? 0 : len == TEXTSAFE_NUL ? strlen(s) : len;
	c->i = 0;
	c->lead = true;
}

/* The next unit of c, encoded in u; false at the end. */
static bool cursor_next(struct cursor *c, struct unit *u)
{
	const unsigned char *p = c->s + c->i;
	size_t n, at = c->i;
	bool text = c->k != SK_GH_DATA && c->k != SK_GH_PROP && c->k != SK_MD_CODE;
	uint32_t cp;

	if (c->i >= c->len)
		return false;
	n = u8_next(p, c->len - c->i, &cp);
	c->i += n;
	u->n = 0;
	u->w = 0;
	if (cp == BAD) {
		c->lead = false;
		if (c->k == SK_JSON || c->k == SK_JSON_KEEP || c->k == SK_JSON_DOC ||
		    c->k == SK_JSON_HTML) {
			memcpy(u->b, "\\ufffd", 6);
			u->n = 6;
			u->w = 1;
			return true;
		}
		for (size_t k = 0; k < n; k++)
			put_hex(u, 'x', p[k], 2);
		return true;
	}
	if (is_control(cp)) {
		c->lead = false;
		put_control(c->k, u, cp, p, n);
		return true;
	}
	if (text && cp == ':' && c->lead && c->k != SK_JSON_KEEP && c->k != SK_JSON_DOC &&
	    c->k != SK_JSON_HTML && c->i < c->len && c->s[c->i] == ':') {
		c->lead = false;
		put_neutral(c->k, u, ':');
		return true;
	}
	c->lead = c->lead && is_space(cp);
	if (c->k != SK_MD && c->k != SK_MD_CODE && cp == '[' && at >= 2 && p[-1] == '#' &&
	    p[-2] == '#') {
		put_neutral(c->k, u, '[');
		return true;
	}
	put_char(c->k, u, cp, p, n);
	return true;
}

/* snprintf's contract: whole units while they fit, the full length counted. */
struct outbuf {
	char *out;
	size_t size, need, wrote;
	bool full;
};

static void ob_put(struct outbuf *o, const char *p, size_t n)
{
	if (!o->full && o->wrote + n < o->size) {
		memcpy(o->out + o->wrote, p, n);
		o->wrote += n;
	} else {
		o->full = true;
	}
	o->need += n;
}

static size_t ob_end(struct outbuf *o)
{
	if (o->size)
		o->out[o->wrote] = '\0';
	return o->need;
}

/* Bytes that are units of their own, as they are: as many as fit. */
static void ob_put_run(struct outbuf *o, const char *p, size_t n)
{
	size_t room = o->full || !o->size ? 0 : o->size - 1 - o->wrote;

	if (n > room) {
		if (room)
			memcpy(o->out + o->wrote, p, room);
		o->wrote += room;
		o->full = true;
	} else {
		memcpy(o->out + o->wrote, p, n);
		o->wrote += n;
	}
	o->need += n;
}

/*
 * A byte a JSON sink copies as it is, whatever comes before it: printable
 * ASCII but '[' (which "##" before it changes), for a script element < > &
 * too, and for a string '"', '\\' and ':' (which a leading "::" changes). A
 * document, and most strings, are mostly these: they go by runs, a table
 * look-up a byte.
 */
enum { PLAIN_DOC = 1, PLAIN_HTML = 2, PLAIN_JSON = 4, PLAIN_ALL = 7 };

static const unsigned char json_plain_bytes[256] = {
    [' ' ... '!'] = PLAIN_ALL,	['"'] = PLAIN_DOC | PLAIN_HTML,
    ['#' ... '%'] = PLAIN_ALL,	['&'] = PLAIN_DOC | PLAIN_JSON,
    ['\'' ... '9'] = PLAIN_ALL, [':'] = PLAIN_DOC | PLAIN_HTML,
    [';'] = PLAIN_ALL,		['<'] = PLAIN_DOC | PLAIN_JSON,
    ['='] = PLAIN_ALL,		['>'] = PLAIN_DOC | PLAIN_JSON,
    ['?' ... 'Z'] = PLAIN_ALL,	['\\'] = PLAIN_DOC | PLAIN_HTML,
    [']' ... '~'] = PLAIN_ALL,
};

static void encode(enum sink k, struct outbuf *o, const char *s, size_t len)
{
	struct cursor c;
	struct unit u;

	cursor_init(&c, k, s, len);
	if (k == SK_JSON || k == SK_JSON_KEEP || k == SK_JSON_DOC || k == SK_JSON_HTML) {
		unsigned char mask = k == SK_JSON || k == SK_JSON_KEEP ? PLAIN_JSON
				     : k == SK_JSON_DOC		       ? PLAIN_DOC
								       : PLAIN_HTML;

		while (c.i < c.len) {
			size_t j = c.i;

			while (j < c.len && (json_plain_bytes[c.s[j]] & mask))
				j++;
			if (j > c.i) {
				/* What cursor_next() keeps: still in the text's leading white space? */
				for (size_t q = c.i; c.lead && q < j; q++)
					c.lead = c.s[q] == ' ';
				ob_put_run(o, (const char *)c.s + c.i, j - c.i);
				c.i = j;
			}
			if (cursor_next(&c, &u))
				ob_put(o, u.b, u.n);
		}
		return;
	}
	while (cursor_next(&c, &u))
		ob_put(o, u.b, u.n);
}

static size_t encode_all(enum sink k, char *out, size_t size, const char *s, size_t len)
{
	struct outbuf o = {.out = out, .size = size};

	encode(k, &o, s, len);
	return ob_end(&o);
}

static size_t columns(enum sink k, const char *s, size_t len)
{
	struct cursor c;
	struct unit u;
	size_t w = 0;

	cursor_init(&c, k, s, len);
	while (cursor_next(&c, &u))
		w += u.w;
	return w;
}

size_t textsafe_term(char *out, size_t size, const char *s, size_t len)
{
	return encode_all(SK_TERM, out, size, s, len);
}

size_t textsafe_term_width(const char *s, size_t len)
{
	return columns(SK_TERM, s, len);
}

size_t textsafe_term_cell(char *out, size_t size, const char *s, size_t len, size_t width)
{
	struct outbuf o = {.out = out, .size = size};
	struct cursor c;
	struct unit u;
	size_t cols = 0;

	cursor_init(&c, SK_TERM, s, len);
	while (cursor_next(&c, &u) && cols + u.w <= width) {
		ob_put(&o, u.b, u.n);
		cols += u.w;
	}
	for (; cols < width; cols++)
		ob_put(&o, " ", 1);
	return ob_end(&o);
}

size_t textsafe_term_tail(char *out, size_t size, const char *s, size_t len, size_t width)
{
	struct outbuf o = {.out = out, .size = size};
	size_t total = columns(SK_TERM, s, len), cols = 0, keep;
	struct cursor c;
	struct unit u;

	if (total <= width || width < 4)
		return encode_all(SK_TERM, out, size, s, len);
	keep = width - 3;
	ob_put(&o, "...", 3);
	cursor_init(&c, SK_TERM, s, len);
	while (cursor_next(&c, &u)) {
		if (total - cols > keep) {
			cols += u.w;
			continue;
		}
		ob_put(&o, u.b, u.n);
	}
	return ob_end(&o);
}

size_t textsafe_gh_data(char *out, size_t size, const char *s, size_t len)
{
	return encode_all(SK_GH_DATA, out, size, s, len);
}

size_t textsafe_gh_prop(char *out, size_t size, const char *s, size_t len)
{
	return encode_all(SK_GH_PROP, out, size, s, len);
}

size_t textsafe_md(char *out, size_t size, const char *s, size_t len)
{
	return encode_all(SK_MD, out, size, s, len);
}

size_t textsafe_md_code(char *out, size_t size, const char *s, size_t len)
{
	struct outbuf o = {.out = out, .size = size};
	size_t n = !s ? 0 : len == TEXTSAFE_NUL ? strlen(s) : len, run = 0, longest = 0;

	if (n >= 3 && memmem(s, n, "##[", 3))
		return encode_all(SK_MD, out, size, s, len);
	for (size_t i = 0; i < n; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (size_t i = 0; i <= longest; i++)
		ob_put(&o, "`", 1);
	ob_put(&o, " ", 1);
	encode(SK_MD_CODE, &o, s, n);
	ob_put(&o, " ", 1);
	for (size_t i = 0; i <= longest; i++)
		ob_put(&o, "`", 1);
	return ob_end(&o);
}

size_t textsafe_xml(char *out, size_t size, const char *s, size_t len)
{
	return encode_all(SK_XML, out, size, s, len);
}

size_t textsafe_xml_cut(char *out, size_t size, const char *s, size_t len, size_t max)
{
	struct outbuf o = {.out = out, .size = size};
	size_t cols = 0, keep = max >= 2 ? max - 2 : 0;
	struct cursor c;
	struct unit u;

	if (columns(SK_XML, s, len) <= max)
		return encode_all(SK_XML, out, size, s, len);
	cursor_init(&c, SK_XML, s, len);
	while (cursor_next(&c, &u) && cols + u.w <= keep) {
		ob_put(&o, u.b, u.n);
		cols += u.w;
	}
	ob_put(&o, "..", 2);
	return ob_end(&o);
}

static size_t json_string(enum sink k, char *out, size_t size, const char *s, size_t len)
{
	size_t n;

	/* Most strings (and every key) are plain bytes only: copied whole when they fit. */
	if (s && len != TEXTSAFE_NUL && len < size) {
		for (n = 0; n < len && (json_plain_bytes[(unsigned char)s[n]] & PLAIN_JSON); n++)
			;
		if (n == len) {
			memcpy(out, s, len);
			out[len] = '\0';
			return len;
		}
	}
	return encode_all(k, out, size, s, len);
}

size_t textsafe_json(char *out, size_t size, const char *s, size_t len)
{
	return json_string(SK_JSON, out, size, s, len);
}

size_t textsafe_json_in_doc(char *out, size_t size, const char *s, size_t len)
{
	return json_string(SK_JSON_KEEP, out, size, s, len);
}

size_t textsafe_json_doc(char *out, size_t size, const char *s, size_t len)
{
	return encode_all(SK_JSON_DOC, out, size, s, len);
}

size_t textsafe_json_html(char *out, size_t size, const char *s, size_t len)
{
	return encode_all(SK_JSON_HTML, out, size, s, len);
}

int textsafe_fput(FILE *f, textsafe_fn *fn, const char *s, size_t len)
{
	char small[512], *buf = small;
	size_t n = fn(NULL, 0, s, len);
	int ret = 0;

	if (n >= sizeof(small)) {
		buf = malloc(n + 1);
		if (!buf)
			return -ENOMEM;
	}
	fn(buf, n + 1, s, len);
	if (fwrite(buf, 1, n, f) != n)
		ret = -EIO;
	if (buf != small)
		free(buf);
	return ret;
}

int textsafe_term_line(FILE *f, const char *prefix, const char *s, const char *suffix)
{
	int ret;

	if (fputs(prefix ? prefix : "", f) < 0)
		return -EIO;
	ret = textsafe_fput(f, textsafe_term, s, TEXTSAFE_NUL);
	if (!ret && fprintf(f, "%s\n", suffix ? suffix : "") < 0)
		ret = -EIO;
	return ret;
}

char *textsafe_dup(textsafe_fn *fn, const char *s, size_t len)
{
	size_t n = fn(NULL, 0, s, len);
	char *buf = malloc(n + 1);

	if (buf)
		fn(buf, n + 1, s, len);
	return buf;
}
