// SPDX-License-Identifier: MIT
/*
 * "holder" takes a mutex and keeps it HOLD ms (sleeping); "waiter" then
 * blocks on it in the kernel (futex), so it sleeps about HOLD ms. A third
 * thread, "napper", sleeps NAP ms in nanosleep.
 * Usage: mutex_wait [HOLD_MS=150] [NAP_MS=100]
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

/* Named so that off-CPU stacks can find it. */
__attribute__((noinline)) void waiter_blocks_on_mutex(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

static void *waiter(void *arg)
{
	pthread_setname_np(pthread_self(), "waiter");
	pthread_barrier_wait(&held);
	waiter_blocks_on_mutex();
	return NULL;
}

__attribute__((noinline)) void napper_sleeps(void)
{
	sleep_ms(nap_ms);
}

static void *napper(void *arg)
{
	pthread_setname_np(pthread_self(), "napper");
	napper_sleeps();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t h, w, n;

	hold_ms = arg_double(argc, argv, 1, 150);
	nap_ms = arg_double(argc, argv, 2, 100);
	pthread_barrier_init(&held, NULL, 2);
	/* Each thread names itself: named from here, a late name could miss it. */
	pthread_create(&h, NULL, holder, NULL);
	pthread_create(&w, NULL, waiter, NULL);
	pthread_create(&n, NULL, napper, NULL);
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	pthread_join(n, NULL);
	return 0;
}
