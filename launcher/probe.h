/* SPDX-License-Identifier: MIT */
/*
 * The seam between the supervisor and the sources of figures.
 *
 * For each run the supervisor calls, for every probe, in the order given:
 *   arm()       while the child waits at the exec barrier: mark it, start
 *               listening. An error makes the source unavailable for the
 *               run, with the reason recorded; the run goes on.
 *   on_ready()  whenever fd() is readable during the run.
 *   on_tick()   every tick_ns, when set (sampling sources).
 *   on_writable() whenever out_fd() has room, watched only while
 *               out_pending() says something waits to be written there (an
 *               output the loop must never block on: the interval stream).
 *   on_exit()   once, when the command has exited and is not yet reaped:
 *               its threads' last figures are still there to read.
 *   collect()   after the tree has ended (or been left running), in order:
 *               each adds what it measured to the run. The eBPF probe folds
 *               the threads; later probes attach to them by identity.
 * And once per session, before the first command is released:
 *   seal()      tsarun is about to confine itself (sandbox.h): load now
 *               whatever a later run might need that the filter refuses
 *               (BPF programs, new kinds of sockets). An error makes the
 *               source unavailable from then on.
 * Every callback is optional and returns 0 or -errno.
 */
#ifndef TSARUN_PROBE_H
#define TSARUN_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct run;
struct spawn;

/* The most probes a session has (a probe set's size, the supervisor's per-probe slots). */
#define PROBE_MAX 8

struct probe {
	const char *name;
	void *ctx;
	bool armed; /* set by the supervisor when arm() succeeded */
	char reason[192];
	int (*arm)(struct probe *p, const struct spawn *child, struct run *r);
	int (*fd)(struct probe *p);
	int (*on_ready)(struct probe *p);
	uint64_t tick_ns;
	int (*on_tick)(struct probe *p, uint64_t now_ns);
	int (*out_fd)(struct probe *p);
	bool (*out_pending)(struct probe *p);
	int (*on_writable)(struct probe *p);
	int (*on_exit)(struct probe *p);
	int (*collect)(struct probe *p, struct run *r);
	int (*seal)(struct probe *p);
	/* The command's barrier is about to open, at release_ns (CLOCK_MONOTONIC). */
	void (*on_release)(struct probe *p, uint64_t release_ns);
};

#endif /* TSARUN_PROBE_H */
