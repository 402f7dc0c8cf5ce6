/* SPDX-License-Identifier: MIT */
/*
 * The child and its exec barrier.
 *
 * The spawner creates the child (spawn__order(), spawn__take()), and tsarun
 * opens its pidfd. The child stops at once at the barrier: it blocks
 * reading a pipe, before it has changed anything or executed a single
 * instruction of the command. While it waits,
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
	SPAWN_EXEC,  /* exec failed: errno says why */
	SPAWN_CREDS, /* could not switch to the target user */
	SPAWN_SETUP, /* anything else before exec */
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
 * Commands are not forked from tsarun itself but from a spawner: a small
 * process forked at start-up, before tsarun loads BPF objects and grows to
 * tens of megabytes. A forked child's pre-exec memory counts in its maximum
 * RSS (exec keeps the old image's high-water mark), so forking from the
 * spawner keeps ru_maxrss about the command, not about tsarun. The spawner
 * creates each child with CLONE_PARENT, so the child is tsarun's own: tsarun
 * reaps it, opens its pidfd and is its subreaper.
 */
struct spawner;

/* How each child starts. */
struct spawn_opts {
	int pdeathsig; /* the signal the child gets when the supervisor dies (0: none) */
	pid_t pgrp;    /* the process group it joins before exec (0: the spawner's) */
};

/*
 * Fork the spawner, which becomes user at once (NULL: keeps tsarun's
 * credentials; HOME, USER and LOGNAME follow). argv runs with execvp()
 * semantics (PATH search; a script without #! goes to /bin/sh). Each child
 * restores child_sigmask before exec. All must stay valid until
 * spawner__free(). Returns NULL with errno set.
 */
struct spawner *spawner__new(char *const *argv, const struct target_user *user,
			     const struct spawn_opts *so, const void *child_sigmask);
void spawner__free(struct spawner *z);
pid_t spawner__pid(const struct spawner *z);

/*
 * Create a child stopped at the barrier, in two halves, for work to do
 * while the spawner forks: order it, then take it. Each returns 0 or
 * -errno; spawn__take() always leaves s fit for spawn__free().
 */
int spawn__order(struct spawner *z);
int spawn__take(struct spawn *s, struct spawner *z);

/*
 * Wait until the child blocks at its barrier (at most SPAWN_BLOCKED_WAIT_S
 * seconds; -ETIMEDOUT then). Just cloned, it may still be queued or
 * running towards it; once blocked, nothing it does before the release can
 * be taken for its life. Returns 0 or -errno (-ESRCH: it died).
 */
#define SPAWN_BLOCKED_WAIT_S 5
int spawn__wait_blocked(const struct spawn *s);

/* Open the barrier and wait for exec to succeed or fail. Returns 0 or -errno. */
int spawn__release(struct spawn *s, struct spawn_result *res);

/* Close what is left of the child's descriptors (the pidfd is kept until free). */
void spawn__free(struct spawn *s);

/* The exit code tsarun returns for a failed exec: 127 not found, 126 otherwise. */
int spawn_exec_exit_code(int err);

#endif /* TSARUN_SPAWN_H */
