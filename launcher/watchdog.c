// SPDX-License-Identifier: MIT
/* The watchdog and what the supervisor tells it (watchdog.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/fscreds.h"

#include <linux/capability.h>

#include "delayacct.h"
#include "privdrop.h"
#include "sandbox.h"
#include "tree.h"
#include "watchdog.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

enum {
	MSG_DIR = 1,  /* fds: parent, dir; name; files */
	MSG_DIR_DEL,  /* the work directory is gone */
	MSG_SEAL,     /* fds: the output directories; the owner of temporary files */
	MSG_TEMP_ADD, /* fd: its directory; name */
	MSG_TEMP_DEL, /* name */
	MSG_CLEAN,    /* the supervisor ends normally */
	MSG_HELLO,    /* the supervisor runs */
	MSG_MAX_FDS = 16,
	MAX_TEMPS = 64,
	MAX_GROUPS = 64,
};

struct wd_msg {
	unsigned type;
	unsigned uid, gid;
	int ngroups;
	unsigned groups[MAX_GROUPS];
	char name[256];
	char files[256];
};

/* The supervisor's side. */
static int wd_sock = -1;
static pid_t wd_pid = -1, job_pgrp = -1;
static bool wd_gone;

int watchdog_signal(void)
{
	return SIGRTMIN;
}

bool watchdog_active(void)
{
	return wd_sock >= 0;
}

pid_t watchdog_job_pgrp(void)
{
	return job_pgrp;
}

pid_t watchdog_pid(void)
{
	return wd_pid;
}

bool watchdog_gone(void)
{
	if (!wd_gone && wd_sock >= 0 && getppid() != wd_pid)
		wd_gone = true;
	return wd_gone;
}

void watchdog_note_gone(void)
{
	wd_gone = true;
}

bool watchdog_forwarded(const struct signalfd_siginfo *si, bool *from_tty)
{
	if (wd_sock < 0 || si->ssi_code != SI_QUEUE || (pid_t)si->ssi_pid != wd_pid)
		return false;
	*from_tty = si->ssi_int & 1;
	return true;
}

static void send_msg(const struct wd_msg *m, const int *fds, size_t nfds)
{
	char cbuf[CMSG_SPACE(MSG_MAX_FDS * sizeof(int))];
	struct iovec iov = {.iov_base = (void *)m, .iov_len = sizeof(*m)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;

	if (wd_sock < 0)
		return;
	if (nfds) {
		memset(cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	/* Best effort: a watchdog gone is watchdog_gone()'s to say. */
	(void)!sendmsg(wd_sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void watchdog_register_dir(int parentfd, const char *name, int dirfd, const char *files, uid_t uid,
			   gid_t gid)
{
	struct wd_msg m = {.type = MSG_DIR, .uid = uid, .gid = gid};
	int fds[2] = {parentfd, dirfd};
	size_t n = 0;

	snprintf(m.name, sizeof(m.name), "%s", name);
	/* files: names separated by '\0', ending with an empty one */
	while (files[n] && n + strlen(files + n) + 2 < sizeof(m.files)) {
		memcpy(m.files + n, files + n, strlen(files + n) + 1);
		n += strlen(files + n) + 1;
	}
	send_msg(&m, fds, 2);
}

void watchdog_forget_dir(void)
{
	struct wd_msg m = {.type = MSG_DIR_DEL};

	send_msg(&m, NULL, 0);
}

void watchdog_seal(const int *dirfds, size_t n, uid_t temp_uid, gid_t temp_gid, const gid_t *groups,
		   int ngroups)
{
	struct wd_msg m = {.type = MSG_SEAL, .uid = temp_uid, .gid = temp_gid};

	if (n > MSG_MAX_FDS)
		n = MSG_MAX_FDS;
	m.ngroups = ngroups > MAX_GROUPS ? MAX_GROUPS : ngroups;
	for (int i = 0; i < m.ngroups; i++)
		m.groups[i] = groups[i];
	send_msg(&m, dirfds, n);
}

void watchdog_temp(int dirfd, const char *name, bool created)
{
	struct wd_msg m = {.type = created ? MSG_TEMP_ADD : MSG_TEMP_DEL};

	snprintf(m.name, sizeof(m.name), "%s", name);
	send_msg(&m, &dirfd, created ? 1 : 0);
}

void watchdog_clean_exit(void)
{
	struct wd_msg m = {.type = MSG_CLEAN};

	send_msg(&m, NULL, 0);
}

/* The watchdog's side. */
struct temp {
	int dirfd;
	char name[256];
};

struct state {
	const struct watchdog_opts *o;
	pid_t sup;
	int pidfd, sigfd, sock;
	bool clean, sealed;
	/* the work directory */
	int wparent, wdir;
	char wname[256], wfiles[256];
	struct fscreds wcreds;
	int forwarded; /* the last signal passed on */
	int die_of;    /* the watchdog ends by this signal, as the supervisor did */
	/* the output directories, and the temporary files in them */
	int outdirs[MSG_MAX_FDS];
	size_t noutdirs;
	struct fscreds tcreds;
	gid_t tgroups[MAX_GROUPS], wgroup;
	struct temp temps[MAX_TEMPS];
	size_t ntemps;
};

static void close_fds(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static bool same_dir(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* A name tsarun's outfile gives its temporary files: ".NAME.XXXXXXXX". */
static bool temp_name(const char *s)
{
	size_t len = strlen(s);

	if (len < 11 || s[0] != '.' || s[len - 9] != '.' || strchr(s, '/'))
		return false;
	for (size_t i = len - 8; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/*
 * Once it knows what it may have to remove, the watchdog writes nowhere
 * else (Landlock, where the kernel has it): the delay accounting switch
 * and tsarun's state directory, the temporary files in the output
 * directories, the work directory.
 */
static void confine_self(const struct state *st)
{
	struct sandbox_rule rules[MSG_MAX_FDS + 4];
	size_t n = 0;
	int sysctl = open(DELAYACCT_SYSCTL, O_PATH | O_CLOEXEC),
	    state = open(DELAYACCT_STATE_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char why[160];

	for (size_t i = 0; i < st->noutdirs; i++)
		rules[n++] = (struct sandbox_rule){st->outdirs[i], SANDBOX_REMOVE_FILE};
	rules[n++] = (struct sandbox_rule){st->wdir, SANDBOX_REMOVE_FILE};
	rules[n++] = (struct sandbox_rule){st->wparent, SANDBOX_REMOVE_DIR};
	rules[n++] = (struct sandbox_rule){sysctl, SANDBOX_WRITE_ONE};
	rules[n++] = (struct sandbox_rule){state, SANDBOX_WRITE};
	sandbox_landlock(rules, n, why, sizeof(why));
	if (sysctl >= 0)
		close(sysctl);
	if (state >= 0)
		close(state);
}

/* One message from the supervisor; returns recvmsg()'s count (0: none left). */
static ssize_t on_msg(struct state *st)
{
	char cbuf[CMSG_SPACE(MSG_MAX_FDS * sizeof(int))];
	struct wd_msg m;
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	int fds[MSG_MAX_FDS];
	size_t nfds = 0;
	struct cmsghdr *c;
	ssize_t n;

	n = recvmsg(st->sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n <= 0)
		return n < 0 ? 0 : n;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k && nfds < MSG_MAX_FDS; i++)
				memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		}
	if (n != sizeof(m)) {
		close_fds(fds, nfds);
		return n;
	}
	m.name[sizeof(m.name) - 1] = '\0';
	m.files[sizeof(m.files) - 2] = m.files[sizeof(m.files) - 1] = '\0';
	switch (m.type) {
	case MSG_DIR:
		/* Before the seal only: the supervisor is still tsarun's own then. */
		if (st->sealed || nfds != 2 || strchr(m.name, '/') || st->wdir >= 0)
			break;
		st->wparent = fds[0];
		st->wdir = fds[1];
		nfds = 0;
		memcpy(st->wname, m.name, sizeof(st->wname));
		memcpy(st->wfiles, m.files, sizeof(st->wfiles));
		st->wcreds = (struct fscreds){
		    .uid = m.uid, .gid = m.gid, .groups = &st->wgroup, .ngroups = 1};
		st->wgroup = m.gid;
		break;
	case MSG_DIR_DEL:
		if (st->wdir >= 0) {
			close(st->wdir);
			close(st->wparent);
			st->wdir = st->wparent = -1;
		}
		break;
	case MSG_SEAL:
		if (st->sealed)
			break;
		st->sealed = true;
		memcpy(st->outdirs, fds, nfds * sizeof(int));
		st->noutdirs = nfds;
		nfds = 0;
		if (m.ngroups < 0 || m.ngroups > MAX_GROUPS)
			m.ngroups = 0;
		for (int i = 0; i < m.ngroups; i++)
			st->tgroups[i] = m.groups[i];
		st->tcreds = (struct fscreds){
		    .uid = m.uid, .gid = m.gid, .groups = st->tgroups, .ngroups = m.ngroups};
		if (!st->o->no_sandbox)
			confine_self(st);
		break;
	case MSG_TEMP_ADD:
		if (nfds != 1 || !temp_name(m.name) || st->ntemps == MAX_TEMPS)
			break;
		/* Only in a directory outputs were planned into. */
		for (size_t i = 0; i < st->noutdirs; i++)
			if (same_dir(fds[0], st->outdirs[i])) {
				st->temps[st->ntemps].dirfd = st->outdirs[i];
				memcpy(st->temps[st->ntemps].name, m.name, sizeof(m.name));
				st->ntemps++;
				break;
			}
		break;
	case MSG_TEMP_DEL:
		for (size_t i = 0; i < st->ntemps; i++)
			if (!strcmp(st->temps[i].name, m.name)) {
				st->temps[i] = st->temps[--st->ntemps];
				break;
			}
		break;
	case MSG_CLEAN:
		st->clean = true;
		break;
	}
	close_fds(fds, nfds);
	return n;
}

/* The signals the watchdog gets go to the supervisor, marked as passed on. */
static void forward(struct state *st, const struct signalfd_siginfo *si)
{
	siginfo_t info;

	memset(&info, 0, sizeof(info));
	info.si_signo = (int)si->ssi_signo;
	info.si_code = SI_QUEUE;
	info.si_pid = getpid();
	info.si_uid = getuid();
	info.si_value.sival_int = si->ssi_code == SI_KERNEL ? 1 : 0;
	st->forwarded = (int)si->ssi_signo;
	syscall(SYS_pidfd_send_signal, st->pidfd, (int)si->ssi_signo, &info, 0);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void reap_all(void)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | __WALL) || !si.si_pid)
			return;
	}
}

/*
 * The supervisor is gone and its tree came here: SIGTERM (and SIGCONT, for
 * what was stopped), SIGKILL after the grace, reaped. Returns how many
 * processes it ended.
 */
static size_t end_tree(const struct watchdog_opts *o)
{
	uint64_t deadline = now_ns() + o->grace_ns;
	struct timespec nap = {.tv_nsec = 5 * 1000000};
	size_t ended = 0;
	int stage = 0;

	for (;;) {
		pid_t *pids;
		size_t n;

		reap_all();
		if (tree_descendants(getpid(), &pids, &n))
			break;
		if (!n) {
			free(pids);
			break;
		}
		if (stage == 0) {
			ended = n;
			for (size_t i = 0; i < n; i++) {
				kill(pids[i], SIGTERM);
				kill(pids[i], SIGCONT);
			}
			stage = 1;
		} else if (stage == 1 && now_ns() >= deadline) {
			for (size_t i = 0; i < n; i++)
				kill(pids[i], SIGKILL);
			stage = 2;
		} else if (stage == 2 && now_ns() >= deadline + 2000000000ull) {
			free(pids); /* in D state, unkillable: nothing more to do */
			break;
		}
		free(pids);
		nanosleep(&nap, NULL);
	}
	reap_all();
	return ended;
}

/* What the supervisor had under way, removed with its owner's rights. */
static void remove_files(struct state *st)
{
	struct fscreds_save sv;

	if (st->ntemps && !fscreds_enter(st->tcreds.uid == (uid_t)-1 ? NULL : &st->tcreds, &sv)) {
		for (size_t i = 0; i < st->ntemps; i++)
			unlinkat(st->temps[i].dirfd, st->temps[i].name, 0);
		fscreds_leave(&sv);
	}
	st->ntemps = 0;
	if (st->wdir >= 0 && !fscreds_enter(&st->wcreds, &sv)) {
		for (const char *f = st->wfiles; *f; f += strlen(f) + 1)
			if (!strchr(f, '/'))
				unlinkat(st->wdir, f, 0);
		unlinkat(st->wparent, st->wname, AT_REMOVEDIR);
		fscreds_leave(&sv);
	}
}

static const char *sig_name(int sig)
{
	const char *s = sigabbrev_np(sig);

	return s ? s : "?";
}

static int watch(struct state *st)
{
	struct pollfd p[3] = {{.fd = st->sigfd, .events = POLLIN},
			      {.fd = st->sock, .events = POLLIN},
			      {.fd = st->pidfd, .events = POLLIN}};
	struct signalfd_siginfo si;
	siginfo_t ws;
	int code;

	for (;;) {
		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents & POLLIN)
			on_msg(st);
		if (p[0].revents & POLLIN)
			while (read(st->sigfd, &si, sizeof(si)) == sizeof(si))
				if (si.ssi_signo != SIGCHLD)
					forward(st, &si);
		if (p[2].revents & POLLIN)
			break;
		if (p[1].revents & (POLLHUP | POLLERR))
			p[1].fd = -1; /* the supervisor closed its end: its exit follows */
	}
	/* Messages sent just before the exit are still in the socket. */
	while (on_msg(st) > 0)
		;
	memset(&ws, 0, sizeof(ws));
	if (waitid(P_PIDFD, (id_t)st->pidfd, &ws, WEXITED | __WALL)) {
		fprintf(stderr, "tsarun: cannot wait for the supervisor: %s\n", strerror(errno));
		return 125;
	}
	code = ws.si_code == CLD_EXITED ? ws.si_status & 0xff : 125;
	if (!st->clean) {
		size_t ended = st->o->leave ? 0 : end_tree(st->o);
		/*
		 * A signal passed on before the supervisor handled signals (its
		 * start) ended it the default way: that is tsarun interrupted, as
		 * it would have been without a watchdog, not a crash.
		 */
		bool interrupted = ws.si_code == CLD_KILLED && ws.si_status == st->forwarded;

		remove_files(st);
		if (interrupted)
			st->die_of = ws.si_status;
		else if (ws.si_code != CLD_EXITED)
			fprintf(stderr,
				"tsarun: the supervisor (pid %d) was killed by SIG%s: no artifact "
				"was written; %s\n",
				(int)st->sup, sig_name(ws.si_status),
				st->o->leave ? "what the command started is left running "
					       "(--descendants leave)"
				: ended	     ? "the command and what it started were ended"
					     : "nothing of the command was left running");
	}
	if (geteuid() == 0)
		delayacct_release_pid(NULL, getpid());
	return code;
}

int watchdog_start(const struct watchdog_opts *o, int *code)
{
	struct state st = {.o = o, .wparent = -1, .wdir = -1, .tcreds = {.uid = (uid_t)-1}};
	pid_t parent = getpid(), pgrp = getpgrp(), pid;
	sigset_t mask, old;
	int sv[2], err;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGCHLD);
	/* Blocked before the fork: none of them is lost to the watchdog in between. */
	sigprocmask(SIG_BLOCK, &mask, &old);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0) {
		close(sv[0]);
		wd_sock = sv[1];
		wd_pid = parent;
		job_pgrp = pgrp;
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* A group of its own: the terminal's signals come through the watchdog. */
		setpgid(0, 0);
		/* And a way to write the report to the terminal from there (TOSTOP). */
		signal(SIGTTOU, SIG_IGN);
		prctl(PR_SET_PDEATHSIG, watchdog_signal());
		if (getppid() != parent)
			wd_gone = true;
		send_msg(&(struct wd_msg){.type = MSG_HELLO}, NULL, 0);
		return 0;
	}
	close(sv[1]);
	/*
	 * The supervisor first: the watchdog sets itself up once it runs, not
	 * on the CPU it would take from it, which on a busy machine is the
	 * start of the run waiting.
	 */
	{
		struct wd_msg m;

		while (recv(sv[0], &m, sizeof(m), 0) < 0 && errno == EINTR)
			;
	}
	st.sup = pid;
	st.sock = sv[0];
	st.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	st.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (st.pidfd < 0 || st.sigfd < 0) {
		/* Cannot watch: the supervisor still runs; wait for it plainly. */
		int status = 0;

		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		*code = WIFEXITED(status) ? WEXITSTATUS(status) : 125;
		return 1;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Its own groups, kept to come back to after acting as a file's owner (fscreds.h). */
	fscreds_set_default(NULL);
	if (geteuid() == 0) {
		delayacct_guard(NULL);
		sandbox_on_violation(delayacct_on_violation);
	}
	if (!o->no_sandbox) {
		/*
		 * Root keeps only what the watchdog does: the switch (CAP_SYS_ADMIN),
		 * ending the tree (CAP_KILL), removing files with their owners'
		 * rights or root's own (CAP_SETUID, CAP_SETGID, CAP_DAC_*, CAP_FOWNER).
		 */
		char why[160];
		struct privdrop_opts po = {
		    .keep = 1ull << CAP_SYS_ADMIN | 1ull << CAP_KILL | 1ull << CAP_SETUID |
			    1ull << CAP_SETGID | 1ull << CAP_DAC_OVERRIDE |
			    1ull << CAP_DAC_READ_SEARCH | 1ull << CAP_FOWNER,
		};

		if (geteuid() == 0)
			privdrop_apply(&po, why, sizeof(why));
		sandbox_enter_watchdog();
	}
	*code = watch(&st);
	if (st.die_of) {
		/* The caller's shell sees what it would have without the watchdog. */
		signal(st.die_of, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		kill(getpid(), st.die_of);
	}
	return 1;
}
