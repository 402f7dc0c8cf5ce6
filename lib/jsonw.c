// SPDX-License-Identifier: MIT
/* The streaming JSON writer (jsonw.h). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "textsafe.h"
#include "vec.h"

/* The buffer's first size: FILE mode writes it out each time it is full. */
#define FIRST_CAP 8192

enum level_kind {
	LEVEL_OBJ,
	LEVEL_ARR,
};

enum level_lines {
	LINES_NONE,
	LINES_OWN,  /* arr_open_lines: elements and the closing bracket */
	LINES_ROWS, /* obj_open_rows, arr_open_rows: the closing bracket follows */
};

struct level {
	unsigned char kind;
	unsigned char lines; /* enum level_lines */
	bool inline_arr;     /* pretty: elements on one line (the first was no container) */
	bool key_written;    /* an object's value is due */
	size_t n;	     /* members or elements so far */
};

struct jsonw {
	FILE *f;
	unsigned int flags;
	int err;
	bool done; /* the document is complete */
	char *buf;
	size_t len, cap;
	int depth;
	struct level lv[JSONW_MAX_DEPTH];
};

struct jsonw *jsonw__new(FILE *f, unsigned int flags)
{
	struct jsonw *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->f = f;
	w->flags = flags;
	return w;
}

void jsonw__free(struct jsonw *w)
{
	if (!w)
		return;
	free(w->buf);
	free(w);
}

static void fail(struct jsonw *w, int err)
{
	if (!w->err)
		w->err = err;
}

static void flush(struct jsonw *w)
{
	if (w->len && !w->err && fwrite(w->buf, 1, w->len, w->f) != w->len)
		fail(w, -EIO);
	w->len = 0;
}

/* Room for n more bytes (and a NUL); false after an error. */
static bool room(struct jsonw *w, size_t n)
{
	char *p;

	if (w->err)
		return false;
	if (w->len + n < w->cap)
		return true;
	if (w->f && w->len) {
		flush(w);
		if (w->err)
			return false;
		if (n < w->cap)
			return true;
	}
	if (w->len + n + 1 < w->len) {
		fail(w, -ENOMEM);
		return false;
	}
	p = vec_grow(w->buf, &w->cap, w->len + n + 1, 1, FIRST_CAP);
	if (!p) {
		fail(w, -ENOMEM);
		return false;
	}
	w->buf = p;
	return true;
}

static void put(struct jsonw *w, const char *s, size_t n)
{
	if (!room(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

#define PUT(w, lit) put(w, lit, sizeof(lit) - 1)

static void putc_(struct jsonw *w, char c)
{
	if (!room(w, 1))
		return;
	w->buf[w->len++] = c;
}

/* cJSON_Print()'s: a newline, a tab a level. */
static void tabs(struct jsonw *w, int depth)
{
	if (!room(w, 1 + (size_t)depth))
		return;
	w->buf[w->len++] = '\n';
	memset(w->buf + w->len, '\t', (size_t)depth);
	w->len += (size_t)depth;
}

static void indent(struct jsonw *w, int depth)
{
	if (!room(w, 1 + 2 * (size_t)depth))
		return;
	w->buf[w->len++] = '\n';
	memset(w->buf + w->len, ' ', 2 * (size_t)depth);
	w->len += 2 * (size_t)depth;
}

/* What comes before a value: the separator due, or a refusal. */
static bool before_value(struct jsonw *w, bool container)
{
	struct level *l;

	if (w->err)
		return false;
	if (!w->depth) {
		if (w->done) {
			fail(w, -EINVAL);
			return false;
		}
		return true;
	}
	l = &w->lv[w->depth - 1];
	if (l->kind == LEVEL_OBJ) {
		if (!l->key_written) {
			fail(w, -EINVAL);
			return false;
		}
		l->key_written = false;
		return true;
	}
	if (l->n)
		putc_(w, ',');
	if ((w->flags & JSONW_TABS) && l->n)
		putc_(w, ' ');
	if (w->flags & JSONW_PRETTY) {
		if (!l->n)
			l->inline_arr = !container;
		if (l->inline_arr) {
			if (l->n)
				putc_(w, ' ');
		} else {
			indent(w, w->depth);
		}
	}
	if (l->lines)
		putc_(w, '\n');
	l->n++;
	return !w->err;
}

static void after_value(struct jsonw *w)
{
	if (w->depth)
		return;
	w->done = true;
	if (w->flags & JSONW_NEWLINE)
		putc_(w, '\n');
}

static void open_(struct jsonw *w, enum level_kind kind, enum level_lines lines)
{
	struct level *l;

	if (!before_value(w, true))
		return;
	if (w->depth == JSONW_MAX_DEPTH) {
		fail(w, -EINVAL);
		return;
	}
	l = &w->lv[w->depth++];
	*l = (struct level){.kind = (unsigned char)kind, .lines = (unsigned char)lines};
	putc_(w, kind == LEVEL_OBJ ? '{' : '[');
}

static void close_(struct jsonw *w, enum level_kind kind)
{
	struct level *l;

	if (w->err)
		return;
	l = w->depth ? &w->lv[w->depth - 1] : NULL;
	if (!l || l->kind != kind || l->key_written) {
		fail(w, -EINVAL);
		return;
	}
	w->depth--;
	if ((w->flags & JSONW_PRETTY) && l->n && !l->inline_arr)
		indent(w, w->depth);
	if ((w->flags & JSONW_TABS) && kind == LEVEL_OBJ)
		tabs(w, w->depth);
	if (l->lines == LINES_OWN)
		putc_(w, '\n');
	putc_(w, kind == LEVEL_OBJ ? '}' : ']');
	after_value(w);
}

void jsonw__obj_open(struct jsonw *w)
{
	open_(w, LEVEL_OBJ, LINES_NONE);
}

void jsonw__obj_open_rows(struct jsonw *w)
{
	open_(w, LEVEL_OBJ, LINES_ROWS);
}

void jsonw__obj_close(struct jsonw *w)
{
	close_(w, LEVEL_OBJ);
}

void jsonw__arr_open(struct jsonw *w)
{
	open_(w, LEVEL_ARR, LINES_NONE);
}

void jsonw__arr_open_lines(struct jsonw *w)
{
	open_(w, LEVEL_ARR, LINES_OWN);
}

void jsonw__arr_open_rows(struct jsonw *w)
{
	open_(w, LEVEL_ARR, LINES_ROWS);
}

void jsonw__arr_close(struct jsonw *w)
{
	close_(w, LEVEL_ARR);
}

/* s escaped, in quotes, straight into the buffer: textsafe_json never needs more. */
static void quoted(struct jsonw *w, const char *s, size_t len)
{
	size_t max;

	if (!s) {
		s = "";
		len = 0;
	}
	if (len > (SIZE_MAX - 16) / TEXTSAFE_GROWTH) {
		fail(w, -ENOMEM);
		return;
	}
	max = TEXTSAFE_SIZE(len);
	if (!room(w, max + 2))
		return;
	w->buf[w->len++] = '"';
	w->len += (w->flags & JSONW_KEEP_COLONS ? textsafe_json_in_doc
						: textsafe_json)(w->buf + w->len, max, s, len);
	w->buf[w->len++] = '"';
}

void jsonw__key(struct jsonw *w, const char *name)
{
	struct level *l;

	if (w->err)
		return;
	l = w->depth ? &w->lv[w->depth - 1] : NULL;
	if (!l || l->kind != LEVEL_OBJ || l->key_written) {
		fail(w, -EINVAL);
		return;
	}
	if (l->n)
		putc_(w, ',');
	if (l->n && l->lines)
		putc_(w, '\n');
	if (w->flags & JSONW_PRETTY)
		indent(w, w->depth);
	else if (w->flags & JSONW_TABS)
		tabs(w, w->depth);
	quoted(w, name, name ? strlen(name) : 0);
	if (w->flags & JSONW_PRETTY)
		PUT(w, ": ");
	else if (w->flags & JSONW_TABS)
		PUT(w, ":\t");
	else
		putc_(w, ':');
	l->n++;
	l->key_written = true;
}

void jsonw__strn(struct jsonw *w, const char *s, size_t len)
{
	if (!before_value(w, false))
		return;
	quoted(w, s, len);
	after_value(w);
}

void jsonw__str(struct jsonw *w, const char *s)
{
	jsonw__strn(w, s, s ? strlen(s) : 0);
}

static void digits(struct jsonw *w, bool neg, uint64_t v)
{
	char b[24], *e = b + sizeof(b), *q = e;

	do
		*--q = (char)('0' + v % 10);
	while (v /= 10);
	if (neg)
		*--q = '-';
	put(w, q, (size_t)(e - q));
}

void jsonw__int(struct jsonw *w, int64_t v)
{
	if (!before_value(w, false))
		return;
	digits(w, v < 0, v < 0 ? -(uint64_t)v : (uint64_t)v);
	after_value(w);
}

void jsonw__uint(struct jsonw *w, uint64_t v)
{
	if (!before_value(w, false))
		return;
	digits(w, false, v);
	after_value(w);
}

void jsonw__bool(struct jsonw *w, bool v)
{
	if (!before_value(w, false))
		return;
	if (v)
		PUT(w, "true");
	else
		PUT(w, "false");
	after_value(w);
}

void jsonw__null(struct jsonw *w)
{
	if (!before_value(w, false))
		return;
	PUT(w, "null");
	after_value(w);
}

static void number(struct jsonw *w, const char *fmt, int decimals, double v)
{
	char b[512];
	int n;

	if (!before_value(w, false))
		return;
	if (!isfinite(v)) {
		PUT(w, "null");
	} else {
		n = snprintf(b, sizeof(b), fmt, decimals, v);
		if (n < 0 || (size_t)n >= sizeof(b))
			fail(w, -EINVAL);
		else
			put(w, b, (size_t)n);
	}
	after_value(w);
}

void jsonw__double(struct jsonw *w, double v)
{
	number(w, "%.*g", 17, v);
}

void jsonw__fixed(struct jsonw *w, double v, int decimals)
{
	number(w, "%.*f", decimals < 0 ? 0 : decimals > 30 ? 30 : decimals, v);
}

/* cJSON's print_number(), as 1.7.15 has it (no "%d" branch: -0 stays -0). */
void jsonw__cjson(struct jsonw *w, double v)
{
	char b[32];
	double back, max;
	int n;

	if (!isfinite(v)) {
		jsonw__null(w);
		return;
	}
	n = snprintf(b, sizeof(b), "%1.15g", v);
	back = strtod(b, NULL);
	max = fabs(back) > fabs(v) ? fabs(back) : fabs(v);
	if (!(fabs(back - v) <= max * DBL_EPSILON))
		n = snprintf(b, sizeof(b), "%1.17g", v);
	jsonw__raw(w, b, (size_t)n);
}

void jsonw__exact(struct jsonw *w, double v, int prec)
{
	char b[40];
	int n = 0;

	if (!isfinite(v)) {
		jsonw__null(w);
		return;
	}
	for (prec = prec < 1 ? 1 : prec > 17 ? 17 : prec; prec <= 17; prec++) {
		n = snprintf(b, sizeof(b), "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	jsonw__raw(w, b, (size_t)n);
}

void jsonw__raw(struct jsonw *w, const char *text, size_t len)
{
	if (!before_value(w, false))
		return;
	put(w, text, len);
	after_value(w);
}

FILE *jsonw__file(struct jsonw *w)
{
	if (!w->f || !w->depth) {
		fail(w, -EINVAL);
		return NULL;
	}
	if (!before_value(w, false))
		return NULL;
	flush(w);
	return w->err ? NULL : w->f;
}

int jsonw__error(const struct jsonw *w)
{
	return w->err;
}

int jsonw__finish(struct jsonw *w)
{
	if (!w->err && (w->depth || !w->done))
		fail(w, -EINVAL);
	if (w->f) {
		flush(w);
		if (!w->err && (fflush(w->f) || ferror(w->f)))
			fail(w, -EIO);
	}
	return w->err;
}

char *jsonw__take(struct jsonw *w, size_t *len)
{
	char *p;

	if (w->f || w->err || !room(w, 0))
		return NULL;
	p = w->buf;
	p[w->len] = '\0';
	if (len)
		*len = w->len;
	w->buf = NULL;
	w->len = w->cap = 0;
	w->depth = 0;
	w->done = false;
	return p;
}
