// SPDX-License-Identifier: MIT
/*
 * Makes a system call in another process's place, as code run through a
 * flaw in it would: attaches with ptrace, points the stopped thread at the
 * syscall instruction it is parked after, runs the call and prints what
 * became of it, then puts the thread back as it was.
 *
 *   syscall_inject PID NAME [ARG...]
 *
 * NAME is one of the calls below; an ARG that is a whole number is passed
 * as it is, any other ARG as a string written into the process's stack.
 * Prints "= N" (the kernel's return: -errno on failure), with "SIGSYS"
 * after it when the call left that signal pending (a seccomp filter's
 * trap, delivered as the thread is let go), or "signal N" when another
 * signal stopped the thread on the way, passed on too. Exits 0 when it
 * could make the call, 1 when it could not (nothing was changed then).
 *
 * Written for the 16-security suite, where gdb's inferior calls cannot be
 * used: gdb 13 cannot write back the extended register state of some CPUs
 * ("Couldn't write extended state status"), which corrupts the process it
 * attaches to. Only the general registers are touched here. x86_64 only.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#if !defined(__x86_64__)
int main(void)
{
	fprintf(stderr, "syscall_inject: x86_64 only\n");
	return 2;
}
#else

static const struct {
	const char *name;
	long nr;
} calls[] = {
    {"openat", SYS_openat}, {"rename", SYS_rename}, {"unlink", SYS_unlink}, {"chmod", SYS_chmod},
    {"fchown", SYS_fchown}, {"kill", SYS_kill},	    {"socket", SYS_socket},
};

/* The kernel's restart codes, which a stopped thread's rax may hold. */
enum { ERESTARTSYS_ = 512, ERESTARTNOINTR_ = 513, ERESTARTNOHAND_ = 514, ERESTART_BLOCK_ = 516 };

/* Whether SIGSYS is pending for PID (its thread's or its process's). */
static int sigsys_pending(pid_t pid)
{
	char path[64], line[256];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigPnd:", 7) || !strncmp(line, "ShdPnd:", 7))
			found |= (strtoull(line + 7, NULL, 16) >> (SIGSYS - 1)) & 1;
	fclose(f);
	return found;
}

static int fail(const char *what)
{
	fprintf(stderr, "syscall_inject: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Writes LEN bytes of S at ADDR in the tracee (whole words: ADDR has room). */
static int poke(pid_t pid, unsigned long addr, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i += sizeof(long)) {
		long w = 0;

		memcpy(&w, s + i, len - i < sizeof(long) ? len - i : sizeof(long));
		if (ptrace(PTRACE_POKEDATA, pid, addr + i, w) < 0)
			return -1;
	}
	return 0;
}

/*
 * The registers to put back: a thread stopped inside an interrupted call
 * would, on its way out, have had the call restarted; that decision was
 * taken before it stopped, so take it here.
 */
static void restartable(struct user_regs_struct *r)
{
	long rc = (long)r->rax;

	if ((long)r->orig_rax < 0)
		return;
	if (rc == -ERESTARTSYS_ || rc == -ERESTARTNOINTR_ || rc == -ERESTARTNOHAND_) {
		r->rax = r->orig_rax;
		r->rip -= 2;
	} else if (rc == -ERESTART_BLOCK_) {
		r->rax = SYS_restart_syscall;
		r->rip -= 2;
	}
}

int main(int argc, char **argv)
{
	struct user_regs_struct saved, r;
	unsigned long sp, insn;
	long nr = -1, args[6] = {0};
	pid_t pid;
	int st;

	if (argc < 3 || argc > 9) {
		fprintf(stderr, "usage: syscall_inject PID NAME [ARG...]\n");
		return 2;
	}
	pid = atoi(argv[1]);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(argv[2], calls[i].name))
			nr = calls[i].nr;
	if (nr < 0) {
		fprintf(stderr, "syscall_inject: unknown call %s\n", argv[2]);
		return 2;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESYSGOOD) < 0)
		return fail("PTRACE_SEIZE");
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 || waitpid(pid, &st, __WALL) < 0)
		return fail("PTRACE_INTERRUPT");
	if (ptrace(PTRACE_GETREGS, pid, 0, &saved) < 0)
		return fail("PTRACE_GETREGS");
	/* The thread is parked after a syscall instruction (0f 05) when stopped in a call. */
	errno = 0;
	insn = (unsigned long)ptrace(PTRACE_PEEKTEXT, pid, saved.rip - 2, 0);
	if (errno || (insn & 0xffff) != 0x050f) {
		fprintf(stderr,
			"syscall_inject: the thread is not stopped after a syscall instruction\n");
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return 1;
	}
	/* Strings go below the red zone, each on its own 16-byte boundary. */
	sp = (saved.rsp - 1024) & ~15UL;
	for (int i = 3; i < argc; i++) {
		char *end;
		long v = strtol(argv[i], &end, 0);

		if (*argv[i] && !*end) {
			args[i - 3] = v;
			continue;
		}
		size_t len = strlen(argv[i]) + 1;

		sp -= (len + 15) & ~15UL;
		if (poke(pid, sp, argv[i], len) < 0) {
			fail("PTRACE_POKEDATA");
			ptrace(PTRACE_DETACH, pid, 0, 0);
			return 1;
		}
		args[i - 3] = (long)sp;
	}
	r = saved;
	r.rip = saved.rip - 2;
	r.rax = nr;
	r.orig_rax = -1;
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0)
		return fail("PTRACE_SETREGS");
	/* Into the call, and out of it: two syscall stops, or a signal on the way. */
	for (int stops = 0; stops < 2;) {
		if (ptrace(PTRACE_SYSCALL, pid, 0, 0) < 0 || waitpid(pid, &st, __WALL) < 0)
			return fail("PTRACE_SYSCALL");
		if (!WIFSTOPPED(st)) {
			printf("ended\n");
			return 0;
		}
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			stops++;
			continue;
		}
		/* A signal the call raised: let the thread go with it. */
		printf("signal %d\n", WSTOPSIG(st));
		fflush(stdout);
		ptrace(PTRACE_DETACH, pid, 0, WSTOPSIG(st));
		return 0;
	}
	if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
		return fail("PTRACE_GETREGS");
	printf("= %ld%s\n", (long)r.rax, sigsys_pending(pid) ? " SIGSYS" : "");
	restartable(&saved);
	if (ptrace(PTRACE_SETREGS, pid, 0, &saved) < 0)
		return fail("PTRACE_SETREGS");
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return 0;
}
#endif
