/* SPDX-License-Identifier: MIT */
/*
 * Chrome Trace Event JSON (the format Perfetto and chrome://tracing load)
 * of one run: a track per thread, grouped by process (pid, tid, names), its
 * whole life as a slice whose args are its closing account, and inside it
 * its state intervals when the run has a timeline (--timeline). Written with
 * stdio (no JSON library: only the artifact module includes cJSON).
 */
#ifndef TSARUN_TRACE_H
#define TSARUN_TRACE_H

#include <stdio.h>

struct run;

/* command names the trace. Returns 0 or -errno (-EIO: the write failed). */
int trace_write(FILE *f, const struct run *r, const char *command);

#endif /* TSARUN_TRACE_H */
