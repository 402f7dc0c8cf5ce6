/* SPDX-License-Identifier: MIT */
/*
 * What tsarun's JSON writers share, each written once through lib/jsonw:
 * the artifact (artifact.c, artifact_timeline.c), monitor mode's lines
 * (artifact_monitor.c), --interval's (artifact_stream.c) and doctor --json
 * (artifact.c). Each helper writes into the writer it is given, in that
 * writer's layout and string escaping; a key's value, or a run of members
 * inside an open object.
 * cJSON is the reader's only (artifact_read.c).
 */
#ifndef TSARUN_ARTIFACT_JSON_H
#define TSARUN_ARTIFACT_JSON_H

#include <stdbool.h>

struct host_info;
struct jsonw;
struct source_status;
struct thread_acct;
struct thread_sampled;

/*
 * Two members: "sources_active", the names of the sources that worked,
 * and "sources_unavailable", {"source", "reason"} for each that did not.
 */
void artifact_sources_json(struct jsonw *w, const struct source_status *src, int n);

/*
 * A thread's "delays" value: null without taskstats' figures, else one
 * member a delay kind (null where the kernel has none), each {"count",
 * "total_ns"}, and "version". The artifact's (full) also has each kind's
 * extremes, drops and measurer, the kinds refused, and "final"; monitor
 * lines have the counts only, as their schema says.
 */
void artifact_delays_json(struct jsonw *w, const struct thread_acct *t, bool full);

/* What sampling saw of a thread's states: its gap and transition members, then "by_state_ns". */
void artifact_sampled_states_json(struct jsonw *w, const struct thread_sampled *s);

/* A "host" value: the machine a run, or doctor, ran on. */
void artifact_host_json(struct jsonw *w, const struct host_info *h);

#endif /* TSARUN_ARTIFACT_JSON_H */
