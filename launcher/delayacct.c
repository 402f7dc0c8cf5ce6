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
#include "watchdog.h"

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

/* A state file: never through a link, never blocking (a FIFO put there). */
static int read_state(const char *p, char *buf, size_t len)
{
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int write_state(const char *p, const char *text)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	ssize_t len = (ssize_t)strlen(text);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, (size_t)len) != len)
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

/*
 * Who holds the switch for this process: the watchdog when there is one
 * (watchdog.h). Its pid as recorded at the fork, not getppid(): once the
 * watchdog is killed the parent is a reaper (init, pid 1), whose holder file
 * would look alive for as long as the machine runs and keep every later
 * tsarun from putting the value back.
 */
static pid_t holder_pid(void)
{
	return watchdog_active() ? watchdog_pid() : getpid();
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
	if (read_state(p, buf, sizeof(buf)) || sscanf(buf, "%d %llu", &pid, &st) != 2 || pid <= 0) {
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
	if (read_state(p, buf, sizeof(buf)))
		return -1;
	return atoi(buf) ? 1 : 0;
}

/*
 * The state directory is root's own: a directory (not a link), owned by
 * this user, that nobody else may write to, in a parent nobody else may
 * write to either (else anyone could have made it, or put links in it for
 * root to write through). -EPERM with why set otherwise.
 */
static int check_dir(const char *dir, char *why, size_t len)
{
	char parent[256], *slash;
	struct stat st;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash)
		slash[slash == parent ? 1 : 0] = '\0';
	else
		snprintf(parent, sizeof(parent), ".");
	if (lstat(parent, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
		snprintf(why, len, "%.100s is not root's own (owner uid %u, mode %o)", parent,
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(why, len,
			 "%.60s is not tsarun's own (%s, owner uid %u, mode %o): remove it, tsarun "
			 "makes it again",
			 dir,
			 S_ISLNK(st.st_mode)   ? "a symbolic link"
			 : S_ISDIR(st.st_mode) ? "a directory"
					       : "not a directory",
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

static char dir_refused[192];

static int lock_dir(const char *dir, bool create)
{
	char p[512];
	int fd, ret;

	if (create && mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	ret = check_dir(dir, dir_refused, sizeof(dir_refused));
	if (ret)
		return ret;
	path(p, sizeof(p), dir, LOCK);
	fd = open(p, (create ? O_RDWR | O_CREAT : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		  0644);
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
static void crash_restore(void)
{
	char lockp[300], buf[8];
	int lfd, fd, others = 0;
	ssize_t n;

	if (crash_holder[0]) {
		snprintf(lockp, sizeof(lockp), "%s/" LOCK, crash_dir);
		lfd = open(lockp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (lfd >= 0 && !flock(lfd, LOCK_EX | LOCK_NB)) {
			unlink(crash_holder);
			/* Other holders: any delayacct.<pid> left whose process exists. */
			int dfd = open(crash_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
			fd = others ? -1
				    : open(crash_saved,
					   O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (fd >= 0) {
				n = read(fd, buf, sizeof(buf));
				close(fd);
				if (n > 0 && !write_sysctl(buf[0] == '1'))
					unlink(crash_saved);
			}
		}
		crash_holder[0] = '\0';
	}
}

static void on_crash(int sig)
{
	crash_restore();
	/* SA_RESETHAND put the default action back: die of the signal, as intended. */
	raise(sig);
}

void delayacct_on_violation(void)
{
	crash_restore();
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
	int lfd, cur, ret;

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
	if (lfd == -EPERM && dir_refused[0]) {
		snprintf(h->reason, sizeof(h->reason),
			 "kernel.task_delayacct is %s and tsarun does not manage it: %.120s",
			 cur ? "on" : "off", dir_refused);
		return;
	}
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
	h->holder_pid = holder_pid();
	snprintf(name, sizeof(name), HOLDER_PFX "%d", (int)h->holder_pid);
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
			ret = write_state(p, "0\n");
			if (ret) {
				/* Without a record to restore from, do not leave it on. */
				unlink(p);
				write_sysctl(0);
				snprintf(h->reason, sizeof(h->reason),
					 "cannot record kernel.task_delayacct's value in %s: %s",
					 h->dir, strerror(-ret));
				goto out_unlock;
			}
		}
	}
	/* Held on (by this tsarun, or by one already running): register. */
	path(h->holder, sizeof(h->holder), h->dir, name);
	snprintf(buf, sizeof(buf), "%d %llu\n", (int)h->holder_pid, starttime(h->holder_pid));
	ret = write_state(h->holder, buf);
	if (!ret) {
		h->switched_on = true;
		/* A watchdog holds it and restores it, crash or not (its own handlers). */
		if (h->holder_pid == getpid())
			install_crash_handlers(h);
	} else {
		h->holder[0] = '\0';
		/* Could not register: if nobody else holds it, put it back now. */
		repair(h->dir, name, p, sizeof(p));
		snprintf(h->reason, sizeof(h->reason), "cannot register in %s: %s", h->dir,
			 strerror(-ret));
	}
out_unlock:
	close(lfd);
}

void delayacct__release(struct delayacct_hold *h)
{
	char msg[256];
	int lfd;

	if (!h || !h->switched_on)
		return;
	/* The watchdog's hold: it lets go when this process is gone. */
	if (h->holder_pid != getpid()) {
		h->switched_on = false;
		return;
	}
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

void delayacct_release_pid(const char *dir, pid_t pid)
{
	char p[512], msg[256], name[64];
	int lfd;

	dir = dir ? dir : DELAYACCT_STATE_DIR;
	crash_holder[0] = '\0';
	snprintf(name, sizeof(name), HOLDER_PFX "%d", (int)pid);
	path(p, sizeof(p), dir, name);
	/* Not a holder (the run did not switch it on): nothing to let go, no lock to wait for. */
	if (access(p, F_OK))
		return;
	lfd = lock_dir(dir, false);
	if (lfd < 0)
		return;
	unlink(p);
	repair(dir, NULL, msg, sizeof(msg));
	close(lfd);
}

void delayacct_guard(const char *dir)
{
	struct delayacct_hold h = {.dir = dir ? dir : DELAYACCT_STATE_DIR};

	snprintf(h.holder, sizeof(h.holder), "%s/" HOLDER_PFX "%d", h.dir, (int)getpid());
	install_crash_handlers(&h);
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
