/* SPDX-License-Identifier: MIT */
/*
 * A streaming JSON writer: the document is written as the calls come, with
 * the writer keeping track of the nesting and of the comma due, so that no
 * caller writes a separator of its own. bpftool's json_writer is the shape.
 * Knows nothing of tsarun.
 *
 *	struct jsonw *w = jsonw__new(f, JSONW_NEWLINE);
 *
 *	jsonw__obj_open(w);
 *	jsonw__str_field(w, "name", comm);
 *	jsonw__key(w, "times");
 *	jsonw__arr_open(w);
 *	jsonw__uint(w, t);
 *	jsonw__arr_close(w);
 *	jsonw__obj_close(w);
 *	err = jsonw__finish(w);
 *	jsonw__free(w);
 *
 * Values: strings go through textsafe_json (valid UTF-8 whatever the bytes,
 * controls escaped, "##[" broken, a leading "::" too), keys too; with
 * JSONW_KEEP_COLONS through textsafe_json_in_doc (a leading "::" as it is:
 * what cJSON printed, through textsafe_json_doc); integers are written from
 * int64_t or uint64_t digit by digit, never through a double; a double that
 * is not finite is null (JSON has no NaN). A raw value is a number or a JSON
 * text the caller formatted: it is copied as it is.
 *
 * Layouts: compact (no white space at all); an array opened with
 * jsonw__arr_open_lines() puts each element, and its closing bracket, on a
 * line of its own (a trace with one event a line); one opened with
 * jsonw__arr_open_rows() each element, the bracket following the last
 * ("[\n1,\n2]", "[]"), and an object opened with jsonw__obj_open_rows()
 * each member but the first ("{\"a\":1,\n\"b\":2}"): the artifact's
 * layout, a run or a thread a line. JSONW_PRETTY is
 * serde_json's pretty layout as hyperfine's --export-json has it, except
 * that an array whose first element is not an object or an array stays on
 * one line ("times": [0.1, 0.2]): two spaces a level, ": " after a key,
 * one member or element a line, "{}" and "[]" when empty. JSONW_TABS is
 * cJSON_Print()'s layout: a tab a level, ":\t" after a key, an object's
 * members one a line, an array's elements on its line after ", ".
 *
 * Output: to a FILE (f given), through a buffer of the writer's own that
 * is written out as it fills and at jsonw__finish(); or, f NULL, to memory
 * only: the whole text, taken with jsonw__take(). f stays the caller's, and
 * so does anything written to it between calls (jsonw__file() gives it, the
 * writer's own buffer written out first, for a value written straight into
 * f).
 *
 * Errors are sticky and never printed: the first failure (-ENOMEM, -EIO
 * when f failed, -EINVAL for a call out of place: a key outside an object,
 * a value where a key is due, a close that matches no open, a second
 * document, nesting deeper than JSONW_MAX_DEPTH) is kept, every later call
 * does nothing, and jsonw__finish() returns it. A document cut short by an
 * error is not valid JSON: the caller discards it.
 */
#ifndef LIB_JSONW_H
#define LIB_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSONW_MAX_DEPTH 64

enum jsonw_flags {
	JSONW_PRETTY = 1 << 0,	    /* the indented layout above */
	JSONW_NEWLINE = 1 << 1,	    /* a newline after the document */
	JSONW_TABS = 1 << 2,	    /* cJSON_Print()'s layout above */
	JSONW_KEEP_COLONS = 1 << 3, /* strings through textsafe_json_in_doc */
};

struct jsonw;

/* A writer of one document to f (NULL: to memory); NULL with errno set when out of memory. */
struct jsonw *jsonw__new(FILE *f, unsigned int flags);

/* Frees the writer (and the text, unless taken); f is left open. NULL is accepted. */
void jsonw__free(struct jsonw *w);

/*
 * The end: the document must be complete (-EINVAL if not); what the writer
 * holds is written to f and f flushed. 0 or the first error.
 */
int jsonw__finish(struct jsonw *w);

/* The first error so far, or 0. */
int jsonw__error(const struct jsonw *w);

/*
 * Memory mode: the text so far, NUL-terminated, and its length in *len
 * (len may be NULL), now the caller's to free(); the writer is empty again
 * and takes a new document. NULL after an error (or in FILE mode).
 */
char *jsonw__take(struct jsonw *w, size_t *len);

/*
 * FILE mode, inside an object or an array: f, for one value written
 * straight into it (a JSON text another writer produces), once the
 * separator due and all the writer holds are written; the caller writes
 * exactly one complete value. NULL after an error; -EINVAL (and NULL) in
 * memory mode or at the top level.
 */
FILE *jsonw__file(struct jsonw *w);

void jsonw__obj_open(struct jsonw *w);
void jsonw__obj_close(struct jsonw *w);
void jsonw__arr_open(struct jsonw *w);
/* An array with each element, and the closing bracket, on a new line. */
void jsonw__arr_open_lines(struct jsonw *w);
/* An array with each element on a new line, the closing bracket after the last. */
void jsonw__arr_open_rows(struct jsonw *w);
/* An object with each member but the first on a new line. */
void jsonw__obj_open_rows(struct jsonw *w);
void jsonw__arr_close(struct jsonw *w);

/* A member's name (the next call writes its value). */
void jsonw__key(struct jsonw *w, const char *name);

/* s NULL is "". */
void jsonw__str(struct jsonw *w, const char *s);
void jsonw__strn(struct jsonw *w, const char *s, size_t len);
void jsonw__int(struct jsonw *w, int64_t v);
void jsonw__uint(struct jsonw *w, uint64_t v);
void jsonw__bool(struct jsonw *w, bool v);
void jsonw__null(struct jsonw *w);
/* %.17g (enough to read the same double back); null when not finite. */
void jsonw__double(struct jsonw *w, double v);
/* decimals digits after the point (%.*f); null when not finite. */
void jsonw__fixed(struct jsonw *w, double v, int decimals);
/*
 * v as cJSON 1.7.15 prints a number: "%1.15g" when that reads back within
 * DBL_EPSILON of v, else "%1.17g"; null when not finite. For output that
 * must stay what cJSON wrote: an integer below 1e15 is its digits, 1e15 is
 * 1e+15, 0.1 + 0.2 is 0.3, -0 is -0.
 */
void jsonw__cjson(struct jsonw *w, double v);
/*
 * v with the fewest significant digits, from prec (1 to 17) on, that read
 * back as exactly v ("%.*g"); null when not finite.
 */
void jsonw__exact(struct jsonw *w, double v, int prec);
/* A number or a JSON text, len bytes of it, copied as it is. */
void jsonw__raw(struct jsonw *w, const char *text, size_t len);

/* key and value in one call. */
static inline void jsonw__str_field(struct jsonw *w, const char *key, const char *s)
{
	jsonw__key(w, key);
	jsonw__str(w, s);
}

static inline void jsonw__int_field(struct jsonw *w, const char *key, int64_t v)
{
	jsonw__key(w, key);
	jsonw__int(w, v);
}

static inline void jsonw__uint_field(struct jsonw *w, const char *key, uint64_t v)
{
	jsonw__key(w, key);
	jsonw__uint(w, v);
}

static inline void jsonw__bool_field(struct jsonw *w, const char *key, bool v)
{
	jsonw__key(w, key);
	jsonw__bool(w, v);
}

static inline void jsonw__null_field(struct jsonw *w, const char *key)
{
	jsonw__key(w, key);
	jsonw__null(w);
}

#endif /* LIB_JSONW_H */
