// SPDX-License-Identifier: MIT
/*
 * Blocking points that differ only in the caller the frame-pointer walk
 * skips: nanosleep() is the C library's (no frame pointer), so the walk
 * from inside it goes from the sleep straight to its caller's caller.
 * - The main thread calls fast_path() (N sleeps of FAST ms) and slow_path()
 *   (N sleeps of SLOW ms) through one call site, by a function pointer.
 * - Threads own0, own1 and own2 each sleep N times, (k + 1) * FAST ms, in a
 *   function of their own, all called from one thread function.
 * - With DEPTH > 0, the main thread then sleeps FAST ms once at the bottom
 *   of DEPTH recursive calls of recurse(), each with a 64-byte frame.
 * Each function then counts the call, so that none ends in a tail call.
 * Built twice: with frame pointers, and without (two_paths_nofp).
 * Prints the time fast_path's and slow_path's nanosleep calls took, by
 * CLOCK_MONOTONIC around each: "fast_path_ns=N slow_path_ns=N".
 * Usage: two_paths [N=10] [FAST=5] [SLOW=15] [DEPTH=0]
 */
#include <sys/prctl.h>

#include "common.h"

static int n;
static double fast, slow;
static volatile int calls;

/* The time each sleeper's nanosleep calls took, by its own clock. */
static uint64_t slept_ns[5];

/* A function of its own that sleeps ms, then counts the call (no tail call). */
#define SLEEPER(name, i)                                       \
	static __attribute__((noinline)) void name(double ms)  \
	{                                                      \
		struct timespec ts = {0, (long)(ms * 1e6)};    \
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);       \
                                                               \
		nanosleep(&ts, NULL);                          \
		slept_ns[i] += clock_ns(CLOCK_MONOTONIC) - t0; \
		calls++;                                       \
	}

SLEEPER(fast_path, 0)
SLEEPER(slow_path, 1)
SLEEPER(own0, 2)
SLEEPER(own1, 3)
SLEEPER(own2, 4)

static __attribute__((noinline)) int recurse(int depth, double ms)
{
	volatile char pad[64];

	pad[0] = (char)depth;
	if (depth > 0)
		recurse(depth - 1, ms);
	else
		fast_path(ms);
	calls++;
	return pad[0];
}

static void (*volatile paths[2])(double) = {fast_path, slow_path};
static void (*volatile owns[3])(double) = {own0, own1, own2};

static __attribute__((noinline)) void dispatch(int which, double ms)
{
	paths[which](ms);
	calls++;
}

static void *owner(void *arg)
{
	long k = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "own%ld", k);
	prctl(PR_SET_NAME, name);
	for (int i = 0; i < n; i++)
		owns[k]((double)(k + 1) * fast);
	calls++;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	n = (int)arg_double(argc, argv, 1, 10);
	fast = arg_double(argc, argv, 2, 5);
	slow = arg_double(argc, argv, 3, 15);
	for (long k = 0; k < 3; k++)
		pthread_create(&t[k], NULL, owner, (void *)k);
	for (int i = 0; i < n; i++) {
		dispatch(0, fast);
		dispatch(1, slow);
	}
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	if (argc > 4 && atoi(argv[4]) > 0)
		recurse(atoi(argv[4]), fast);
	printf("fast_path_ns=%llu slow_path_ns=%llu\n", (unsigned long long)slept_ns[0],
	       (unsigned long long)slept_ns[1]);
	return 0;
}
