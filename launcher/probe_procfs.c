// SPDX-License-Identifier: MIT
/* The procfs sampling source (see probe_procfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "account.h"
#include "pidset.h"
#include "probe.h"
#include "procfs.h"
#include "probe_procfs.h"
#include "run.h"
#include "sampling.h"
#include "spawn.h"
#include "lib/procdir.h"
#include "lib/vec.h"

struct pproc {
	uint32_t pid;
	bool gone;
	uint64_t scanned_ns; /* start of the last scan that listed its threads; 0: never */
};

struct proc_probe {
	uint64_t sample_ns;
	struct smp_clock clk;
	uint32_t self;
	int procfd; /* /proc, listed at every scan */

	struct pproc *procs;
	size_t nprocs, proccap;
	struct pidset tree;   /* pid -> index + 1 in procs[] while alive; 0: not in the tree */
	struct pidset listed; /* pid -> the scan generation that last listed it in /proc */

	struct smp_thread *threads;
	size_t nthreads, threadcap;
	struct pidset live; /* tid -> index + 1 of its latest entry in threads[] */

	uint64_t gen;
	uint64_t prev_scan_ns; /* start of the previous scan */
	struct procfs_quality q;
	int err;
};

/* Read a small file relative to dirfd. Returns its length or -errno. */
static ssize_t read_at(int dirfd, const char *name, char *buf, size_t len)
{
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return n;
}

int procprobe_read_thread(int taskfd, const char *tid, struct procfs_stat *st,
			  struct procfs_schedstat *ss)
{
	char buf[1024];
	ssize_t n;
	int fd, ret;

	fd = openat(taskfd, tid, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read_at(fd, "stat", buf, sizeof(buf));
	ret = n < 0 ? (int)n : procfs_parse_stat(buf, (size_t)n, st);
	if (!ret) {
		n = read_at(fd, "schedstat", buf, sizeof(buf));
		ret = n < 0 ? (int)n : procfs_parse_schedstat(buf, (size_t)n, ss);
	}
	close(fd);
	return ret;
}

static bool gone_errno(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

struct proc_probe *proc_probe__new(uint64_t sample_ns, char *err, size_t errlen)
{
	struct proc_probe *p = calloc(1, sizeof(*p));
	struct procfs_stat st;
	struct procfs_schedstat ss;
	char tid[16];
	long hz;
	int taskfd, ret;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->sample_ns = sample_ns ? sample_ns : PROC_SAMPLE_DEFAULT_NS;
	p->self = (uint32_t)getpid();
	hz = sysconf(_SC_CLK_TCK);
	p->clk.ns_per_tick = hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000ull;
	{
		/* Read between two reads of the other: suspended time, 0 on most machines. */
		uint64_t m1 = clock_ns(CLOCK_MONOTONIC), b = clock_ns(CLOCK_BOOTTIME);
		uint64_t m = m1 + (clock_ns(CLOCK_MONOTONIC) - m1) / 2;

		p->clk.boot_minus_mono_ns = b > m ? b - m : 0;
	}
	p->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->procfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open /proc: %s", strerror(-ret));
		goto out_free;
	}
	/* Our own thread's files: the kernel has them, and they parse. */
	taskfd = openat(p->procfd, "self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (taskfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open /proc/self/task: %s", strerror(-ret));
		goto out_free;
	}
	snprintf(tid, sizeof(tid), "%ld", (long)syscall(SYS_gettid));
	ret = procprobe_read_thread(taskfd, tid, &st, &ss);
	close(taskfd);
	if (ret) {
		snprintf(err, errlen, "cannot read /proc/self/task/%s/stat and schedstat: %s", tid,
			 strerror(-ret));
		goto out_free;
	}
	return p;

out_free:
	proc_probe__free(p);
	errno = -ret;
	return NULL;
}

void proc_probe__free(struct proc_probe *p)
{
	if (!p)
		return;
	if (p->procfd >= 0)
		close(p->procfd);
	free(p->procs);
	free(p->threads);
	pidset_free(&p->tree);
	pidset_free(&p->listed);
	pidset_free(&p->live);
	free(p);
}

static int add_proc(struct proc_probe *p, uint32_t pid)
{
	struct pproc *n = vec_grow(p->procs, &p->proccap, p->nprocs + 1, sizeof(*n), 16);

	if (!n)
		return -ENOMEM;
	p->procs = n;
	p->procs[p->nprocs] = (struct pproc){.pid = pid};
	p->nprocs++;
	return pidset_put(&p->tree, pid, p->nprocs);
}

static struct smp_thread *new_thread(struct proc_probe *p)
{
	struct smp_thread *n = vec_grow(p->threads, &p->threadcap, p->nthreads + 1, sizeof(*n), 64);

	if (!n)
		return NULL;
	p->threads = n;
	return &p->threads[p->nthreads++];
}

static bool in_tree(const struct proc_probe *p, uint32_t pid)
{
	uint64_t v;

	return pidset_get(&p->tree, pid, &v) && v;
}

/*
 * New processes of the tree: pids not in the previous listing of /proc
 * whose parent is in the tree (or is tsarun: an orphan of the tree, or the
 * command). A parent that is itself new comes first or in a later pass.
 */
static int discover(struct proc_probe *p, bool baseline)
{
	struct {
		uint32_t pid, ppid;
	} *fresh = NULL;
	size_t nfresh = 0, cap = 0;
	struct procdir d;
	bool added = true;
	uint32_t pid;
	int ret = 0, n;

	p->gen++;
	procdir__init(&d, p->procfd);
	ret = procdir__rewind(&d);
	if (ret)
		return ret;
	while ((n = procdir__next(&d, &pid, NULL)) > 0) {
		uint64_t last = 0;
		struct procfs_stat st;
		char path[32];
		void *g;

		pidset_get(&p->listed, pid, &last);
		pidset_put(&p->listed, pid, p->gen);
		if (baseline || last + 1 == p->gen || in_tree(p, pid))
			continue;
		snprintf(path, sizeof(path), "%u/stat", pid);
		{
			char sb[1024];
			ssize_t len = read_at(p->procfd, path, sb, sizeof(sb));

			if (len <= 0 || procfs_parse_stat(sb, (size_t)len, &st))
				continue;
		}
		g = vec_grow(fresh, &cap, nfresh + 1, sizeof(*fresh), 32);
		if (!g) {
			ret = -ENOMEM;
			goto out;
		}
		fresh = g;
		fresh[nfresh].pid = pid;
		fresh[nfresh].ppid = (uint32_t)st.ppid;
		nfresh++;
	}
	if (n < 0)
		ret = n;
	while (added) {
		added = false;
		for (size_t i = 0; i < nfresh; i++) {
			if (!fresh[i].pid)
				continue;
			if (fresh[i].ppid == p->self || in_tree(p, fresh[i].ppid)) {
				ret = add_proc(p, fresh[i].pid);
				if (ret)
					goto out;
				fresh[i].pid = 0;
				added = true;
			}
		}
	}
out:
	free(fresh);
	return ret;
}

/* Sample every thread of one process of the tree. */
static int scan_proc(struct proc_probe *p, struct pproc *pr, uint64_t scan_ns, bool preexisting)
{
	char path[32];
	struct procdir d;
	const char *name;
	uint32_t tid;
	int taskfd, ret = 0;

	snprintf(path, sizeof(path), "%u/task", pr->pid);
	taskfd = openat(p->procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (taskfd < 0) {
		pr->gone = true;
		pidset_put(&p->tree, pr->pid, 0);
		return 0;
	}
	/* A listing that fails part way is taken as far as it went, as a short one. */
	procdir__init(&d, taskfd);
	while (procdir__next(&d, &tid, &name) > 0) {
		struct procfs_stat st;
		struct procfs_schedstat ss;
		struct smp_thread *t = NULL;
		uint64_t idx = 0, now, after;
		int r;

		r = procprobe_read_thread(taskfd, name, &st, &ss);
		now = mono_ns();
		if (r) {
			if (!gone_errno(r))
				p->q.unreadable++;
			continue;
		}
		if (pidset_get(&p->live, tid, &idx) && idx)
			t = &p->threads[idx - 1];
		if (t && t->pid == pr->pid && t->starttime_ticks == st.starttime_ticks) {
			t->mark = p->gen;
			if (t->ended || !smp_thread_sample(t, &st, &ss, now))
				continue;
			/* Its counters went back: another task took the tid (exec by a thread). */
			p->q.identity_changes++;
			smp_thread_gone(t, now);
			after = 0;
		} else {
			if (t)
				smp_thread_gone(t, now);
			/* Not there when its process was last listed: born since. */
			after = preexisting ? 0 : pr->scanned_ns ? pr->scanned_ns : p->prev_scan_ns;
		}
		t = new_thread(p);
		if (!t) {
			ret = -ENOMEM;
			goto out;
		}
		smp_thread_start(t, &st, &ss, now, after, &p->clk);
		t->pid = pr->pid;
		t->mark = p->gen;
		ret = pidset_put(&p->live, tid, p->nthreads);
		if (ret)
			goto out;
		p->q.threads_seen++;
		if (t->from_birth)
			p->q.threads_new++;
	}
	pr->scanned_ns = scan_ns;
out:
	close(taskfd);
	return ret;
}

/* One scan of the tree: new processes, then every thread; threads not seen are gone. */
static int scan(struct proc_probe *p, bool baseline)
{
	uint64_t start = mono_ns(), end;
	int ret;

	ret = discover(p, baseline);
	for (size_t i = 0; !ret && i < p->nprocs; i++)
		if (!p->procs[i].gone)
			ret = scan_proc(p, &p->procs[i], start, baseline);
	end = mono_ns();
	for (size_t i = 0; i < p->nthreads; i++) {
		struct smp_thread *t = &p->threads[i];

		if (!t->ended && t->mark != p->gen) {
			smp_thread_gone(t, end);
			p->q.threads_gone++;
		}
	}
	if (p->prev_scan_ns && start - p->prev_scan_ns > p->q.max_gap_ns)
		p->q.max_gap_ns = start - p->prev_scan_ns;
	if (end - start > p->q.max_scan_ns)
		p->q.max_scan_ns = end - start;
	p->q.scans++;
	p->prev_scan_ns = start;
	return ret;
}

static int pp_arm(struct probe *pr, const struct spawn *child, struct run *r)
{
	struct proc_probe *p = pr->ctx;
	int ret;

	p->nprocs = p->nthreads = 0;
	pidset_clear(&p->tree);
	pidset_clear(&p->live);
	memset(&p->q, 0, sizeof(p->q));
	p->prev_scan_ns = 0;
	p->err = 0;
	ret = add_proc(p, (uint32_t)child->pid);
	/* Everything in /proc now is not the tree's, but the command waiting at its barrier. */
	if (!ret)
		ret = scan(p, true);
	if (!ret && !p->nthreads)
		ret = -ESRCH;
	if (ret) {
		snprintf(pr->reason, sizeof(pr->reason), "cannot sample the command in /proc: %s",
			 strerror(-ret));
		return ret;
	}
	run__source(r, "procfs", true, NULL);
	return 0;
}

static int pp_tick(struct probe *pr, uint64_t now)
{
	struct proc_probe *p = pr->ctx;
	int ret = scan(p, false);

	/* Running out of memory loses samples, not the run. */
	if (ret && !p->err)
		p->err = ret;
	return 0;
}

/*
 * The command is a zombie: its leader's counters are final and still
 * readable, and it ended as tsarun was told (its pidfd), microseconds ago,
 * not anywhere since its last sample.
 */
static int pp_exit(struct probe *pr)
{
	struct proc_probe *p = pr->ctx;
	uint32_t root = p->nprocs ? p->procs[0].pid : 0;

	pp_tick(pr, 0);
	for (size_t i = 0; i < p->nthreads; i++) {
		struct smp_thread *t = &p->threads[i];

		if (t->tid == root && t->pid == root && t->ended && t->final)
			t->end_lo_ns = t->end_hi_ns;
	}
	return 0;
}

/* eBPF made the threads: the samples are their cross-check, matched by tid and start. */
static void cross_check(struct proc_probe *p, struct run *r)
{
	struct run_quality *q = &r->quality;
	uint64_t e[2] = {0}, k[2] = {0};

	memset(&q->procfs_on_cpu, 0, sizeof(q->procfs_on_cpu));
	memset(&q->procfs_runqueue, 0, sizeof(q->procfs_runqueue));
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct smp_thread *s = &p->threads[i];

		for (size_t j = 0; j < r->nthreads; j++) {
			struct thread_acct *t = &r->threads[j];

			if (t->tid != s->tid || t->pid != s->pid || t->have_sampled ||
			    t->source != ACCT_SRC_EBPF ||
			    t->boot_start_ns / p->clk.ns_per_tick != s->starttime_ticks)
				continue;
			smp_thread_sampled(s, t, r->start_mono_ns);
			fold_check_thread(&q->procfs_on_cpu, t->state_ns[TSA_ST_ONCPU],
					  t->sampled.on_cpu_ns, t->lifetime_ns, t->lifetime_ns,
					  t->tid, &e[0], &k[0]);
			fold_check_thread(&q->procfs_runqueue, t->state_ns[TSA_ST_RUNQ],
					  t->sampled.runqueue_ns, t->lifetime_ns, t->lifetime_ns,
					  t->tid, &e[1], &k[1]);
			break;
		}
	}
	if (q->procfs_on_cpu.available) {
		fold_check_close(&q->procfs_on_cpu, e[0], k[0]);
		fold_check_close(&q->procfs_runqueue, e[1], k[1]);
	} else {
		snprintf(q->procfs_on_cpu.reason, sizeof(q->procfs_on_cpu.reason),
			 "no sampled thread matched an eBPF thread");
		snprintf(q->procfs_runqueue.reason, sizeof(q->procfs_runqueue.reason),
			 "no sampled thread matched an eBPF thread");
	}
}

static bool ebpf_active(const struct run *r)
{
	for (int i = 0; i < r->quality.nsources; i++)
		if (!strcmp(r->quality.sources[i].name, "ebpf"))
			return r->quality.sources[i].active;
	return false;
}

static int pp_collect(struct probe *pr, struct run *r)
{
	struct proc_probe *p = pr->ctx;
	struct thread_acct *accts;
	int ret;

	/* The last look: what ended since the last tick is gone now (or left running). */
	scan(p, false);
	p->q.active = true;
	p->q.sample_ns = p->sample_ns;
	p->q.discovery = "proc-scan";
	r->quality.procfs = p->q;
	if (p->err)
		run__note(r, "procfs: samples were lost: %s", strerror(-p->err));
	if (ebpf_active(r)) {
		cross_check(p, r);
		return 0;
	}
	accts = calloc(p->nthreads ? p->nthreads : 1, sizeof(*accts));
	if (!accts)
		return -ENOMEM;
	for (size_t i = 0; i < p->nthreads; i++)
		smp_thread_acct(&p->threads[i], &accts[i], r->start_mono_ns, &p->clk);
	ret = fold_threads(r, accts, p->nthreads); /* takes the array */
	if (!ret) {
		smp_run_checks(r);
		/* What no sample saw (taskstats may add the threads later, not their samples). */
		r->quality.procfs.unseen_cpu_ns =
		    r->quality.tree_cpu.sum_kernel > r->quality.tree_cpu.sum_ebpf
			? r->quality.tree_cpu.sum_kernel - r->quality.tree_cpu.sum_ebpf
			: 0;
	}
	snprintf(r->quality.procfs_on_cpu.reason, sizeof(r->quality.procfs_on_cpu.reason),
		 "eBPF is not active");
	snprintf(r->quality.procfs_runqueue.reason, sizeof(r->quality.procfs_runqueue.reason),
		 "eBPF is not active");
	return ret;
}

int proc_probe__accounts(const struct proc_probe *p, uint64_t origin, struct thread_acct **buf,
			 size_t *cap, size_t *n)
{
	*n = 0;
	if (p->nthreads > *cap) {
		struct thread_acct *a = realloc(*buf, p->nthreads * sizeof(*a));

		if (!a)
			return -ENOMEM;
		*buf = a;
		*cap = p->nthreads;
	}
	for (size_t i = 0; i < p->nthreads; i++)
		smp_thread_acct(&p->threads[i], &(*buf)[i], origin, &p->clk);
	*n = p->nthreads;
	return 0;
}

void proc_probe__as_probe(struct proc_probe *p, struct probe *out)
{
	memset(out, 0, sizeof(*out));
	out->name = "procfs";
	out->ctx = p;
	out->arm = pp_arm;
	out->tick_ns = p->sample_ns;
	out->on_tick = pp_tick;
	out->on_exit = pp_exit;
	out->collect = pp_collect;
}
