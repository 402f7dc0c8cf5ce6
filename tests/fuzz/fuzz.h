/* SPDX-License-Identifier: MIT */
/*
 * What every libFuzzer target shares. A target defines
 * LLVMFuzzerTestOneInput(); libFuzzer gives it exactly `size` bytes, so a
 * parser that reads past them is caught by ASan.
 */
#ifndef TSARUN_FUZZ_H
#define TSARUN_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (caller frees). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Renderers write here: the point is that they run, not what they print. */
static inline FILE *fuzz_sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "we");
	if (!f)
		abort();
	return f;
}

#endif
