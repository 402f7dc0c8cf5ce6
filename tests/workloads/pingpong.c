// SPDX-License-Identifier: MIT
/*
 * Two threads ("ping", "pong") pinned to one CPU pass a byte back and forth
 * through two pipes ROUNDS times: each round is two sleeps, two wakeups and
 * two switches, a few microseconds apart (the scheduler events of perf bench
 * sched pipe, without perf).
 * Usage: pingpong [ROUNDS=100000] [CPU=0]
 */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "common.h"

static int ab[2], ba[2], cpu;
static long rounds;

static void pin(const char *name)
{
	cpu_set_t set;

	pthread_setname_np(pthread_self(), name);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *pong(void *arg)
{
	char c;

	pin("pong");
	for (long i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char c = 'x';

	rounds = (long)arg_double(argc, argv, 1, 100000);
	cpu = (int)arg_double(argc, argv, 2, 0);
	if (pipe(ab) || pipe(ba) || pthread_create(&t, NULL, pong, NULL))
		return 1;
	pin("ping");
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	pthread_join(t, NULL);
	return 0;
}
