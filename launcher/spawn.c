// SPDX-License-Identifier: MIT
/*
 * Child creation and the exec barrier.
 *
 * The spawner clones each child (CLONE_PARENT) and tsarun opens its pidfd
 * with pidfd_open(): race-free, because the child is tsarun's, blocked at
 * the barrier, and cannot be reaped (and its pid reused) by anyone else
 * before tsarun opens it. A child of the raw clone has glibc's cached
 * thread id of the spawner, so it calls nothing that uses it (raise,
 * abort, pthread_*) before exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "run.h"
#include "spawn.h"
#include "user.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int spawn_exec_exit_code(int err)
{
	return err == ENOENT ? 127 : 126;
}

/*
 * As a shell does, the environment's _ is the path of the program it runs
 * (bash starts its $_ with it), not tsarun's, which the shell that ran
 * tsarun put there. The search is execvp()'s: the first executable file in
 * PATH; when none is found, exec fails and _ does not matter. Returns the
 * file found in PATH (in buf), or NULL.
 */
static const char *set_program_path(const char *name, char *buf, size_t buflen)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(name, '/')) {
		setenv("_", name, 1);
		return NULL;
	}
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	for (p = path; *p; p = *end ? end + 1 : end) {
		size_t len;

		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (len + strlen(name) + 2 > buflen)
			continue;
		if (len) {
			memcpy(buf, p, len);
			buf[len] = '/';
			strcpy(buf + len + 1, name);
		} else {
			strcpy(buf, name); /* an empty entry is the current directory */
		}
		if (!access(buf, X_OK)) {
			setenv("_", buf, 1);
			return buf;
		}
	}
	return NULL;
}

static void child_report(int fd, enum spawn_stage stage, int err)
{
	struct spawn_result r = {.stage = stage, .err = err};
	ssize_t n;

	do
		n = write(fd, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
}

/* Why the spawner could not become the command's user (0: it did, or did not have to). */
static int creds_err;

/* Runs in the child, never returns. Only async-signal-safe calls until exec. */
static void child_main(int barrier_rd, int err_wr, char *const *argv, const struct spawn_opts *so,
		       const sigset_t *mask)
{
	char b, path[4096];
	const char *found;
	ssize_t n;

	/*
	 * The supervisor's death takes the command with it (its descendants
	 * are the watchdog's to end): set before the barrier, so that it holds
	 * from the first instruction; exec of a set-user-ID program clears it.
	 */
	if (so->pdeathsig)
		prctl(PR_SET_PDEATHSIG, so->pdeathsig);
	do
		n = read(barrier_rd, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(125); /* the supervisor went away before releasing us */
	close(barrier_rd);

	if (creds_err) {
		child_report(err_wr, SPAWN_CREDS, creds_err);
		_exit(125);
	}
	/* Back into the job's process group: the terminal's foreground, as without tsarun. */
	if (so->pgrp > 0 && setpgid(0, so->pgrp)) {
		child_report(err_wr, SPAWN_SETUP, errno);
		_exit(125);
	}
	if (mask && sigprocmask(SIG_SETMASK, mask, NULL)) {
		child_report(err_wr, SPAWN_SETUP, errno);
		_exit(125);
	}
	/*
	 * The file found is executed at once: execvp() would try every PATH
	 * entry before it again, each a failed exec after the barrier. Where
	 * that exec fails (a directory, a script without #!), execvp() does
	 * what it does.
	 */
	found = set_program_path(argv[0], path, sizeof(path));
	if (found)
		execv(found, argv);
	execvp(argv[0], argv);
	n = errno;
	child_report(err_wr, SPAWN_EXEC, (int)n);
	_exit(spawn_exec_exit_code((int)n));
}

struct spawner {
	pid_t pid;
	int sock; /* our end of the socketpair */
};

/*
 * The spawner becomes the command's user before it forks anything: the
 * command is that user's from its birth, and nothing of tsarun's that runs
 * as root is left in the process the command comes from. Returns 0 or an
 * errno value.
 */
static int become(const struct target_user *u)
{
	if (!u || !u->change)
		return 0;
	if (setgroups((size_t)u->ngroups, u->groups) || setresgid(u->gid, u->gid, u->gid) ||
	    setresuid(u->uid, u->uid, u->uid))
		return errno;
	if (u->home[0])
		setenv("HOME", u->home, 1);
	setenv("USER", u->name, 1);
	setenv("LOGNAME", u->name, 1);
	return 0;
}

/* Send the child's pid and its two pipe ends over the socket. */
static int send_child(int sock, pid_t pid, int barrier_wr, int err_rd)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &pid, .iov_len = sizeof(pid)};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int fds[2] = {barrier_wr, err_rd};

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == sizeof(pid) ? 0 : -errno;
}

static int recv_child(int sock, pid_t *pid, int *barrier_wr, int *err_rd)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = {0};
	struct iovec iov = {.iov_base = pid, .iov_len = sizeof(*pid)};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	int fds[2];
	ssize_t n;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	c = CMSG_FIRSTHDR(&msg);
	if (n != sizeof(*pid) || !c || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(fds)))
		return -EPROTO; /* the spawner failed: *pid holds -errno when n is right */
	memcpy(fds, CMSG_DATA(c), sizeof(fds));
	*barrier_wr = fds[0];
	*err_rd = fds[1];
	return 0;
}

/* The spawner's loop: one child per request byte, until the socket closes. */
static void spawner_main(int sock, char *const *argv, const struct target_user *u,
			 const struct spawn_opts *so, const sigset_t *mask)
{
	pid_t parent = getppid();
	char req;
	ssize_t n;

	prctl(PR_SET_NAME, RUN_SPAWNER_COMM);
	/* The supervisor's own dispositions are not the command's (it writes to a terminal in the background). */
	signal(SIGTTOU, SIG_DFL);
	creds_err = become(u);
	/* After the change of user, which clears it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	for (;;) {
		int barrier[2], errpipe[2];
		pid_t pid;

		do
			n = read(sock, &req, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(0);
		if (pipe2(barrier, O_CLOEXEC) || pipe2(errpipe, O_CLOEXEC)) {
			pid = -errno;
			(void)!write(sock, &pid, sizeof(pid));
			continue;
		}
		/* CLONE_PARENT makes the child tsarun's, not ours. */
		pid = (pid_t)syscall(SYS_clone, CLONE_PARENT, 0, NULL, NULL, 0);
		if (pid == 0) {
			close(sock);
			close(barrier[1]);
			close(errpipe[0]);
			child_main(barrier[0], errpipe[1], argv, so, mask);
		}
		if (pid < 0) {
			pid = -errno;
			(void)!write(sock, &pid, sizeof(pid));
		} else {
			send_child(sock, pid, barrier[1], errpipe[0]);
		}
		close(barrier[0]);
		close(barrier[1]);
		close(errpipe[0]);
		close(errpipe[1]);
	}
}

struct spawner *spawner__new(char *const *argv, const struct target_user *user,
			     const struct spawn_opts *so, const void *child_sigmask)
{
	struct spawner *z = calloc(1, sizeof(*z));
	int sv[2], err;

	if (!z)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = errno;
		free(z);
		errno = err;
		return NULL;
	}
	/*
	 * Exit signal 0: the spawner is a "clone child", invisible to a waitid()
	 * without __WALL, so tsarun's reaping of the tree never sees it. Its
	 * children inherit that exit signal (CLONE_PARENT) until exec resets it
	 * to SIGCHLD: tsarun recognises the command by its pid, whichever of
	 * its waitid() calls reaps it.
	 */
	z->pid = (pid_t)syscall(SYS_clone, 0, 0, NULL, NULL, 0);
	if (z->pid < 0) {
		err = errno;
		close(sv[0]);
		close(sv[1]);
		free(z);
		errno = err;
		return NULL;
	}
	if (z->pid == 0) {
		close(sv[0]);
		free(z); /* the parent's handle: the spawner has no use for it */
		spawner_main(sv[1], argv, user, so, child_sigmask);
	}
	close(sv[1]);
	z->sock = sv[0];
	return z;
}

pid_t spawner__pid(const struct spawner *z)
{
	return z ? z->pid : -1;
}

void spawner__free(struct spawner *z)
{
	if (!z)
		return;
	close(z->sock); /* EOF: the spawner exits */
	waitpid(z->pid, NULL, __WALL);
	free(z);
}

int spawn__order(struct spawner *z)
{
	return write(z->sock, "s", 1) == 1 ? 0 : -errno;
}

int spawn__take(struct spawn *s, struct spawner *z)
{
	pid_t pid = -1;
	int err;

	s->pid = -1;
	s->pidfd = s->barrier_fd = s->errpipe_fd = -1;
	err = recv_child(z->sock, &pid, &s->barrier_fd, &s->errpipe_fd);
	if (err)
		return pid < 0 ? pid : err;
	s->pid = pid;
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (s->pidfd < 0) {
		err = -errno;
		/* Closing the barrier makes the child exit without running anything. */
		spawn__free(s);
		return err;
	}
	return 0;
}

int spawn__wait_blocked(const struct spawn *s)
{
	struct timespec nap = {.tv_nsec = 50000}, t0, t;
	char path[64], buf[512];
	int fd, ret = -ETIMEDOUT;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)s->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned int i = 0;; i++) {
		struct procfs_stat st;
		ssize_t n = pread(fd, buf, sizeof(buf), 0);

		if (n < 0) {
			ret = -errno;
			break;
		}
		if (procfs_parse_stat(buf, (size_t)n, &st) == 0) {
			/* Nothing before the barrier sleeps interruptibly: 'S' is the read. */
			if (st.state == 'S') {
				ret = 0;
				break;
			}
			if (st.state == 'Z' || st.state == 'X') {
				ret = -ESRCH;
				break;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= SPAWN_BLOCKED_WAIT_S)
			break;
		/* Yield first: on an idle machine the child gets there in microseconds. */
		if (i < 64)
			sched_yield();
		else
			nanosleep(&nap, NULL);
	}
	close(fd);
	return ret;
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
