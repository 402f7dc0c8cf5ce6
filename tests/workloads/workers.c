// SPDX-License-Identifier: MIT
/*
 * N worker threads, all named "worker", each burning MS ms of its own CPU
 * time in worker_compute(); worker number HOT (0-based, in creation order)
 * also burns EXTRA percent of MS more in hot_function(). The threads are
 * created one after another, so their order among same-name siblings is
 * their number. Usage: workers [N=4] [MS=40] [HOT=2] [EXTRA=0]
 */
#include <pthread.h>

#include "common.h"

static double ms, extra;
static int hot;

__attribute__((noinline)) void worker_compute(void)
{
	spin_cpu_ms(ms);
}

__attribute__((noinline)) void hot_function(void)
{
	spin_cpu_ms(ms * extra / 100);
}

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), "worker");
	worker_compute();
	if ((int)(intptr_t)arg == hot && extra > 0)
		hot_function();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = (int)arg_double(argc, argv, 1, 4);
	pthread_t t[64];

	ms = arg_double(argc, argv, 2, 40);
	hot = (int)arg_double(argc, argv, 3, 2);
	extra = arg_double(argc, argv, 4, 0);
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
