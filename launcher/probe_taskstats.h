/* SPDX-License-Identifier: MIT */
/*
 * The taskstats source: exit records for every thread of the tree, and a
 * query for each thread still alive at the end, attached to the run's
 * threads by identity (analyze/delays.h).
 *
 * The listener is registered when the probe is created, before any command
 * starts. It hears every exit on the machine; records are kept when their
 * process descends from the command (or from tsarun, which reaps the
 * command's orphans), which is decided from the record's tgid and parent
 * and, for a parent not seen before, a walk up /proc.
 */
#ifndef TSARUN_TSPROBE_H
#define TSARUN_TSPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct probe;
struct ts_probe;
struct ts_client;

/* The listener's receive buffer: room for a burst of thousands of exits. */
#define TS_PROBE_RCVBUF (8u << 20)

/* Open, register the listener. NULL with errno and a reason in err. */
struct ts_probe *ts_probe__new(char *err, size_t errlen);
void ts_probe__free(struct ts_probe *p);

/*
 * What is known about kernel.task_delayacct for the threads of the runs:
 * whether the non-CPU counters were live for threads started during a run,
 * and for threads that existed before tracking began.
 */
void ts_probe__set_live(struct ts_probe *p, bool live, bool live_preexisting);

/* Without a scheduler source, records become threads of their own. */
void ts_probe__set_create_missing(struct ts_probe *p, bool create);

/* The query side, for monitor mode. */
struct ts_client *ts_probe__client(struct ts_probe *p);

/*
 * Present the probe to the supervisor: arm starts a run's collection,
 * on_ready drains the listener, collect queries survivors and attaches.
 * Its collect must come after the sources that create threads.
 */
void ts_probe__as_probe(struct ts_probe *p, struct probe *out);

#endif /* TSARUN_TSPROBE_H */
