// SPDX-License-Identifier: MIT
/*
 * Monitor mode: tsarun -p PID. Every --sample, every thread of the process
 * is sampled in /proc (stat and schedstat, analyze/sampling.h); every
 * --interval, the threads' accounts over the interval are printed (a table
 * on stderr, or one JSON line on stdout), with their taskstats delay
 * counters over the interval when tsarun may query them. SIGINT or SIGTERM,
 * or the process's end, ends it with a report of the whole attach.
 *
 * The process's threads only, not its children: a running process's tree
 * is not ours to follow (tsarun is not its subreaper), and a report per
 * process is what users of top -H and pidstat -t expect.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "monitor.h"
#include "cmd_monitor.h"
#include "host.h"
#include "options.h"
#include "outputs.h"
#include "pidset.h"
#include "probe_set.h" /* enum backend_bits */
#include "procfs.h"
#include "probe_procfs.h"
#include "run.h"
#include "sampling.h"
#include "sandbox.h"
#include "taskstats_client.h"
#include "termwrap.h"
#include "lib/procdir.h"
#include "lib/vec.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define EXIT_TSARUN 125

struct mthread {
	struct smp_thread total; /* the whole attach */
	struct smp_thread iv;	 /* the current interval */
	bool preexisting;	 /* there when tsarun attached */
	bool done;		 /* ended, and reported in the interval it ended in */
	bool have_ts;		 /* taskstats queries answered for it */
	bool ts_iv_ok, ts_first_ok;
	uint64_t ts_gen; /* the scan whose read ts_cur goes with */
	struct ts_record ts_first, ts_iv, ts_cur;
};

struct monitor {
	const struct tsarun_opts *o;
	uint32_t pid;
	char comm[16];
	int taskfd;
	struct mthread *t;
	size_t n, cap;
	struct pidset live; /* tid -> index + 1 */
	struct smp_clock clk;
	uint64_t gen;
	uint64_t attach_ns, prev_scan_ns;
	uint64_t iv_start_ns, iv_scans, iv_gap, scans, max_gap;
	struct ts_client *ts;
	struct source_status src[4];
	int nsrc;
	bool exited;
	int err;
};

static void source(struct monitor *m, const char *name, bool active, const char *reason)
{
	struct source_status *s = &m->src[m->nsrc++];

	snprintf(s->name, sizeof(s->name), "%s", name);
	s->active = active;
	snprintf(s->reason, sizeof(s->reason), "%s", active ? "" : reason);
}

static struct mthread *add_thread(struct monitor *m)
{
	struct mthread *t = vec_grow(m->t, &m->cap, m->n + 1, sizeof(*t), 64);

	if (!t)
		return NULL;
	m->t = t;
	memset(&m->t[m->n], 0, sizeof(m->t[0]));
	return &m->t[m->n++];
}

/*
 * The thread's taskstats counters at a bound (the attach, or an interval's
 * end): the base of a thread there at the attach, of one born since, or of
 * the next interval.
 */
static void ts_take(struct monitor *m, struct mthread *t, const struct ts_record *rec, bool attach)
{
	t->ts_cur = *rec;
	t->ts_gen = m->gen;
	if (!t->have_ts && !t->preexisting) {
		/* Born during the attach: its counters started at 0. */
		memset(&t->ts_first, 0, sizeof(t->ts_first));
		for (int d = 0; d < DELAY_NR; d++)
			t->ts_first.delays[d].available = rec->delays[d].available;
		t->ts_iv = t->ts_first;
		t->ts_first_ok = t->ts_iv_ok = true;
	} else if (!t->have_ts) {
		/* First answered later than the attach: a base for the next interval only. */
		t->ts_first = t->ts_iv = *rec;
		t->ts_first_ok = attach;
		t->ts_iv_ok = attach;
	}
	t->have_ts = true;
}

/* Reads of a thread at a bound before its taskstats and schedstat are taken as agreeing. */
#define PAIR_TRIES 8

/*
 * A thread's taskstats record at a bound, taken with its schedstat read.
 * taskstats's CPU delay is the kernel's run_delay and pcount, the very
 * counters schedstat shows as runqueue time and slices: queried a moment
 * apart, a runqueue wait that ended in between makes one counter two
 * figures over two different spans. So the schedstat read is taken again
 * (st and ss updated) until the record agrees with it; a record that never
 * agrees is still used (it is the thread's, moments apart). Returns true
 * when rec holds the thread's record.
 */
static bool paired_query(struct monitor *m, const char *name, uint32_t tid, struct procfs_stat *st,
			 struct procfs_schedstat *ss, struct ts_record *rec)
{
	struct procfs_stat st2;
	struct procfs_schedstat ss2;

	if (!m->ts || st->state == 'Z' || st->state == 'X' || ts_client__query(m->ts, tid, rec))
		return false;
	for (int k = 0; k < PAIR_TRIES; k++) {
		const struct delay_counter *c = &rec->delays[DELAY_CPU];

		if (!c->available || (c->count == ss->slices && c->total_ns == ss->run_delay_ns))
			break;
		if (procprobe_read_thread(m->taskfd, name, &st2, &ss2) ||
		    st2.starttime_ticks != st->starttime_ticks)
			return false; /* gone */
		*st = st2;
		*ss = ss2;
		if (c->count == ss->slices && c->total_ns == ss->run_delay_ns)
			break;
		if (ts_client__query(m->ts, tid, rec))
			return false;
	}
	return true;
}

/* A thread's read in a scan: its sample, or a new thread. */
static int take(struct monitor *m, uint32_t tid, const struct procfs_stat *st,
		const struct procfs_schedstat *ss, uint64_t now, const struct ts_record *rec,
		bool attach)
{
	struct mthread *t = NULL;
	uint64_t idx = 0;
	bool past_unknown = attach;

	if (pidset_get(&m->live, tid, &idx) && idx)
		t = &m->t[idx - 1];
	if (t && t->total.starttime_ticks == st->starttime_ticks) {
		t->total.mark = m->gen;
		if (t->total.final && st->state != 'Z' && st->state != 'X') {
			/*
			 * Seen dead (the leader, a zombie), now alive: a thread
			 * that exec'd after the leader exited has its tid and
			 * start time. A new row from this read; its past is in
			 * its old tid's row.
			 */
			past_unknown = true;
		} else if (t->total.ended) {
			return 0;
		} else if (!smp_thread_sample(&t->total, st, ss, now)) {
			smp_thread_sample(&t->iv, st, ss, now);
			if (rec)
				ts_take(m, t, rec, attach);
			return 0;
		} else {
			/* Its counters went back: another task under the tid (exec). */
			smp_thread_gone(&t->total, now);
			smp_thread_gone(&t->iv, now);
		}
	} else if (t) {
		smp_thread_gone(&t->total, now);
		smp_thread_gone(&t->iv, now);
	}
	t = add_thread(m);
	if (!t)
		return -ENOMEM;
	t->preexisting = past_unknown;
	/* Born after the attach: after the scan that did not see it. */
	smp_thread_start(&t->total, st, ss, now, past_unknown ? 0 : m->prev_scan_ns, &m->clk);
	t->total.pid = m->pid;
	t->total.mark = m->gen;
	t->iv = t->total;
	if (rec && !t->total.ended)
		ts_take(m, t, rec, attach);
	return pidset_put(&m->live, tid, m->n);
}

/* The leader's read in a scan, kept to its end. */
struct lead {
	bool have, have_rec;
	struct procfs_stat st;
	struct procfs_schedstat ss;
	struct ts_record rec;
	uint64_t now;
};

static bool continues(const struct procfs_schedstat *n, const struct procfs_schedstat *c)
{
	return n->on_cpu_ns >= c->on_cpu_ns && n->run_delay_ns >= c->run_delay_ns &&
	       n->slices >= c->slices;
}

static uint64_t growth(const struct procfs_schedstat *n, const struct procfs_schedstat *c)
{
	return n->on_cpu_ns - c->on_cpu_ns + n->run_delay_ns - c->run_delay_ns;
}

/*
 * The process's leader, after the scan's other threads. When a thread other
 * than the leader execs, the kernel kills every other thread and gives it the
 * leader's pid and start time: under the leader's tid, counters that were
 * that thread's. Taken as the leader's, its CPU time would count twice: in
 * its own row and again as the leader's growth over one gap (or from 0, as a
 * thread born in the gap, when they are below the leader's). So when no
 * thread there at the leader's last read is left, the read goes to whichever
 * it continues most closely: the leader, or a thread that went away since
 * the leader's last read (in this scan, or in the last one when the exec
 * came between the two reads of it). A thread that took over is a new row
 * from this read on, whose past is in its old tid's row (its time since its
 * last read there is not observed).
 */
static int take_leader(struct monitor *m, const struct lead *l, size_t n0)
{
	const struct procfs_schedstat *n = &l->ss;
	struct mthread *lt = NULL, *from = NULL, *t;
	uint64_t idx = 0, best = UINT64_MAX, last;

	memcpy(m->comm, l->st.comm, sizeof(m->comm));
	if (pidset_get(&m->live, m->pid, &idx) && idx)
		lt = &m->t[idx - 1];
	if (!lt || lt->total.ended || lt->total.starttime_ticks != l->st.starttime_ticks ||
	    l->st.state == 'Z' || l->st.state == 'X')
		goto as_is;
	last = lt->total.last_ns;
	if (continues(n, &lt->total.cur)) {
		from = lt;
		best = growth(n, &lt->total.cur);
	}
	for (size_t i = 0; i < n0; i++) {
		bool seen = false, went = false;

		t = &m->t[i];
		if (t == lt || t->total.final)
			continue;
		if (!t->total.ended)
			seen = t->total.mark == m->gen, went = !seen;
		else
			went = t->total.end_hi_ns >= last;
		if (seen && t->total.first_ns <= last)
			goto as_is; /* there before and after: no exec */
		if (went && continues(n, &t->total.cur) && growth(n, &t->total.cur) < best) {
			from = t;
			best = growth(n, &t->total.cur);
		}
	}
	if (!from || from == lt)
		goto as_is;
	/* A thread that exec'd has the leader's tid: the leader ended. */
	smp_thread_gone(&lt->total, l->now);
	smp_thread_gone(&lt->iv, l->now);
	t = add_thread(m);
	if (!t)
		return -ENOMEM;
	t->preexisting = true; /* its past is another row's */
	smp_thread_start(&t->total, &l->st, &l->ss, l->now, 0, &m->clk);
	t->total.pid = m->pid;
	t->total.mark = m->gen;
	t->iv = t->total;
	if (l->have_rec)
		ts_take(m, t, &l->rec, false);
	return pidset_put(&m->live, m->pid, m->n);
as_is:
	return take(m, m->pid, &l->st, &l->ss, l->now, l->have_rec ? &l->rec : NULL, false);
}

/*
 * One scan of the process's threads; at a bound (the attach, an interval's
 * end, the last look), with their taskstats records. Returns 0, or -ESRCH
 * when the process is gone.
 */
static int scan(struct monitor *m, bool attach, bool bound)
{
	uint64_t start = mono_ns(), end;
	struct procdir d;
	const char *name;
	uint32_t tid;
	size_t listed = 0, n0 = m->n;
	struct lead lead = {.have = false};
	int ret;

	m->gen++;
	procdir__init(&d, m->taskfd);
	ret = procdir__rewind(&d);
	if (ret)
		return ret;
	/* A listing that fails part way is taken as far as it went, as a short one. */
	while (procdir__next(&d, &tid, &name) > 0) {
		struct procfs_stat st;
		struct procfs_schedstat ss;
		struct ts_record rec;
		bool have_rec = false;

		if (procprobe_read_thread(m->taskfd, name, &st, &ss))
			continue;
		if (bound)
			have_rec = paired_query(m, name, tid, &st, &ss, &rec);
		listed++;
		if (tid == m->pid && !attach) {
			lead = (struct lead){.have = true,
					     .have_rec = have_rec,
					     .st = st,
					     .ss = ss,
					     .rec = rec,
					     .now = mono_ns()};
			continue;
		}
		ret = take(m, tid, &st, &ss, mono_ns(), have_rec ? &rec : NULL, attach);
		if (ret)
			return ret;
	}
	if (lead.have && (ret = take_leader(m, &lead, n0)))
		return ret;
	end = mono_ns();
	for (size_t i = 0; i < m->n; i++) {
		struct mthread *t = &m->t[i];

		if (!t->total.ended && t->total.mark != m->gen) {
			smp_thread_gone(&t->total, end);
			smp_thread_gone(&t->iv, end);
		}
	}
	if (m->prev_scan_ns) {
		uint64_t gap = start - m->prev_scan_ns;

		if (gap > m->iv_gap)
			m->iv_gap = gap;
		if (gap > m->max_gap)
			m->max_gap = gap;
	}
	m->prev_scan_ns = start;
	m->iv_scans++;
	m->scans++;
	return listed ? 0 : -ESRCH;
}

static void delays_between(struct thread_acct *a, const struct ts_record *from,
			   const struct ts_record *to)
{
	a->have_delays = true;
	a->delays_version = to->version;
	for (int d = 0; d < DELAY_NR; d++) {
		struct delay_counter *c = &a->delays[d];

		c->available = from->delays[d].available && to->delays[d].available &&
			       to->delays[d].count >= from->delays[d].count &&
			       to->delays[d].total_ns >= from->delays[d].total_ns;
		if (!c->available)
			continue;
		c->count = to->delays[d].count - from->delays[d].count;
		c->total_ns = to->delays[d].total_ns - from->delays[d].total_ns;
	}
}

/* Print one report: the interval (from each thread's iv) or the whole attach. */
static int report(struct monitor *m, bool final, uint64_t index, uint64_t start, uint64_t end)
{
	const struct tsarun_opts *o = m->o;
	struct monitor_filter f = {
	    .tid = o->tid, .comm = o->comm, .show_idle = o->show_idle, .sort = o->sort};
	struct thread_acct *acc = calloc(m->n ? m->n : 1, sizeof(*acc));
	size_t *idx = calloc(m->n ? m->n : 1, sizeof(*idx)), na = 0;
	struct monitor_report r = {
	    .pid = m->pid,
	    .index = index,
	    .final = final,
	    .exited = m->exited,
	    .start_ns = (int64_t)(start - m->attach_ns),
	    .end_ns = (int64_t)(end - m->attach_ns),
	    .sample_ns = o->sample_ns,
	    .samples = final ? m->scans : m->iv_scans,
	    .max_gap_ns = final ? m->max_gap : m->iv_gap,
	    .sources = m->src,
	    .nsources = m->nsrc,
	};
	int ret = 0;

	if (!acc || !idx) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(r.comm, m->comm, sizeof(r.comm));
	for (size_t i = 0; i < m->n; i++) {
		struct mthread *t = &m->t[i];
		struct thread_acct *a = &acc[na];

		if (!final && t->done)
			continue;
		smp_thread_acct(final ? &t->total : &t->iv, a, m->attach_ns, &m->clk);
		a->first_state_known = !t->preexisting;
		a->pid = m->pid;
		/*
		 * Only over the report's span: a record taken with the read at
		 * its end (this scan's), from one at its start; not for a
		 * thread that ended in it (its end has no record).
		 */
		if (final && t->have_ts && t->ts_first_ok && !t->total.ended && t->ts_gen == m->gen)
			delays_between(a, &t->ts_first, &t->ts_cur);
		else if (!final && t->have_ts && t->ts_iv_ok && !t->iv.ended && t->ts_gen == m->gen)
			delays_between(a, &t->ts_iv, &t->ts_cur);
		na++;
	}
	r.threads = acc;
	r.nthreads = na;
	r.nshown = monitor_select(&f, acc, na, idx);
	r.shown = idx;
	if (o->output_json) {
		char *line = monitor_json_line(&r);

		if (!line) {
			ret = -ENOMEM;
			goto out;
		}
		if (fputs(line, stdout) < 0 || fflush(stdout))
			ret = -EIO;
		free(line);
	} else {
		monitor_print_table(stderr, &r, !o->no_header);
	}
out:
	free(acc);
	free(idx);
	return ret;
}

/* After an interval's report: each thread's next interval starts at its last sample. */
static void next_interval(struct monitor *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct mthread *t = &m->t[i];

		if (t->done)
			continue;
		if (t->iv.ended) {
			t->done = true;
			continue;
		}
		smp_thread_rebase(&t->iv);
		if (t->have_ts) {
			/* A record from an earlier bound is no base for this interval. */
			t->ts_iv = t->ts_cur;
			t->ts_iv_ok = t->ts_gen == m->gen;
		}
	}
	m->iv_scans = 0;
	m->iv_gap = 0;
}

static int setup(struct monitor *m, char *err, size_t errlen)
{
	const struct tsarun_opts *o = m->o;
	struct procfs_stat st;
	char path[64], why[192];
	long hz = sysconf(_SC_CLK_TCK);
	int ret;

	snprintf(path, sizeof(path), "/proc/%u/task", m->pid);
	m->taskfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m->taskfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "-p %u: %s", m->pid,
			 ret == -ENOENT ? "no such process" : strerror(-ret));
		return ret;
	}
	{
		char sb[1024];
		int fd = openat(m->taskfd, "../stat", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, sb, sizeof(sb)) : -1;

		if (fd >= 0)
			close(fd);
		if (n > 0 && !procfs_parse_stat(sb, (size_t)n, &st))
			memcpy(m->comm, st.comm, sizeof(m->comm));
	}
	m->clk.ns_per_tick = hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000ull;
	{
		uint64_t m1 = clock_ns(CLOCK_MONOTONIC), b = clock_ns(CLOCK_BOOTTIME);
		uint64_t mm = m1 + (clock_ns(CLOCK_MONOTONIC) - m1) / 2;

		m->clk.boot_minus_mono_ns = b > mm ? b - mm : 0;
	}
	source(m, "procfs", true, NULL);
	source(m, "ebpf", false,
	       "monitor mode samples procfs and queries taskstats (no eBPF per-interval "
	       "accounting)");
	if (o->backends && !(o->backends & BACKEND_TASKSTATS)) {
		source(m, "taskstats", false, "not selected (--backend)");
	} else {
		struct ts_record rec;

		m->ts = ts_client__new(why, sizeof(why));
		if (m->ts && (ret = ts_client__query(m->ts, m->pid, &rec))) {
			snprintf(why, sizeof(why), "cannot query the process's threads: %s%s",
				 strerror(-ret),
				 ret == -EPERM ? " (need CAP_NET_ADMIN, or root)" : "");
			ts_client__free(m->ts);
			m->ts = NULL;
		}
		if (m->ts)
			source(m, "taskstats", true, NULL);
		else
			source(m, "taskstats", false, why);
		if (!m->ts && (o->backends & BACKEND_TASKSTATS)) {
			snprintf(err, errlen,
				 "--backend: the taskstats source is not available: %s", why);
			return -ENODEV;
		}
	}
	if (o->verbose)
		for (int i = 0; i < m->nsrc; i++)
			if (!m->src[i].active)
				fprintf(stderr, "tsarun: %s unavailable: %s\n", m->src[i].name,
					m->src[i].reason);
	return 0;
}

/* The process a thread id belongs to (its Tgid), 0 when it cannot be read. */
static unsigned thread_group(unsigned tid)
{
	char path[64], buf[2048], *t;
	unsigned tgid = 0;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	if (host_read_file(path, buf, sizeof(buf)))
		return 0;
	t = strstr(buf, "\nTgid:");
	if (t && sscanf(t + 6, "%u", &tgid) != 1)
		tgid = 0;
	return tgid;
}

int monitor_main(const struct tsarun_opts *o)
{
	struct monitor m = {.o = o, .pid = o->pid, .taskfd = -1};
	struct tsarun_opts oo = *o;
	sigset_t mask, orig;
	char err[320], why[160];
	int sigfd = -1, pidfd = -1, code = EXIT_TSARUN, ret;
	uint64_t next_sample, next_boundary, intervals = 0;
	bool interrupted = false;

	if (!o->sort_given)
		oo.sort = SORT_TID;
	m.o = &oo;
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)o->pid, 0);
	if (pidfd < 0) {
		unsigned tgid = thread_group(o->pid);

		if (tgid && tgid != o->pid)
			fprintf(stderr,
				"tsarun: -p %u: that is a thread of process %u, not a process "
				"(use -p %u --tid %u)\n",
				o->pid, tgid, tgid, o->pid);
		else
			fprintf(stderr, "tsarun: -p %u: %s\n", o->pid,
				errno == ESRCH || errno == ENOENT ? "no such process"
								  : strerror(errno));
		return EXIT_TSARUN;
	}
	if (setup(&m, err, sizeof(err))) {
		fprintf(stderr, "tsarun: %s\n", err);
		goto out;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, &orig)) {
		fprintf(stderr, "tsarun: cannot block signals: %s\n", strerror(errno));
		goto out;
	}
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		fprintf(stderr, "tsarun: cannot create a signalfd: %s\n", strerror(errno));
		goto out_mask;
	}
	if (!o->no_sandbox && sandbox_enter(NULL, why, sizeof(why)))
		termwrap_say(stderr, outputs_stderr_width(o->wide),
			     "tsarun: warning: ", "running unconfined: %s", why);

	m.attach_ns = m.iv_start_ns = mono_ns();
	ret = scan(&m, true, true);
	if (ret) {
		fprintf(stderr, "tsarun: -p %u: cannot read its threads: %s\n", o->pid,
			strerror(-ret));
		goto out_sigfd;
	}
	{
		size_t i;

		for (i = 0; i < m.n && m.t[i].total.ended; i++)
			;
		if (i == m.n) {
			fprintf(stderr,
				"tsarun: -p %u: the process has ended (a zombie its parent has "
				"not reaped): nothing to monitor\n",
				o->pid);
			goto out_sigfd;
		}
	}
	if (o->tid) {
		size_t i;

		for (i = 0; i < m.n && m.t[i].total.tid != o->tid; i++)
			;
		if (i == m.n) {
			fprintf(stderr, "tsarun: --tid %u: no such thread in process %u\n", o->tid,
				o->pid);
			goto out_sigfd;
		}
	}
	next_sample = m.attach_ns + o->sample_ns;
	next_boundary = m.attach_ns + o->interval_ns;
	for (;;) {
		uint64_t now = mono_ns(),
			 due = next_sample < next_boundary ? next_sample : next_boundary;

		if (now < due) {
			struct pollfd pf[2] = {{.fd = sigfd, .events = POLLIN},
					       {.fd = pidfd, .events = POLLIN}};
			struct timespec to = {.tv_sec = (time_t)((due - now) / 1000000000ull),
					      .tv_nsec = (long)((due - now) % 1000000000ull)};

			ret = ppoll(pf, 2, &to, NULL);
			if (ret < 0 && errno != EINTR) {
				fprintf(stderr, "tsarun: poll: %s\n", strerror(errno));
				goto out_sigfd;
			}
			if (ret > 0 && (pf[0].revents & POLLIN)) {
				struct signalfd_siginfo si;

				/* Consumed, so it is not delivered when the mask is restored. */
				while (read(sigfd, &si, sizeof(si)) == sizeof(si))
					;
				interrupted = true;
				break;
			}
			if (ret > 0 && (pf[1].revents & POLLIN)) {
				m.exited = true;
				break;
			}
			continue;
		}
		ret = scan(&m, false, now >= next_boundary);
		if (ret == -ESRCH) {
			m.exited = true;
			break;
		}
		if (now >= next_boundary) {
			intervals++;
			if (report(&m, false, intervals, m.iv_start_ns, m.prev_scan_ns))
				goto out_sigfd;
			m.iv_start_ns = m.prev_scan_ns;
			next_interval(&m);
			if (o->count && intervals == o->count)
				break;
			next_boundary += o->interval_ns;
			if (next_boundary <= now)
				next_boundary = now + o->interval_ns;
		}
		next_sample += o->sample_ns;
		if (next_sample <= now)
			next_sample = now + o->sample_ns;
	}
	code = 0;
	if (interrupted || m.exited) {
		uint64_t end;

		/* The last look: what ended since the last scan is gone now. */
		scan(&m, false, true);
		end = m.prev_scan_ns;
		/* The process ended within an interval: that interval is a report too. */
		if (m.exited && (!o->count || intervals < o->count)) {
			intervals++;
			if (report(&m, false, intervals, m.iv_start_ns, end))
				code = EXIT_TSARUN;
		}
		if (report(&m, true, intervals, m.attach_ns, end))
			code = EXIT_TSARUN;
	}
out_sigfd:
	close(sigfd);
out_mask:
	sigprocmask(SIG_SETMASK, &orig, NULL);
out:
	if (m.taskfd >= 0)
		close(m.taskfd);
	close(pidfd);
	ts_client__free(m.ts);
	free(m.t);
	pidset_free(&m.live);
	return code;
}
