// SPDX-License-Identifier: MIT
/*
 * The supervisor's seccomp filter (sandbox.h). Each allowed call says who
 * needs it; arguments are checked where a call is only safe with some of
 * them (bpf commands, socket families, ioctl requests, executable mappings).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <seccomp.h>

#include "sandbox.h"

#define EXIT_TSARUN 125

static bool active, tried;
static char failure[160];
/*
 * The system calls' names, by number, for the violation message: taken from
 * the C library's headers at build time (sysnames.h), since the SIGSYS
 * handler may not allocate, and libseccomp's lookup by number, one linear
 * search each, took most of tsarun's own CPU time at start.
 */
static const char *const names[] = {
#include "sysnames.h"
};

/* System calls allowed with any arguments. */
static const char *const allowed[] = {
    /* the event loop: epoll, signalfd and ring buffer reads, timeouts */
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "epoll_create1",
    "epoll_ctl",
    "read",
    "readv",
    "pread64",
    "write",
    "writev",
    "pwrite64",
    "close",
    "clock_gettime",
    "clock_nanosleep",
    "nanosleep",
    "gettimeofday",
    "restart_syscall",
    "rt_sigreturn",
    "rt_sigprocmask",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    "poll",
    "ppoll",
    /* the process tree: reaping, forwarding signals, the command's pidfd */
    "waitid",
    "wait4",
    "kill",
    "tgkill",
    "pidfd_open",
    "pidfd_send_signal",
    "getpid",
    "gettid",
    "getppid",
    "getpgid",
    "getpgrp",
    /* the spawner's socket, the bash record socket, taskstats over netlink */
    "recvfrom",
    "recvmsg",
    "sendto",
    "sendmsg",
    "bind",
    "getsockname",
    "getsockopt",
    "setsockopt",
    "shutdown",
    /* memory (mmap and mprotect below: never executable) */
    "brk",
    "munmap",
    "mremap",
    "madvise",
    /* procfs sampling, descendants, ELF files and /proc/PID/maps for symbols */
    "open",
    "openat",
    "lseek",
    "fstat",
    "newfstatat",
    "statx",
    "getdents64",
    "fcntl",
    "readlink",
    "readlinkat",
    "access",
    "faccessat",
    "faccessat2",
    "getcwd",
    "fadvise64",
    /* libbpf moves the descriptors it creates (the iterator's link) above 2 */
    "dup",
    "dup2",
    "dup3",
    /* kernel.task_delayacct: its holders' registry, locked while it is put back */
    "flock",
    /* the writers: artifact (temporary file, fsync, rename), reports, folded stacks */
    "fsync",
    "fdatasync",
    "fchmod",
    "fchown",
    "rename",
    "renameat",
    "renameat2",
    "unlink",
    "unlinkat",
    "rmdir",
    "mkdir",
    "mkdirat",
    "ftruncate",
    "umask",
    /* hardware counters (instructions) and on-CPU sampling, opened per run */
    "perf_event_open",
    /* the figures about tsarun itself and the host */
    "getrusage",
    "sysinfo",
    "uname",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "sched_getaffinity",
    "sched_yield",
    "getrandom",
    "futex",
    /* leaving */
    "exit",
    "exit_group",
};

/* bpf(2) commands on objects loaded before the filter: maps, the task iterator. */
static const int bpf_cmds[] = {
    BPF_MAP_LOOKUP_ELEM,
    BPF_MAP_UPDATE_ELEM,
    BPF_MAP_DELETE_ELEM,
    BPF_MAP_GET_NEXT_KEY,
    BPF_MAP_LOOKUP_AND_DELETE_ELEM,
    BPF_MAP_LOOKUP_BATCH,
    BPF_MAP_LOOKUP_AND_DELETE_BATCH,
    BPF_MAP_UPDATE_BATCH,
    BPF_MAP_DELETE_BATCH,
    BPF_OBJ_GET_INFO_BY_FD,
    BPF_LINK_CREATE, /* the iterator of surviving threads, attached per run */
    BPF_ITER_CREATE,
    BPF_LINK_DETACH,
};

/* ioctl(2) requests: isatty() and the terminal's width; perf events' controls. */
static const unsigned long ioctls[] = {
    TCGETS,
    TIOCGWINSZ,
    PERF_EVENT_IOC_ENABLE,
    PERF_EVENT_IOC_DISABLE,
    PERF_EVENT_IOC_RESET,
    PERF_EVENT_IOC_SET_BPF,
    PERF_EVENT_IOC_ID,
};

#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANDBOX_ASAN 1
#endif
#endif

#ifdef SANDBOX_ASAN
/*
 * The ASan/UBSan build's runtime: LeakSanitizer stops the world at exit with
 * a cloned tracer task and ptrace; reports read /proc/self/maps. Only in
 * that build, which tests use to find memory errors, not to ship.
 */
static const char *const allowed_asan[] = {
    "clone", "clone3",	 "ptrace",	    "prctl", "sigaltstack",	 "rt_sigaction",
    "pipe2", "getdents", "set_robust_list", "rseq",  "process_vm_readv", "mprotect",
};
#endif

static size_t append(char *buf, size_t at, size_t len, const char *s)
{
	while (*s && at + 1 < len)
		buf[at++] = *s++;
	buf[at] = '\0';
	return at;
}

static size_t append_num(char *buf, size_t at, size_t len, long v)
{
	char digits[24];
	int n = 0;
	unsigned long u = v < 0 ? (unsigned long)-v : (unsigned long)v;

	do
		digits[n++] = (char)('0' + u % 10);
	while ((u /= 10) && n < (int)sizeof(digits));
	if (v < 0 && at + 1 < len)
		buf[at++] = '-';
	while (n && at + 1 < len)
		buf[at++] = digits[--n];
	buf[at] = '\0';
	return at;
}

/* Async-signal-safe: no stdio, no allocation. */
static void on_sigsys(int sig, siginfo_t *si, void *ucontext)
{
	char msg[512];
	size_t at = 0;
	int nr = si->si_syscall;

	(void)sig;
	(void)ucontext;
	at = append(msg, at, sizeof(msg), "tsarun: sandbox: system call ");
	if (nr >= 0 && (size_t)nr < sizeof(names) / sizeof(names[0]) && names[nr]) {
		at = append(msg, at, sizeof(msg), names[nr]);
		at = append(msg, at, sizeof(msg), " (");
		at = append_num(msg, at, sizeof(msg), nr);
		at = append(msg, at, sizeof(msg), ")");
	} else {
		at = append_num(msg, at, sizeof(msg), nr);
	}
	at = append(msg, at, sizeof(msg),
		    " is not one the supervisor may make; tsarun stops here (its artifact is not "
		    "written, the command may still run). This is a bug in tsarun: please report "
		    "it; --no-sandbox runs without the filter.\n");
	(void)!write(STDERR_FILENO, msg, at);
	_exit(EXIT_TSARUN);
}

static int add(scmp_filter_ctx ctx, const char *name, unsigned argc, const struct scmp_arg_cmp *a)
{
	int nr = seccomp_syscall_resolve_name(name);

	/* A call this architecture does not have (open on arm64): nothing to allow. */
	if (nr == __NR_SCMP_ERROR)
		return 0;
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, argc, a);
}

static int build(scmp_filter_ctx ctx)
{
	const struct scmp_arg_cmp no_exec = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		ret = add(ctx, allowed[i], 0, NULL);
#ifdef SANDBOX_ASAN
	for (size_t i = 0; !ret && i < sizeof(allowed_asan) / sizeof(allowed_asan[0]); i++)
		ret = add(ctx, allowed_asan[i], 0, NULL);
#endif
	for (size_t i = 0; !ret && i < sizeof(bpf_cmds) / sizeof(bpf_cmds[0]); i++) {
		const struct scmp_arg_cmp cmd = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)bpf_cmds[i]);

		ret = add(ctx, "bpf", 1, &cmd);
	}
	for (size_t i = 0; !ret && i < sizeof(ioctls) / sizeof(ioctls[0]); i++) {
		const struct scmp_arg_cmp req = SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)ioctls[i]);

		ret = add(ctx, "ioctl", 1, &req);
	}
	if (!ret) {
		const struct scmp_arg_cmp netlink = SCMP_A0(SCMP_CMP_EQ, AF_NETLINK);

		ret = add(ctx, "socket", 1, &netlink);
	}
	/* Memory, never executable: nothing is loaded after the filter. */
	if (!ret)
		ret = add(ctx, "mmap", 1, &no_exec);
#ifndef SANDBOX_ASAN
	if (!ret)
		ret = add(ctx, "mprotect", 1, &no_exec);
#endif
	return ret;
}

/* The filter built ahead of time by sandbox_prepare(), or NULL. */
static scmp_filter_ctx prepared;

/* Build the filter (and the table that names calls for the handler), not yet in force. */
static int prepare(char *err, size_t errlen)
{
	scmp_filter_ctx ctx;
	int ret;

	ctx = seccomp_init(SCMP_ACT_TRAP);
	if (!ctx) {
		snprintf(err, errlen, "seccomp_init failed");
		return -ENOMEM;
	}
	/* A call through another ABI (int 0x80, x32) is never tsarun's: kill outright. */
	ret = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (!ret)
		ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!ret)
		ret = build(ctx);
	if (ret) {
		snprintf(err, errlen, "cannot build the seccomp filter: %s", strerror(-ret));
		seccomp_release(ctx);
		return ret;
	}
	prepared = ctx;
	return 0;
}

void sandbox_prepare(void)
{
	char err[160];

	/* On failure sandbox_enter() tries again and says why. */
	if (!tried && !prepared)
		prepare(err, sizeof(err));
}

int sandbox_enter(char *err, size_t errlen)
{
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
	scmp_filter_ctx ctx;
	sigset_t sys;
	int ret;

	if (tried) {
		snprintf(err, errlen, "%s", failure);
		return active ? 0 : -EPERM;
	}
	tried = true;
	if (!prepared) {
		ret = prepare(err, errlen);
		if (ret)
			goto out;
	}
	ctx = prepared;
	prepared = NULL;
	/* The handler, and SIGSYS unblocked: the kernel would force it anyway. */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL)) {
		ret = -errno;
		snprintf(err, errlen, "cannot handle SIGSYS: %s", strerror(-ret));
		goto out_ctx;
	}
	sigemptyset(&sys);
	sigaddset(&sys, SIGSYS);
	sigprocmask(SIG_UNBLOCK, &sys, NULL);
	ret = seccomp_load(ctx);
	if (ret) {
		snprintf(err, errlen, "cannot load the seccomp filter: %s", strerror(-ret));
		signal(SIGSYS, SIG_DFL);
		goto out_ctx;
	}
	active = true;
	seccomp_release(ctx);
	return 0;
out_ctx:
	seccomp_release(ctx);
out:
	snprintf(failure, sizeof(failure), "%s", err);
	return ret;
}

bool sandbox_active(void)
{
	return active;
}

bool sandbox_tried(void)
{
	return tried;
}

const char *sandbox_failure(void)
{
	return tried && !active ? failure : NULL;
}
