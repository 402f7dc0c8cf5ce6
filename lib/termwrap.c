// SPDX-License-Identifier: MIT
/* Terminal width and word wrapping. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "termwrap.h"
#include "textsafe.h"

size_t termwrap_width(int fd)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;

	if (!isatty(fd))
		return 0;
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);

		if (!*end && v > 0 && v < 100000)
			return (size_t)v;
	}
	if (!ioctl(fd, TIOCGWINSZ, &ws) && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Bytes of the CSI sequence at s (ESC [ ... final byte), 0 when there is none. */
static size_t csi_len(const char *s, size_t len)
{
	size_t i = 2;

	if (len < 2 || s[0] != '\033' || s[1] != '[')
		return 0;
	while (i < len && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x40)
		i++;
	return i < len ? i + 1 : len;
}

size_t termwrap_cols(const char *s, size_t len)
{
	size_t cols = 0;

	if (len == (size_t)-1)
		len = strlen(s);
	for (size_t i = 0; i < len;) {
		size_t c = csi_len(s + i, len - i);

		if (c) {
			i += c;
			continue;
		}
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			cols++;
		i++;
	}
	return cols;
}

/* One line (without its '\n') broken to width. */
static void wrap_line(FILE *f, const char *s, size_t len, size_t width)
{
	size_t indent = 0, lead = 0;

	while (indent < len && s[indent] == ' ')
		indent++;
	for (;;) {
		size_t cols = lead, i = 0, brk = 0, brk3 = 0, room;

		while (i < len && s[i] == ' ' && lead)
			i++; /* a continuation starts at its word */
		room = width > cols ? width - cols : 0;
		if (termwrap_cols(s + i, len - i) <= room) {
			fprintf(f, "%*s%.*s\n", (int)lead, "", (int)(len - i), s + i);
			return;
		}
		/* The last break that fits: after a space, with a word before it. */
		for (size_t j = i, used = 0; j < len; j++) {
			size_t c = csi_len(s + j, len - j);

			if (c) {
				j += c - 1;
				continue;
			}
			if (((unsigned char)s[j] & 0xc0) != 0x80)
				used++;
			if (used > room)
				break;
			if (s[j] == ' ' && j > i + (lead ? 0 : indent) && s[j - 1] != ' ') {
				brk = j;
				if (j + 2 < len && s[j + 1] == ' ' && s[j + 2] == ' ')
					brk3 = j;
			}
		}
		/* A figure's group kept whole when that does not leave the line half empty. */
		if (brk3 && termwrap_cols(s + i, brk3 - i) * 2 >= room)
			brk = brk3;
		if (!brk) {
			/* A word wider than the line: whole, up to its end. */
			for (brk = i + 1; brk < len && !(s[brk] == ' ' && s[brk - 1] != ' '); brk++)
				;
			if (brk >= len) {
				fprintf(f, "%*s%.*s\n", (int)lead, "", (int)(len - i), s + i);
				return;
			}
		}
		fprintf(f, "%*s%.*s\n", (int)lead, "", (int)(brk - i), s + i);
		while (brk < len && s[brk] == ' ')
			brk++;
		s += brk;
		len -= brk;
		lead = indent + 2;
		if (!len)
			return;
	}
}

void termwrap_fputs(FILE *f, const char *text, size_t width)
{
	if (!text)
		return;
	if (!width) {
		fputs(text, f);
		return;
	}
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);

		wrap_line(f, text, len, width);
		text += len + (nl ? 1 : 0);
	}
}

void termwrap_printf(FILE *f, size_t width, const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0) {
		/* No memory for the text: written as it is, unwrapped. */
		va_start(ap, fmt);
		vfprintf(f, fmt, ap);
		va_end(ap);
		return;
	}
	termwrap_fputs(f, text, width);
	free(text);
}

void termwrap_say(FILE *f, size_t width, const char *prefix, const char *fmt, ...)
{
	char *msg = NULL, *safe = NULL, *line = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n >= 0)
		safe = textsafe_dup(textsafe_term, msg, (size_t)n);
	if (safe && asprintf(&line, "%s%s\n", prefix, safe) >= 0)
		termwrap_fputs(f, line, width);
	else if (safe)
		fprintf(f, "%s%s\n", prefix, safe);
	else
		/* No memory for the text: said as briefly as can be, unwrapped. */
		fprintf(f, "%s(a message, out of memory)\n", prefix);
	free(line);
	free(safe);
	free(msg);
}
