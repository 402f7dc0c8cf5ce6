/* SPDX-License-Identifier: MIT */
/*
 * What the artifact writers (artifact.c, artifact_monitor.c) share: the
 * only files that include cJSON. Nanosecond counts and sums can pass 2^53,
 * where a JSON number read as a double stops being exact, so integers are
 * written as raw text.
 */
#ifndef TSARUN_ARTIFACT_JSON_H
#define TSARUN_ARTIFACT_JSON_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "run.h"

static inline void add_u64(cJSON *o, const char *name, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	cJSON_AddRawToObject(o, name, buf);
}

static inline void add_i64(cJSON *o, const char *name, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	cJSON_AddRawToObject(o, name, buf);
}

/* What sampling saw of a thread's states: gaps, transitions, time by state. */
static inline void add_sampled_states(cJSON *o, const struct thread_sampled *s)
{
	cJSON *by;

	add_u64(o, "max_gap_ns", s->max_gap_ns);
	add_u64(o, "transitions", s->transitions);
	add_u64(o, "transition_uncertainty_ns", s->uncertainty_ns);
	by = cJSON_AddObjectToObject(o, "by_state_ns");
	add_u64(by, "running", s->by_state_ns[0]);
	add_u64(by, "sleeping", s->by_state_ns[1]);
	add_u64(by, "uninterruptible", s->by_state_ns[2]);
	add_u64(by, "stopped", s->by_state_ns[3]);
}

#endif /* TSARUN_ARTIFACT_JSON_H */
