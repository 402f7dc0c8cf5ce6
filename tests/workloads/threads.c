// SPDX-License-Identifier: MIT
/*
 * N short-lived threads, CONC at a time, each spinning WORK_US of CPU.
 * Usage: threads [N=2000] [CONC=8] [WORK_US=200]
 */
#include <pthread.h>

#include "common.h"

static double work_us;

static void *worker(void *arg)
{
	spin_cpu_ms(work_us / 1000.0);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = (int)arg_double(argc, argv, 1, 2000);
	int conc = (int)arg_double(argc, argv, 2, 8);
	pthread_t *t;

	work_us = arg_double(argc, argv, 3, 200);
	if (conc < 1)
		conc = 1;
	t = calloc((size_t)conc, sizeof(*t));
	if (!t)
		return 1;
	for (int done = 0; done < n; done += conc) {
		int k = n - done < conc ? n - done : conc;

		for (int i = 0; i < k; i++)
			if (pthread_create(&t[i], NULL, worker, NULL))
				return 1;
		for (int i = 0; i < k; i++)
			pthread_join(t[i], NULL);
	}
	free(t);
	return 0;
}
