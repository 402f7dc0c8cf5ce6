/* SPDX-License-Identifier: MIT */
/*
 * The child and its exec barrier.
 *
 * spawn__new() creates the child with clone3(CLONE_PIDFD). The child stops
 * at once at the barrier: it blocks reading a pipe, before it has changed
 * anything or executed a single instruction of the command. While it waits,
 * the supervisor puts every probe in place (the probes mark the child
 * through its pidfd). spawn__release() opens the barrier; the child then
 * drops privileges and execs. Whether exec worked comes back through a
 * close-on-exec pipe: EOF means the command is running, a record means it
 * failed and why.
 *
 * If the supervisor dies before releasing the barrier, the child reads EOF
 * and exits without running anything.
 */
#ifndef TSARUN_SPAWN_H
#define TSARUN_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

struct target_user;

/* Where the child failed, as reported through the error pipe. */
enum spawn_stage {
	SPAWN_OK = 0,
	SPAWN_EXEC,   /* exec failed: errno says why */
	SPAWN_CREDS,  /* could not switch to the target user */
	SPAWN_SETUP,  /* anything else before exec */
};

struct spawn_result {
	enum spawn_stage stage;
	int err; /* errno in the child */
};

struct spawn {
	pid_t pid;
	int pidfd;
	int barrier_fd; /* write end: one byte releases the child */
	int errpipe_fd; /* read end of the exec error pipe */
};

/*
 * Create the child, stopped at the barrier. argv is run with execvp()
 * semantics (PATH search; a script without #! goes to /bin/sh). user is
 * NULL to keep tsarun's credentials. The child restores child_sigmask
 * before exec. Returns 0 or -errno.
 */
int spawn__new(struct spawn *s, char *const *argv, const struct target_user *user,
	       const void *child_sigmask);

/* Open the barrier and wait for exec to succeed or fail. Returns 0 or -errno. */
int spawn__release(struct spawn *s, struct spawn_result *res);

/* Close what is left of the child's descriptors (the pidfd is kept until free). */
void spawn__free(struct spawn *s);

/* The exit code tsarun returns for a failed exec: 127 not found, 126 otherwise. */
int spawn_exec_exit_code(int err);

#endif /* TSARUN_SPAWN_H */
