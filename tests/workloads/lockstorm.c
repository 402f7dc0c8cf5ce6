// SPDX-License-Identifier: MIT
/*
 * THREADS threads of one process change their signal mask in a loop for MS
 * milliseconds of wall time: each call takes the process's siglock, a
 * spinlock_t. On a PREEMPT_RT kernel that lock is a sleeping lock, and a
 * thread that finds its holder preempted blocks in TASK_RTLOCK_WAIT (the
 * scheduler traces that switch as a preemption); elsewhere it spins.
 * Usage: lockstorm [THREADS=4] [MS=300]
 */
#include <signal.h>

#include "common.h"

static double run_ms;

static void *storm(void *arg)
{
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(run_ms * 1e6);
	sigset_t a, b;

	(void)arg;
	sigemptyset(&a);
	sigemptyset(&b);
	sigaddset(&b, SIGUSR1);
	while (clock_ns(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 100; i++)
			pthread_sigmask(SIG_SETMASK, i & 1 ? &a : &b, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = (int)arg_double(argc, argv, 1, 4);
	pthread_t t[64];

	run_ms = arg_double(argc, argv, 2, 300);
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, storm, NULL))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
