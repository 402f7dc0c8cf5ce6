// SPDX-License-Identifier: MIT
/*
 * --interval's JSON Lines (see stream.h): one object per interval, on one
 * line, integers written as raw text so that nanoseconds stay exact. The
 * format is doc/tsarun-stream.schema.json; its thread rows use the names of
 * monitor mode's (doc/tsarun-monitor.schema.json) and of the artifact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "artifact_json.h"
#include "run.h"
#include "stream.h"

/* Fields a source does not measure: null in every row, with the reason once per line. */
static const struct {
	uint32_t bit;
	const char *fields;
	const char *reason;
} unmeasured_reasons[] = {
    {ACCT_NO_STATES, "sleeping_ns,uninterruptible_ns,stopped_ns",
     "the source does not split off-CPU time by state: it is in residual_ns"},
    {ACCT_NO_SLICES, "slices", "the source does not count switch-ins"},
    {ACCT_NO_SWITCHES, "voluntary_switches,involuntary_switches",
     "only the eBPF source counts switches"},
    {ACCT_NO_WAKEUPS, "wakeups", "only the eBPF source counts wakeups"},
};

static void add_i64_or_null(cJSON *o, const char *name, int64_t v, bool null)
{
	if (null)
		cJSON_AddNullToObject(o, name);
	else
		add_i64(o, name, v);
}

static void figures_json(cJSON *o, const struct stream_figures *f, int64_t span)
{
	uint32_t um = f->unmeasured;
	bool nostates = um & ACCT_NO_STATES;
	char pct[32];

	add_i64(o, "lifetime_ns", f->lifetime_ns);
	add_i64(o, "on_cpu_ns", f->state_ns[TSA_ST_ONCPU]);
	add_i64(o, "runqueue_ns", f->state_ns[TSA_ST_RUNQ]);
	add_i64_or_null(o, "sleeping_ns", f->state_ns[TSA_ST_SLEEP], nostates);
	add_i64_or_null(o, "uninterruptible_ns", f->state_ns[TSA_ST_DISK], nostates);
	add_i64_or_null(o, "stopped_ns", f->state_ns[TSA_ST_STOPPED], nostates);
	add_i64(o, "residual_ns", f->residual_ns);
	add_i64_or_null(o, "slices", f->slices, um & ACCT_NO_SLICES);
	add_i64_or_null(o, "voluntary_switches", f->voluntary, um & ACCT_NO_SWITCHES);
	add_i64_or_null(o, "involuntary_switches", f->involuntary, um & ACCT_NO_SWITCHES);
	add_i64_or_null(o, "wakeups", f->wakeups, um & ACCT_NO_WAKEUPS);
	snprintf(pct, sizeof(pct), "%.3f",
		 span > 0 ? 100.0 * (double)f->state_ns[TSA_ST_ONCPU] / (double)span : 0.0);
	cJSON_AddRawToObject(o, "on_cpu_percent", pct);
}

static cJSON *thread_json(const struct stream_thread *t, int64_t span)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "tid", t->tid);
	cJSON_AddNumberToObject(o, "pid", t->pid);
	cJSON_AddStringToObject(o, "comm", t->comm);
	cJSON_AddBoolToObject(o, "alive", t->alive);
	cJSON_AddBoolToObject(o, "born", t->born);
	add_i64(o, "start_ns", t->start_ns);
	add_i64_or_null(o, "end_ns", t->end_ns, t->alive);
	figures_json(o, &t->f, span);
	return o;
}

static cJSON *proc_json(const struct stream_proc *p, int64_t span)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "pid", p->pid);
	cJSON_AddStringToObject(o, "comm", p->comm);
	cJSON_AddNumberToObject(o, "threads", p->threads);
	figures_json(o, &p->f, span);
	return o;
}

char *stream_json_line(const struct stream_interval *iv)
{
	cJSON *o = cJSON_CreateObject(), *act, *un, *um, *a;
	int64_t span = iv->end_ns - iv->start_ns;
	char *line, *nl;
	size_t len;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "schema", "tsarun-stream/1");
	cJSON_AddStringToObject(o, "type", "interval");
	cJSON_AddNumberToObject(o, "run", iv->run);
	cJSON_AddBoolToObject(o, "warmup", iv->warmup);
	add_u64(o, "index", iv->index);
	cJSON_AddBoolToObject(o, "last", iv->last);
	add_i64(o, "start_ns", iv->start_ns);
	add_i64(o, "end_ns", iv->end_ns);
	add_i64(o, "interval_ns", span);
	cJSON_AddNumberToObject(o, "pid", iv->root_pid);
	if (iv->source)
		cJSON_AddStringToObject(o, "accounting_source", iv->source);
	else
		cJSON_AddNullToObject(o, "accounting_source");
	act = cJSON_AddArrayToObject(o, "sources_active");
	un = cJSON_AddArrayToObject(o, "sources_unavailable");
	for (int i = 0; i < iv->nsources; i++) {
		if (iv->sources[i].active) {
			cJSON_AddItemToArray(act, cJSON_CreateString(iv->sources[i].name));
		} else {
			cJSON *u = cJSON_CreateObject();

			cJSON_AddStringToObject(u, "source", iv->sources[i].name);
			cJSON_AddStringToObject(u, "reason", iv->sources[i].reason);
			cJSON_AddItemToArray(un, u);
		}
	}
	if (!iv->source) {
		/* No source sees live threads: nothing to say, and not 0 either. */
		cJSON_AddStringToObject(
		    o, "reason", iv->no_threads_reason ? iv->no_threads_reason : "no source");
		cJSON_AddNullToObject(o, "unmeasured");
		cJSON_AddNullToObject(o, "totals");
		cJSON_AddNullToObject(o, "processes");
		cJSON_AddNullToObject(o, "threads");
		goto out;
	}
	um = cJSON_AddArrayToObject(o, "unmeasured");
	for (size_t i = 0; i < sizeof(unmeasured_reasons) / sizeof(unmeasured_reasons[0]); i++) {
		if (!(iv->totals.unmeasured & unmeasured_reasons[i].bit))
			continue;
		cJSON *u = cJSON_CreateObject();

		cJSON_AddStringToObject(u, "fields", unmeasured_reasons[i].fields);
		cJSON_AddStringToObject(u, "reason", unmeasured_reasons[i].reason);
		cJSON_AddItemToArray(um, u);
	}
	a = cJSON_AddObjectToObject(o, "totals");
	cJSON_AddNumberToObject(a, "processes", (double)iv->nprocs);
	cJSON_AddNumberToObject(a, "threads", (double)iv->nthreads);
	cJSON_AddNumberToObject(a, "threads_born", iv->threads_born);
	cJSON_AddNumberToObject(a, "threads_ended", iv->threads_ended);
	figures_json(a, &iv->totals, span);
	a = cJSON_AddArrayToObject(o, "processes");
	for (size_t i = 0; i < iv->nprocs; i++)
		cJSON_AddItemToArray(a, proc_json(&iv->procs[i], span));
	a = cJSON_AddArrayToObject(o, "threads");
	for (size_t i = 0; i < iv->nthreads; i++)
		cJSON_AddItemToArray(a, thread_json(&iv->threads[i], span));
out:
	line = cJSON_PrintUnformatted(o);
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
