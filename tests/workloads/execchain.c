// SPDX-License-Identifier: MIT
/*
 * One process that execs itself N times before it exits with STATUS.
 * With THREADED=1 every other exec is made by a second thread while the
 * first (the leader) sleeps: the kernel kills the leader and the exec'ing
 * thread takes over its pid.
 * Usage: execchain [N=100] [STATUS=0] [THREADED=0]
 */
#include <pthread.h>
#include <unistd.h>

#include "common.h"

static char **args;
static char self[4096];

/* The real path, not /proc/self/exe: the process keeps its name. */
static void exec_next(void)
{
	execv(self, args);
	_exit(126);
}

static void *exec_thread(void *arg)
{
	exec_next();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = (int)arg_double(argc, argv, 1, 100);
	int status = (int)arg_double(argc, argv, 2, 0);
	int threaded = (int)arg_double(argc, argv, 3, 0);
	char left[16], st[16], th[16];
	char *next[] = {argv[0], left, st, th, NULL};
	pthread_t t;

	ssize_t len;

	if (n <= 0)
		return status;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 1;
	self[len] = '\0';
	snprintf(left, sizeof(left), "%d", n - 1);
	snprintf(st, sizeof(st), "%d", status);
	snprintf(th, sizeof(th), "%d", threaded);
	args = next;
	if (threaded && n % 2 == 0) {
		if (pthread_create(&t, NULL, exec_thread, NULL))
			return 1;
		for (;;)
			pause(); /* the exec in the other thread ends this thread */
	}
	exec_next();
	return 1;
}
