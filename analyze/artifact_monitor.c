// SPDX-License-Identifier: MIT
/*
 * Monitor mode's JSON Lines (see monitor.h): one object per report, on one
 * line, integers written exactly, through lib/jsonw (strings as every JSON
 * writer of tsarun's escapes them). The format is
 * doc/tsarun-monitor.schema.json.
 */
#include <stdio.h>
#include <stdlib.h>

#include "artifact_fields.h"
#include "artifact_json.h"
#include "jsonw.h"
#include "monitor.h"
#include "run.h"

static void thread_json(struct jsonw *w, const struct thread_acct *t, uint64_t span)
{
	const struct thread_sampled *s = &t->sampled;

	jsonw__obj_open(w);
	jsonw__uint_field(w, "tid", t->tid);
	jsonw__str_field(w, "comm", t->comm);
	jsonw__bool_field(w, "first_state_known", t->first_state_known);
	jsonw__bool_field(w, "alive", (t->flags & TSA_F_SURVIVOR) != 0);
	jsonw__str_field(w, "accounting_source", "procfs");
	jsonw__int_field(w, "start_ns", t->start_ns);
	jsonw__int_field(w, "end_ns", t->end_ns);
	jsonw__uint_field(w, "lifetime_ns", t->lifetime_ns);
	/* Sampled, every state is split: none is null here. */
	for (size_t i = 0; i < artifact_nstate_fields; i++)
		jsonw__uint_field(w, artifact_state_fields[i].name,
				  t->state_ns[artifact_state_fields[i].state]);
	jsonw__uint_field(w, "residual_ns", t->residual_ns);
	jsonw__uint_field(w, "slices", t->slices);
	jsonw__key(w, "on_cpu_percent");
	jsonw__fixed(w, span ? 100.0 * (double)t->state_ns[TSA_ST_ONCPU] / (double)span : 0.0, 3);
	jsonw__uint_field(w, "samples", s->samples);
	jsonw__uint_field(w, "unobserved_max_ns", s->unobserved_max_ns);
	artifact_sampled_states_json(w, s);
	jsonw__key(w, "delays");
	artifact_delays_json(w, t, false);
	jsonw__obj_close(w);
}

char *monitor_json_line(const struct monitor_report *m)
{
	struct jsonw *w = jsonw__new(NULL, JSONW_NEWLINE);
	uint64_t span = m->end_ns > m->start_ns ? (uint64_t)(m->end_ns - m->start_ns) : 0;
	char *line;

	if (!w)
		return NULL;
	jsonw__obj_open(w);
	jsonw__str_field(w, "schema", "tsarun-monitor/1");
	jsonw__str_field(w, "type", m->final ? "final" : "interval");
	jsonw__uint_field(w, "pid", m->pid);
	jsonw__str_field(w, "comm", m->comm);
	jsonw__uint_field(w, "index", m->index);
	jsonw__int_field(w, "start_ns", m->start_ns);
	jsonw__int_field(w, "end_ns", m->end_ns);
	jsonw__uint_field(w, "interval_ns", span);
	jsonw__uint_field(w, "sample_interval_ns", m->sample_ns);
	jsonw__uint_field(w, "samples", m->samples);
	jsonw__uint_field(w, "max_gap_ns", m->max_gap_ns);
	jsonw__bool_field(w, "process_exited", m->exited);
	artifact_sources_json(w, m->sources, m->nsources);
	jsonw__uint_field(w, "threads_total", m->nthreads);
	jsonw__key(w, "threads");
	jsonw__arr_open(w);
	for (size_t k = 0; k < m->nshown; k++)
		thread_json(w, &m->threads[m->shown[k]], span);
	jsonw__arr_close(w);
	jsonw__obj_close(w);
	/* One line: a string's newline is an escape, never a line break. */
	line = jsonw__finish(w) ? NULL : jsonw__take(w, NULL);
	jsonw__free(w);
	return line;
}
