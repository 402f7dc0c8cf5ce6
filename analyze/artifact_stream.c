// SPDX-License-Identifier: MIT
/*
 * --interval's JSON Lines (see stream.h): one object per interval, on one
 * line, integers written exactly (nanoseconds never pass through a double). The
 * format is doc/tsarun-stream.schema.json; its thread rows use the names of
 * monitor mode's (doc/tsarun-monitor.schema.json) and of the artifact.
 */
#include <stdbool.h>
#include <stdint.h>

#include "artifact_json.h"
#include "jsonw.h"
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

/*
 * The line is written by lib/jsonw into memory: a tree of cJSON objects per
 * thread, and printf for each number, made a line of 200 threads cost
 * tsarun 2.7 ms at every tick. Strings are escaped as the artifact's other
 * writers escape them (textsafe_json: valid UTF-8 whatever the command's
 * bytes).
 */
static void kv_i64_or_null(struct jsonw *w, const char *name, int64_t v, bool null)
{
	jsonw__key(w, name);
	if (null)
		jsonw__null(w);
	else
		jsonw__int(w, v);
}

/* A percentage with three decimals, rounded half up, from integers (span > 0). */
static void kv_percent(struct jsonw *w, const char *name, int64_t part, int64_t span)
{
	unsigned __int128 m;
	bool neg = part < 0;
	uint64_t a = neg ? -(uint64_t)part : (uint64_t)part, whole;
	char b[32], *e = b + sizeof(b), *q = e;

	jsonw__key(w, name);
	if (span <= 0) {
		jsonw__raw(w, "0.000", 5);
		return;
	}
	m = ((unsigned __int128)a * 200000 + (uint64_t)span) / (2 * (uint64_t)span);
	whole = (uint64_t)(m / 1000);
	for (uint64_t r = (uint64_t)(m % 1000), k = 0; k < 3; k++, r /= 10)
		*--q = (char)('0' + r % 10);
	*--q = '.';
	do
		*--q = (char)('0' + whole % 10);
	while (whole /= 10);
	if (neg && m)
		*--q = '-';
	jsonw__raw(w, q, (size_t)(e - q));
}

static void figures(struct jsonw *w, const struct stream_figures *f, int64_t span)
{
	uint32_t um = f->unmeasured;
	bool nostates = um & ACCT_NO_STATES;

	jsonw__int_field(w, "lifetime_ns", f->lifetime_ns);
	jsonw__int_field(w, "on_cpu_ns", f->state_ns[TSA_ST_ONCPU]);
	jsonw__int_field(w, "runqueue_ns", f->state_ns[TSA_ST_RUNQ]);
	kv_i64_or_null(w, "sleeping_ns", f->state_ns[TSA_ST_SLEEP], nostates);
	kv_i64_or_null(w, "uninterruptible_ns", f->state_ns[TSA_ST_DISK], nostates);
	kv_i64_or_null(w, "stopped_ns", f->state_ns[TSA_ST_STOPPED], nostates);
	jsonw__int_field(w, "residual_ns", f->residual_ns);
	kv_i64_or_null(w, "slices", f->slices, um & ACCT_NO_SLICES);
	kv_i64_or_null(w, "voluntary_switches", f->voluntary, um & ACCT_NO_SWITCHES);
	kv_i64_or_null(w, "involuntary_switches", f->involuntary, um & ACCT_NO_SWITCHES);
	kv_i64_or_null(w, "wakeups", f->wakeups, um & ACCT_NO_WAKEUPS);
	kv_percent(w, "on_cpu_percent", f->state_ns[TSA_ST_ONCPU], span);
}

char *stream_json_line(const struct stream_interval *iv)
{
	int64_t span = iv->end_ns - iv->start_ns;
	struct jsonw *w = jsonw__new(NULL, JSONW_NEWLINE);
	char *line;

	if (!w)
		return NULL;
	jsonw__obj_open(w);
	jsonw__str_field(w, "schema", "tsarun-stream/1");
	jsonw__str_field(w, "type", "interval");
	jsonw__int_field(w, "run", iv->run);
	jsonw__bool_field(w, "warmup", iv->warmup);
	jsonw__uint_field(w, "index", iv->index);
	jsonw__bool_field(w, "last", iv->last);
	jsonw__int_field(w, "start_ns", iv->start_ns);
	jsonw__int_field(w, "end_ns", iv->end_ns);
	jsonw__int_field(w, "interval_ns", span);
	jsonw__int_field(w, "pid", iv->root_pid);
	kv_i64_or_null(w, "lost_records", iv->lost_records, iv->lost_records < 0);
	jsonw__uint_field(w, "dropped_lines", iv->dropped_lines);
	jsonw__key(w, "accounting_source");
	if (iv->source)
		jsonw__str(w, iv->source);
	else
		jsonw__null(w);
	artifact_sources_json(w, iv->sources, iv->nsources);
	if (!iv->source) {
		/* No source sees live threads: nothing to say, and not 0 either. */
		jsonw__str_field(w, "reason",
				 iv->no_threads_reason ? iv->no_threads_reason : "no source");
		jsonw__null_field(w, "unmeasured");
		jsonw__null_field(w, "totals");
		jsonw__null_field(w, "processes");
		jsonw__null_field(w, "threads");
		goto out;
	}
	jsonw__key(w, "unmeasured");
	jsonw__arr_open(w);
	for (size_t i = 0; i < sizeof(unmeasured_reasons) / sizeof(unmeasured_reasons[0]); i++) {
		if (!(iv->totals.unmeasured & unmeasured_reasons[i].bit))
			continue;
		jsonw__obj_open(w);
		jsonw__str_field(w, "fields", unmeasured_reasons[i].fields);
		jsonw__str_field(w, "reason", unmeasured_reasons[i].reason);
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
	jsonw__key(w, "totals");
	jsonw__obj_open(w);
	jsonw__uint_field(w, "processes", iv->nprocs);
	jsonw__uint_field(w, "threads", iv->nthreads);
	jsonw__int_field(w, "threads_born", iv->threads_born);
	jsonw__int_field(w, "threads_ended", iv->threads_ended);
	figures(w, &iv->totals, span);
	jsonw__obj_close(w);
	jsonw__key(w, "processes");
	jsonw__arr_open(w);
	for (size_t i = 0; i < iv->nprocs; i++) {
		const struct stream_proc *p = &iv->procs[i];

		jsonw__obj_open(w);
		jsonw__int_field(w, "pid", p->pid);
		jsonw__str_field(w, "comm", p->comm);
		jsonw__int_field(w, "threads", p->threads);
		figures(w, &p->f, span);
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
	jsonw__key(w, "threads");
	jsonw__arr_open(w);
	for (size_t i = 0; i < iv->nthreads; i++) {
		const struct stream_thread *t = &iv->threads[i];

		jsonw__obj_open(w);
		jsonw__int_field(w, "tid", t->tid);
		jsonw__int_field(w, "pid", t->pid);
		jsonw__str_field(w, "comm", t->comm);
		jsonw__bool_field(w, "alive", t->alive);
		jsonw__bool_field(w, "born", t->born);
		jsonw__int_field(w, "start_ns", t->start_ns);
		kv_i64_or_null(w, "end_ns", t->end_ns, t->alive);
		figures(w, &t->f, span);
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
out:
	jsonw__obj_close(w);
	line = jsonw__finish(w) ? NULL : jsonw__take(w, NULL);
	jsonw__free(w);
	return line;
}
