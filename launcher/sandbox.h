/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's sandbox: a seccomp filter (libseccomp; the only module
 * that includes it) that tsarun puts on itself once the probes are loaded
 * and armed for the first run, just before the command is released. From then on the supervisor can
 * make only the system calls its event loop, probes, fold and writers need
 * (sandbox.c lists them, with the reason for each): no exec, no fork, no
 * new BPF program or map, no mount, no ptrace, no change of credentials,
 * no socket but netlink.
 *
 * A call outside the list does not fail quietly: SIGSYS runs a handler that
 * names the call on stderr and ends tsarun with 125, its own error status
 * (dying of SIGSYS would read as 159, "the command was killed by signal
 * 31", which tsarun returns for a command that was).
 *
 * The command is not confined: it was forked (by the spawner) before.
 */
#ifndef TSARUN_SANDBOX_H
#define TSARUN_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Confine this process, all its threads. Returns 0, or -errno with the
 * reason in err (seccomp unavailable, out of memory). Idempotent.
 */
int sandbox_enter(char *err, size_t errlen);

/*
 * Build the filter ahead of sandbox_enter(), which then only puts it in
 * force: the supervisor does it while the spawner forks the first command.
 * Optional; a failure is reported by sandbox_enter().
 */
void sandbox_prepare(void);

/* Is the filter in force? Was it tried (once is enough)? Why not, when not. */
bool sandbox_active(void);
bool sandbox_tried(void);
const char *sandbox_failure(void); /* NULL when active or not tried */

#endif /* TSARUN_SANDBOX_H */
