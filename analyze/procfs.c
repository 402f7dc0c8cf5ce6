// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"

/* Next space-separated unsigned field from *p (bounded by end). */
static int next_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int digits = 0;

	while (s < end && *s == ' ')
		s++;
	while (s < end && *s >= '0' && *s <= '9') {
		uint64_t d = (uint64_t)(*s - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
		s++;
		digits++;
	}
	if (!digits || (s < end && *s != ' ' && *s != '\n'))
		return -EINVAL;
	*p = s;
	*v = x;
	return 0;
}

/* Next field, signed or not: /proc prints u64 fields (rsslim) past INT64_MAX. */
static int next_field(const char **p, const char *end, int64_t *v)
{
	const char *s = *p;
	uint64_t u;
	int neg = 0, err;

	while (s < end && *s == ' ')
		s++;
	if (s < end && *s == '-') {
		neg = 1;
		s++;
	}
	err = next_u64(&s, end, &u);
	if (err)
		return err;
	if (neg && u > (uint64_t)INT64_MAX)
		return -ERANGE;
	*v = neg ? -(int64_t)u
		 : (int64_t)u; /* large unsigned values wrap; callers read them as u64 */
	*p = s;
	return 0;
}

int procfs_parse_stat(const char *buf, size_t len, struct procfs_stat *st)
{
	const char *end = buf + len, *open, *close = NULL, *p;
	int64_t v;
	uint64_t u;
	size_t n;

	memset(st, 0, sizeof(*st));
	open = memchr(buf, '(', len);
	if (!open)
		return -EINVAL;
	/* The comm may contain ')': the last one closes it. */
	for (p = end; p > open;) {
		p--;
		if (*p == ')') {
			close = p;
			break;
		}
	}
	if (!close)
		return -EINVAL;
	p = buf;
	if (next_field(&p, open, &v) || v <= 0 || v > INT32_MAX)
		return -EINVAL;
	st->pid = (int32_t)v;
	n = (size_t)(close - open - 1);
	if (n >= sizeof(st->comm))
		n = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, n);
	st->comm[n] = '\0';
	p = close + 1;
	if (end - p < 3 || p[0] != ' ')
		return -EINVAL;
	st->state = p[1];
	p += 2;
	/* Fields 4.. : ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
	 * utime stime cutime cstime priority nice num_threads itrealvalue starttime ... */
	for (int field = 4; field <= 39; field++) {
		if (next_field(&p, end, &v))
			return field > 22 ? 0 : -EINVAL; /* old kernels end early; 22 is required */
		u = (uint64_t)v;
		switch (field) {
		case 4:
			st->ppid = (int32_t)v;
			break;
		case 5:
			st->pgrp = (int32_t)v;
			break;
		case 14:
			st->utime_ticks = u;
			break;
		case 15:
			st->stime_ticks = u;
			break;
		case 20:
			st->num_threads = v;
			break;
		case 22:
			st->starttime_ticks = u;
			break;
		case 39:
			st->processor = (int32_t)v;
			break;
		}
	}
	return 0;
}

int procfs_parse_schedstat(const char *buf, size_t len, struct procfs_schedstat *ss)
{
	const char *p = buf, *end = buf + len;

	memset(ss, 0, sizeof(*ss));
	if (next_u64(&p, end, &ss->on_cpu_ns) || next_u64(&p, end, &ss->run_delay_ns) ||
	    next_u64(&p, end, &ss->slices))
		return -EINVAL;
	return 0;
}

int procfs_parse_ctxt_switches(const char *buf, size_t len, uint64_t *nvcsw, uint64_t *nivcsw)
{
	static const char vol[] = "voluntary_ctxt_switches:";
	static const char nonvol[] = "nonvoluntary_ctxt_switches:";
	const char *p = buf, *end = buf + len;
	bool have_v = false, have_n = false;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;
		uint64_t *out = NULL;
		bool *have = NULL;

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > sizeof(vol) - 1 && !memcmp(p, vol, sizeof(vol) - 1)) {
			q = p + sizeof(vol) - 1;
			out = nvcsw;
			have = &have_v;
		} else if ((size_t)(eol - p) > sizeof(nonvol) - 1 &&
			   !memcmp(p, nonvol, sizeof(nonvol) - 1)) {
			q = p + sizeof(nonvol) - 1;
			out = nivcsw;
			have = &have_n;
		}
		if (out) {
			while (q < eol && *q == '\t')
				q++;
			if (next_u64(&q, eol, out))
				return -EINVAL;
			*have = true;
		}
		p = eol + 1;
	}
	return have_v && have_n ? 0 : -EINVAL;
}
