/* SPDX-License-Identifier: MIT */
/* The launcher's clock reads, in nanoseconds. */
#ifndef TSARUN_CLOCK_H
#define TSARUN_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif /* TSARUN_CLOCK_H */
