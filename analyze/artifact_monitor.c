// SPDX-License-Identifier: MIT
/*
 * Monitor mode's JSON Lines (see monitor.h): one object per report, on one
 * line, integers written as raw text so that nanoseconds stay exact.
 * The format is doc/tsarun-monitor.schema.json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "artifact_json.h"
#include "monitor.h"
#include "run.h"

static cJSON *delays_json(const struct thread_acct *t)
{
	cJSON *d;

	if (!t->have_delays)
		return cJSON_CreateNull();
	d = cJSON_CreateObject();
	for (int i = 0; i < DELAY_NR; i++) {
		cJSON *c;

		if (!t->delays[i].available) {
			cJSON_AddNullToObject(d, delay_name(i));
			continue;
		}
		c = cJSON_CreateObject();
		add_u64(c, "count", t->delays[i].count);
		add_u64(c, "total_ns", t->delays[i].total_ns);
		cJSON_AddItemToObject(d, delay_name(i), c);
	}
	cJSON_AddNumberToObject(d, "version", t->delays_version);
	return d;
}

static cJSON *thread_json(const struct thread_acct *t, uint64_t span)
{
	const struct thread_sampled *s = &t->sampled;
	cJSON *o = cJSON_CreateObject();
	char pct[32];

	cJSON_AddNumberToObject(o, "tid", t->tid);
	cJSON_AddStringToObject(o, "comm", t->comm);
	cJSON_AddBoolToObject(o, "first_state_known", t->first_state_known);
	cJSON_AddBoolToObject(o, "alive", (t->flags & TSA_F_SURVIVOR) != 0);
	cJSON_AddStringToObject(o, "accounting_source", "procfs");
	add_i64(o, "start_ns", t->start_ns);
	add_i64(o, "end_ns", t->end_ns);
	add_u64(o, "lifetime_ns", t->lifetime_ns);
	add_u64(o, "on_cpu_ns", t->state_ns[TSA_ST_ONCPU]);
	add_u64(o, "runqueue_ns", t->state_ns[TSA_ST_RUNQ]);
	add_u64(o, "sleeping_ns", t->state_ns[TSA_ST_SLEEP]);
	add_u64(o, "uninterruptible_ns", t->state_ns[TSA_ST_DISK]);
	add_u64(o, "stopped_ns", t->state_ns[TSA_ST_STOPPED]);
	add_u64(o, "residual_ns", t->residual_ns);
	add_u64(o, "slices", t->slices);
	snprintf(pct, sizeof(pct), "%.3f",
		 span ? 100.0 * (double)t->state_ns[TSA_ST_ONCPU] / (double)span : 0.0);
	cJSON_AddRawToObject(o, "on_cpu_percent", pct);
	add_u64(o, "samples", s->samples);
	add_u64(o, "unobserved_max_ns", s->unobserved_max_ns);
	add_sampled_states(o, s);
	cJSON_AddItemToObject(o, "delays", delays_json(t));
	return o;
}

char *monitor_json_line(const struct monitor_report *m)
{
	cJSON *o = cJSON_CreateObject(), *act, *un, *th;
	uint64_t span = m->end_ns > m->start_ns ? (uint64_t)(m->end_ns - m->start_ns) : 0;
	char *line, *nl;
	size_t len;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "schema", "tsarun-monitor/1");
	cJSON_AddStringToObject(o, "type", m->final ? "final" : "interval");
	cJSON_AddNumberToObject(o, "pid", m->pid);
	cJSON_AddStringToObject(o, "comm", m->comm);
	add_u64(o, "index", m->index);
	add_i64(o, "start_ns", m->start_ns);
	add_i64(o, "end_ns", m->end_ns);
	add_u64(o, "interval_ns", span);
	add_u64(o, "sample_interval_ns", m->sample_ns);
	add_u64(o, "samples", m->samples);
	add_u64(o, "max_gap_ns", m->max_gap_ns);
	cJSON_AddBoolToObject(o, "process_exited", m->exited);
	act = cJSON_AddArrayToObject(o, "sources_active");
	un = cJSON_AddArrayToObject(o, "sources_unavailable");
	for (int i = 0; i < m->nsources; i++) {
		if (m->sources[i].active) {
			cJSON_AddItemToArray(act, cJSON_CreateString(m->sources[i].name));
		} else {
			cJSON *u = cJSON_CreateObject();

			cJSON_AddStringToObject(u, "source", m->sources[i].name);
			cJSON_AddStringToObject(u, "reason", m->sources[i].reason);
			cJSON_AddItemToArray(un, u);
		}
	}
	add_u64(o, "threads_total", m->nthreads);
	th = cJSON_AddArrayToObject(o, "threads");
	for (size_t k = 0; k < m->nshown; k++)
		cJSON_AddItemToArray(th, thread_json(&m->threads[m->shown[k]], span));
	line = json_print(o, false);
	cJSON_Delete(o);
	if (!line)
		return NULL;
	/* cJSON escapes control characters in strings: no newline can be inside. */
	while ((nl = strchr(line, '\n')))
		*nl = ' ';
	len = strlen(line);
	nl = realloc(line, len + 2);
	if (!nl) {
		free(line);
		return NULL;
	}
	nl[len] = '\n';
	nl[len + 1] = '\0';
	return nl;
}
