/* SPDX-License-Identifier: MIT */
/* Fixture records and golden-file helpers shared by the unit tests. */
#ifndef TSARUN_FIXTURES_H
#define TSARUN_FIXTURES_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsarun.h"

#define MS 1000000ull
#define T0 1000000000000ull /* an arbitrary CLOCK_MONOTONIC origin */

/* A thread that lived [start, end) ms after T0 with the given state times in ms. */
static inline struct tsa_thread fx_thread(uint32_t tid, uint32_t pid, uint32_t ppid,
					  const char *comm, double start, double end, double on,
					  double rq, double s, double d)
{
	struct tsa_thread t;

	memset(&t, 0, sizeof(t));
	t.tid = tid;
	t.pid = pid;
	t.ppid = ppid;
	t.flags = TSA_F_TRACKED | TSA_F_EXITED | (tid == pid ? TSA_F_LEADER : 0);
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	t.start_ns = T0 + (uint64_t)(start * MS);
	t.end_ns = T0 + (uint64_t)(end * MS);
	t.task_start_ns = 5 * T0 + t.start_ns; /* distinct per start */
	t.boot_start_ns = t.task_start_ns + 7;
	t.state_ns[TSA_ST_ONCPU] = (uint64_t)(on * MS);
	t.state_ns[TSA_ST_RUNQ] = (uint64_t)(rq * MS);
	t.state_ns[TSA_ST_SLEEP] = (uint64_t)(s * MS);
	t.state_ns[TSA_ST_DISK] = (uint64_t)(d * MS);
	t.slices = 10;
	t.voluntary = 8;
	t.involuntary = 2;
	t.wakeups = 8;
	t.wakeup_lat_sum = 80000;
	t.wakeup_lat_count = 8;
	t.wakeup_lat_max = 30000;
	/* The kernel agrees exactly unless a test says otherwise. */
	t.kend[TSA_K_SUM_EXEC] = t.state_ns[TSA_ST_ONCPU];
	t.kend[TSA_K_RUN_DELAY] = t.state_ns[TSA_ST_RUNQ];
	t.kend[TSA_K_PCOUNT] = 10;
	/* An exited thread's nvcsw has its final switch, counted in voluntary for a leader only. */
	t.kend[TSA_K_NVCSW] = tid == pid ? 8 : 9;
	t.kend[TSA_K_NIVCSW] = 2;
	t.hist[TSA_ST_SLEEP - 1][10] = 8;
	return t;
}

/*
 * The whole file at rel in the source tree, NUL-terminated, its length in
 * *len (may be NULL). malloc'd; NULL when it cannot be read.
 */
static inline char *fx_read_file(const char *rel, size_t *len)
{
	char path[1024];
	FILE *f;
	long n;
	char *text;

	snprintf(path, sizeof(path), "%s/%s", SRCDIR, rel);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0) {
		fclose(f);
		return NULL;
	}
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
		free(text);
		text = NULL;
	}
	fclose(f);
	if (text && len)
		*len = (size_t)n;
	return text;
}

/* Compare text with a golden file; UPDATE_GOLDEN=1 rewrites it instead. */
static inline int golden_check(const char *name, const char *text)
{
	char path[512];
	FILE *f;
	char *want;
	int same;

	snprintf(path, sizeof(path), "tests/golden/%s", name);
	if (getenv("UPDATE_GOLDEN")) {
		snprintf(path, sizeof(path), "%s/tests/golden/%s", SRCDIR, name);
		f = fopen(path, "w");
		if (!f)
			return -1;
		fputs(text, f);
		fclose(f);
		return 0;
	}
	want = fx_read_file(path, NULL);
	if (!want) {
		fprintf(stderr, "golden file %s missing (run with UPDATE_GOLDEN=1)\n", path);
		return -1;
	}
	same = !strcmp(want, text);
	if (!same)
		fprintf(stderr, "%s differs from the golden file.\n--- want\n%s\n--- got\n%s\n",
			name, want, text);
	free(want);
	return same ? 0 : -1;
}

/* Is s well-formed UTF-8 (Unicode's table 3-7: no overlong form, no surrogate, <= U+10FFFF)? */
static inline bool fx_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned char c = *p;
		unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
		unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
		size_t n = c < 0x80		    ? 1
			   : c >= 0xc2 && c <= 0xdf ? 2
			   : c >= 0xe0 && c <= 0xef ? 3
			   : c >= 0xf0 && c <= 0xf4 ? 4
						    : 0;

		if (!n)
			return false;
		for (size_t k = 1; k < n; k++, lo = 0x80, hi = 0xbf)
			if (p[k] < lo || p[k] > hi)
				return false;
		p += n;
	}
	return true;
}

#endif
