/* SPDX-License-Identifier: MIT */
/*
 * One run of the command: spawn at the barrier, arm the probes, release,
 * watch (signals, reaping, probe descriptors, ticks) until the tree has
 * ended, then let each probe collect into the run.
 */
#ifndef TSARUN_SUPERVISE_H
#define TSARUN_SUPERVISE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct probe;
struct run;

struct spawner;
struct confine;

/* What happens to descendants still running when the command itself exits. */
enum descendants_policy {
	DESC_WAIT = 0, /* wait until the whole tree has exited (default) */
	DESC_LEAVE,    /* report them as survivors and leave them running */
	DESC_KILL,     /* SIGTERM, then SIGKILL after a grace period */
};

/* What a run's supervision was asked for (--descendants, --kill-grace, --no-sandbox, -v). */
struct supervisor_opts {
	enum descendants_policy descendants;
	uint64_t kill_grace_ns;
	bool no_sandbox;
	int verbose;
};

struct supervisor {
	struct supervisor_opts o;
	struct spawner *spawner;
	struct probe *probes;
	int nprobes;
	int sigfd;	  /* signalfd for SIGCHLD and the forwarded signals */
	int interrupted;  /* first interrupting signal over all runs */
	const char *name; /* the command in messages */
	/* Put on before the first command is released (confine.h); NULL: none. */
	struct confine *confine;
	/* The watchdog was killed (watchdog.h): the tree was ended, nothing is to be written. */
	bool abandoned;
};

/* The signals tsarun forwards to the command. */
extern const int supervise_forwarded[4];

/*
 * Run the command once into r (index and warmup set by the caller).
 * Returns 0 when the run happened, even if the command failed or could not
 * be executed (r says so); -errno with a message in err when tsarun itself
 * failed.
 */
int supervise_run(struct supervisor *sv, struct run *r, char *err, size_t errlen);

/*
 * With eBPF, end r's wall time (from the release, first set to tsarun's
 * notice of the exit) at the root process's end as the scheduler saw it.
 */
void supervise_wall_to_exit(struct run *r);

#endif /* TSARUN_SUPERVISE_H */
