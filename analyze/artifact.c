// SPDX-License-Identifier: MIT
/* The JSON artifact writer. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "artifact.h"
#include "run.h"
#include "status.h"

/*
 * cJSON keeps numbers as doubles; nanosecond counts and boot-relative times
 * can pass 2^53, so integers are written as raw text and stay exact.
 */
static void add_u64(cJSON *o, const char *name, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	cJSON_AddRawToObject(o, name, buf);
}

static void add_i64(cJSON *o, const char *name, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	cJSON_AddRawToObject(o, name, buf);
}

static void add_str(cJSON *o, const char *name, const char *s)
{
	cJSON_AddStringToObject(o, name, s ? s : "");
}

static void add_frac(cJSON *o, const char *name, double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.6g", v);
	cJSON_AddRawToObject(o, name, buf);
}

static cJSON *host_json(const struct host_info *h)
{
	cJSON *o = cJSON_CreateObject();

	add_str(o, "kernel", h->kernel);
	add_str(o, "arch", h->arch);
	cJSON_AddNumberToObject(o, "cpus", h->cpus);
	add_str(o, "cpu_model", h->cpu_model);
	add_str(o, "virtualized", h->virtualized);
	add_str(o, "container", h->container);
	cJSON_AddBoolToObject(o, "btf", h->btf);
	if (h->task_delayacct < 0)
		cJSON_AddNullToObject(o, "task_delayacct");
	else
		cJSON_AddBoolToObject(o, "task_delayacct", h->task_delayacct > 0);
	cJSON_AddBoolToObject(o, "pmu", h->pmu);
	if (!h->pmu)
		add_str(o, "pmu_reason", h->pmu_reason);
	add_str(o, "ci", h->ci);
	return o;
}

static cJSON *states_json(cJSON *o, const uint64_t *st, uint64_t residual)
{
	add_u64(o, "on_cpu_ns", st[TSA_ST_ONCPU]);
	add_u64(o, "runqueue_ns", st[TSA_ST_RUNQ]);
	add_u64(o, "sleeping_ns", st[TSA_ST_SLEEP]);
	add_u64(o, "uninterruptible_ns", st[TSA_ST_DISK]);
	add_u64(o, "stopped_ns", st[TSA_ST_STOPPED]);
	add_u64(o, "residual_ns", residual);
	return o;
}

static cJSON *latency_json(uint64_t sum, uint64_t n, uint64_t max)
{
	cJSON *o = cJSON_CreateObject();

	if (n)
		add_u64(o, "avg", sum / n);
	else
		cJSON_AddNullToObject(o, "avg");
	if (n)
		add_u64(o, "max", max);
	else
		cJSON_AddNullToObject(o, "max");
	add_u64(o, "count", n);
	return o;
}

static cJSON *hist_json(const uint32_t hist[TSA_HIST_STATES][TSA_HIST_SLOTS])
{
	static const int states[TSA_HIST_STATES] = {TSA_ST_RUNQ, TSA_ST_SLEEP, TSA_ST_DISK,
						    TSA_ST_STOPPED};
	cJSON *o = cJSON_CreateObject();

	for (int h = 0; h < TSA_HIST_STATES; h++) {
		cJSON *a = cJSON_CreateArray();
		int last = -1;

		for (int i = 0; i < TSA_HIST_SLOTS; i++)
			if (hist[h][i])
				last = i;
		for (int i = 0; i <= last; i++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(hist[h][i]));
		cJSON_AddItemToObject(o, state_name(states[h]), a);
	}
	return o;
}

static cJSON *exit_json(int ws, bool exited)
{
	cJSON *o = cJSON_CreateObject();
	char sig[32];

	if (!exited) {
		cJSON_AddNullToObject(o, "code");
		cJSON_AddNullToObject(o, "signal");
		return o;
	}
	if ((ws & 0x7f) == 0) {
		cJSON_AddNumberToObject(o, "code", (ws >> 8) & 0xff);
		cJSON_AddNullToObject(o, "signal");
	} else {
		cJSON_AddNullToObject(o, "code");
		cJSON_AddNumberToObject(o, "signal", ws & 0x7f);
		add_str(o, "signal_name", status_signame(ws & 0x7f, sig, sizeof(sig)));
		cJSON_AddBoolToObject(o, "core_dumped", (ws & 0x80) != 0);
	}
	return o;
}

static cJSON *thread_json(const struct thread_acct *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "tid", t->tid);
	cJSON_AddNumberToObject(o, "pid", t->pid);
	cJSON_AddNumberToObject(o, "ppid", t->ppid);
	add_str(o, "comm", t->comm);
	add_i64(o, "start_ns", t->start_ns);
	add_i64(o, "end_ns", t->end_ns);
	add_u64(o, "lifetime_ns", t->lifetime_ns);
	states_json(o, t->state_ns, t->residual_ns);
	add_u64(o, "slices", t->slices);
	add_u64(o, "voluntary_switches", t->voluntary);
	add_u64(o, "involuntary_switches", t->involuntary);
	add_u64(o, "wakeups", t->wakeups);
	add_u64(o, "migrations", t->migrations);
	add_u64(o, "untraced_switch_ins", t->untraced);
	add_u64(o, "steal_ns", t->steal_ns);
	cJSON_AddItemToObject(
	    o, "wakeup_latency_ns",
	    latency_json(t->wakeup_lat_sum, t->wakeup_lat_count, t->wakeup_lat_max));
	cJSON_AddItemToObject(o, "offcpu_hist_log2_us", hist_json(t->hist));
	if (t->have_delays) {
		cJSON *d = cJSON_CreateObject();

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
		cJSON_AddItemToObject(o, "delays", d);
	} else {
		cJSON_AddNullToObject(o, "delays");
	}
	if (t->have_below) {
		cJSON *b = cJSON_CreateObject();

		add_u64(b, "count", t->below_count);
		add_u64(b, "total_ns", t->below_ns);
		cJSON_AddItemToObject(o, "below_threshold", b);
	} else {
		cJSON_AddNullToObject(o, "below_threshold");
	}
	if (t->have_kernel) {
		cJSON *k = cJSON_CreateObject();

		add_u64(k, "sum_exec_runtime_ns", t->k_sum_exec_ns);
		add_u64(k, "run_delay_ns", t->k_run_delay_ns);
		add_u64(k, "pcount", t->k_pcount);
		add_u64(k, "nvcsw", t->k_nvcsw);
		add_u64(k, "nivcsw", t->k_nivcsw);
		cJSON_AddItemToObject(o, "kernel", k);
	} else {
		cJSON_AddNullToObject(o, "kernel");
	}
	add_u64(o, "task_start_ns", t->task_start_ns);
	add_u64(o, "boot_start_ns", t->boot_start_ns);
	cJSON_AddBoolToObject(o, "first_state_known", t->first_state_known);
	cJSON_AddBoolToObject(o, "alive_at_end", (t->flags & TSA_F_SURVIVOR) != 0);
	cJSON_AddNumberToObject(o, "execs", t->execs);
	return o;
}

static cJSON *proc_json(const struct proc_acct *p)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "pid", p->pid);
	cJSON_AddNumberToObject(o, "ppid", p->ppid);
	add_str(o, "comm", p->comm);
	add_i64(o, "start_ns", p->start_ns);
	add_i64(o, "end_ns", p->end_ns);
	cJSON_AddItemToObject(o, "exit", exit_json(p->exit_status, p->exited));
	cJSON_AddBoolToObject(o, "alive_at_end", p->alive);
	cJSON_AddNumberToObject(o, "threads", p->threads);
	cJSON_AddNumberToObject(o, "execs", p->execs);
	add_u64(o, "thread_lifetime_ns", p->thread_lifetime_ns);
	states_json(o, p->state_ns, p->residual_ns);
	return o;
}

static cJSON *totals_json(const struct run_totals *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "processes", t->processes);
	cJSON_AddNumberToObject(o, "threads", t->threads);
	add_u64(o, "lifetime_ns", t->lifetime_ns);
	states_json(o, t->state_ns, t->residual_ns);
	add_u64(o, "slices", t->slices);
	add_u64(o, "voluntary_switches", t->voluntary);
	add_u64(o, "involuntary_switches", t->involuntary);
	add_u64(o, "wakeups", t->wakeups);
	add_u64(o, "migrations", t->migrations);
	add_u64(o, "steal_ns", t->steal_ns);
	cJSON_AddItemToObject(
	    o, "wakeup_latency_ns",
	    latency_json(t->wakeup_lat_sum, t->wakeup_lat_count, t->wakeup_lat_max));
	add_u64(o, "max_threads_alive", t->max_threads_alive);
	return o;
}

static cJSON *check_json(const struct cross_check *c, const char *unit)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "available", c->available);
	if (!c->available) {
		add_str(o, "reason", c->reason);
		return o;
	}
	cJSON_AddNumberToObject(o, "compared", c->compared);
	cJSON_AddNumberToObject(o, "short_lived", c->short_lived);
	add_frac(o, "total_fraction", c->total);
	add_u64(o, "sum_ebpf", c->sum_ebpf);
	add_u64(o, "sum_kernel", c->sum_kernel);
	add_frac(o, "worst_fraction", c->worst);
	add_u64(o, unit, c->worst_abs);
	if (c->worst_tid)
		cJSON_AddNumberToObject(o, "worst_tid", c->worst_tid);
	return o;
}

static cJSON *quality_json(const struct run_quality *q)
{
	cJSON *o = cJSON_CreateObject(), *act = cJSON_CreateArray(), *un = cJSON_CreateArray();
	cJSON *cc, *lost, *notes;

	for (int i = 0; i < q->nsources; i++) {
		if (q->sources[i].active) {
			cJSON_AddItemToArray(act, cJSON_CreateString(q->sources[i].name));
		} else {
			cJSON *u = cJSON_CreateObject();

			add_str(u, "source", q->sources[i].name);
			add_str(u, "reason", q->sources[i].reason);
			cJSON_AddItemToArray(un, u);
		}
	}
	cJSON_AddItemToObject(o, "sources_active", act);
	cJSON_AddItemToObject(o, "sources_unavailable", un);
	add_u64(o, "lost_events", q->lost_events);
	add_u64(o, "map_full_drops", q->map_full_drops);
	add_u64(o, "stack_drops", q->stack_drops);
	add_u64(o, "taskstats_drops", q->taskstats_drops);
	add_u64(o, "unexpected_transitions", q->unexpected_transitions);
	add_u64(o, "untraced_switch_ins", q->untraced_switch_ins);
	add_u64(o, "unsettled_threads", q->unsettled);
	add_frac(o, "residual_percent", q->residual_percent);
	lost = cJSON_CreateObject();
	add_u64(lost, "records", q->lost.records);
	add_u64(lost, "lifetime_ns", q->lost.lifetime_ns);
	states_json(lost, (const uint64_t *)q->lost.state_ns, 0);
	cJSON_DeleteItemFromObject(lost, "residual_ns");
	cJSON_AddItemToObject(o, "lost_threads", lost);
	cc = cJSON_CreateObject();
	cJSON_AddItemToObject(cc, "runnable_vs_kernel", check_json(&q->runnable, "worst_ns"));
	cJSON_AddItemToObject(cc, "on_cpu_vs_sum_exec_runtime", check_json(&q->on_cpu, "worst_ns"));
	cJSON_AddItemToObject(cc, "runqueue_vs_run_delay", check_json(&q->runqueue, "worst_ns"));
	cJSON_AddItemToObject(cc, "slices_vs_pcount", check_json(&q->slices, "worst_count"));
	cJSON_AddItemToObject(cc, "switches_vs_nvcsw_nivcsw",
			      check_json(&q->switches, "worst_count"));
	cJSON_AddItemToObject(cc, "tree_cpu_vs_rusage", check_json(&q->tree_cpu, "worst_ns"));
	add_i64(cc, "kernel_shift_ns", q->kernel_shift_ns);
	cJSON_AddItemToObject(o, "cross_check", cc);
	notes = cJSON_CreateArray();
	for (int i = 0; i < q->nnotes; i++)
		cJSON_AddItemToArray(notes, cJSON_CreateString(q->notes[i]));
	cJSON_AddItemToObject(o, "notes", notes);
	return o;
}

static cJSON *run_json(const struct run *r)
{
	static const char *const policy[] = {"wait", "leave", "kill"};
	cJSON *o = cJSON_CreateObject(), *ex, *ru, *d, *a;
	char sig[32];

	cJSON_AddNumberToObject(o, "index", r->index);
	cJSON_AddBoolToObject(o, "warmup", r->warmup);
	add_str(o, "status", run_status_name(r->status));
	ex = cJSON_CreateObject();
	if (r->term_signal) {
		cJSON_AddNullToObject(ex, "code");
		cJSON_AddNumberToObject(ex, "signal", r->term_signal);
		add_str(ex, "signal_name", status_signame(r->term_signal, sig, sizeof(sig)));
	} else {
		cJSON_AddNumberToObject(ex, "code", r->exit_code);
		cJSON_AddNullToObject(ex, "signal");
	}
	cJSON_AddBoolToObject(ex, "core_dumped", r->core_dumped);
	cJSON_AddItemToObject(o, "exit", ex);
	if (r->interrupt_signal)
		add_str(o, "interrupted_by", status_signame(r->interrupt_signal, sig, sizeof(sig)));
	else
		cJSON_AddNullToObject(o, "interrupted_by");
	cJSON_AddNumberToObject(o, "root_pid", r->root_pid);
	add_u64(o, "wall_ns", r->wall_ns);
	add_u64(o, "user_ns", r->ru.user_ns);
	add_u64(o, "sys_ns", r->ru.sys_ns);
	cJSON_AddNumberToObject(o, "max_rss_kb", (double)r->ru.max_rss_kb);
	ru = cJSON_CreateObject();
	cJSON_AddNumberToObject(ru, "minor_faults", (double)r->ru.minflt);
	cJSON_AddNumberToObject(ru, "major_faults", (double)r->ru.majflt);
	cJSON_AddNumberToObject(ru, "voluntary_switches", (double)r->ru.nvcsw);
	cJSON_AddNumberToObject(ru, "involuntary_switches", (double)r->ru.nivcsw);
	cJSON_AddNumberToObject(ru, "inblock", (double)r->ru.inblock);
	cJSON_AddNumberToObject(ru, "oublock", (double)r->ru.oublock);
	cJSON_AddItemToObject(o, "rusage", ru);
	d = cJSON_CreateObject();
	add_str(d, "policy",
		policy[r->desc.policy >= 0 && r->desc.policy < 3 ? r->desc.policy : 0]);
	cJSON_AddNumberToObject(d, "running_at_exit", r->desc.running_at_exit);
	cJSON_AddNumberToObject(d, "reaped_orphans", r->desc.reaped_orphans);
	cJSON_AddNumberToObject(d, "killed", r->desc.killed);
	cJSON_AddNumberToObject(d, "left_running", r->desc.left_running);
	add_u64(d, "waited_ns", r->desc.waited_ns);
	cJSON_AddItemToObject(o, "descendants", d);
	cJSON_AddBoolToObject(o, "detailed", r->detailed);
	a = cJSON_AddArrayToObject(o, "processes");
	for (size_t i = 0; i < r->nprocs; i++)
		cJSON_AddItemToArray(a, proc_json(&r->procs[i]));
	a = cJSON_AddArrayToObject(o, "threads");
	for (size_t i = 0; i < r->nthreads; i++)
		cJSON_AddItemToArray(a, thread_json(&r->threads[i]));
	cJSON_AddItemToObject(o, "totals", totals_json(&r->totals));
	cJSON_AddItemToObject(o, "quality", quality_json(&r->quality));
	cJSON_AddNullToObject(o, "stacks");
	return o;
}

char *artifact_render(const struct session *s, bool pretty)
{
	cJSON *root = cJSON_CreateObject(), *tool, *cmd, *argv, *runs;
	char *text;

	if (!root)
		return NULL;
	add_str(root, "schema", ARTIFACT_SCHEMA);
	tool = cJSON_AddObjectToObject(root, "tool");
	add_str(tool, "name", "tsarun");
	add_str(tool, "version", s->tool_version);
	if (s->supervisor_max_rss_kb)
		cJSON_AddNumberToObject(tool, "supervisor_max_rss_kb",
					(double)s->supervisor_max_rss_kb);
	cJSON_AddItemToObject(root, "host", host_json(&s->host));
	cmd = cJSON_AddObjectToObject(root, "command");
	argv = cJSON_AddArrayToObject(cmd, "argv");
	for (int i = 0; i < s->argc; i++)
		cJSON_AddItemToArray(argv, cJSON_CreateString(s->argv[i]));
	add_str(cmd, "mode", s->mode ? s->mode : "run");
	runs = cJSON_AddArrayToObject(root, "runs");
	for (size_t i = 0; i < s->nruns; i++)
		cJSON_AddItemToArray(runs, run_json(&s->runs[i]));
	text = pretty ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int artifact_write(const struct session *s, const char *path, const struct artifact_opts *o,
		   char *err, size_t errlen)
{
	char *text, *tmp = NULL, *dir_copy = NULL;
	struct stat st;
	size_t len;
	int fd = -1, ret = 0;

	text = artifact_render(s, o->pretty);
	if (!text) {
		snprintf(err, errlen, "cannot render the artifact: out of memory");
		return -ENOMEM;
	}
	len = strlen(text);
	text[len] = '\0';

	/* Not a regular file (/dev/null, a FIFO, a terminal): write in place. */
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot open '%s': %s", path, strerror(-ret));
			goto out;
		}
		ret = write_all(fd, text, len);
		if (!ret)
			ret = write_all(fd, "\n", 1);
		if (ret)
			snprintf(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
		close(fd);
		goto out;
	}

	dir_copy = strdup(path);
	if (!dir_copy || asprintf(&tmp, "%s/.%s.XXXXXX", dirname(dir_copy),
				  strrchr(path, '/') ? strrchr(path, '/') + 1 : path) < 0) {
		tmp = NULL;
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create a file next to '%s': %s", path,
			 strerror(-ret));
		goto out;
	}
	ret = write_all(fd, text, len);
	if (!ret)
		ret = write_all(fd, "\n", 1);
	if (!ret && fchmod(fd, 0644))
		ret = -errno;
	if (!ret && o->owner_uid != (uid_t)-1 && fchown(fd, o->owner_uid, o->owner_gid))
		ret = -errno;
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	fd = -1;
	if (ret) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path)) {
		ret = -errno;
		snprintf(err, errlen, "cannot replace '%s': %s", path, strerror(-ret));
		unlink(tmp);
	}
out:
	free(tmp);
	free(dir_copy);
	free(text);
	return ret;
}

char *artifact_render_doctor(const struct doctor_check *c, int n, const struct host_info *h)
{
	cJSON *root = cJSON_CreateObject(), *checks, *tool;
	char *text;

	if (!root)
		return NULL;
	add_str(root, "schema", "tsarun-doctor/1");
	tool = cJSON_AddObjectToObject(root, "tool");
	add_str(tool, "name", "tsarun");
	add_str(tool, "version", TSARUN_VERSION);
	cJSON_AddItemToObject(root, "host", host_json(h));
	checks = cJSON_AddArrayToObject(root, "checks");
	for (int i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		add_str(o, "name", c[i].name);
		cJSON_AddBoolToObject(o, "available", c[i].available);
		add_str(o, "status", c[i].status);
		add_str(o, "detail", c[i].detail);
		cJSON_AddItemToArray(checks, o);
	}
	text = cJSON_Print(root);
	cJSON_Delete(root);
	return text;
}
