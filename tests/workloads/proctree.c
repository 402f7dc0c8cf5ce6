// SPDX-License-Identifier: MIT
/*
 * A tree of N processes: each process forks up to FANOUT children until N
 * processes exist in all; every process sleeps SLEEP_MS and waits for its
 * children. Usage: proctree [N=100] [FANOUT=3] [SLEEP_MS=20]
 */
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static int total, fanout;
static double nap;

/* Create the subtree rooted at index idx (0-based, heap order). */
static void subtree(int idx)
{
	pid_t kids[64];
	int nk = 0;

	for (int c = 1; c <= fanout && nk < 64; c++) {
		int child = idx * fanout + c;
		pid_t pid;

		if (child >= total)
			break;
		pid = fork();
		if (pid == 0) {
			subtree(child);
			_exit(0);
		}
		if (pid > 0)
			kids[nk++] = pid;
	}
	sleep_ms(nap);
	for (int i = 0; i < nk; i++)
		waitpid(kids[i], NULL, 0);
}

int main(int argc, char **argv)
{
	total = (int)arg_double(argc, argv, 1, 100);
	fanout = (int)arg_double(argc, argv, 2, 3);
	nap = arg_double(argc, argv, 3, 20);
	if (fanout < 1)
		fanout = 1;
	subtree(0);
	return 0;
}
