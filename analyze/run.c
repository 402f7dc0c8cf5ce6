// SPDX-License-Identifier: MIT
/* Small helpers of the data model. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bashprof.h"
#include "parts.h"
#include "run.h"
#include "critpath.h"
#include "stacks.h"
#include "timeline.h"

void run__free_detail(struct run *r)
{
	free(r->threads);
	free(r->procs);
	run_stacks__free(r->stacks);
	r->stacks = NULL;
	timeline__free(r->timeline);
	r->timeline = NULL;
	critpath__free(r->critpath);
	r->critpath = NULL;
	/* The bash profile is detail too: only the last run's is reported. */
	bashprof__free(r->bash);
	r->bash = NULL;
	free(r->stream.points);
	r->stream.points = NULL;
	r->stream.npoints = r->stream.points_cap = 0;
	r->threads = NULL;
	r->procs = NULL;
	r->nthreads = r->nprocs = 0;
	r->detailed = false;
}

void run__free(struct run *r)
{
	run__free_detail(r);
	run_parts__free(r->parts);
	r->parts = NULL;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nruns; i++) {
		run__free(&s->runs[i]);
		bashprof__free(s->runs[i].bash);
		s->runs[i].bash = NULL;
	}
	free(s->runs);
	s->runs = NULL;
	s->nruns = 0;
	for (size_t i = 0; i < s->nbase_runs; i++)
		run__free(&s->base_runs[i]);
	free(s->base_runs);
	s->base_runs = NULL;
	s->nbase_runs = 0;
	for (size_t i = 0; i < s->nowned_strings; i++)
		free(s->owned_strings[i]);
	free(s->owned_strings);
	s->owned_strings = NULL;
	s->nowned_strings = 0;
	free(s->owned_tool_version);
	s->owned_tool_version = NULL;
}

void run__source(struct run *r, const char *name, bool active, const char *reason)
{
	struct run_quality *q = &r->quality;
	struct source_status *s = NULL;

	for (int i = 0; i < q->nsources; i++)
		if (!strcmp(q->sources[i].name, name))
			s = &q->sources[i];
	if (!s) {
		if (q->nsources == RUN_MAX_SOURCES)
			return;
		s = &q->sources[q->nsources++];
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->active = active;
	snprintf(s->reason, sizeof(s->reason), "%s", active || !reason ? "" : reason);
}

void run__note(struct run *r, const char *fmt, ...)
{
	struct run_quality *q = &r->quality;
	va_list ap;

	if (q->nnotes >= (int)(sizeof(q->notes) / sizeof(q->notes[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(q->notes[q->nnotes++], sizeof(q->notes[0]), fmt, ap);
	va_end(ap);
}

const char *run_status_name(enum run_status s)
{
	switch (s) {
	case RUN_EXITED:
		return "exited";
	case RUN_SIGNALED:
		return "signaled";
	case RUN_INTERRUPTED:
		return "interrupted";
	case RUN_NOT_STARTED:
		return "not_started";
	}
	return "unknown";
}

const char *state_name(int st)
{
	static const char *const names[TSA_ST_NR] = {
	    [TSA_ST_ONCPU] = "on_cpu",	  [TSA_ST_RUNQ] = "runqueue",
	    [TSA_ST_SLEEP] = "sleeping",  [TSA_ST_DISK] = "uninterruptible",
	    [TSA_ST_STOPPED] = "stopped",
	};

	return st >= 0 && st < TSA_ST_NR ? names[st] : "unknown";
}

const char *delay_name(int d)
{
	static const char *const names[DELAY_NR] = {
	    [DELAY_CPU] = "cpu",
	    [DELAY_BLOCK_IO] = "block_io",
	    [DELAY_SWAP_IN] = "swap_in",
	    [DELAY_RECLAIM] = "reclaim",
	    [DELAY_THRASHING] = "thrashing",
	    [DELAY_COMPACTION] = "compaction",
	    [DELAY_WPCOPY] = "write_protect_copy",
	    [DELAY_IRQ] = "irq",
	};

	return d >= 0 && d < DELAY_NR ? names[d] : "unknown";
}

const char *session_command(const struct session *s)
{
	if (s->argc < 1)
		return "";
	if (!s->mode || strcmp(s->mode, "bash"))
		return s->argv[0];
	for (int i = 1; i < s->argc; i++) {
		const char *a = s->argv[i];

		if (!strcmp(a, "-c"))
			return i + 1 < s->argc ? s->argv[i + 1] : s->argv[0];
		if (!strcmp(a, "-o") || !strcmp(a, "+o") || !strcmp(a, "-O") || !strcmp(a, "+O"))
			i++; /* an option with its argument (#!/usr/bin/env -S bash -o pipefail) */
		else if (a[0] != '-' && a[0] != '+')
			return a;
	}
	return s->argv[0];
}

const char *run_shown_comm(const char *comm, uint32_t execs)
{
	return !execs && !strcmp(comm, RUN_SPAWNER_COMM) ? RUN_SPAWNER_SHOWN : comm;
}
