/* SPDX-License-Identifier: MIT */
/* Helpers for workloads with known behaviour. Header-only: each workload is one file. */
#ifndef TSARUN_WORKLOAD_COMMON_H
#define TSARUN_WORKLOAD_COMMON_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burn exactly ms of this thread's CPU time (not wall time: preemption does not count). */
static inline void spin_cpu_ms(double ms)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)(ms * 1e6);
	volatile uint64_t x = 0;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			x += (uint64_t)i;
}

static inline void sleep_ms(double ms)
{
	struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
			      .tv_nsec = (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline double arg_double(int argc, char **argv, int i, double def)
{
	return argc > i ? atof(argv[i]) : def;
}

#endif
