// SPDX-License-Identifier: MIT
/*
 * A thread that execs: the leader sleeps (or, with LEADER_EXITS=1, ends
 * itself with pthread_exit, a zombie while the process lives); a second
 * thread sleeps WAIT_MS, spins CPU_MS of its own CPU time, then execs this
 * program again, which spins AFTER_CPU_MS, sleeps AFTER_MS and exits 0. The
 * kernel gives the exec'ing thread the leader's pid (and its start time):
 * under that tid, counters that were the other thread's.
 * Usage: execthread [WAIT_MS=300] [CPU_MS=300] [AFTER_MS=500] [LEADER_EXITS=0]
 *                   [AFTER_CPU_MS=0]
 */
#include <unistd.h>

#include "common.h"

static double wait_ms, cpu_ms;
static char **args;
static char self[4096];

static void *worker(void *arg)
{
	sleep_ms(wait_ms);
	spin_cpu_ms(cpu_ms);
	execv(self, args); /* the real path: the process keeps its name */
	_exit(126);
}

int main(int argc, char **argv)
{
	char after[32], after_cpu[32];
	char *next[] = {argv[0], "after", after, after_cpu, NULL};
	pthread_t t;
	ssize_t len;

	if (argc > 3 && !strcmp(argv[1], "after")) {
		spin_cpu_ms(atof(argv[3]));
		sleep_ms(atof(argv[2]));
		return 0;
	}
	wait_ms = arg_double(argc, argv, 1, 300);
	cpu_ms = arg_double(argc, argv, 2, 300);
	snprintf(after, sizeof(after), "%g", arg_double(argc, argv, 3, 500));
	snprintf(after_cpu, sizeof(after_cpu), "%g", arg_double(argc, argv, 5, 0));
	args = next;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 1;
	self[len] = '\0';
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	if (arg_double(argc, argv, 4, 0))
		pthread_exit(NULL);
	for (;;)
		pause(); /* the exec in the other thread ends this thread */
}
