// SPDX-License-Identifier: MIT
/*
 * A process to attach to: "spinner" spins on the CPU without a break,
 * "sleeper" sleeps in 1 s naps (SLEEPERS of them), for SEC seconds; then
 * it exits 0. Usage: spinner [SEC=10] [SLEEPERS=1]
 */
#include <sys/prctl.h>

#include "common.h"

static double sec;

static void *spin(void *arg)
{
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(sec * 1e9);
	volatile uint64_t x = 0;

	prctl(PR_SET_NAME, "spinner");
	while (clock_ns(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 1000; i++)
			x += (uint64_t)i;
	return NULL;
}

static void *nap(void *arg)
{
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(sec * 1e9);

	prctl(PR_SET_NAME, "sleeper");
	while (clock_ns(CLOCK_MONOTONIC) < end)
		sleep_ms(1000);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = (int)arg_double(argc, argv, 2, 1);
	pthread_t a, *b;

	sec = arg_double(argc, argv, 1, 10);
	b = calloc(n > 0 ? (size_t)n : 1, sizeof(*b));
	if (!b || pthread_create(&a, NULL, spin, NULL))
		return 1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&b[i], NULL, nap, NULL))
			return 1;
	pthread_join(a, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(b[i], NULL);
	free(b);
	return 0;
}
