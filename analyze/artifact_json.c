// SPDX-License-Identifier: MIT
/* What tsarun's JSON writers share (artifact_json.h). */
#include <stdint.h>

#include "artifact_fields.h"
#include "artifact_json.h"
#include "jsonw.h"
#include "run.h"

void artifact_sources_json(struct jsonw *w, const struct source_status *src, int n)
{
	jsonw__key(w, "sources_active");
	jsonw__arr_open(w);
	for (int i = 0; i < n; i++)
		if (src[i].active)
			jsonw__str(w, src[i].name);
	jsonw__arr_close(w);
	jsonw__key(w, "sources_unavailable");
	jsonw__arr_open(w);
	for (int i = 0; i < n; i++) {
		if (src[i].active)
			continue;
		jsonw__obj_open(w);
		jsonw__str_field(w, "source", src[i].name);
		jsonw__str_field(w, "reason", src[i].reason);
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
}

void artifact_delays_json(struct jsonw *w, const struct thread_acct *t, bool full)
{
	bool refused = false;

	if (!t->have_delays) {
		jsonw__null(w);
		return;
	}
	jsonw__obj_open(w);
	for (int i = 0; i < DELAY_NR; i++) {
		const struct delay_counter *d = &t->delays[i];

		jsonw__key(w, delay_name(i));
		if (!d->available) {
			jsonw__null(w);
			continue;
		}
		jsonw__obj_open(w);
		jsonw__uint_field(w, "count", d->count);
		jsonw__uint_field(w, "total_ns", d->total_ns);
		if (full && d->have_extremes) {
			jsonw__uint_field(w, "max_ns", d->max_ns);
			jsonw__uint_field(w, "min_ns", d->min_ns);
		}
		if (full && d->dropped)
			jsonw__uint_field(w, "dropped", d->dropped);
		if (full && d->from_ebpf)
			jsonw__str_field(w, "measured_by", "ebpf");
		jsonw__obj_close(w);
	}
	for (int i = 0; i < DELAY_NR; i++)
		refused |= t->delays[i].refused;
	if (full && refused) {
		jsonw__key(w, "refused");
		jsonw__arr_open(w);
		for (int i = 0; i < DELAY_NR; i++)
			if (t->delays[i].refused)
				jsonw__str(w, delay_name(i));
		jsonw__arr_close(w);
	}
	jsonw__uint_field(w, "version", t->delays_version);
	if (full)
		jsonw__bool_field(w, "final", t->delays_final);
	jsonw__obj_close(w);
}

void artifact_sampled_states_json(struct jsonw *w, const struct thread_sampled *s)
{
	for (size_t i = 0; i < artifact_nsampled_fields; i++)
		jsonw__uint_field(
		    w, artifact_sampled_fields[i].name,
		    *(const uint64_t *)((const char *)s + artifact_sampled_fields[i].off));
	jsonw__key(w, "by_state_ns");
	jsonw__obj_open(w);
	for (int i = 0; i < 4; i++)
		jsonw__uint_field(w, artifact_sampled_states[i], s->by_state_ns[i]);
	jsonw__obj_close(w);
}

void artifact_host_json(struct jsonw *w, const struct host_info *h)
{
	jsonw__obj_open(w);
	jsonw__str_field(w, "kernel", h->kernel);
	jsonw__str_field(w, "arch", h->arch);
	jsonw__int_field(w, "cpus", h->cpus);
	jsonw__str_field(w, "cpu_model", h->cpu_model);
	jsonw__str_field(w, "virtualized", h->virtualized);
	jsonw__str_field(w, "container", h->container);
	jsonw__bool_field(w, "btf", h->btf);
	if (h->task_delayacct < 0)
		jsonw__null_field(w, "task_delayacct");
	else
		jsonw__bool_field(w, "task_delayacct", h->task_delayacct > 0);
	jsonw__bool_field(w, "pmu", h->pmu);
	if (!h->pmu)
		jsonw__str_field(w, "pmu_reason", h->pmu_reason);
	jsonw__str_field(w, "ci", h->ci);
	jsonw__obj_close(w);
}
