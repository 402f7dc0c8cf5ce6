/* SPDX-License-Identifier: MIT */
/*
 * kernel.task_delayacct: the switch without which the kernel keeps no
 * block I/O, swap-in, reclaim, thrashing, compaction, write-protect copy or
 * IRQ delays for a task. It is read when a task is created: a task started
 * while it was off never gets those counters, so it must be on before the
 * command is forked.
 *
 * tsarun switches it on for a session when it may and puts the previous
 * value back when it ends. Several tsarun instances can run at once, so the
 * switch is shared: under DELAYACCT_STATE_DIR, with a lock held,
 *   delayacct.saved   the value before any tsarun switched it on
 *   delayacct.<pid>   one file per tsarun holding it on ("pid starttime")
 * The last holder to leave restores the saved value. A holder that died
 * without leaving (SIGKILL) is recognised by its pid and start time; the
 * next tsarun restores the value, or says how when it may not. The state
 * directory must be root's own (a directory, not a link, that nobody else
 * may write to), else tsarun leaves the switch alone and says why.
 */
#ifndef TSARUN_DELAYACCT_H
#define TSARUN_DELAYACCT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DELAYACCT_SYSCTL    "/proc/sys/kernel/task_delayacct"
#define DELAYACCT_STATE_DIR "/run/tsarun"

struct delayacct_hold {
	int before;	    /* the value before any tsarun changed it: -1 none, 0, 1 */
	int at_start;	    /* the value this process found: -1 none, 0, 1 */
	bool switched_on;   /* this process holds it on, and will restore it */
	char reason[192];   /* when it is off and stays off: why */
	char repaired[256]; /* a value left by a killed tsarun that was put back (a message) */
	/* internal */
	char holder[128];
	const char *dir;
	pid_t holder_pid; /* the watchdog's pid when it holds the switch for this run */
};

/* The switch's value: 0 or 1, or -1 when the kernel has none (or it cannot be read). */
int delayacct_read(void);

/*
 * Take the switch for this process: repair what a killed tsarun left, then,
 * if want, turn it on (or join the tsarun already holding it on). dir is the
 * state directory (NULL: DELAYACCT_STATE_DIR). Never fails: h says what
 * happened. Also installs handlers that restore the value if tsarun itself
 * crashes (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT).
 */
void delayacct__acquire(struct delayacct_hold *h, bool want, const char *dir);

/*
 * Leave; the last holder restores the saved value. Safe to call twice.
 * When a watchdog holds the switch for this process (watchdog.h: it is
 * registered under the watchdog's pid), this only forgets: the watchdog,
 * root to the end, lets go with delayacct_release_pid() once this process
 * is gone, however it went.
 */
void delayacct__release(struct delayacct_hold *h);
void delayacct_release_pid(const char *dir, pid_t pid);

/*
 * Restore the switch if this process crashes while registered as a holder
 * (the watchdog's crash handlers, installed before it knows whether it is).
 */
void delayacct_guard(const char *dir);

/* The same from the sandbox's SIGSYS handler (async-signal-safe), which then exits. */
void delayacct_on_violation(void);

/*
 * Was the switch left on by a tsarun that is gone? Returns true with a
 * message (for doctor, and for users who may not repair it themselves).
 */
bool delayacct_stale(const char *dir, char *msg, size_t len);

/*
 * How many live tsarun processes hold the switch on now (0 when none), one
 * of their pids in *pid, and the value the last of them puts back in *saved
 * (-1 when none is recorded). For doctor: a value that is on only for them
 * is not the machine's.
 */
int delayacct_holders(const char *dir, int *saved, int *pid);

#endif /* TSARUN_DELAYACCT_H */
