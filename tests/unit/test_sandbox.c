// SPDX-License-Identifier: MIT
/*
 * The supervisor's seccomp sandbox, in a child process each time: what it
 * needs still works, what it must not do ends it with 125 and a message
 * that names the system call.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

#include "sandbox.h"

#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1 /* the sanitizer runtime needs clone and ptrace: allowed there */
#endif

enum forbidden {
	F_NONE,
	F_EXECVE,
	F_SOCKET_INET,
	F_BPF_PROG_LOAD,
	F_BPF_MAP_CREATE,
	F_MMAP_EXEC,
	F_SETUID,
	F_MOUNT,
	F_FORK,
	F_PTRACE,
	F_OPEN_WRITE,
	F_CREATE,
	F_RENAME,
	F_UNLINK,
	F_FCHOWN,
	F_CHMOD,
	F_KILL_ALL,
	F_KILL_GROUP,
	F_NETLINK_ROUTE,
	F_MKDIR,
};

/* In the child: the calls the supervisor needs, then one it must not make. */
static void child(enum forbidden f, int err_wr)
{
	char err[200], buf[16];
	union bpf_attr attr;
	int fd;

	dup2(err_wr, STDERR_FILENO);
	if (sandbox_enter(NULL, err, sizeof(err))) {
		fprintf(stderr, "enter: %s\n", err);
		_exit(3);
	}
	if (!sandbox_active())
		_exit(4);
	/* Allowed: files, /proc, memory, netlink, map lookups, signals to children. */
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0 || close(fd))
		_exit(5);
	if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
	    MAP_FAILED)
		_exit(6);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 16 /* NETLINK_GENERIC */);
	if (fd < 0)
		_exit(7);
	close(fd);
	memset(&attr, 0, sizeof(attr));
	attr.map_fd = -1;
	if (syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &attr, sizeof(attr)) != -1 || errno != EBADF)
		_exit(8);
	if (kill(getpid(), 0))
		_exit(9);
	/* openat2's flags cannot be read by the filter: as if the kernel had none. */
	if (syscall(SYS_openat2, AT_FDCWD, "/proc/self/status", &(long[3]){0}, 24) != -1 ||
	    errno != ENOSYS)
		_exit(10);

	switch (f) {
	case F_NONE:
		_exit(0);
	case F_EXECVE:
		execl("/bin/true", "true", (char *)NULL);
		break;
	case F_SOCKET_INET:
		socket(AF_INET, SOCK_STREAM, 0);
		break;
	case F_BPF_PROG_LOAD:
		syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
		break;
	case F_BPF_MAP_CREATE:
		syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
		break;
	case F_MMAP_EXEC:
		mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		break;
	case F_SETUID:
		syscall(SYS_setuid, 0);
		break;
	case F_MOUNT:
		mount("none", "/mnt", "tmpfs", 0, NULL);
		break;
	case F_FORK:
		syscall(SYS_fork);
		break;
	case F_PTRACE:
		syscall(SYS_ptrace, 0, 0, 0, 0);
		break;
	case F_OPEN_WRITE:
		open("/dev/null", O_WRONLY | O_CLOEXEC);
		break;
	case F_CREATE:
		open("/tmp/tsarun-sandbox-test", O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
		break;
	case F_RENAME:
		rename("/nonexistent-a", "/nonexistent-b");
		break;
	case F_UNLINK:
		unlink("/nonexistent");
		break;
	case F_FCHOWN:
		syscall(SYS_fchown, 0, 0, 0);
		break;
	case F_CHMOD:
		syscall(SYS_chmod, "/nonexistent", 0);
		break;
	case F_KILL_ALL:
		kill(-1, 0);
		break;
	case F_KILL_GROUP:
		kill(-getpgrp(), 0);
		break;
	case F_NETLINK_ROUTE:
		socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0 /* NETLINK_ROUTE */);
		break;
	case F_MKDIR:
		syscall(SYS_mkdir, "/nonexistent", 0700);
		break;
	}
	_exit(99); /* the call returned: the filter let it through */
}

/* Run f in a child; returns its exit status, its stderr in out. */
static int run(enum forbidden f, char *out, size_t len)
{
	int p[2], status;
	ssize_t n, have = 0;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		child(f, p[1]);
	}
	close(p[1]);
	while ((n = read(p[0], out + have, len - 1 - (size_t)have)) > 0)
		have += n;
	out[have] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static void test_allowed_calls_work(void **state)
{
	char out[1024];

	assert_int_equal(run(F_NONE, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

static void expect_stopped(enum forbidden f, const char *name)
{
	char out[1024], want[64];
	int rc = run(f, out, sizeof(out));

	snprintf(want, sizeof(want), "system call %s (", name);
	if (rc != 125 || !strstr(out, want) || !strstr(out, "--no-sandbox"))
		fail_msg("%s: exit %d, stderr '%s'", name, rc, out);
}

static void test_forbidden_calls_stop_it_by_name(void **state)
{
	expect_stopped(F_EXECVE, "execve");
	expect_stopped(F_SOCKET_INET, "socket");
	expect_stopped(F_BPF_PROG_LOAD, "bpf");
	expect_stopped(F_BPF_MAP_CREATE, "bpf");
	expect_stopped(F_MMAP_EXEC, "mmap");
	expect_stopped(F_SETUID, "setuid");
	expect_stopped(F_MOUNT, "mount");
#ifndef ASAN_BUILD
	expect_stopped(F_FORK, "fork");
	expect_stopped(F_PTRACE, "ptrace");
#endif
	/* Nothing opened for writing, made, renamed, unlinked, chowned or chmodded outside. */
	expect_stopped(F_OPEN_WRITE, "openat");
	expect_stopped(F_CREATE, "openat");
	expect_stopped(F_RENAME, "rename");
	expect_stopped(F_UNLINK, "unlink");
	expect_stopped(F_FCHOWN, "fchown");
	expect_stopped(F_CHMOD, "chmod");
	expect_stopped(F_MKDIR, "mkdir");
	/* No signal to every process or to a group, no netlink but generic. */
	expect_stopped(F_KILL_ALL, "kill");
	expect_stopped(F_KILL_GROUP, "kill");
	expect_stopped(F_NETLINK_ROUTE, "socket");
}

/*
 * Given the directories outputs go into, a new file there and its rename
 * are allowed; the same calls anywhere else are not.
 */
static void test_output_directories(void **state)
{
	char dir[] = "/tmp/tsarun-sandbox.XXXXXX", out[256];
	int p[2], status, dfd;
	ssize_t n, have = 0;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sandbox_opts so = {
		    .write_dirs = &dfd, .nwrite_dirs = 1, .work_dir = -1, .work_parent = -1};
		char err[200];
		int fd;

		close(p[0]);
		dup2(p[1], STDERR_FILENO);
		if (sandbox_enter(&so, err, sizeof(err)))
			_exit(3);
		fd = openat(dfd, "new", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, "x", 1) != 1 || close(fd))
			_exit(4);
		if (renameat(dfd, "new", dfd, "final") || unlinkat(dfd, "final", 0))
			_exit(5);
		/* Landlock, where the kernel has it: not beyond the directory, even relative to it. */
		fd = openat(dfd, "../tsarun-sandbox-escaped", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0 && !sandbox_landlock_reason())
			_exit(6);
		if (fd >= 0) {
			close(fd);
			unlinkat(dfd, "../tsarun-sandbox-escaped", 0);
		}
		/* The filter: a rename into another directory stops it. */
		renameat(dfd, "x", AT_FDCWD, "/tmp/x");
		_exit(99);
	}
	close(p[1]);
	while ((n = read(p[0], out + have, sizeof(out) - 1 - (size_t)have)) > 0)
		have += n;
	out[have] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WEXITSTATUS(status) != 125 || !strstr(out, "system call renameat ("))
		fail_msg("exit %d, stderr '%s'", WEXITSTATUS(status), out);
	close(dfd);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_allowed_calls_work),
	    cmocka_unit_test(test_forbidden_calls_stop_it_by_name),
	    cmocka_unit_test(test_output_directories),
	};

	return cmocka_run_group_tests_name("sandbox", tests, NULL, NULL);
}
