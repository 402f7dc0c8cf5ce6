/* SPDX-License-Identifier: MIT */
/* From wait(2) statuses to what tsarun reports and returns. Pure. */
#ifndef TSARUN_STATUS_H
#define TSARUN_STATUS_H

struct run;

/*
 * Fill exit_code, term_signal and core_dumped from a wait status; status
 * becomes exited or signaled unless it is already interrupted or not_started.
 */
void status_from_wait(struct run *r, int wait_status);

/*
 * The exit code tsarun returns for a run: the command's own code; 128+N
 * when it was killed by signal N; when tsarun was interrupted and the
 * command nonetheless exited 0, 128+N of the interrupting signal, so that a
 * caller can tell an interrupted run from a complete one.
 */
int status_exit_code(const struct run *r);

/* "exit 3", "killed by SIGTERM", "killed by SIGSEGV (core dumped)". */
void status_describe(const struct run *r, char *buf, unsigned long len);

/* "SIGTERM" for 15; "SIGRTMIN+6" for real-time signals; "SIG0" when unnamed. */
const char *status_signame(int sig, char *buf, unsigned long len);

#endif /* TSARUN_STATUS_H */
