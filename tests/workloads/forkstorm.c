// SPDX-License-Identifier: MIT
/*
 * A fork storm: N children forked as fast as the kernel allows, at most
 * CONC alive at once. With ORPHAN=1 each child forks a grandchild and exits
 * at once, so every grandchild is orphaned (or left a zombie) and ends up
 * reaped by the nearest subreaper: tsarun.
 * Usage: forkstorm [N=1000] [CONC=32] [ORPHAN=1]
 * Processes in all: 1 + N (+ N grandchildren with ORPHAN).
 */
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	int n = (int)arg_double(argc, argv, 1, 1000);
	int conc = (int)arg_double(argc, argv, 2, 32);
	int orphan = (int)arg_double(argc, argv, 3, 1);
	int live = 0, failed = 0;

	if (conc < 1)
		conc = 1;
	for (int i = 0; i < n; i++) {
		pid_t pid;

		while (live >= conc) {
			int status;

			if (wait(&status) < 0)
				return 1;
			live--;
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				failed++;
		}
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			if (orphan && fork() < 0)
				_exit(1);
			_exit(
			    0); /* the grandchild too: it exits at once, after its parent or not */
		}
		live++;
	}
	while (live > 0) {
		int status;

		if (wait(&status) < 0)
			return 1;
		live--;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	return failed ? 2 : 0;
}
