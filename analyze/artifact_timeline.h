/* SPDX-License-Identifier: MIT */
/*
 * The artifact's runs[].timeline (--timeline), written and read back: the
 * part of the artifact module (artifact.c, artifact_read.c) that knows the
 * timeline's compact form. Internal to the module.
 *
 *   "timeline": {
 *     "kinds": ["on_cpu", ...],            a row's kind is an index into this
 *     "row": ["start_ns", "duration_ns", "kind", "cpu"],
 *     "intervals", "events_sent", "lost_events", "lost_ns", "max_intervals",
 *     "beyond_bound": {"intervals", "total_ns", "truncated_at_ns"},
 *     "unmatched_intervals", "buffer_bytes", "complete",
 *     "threads": [{"tid", "pid", "task_start_ns", "lost_events", "lost_ns",
 *                  "names": [[at_ns, execs, "comm"], ...],
 *                  "intervals": [[start_ns, duration_ns, kind, cpu|null], ...],
 *                  "wakes": [[at_ns, context, created, iowait, waker_tid, waker_pid,
 *                             waker_task_start_ns, cpu|null, "comm", "irq"|null], ...]}]
 *   }
 *   "critical_path": {"wall_ns", "edges", "complete", "unknown_ns", "kinds",
 *     "groups": [{"tid", "pid", "comm", "kind", "state", "what", "total_ns",
 *                 "share", "segments"}, ...],
 *     "segment_row": ["start_ns", "duration_ns", "group", "woke_tid"],
 *     "segments": [[start_ns, duration_ns, group, woke_tid|null], ...]}
 * The critical path is written, never read: a reader walks the timeline again.
 */
#ifndef TSARUN_ARTIFACT_TIMELINE_H
#define TSARUN_ARTIFACT_TIMELINE_H

#include <stddef.h>

struct cJSON;
struct jsonw;
struct run;
struct run_timeline;

/*
 * r's timeline object, a value written into w (r->timeline must be set);
 * the threads' rows one a line. w's errors are its own (jsonw.h).
 */
void artifact_timeline_json(struct jsonw *w, const struct run *r);

/* r's critical_path object, a value written into w (r->critpath must be set). */
void artifact_critpath_json(struct jsonw *w, const struct run *r);

/* quality.timeline, a value written into w: what was lost, and whether the timeline is complete. */
void artifact_timeline_quality_json(struct jsonw *w, const struct run_timeline *t);

/* Read runs[].timeline (o) back into r, whose threads are read already. 0 or -EINVAL (why). */
int artifact_read_timeline(const struct cJSON *o, struct run *r, char *why, size_t len);

#endif /* TSARUN_ARTIFACT_TIMELINE_H */
