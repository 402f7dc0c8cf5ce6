/* SPDX-License-Identifier: MIT */
/*
 * Text for a terminal of a given width: how wide the terminal is, and prose
 * wrapped to it at word boundaries. Width 0 means "no limit" (a file, a
 * pipe, or --wide): the text goes out exactly as given. The text is already
 * safe for a terminal (textsafe_term's); only CSI sequences (colours) are
 * skipped when columns are counted, and a UTF-8 character counts as one.
 */
#ifndef TSARUN_TERMWRAP_H
#define TSARUN_TERMWRAP_H

#include <stddef.h>
#include <stdio.h>

/*
 * The columns of the terminal on fd: COLUMNS when it holds a number (as GNU
 * ls and others read it), else TIOCGWINSZ, else 80. 0 when fd is no terminal.
 */
size_t termwrap_width(int fd);

/* The columns s takes on a terminal (up to len bytes, or its NUL). */
size_t termwrap_cols(const char *s, size_t len);

/*
 * Writes text (lines ending in '\n') to f, each line longer than width
 * broken at spaces: preferably at a run of three spaces (where tsarun's
 * lines separate their figures), else at the last space that fits. A
 * continuation line is indented two columns deeper than its first line. A
 * word longer than the width is left whole.
 */
void termwrap_fputs(FILE *f, const char *text, size_t width);

/* The same for a formatted message (a line of tsarun's own on stderr). */
void termwrap_printf(FILE *f, size_t width, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * One line: prefix as it is, then the formatted message made safe for a
 * terminal first (textsafe_term: a path or a reason from outside is shown,
 * never obeyed, and a newline in it is written visibly), wrapped at width.
 */
void termwrap_say(FILE *f, size_t width, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* TSARUN_TERMWRAP_H */
