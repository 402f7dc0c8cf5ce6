// SPDX-License-Identifier: MIT
/*
 * The supervisor's seccomp filter and Landlock ruleset (sandbox.h). Each
 * allowed call says who needs it; arguments are checked where a call is
 * only safe with some of them (bpf commands, socket families, ioctl
 * requests, executable mappings, files opened for writing, the directory
 * a rename or an unlink happens in, the process a signal goes to).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <seccomp.h>

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule	    445
#define SYS_landlock_restrict_self  446
#endif
/* O_TMPFILE's own bit (glibc's __O_TMPFILE and O_TMPFILE include O_DIRECTORY). */
#define TMPFILE_BIT 020000000

#include "sandbox.h"

#define EXIT_TSARUN 125

static bool active, tried;
static char failure[160];
static char landlock_why[192] = "not tried (the supervisor is not confined yet)";
static bool landlock_on;
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
    /* the process tree: reaping, forwarding signals (kill below), the command's pidfd */
    "waitid",
    "wait4",
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
    /* procfs sampling, descendants, ELF files and /proc/PID/maps for symbols (open below) */
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
    /*
     * the writers: new files in the planned directories (open, link,
     * rename and unlink below), fsync, a file written in place cut to its
     * end, the umask their mode is made with
     */
    "fsync",
    "fdatasync",
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

static void (*violation_hook)(void);

void sandbox_on_violation(void (*hook)(void))
{
	violation_hook = hook;
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
		    "written; the command is ended, unless --descendants leave). This is a bug in "
		    "tsarun: please report it; --no-sandbox runs without the filter.\n");
	(void)!write(STDERR_FILENO, msg, at);
	/* What tsarun holds for the machine (the delay accounting switch) goes back first. */
	if (violation_hook)
		violation_hook();
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

/* Open flags that write, make or cut a file. */
#define WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | TMPFILE_BIT)

static int add_cmp2(scmp_filter_ctx ctx, const char *name, struct scmp_arg_cmp a,
		    struct scmp_arg_cmp b)
{
	const struct scmp_arg_cmp both[2] = {a, b};

	return add(ctx, name, 2, both);
}

/*
 * What touches the file system by writing: only in the directories given,
 * each by its descriptor (an argument seccomp can compare; Landlock says
 * the same of paths).
 */
static int build_files(scmp_filter_ctx ctx, const struct sandbox_opts *o)
{
	int ret;

	/* Anything may be opened to be read: procfs, ELF files, the kernel's symbols. */
	ret = add(ctx, "openat", 1,
		  &(struct scmp_arg_cmp)SCMP_A2(SCMP_CMP_MASKED_EQ, WRITE_FLAGS, 0));
	if (!ret)
		ret = add(ctx, "open", 1,
			  &(struct scmp_arg_cmp)SCMP_A1(SCMP_CMP_MASKED_EQ, WRITE_FLAGS, 0));
	for (size_t i = 0; !ret && o && i < o->nwrite_dirs; i++) {
		const scmp_datum_t d = (scmp_datum_t)(uint32_t)o->write_dirs[i];
		const struct scmp_arg_cmp a0 = SCMP_A0_32(SCMP_CMP_EQ, d);

		/* New files (O_TMPFILE, hidden names), appends to the step summary. */
		ret = add(ctx, "openat", 1, &a0);
		/* An O_TMPFILE given its name: through /proc/self/fd, or by descriptor. */
		if (!ret)
			ret =
			    add(ctx, "linkat", 1, &(struct scmp_arg_cmp)SCMP_A2_32(SCMP_CMP_EQ, d));
		/* Renamed over the path, in the same directory. */
		if (!ret)
			ret = add_cmp2(ctx, "renameat", a0, SCMP_A2_32(SCMP_CMP_EQ, d));
		if (!ret)
			ret = add_cmp2(ctx, "renameat2", a0, SCMP_A2_32(SCMP_CMP_EQ, d));
		/* A temporary file that failed. */
		if (!ret)
			ret = add_cmp2(ctx, "unlinkat", a0, SCMP_A2(SCMP_CMP_EQ, 0));
	}
	/* The work directory's files, and the directory itself, at the end. */
	if (!ret && o && o->work_dir >= 0)
		ret = add_cmp2(ctx, "unlinkat",
			       SCMP_A0_32(SCMP_CMP_EQ, (scmp_datum_t)(uint32_t)o->work_dir),
			       SCMP_A2(SCMP_CMP_EQ, 0));
	if (!ret && o && o->work_parent >= 0)
		ret = add_cmp2(ctx, "unlinkat",
			       SCMP_A0_32(SCMP_CMP_EQ, (scmp_datum_t)(uint32_t)o->work_parent),
			       SCMP_A2(SCMP_CMP_EQ, AT_REMOVEDIR));
	/* openat2's flags are in a struct seccomp cannot read: as if the kernel had none. */
	if (!ret) {
		int nr = seccomp_syscall_resolve_name("openat2");

		if (nr != __NR_SCMP_ERROR)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	}
	/* Root that acts as the command's user when it reads what that user could have planted. */
	if (!ret && o && o->fscreds) {
		ret = add(ctx, "setfsuid", 0, NULL);
		if (!ret)
			ret = add(ctx, "setfsgid", 0, NULL);
		if (!ret)
			ret = add(ctx, "setgroups", 0, NULL);
	}
	return ret;
}

static int build(scmp_filter_ctx ctx, const struct sandbox_opts *o)
{
	const struct scmp_arg_cmp no_exec = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
	/*
	 * A signal to one process, or to its own group (pid >= 0): never to
	 * another group, never to every process (kill(-1)). libseccomp takes
	 * one comparison per argument: the sign bit of the 32-bit pid.
	 */
	const struct scmp_arg_cmp not_neg = SCMP_A0_32(SCMP_CMP_MASKED_EQ, 0x80000000u, 0);
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
	/* taskstats' generic netlink, nothing else (no route, audit or uevent sockets). */
	if (!ret)
		ret = add_cmp2(ctx, "socket", SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
			       SCMP_A2(SCMP_CMP_EQ, NETLINK_GENERIC));
	if (!ret)
		ret = add(ctx, "kill", 1, &not_neg);
	if (!ret)
		ret = add(ctx, "tgkill", 1, &not_neg);
	if (!ret)
		ret = build_files(ctx, o);
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
static int prepare(const struct sandbox_opts *o, char *err, size_t errlen)
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
		ret = build(ctx, o);
	if (ret) {
		snprintf(err, errlen, "cannot build the seccomp filter: %s", strerror(-ret));
		seccomp_release(ctx);
		return ret;
	}
	prepared = ctx;
	return 0;
}

void sandbox_prepare(const struct sandbox_opts *o)
{
	char err[160];

	/* On failure sandbox_enter() tries again and says why. */
	if (!tried && !prepared)
		prepare(o, err, sizeof(err));
}

/*
 * A Landlock ruleset that handles every way of writing, making and
 * removing files (and executing), and allows what the rules say beneath
 * their directories (or on their files). 0 when in force; else -errno and
 * why says why not (not an error: the filter still confines).
 */
static int landlock_apply(const struct sandbox_rule *rules, size_t n, char *why, size_t len)
{
	struct landlock_ruleset_attr attr = {0};
	uint64_t handled, tr = 0;
	long abi;
	int rs, ret = 0;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		ret = -errno;
		snprintf(why, len, "%s",
			 errno == ENOSYS ? "the kernel has no Landlock (Linux 5.13 and later, "
					   "CONFIG_SECURITY_LANDLOCK)"
			 : errno == EOPNOTSUPP
			     ? "Landlock is disabled on this kernel (boot with lsm=...,landlock)"
			     : strerror(errno));
		return ret;
	}
	handled = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
		  LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
		  LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
		  LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
		  LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		  LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi >= 2)
		handled |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3) {
		handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
		tr = LANDLOCK_ACCESS_FS_TRUNCATE;
	}
	attr.handled_access_fs = handled;
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0) {
		ret = -errno;
		snprintf(why, len, "cannot create a Landlock ruleset: %s", strerror(errno));
		return ret;
	}
	for (size_t i = 0; i < n; i++) {
		static const uint64_t access[] = {
		    [SANDBOX_WRITE] = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_MAKE_REG |
				      LANDLOCK_ACCESS_FS_REMOVE_FILE,
		    [SANDBOX_REMOVE_FILE] = LANDLOCK_ACCESS_FS_REMOVE_FILE,
		    [SANDBOX_REMOVE_DIR] = LANDLOCK_ACCESS_FS_REMOVE_DIR,
		    [SANDBOX_WRITE_ONE] = LANDLOCK_ACCESS_FS_WRITE_FILE,
		};
		struct landlock_path_beneath_attr pb = {.parent_fd = rules[i].fd,
							.allowed_access = access[rules[i].what]};

		if (rules[i].what == SANDBOX_WRITE || rules[i].what == SANDBOX_WRITE_ONE)
			pb.allowed_access |= tr;
		if (pb.parent_fd < 0)
			continue;
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0)) {
			ret = -errno;
			snprintf(why, len, "cannot add a Landlock rule: %s", strerror(errno));
			close(rs);
			return ret;
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_landlock_restrict_self, rs, 0)) {
		ret = -errno;
		snprintf(why, len, "cannot enforce Landlock: %s", strerror(errno));
	}
	close(rs);
	return ret;
}

/* The supervisor's: its outputs' directories, its work directory. */
static void landlock(const struct sandbox_opts *o)
{
	struct sandbox_rule rules[40];
	size_t n = 0;

	for (size_t i = 0; o && i < o->nwrite_dirs && n < 38; i++)
		rules[n++] = (struct sandbox_rule){o->write_dirs[i], SANDBOX_WRITE};
	if (o) {
		rules[n++] = (struct sandbox_rule){o->work_dir, SANDBOX_REMOVE_FILE};
		rules[n++] = (struct sandbox_rule){o->work_parent, SANDBOX_REMOVE_DIR};
	}
	if (!landlock_apply(rules, n, landlock_why, sizeof(landlock_why))) {
		landlock_on = true;
		landlock_why[0] = '\0';
	}
}

int sandbox_landlock(const struct sandbox_rule *rules, size_t n, char *why, size_t len)
{
	return landlock_apply(rules, n, why, len);
}

const char *sandbox_landlock_reason(void)
{
	return landlock_on ? NULL : landlock_why;
}

int sandbox_enter(const struct sandbox_opts *o, char *err, size_t errlen)
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
		ret = prepare(o, err, errlen);
		if (ret)
			goto out;
	}
	/* Before the filter, which does not let landlock_*() through. */
	landlock(o);
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

/*
 * The watchdog: root to the end, it waits, passes signals on, reaps, ends
 * a tree, removes files and puts the delay accounting switch back. No
 * exec, no fork, no BPF, no sockets, no mount, no ptrace.
 */
static const char *const watchdog_allowed[] = {
    "read",
    "write",
    "close",
    "poll",
    "ppoll",
    "rt_sigprocmask",
    "rt_sigreturn",
    "restart_syscall",
    "waitid",
    "wait4",
    "kill",
    "tgkill",
    "pidfd_send_signal",
    "recvmsg",
    "open",
    "openat",
    "getdents64",
    "fstat",
    "newfstatat",
    "statx",
    "lseek",
    "flock",
    "unlink",
    "unlinkat",
    "setfsuid",
    "setfsgid",
    "setgroups",
    "nanosleep",
    "clock_nanosleep",
    "clock_gettime",
    "exit",
    "exit_group",
    "fcntl",
    "getpid",
    "getppid",
    "gettid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "brk",
    "munmap",
    "mremap",
    "madvise",
    "futex",
    "readlink",
    "umask",
    "getrandom",
    "sched_yield",
    "faccessat",
    "faccessat2",
    "access",
    "rt_sigaction", /* to die of the signal that ended the supervisor, as tsarun would have */
    "getgroups",
};

void sandbox_enter_watchdog(void)
{
	const struct scmp_arg_cmp no_exec = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	int ret;

	if (!ctx)
		return;
	ret = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	for (size_t i = 0; !ret && i < sizeof(watchdog_allowed) / sizeof(watchdog_allowed[0]); i++)
		ret = add(ctx, watchdog_allowed[i], 0, NULL);
#ifdef SANDBOX_ASAN
	for (size_t i = 0; !ret && i < sizeof(allowed_asan) / sizeof(allowed_asan[0]); i++)
		ret = add(ctx, allowed_asan[i], 0, NULL);
#endif
	if (!ret)
		ret = add(ctx, "mmap", 1, &no_exec);
#ifndef SANDBOX_ASAN
	if (!ret)
		ret = add(ctx, "mprotect", 1, &no_exec);
#endif
	/* Landlock, once the supervisor said what there is to remove: it only ever restricts. */
	if (!ret)
		ret = add(ctx, "landlock_create_ruleset", 0, NULL);
	if (!ret)
		ret = add(ctx, "landlock_add_rule", 0, NULL);
	if (!ret)
		ret = add(ctx, "landlock_restrict_self", 0, NULL);
	if (!ret)
		ret = add(ctx, "prctl", 1,
			  &(struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_EQ, PR_SET_NO_NEW_PRIVS));
	sigemptyset(&sa.sa_mask);
	if (!ret && !sigaction(SIGSYS, &sa, NULL))
		seccomp_load(ctx);
	seccomp_release(ctx);
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
