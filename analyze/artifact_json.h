/* SPDX-License-Identifier: MIT */
/*
 * What the artifact writers (artifact.c, artifact_monitor.c,
 * artifact_timeline.c) share: the only files that include cJSON, and
 * json_print(), through which each prints. Nanosecond counts and sums can
 * pass 2^53, where a JSON number read as a double stops being exact, so
 * integers are written as raw text.
 */
#ifndef TSARUN_ARTIFACT_JSON_H
#define TSARUN_ARTIFACT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "run.h"
#include "textsafe.h"

/*
 * item as JSON text, strict UTF-8 whatever bytes its strings hold: cJSON
 * copies ill-formed UTF-8 and DEL/C1 as they are, textsafe_json_doc
 * escapes them (U+FFFD for what is ill-formed). malloc'd (cJSON's
 * allocator is malloc: no hooks are set): free() it; NULL when out of
 * memory.
 */
static inline char *json_print(const cJSON *item, bool formatted)
{
	char *text = formatted ? cJSON_Print(item) : cJSON_PrintUnformatted(item), *safe;
	size_t len, need;

	if (!text)
		return NULL;
	len = strlen(text);
	need = textsafe_json_doc(NULL, 0, text, len);
	if (need == len)
		return text; /* every change lengthens it: none was needed */
	safe = malloc(need + 1);
	if (safe)
		textsafe_json_doc(safe, need + 1, text, len);
	free(text);
	return safe;
}

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
	add_u64(o, "untimed_ns", s->untimed_ns);
	by = cJSON_AddObjectToObject(o, "by_state_ns");
	add_u64(by, "running", s->by_state_ns[0]);
	add_u64(by, "sleeping", s->by_state_ns[1]);
	add_u64(by, "uninterruptible", s->by_state_ns[2]);
	add_u64(by, "stopped", s->by_state_ns[3]);
}

#endif /* TSARUN_ARTIFACT_JSON_H */
