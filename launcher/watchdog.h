/* SPDX-License-Identifier: MIT */
/*
 * The watchdog: what is left of tsarun when its supervisor is gone.
 *
 * A run is two processes, split the way OpenSSH splits sshd into a small
 * privileged monitor and the process that does the work. tsarun (the
 * process the shell started, the watchdog) forks the supervisor before
 * anything else and only waits: it passes the signals it gets on to the
 * supervisor, and returns the supervisor's exit status as its own. The
 * supervisor does the run (probes, spawner, command, outputs) and, once set
 * up, gives up root (privdrop.h).
 *
 * The watchdog is the supervisor's parent and a child subreaper, so when
 * the supervisor dies without finishing (SIGKILL, the OOM killer, a crash,
 * the sandbox), the command and everything it started come to the
 * watchdog, which ends them as --descendants says (SIGTERM, SIGKILL after
 * --kill-grace; left running with --descendants leave), removes the files
 * the supervisor had under way (bash's work directory, hidden temporary
 * files) with the rights of their owner, and, as root, puts
 * kernel.task_delayacct back (it holds the switch: delayacct.h). When the
 * watchdog itself is killed, the supervisor gets watchdog_signal() (its
 * parent-death signal) and ends the command tree the same way, leaving no
 * artifact: a killed tsarun writes nothing after its death.
 *
 * The supervisor runs in a process group of its own: the command goes
 * back to the watchdog's (the shell's job, the terminal's foreground), so
 * a terminal's signals reach the watchdog and the command, and the
 * watchdog passes them on to the supervisor marked as such.
 */
#ifndef TSARUN_WATCHDOG_H
#define TSARUN_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct signalfd_siginfo;

struct watchdog_opts {
	bool leave;	   /* --descendants leave: the tree is not ended */
	uint64_t grace_ns; /* --kill-grace */
	bool no_sandbox;   /* --no-sandbox: no filter on the watchdog either */
};

/*
 * Split. Returns 0 in the supervisor; in the watchdog, runs until the
 * supervisor has gone and returns 1 with the exit status in *code. -errno
 * when there is no watchdog (fork failed): the caller goes on alone.
 */
int watchdog_start(const struct watchdog_opts *o, int *code);

/* In the supervisor: is there a watchdog, and its process group (the job's). */
bool watchdog_active(void);
pid_t watchdog_job_pgrp(void);
/* The watchdog's pid (-1 without one): still its pid after it died, never a reaper's. */
pid_t watchdog_pid(void);

/* The signal the supervisor gets when the watchdog dies. */
int watchdog_signal(void);

/* Has the watchdog gone (killed)? Then nothing more is written. */
bool watchdog_gone(void);
void watchdog_note_gone(void);

/*
 * A signal read from the supervisor's signalfd: passed on by the watchdog?
 * *from_tty says whether the terminal sent it (it reached the command too).
 */
bool watchdog_forwarded(const struct signalfd_siginfo *si, bool *from_tty);

/*
 * What the watchdog removes should the supervisor die before it did. A
 * work directory (dirfd, its files by name, a '\0'-separated list, then
 * itself by name in parentfd), removed with the rights of uid:gid. Hidden
 * temporary files (lib/outfile.h's hook) in the directories outputs go
 * into: those are told once, before the supervisor gives up root and
 * reads anything of the command's (watchdog_seal()); after that the
 * watchdog removes only temporary files there (hidden, tsarun's random
 * names), with the rights of the user files are made for (temp_uid, -1:
 * root). What a compromised supervisor tells it can do no more.
 */
void watchdog_register_dir(int parentfd, const char *name, int dirfd, const char *files, uid_t uid,
			   gid_t gid);
void watchdog_forget_dir(void);
void watchdog_seal(const int *dirfds, size_t n, uid_t temp_uid, gid_t temp_gid, const gid_t *groups,
		   int ngroups);
void watchdog_temp(int dirfd, const char *name, bool created);

/* The supervisor is ending normally: what it leaves running is meant to be. */
void watchdog_clean_exit(void);

#endif /* TSARUN_WATCHDOG_H */
