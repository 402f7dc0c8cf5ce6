// SPDX-License-Identifier: MIT
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "run.h"
#include "status.h"

void status_from_wait(struct run *r, int ws)
{
	r->wait_status = ws;
	r->exit_code = 0;
	r->term_signal = 0;
	r->core_dumped = false;
	if (WIFEXITED(ws)) {
		r->exit_code = WEXITSTATUS(ws);
		if (r->status == RUN_SIGNALED)
			r->status = RUN_EXITED;
	} else if (WIFSIGNALED(ws)) {
		r->term_signal = WTERMSIG(ws);
		r->core_dumped = WCOREDUMP(ws);
		if (r->status == RUN_EXITED)
			r->status = RUN_SIGNALED;
	}
}

int status_exit_code(const struct run *r)
{
	if (r->term_signal)
		return 128 + r->term_signal;
	/*
	 * A SIGINT that only tsarun was sent, passed on, and that the command
	 * outlived: a shell waiting for a command that survives it carries on
	 * (bash's "wait and cooperative exit"), and the command finished its
	 * work. Its status is the run's. Any other interruption of a command
	 * that then exits 0 (a terminal's Ctrl-C it handled, SIGTERM, SIGHUP)
	 * ended it early: 128+N.
	 */
	if (r->status == RUN_INTERRUPTED && r->exit_code == 0 && r->interrupt_signal &&
	    (r->interrupt_signal != SIGINT || r->interrupt_tty))
		return 128 + r->interrupt_signal;
	return r->exit_code;
}

const char *status_signame(int sig, char *buf, unsigned long len)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, len, "SIG%d", sig);
	return buf;
}

void status_describe(const struct run *r, char *buf, unsigned long len)
{
	char sig[32];

	if (r->status == RUN_NOT_STARTED)
		snprintf(buf, len, "not started (exit %d)", r->exit_code);
	else if (r->term_signal)
		snprintf(buf, len, "killed by %s%s",
			 status_signame(r->term_signal, sig, sizeof(sig)),
			 r->core_dumped ? " (core dumped)" : "");
	else
		snprintf(buf, len, "exit %d", r->exit_code);
	if (r->status == RUN_INTERRUPTED && r->interrupt_signal) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, ", interrupted by %s",
			 status_signame(r->interrupt_signal, sig, sizeof(sig)));
	}
}
