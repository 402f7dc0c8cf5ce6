/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's sandbox: a seccomp filter (libseccomp; the only module
 * that includes it) and a Landlock ruleset that tsarun puts on itself once
 * the probes are loaded and armed for the first run, just before the
 * command is released. From then on the supervisor can make only the
 * system calls its event loop, probes, fold and writers need (sandbox.c
 * lists them, with the reason for each): no exec, no fork, no new BPF
 * program or map, no mount, no ptrace, no change of credentials, no socket
 * but generic netlink, no signal to a process group or to every process
 * (kill(-1)), no file opened for writing but in the directories its
 * outputs were planned into (lib/outfile.h), and there no rename, link or
 * unlink of anything but within that directory; no chown, chmod, mkdir,
 * rmdir anywhere. Landlock (Linux 5.13 and later, where enabled) says the
 * same of paths: writing, making and removing files only beneath those
 * directories (and its own work directory), whatever a path resolves
 * through. Where the kernel has no Landlock, the filter alone confines,
 * and sandbox_landlock_reason() says why.
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

/* Where the confined process may still write, and what else it may do. */
struct sandbox_opts {
	const int *write_dirs; /* directory descriptors outputs go into (lib/outfile.h) */
	size_t nwrite_dirs;
	int work_dir;	 /* its own work directory: files removed there (-1: none) */
	int work_parent; /* ... and the directory it is removed from (-1: none) */
	bool fscreds;	 /* it stays root and acts as others (setfsuid, setfsgid, setgroups) */
};

/*
 * Confine this process, all its threads (o NULL: no directory to write
 * to). Returns 0, or -errno with the reason in err (seccomp unavailable,
 * out of memory). Idempotent. Landlock missing is not a failure.
 */
int sandbox_enter(const struct sandbox_opts *o, char *err, size_t errlen);

/*
 * Build the filter ahead of sandbox_enter(o), which then only puts it in
 * force: the supervisor does it while the spawner forks the first command.
 * Optional; a failure is reported by sandbox_enter(). o must be the same.
 */
void sandbox_prepare(const struct sandbox_opts *o);

/* Landlock: NULL when in force, else why not (also before sandbox_enter()). */
const char *sandbox_landlock_reason(void);

/* A Landlock rule: what may be done beneath a directory (or to a file), by descriptor. */
enum sandbox_access {
	SANDBOX_WRITE,	     /* write, make and remove regular files */
	SANDBOX_REMOVE_FILE, /* remove files */
	SANDBOX_REMOVE_DIR,  /* remove (empty) directories */
	SANDBOX_WRITE_ONE,   /* write this file (the rule's descriptor is a file) */
};

struct sandbox_rule {
	int fd;
	enum sandbox_access what;
};

/*
 * Landlock alone, with these rules (the watchdog's, once it knows what it
 * may have to remove). 0, or -errno with why set.
 */
int sandbox_landlock(const struct sandbox_rule *rules, size_t n, char *why, size_t len);

/*
 * The watchdog's own filter (watchdog.h): waiting, signals, reaping,
 * removing what was left, the delay accounting switch. Best effort.
 */
void sandbox_enter_watchdog(void);

/*
 * Called from the SIGSYS handler before tsarun exits (async-signal-safe
 * code only): what tsarun holds for the machine goes back.
 */
void sandbox_on_violation(void (*hook)(void));

/* Is the filter in force? Was it tried (once is enough)? Why not, when not. */
bool sandbox_active(void);
bool sandbox_tried(void);
const char *sandbox_failure(void); /* NULL when active or not tried */

#endif /* TSARUN_SANDBOX_H */
