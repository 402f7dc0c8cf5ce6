// SPDX-License-Identifier: MIT
/*
 * Two threads ("pinned-a", "pinned-b") pinned to one CPU, each needing
 * CPU_MS of CPU time: each waits in the runqueue while the other runs.
 * Usage: pinned [CPU_MS=400] [CPU=0]
 */
#include <pthread.h>
#include <sched.h>

#include "common.h"

static double cpu_ms;
static int cpu;
static pthread_barrier_t start;

static void *worker(void *arg)
{
	cpu_set_t set;

	pthread_setname_np(pthread_self(), arg);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(&start);
	spin_cpu_ms(cpu_ms);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	cpu_ms = arg_double(argc, argv, 1, 400);
	cpu = (int)arg_double(argc, argv, 2, 0);
	pthread_barrier_init(&start, NULL, 2);
	pthread_create(&a, NULL, worker, "pinned-a");
	pthread_create(&b, NULL, worker, "pinned-b");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
