/* SPDX-License-Identifier: MIT */
/*
 * What the artifact writers (artifact.c, artifact_timeline.c) share: the
 * only files that write through cJSON (the reader, artifact_read.c, reads
 * with it; monitor mode's and --interval's lines, the trace, the exports
 * and the HTML page's data are written through lib/jsonw), and
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
