// SPDX-License-Identifier: MIT
/*
 * Reading an artifact back: for a baseline, `tsarun compare` and `tsarun
 * report`. The file is untrusted input: every value is checked for type
 * and range before it is used, and every refusal names the file, the run
 * and the key.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "artifact.h"
#include "artifact_fields.h"
#include "explain.h"
#include "parts.h"
#include "gate.h"
#include "metrics.h"
#include "run.h"
#include "stacks.h"
#include "artifact_timeline.h"
#include "critpath.h"
#include "textsafe.h"

#define ARTIFACT_MAX_BYTES (1ull << 30)

struct rd {
	const struct artifact_read_opts *o;
	const char *name; /* the file */
	const char *what; /* "baseline", ... */
	char *err;
	size_t errlen;
	char where[48]; /* "run 3: " */
};

static int bad(struct rd *d, int ret, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(d->err, d->errlen, "%s '%s': %s%s", d->what, d->name, d->where, msg);
	return ret;
}

static const cJSON *item(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* A non-negative integer-valued number; absent or null gives `absent` (0) when allowed. */
static int get_u64(struct rd *d, const cJSON *o, const char *key, bool required, uint64_t *out)
{
	const cJSON *i = item(o, key);
	double v;

	*out = 0;
	if (!i || cJSON_IsNull(i)) {
		if (required)
			return bad(d, -EINVAL, "'%s' is missing", key);
		return 0;
	}
	if (!cJSON_IsNumber(i))
		return bad(d, -EINVAL, "'%s' is not a number", key);
	v = i->valuedouble;
	if (!isfinite(v) || v < 0 || v >= 1.8446744073709552e19 || v != floor(v))
		return bad(d, -EINVAL, "'%s' is not a non-negative integer", key);
	*out = (uint64_t)v;
	return 0;
}

static int get_int(struct rd *d, const cJSON *o, const char *key, bool required, long lo, long hi,
		   long *out)
{
	const cJSON *i = item(o, key);

	*out = 0;
	if (!i || cJSON_IsNull(i)) {
		if (required)
			return bad(d, -EINVAL, "'%s' is missing", key);
		return 0;
	}
	if (!cJSON_IsNumber(i) || i->valuedouble != floor(i->valuedouble) ||
	    i->valuedouble < (double)lo || i->valuedouble > (double)hi)
		return bad(d, -EINVAL, "'%s' is not an integer from %ld to %ld", key, lo, hi);
	*out = (long)i->valuedouble;
	return 0;
}

static double get_num(const cJSON *o, const char *key, double def)
{
	const cJSON *i = item(o, key);

	return cJSON_IsNumber(i) && isfinite(i->valuedouble) ? i->valuedouble : def;
}

/* The same within [lo, hi], def outside: for a value that is then cast to an integer. */
static double get_num_in(const cJSON *o, const char *key, double def, double lo, double hi)
{
	double v = get_num(o, key, def);

	return v >= lo && v <= hi ? v : def;
}

/* A signed integer (relative times); absent gives 0. */
static int get_i64(struct rd *d, const cJSON *o, const char *key, int64_t *out)
{
	const cJSON *i = item(o, key);

	*out = 0;
	if (!i || cJSON_IsNull(i))
		return 0;
	if (!cJSON_IsNumber(i) || i->valuedouble != floor(i->valuedouble) ||
	    fabs(i->valuedouble) > 9.2e18)
		return bad(d, -EINVAL, "'%s' is not an integer", key);
	*out = (int64_t)i->valuedouble;
	return 0;
}

static void get_str(const cJSON *o, const char *key, char *out, size_t len, const char *def)
{
	const cJSON *i = item(o, key);

	snprintf(out, len, "%s", cJSON_IsString(i) && i->valuestring ? i->valuestring : def);
}

static int read_host(struct rd *d, const cJSON *h, struct host_info *host)
{
	const cJSON *i;
	long cpus;
	int ret;

	if (!cJSON_IsObject(h))
		return bad(d, -EINVAL, "'host' is missing");
	get_str(h, "kernel", host->kernel, sizeof(host->kernel), "unknown");
	get_str(h, "arch", host->arch, sizeof(host->arch), "unknown");
	get_str(h, "cpu_model", host->cpu_model, sizeof(host->cpu_model), "unknown");
	get_str(h, "virtualized", host->virtualized, sizeof(host->virtualized), "unknown");
	get_str(h, "container", host->container, sizeof(host->container), "unknown");
	get_str(h, "ci", host->ci, sizeof(host->ci), "unknown");
	get_str(h, "pmu_reason", host->pmu_reason, sizeof(host->pmu_reason), "");
	ret = get_int(d, h, "cpus", true, 1, 1 << 20, &cpus);
	if (ret)
		return ret;
	host->cpus = (int)cpus;
	host->btf = cJSON_IsTrue(item(h, "btf"));
	host->pmu = cJSON_IsTrue(item(h, "pmu"));
	i = item(h, "task_delayacct");
	host->task_delayacct = cJSON_IsBool(i) ? cJSON_IsTrue(i) : -1;
	return 0;
}

static int read_status(struct rd *d, const cJSON *o, struct run *r)
{
	static const struct {
		const char *name;
		enum run_status st;
	} names[] = {
	    {"exited", RUN_EXITED},
	    {"signaled", RUN_SIGNALED},
	    {"interrupted", RUN_INTERRUPTED},
	    {"not_started", RUN_NOT_STARTED},
	};
	const cJSON *st = item(o, "status"), *ex = item(o, "exit");
	long code, sig;
	int ret;

	if (!cJSON_IsString(st))
		return bad(d, -EINVAL, "'status' is missing");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(st->valuestring, names[i].name)) {
			r->status = names[i].st;
			goto found;
		}
	return bad(d, -EINVAL,
		   "'status' '%.40s' is not exited, signaled, interrupted or not_started",
		   st->valuestring);
found:
	if (!cJSON_IsObject(ex))
		return bad(d, -EINVAL, "'exit' is missing");
	ret = get_int(d, ex, "code", false, 0, 255, &code);
	if (!ret)
		ret = get_int(d, ex, "signal", false, 0, 127, &sig);
	if (ret)
		return ret;
	r->exit_code = (int)code;
	r->term_signal = (int)sig;
	r->core_dumped = cJSON_IsTrue(item(ex, "core_dumped"));
	return 0;
}

static int read_sources(struct rd *d, const cJSON *q, struct run *r)
{
	const cJSON *a, *i;

	if (!cJSON_IsObject(q))
		return bad(d, -EINVAL, "'quality' is missing");
	a = item(q, "sources_active");
	cJSON_ArrayForEach(i, a)
	{
		if (cJSON_IsString(i))
			run__source(r, i->valuestring, true, NULL);
	}
	a = item(q, "sources_unavailable");
	cJSON_ArrayForEach(i, a)
	{
		const cJSON *n = item(i, "source"), *why = item(i, "reason");

		if (cJSON_IsString(n))
			run__source(r, n->valuestring, false,
				    cJSON_IsString(why) ? why->valuestring : "unavailable");
	}
	a = item(q, "ebpf_load_failure");
	if (cJSON_IsObject(a)) {
		const cJSON *ob = item(a, "object"), *k = item(a, "kind"), *m = item(a, "message");

		r->quality.ebpf_load.failed = true;
		r->quality.ebpf_load.is_map = cJSON_IsString(k) && !strcmp(k->valuestring, "map");
		snprintf(r->quality.ebpf_load.object, sizeof(r->quality.ebpf_load.object), "%s",
			 cJSON_IsString(ob) ? ob->valuestring : "");
		snprintf(r->quality.ebpf_load.message, sizeof(r->quality.ebpf_load.message), "%s",
			 cJSON_IsString(m) ? m->valuestring : "");
	}
	return 0;
}

/* S, D and stopped are null where a source did not split the off-CPU time (*unmeasured). */
static int read_states(struct rd *d, const cJSON *o, uint64_t *st, uint64_t *residual,
		       uint32_t *unmeasured)
{
	int ret = 0;

	for (size_t i = 0; i < artifact_nstate_fields && !ret; i++) {
		const struct artifact_state_field *f = &artifact_state_fields[i];

		if (f->unmeasured && cJSON_IsNull(item(o, f->name))) {
			st[f->state] = 0;
			*unmeasured |= f->unmeasured;
			continue;
		}
		ret = get_u64(d, o, f->name, true, &st[f->state]);
	}
	if (!ret)
		ret = get_u64(d, o, "residual_ns", false, residual);
	return ret;
}

/* A row's counts the table says are read back (artifact_fields.h); a null sets its bits. */
static int read_counts(struct rd *d, const cJSON *o, enum artifact_row kind, void *row,
		       uint32_t *unmeasured)
{
	int ret = 0;

	for (size_t i = 0; i < artifact_ncount_fields && !ret; i++) {
		const struct artifact_count_field *f = &artifact_count_fields[i];
		size_t off = artifact_field_off(f, kind);

		if (off == ARTIFACT_FIELD_NONE)
			continue;
		if (cJSON_IsNull(item(o, f->name))) {
			*unmeasured |= f->unmeasured;
			continue;
		}
		if (f->read || (f->required & kind))
			ret = get_u64(d, o, f->name, (f->required & kind) != 0,
				      (uint64_t *)(void *)((char *)row + off));
	}
	return ret;
}

static int read_totals(struct rd *d, const cJSON *t, struct run_totals *tot)
{
	uint64_t v = 0;
	int ret = 0;

	if (!cJSON_IsObject(t))
		return bad(d, -EINVAL, "'totals' is missing");
	ret = read_states(d, t, tot->state_ns, &tot->residual_ns, &tot->unmeasured);
	if (!ret)
		ret = get_u64(d, t, "lifetime_ns", false, &tot->lifetime_ns);
	if (!ret)
		ret = read_counts(d, t, ARTIFACT_ROW_TOTALS, tot, &tot->unmeasured);
	if (!ret)
		ret = get_u64(d, t, "processes", false, &v);
	tot->processes = (uint32_t)v;
	if (!ret)
		ret = get_u64(d, t, "threads", false, &v);
	tot->threads = (uint32_t)v;
	return ret;
}

/* A thread's taskstats delays; null stays "none". */
static int read_delays(struct rd *d, const cJSON *o, struct thread_acct *t)
{
	int ret = 0;

	if (!cJSON_IsObject(o))
		return 0;
	t->have_delays = true;
	t->delays_version = (uint32_t)get_num(o, "version", 0);
	t->delays_final = cJSON_IsTrue(item(o, "final"));
	for (int k = 0; k < DELAY_NR && !ret; k++) {
		const cJSON *c = item(o, delay_name(k));
		struct delay_counter *dc = &t->delays[k];

		if (!cJSON_IsObject(c))
			continue;
		dc->available = true;
		ret = get_u64(d, c, "count", true, &dc->count);
		if (!ret)
			ret = get_u64(d, c, "total_ns", true, &dc->total_ns);
		dc->dropped = (uint32_t)get_num(c, "dropped", 0);
		dc->from_ebpf = cJSON_IsString(item(c, "measured_by")) &&
				!strcmp(item(c, "measured_by")->valuestring, "ebpf");
		if (!ret && item(c, "max_ns")) {
			dc->have_extremes = true;
			ret = get_u64(d, c, "max_ns", false, &dc->max_ns);
			if (!ret)
				ret = get_u64(d, c, "min_ns", false, &dc->min_ns);
		}
	}
	return ret;
}

static int read_thread(struct rd *d, const cJSON *o, struct thread_acct *t)
{
	const cJSON *lat = item(o, "wakeup_latency_ns");
	uint64_t v, avg = 0;
	int ret;

	if (!cJSON_IsObject(o))
		return bad(d, -EINVAL, "a thread is not an object");
	ret = get_u64(d, o, "tid", true, &v);
	t->tid = (uint32_t)v;
	if (!ret && item(o, "tid_before_exec")) {
		ret = get_u64(d, o, "tid_before_exec", false, &v);
		t->tid_before_exec = (uint32_t)v;
	}
	if (!ret)
		ret = get_u64(d, o, "pid", true, &v);
	t->pid = (uint32_t)v;
	if (!ret)
		ret = get_u64(d, o, "ppid", false, &v);
	t->ppid = (uint32_t)v;
	get_str(o, "comm", t->comm, sizeof(t->comm), "?");
	if (!ret)
		ret = get_i64(d, o, "start_ns", &t->start_ns);
	if (!ret)
		ret = get_i64(d, o, "end_ns", &t->end_ns);
	if (!ret)
		ret = get_u64(d, o, "lifetime_ns", true, &t->lifetime_ns);
	if (!ret)
		ret = read_states(d, o, t->state_ns, &t->residual_ns, &t->unmeasured);
	if (!ret)
		ret = read_counts(d, o, ARTIFACT_ROW_THREAD, t, &t->unmeasured);
	if (!ret && cJSON_IsObject(lat)) {
		ret = get_u64(d, lat, "count", false, &t->wakeup_lat_count);
		if (!ret)
			ret = get_u64(d, lat, "avg", false, &avg);
		if (!ret)
			ret = get_u64(d, lat, "max", false, &t->wakeup_lat_max);
		/* The artifact keeps the average: the sum is recovered to within one count. */
		t->wakeup_lat_sum = avg * t->wakeup_lat_count;
	}
	if (!ret)
		ret = read_delays(d, item(o, "delays"), t);
	if (!ret && cJSON_IsObject(item(o, "below_threshold"))) {
		const cJSON *b = item(o, "below_threshold");

		t->have_below = true;
		ret = get_u64(d, b, "count", true, &t->below_count);
		if (!ret)
			ret = get_u64(d, b, "total_ns", true, &t->below_ns);
		if (!ret)
			ret = get_u64(d, b, "uninterruptible_ns", false, &t->below_disk_ns);
	}
	if (!ret)
		ret = get_u64(d, o, "task_start_ns", false, &t->task_start_ns);
	if (!ret)
		ret = get_u64(d, o, "execs", false, &v);
	t->execs = (uint32_t)v;
	if (cJSON_IsTrue(item(o, "alive_at_end")))
		t->flags |= TSA_F_SURVIVOR;
	t->first_state_known = !cJSON_IsFalse(item(o, "first_state_known"));
	/* Where the figures came from, and what that source could not count (null). */
	{
		const char *src = cJSON_GetStringValue(item(o, "accounting_source"));

		t->source = src && !strcmp(src, "procfs")      ? ACCT_SRC_PROC
			    : src && !strcmp(src, "taskstats") ? ACCT_SRC_TASKSTATS
							       : ACCT_SRC_EBPF;
		if (cJSON_IsNull(item(o, "offcpu_hist_log2_us")))
			t->unmeasured |= ACCT_NO_HIST;
	}
	return ret;
}

static int read_proc(struct rd *d, const cJSON *o, struct proc_acct *p)
{
	const cJSON *ex = item(o, "exit");
	uint64_t v;
	long code = 0, sig = 0;
	int ret;

	if (!cJSON_IsObject(o))
		return bad(d, -EINVAL, "a process is not an object");
	ret = get_u64(d, o, "pid", true, &v);
	p->pid = (uint32_t)v;
	if (!ret)
		ret = get_u64(d, o, "ppid", false, &v);
	p->ppid = (uint32_t)v;
	get_str(o, "comm", p->comm, sizeof(p->comm), "?");
	if (!ret)
		ret = get_i64(d, o, "start_ns", &p->start_ns);
	if (!ret)
		ret = get_i64(d, o, "end_ns", &p->end_ns);
	if (!ret)
		ret = get_u64(d, o, "threads", false, &v);
	p->threads = (uint32_t)v;
	if (!ret)
		ret = get_u64(d, o, "thread_lifetime_ns", false, &p->thread_lifetime_ns);
	if (!ret)
		ret = read_states(d, o, p->state_ns, &p->residual_ns, &p->unmeasured);
	if (!ret && cJSON_IsObject(ex)) {
		ret = get_int(d, ex, "code", false, 0, 255, &code);
		if (!ret)
			ret = get_int(d, ex, "signal", false, 0, 127, &sig);
		p->exited = cJSON_IsNumber(item(ex, "code")) || cJSON_IsNumber(item(ex, "signal"));
		p->exit_status = sig ? (int)sig : (int)(code << 8);
	}
	p->alive = cJSON_IsTrue(item(o, "alive_at_end"));
	return ret;
}

static void read_check(const cJSON *o, struct cross_check *c)
{
	c->available = cJSON_IsTrue(item(o, "available"));
	get_str(o, "reason", c->reason, sizeof(c->reason), "");
	c->total = get_num(o, "total_fraction", 0);
	c->worst = get_num(o, "worst_fraction", 0);
	c->compared = (uint32_t)get_num_in(o, "compared", 0, 0, UINT32_MAX);
	/* The tree's CPU against rusage says which way it differs (run.h). */
	c->directional = cJSON_IsNumber(item(o, "unseen_fraction"));
	c->unseen = get_num(o, "unseen_fraction", 0);
	c->excess_ns = (uint64_t)get_num_in(o, "excess_ns", 0, 0, 9e18);
}

/* What the table prints besides the rows: quality figures, descendants, notes. */
static int read_detail(struct rd *d, const cJSON *o, struct run *r)
{
	const cJSON *q = item(o, "quality"), *cc, *a, *i, *de = item(o, "descendants");
	struct run_quality *rq = &r->quality;
	size_t n, k = 0;
	uint64_t v;
	int ret = 0;

	rq->residual_percent = get_num(q, "residual_percent", 0);
	get_u64(d, q, "lost_events", false, &rq->lost_events);
	get_u64(d, q, "map_full_drops", false, &rq->map_full_drops);
	get_u64(d, q, "unexpected_transitions", false, &rq->unexpected_transitions);
	get_u64(d, q, "untraced_switch_ins", false, &rq->untraced_switch_ins);
	get_u64(d, q, "unsettled_threads", false, &rq->unsettled);
	get_u64(d, q, "taskstats_drops", false, &rq->taskstats_drops);
	i = item(q, "taskstats");
	if (cJSON_IsObject(i)) {
		rq->ts.active = true;
		get_u64(d, i, "identity_mismatches", false, &rq->ts.identity_mismatches);
		get_u64(d, i, "unmatched_records", false, &rq->ts.unmatched_records);
		get_u64(d, i, "threads_without_delays", false, &rq->ts.threads_without);
		get_u64(d, i, "implausible_counters", false, &rq->ts.implausible);
		get_u64(d, i, "block_io_from_ebpf", false, &rq->ts.blkio_from_ebpf);
		get_u64(d, i, "dropped_waits", false, &rq->ts.dropped_waits);
	}
	i = item(q, "delayacct");
	if (cJSON_IsObject(i)) {
		const cJSON *b = item(i, "before"), *du = item(i, "during");

		rq->delayacct.known = true;
		rq->delayacct.before = cJSON_IsBool(b) ? cJSON_IsTrue(b) : -1;
		rq->delayacct.during = cJSON_IsBool(du) ? cJSON_IsTrue(du) : -1;
		rq->delayacct.switched_on = cJSON_IsTrue(item(i, "switched_on"));
		rq->delayacct.non_cpu_live = cJSON_IsTrue(item(i, "non_cpu_live"));
		get_str(i, "reason", rq->delayacct.reason, sizeof(rq->delayacct.reason), "");
	}
	i = item(q, "procfs");
	if (cJSON_IsObject(i)) {
		rq->procfs.active = true;
		get_u64(d, i, "sample_interval_ns", false, &rq->procfs.sample_ns);
		get_u64(d, i, "scans", false, &rq->procfs.scans);
		get_u64(d, i, "max_scan_ns", false, &rq->procfs.max_scan_ns);
		get_u64(d, i, "max_gap_ns", false, &rq->procfs.max_gap_ns);
		get_u64(d, i, "threads_seen", false, &rq->procfs.threads_seen);
		get_u64(d, i, "threads_new", false, &rq->procfs.threads_new);
		get_u64(d, i, "threads_gone", false, &rq->procfs.threads_gone);
		get_u64(d, i, "identity_changes", false, &rq->procfs.identity_changes);
		get_u64(d, i, "unreadable", false, &rq->procfs.unreadable);
		get_u64(d, i, "unseen_cpu_ns", false, &rq->procfs.unseen_cpu_ns);
	}
	cc = item(q, "cross_check");
	read_check(item(cc, "runnable_vs_kernel"), &rq->runnable);
	read_check(item(cc, "tree_cpu_vs_rusage"), &rq->tree_cpu);
	read_check(item(cc, "procfs_on_cpu_vs_ebpf"), &rq->procfs_on_cpu);
	read_check(item(cc, "procfs_runqueue_vs_ebpf"), &rq->procfs_runqueue);
	rq->kernel_shift_ns = (int64_t)get_num_in(cc, "kernel_shift_ns", 0, -9.2e18, 9.2e18);
	rq->klag_ns = (uint64_t)get_num_in(cc, "kernel_clock_lag_ns", 0, 0, 1.8e19);
	rq->klag_switches = (uint64_t)get_num_in(cc, "kernel_clock_lag_switches", 0, 0, 1.8e19);
	rq->unstamped_wait_ns = (uint64_t)get_num_in(cc, "unstamped_wait_ns", 0, 0, 1.8e19);
	cJSON_ArrayForEach(i, item(q, "notes"))
	{
		if (cJSON_IsString(i))
			run__note(r, "%s", i->valuestring);
	}
	if (cJSON_IsObject(de)) {
		get_u64(d, de, "running_at_exit", false, &v);
		r->desc.running_at_exit = (uint32_t)v;
		get_u64(d, de, "reaped_orphans", false, &v);
		r->desc.reaped_orphans = (uint32_t)v;
		get_u64(d, de, "left_running", false, &v);
		r->desc.left_running = (uint32_t)v;
		get_u64(d, de, "killed", false, &v);
		r->desc.killed = (uint32_t)v;
		get_u64(d, de, "waited_ns", false, &r->desc.waited_ns);
		i = item(de, "policy");
		r->desc.policy = cJSON_IsString(i) && !strcmp(i->valuestring, "leave")	? 1
				 : cJSON_IsString(i) && !strcmp(i->valuestring, "kill") ? 2
											: 0;
	}
	get_u64(d, item(o, "totals"), "max_threads_alive", false, &r->totals.max_threads_alive);
	i = item(item(o, "totals"), "before_tracking_cpu_ns");
	if (cJSON_IsNumber(i))
		r->totals.before_tracking_known =
		    !get_u64(d, item(o, "totals"), "before_tracking_cpu_ns", false,
			     &r->totals.before_tracking_cpu_ns);
	get_u64(d, item(o, "totals"), "wakeups", false, &r->totals.wakeups);
	i = item(item(o, "totals"), "wakeup_latency_ns");
	get_u64(d, i, "count", false, &r->totals.wakeup_lat_count);
	get_u64(d, i, "max", false, &r->totals.wakeup_lat_max);
	get_u64(d, i, "avg", false, &v);
	r->totals.wakeup_lat_sum = v * r->totals.wakeup_lat_count;
	i = item(o, "interrupted_by");
	if (cJSON_IsString(i)) {
		/* The artifact names the signal; tsarun is interrupted by these four. */
		static const struct {
			const char *name;
			int sig;
		} sigs[] = {{"SIGINT", 2}, {"SIGTERM", 15}, {"SIGHUP", 1}, {"SIGQUIT", 3}};

		for (size_t j = 0; j < sizeof(sigs) / sizeof(sigs[0]); j++)
			if (!strcmp(i->valuestring, sigs[j].name))
				r->interrupt_signal = sigs[j].sig;
	}

	r->detailed = cJSON_IsTrue(item(o, "detailed"));
	if (!r->detailed)
		return 0;
	a = item(o, "threads");
	n = (size_t)cJSON_GetArraySize(a);
	r->threads = calloc(n ? n : 1, sizeof(*r->threads));
	if (!r->threads)
		return bad(d, -ENOMEM, "out of memory");
	cJSON_ArrayForEach(i, a)
	{
		ret = read_thread(d, i, &r->threads[k++]);
		if (ret)
			return ret;
	}
	r->nthreads = k;
	a = item(o, "processes");
	n = (size_t)cJSON_GetArraySize(a);
	r->procs = calloc(n ? n : 1, sizeof(*r->procs));
	if (!r->procs)
		return bad(d, -ENOMEM, "out of memory");
	k = 0;
	cJSON_ArrayForEach(i, a)
	{
		ret = read_proc(d, i, &r->procs[k++]);
		if (ret)
			return ret;
	}
	r->nprocs = k;
	return 0;
}

/*
 * Whether the half KEY ("user", "kernel") of a stack was cut: its own flag
 * (user_truncated, kernel_truncated). An artifact written before those has
 * one flag for the pair, which was the user half's unless the kernel's
 * stack was deeper than the kernel keeps (127 frames), which it never is
 * in practice: the user half takes it.
 */
static bool half_truncated(const cJSON *o, const char *key)
{
	char own[32];
	const cJSON *f;

	snprintf(own, sizeof(own), "%s_truncated", key);
	f = item(o, own);
	if (cJSON_IsBool(f))
		return cJSON_IsTrue(f);
	return !strcmp(key, "user") && cJSON_IsTrue(item(o, "truncated"));
}

/* A stack's frames (root first) as a trace; its status from the *_status key. */
static int64_t read_trace(struct run_stacks *s, const cJSON *o, const char *key, bool kernel)
{
	char status_key[32];
	const cJSON *a = item(o, key), *f, *st;
	const char **frames;
	size_t n = 0;
	int64_t ret;
	uint8_t status = TSA_SS_OK;

	snprintf(status_key, sizeof(status_key), "%s_status", key);
	st = item(o, status_key);
	for (int i = 0; cJSON_IsString(st) && i < TSA_SS_NR; i++)
		if (!strcmp(st->valuestring, stack_status_name(i)))
			status = (uint8_t)i;
	frames = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	cJSON_ArrayForEach(f, a)
	{
		if (cJSON_IsString(f))
			frames[n++] = f->valuestring;
	}
	ret = run_stacks__add_trace(s, frames, n, status, kernel, half_truncated(o, key), 0);
	free(frames);
	return ret;
}

/* runs[].stacks, for the report's stacks section. */
static int read_stacks(struct rd *d, const cJSON *o, struct run *r)
{
	const cJSON *so = item(o, "stacks"), *e;
	struct run_stacks *s;
	uint64_t v = 0;

	if (!cJSON_IsObject(so))
		return 0;
	s = run_stacks__new();
	if (!s)
		return bad(d, -ENOMEM, "out of memory");
	s->offcpu = cJSON_IsTrue(item(so, "offcpu"));
	s->oncpu = cJSON_IsTrue(item(so, "oncpu"));
	s->waker = cJSON_IsTrue(item(so, "waker"));
	get_u64(d, so, "offcpu_min_ns", false, &s->offcpu_min_ns);
	get_u64(d, so, "oncpu_freq_hz", false, &v);
	s->freq = (unsigned)v;
	get_str(item(so, "symbols"), "kernel", s->kernel_symbols, sizeof(s->kernel_symbols), "");
	get_str(item(so, "symbols"), "user", s->user_symbols, sizeof(s->user_symbols), "");
	get_str(so, "oncpu_reason", s->oncpu_reason, sizeof(s->oncpu_reason), "");
	e = item(so, "drops");
	get_u64(d, e, "kernel_stack_failed", false, &s->drops.kstack_fail);
	get_u64(d, e, "user_stack_failed", false, &s->drops.ustack_fail);
	get_u64(d, e, "stack_map_full", false, &s->drops.map_full);
	get_u64(d, e, "truncated", false, &s->drops.truncated);
	get_u64(d, e, "aggregate_full", false, &s->drops.agg_full);
	get_u64(d, e, "aggregate_full_ns", false, &s->drops.agg_full_ns);
	get_u64(d, e, "pending_lost", false, &s->drops.pending_lost);
	get_u64(d, e, "waker_missed", false, &s->drops.waker_missed);
	get_u64(d, e, "oncpu_full", false, &s->drops.oncpu_full);
	get_u64(d, e, "unwind_incomplete", false, &s->drops.cut);
	for (int kind = 0; kind < 2; kind++) {
		cJSON_ArrayForEach(e, item(so, kind ? "oncpu_stacks" : "offcpu_stacks"))
		{
			struct stack_agg a = {.kind = kind ? STACK_ONCPU : STACK_OFFCPU};
			const cJSON *w = item(e, "waker"), *st = item(e, "state");
			int64_t u = read_trace(s, e, "user", false),
				k = read_trace(s, e, "kernel", true);

			if (u < 0 || k < 0)
				goto oom;
			get_u64(d, e, "pid", false, &v);
			a.pid = (uint32_t)v;
			get_u64(d, e, "tid", false, &v);
			a.tid = (uint32_t)v;
			a.state = kind ? TSA_ST_ONCPU
				  : cJSON_IsString(st) && !strcmp(st->valuestring, "D")
				      ? TSA_ST_DISK
				      : TSA_ST_SLEEP;
			get_u64(d, e, "count", false, &a.count);
			get_u64(d, e, "total_ns", false, &a.total_ns);
			/* The name it had then; the thread's own when the same (stacks.h). */
			get_str(e, "comm", a.comm, sizeof(a.comm), "");
			a.ustack = (uint32_t)u;
			a.kstack = (uint32_t)k;
			if (cJSON_IsObject(w)) {
				int64_t wu = read_trace(s, w, "user", false),
					wk = read_trace(s, w, "kernel", true);

				if (wu < 0 || wk < 0)
					goto oom;
				a.has_waker = true;
				get_u64(d, w, "pid", false, &v);
				a.waker_pid = (uint32_t)v;
				get_u64(d, w, "tid", false, &v);
				a.waker_tid = (uint32_t)v;
				get_str(w, "comm", a.waker_comm, sizeof(a.waker_comm), "?");
				a.waker_ustack = (uint32_t)wu;
				a.waker_kstack = (uint32_t)wk;
			}
			if (run_stacks__add_agg(s, &a))
				goto oom;
		}
	}
	run_stacks__sort(s);
	r->stacks = s;
	return 0;
oom:
	run_stacks__free(s);
	return bad(d, -ENOMEM, "out of memory");
}

/*
 * runs[].parts (parts.h): optional (an artifact from before it has none, and
 * its runs then cannot be explained), but when there, whole.
 */
static int read_parts(struct rd *d, const cJSON *o, struct run *r)
{
	static const char *const lists[] = {"threads", "stacks", "bash"};
	const cJSON *i, *root;
	int ret = 0;

	if (!o || cJSON_IsNull(o))
		return 0;
	if (!cJSON_IsObject(o))
		return bad(d, -EINVAL, "'parts' is not an object");
	r->parts = run_parts__new();
	if (!r->parts)
		return bad(d, -ENOMEM, "out of memory");
	root = item(o, "root_thread");
	if (cJSON_IsString(root) && !(r->parts->root = strdup(root->valuestring)))
		return bad(d, -ENOMEM, "out of memory");
	r->parts->stacks = cJSON_IsArray(item(o, "stacks"));
	r->parts->bash = cJSON_IsArray(item(o, "bash"));
	for (int l = 0; l < 3; l++) {
		cJSON_ArrayForEach(i, item(o, lists[l]))
		{
			const cJSON *th = item(i, "thread"), *st = item(i, "state"),
				    *sk = item(i, l == 2 ? "command" : "stack");
			uint64_t ns = 0, cpu = 0;
			int state = 0;

			if (l < 2 && !(cJSON_IsString(th) && cJSON_IsString(st) &&
				       (state = parts_state_by_name(st->valuestring)) >= 0))
				return bad(d, -EINVAL,
					   "parts.%s: an entry without its thread or state",
					   lists[l]);
			if (l > 0 && !cJSON_IsString(sk))
				return bad(d, -EINVAL, "parts.%s: an entry without its %s",
					   lists[l], l == 2 ? "command" : "stack");
			ret = get_u64(d, i, "ns", true, &ns);
			if (!ret && l == 2)
				ret = get_u64(d, i, "cpu_ns", true, &cpu);
			if (ret)
				return ret;
			/* An on-CPU part less steal; written before it was, its on-CPU time. */
			if (l < 2 && state == TSA_ST_ONCPU) {
				cpu = ns;
				if (item(i, "cpu_ns") &&
				    (ret = get_u64(d, i, "cpu_ns", true, &cpu)))
					return ret;
			}
			if (run_parts__add(r->parts, l, state, l < 2 ? th->valuestring : NULL,
					   l > 0 ? sk->valuestring : NULL, ns, cpu))
				return bad(d, -ENOMEM, "out of memory");
		}
	}
	return 0;
}

static int read_run(struct rd *d, const cJSON *o, size_t idx, struct run *r)
{
	const cJSON *i, *ru;
	long v;
	int ret;

	memset(r, 0, sizeof(*r));
	snprintf(d->where, sizeof(d->where), "run %zu: ", idx);
	if (!cJSON_IsObject(o))
		return bad(d, -EINVAL, "not an object");
	ret = get_int(d, o, "index", false, 0, 1 << 30, &v);
	if (ret)
		return ret;
	r->index = (int)v;
	i = item(o, "warmup");
	if (!cJSON_IsBool(i))
		return bad(d, -EINVAL, "'warmup' is missing");
	r->warmup = cJSON_IsTrue(i);
	ret = read_status(d, o, r);
	if (!ret)
		ret = get_u64(d, o, "wall_ns", true, &r->wall_ns);
	if (!ret) {
		uint64_t root = 0;

		/* Where the critical path starts; older artifacts may lack it. */
		ret = get_u64(d, o, "root_pid", false, &root);
		r->root_pid = (uint32_t)root;
	}
	if (!ret)
		ret = get_u64(d, o, "user_ns", true, &r->ru.user_ns);
	if (!ret)
		ret = get_u64(d, o, "sys_ns", true, &r->ru.sys_ns);
	if (!ret)
		ret = get_int(d, o, "max_rss_kb", true, 0, 1l << 50, &r->ru.max_rss_kb);
	if (ret)
		return ret;
	i = item(o, "instructions");
	if (i && !cJSON_IsNull(i)) {
		ret = get_u64(d, o, "instructions", true, &r->instructions);
		if (ret)
			return ret;
		r->have_instructions = true;
	}
	ru = item(o, "rusage");
	if (cJSON_IsObject(ru)) {
		get_int(d, ru, "minor_faults", false, 0, 1l << 60, &r->ru.minflt);
		get_int(d, ru, "major_faults", false, 0, 1l << 60, &r->ru.majflt);
		get_int(d, ru, "voluntary_switches", false, 0, 1l << 60, &r->ru.nvcsw);
		get_int(d, ru, "involuntary_switches", false, 0, 1l << 60, &r->ru.nivcsw);
	}
	ret = read_totals(d, item(o, "totals"), &r->totals);
	if (!ret)
		ret = read_sources(d, item(o, "quality"), r);
	if (!ret && d->o->detail)
		ret = read_detail(d, o, r);
	if (!ret && d->o->detail && r->detailed)
		ret = read_stacks(d, o, r);
	if (!ret && d->o->detail && r->detailed && cJSON_IsObject(item(o, "timeline"))) {
		char why[256];

		ret = artifact_read_timeline(item(o, "timeline"), r, why, sizeof(why));
		if (ret)
			ret = bad(d, ret, "%s", why);
		/* The critical path is walked again on what was read: the same walk, the same path. */
		else if (critpath_compute(r) == -ENOMEM)
			ret = -ENOMEM;
	}
	if (!ret)
		ret = read_parts(d, item(o, "parts"), r);
	if (ret)
		run__free(r);
	else
		d->where[0] = '\0';
	return ret;
}

static int read_runs(struct rd *d, const cJSON *a, struct run **out, size_t *n)
{
	size_t count = (size_t)cJSON_GetArraySize(a), k = 0;
	const cJSON *o;
	int ret;

	*out = NULL;
	*n = 0;
	if (!count)
		return 0;
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return bad(d, -ENOMEM, "out of memory");
	cJSON_ArrayForEach(o, a)
	{
		ret = read_run(d, o, k, &(*out)[k]);
		if (ret) {
			for (size_t j = 0; j < k; j++)
				run__free(&(*out)[j]);
			free(*out);
			*out = NULL;
			return ret;
		}
		k++;
	}
	*n = k;
	return 0;
}

/*
 * Does the text end inside a string, an object or an array? That is how a
 * file cut short (a full disk, a killed writer) looks, wherever the parser
 * happened to stop.
 */
static bool ends_open(const char *text, size_t len)
{
	long depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"')
			in_str = true;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			depth--;
	}
	return in_str || depth > 0;
}

static int enum_of(const cJSON *i, const char *const *names, int n)
{
	for (int k = 0; cJSON_IsString(i) && k < n; k++)
		if (!strcmp(i->valuestring, names[k]))
			return k;
	return -1;
}

static double *read_values(const cJSON *a, size_t *n)
{
	size_t count = (size_t)cJSON_GetArraySize(a), k = 0;
	double *v = calloc(count ? count : 1, sizeof(*v));
	const cJSON *i;

	if (!v)
		return NULL;
	cJSON_ArrayForEach(i, a)
	{
		v[k++] = cJSON_IsNumber(i) ? i->valuedouble : NAN;
	}
	*n = k;
	return v;
}

/* A ratio or bound written as null was not finite: +inf over a zero baseline, else unknown. */
static double get_ratio(const cJSON *o, const char *key, double base_median)
{
	const cJSON *i = item(o, key);

	if (cJSON_IsNumber(i))
		return i->valuedouble;
	return base_median == 0 ? INFINITY : NAN;
}

/*
 * A bound of an interval that was computed (enough runs a side) is never
 * unknown: null there is +inf, as when replicates drew a zero baseline
 * median (a count such as involuntary_switches, often 0) though the
 * baseline's own median is not 0. Not computed (too few runs): unknown.
 */
static double get_bound(const cJSON *o, const char *key, bool computed)
{
	const cJSON *i = item(o, key);

	if (cJSON_IsNumber(i))
		return i->valuedouble;
	return computed ? INFINITY : NAN;
}

static int read_explain_level(struct rd *d, const cJSON *o, struct explain_metric *em,
			      enum explain_level l)
{
	struct explain_levelset *ls = &em->level[l];
	const cJSON *i;
	size_t n = 0;

	ls->available = cJSON_IsTrue(item(o, "available"));
	get_str(o, "reason", ls->why, sizeof(ls->why), "");
	if (!ls->available)
		return 0;
	ls->tested = (size_t)get_num_in(o, "tested", 0, 0, 1e9);
	ls->compared = (size_t)get_num_in(o, "compared", 0, 0, 1e9);
	ls->confidence = get_num(o, "confidence", NAN);
	ls->blamed_ns = get_num(o, "blamed_ns", NAN);
	ls->noise_ns = get_num(o, "within_noise_ns", NAN);
	ls->nnoise = (size_t)get_num_in(o, "within_noise_parts", 0, 0, 1e9);
	ls->remainder_ns = get_num(o, "remainder_ns", NAN);
	ls->parts = calloc((size_t)cJSON_GetArraySize(item(o, "parts")) + 1, sizeof(*ls->parts));
	if (!ls->parts)
		return bad(d, -ENOMEM, "out of memory");
	cJSON_ArrayForEach(i, item(o, "parts"))
	{
		struct explain_part *p = &ls->parts[n];
		const cJSON *who = item(i, l == EXPLAIN_PROCESS ? "process" : "thread"),
			    *st = item(i, "state"),
			    *sk = item(i, l == EXPLAIN_BASH ? "command" : "stack");

		p->state = cJSON_IsString(st) ? parts_state_by_name(st->valuestring) : -1;
		if ((l != EXPLAIN_BASH && !cJSON_IsString(who)) ||
		    ((l == EXPLAIN_THREAD || l == EXPLAIN_STACK) && p->state < 0) ||
		    ((l == EXPLAIN_STACK || l == EXPLAIN_BASH) && !cJSON_IsString(sk)))
			return bad(d, -EINVAL, "comparison.explanation: a %s part is incomplete",
				   explain_level_name(l));
		if (l != EXPLAIN_BASH && !(p->thread = strdup(who->valuestring)))
			return bad(d, -ENOMEM, "out of memory");
		if ((l == EXPLAIN_STACK || l == EXPLAIN_BASH) &&
		    !(p->stack = strdup(sk->valuestring)))
			return bad(d, -ENOMEM, "out of memory");
		p->base = get_num(i, "base_ns", NAN);
		p->new = get_num(i, "new_ns", NAN);
		p->delta = get_num(i, "change_ns", NAN);
		p->low = get_num(i, "ci_low_ns", NAN);
		p->high = get_num(i, "ci_high_ns", NAN);
		p->p = get_num(i, "p_value", NAN);
		p->share = get_num(i, "share", NAN);
		p->blamed = cJSON_IsTrue(item(i, "blamed"));
		ls->nblamed += p->blamed;
		ls->nparts = ++n;
	}
	return 0;
}

/* comparison.explanation (explain.h), when there is one. */
static int read_explain(struct rd *d, const cJSON *o, struct comparison *c)
{
	const cJSON *i;
	int ret = 0;

	if (!cJSON_IsObject(o))
		return 0;
	c->explain = explain__new();
	if (!c->explain)
		return bad(d, -ENOMEM, "out of memory");
	c->explain->confidence = get_num(o, "confidence", 0.95);
	c->explain->resamples = (unsigned)get_num_in(o, "resamples", 0, 0, UINT32_MAX);
	c->explain->seed = (uint64_t)get_num_in(o, "seed", 0, 0, 1.8446744073709550e19);
	cJSON_ArrayForEach(i, item(o, "metrics"))
	{
		const cJSON *name = item(i, "name"), *root = item(i, "root_thread");
		int m = cJSON_IsString(name) ? metric_by_name(name->valuestring) : -1;
		struct explain_metric *em;

		if (m < 0 || c->explain->n >= METRIC_NR)
			return bad(d, -EINVAL,
				   "comparison.explanation: a metric is not one this tsarun knows");
		em = &c->explain->m[c->explain->n++];
		em->metric = m;
		em->available = cJSON_IsTrue(item(i, "available"));
		get_str(i, "reason", em->why, sizeof(em->why), "");
		get_str(i, "scope", em->scope, sizeof(em->scope), "");
		if (cJSON_IsString(root) && !(em->root = strdup(root->valuestring)))
			return bad(d, -ENOMEM, "out of memory");
		em->nb = (size_t)get_num_in(i, "base_n", 0, 0, 1e9);
		em->nn = (size_t)get_num_in(i, "new_n", 0, 0, 1e9);
		em->base_median = get_num(i, "base_median_ns", NAN);
		em->new_median = get_num(i, "new_median_ns", NAN);
		em->total = get_num(i, "change_ns", NAN);
		em->floor_ns = get_num(i, "floor_ns", NAN);
		em->judged = cJSON_IsTrue(item(i, "judged"));
		for (int l = 0; !ret && l < EXPLAIN_NLEVELS; l++) {
			const cJSON *lv = item(item(i, "levels"), explain_level_name(l));

			if (cJSON_IsObject(lv))
				ret = read_explain_level(d, lv, em, l);
		}
		if (ret)
			return ret;
	}
	return 0;
}

static int read_comparison(struct rd *d, const cJSON *o, struct comparison *c)
{
	static const char *const verdicts[] = {"pass", "improved", "inconclusive", "regression"};
	static const char *const outcomes[] = {"ok", "warning", "fail"};
	const cJSON *b = item(o, "baseline"), *st = item(o, "statistic"), *sn, *i;
	size_t min_runs;
	int v;

	memset(c, 0, sizeof(*c));
	get_str(b, "kind", c->kind_buf, sizeof(c->kind_buf), "artifact");
	get_str(b, !strcmp(c->kind_buf, "command") ? "command" : "path", c->name_buf,
		sizeof(c->name_buf), "?");
	c->baseline_kind = c->kind_buf;
	c->baseline_name = c->name_buf;
	cJSON_ArrayForEach(i, item(b, "fingerprint_differences"))
	{
		if (cJSON_IsString(i) && c->nfingerprint_diff < 4)
			snprintf(c->fingerprint_diff[c->nfingerprint_diff++], 160, "%s",
				 i->valuestring);
	}
	c->confidence = get_num(st, "confidence", 0.95);
	c->resamples = (unsigned)get_num_in(st, "resamples", 0, 0, UINT32_MAX);
	c->seed = (uint64_t)get_num_in(st, "seed", 0, 0, 1.8446744073709550e19);
	c->paired = cJSON_IsTrue(item(st, "paired"));
	min_runs = (size_t)get_num_in(st, "min_runs", GATE_MIN_RUNS, 1, 1e6);
	v = enum_of(item(o, "verdict"), verdicts, 4);
	c->verdict = v < 0 ? GATE_INCONCLUSIVE : (enum gate_verdict)v;
	v = enum_of(item(o, "outcome"), outcomes, 3);
	c->outcome = v < 0 ? GATE_WARN : (enum gate_outcome)v;
	c->runs_added = (unsigned)get_num_in(o, "runs_added", 0, 0, UINT32_MAX);
	c->max_runs = (unsigned)get_num_in(o, "max_runs", 0, 0, UINT32_MAX);
	cJSON_ArrayForEach(i, item(o, "metrics"))
	{
		struct gate_metric *gm;
		const cJSON *name = item(i, "name");
		int m = cJSON_IsString(name) ? metric_by_name(name->valuestring) : -1;

		if (m < 0 || c->nmetrics >= METRIC_NR)
			return bad(d, -EINVAL, "comparison: a metric is not one this tsarun knows");
		gm = &c->metrics[c->nmetrics++];
		gm->metric = m;
		gm->base_median = get_num(i, "base_median", NAN);
		gm->new_median = get_num(i, "new_median", NAN);
		gm->ratio = get_ratio(i, "ratio", gm->base_median);
		gm->threshold = get_num(i, "threshold", NAN);
		v = enum_of(item(i, "verdict"), verdicts, 4);
		gm->verdict = v < 0 ? GATE_INCONCLUSIVE : (enum gate_verdict)v;
		v = enum_of(item(i, "outcome"), outcomes, 3);
		gm->outcome = v < 0 ? GATE_WARN : (enum gate_outcome)v;
		get_str(i, "note", gm->note, sizeof(gm->note), "");
		gm->base_cv = get_num(i, "base_cv", NAN);
		gm->new_cv = get_num(i, "new_cv", NAN);
		gm->base_rcv = get_num(i, "base_robust_cv", NAN);
		gm->new_rcv = get_num(i, "new_robust_cv", NAN);
		gm->noisy = cJSON_IsTrue(item(i, "noisy"));
		gm->base_values = read_values(item(i, "base_values"), &gm->nb);
		gm->new_values = read_values(item(i, "new_values"), &gm->nn);
		if (!gm->base_values || !gm->new_values)
			return bad(d, -ENOMEM, "out of memory");
		gm->ci_low = get_bound(i, "ci_low", gm->nb >= min_runs && gm->nn >= min_runs);
		gm->ci_high = get_bound(i, "ci_high", gm->nb >= min_runs && gm->nn >= min_runs);
	}
	sn = item(o, "noise_sentinel");
	c->sentinel.available = cJSON_IsTrue(item(sn, "available"));
	get_str(sn, "reason", c->sentinel.why, sizeof(c->sentinel.why), "");
	c->sentinel.base_median = get_num(sn, "base_median_ns", NAN);
	c->sentinel.new_median = get_num(sn, "new_median_ns", NAN);
	/* Before excess_ns, the sentinel weighed the growth itself. */
	c->sentinel.excess =
	    get_num(sn, "excess_ns", c->sentinel.new_median - c->sentinel.base_median);
	c->sentinel.limit = get_num(sn, "limit_ns", NAN);
	c->sentinel.fired = cJSON_IsTrue(item(sn, "fired"));
	cJSON_ArrayForEach(i, item(o, "notes"))
	{
		if (cJSON_IsString(i) && c->nnotes < GATE_MAX_NOTES) {
			c->note_metric[c->nnotes] = -1;
			snprintf(c->notes[c->nnotes++], GATE_NOTE_LEN, "%s", i->valuestring);
		}
	}
	return read_explain(d, item(o, "explanation"), c);
}

/* Line and column of offset `at` in text, for a parse error. */
static void position(const char *text, size_t at, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < at; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

int artifact_parse(const char *text, size_t len, const char *name,
		   const struct artifact_read_opts *o, struct session *s, char *err, size_t errlen)
{
	struct rd d = {.o = o, .name = name, .what = o->what, .err = err, .errlen = errlen};
	const char *end = NULL;
	const cJSON *sch, *a, *i, *cmp, *base;
	cJSON *root;
	size_t argc, k = 0, line, col, at;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	at = 0;
	while (at < len &&
	       (text[at] == ' ' || text[at] == '\n' || text[at] == '\t' || text[at] == '\r'))
		at++;
	if (at == len)
		return bad(&d, -EINVAL,
			   "the file is empty (was the run that wrote it interrupted?)");
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		at = end && end >= text ? (size_t)(end - text) : len;
		if (at >= len || ends_open(text, len))
			return bad(&d, -EINVAL,
				   "not valid JSON: the text ends too early (truncated file?)");
		position(text, at, &line, &col);
		return bad(&d, -EINVAL, "not valid JSON: line %zu, column %zu", line, col);
	}
	if (!cJSON_IsObject(root)) {
		ret = bad(&d, -EINVAL, "not a tsarun artifact (the JSON is not an object)");
		goto out;
	}
	sch = item(root, "schema");
	if (!cJSON_IsString(sch)) {
		ret = bad(&d, -EINVAL, "not a tsarun artifact (no \"schema\" key)");
		goto out;
	}
	/* Another kind of tsarun output: no version of tsarun reads it as an artifact. */
	if (!strncmp(sch->valuestring, "tsarun-", 7)) {
		const char *what = "another tsarun output";

		if (!strncmp(sch->valuestring, "tsarun-monitor/", 15))
			what = "tsarun -p's JSON Lines";
		else if (!strncmp(sch->valuestring, "tsarun-doctor/", 14))
			what = "tsarun doctor --json's report";
		ret = bad(&d, -EPROTO,
			  "schema '%.40s' is not supported: that is %s, not a run's artifact "
			  "(record one with tsarun --json FILE -- COMMAND)",
			  sch->valuestring, what);
		goto out;
	}
	if (strcmp(sch->valuestring, ARTIFACT_SCHEMA)) {
		/* A report of a newer artifact cannot be taken again: say what can be done. */
		ret = bad(&d, -EPROTO,
			  "schema '%.40s' is not supported: this tsarun reads %s (read it with "
			  "the tsarun that wrote it, or run the command again with this one)",
			  sch->valuestring, ARTIFACT_SCHEMA);
		goto out;
	}
	i = item(item(root, "tool"), "version");
	s->owned_tool_version = strdup(cJSON_IsString(i) ? i->valuestring : "unknown");
	s->tool_version = s->owned_tool_version;
	ret = read_host(&d, item(root, "host"), &s->host);
	if (ret)
		goto out;

	a = item(item(root, "command"), "argv");
	argc = (size_t)cJSON_GetArraySize(a);
	if (!cJSON_IsArray(a) || !argc) {
		ret = bad(&d, -EINVAL, "'command.argv' is missing");
		goto out;
	}
	s->owned_strings = calloc(argc + 1, sizeof(char *));
	if (!s->owned_strings) {
		ret = bad(&d, -ENOMEM, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(i, a)
	{
		s->owned_strings[k] = strdup(cJSON_IsString(i) ? i->valuestring : "?");
		if (!s->owned_strings[k]) {
			ret = bad(&d, -ENOMEM, "out of memory");
			goto out;
		}
		s->nowned_strings = ++k;
	}
	s->argv = s->owned_strings;
	s->argc = (int)argc;
	i = item(item(root, "command"), "mode");
	s->mode = cJSON_IsString(i) && !strcmp(i->valuestring, "bash")	    ? "bash"
		  : cJSON_IsString(i) && !strcmp(i->valuestring, "monitor") ? "monitor"
									    : "run";

	a = item(root, "runs");
	if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a)) {
		ret = bad(&d, -EINVAL, "the artifact has no runs");
		goto out;
	}
	ret = read_runs(&d, a, &s->runs, &s->nruns);
	if (ret)
		goto out;
	/* A paired artifact also holds the baseline command's runs. */
	cmp = item(root, "comparison");
	base = cJSON_IsObject(cmp) ? item(cmp, "baseline") : NULL;
	a = cJSON_IsObject(base) ? item(base, "runs") : NULL;
	if (cJSON_IsArray(a)) {
		ret = read_runs(&d, a, &s->base_runs, &s->nbase_runs);
		if (ret) {
			char msg[512];

			snprintf(msg, sizeof(msg), "%s (in comparison.baseline.runs)", err);
			snprintf(err, errlen, "%s", msg);
			goto out;
		}
	}
	if (o->have_cmp)
		*o->have_cmp = false;
	if (o->cmp && cJSON_IsObject(cmp)) {
		ret = read_comparison(&d, cmp, o->cmp);
		if (ret) {
			comparison__free(o->cmp);
			goto out;
		}
		if (o->have_cmp)
			*o->have_cmp = true;
	}
	/*
	 * The document itself, for a renderer that shows all of it (the HTML
	 * page): the text read, made strict UTF-8 (printing the tree again would
	 * cost more than reading it: 5 s for a million timeline intervals).
	 */
	if (!ret && o->text) {
		*o->text = textsafe_dup(textsafe_json_doc, text, len);
		if (!*o->text)
			ret = bad(&d, -ENOMEM, "out of memory");
	}
out:
	cJSON_Delete(root);
	if (ret)
		session__free(s);
	return ret;
}

int artifact_read(const char *path, const struct artifact_read_opts *o, struct session *s,
		  char *err, size_t errlen)
{
	const char *what = o->what;
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int fd, ret = 0;

	memset(s, 0, sizeof(*s));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s '%s': %s", what, path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s '%s': %s", what, path, strerror(-ret));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		snprintf(err, errlen, "cannot read %s '%s': it is a directory", what, path);
		goto out;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > ARTIFACT_MAX_BYTES) {
		ret = -EFBIG;
		snprintf(err, errlen, "%s '%s' is larger than 1 GiB: not an artifact tsarun wrote",
			 what, path);
		goto out;
	}
	/* Read to the end: the size of a pipe or /proc file is not known in advance. */
	for (size_t cap = 0;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *t;

			cap = cap ? 2 * cap : 64 * 1024;
			if (cap > ARTIFACT_MAX_BYTES + 2) {
				ret = -EFBIG;
				snprintf(err, errlen, "%s '%s' is larger than 1 GiB", what, path);
				goto out;
			}
			t = realloc(text, cap);
			if (!t) {
				ret = -ENOMEM;
				snprintf(err, errlen, "cannot read %s '%s': out of memory", what,
					 path);
				goto out;
			}
			text = t;
		}
		n = read(fd, text + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot read %s '%s': %s", what, path,
				 strerror(-ret));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	text[len] = '\0';
	ret = artifact_parse(text, len, path, o, s, err, errlen);
out:
	free(text);
	close(fd);
	return ret;
}
