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

#endif /* TSARUN_ARTIFACT_JSON_H */
