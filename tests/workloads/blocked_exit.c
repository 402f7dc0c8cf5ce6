// SPDX-License-Identifier: MIT
/*
 * Threads that are blocked when their process exits: one reads an empty
 * pipe, one waits on a condition variable, one sleeps for an hour, one waits
 * in uninterruptible sleep for a vfork child (which sleeps 2 * MS, then
 * exits). After MS the main thread ends the process with STATUS (or with
 * SIGKILL when STATUS is -9): the kernel takes the four down where they wait.
 * Usage: blocked_exit [MS=200] [STATUS=3]
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static double ms;
static int pfd[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t ready;

static void *reader(void *arg)
{
	char b;

	prctl(PR_SET_NAME, "reader");
	pthread_barrier_wait(&ready);
	(void)!read(pfd[0], &b, 1);
	return NULL;
}

static void *waiter(void *arg)
{
	prctl(PR_SET_NAME, "condwait");
	pthread_mutex_lock(&mu);
	pthread_barrier_wait(&ready);
	for (;;)
		pthread_cond_wait(&cv, &mu);
	return NULL;
}

static void *sleeper(void *arg)
{
	prctl(PR_SET_NAME, "sleeper");
	pthread_barrier_wait(&ready);
	sleep_ms(3600e3);
	return NULL;
}

static void *vforker(void *arg)
{
	struct timespec ts = {.tv_sec = (time_t)(2 * ms / 1000),
			      .tv_nsec =
				  (long)((2 * ms - (double)(time_t)(2 * ms / 1000) * 1000) * 1e6)};

	prctl(PR_SET_NAME, "vforker");
	pthread_barrier_wait(&ready);
	if (vfork() == 0) {
		nanosleep(&ts, NULL);
		_exit(0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int status;
	pthread_t t[4];
	void *(*fn[4])(void *) = {reader, waiter, sleeper, vforker};

	ms = arg_double(argc, argv, 1, 200);
	status = (int)arg_double(argc, argv, 2, 3);
	if (pipe(pfd) || pthread_barrier_init(&ready, NULL, 5))
		return 1;
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL))
			return 1;
	pthread_barrier_wait(&ready);
	sleep_ms(ms);
	if (status == -9)
		kill(getpid(), SIGKILL);
	exit(status); /* exit_group: the four threads die where they block */
}
