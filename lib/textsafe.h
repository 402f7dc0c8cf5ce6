/* SPDX-License-Identifier: MIT */
/*
 * Text from outside (a command's argv, its threads' names, a script's
 * command text, file names, strings read back from an artifact) made safe
 * for the place it is written: one function per sink. Nothing here knows
 * what the text is.
 *
 * Input is any bytes: UTF-8 is decoded strictly (the well-formed sequences
 * of Unicode's table 3-7: no overlong forms, no surrogates, nothing above
 * U+10FFFF); what is not well formed is cut into "maximal subparts", as
 * Python's bytes.decode(errors='replace') and the WHATWG decoder cut it.
 *
 * The controls: C0 (U+0000-U+001F), DEL, C1 (U+0080-U+009F), the
 * bidirectional formatting characters (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069) and the line and paragraph separators
 * (U+2028, U+2029). Every sink keeps them from acting.
 *
 * The visible form, in what people read (terminal, annotations, Markdown,
 * XML): each byte of an ill-formed subpart as \xNN (hex, lower case); a C0
 * control or DEL as \t, \n, \r or \xNN; any other control as \uNNNN. So
 * "\x9b" is a stray byte 0x9b, "\u009b" the well-formed character U+009B.
 * A backslash of the text itself is left as it is: the visible form is for
 * reading, the artifact keeps the text.
 *
 * JSON is data: a well-formed character is kept (controls as \uNNNN
 * escapes), and each ill-formed subpart becomes U+FFFD, as every UTF-8
 * decoder reads it, so that any JSON parser reads the document.
 *
 * GitHub's runner takes a line as a workflow command when, less its leading
 * white space, it starts with "::", and when it holds "##[" anywhere. The
 * text sinks (terminal, Markdown, XML, JSON) break both: a "::" that opens
 * the text (after white space) has its first colon escaped, and the "[" of
 * any "##[" is escaped (\x3a and \x5b in the terminal, entities in XML,
 * \u escapes in JSON, a backslash in Markdown); a workflow command's own
 * data and properties have their "##[" broken too (\x5b). No command text
 * can start a line of its own either: a newline in it is never written as
 * one.
 *
 * Every function takes s and its length in bytes (TEXTSAFE_NUL: up to its
 * NUL; s NULL is ""), and writes as snprintf does: at most size - 1 bytes
 * and a NUL to out (out may be NULL when size is 0), never part of an
 * escape or of a character, and returns the length the whole result needs.
 * A result is never longer than TEXTSAFE_SIZE(len) - 1 bytes (a cell's: that
 * plus its width).
 */
#ifndef TSARUN_TEXTSAFE_H
#define TSARUN_TEXTSAFE_H

#include <stddef.h>
#include <stdio.h>

#define TEXTSAFE_NUL	((size_t)-1)
#define TEXTSAFE_GROWTH 6

/* The bytes a buffer needs to hold textsafe's result for n input bytes. */
#define TEXTSAFE_SIZE(n) (TEXTSAFE_GROWTH * (n) + 8)

typedef size_t textsafe_fn(char *out, size_t size, const char *s, size_t len);

/* A terminal: controls and ill-formed bytes in their visible form. */
size_t textsafe_term(char *out, size_t size, const char *s, size_t len);

/*
 * The display width of textsafe_term's result, in terminal columns: East
 * Asian wide and fullwidth characters count 2, combining marks and zero
 * width characters 0 (of the common blocks), every other character 1.
 */
size_t textsafe_term_width(const char *s, size_t len);

/*
 * A table cell of exactly width columns: textsafe_term's result, cut
 * between two characters or escapes when it is wider, then padded with
 * spaces.
 */
size_t textsafe_term_cell(char *out, size_t size, const char *s, size_t len, size_t width);

/*
 * At most width columns (width >= 4) of textsafe_term's result: all of it
 * when it fits, else "..." and its last width - 3 columns.
 */
size_t textsafe_term_tail(char *out, size_t size, const char *s, size_t len, size_t width);

/*
 * A GitHub Actions workflow command's message (after its "::"): '%', CR and
 * LF as %25, %0D and %0A, as the runner requires; other controls and
 * ill-formed bytes in their visible form.
 */
size_t textsafe_gh_data(char *out, size_t size, const char *s, size_t len);

/* A workflow command's property value (title=...): as data, and ':' and ',' as %3A and %2C. */
size_t textsafe_gh_prop(char *out, size_t size, const char *s, size_t len);

/*
 * Markdown text, also in a table cell: \ ` * _ [ ] < > | ~ # & $ escaped
 * with a backslash (no markup, no HTML, no entity, no math, no cell break),
 * controls (newlines too) and ill-formed bytes in their visible form.
 */
size_t textsafe_md(char *out, size_t size, const char *s, size_t len);

/*
 * A Markdown code span, fences included: a fence longer than the longest
 * run of backticks inside; controls and ill-formed bytes in their visible
 * form. Not for a table cell (a pipe would end it), and text holding "##["
 * is written as textsafe_md writes it (nothing in a code span is escaped).
 */
size_t textsafe_md_code(char *out, size_t size, const char *s, size_t len);

/*
 * XML 1.0 character data and attribute values (JUnit, SVG): & < > " ' as
 * entities; tab, LF and CR as character references (an attribute keeps
 * them); what XML 1.0 does not allow even as a reference (other C0
 * controls, U+FFFE, U+FFFF), DEL, the other controls and ill-formed bytes
 * in their visible form.
 */
size_t textsafe_xml(char *out, size_t size, const char *s, size_t len);

/*
 * textsafe_xml's result within max columns (max >= 2), counted as
 * textsafe_term_width counts them (an entity is its character): all of it
 * when it fits, else its first max - 2 columns and "..".
 */
size_t textsafe_xml_cut(char *out, size_t size, const char *s, size_t len, size_t max);

/*
 * The inside of a JSON string (without its quotes): " and \ escaped, \b
 * \f \n \r \t, other controls as \u00NN (C1, DEL and the formatting
 * controls too), each ill-formed subpart as \ufffd.
 */
size_t textsafe_json(char *out, size_t size, const char *s, size_t len);

/*
 * The same, but a leading "::" kept as it is, as textsafe_json_doc keeps
 * it: inside a document a string never opens a line. What cJSON's
 * printing of a string, through textsafe_json_doc, gave: the artifact's
 * strings (a writer whose bytes must stay as they were).
 */
size_t textsafe_json_in_doc(char *out, size_t size, const char *s, size_t len);

/*
 * A JSON text another writer produced (cJSON, which escapes '"', '\' and
 * C0 but copies every other byte) made strict UTF-8: ill-formed subparts
 * as \ufffd, DEL, C1, the formatting controls and any C0 but the layout's
 * tab, LF and CR as \u escapes, the "[" of "##[" as \u005b. Outside
 * strings JSON is ASCII, so what changes is always inside one; the rest is
 * copied as it is.
 */
size_t textsafe_json_doc(char *out, size_t size, const char *s, size_t len);

/*
 * A JSON text (as textsafe_json_doc takes it) for the inside of an HTML
 * <script> element: textsafe_json_doc's result with every '<', '>' and '&'
 * as \u003c, \u003e and \u0026 too, so that no "</script", "<!--" or
 * "<script" in a string ends or changes the element. JSON.parse() of the
 * element's text gives back the same document (outside strings JSON has
 * none of the three). U+2028 and U+2029 are \u escapes, as every control.
 */
size_t textsafe_json_html(char *out, size_t size, const char *s, size_t len);

/*
 * A line of a report that quotes text from outside: prefix and suffix as
 * they are (the caller's own words), s as textsafe_term writes it, then a
 * newline. 0, or -ENOMEM, or -EIO.
 */
int textsafe_term_line(FILE *f, const char *prefix, const char *s, const char *suffix);

/* fn's result written to f: 0, or -ENOMEM, or -EIO. */
int textsafe_fput(FILE *f, textsafe_fn *fn, const char *s, size_t len);

/* fn's result, malloc'd (free() it); NULL with errno set when out of memory. */
char *textsafe_dup(textsafe_fn *fn, const char *s, size_t len);

#endif /* TSARUN_TEXTSAFE_H */
