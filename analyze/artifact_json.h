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

/* The cJSON writers' own (artifact.c, artifact_timeline.c), until they move to jsonw. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "artifact_fields.h"
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

	for (size_t i = 0; i < artifact_nsampled_fields; i++)
		add_u64(o, artifact_sampled_fields[i].name,
			*(const uint64_t *)((const char *)s + artifact_sampled_fields[i].off));
	by = cJSON_AddObjectToObject(o, "by_state_ns");
	for (int i = 0; i < 4; i++)
		add_u64(by, artifact_sampled_states[i], s->by_state_ns[i]);
}

#endif /* TSARUN_ARTIFACT_JSON_H */
