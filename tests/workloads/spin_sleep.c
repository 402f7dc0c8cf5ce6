// SPDX-License-Identifier: MIT
/*
 * One thread ("spinsleep") spins SPIN ms of its own CPU time, then sleeps
 * SLEEP ms. Usage: spin_sleep [SPIN_MS=300] [SLEEP_MS=200]
 */
#include <pthread.h>

#include "common.h"

static double spin_ms, sleep_for_ms;

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), "spinsleep");
	spin_cpu_ms(spin_ms);
	sleep_ms(sleep_for_ms);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	spin_ms = arg_double(argc, argv, 1, 300);
	sleep_for_ms = arg_double(argc, argv, 2, 200);
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
