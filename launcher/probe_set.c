// SPDX-License-Identifier: MIT
#include <errno.h>
#include <linux/perf_event.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe_bash.h"
#include "delayacct.h"
#include "outputs.h"
#include "probe_perf.h"
#include "probe_set.h"
#include "probe_procfs.h"
#include "run.h"
#include "probe_sched.h"
#include "probe_stacks.h"
#include "probe_stream.h"
#include "termwrap.h"
#include "probe_taskstats.h"

void probeset__unavailable(struct probeset *ps, const char *name, const char *reason, int verbose)
{
	if (ps->nunavailable == PROBESET_MAX)
		return;
	ps->unavailable[ps->nunavailable].name = name;
	snprintf(ps->unavailable[ps->nunavailable].reason, sizeof(ps->unavailable[0].reason), "%s",
		 reason);
	ps->nunavailable++;
	if (verbose)
		fprintf(stderr, "tsarun: %s unavailable: %s\n", name, reason);
}

/* Could eBPF work here: root or CAP_BPF (or CAP_SYS_ADMIN), and the kernel's BTF? */
static bool ebpf_expected(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2] = {0};
	bool capable;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return false;
	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
	/* CAP_BPF is 39, CAP_SYS_ADMIN 21. */
	capable = (data[1].effective & (1u << (39 - 32))) || (data[0].effective & (1u << 21));
	return capable || geteuid() == 0;
}

/*
 * eBPF did not load: where it was expected, that is a failure to say out
 * loud (the report leads with it, the artifact keeps it), with -v the
 * refused program's verifier log. Elsewhere the reason is enough.
 */
static void ebpf_failure(struct probeset *ps, int verbose)
{
	const struct sched_load_failure *f = sched_probe_failure();
	const char *log = sched_probe_verifier_log();

	if (!f || !ebpf_expected())
		return;
	ps->ebpf_failed = true;
	ps->ebpf_failed_map = f->is_map;
	snprintf(ps->ebpf_object, sizeof(ps->ebpf_object), "%s", f->object);
	snprintf(ps->ebpf_message, sizeof(ps->ebpf_message), "%s", f->message);
	if (verbose && log)
		fprintf(stderr, "tsarun: ebpf: the kernel's verifier log of %s:\n%s",
			f->object[0] ? f->object : "the refused program", log);
	else if (verbose && !log)
		fprintf(stderr,
			"tsarun: ebpf: no verifier log (the kernel refused %s %s before "
			"verifying it)\n",
			f->is_map ? "the map" : "the program", f->object);
}

struct probeset *probeset__new(const struct probeset_opts *o)
{
	struct sched_probe_opts spo = {
	    .ringbuf_bytes = o->ringbuf_bytes,
	    .stacks = o->stacks,
	    .offcpu_min_ns = o->offcpu_min_ns,
	    .waker = o->waker,
	    /* --interval reads the live threads at every tick: no load at the first one. */
	    .survivors_now = !o->no_sandbox || o->interval,
	    .timeline_bytes = o->timeline ? o->timeline_bytes : 0,
	    .timeline_max = o->timeline_max,
	    .width = outputs_stderr_width(o->wide),
	};
	struct probeset *ps = calloc(1, sizeof(*ps));
	char err[192];

	if (!ps)
		return NULL;
	if (o->backends && !(o->backends & BACKEND_EBPF)) {
		probeset__unavailable(ps, "ebpf", "not selected (--backend)", o->verbose);
	} else {
		ps->sched = sched_probe__new(&spo, err, sizeof(err));
		if (ps->sched && o->verbose)
			fprintf(stderr, "tsarun: ebpf: %s\n", sched_probe__variant(ps->sched));
		if (ps->sched) {
			sched_probe__as_probe(ps->sched, &ps->probes[ps->nprobes++]);
		} else {
			probeset__unavailable(ps, "ebpf", err, o->verbose);
			snprintf(ps->ebpf_reason, sizeof(ps->ebpf_reason), "%s", err);
			ebpf_failure(ps, o->verbose);
		}
	}
	ps->perf = perf_probe__new(&(struct perf_probe_opts){.type = PERF_TYPE_HARDWARE,
							     .config = PERF_COUNT_HW_INSTRUCTIONS,
							     .exclude_kernel = true},
				   err, sizeof(err));
	if (ps->perf)
		perf_probe__as_probe(ps->perf, &ps->probes[ps->nprobes++]);
	else
		probeset__unavailable(ps, "perf", err, o->verbose);
	if (o->stacks && ps->sched) {
		/* After the scheduler probe: it folds the threads the stacks belong to. */
		struct stacks_probe_opts so = {.offcpu_min_ns = o->offcpu_min_ns,
					       .waker = o->waker,
					       .flame = o->flame,
					       .freq = o->freq};

		ps->stacks = stacks_probe__new(&so, ps->sched, err, sizeof(err));
		if (ps->stacks)
			stacks_probe__as_probe(ps->stacks, &ps->probes[ps->nprobes++]);
		else
			probeset__unavailable(ps, "stacks", err, o->verbose);
	} else if (o->stacks) {
		probeset__unavailable(ps, "stacks", "needs the eBPF scheduler probe", o->verbose);
	}
	if (o->timeline && !ps->sched)
		probeset__unavailable(ps, "timeline", "needs the eBPF scheduler probe", o->verbose);
	/*
	 * procfs after eBPF (whose threads it cross-checks) and before
	 * taskstats (which attaches to its threads). Under auto it is not
	 * sampled when eBPF works: eBPF reads the same kernel counters at each
	 * thread's first and last event, and times every state from events,
	 * so samples would cost CPU and add nothing.
	 */
	if ((o->backends & BACKEND_PROC) || (!o->backends && !ps->sched)) {
		ps->proc = proc_probe__new(o->sample_ns, err, sizeof(err));
		if (ps->proc)
			proc_probe__as_probe(ps->proc, &ps->probes[ps->nprobes++]);
		else
			probeset__unavailable(ps, "procfs", err, o->verbose);
	} else {
		probeset__unavailable(ps, "procfs",
				      o->backends
					  ? "not selected (--backend)"
					  : "not used: eBPF times every state from events (add "
					    "it with --backend ebpf,proc, as a cross-check)",
				      o->verbose > 1);
		/* A --sample asked for and not applied is not left unsaid. */
		if (o->sample_given && !o->backends && !o->quiet && o->verbose <= 1)
			fprintf(stderr,
				"tsarun: --sample: procfs is not sampled while eBPF works; add "
				"--backend ebpf,proc to sample it beside eBPF\n");
	}
	if (o->backends && !(o->backends & BACKEND_TASKSTATS)) {
		probeset__unavailable(ps, "taskstats", "not selected (--backend)", o->verbose);
	} else {
		ps->ts = ts_probe__new(err, sizeof(err));
		if (ps->ts)
			ts_probe__as_probe(ps->ts, &ps->probes[ps->nprobes++]);
		else
			probeset__unavailable(ps, "taskstats", err, o->verbose);
	}
	/* Without eBPF, a thread that lived between two samples is known by its exit record. */
	if (ps->ts && !ps->sched)
		ts_probe__set_create_missing(ps->ts, true);
	/*
	 * Before any command is forked (a task gets its delay record when it
	 * is created), and only when taskstats can read the counters.
	 */
	ps->delayacct = calloc(1, sizeof(*ps->delayacct));
	if (ps->delayacct) {
		size_t width = outputs_stderr_width(o->wide);
		char stale[256];

		delayacct__acquire(ps->delayacct, ps->ts && !o->no_delayacct, NULL);
		if (ps->delayacct->repaired[0])
			termwrap_printf(stderr, width, "tsarun: %s\n", ps->delayacct->repaired);
		else if (delayacct_stale(NULL, stale, sizeof(stale)))
			termwrap_printf(stderr, width, "tsarun: warning: %s\n", stale);
		if (o->verbose && ps->delayacct->switched_on)
			termwrap_printf(
			    stderr, width,
			    "tsarun: kernel.task_delayacct on for the session (was %d)\n",
			    ps->delayacct->before);
		if (ps->ts) {
			bool on = ps->delayacct->switched_on || ps->delayacct->before == 1;

			ts_probe__set_live(ps->ts, on, ps->delayacct->before == 1);
		}
	}
	/* Loading parsed the kernel's BTF (megabytes, now freed): give the memory back. */
	malloc_trim(0);
	/*
	 * Freeing that memory raised glibc's dynamic mmap threshold, so the
	 * arrays that grow with the number of threads (accounts, records)
	 * would live in the heap, where realloc copies them and the old copies
	 * stay resident. A fixed threshold keeps them in mappings that
	 * realloc moves without copying.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	return ps;
}

int probeset__check_forced(const struct probeset *ps, const struct probeset_opts *o, char *err,
			   size_t errlen)
{
	static const struct {
		unsigned bit;
		const char *name;
	} forced[] = {
	    {BACKEND_EBPF, "ebpf"}, {BACKEND_TASKSTATS, "taskstats"}, {BACKEND_PROC, "procfs"}};

	/*
	 * Options whose figures only eBPF gives: without it they would give
	 * nothing, and a run that succeeds with nothing is a wrong answer.
	 */
	if ((o->stacks || o->timeline) && !ps->sched) {
		snprintf(err, errlen,
			 "%s needs eBPF, which is not available here: %s (see tsarun doctor)",
			 o->timeline && !o->stacks		     ? "--timeline"
			 : o->flame				     ? "--flame"
			 : o->waker				     ? "--waker"
			 : o->offcpu_min_ns != OFFCPU_MIN_DEFAULT_NS ? "--offcpu-min"
								     : "--stacks",
			 ps->ebpf_reason[0] ? ps->ebpf_reason : "not selected (--backend)");
		return -ENODEV;
	}
	if (o->stacks && !ps->stacks) {
		for (int j = 0; j < ps->nunavailable; j++)
			if (!strcmp(ps->unavailable[j].name, "stacks")) {
				snprintf(err, errlen, "%s: the stacks probe is not available: %s",
					 o->flame ? "--flame" : "--stacks",
					 ps->unavailable[j].reason);
				return -ENODEV;
			}
	}
	for (size_t i = 0; i < sizeof(forced) / sizeof(forced[0]); i++) {
		if (!(o->backends & forced[i].bit))
			continue;
		for (int j = 0; j < ps->nunavailable; j++)
			if (!strcmp(ps->unavailable[j].name, forced[i].name)) {
				snprintf(err, errlen,
					 "--backend: the %s source is not available: %s (try "
					 "--backend auto, or see tsarun doctor)",
					 forced[i].name, ps->unavailable[j].reason);
				return -ENODEV;
			}
	}
	return 0;
}

void probeset__add_bash(struct probeset *ps, struct bash_probe *b)
{
	if (ps->nprobes < PROBESET_MAX)
		bash_probe__as_probe(b, &ps->probes[ps->nprobes++]);
}

int probeset__add_stream(struct probeset *ps, struct stream_probe *sp)
{
	if (ps->nprobes == PROBESET_MAX) {
		stream_probe__free(sp);
		return -ENOSPC;
	}
	ps->stream = sp;
	stream_probe__as_probe(sp, &ps->probes[ps->nprobes++]);
	return 0;
}

void probeset__free(struct probeset *ps)
{
	if (!ps)
		return;
	stream_probe__free(ps->stream);
	stacks_probe__free(ps->stacks);
	sched_probe__free(ps->sched);
	perf_probe__free(ps->perf);
	ts_probe__free(ps->ts);
	proc_probe__free(ps->proc);
	delayacct__release(ps->delayacct);
	free(ps->delayacct);
	free(ps);
}

void probeset__describe(const struct probeset *ps, struct run *r)
{
	for (int i = 0; i < ps->nunavailable; i++)
		run__source(r, ps->unavailable[i].name, false, ps->unavailable[i].reason);
	if (ps->ebpf_failed) {
		r->quality.ebpf_load.failed = true;
		r->quality.ebpf_load.is_map = ps->ebpf_failed_map;
		snprintf(r->quality.ebpf_load.object, sizeof(r->quality.ebpf_load.object), "%s",
			 ps->ebpf_object);
		snprintf(r->quality.ebpf_load.message, sizeof(r->quality.ebpf_load.message), "%s",
			 ps->ebpf_message);
	}
	run__source(r, "rusage", true, NULL);
}

void probeset__conclude(const struct probeset *ps, struct run *r)
{
	struct delayacct_quality *d = &r->quality.delayacct;
	const struct delayacct_hold *h = ps->delayacct;

	if (!h)
		return;
	d->known = true;
	d->before = h->before;
	d->during = delayacct_read();
	d->switched_on = h->switched_on;
	d->non_cpu_live = d->during == 1 && (h->switched_on || h->before == 1);
	if (d->non_cpu_live)
		return;
	if (d->during == 0 && (h->switched_on || h->before == 1))
		snprintf(d->reason, sizeof(d->reason),
			 "kernel.task_delayacct was switched off during the run");
	else if (h->reason[0])
		snprintf(d->reason, sizeof(d->reason), "%s", h->reason);
	else if (h->at_start == 1 && !h->switched_on)
		/* Another tsarun held it on: it could have switched it off and on again meanwhile. */
		snprintf(d->reason, sizeof(d->reason),
			 "kernel.task_delayacct was on only while another tsarun held it "
			 "(--no-delayacct): it may have been off for part of the run");
	else if (!ps->ts)
		snprintf(d->reason, sizeof(d->reason), "taskstats is not available");
	else
		snprintf(d->reason, sizeof(d->reason), "kernel.task_delayacct was off for the run");
}
