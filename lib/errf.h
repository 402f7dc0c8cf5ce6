/* SPDX-License-Identifier: MIT */
/*
 * An error said once, into the caller's buffer: the parsers' way of
 * returning a reason with a code.
 *
 *	if (!*arg)
 *		return errf(err, errlen, "--json: empty file name");
 *
 * Knows nothing of tsarun.
 */
#ifndef LIB_ERRF_H
#define LIB_ERRF_H

#include <stddef.h>

/* Writes the message (printf's format) into err; returns -EINVAL. */
int errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* LIB_ERRF_H */
