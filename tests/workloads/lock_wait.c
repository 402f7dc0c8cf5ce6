// SPDX-License-Identifier: MIT
/*
 * The main thread waits on a mutex: "holder" takes it and keeps it HOLD ms
 * (asleep), then the main thread blocks on it in the kernel (futex) in
 * main_waits_on_mutex() for about that long, while "napper" sleeps NAP ms
 * beside them. The command's wall time is the main thread's life, so a
 * longer hold is a longer wall time spent by the main thread asleep at the
 * futex. First the main thread burns BURN_MS of its own CPU time, so that
 * the command's CPU time is a figure that load does not move.
 * Usage: lock_wait [HOLD_MS=100] [NAP_MS=50] [BURN_MS=0]
 */
#include <pthread.h>

#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t held;
static double hold_ms, nap_ms;

static void *holder(void *arg)
{
	pthread_setname_np(pthread_self(), "holder");
	pthread_mutex_lock(&lock);
	pthread_barrier_wait(&held);
	sleep_ms(hold_ms);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *napper(void *arg)
{
	pthread_setname_np(pthread_self(), "napper");
	sleep_ms(nap_ms);
	return NULL;
}

/* Named so that off-CPU stacks can find it. */
__attribute__((noinline)) void main_waits_on_mutex(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
	pthread_t h, n;

	hold_ms = arg_double(argc, argv, 1, 100);
	nap_ms = arg_double(argc, argv, 2, 50);
	spin_cpu_ms(arg_double(argc, argv, 3, 0));
	pthread_barrier_init(&held, NULL, 2);
	pthread_create(&h, NULL, holder, NULL);
	pthread_create(&n, NULL, napper, NULL);
	pthread_barrier_wait(&held);
	main_waits_on_mutex();
	pthread_join(h, NULL);
	pthread_join(n, NULL);
	return 0;
}
