// SPDX-License-Identifier: MIT
/*
 * The parent vforks; the child sleeps SLEEP ms before it exits, so the
 * parent waits in uninterruptible sleep (D, the vfork completion) that long.
 * Usage: vfork_wait [SLEEP_MS=300]
 */
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	double ms = arg_double(argc, argv, 1, 300);
	struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
			      .tv_nsec = (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};
	pid_t pid;
	int status;

	pid = vfork();
	if (pid == 0) {
		/* Only async-signal-safe calls in a vfork child. */
		nanosleep(&ts, NULL);
		_exit(0);
	}
	if (pid < 0)
		return 1;
	waitpid(pid, &status, 0);
	return 0;
}
