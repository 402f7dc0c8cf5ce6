// SPDX-License-Identifier: MIT
/* kernel.task_delayacct, shared between tsarun instances (see delayacct.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "delayacct.h"
#include "host.h"
#include "procfs.h"
#include "tree.h"

#define SAVED	   "delayacct.saved"
#define HOLDER_PFX "delayacct."
#define LOCK	   "delayacct.lock"

int delayacct_read(void)
{
	char buf[16];

	if (host_read_file(DELAYACCT_SYSCTL, buf, sizeof(buf)))
		return -1;
	return atoi(buf) ? 1 : 0;
}

static int write_sysctl(int v)
{
	int fd = open(DELAYACCT_SYSCTL, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, v ? "1\n" : "0\n", 2) != 2)
		err = -errno;
	close(fd);
	return err;
}

/* A live process's start time in clock ticks; 0 when it is gone (or a zombie). */
static unsigned long long starttime(pid_t pid)
{
	struct procfs_stat st;

	if (tree_read_stat(pid, &st) || st.state == 'Z' || st.state == 'X')
		return 0;
	return st.starttime_ticks;
}

static void path(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

/*
 * Is the holder file name (delayacct.<pid>) still a live tsarun? With
 * cleanup (only under the lock), a dead one's file is removed.
 */
static bool holder_alive(const char *dir, const char *name, int *pid_out, bool cleanup)
{
	char p[512], buf[64];
	unsigned long long st = 0;
	int pid = 0;

	path(p, sizeof(p), dir, name);
	if (host_read_file(p, buf, sizeof(buf)) || sscanf(buf, "%d %llu", &pid, &st) != 2 ||
	    pid <= 0) {
		if (cleanup)
			unlink(p);
		return false;
	}
	if (pid_out)
		*pid_out = pid;
	if (starttime(pid) == st && st)
		return true;
	if (cleanup)
		unlink(p);
	return false;
}

/*
 * Count live holders other than self; last_dead gets a dead one's pid,
 * first_live (may be NULL) a live one's.
 */
static int live_holders(const char *dir, const char *self, int *last_dead, int *first_live,
			bool cleanup)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		int pid = 0;
		char *end;

		if (strncmp(de->d_name, HOLDER_PFX, strlen(HOLDER_PFX)))
			continue;
		strtol(de->d_name + strlen(HOLDER_PFX), &end, 10);
		if (*end || end == de->d_name + strlen(HOLDER_PFX))
			continue; /* not delayacct.<digits> */
		if (self && !strcmp(de->d_name, self))
			continue;
		if (holder_alive(dir, de->d_name, &pid, cleanup)) {
			if (first_live && !n)
				*first_live = pid;
			n++;
		} else if (last_dead && pid) {
			*last_dead = pid;
		}
	}
	closedir(d);
	return n;
}

static int read_saved(const char *dir)
{
	char p[512], buf[16];

	path(p, sizeof(p), dir, SAVED);
	if (host_read_file(p, buf, sizeof(buf)))
		return -1;
	return atoi(buf) ? 1 : 0;
}

static int lock_dir(const char *dir, bool create)
{
	char p[512];
	int fd;

	if (create && mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	path(p, sizeof(p), dir, LOCK);
	fd = open(p, (create ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/*
 * Under the lock: a saved value with no live holder was left by a tsarun
 * that died. Put it back (when permitted). Returns the message, or "".
 */
static void repair(const char *dir, const char *self, char *msg, size_t len)
{
	int saved = read_saved(dir), dead = 0, cur;
	char p[512];

	msg[0] = '\0';
	if (saved < 0 || live_holders(dir, self, &dead, NULL, true))
		return;
	cur = delayacct_read();
	if (cur != saved && write_sysctl(saved))
		return;
	path(p, sizeof(p), dir, SAVED);
	unlink(p);
	if (dead)
		snprintf(msg, len,
			 "restored kernel.task_delayacct=%d, left at %d by tsarun (pid %d), which "
			 "did not exit cleanly",
			 saved, cur, dead);
	else
		snprintf(msg, len,
			 "restored kernel.task_delayacct=%d, left at %d by a tsarun that did not "
			 "exit cleanly",
			 saved, cur);
}

/* What the crash handler needs, set up before it can run. */
static char crash_holder[512];
static char crash_saved[512];
static char crash_dir[256];

/*
 * tsarun itself crashed: leave, and if no other tsarun holds the switch,
 * put the saved value back. Only async-signal-safe calls; a lock held by
 * this very process (a crash inside acquire or release) is not waited for:
 * the next tsarun repairs instead.
 */
static void on_crash(int sig)
{
	char lockp[300], buf[8];
	int lfd, fd, others = 0;
	ssize_t n;

	if (crash_holder[0]) {
		snprintf(lockp, sizeof(lockp), "%s/" LOCK, crash_dir);
		lfd = open(lockp, O_RDONLY | O_CLOEXEC);
		if (lfd >= 0 && !flock(lfd, LOCK_EX | LOCK_NB)) {
			unlink(crash_holder);
			/* Other holders: any delayacct.<pid> left whose process exists. */
			int dfd = open(crash_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			char dbuf[4096];
			long nr;

			while (dfd >= 0 &&
			       (nr = syscall(SYS_getdents64, dfd, dbuf, sizeof(dbuf))) > 0) {
				for (long off = 0; off < nr;) {
					struct {
						unsigned long long ino;
						long long off;
						unsigned short reclen;
						unsigned char type;
						char name[];
					} *e = (void *)(dbuf + off);
					const char *s = e->name + strlen(HOLDER_PFX);
					long pid = 0;

					if (!strncmp(e->name, HOLDER_PFX, strlen(HOLDER_PFX)) &&
					    *s) {
						while (*s >= '0' && *s <= '9')
							pid = pid * 10 + (*s++ - '0');
						if (!*s && pid > 0 && !kill((pid_t)pid, 0))
							others++;
					}
					off += e->reclen;
				}
			}
			if (dfd >= 0)
				close(dfd);
			fd = others ? -1 : open(crash_saved, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				n = read(fd, buf, sizeof(buf));
				close(fd);
				if (n > 0 && !write_sysctl(buf[0] == '1'))
					unlink(crash_saved);
			}
		}
		crash_holder[0] = '\0';
	}
	/* SA_RESETHAND put the default action back: die of the signal, as intended. */
	raise(sig);
}

/*
 * Every signal that would end tsarun without its cleanup (the forwarded
 * ones, SIGINT, SIGTERM, SIGHUP, SIGQUIT, are read from a signalfd and end
 * the session normally). Only those still at their default action.
 */
static void install_crash_handlers(const struct delayacct_hold *h)
{
	static const int sigs[] = {SIGSEGV, SIGBUS,  SIGILL,  SIGFPE,  SIGABRT, SIGTRAP, SIGSYS,
				   SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM};
	struct sigaction sa = {.sa_handler = on_crash, .sa_flags = SA_RESETHAND}, old;

	snprintf(crash_dir, sizeof(crash_dir), "%s", h->dir);
	path(crash_saved, sizeof(crash_saved), h->dir, SAVED);
	snprintf(crash_holder, sizeof(crash_holder), "%s", h->holder);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!sigaction(sigs[i], NULL, &old) && old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
}

void delayacct__acquire(struct delayacct_hold *h, bool want, const char *dir)
{
	char p[512], buf[64], name[64];
	int lfd, cur, fd, ret;

	memset(h, 0, sizeof(*h));
	h->dir = dir ? dir : DELAYACCT_STATE_DIR;
	cur = delayacct_read();
	h->before = h->at_start = cur;
	if (cur < 0) {
		snprintf(h->reason, sizeof(h->reason),
			 "the kernel has no kernel.task_delayacct (built without "
			 "CONFIG_TASK_DELAY_ACCT?)");
		return;
	}
	lfd = lock_dir(h->dir, true);
	if (lfd < 0) {
		/* Not permitted to manage it; a value left by a killed tsarun is reported. */
		if (cur == 0)
			snprintf(h->reason, sizeof(h->reason),
				 "kernel.task_delayacct is off and tsarun may not switch it on "
				 "(needs root)");
		else if (read_saved(h->dir) >= 0)
			h->before = read_saved(h->dir);
		return;
	}
	snprintf(name, sizeof(name), HOLDER_PFX "%d", (int)getpid());
	repair(h->dir, name, h->repaired, sizeof(h->repaired));
	cur = delayacct_read();
	h->before = read_saved(h->dir) >= 0 ? read_saved(h->dir) : cur;
	if (!want) {
		if (cur == 0)
			snprintf(h->reason, sizeof(h->reason),
				 "kernel.task_delayacct was off (--no-delayacct: not switched on)");
		goto out_unlock;
	}
	if (cur == 1 && read_saved(h->dir) < 0)
		goto out_unlock; /* on already, not by tsarun: nothing to restore */
	if (cur == 0) {
		ret = write_sysctl(1);
		if (ret) {
			snprintf(h->reason, sizeof(h->reason),
				 "kernel.task_delayacct is off and cannot be switched on: %s",
				 strerror(-ret));
			goto out_unlock;
		}
		path(p, sizeof(p), h->dir, SAVED);
		if (read_saved(h->dir) < 0) {
			fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0 || write(fd, "0\n", 2) != 2) {
				/* Without a record to restore from, do not leave it on. */
				if (fd >= 0)
					close(fd);
				unlink(p);
				write_sysctl(0);
				snprintf(h->reason, sizeof(h->reason),
					 "cannot record kernel.task_delayacct's value in %s: %s",
					 h->dir, strerror(errno));
				goto out_unlock;
			}
			close(fd);
		}
	}
	/* Held on (by this tsarun, or by one already running): register. */
	path(h->holder, sizeof(h->holder), h->dir, name);
	snprintf(buf, sizeof(buf), "%d %llu\n", (int)getpid(), starttime(getpid()));
	fd = open(h->holder, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0 && write(fd, buf, strlen(buf)) == (ssize_t)strlen(buf)) {
		h->switched_on = true;
		install_crash_handlers(h);
	} else {
		h->holder[0] = '\0';
		/* Could not register: if nobody else holds it, put it back now. */
		repair(h->dir, name, p, sizeof(p));
		snprintf(h->reason, sizeof(h->reason), "cannot register in %s: %s", h->dir,
			 strerror(errno));
	}
	if (fd >= 0)
		close(fd);
out_unlock:
	close(lfd);
}

void delayacct__release(struct delayacct_hold *h)
{
	char msg[256];
	int lfd;

	if (!h || !h->switched_on)
		return;
	lfd = lock_dir(h->dir, false);
	crash_holder[0] = '\0';
	unlink(h->holder);
	h->switched_on = false;
	if (lfd < 0)
		return;
	/* The last one out puts the value back. */
	repair(h->dir, NULL, msg, sizeof(msg));
	close(lfd);
}

int delayacct_holders(const char *dir, int *saved, int *pid)
{
	dir = dir ? dir : DELAYACCT_STATE_DIR;
	*saved = read_saved(dir);
	*pid = 0;
	return live_holders(dir, NULL, NULL, pid, false);
}

bool delayacct_stale(const char *dir, char *msg, size_t len)
{
	int saved, dead = 0, cur = delayacct_read();

	dir = dir ? dir : DELAYACCT_STATE_DIR;
	saved = read_saved(dir);
	if (saved < 0 || live_holders(dir, NULL, &dead, NULL, false))
		return false;
	snprintf(msg, len,
		 "kernel.task_delayacct is %d; tsarun switched it on and did not exit cleanly "
		 "(it was %d): any tsarun run as root restores it, or 'sysctl "
		 "kernel.task_delayacct=%d'",
		 cur, saved, saved);
	return true;
}
