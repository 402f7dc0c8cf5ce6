// SPDX-License-Identifier: MIT
/*
 * Child creation and the exec barrier.
 *
 * We fork() and then pidfd_open() rather than calling clone3(CLONE_PIDFD)
 * directly: glibc 2.36 has no clone3 wrapper, and a raw clone3 leaves
 * glibc's cached thread id in the child pointing at the parent. The pidfd
 * is just as race-free here, because the child cannot be reaped (and its
 * pid reused) before we open it: it is blocked at the barrier and only we
 * can reap it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "spawn.h"
#include "user.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int spawn_exec_exit_code(int err)
{
	return err == ENOENT ? 127 : 126;
}

static void child_report(int fd, enum spawn_stage stage, int err)
{
	struct spawn_result r = {.stage = stage, .err = err};
	ssize_t n;

	do
		n = write(fd, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
}

/* Runs in the child, never returns. Only async-signal-safe calls until exec. */
static void child_main(int barrier_rd, int err_wr, char *const *argv, const struct target_user *u,
		       const sigset_t *mask)
{
	char b;
	ssize_t n;

	do
		n = read(barrier_rd, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(125); /* the supervisor went away before releasing us */
	close(barrier_rd);

	if (u && u->change) {
		if (setgroups(u->ngroups, u->groups) || setresgid(u->gid, u->gid, u->gid) ||
		    setresuid(u->uid, u->uid, u->uid)) {
			child_report(err_wr, SPAWN_CREDS, errno);
			_exit(125);
		}
		if (u->home[0])
			setenv("HOME", u->home, 1);
		setenv("USER", u->name, 1);
		setenv("LOGNAME", u->name, 1);
	}
	if (mask && sigprocmask(SIG_SETMASK, mask, NULL)) {
		child_report(err_wr, SPAWN_SETUP, errno);
		_exit(125);
	}
	execvp(argv[0], argv);
	n = errno;
	child_report(err_wr, SPAWN_EXEC, (int)n);
	_exit(spawn_exec_exit_code((int)n));
}

int spawn__new(struct spawn *s, char *const *argv, const struct target_user *user,
	       const void *child_sigmask)
{
	int barrier[2], errpipe[2];
	int err;
	pid_t pid;

	s->pid = -1;
	s->pidfd = s->barrier_fd = s->errpipe_fd = -1;
	if (pipe2(barrier, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	if (pipe2(errpipe, O_CLOEXEC)) {
		err = -errno;
		goto out_close_barrier;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out_close_errpipe;
	}
	if (pid == 0) {
		close(barrier[1]);
		close(errpipe[0]);
		child_main(barrier[0], errpipe[1], argv, user, child_sigmask);
	}
	close(barrier[0]);
	close(errpipe[1]);
	s->pid = pid;
	s->barrier_fd = barrier[1];
	s->errpipe_fd = errpipe[0];
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (s->pidfd < 0) {
		err = -errno;
		/* Closing the barrier makes the child exit without running anything. */
		spawn__free(s);
		return err;
	}
	return 0;

out_close_errpipe:
	close(errpipe[0]);
	close(errpipe[1]);
out_close_barrier:
	close(barrier[0]);
	close(barrier[1]);
out:
	return err;
}

int spawn__release(struct spawn *s, struct spawn_result *res)
{
	ssize_t n;

	res->stage = SPAWN_OK;
	res->err = 0;
	do
		n = write(s->barrier_fd, "g", 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		return -errno;
	close(s->barrier_fd);
	s->barrier_fd = -1;

	/* EOF: the close-on-exec end closed, so exec succeeded. */
	do
		n = read(s->errpipe_fd, res, sizeof(*res));
	while (n < 0 && errno == EINTR);
	close(s->errpipe_fd);
	s->errpipe_fd = -1;
	if (n == 0) {
		res->stage = SPAWN_OK;
		res->err = 0;
	} else if (n != sizeof(*res)) {
		res->stage = SPAWN_SETUP;
		res->err = EPROTO;
	}
	return 0;
}

void spawn__free(struct spawn *s)
{
	if (s->barrier_fd >= 0)
		close(s->barrier_fd);
	if (s->errpipe_fd >= 0)
		close(s->errpipe_fd);
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->barrier_fd = s->errpipe_fd = s->pidfd = -1;
}
