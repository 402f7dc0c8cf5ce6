// SPDX-License-Identifier: MIT
/* --interval for a command's run: the JSON Lines stream (probe_stream.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "metrics.h"
#include "probe.h"
#include "probe_procfs.h"
#include "run.h"
#include "probe_sched.h"
#include "stream.h"
#include "termwrap.h"
#include "lib/outfile.h"
#include "lib/vec.h"

#include "probe_stream.h"

enum stream_src {
	SRC_NONE = 0,
	SRC_EBPF,
	SRC_PROCFS,
};

/* How the lines go out. */
enum stream_out {
	OUT_BLOCKING = 0, /* a regular file: each line written whole, waiting for it */
	OUT_NONBLOCKING,  /* our own descriptor, O_NONBLOCK: the backlog takes what does not fit */
	OUT_SEND,	  /* stderr is a socket shared with the command: send(MSG_DONTWAIT) */
};

/* A line waiting for room; off: what of it is written already. */
struct pending {
	char *p;
	size_t len, off;
	uint32_t gen; /* the run it belongs to (counted in that run's figures) */
};

struct stream_probe {
	int fd;
	char name[256];
	enum stream_out out;
	char blocking_reason[192];
	uint64_t backlog_limit;
	size_t width; /* stderr's, for the warnings */
	/* The backlog: q[qhead..qn) in order, qbytes of them not written yet. */
	struct pending *q;
	size_t qhead, qn, qcap, qbytes;
	uint32_t gen;	      /* bumped at each run's arm */
	uint64_t drops_since; /* lines dropped since the last one kept (the next line says so) */
	uint64_t interval_ns;
	struct sched_probe *sched;
	struct proc_probe *proc;
	struct stream *st;
	struct run *r; /* the run being streamed (between arm and collect) */
	enum stream_src src;
	int64_t last_end; /* where the previous interval ended, from the run's start */
	size_t recs_seen; /* exit records already given to the stream */
	int err;	  /* a write failed: streaming stopped (-EPIPE: the reader left) */
	uint64_t drops;	  /* the eBPF probe's ring buffer drops at the last line */
	/* The tick's arrays, kept from one tick to the next. */
	struct thread_acct *snap, *all;
	size_t snap_cap, all_cap;
};

/* How long the end of a run waits for the backlog to go (README, tsarun.1, the schema). */
#define STREAM_FINAL_WAIT_NS 2000000000ull

static const char no_source_reason[] =
    "no source sees live threads: taskstats reports a thread only when it exits "
    "(per-interval figures need eBPF or procfs: --backend ebpf or proc)";

/*
 * How to write to fd without ever blocking the event loop. A regular file
 * (or a block device) takes every line whole, as before: a write there
 * waits for the disk, not for a reader. Anything else (a FIFO, a pipe, a
 * terminal, a socket) can stall for as long as its reader does: it is made
 * non-blocking. stderr ("-") is the command's too, and O_NONBLOCK on it
 * would reach the command's own writes (and the shell's): it is reopened
 * as a descriptor of our own, or, a socket, written with send(MSG_DONTWAIT).
 */
static void stream_out_setup(struct stream_probe *sp, bool shared)
{
	struct stat st;
	int fl, fd;

	if (fstat(sp->fd, &st)) {
		snprintf(sp->blocking_reason, sizeof(sp->blocking_reason),
			 "cannot tell what the stream is (fstat: %s): lines are written whole, "
			 "waiting for room",
			 strerror(errno));
		return;
	}
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
		snprintf(sp->blocking_reason, sizeof(sp->blocking_reason),
			 "a regular file: each line is written whole (a write waits for the disk, "
			 "never for a reader)");
		return;
	}
	/* A socket is always someone else's too (inherited): send(MSG_DONTWAIT), flags untouched. */
	if (S_ISSOCK(st.st_mode)) {
		sp->out = OUT_SEND;
		return;
	}
	if (shared && sp->fd != 2) {
		snprintf(
		    sp->blocking_reason, sizeof(sp->blocking_reason),
		    "the descriptor is the command's too and could not be reopened apart: lines "
		    "are written whole, waiting for the reader");
		return;
	}
	if (sp->fd == 2) {
		fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0) {
			snprintf(sp->blocking_reason, sizeof(sp->blocking_reason),
				 "stderr is the command's too and cannot be reopened apart (%s): "
				 "lines are written whole, waiting for the reader",
				 strerror(errno));
			return;
		}
		sp->fd = fd;
		sp->out = OUT_NONBLOCKING;
		return;
	}
	fl = fcntl(sp->fd, F_GETFL);
	if (fl < 0 || fcntl(sp->fd, F_SETFL, fl | O_NONBLOCK)) {
		snprintf(sp->blocking_reason, sizeof(sp->blocking_reason),
			 "cannot make the stream non-blocking (%s): lines are written whole, "
			 "waiting for the reader",
			 strerror(errno));
		return;
	}
	sp->out = OUT_NONBLOCKING;
}

struct stream_probe *stream_probe__new(const struct stream_probe_opts *o, struct sched_probe *sched,
				       struct proc_probe *proc)
{
	struct stream_probe *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->st = stream__new();
	if (!sp->st) {
		free(sp);
		errno = ENOMEM;
		return NULL;
	}
	sp->fd = o->fd;
	snprintf(sp->name, sizeof(sp->name), "%s", o->name);
	sp->interval_ns = o->interval_ns;
	sp->backlog_limit = o->backlog_bytes;
	sp->width = o->width;
	stream_out_setup(sp, o->shared);
	sp->sched = sched;
	sp->proc = proc;
	return sp;
}

void stream_probe__free(struct stream_probe *sp)
{
	if (!sp)
		return;
	if (sp->fd > 2)
		close(sp->fd);
	for (size_t i = sp->qhead; i < sp->qn; i++)
		free(sp->q[i].p);
	free(sp->q);
	stream__free(sp->st);
	free(sp->snap);
	free(sp->all);
	free(sp);
}

int stream_probe__error(const struct stream_probe *sp)
{
	/* A reader that leaves (head -n 3) is its choice, not tsarun's failure: reported, no error. */
	return sp && sp->err != -EPIPE ? sp->err : 0;
}

static ssize_t out_write(struct stream_probe *sp, const char *p, size_t n)
{
	if (sp->out == OUT_SEND)
		return send(sp->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	return write(sp->fd, p, n);
}

/*
 * Streaming stops: what waits is not sent (counted in its run), and the
 * run says why. SIGPIPE is ignored (main.c): a reader that left is EPIPE.
 */
static void stream_fail(struct stream_probe *sp, int err)
{
	struct run_stream *rs = sp->r ? &sp->r->stream : NULL;

	sp->err = err;
	if (err == -EPIPE)
		termwrap_say(stderr, sp->width, "tsarun: warning: ",
			     "the interval stream '%s' has no reader left (EPIPE): streaming "
			     "stopped, the command runs on",
			     sp->name);
	else
		termwrap_say(stderr, sp->width, "tsarun: ",
			     "cannot write the interval stream '%s': %s; streaming stopped",
			     sp->name, strerror(-err));
	if (rs)
		snprintf(rs->error, sizeof(rs->error), "%s: streaming stopped",
			 err == -EPIPE ? "the reader closed the stream (EPIPE)" : strerror(-err));
	for (size_t i = sp->qhead; i < sp->qn; i++) {
		if (rs && sp->q[i].gen == sp->gen) {
			rs->unsent++;
			rs->partial |= sp->q[i].off > 0;
		}
		free(sp->q[i].p);
	}
	sp->qhead = sp->qn = sp->qbytes = 0;
}

/* Write what waits, as far as the descriptor takes it now. */
static void flush(struct stream_probe *sp)
{
	while (!sp->err && sp->qhead < sp->qn) {
		struct pending *e = &sp->q[sp->qhead];
		ssize_t w = out_write(sp, e->p + e->off, e->len - e->off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0) {
			stream_fail(sp, w < 0 ? -errno : -EIO);
			return;
		}
		e->off += (size_t)w;
		sp->qbytes -= (size_t)w;
		if (e->off < e->len)
			continue; /* the rest, or EAGAIN */
		if (sp->r && e->gen == sp->gen)
			sp->r->stream.written++;
		free(e->p);
		sp->qhead++;
	}
	if (sp->qhead == sp->qn)
		sp->qhead = sp->qn = 0;
}

static int push(struct stream_probe *sp, char *line, size_t len, size_t off)
{
	struct pending *q;

	if (sp->qhead && sp->qn == sp->qcap) {
		memmove(sp->q, sp->q + sp->qhead, (sp->qn - sp->qhead) * sizeof(*sp->q));
		sp->qn -= sp->qhead;
		sp->qhead = 0;
	}
	q = vec_grow(sp->q, &sp->qcap, sp->qn + 1, sizeof(*q), 16);
	if (!q)
		return -ENOMEM;
	sp->q = q;
	sp->q[sp->qn++] = (struct pending){.p = line, .len = len, .off = off, .gen = sp->gen};
	sp->qbytes += len - off;
	if (sp->r && sp->qbytes > sp->r->stream.backlog_peak)
		sp->r->stream.backlog_peak = sp->qbytes;
	return 0;
}

/*
 * One line (taken). To a regular file: whole, now. Otherwise never
 * waiting: after what waits already, into the descriptor as far as it
 * takes it, the rest into the backlog; a line that would take the backlog
 * past its bound is dropped whole (and counted) instead, never cut, except
 * a run's last line, its closing account, which is always kept. The rest of
 * a line begun is always kept: the reader never gets half a line and then
 * another one. Returns whether the line was kept.
 */
static bool emit(struct stream_probe *sp, char *line, bool last)
{
	struct run_stream *rs = &sp->r->stream;
	size_t len = strlen(line), off = 0;

	rs->lines++;
	if (sp->err) {
		rs->unsent++;
		free(line);
		return true;
	}
	if (sp->out == OUT_BLOCKING) {
		while (off < len) {
			ssize_t w = write(sp->fd, line + off, len - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rs->unsent++;
				rs->partial |= off > 0;
				stream_fail(sp, w < 0 ? -errno : -EIO);
				break;
			}
			off += (size_t)w;
		}
		if (off == len)
			rs->written++;
		free(line);
		return true;
	}
	flush(sp);
	if (sp->err) {
		rs->unsent++;
		free(line);
		return true;
	}
	if (sp->qhead == sp->qn) {
		for (;;) {
			ssize_t w = out_write(sp, line + off, len - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (w <= 0) {
				rs->unsent++;
				rs->partial |= off > 0;
				free(line);
				stream_fail(sp, w < 0 ? -errno : -EIO);
				return true;
			}
			off += (size_t)w;
			if (off == len) {
				rs->written++;
				free(line);
				return true;
			}
		}
	}
	if (!off && !last && sp->qbytes + len > sp->backlog_limit) {
		rs->dropped++;
		free(line);
		return false;
	}
	if (push(sp, line, len, off)) {
		/* No room to remember it: a line begun cannot be finished. */
		rs->unsent++;
		rs->partial |= off > 0;
		free(line);
		if (off)
			stream_fail(sp, -ENOMEM);
	}
	return true;
}

/* The interval's totals, for the HTML report (run_stream_point); a full series counts the rest. */
static void keep_point(struct run *r, const struct stream_interval *iv)
{
	struct run_stream *rs = &r->stream;
	struct run_stream_point *p;

	if (rs->npoints >= RUN_STREAM_POINTS_MAX) {
		rs->points_beyond++;
		return;
	}
	p = vec_grow(rs->points, &rs->points_cap, rs->npoints + 1, sizeof(*p), 256);
	if (!p) {
		rs->points_beyond++;
		return;
	}
	rs->points = p;
	p = &rs->points[rs->npoints++];
	p->start_ns = iv->start_ns;
	p->end_ns = iv->end_ns;
	for (int k = 0; k < TSA_ST_NR; k++)
		p->state_ns[k] = iv->totals.state_ns[k];
}

/* Make, write and free one interval from the accounts given (none without a source). */
static void interval(struct stream_probe *sp, const struct thread_acct *a, size_t n, int64_t end_ns,
		     bool last)
{
	struct run *r = sp->r;
	struct stream_interval iv = {
	    .run = (uint32_t)r->index,
	    .warmup = r->warmup,
	    .last = last,
	    .start_ns = sp->last_end,
	    .end_ns = end_ns > sp->last_end ? end_ns : sp->last_end,
	    .root_pid = r->root_pid,
	    .sources = r->quality.sources,
	    .nsources = r->quality.nsources,
	};
	char *line;
	int ret;

	iv.source = sp->src == SRC_EBPF ? "ebpf" : sp->src == SRC_PROCFS ? "procfs" : NULL;
	iv.no_threads_reason = no_source_reason;
	iv.lost_records = -1;
	iv.dropped_lines = sp->drops_since;
	if (sp->src == SRC_EBPF) {
		uint64_t drops = sched_probe__counter(sp->sched, TSA_C_RB_DROPS);

		iv.lost_records = (int64_t)(drops - sp->drops);
		sp->drops = drops;
	}
	if (sp->src == SRC_PROCFS)
		iv.source_unmeasured = ACCT_NO_SWITCHES | ACCT_NO_WAKEUPS;
	ret = stream__interval(sp->st, a, iv.source ? n : 0, &iv);
	if (!ret && iv.source)
		keep_point(r, &iv);
	line = ret ? NULL : stream_json_line(&iv);
	if (line) {
		if (emit(sp, line, last))
			sp->drops_since = 0;
		else
			sp->drops_since++;
	} else if (!sp->err) {
		run__note(r, "stream: an interval was lost: out of memory");
	}
	stream_interval__free(&iv);
	sp->last_end = iv.end_ns;
}

static int st_arm(struct probe *pr, const struct spawn *child, struct run *r)
{
	struct stream_probe *sp = pr->ctx;

	(void)child;
	stream__reset(sp->st);
	sp->r = r;
	sp->gen++;
	sp->drops_since = 0;
	r->stream.on = true;
	r->stream.nonblocking = sp->out != OUT_BLOCKING;
	snprintf(r->stream.blocking_reason, sizeof(r->stream.blocking_reason), "%s",
		 sp->blocking_reason);
	r->stream.backlog_limit = sp->backlog_limit;
	r->stream.final_wait_limit_ns = STREAM_FINAL_WAIT_NS;
	if (sp->err)
		snprintf(r->stream.error, sizeof(r->stream.error),
			 "streaming had stopped in an earlier run (%s)",
			 sp->err == -EPIPE ? "the reader closed the stream" : strerror(-sp->err));
	sp->last_end = 0;
	sp->recs_seen = 0;
	/* The probes before this one are armed: which one's threads are streamed. */
	if (sp->sched && run_source_active(r, "ebpf"))
		sp->src = SRC_EBPF;
	else if (sp->proc && run_source_active(r, "procfs"))
		sp->src = SRC_PROCFS;
	else
		sp->src = SRC_NONE;
	if (sp->src == SRC_EBPF)
		sp->drops = sched_probe__counter(sp->sched, TSA_C_RB_DROPS);
	return 0;
}

static int st_tick(struct probe *pr, uint64_t now)
{
	struct stream_probe *sp = pr->ctx;
	const struct thread_acct *recs;
	size_t nsnap = 0, nrecs = 0, n = 0;
	int64_t end;
	int ret = 0;

	if (!sp->r)
		return 0;
	if (sp->err) {
		/* No reader: no line is made, but each is counted, not sent. */
		sp->r->stream.lines++;
		sp->r->stream.unsent++;
		return 0;
	}
	/* What waits goes first, also where epoll cannot say when there is room. */
	flush(sp);
	end = (int64_t)(now - sp->r->start_mono_ns);
	if (sp->src == SRC_EBPF) {
		/*
		 * Snapshots first, then the exit records: a thread that exits
		 * between the two has both, and its exit record (given first)
		 * counts, so that no thread's end slips to the next interval.
		 */
		ret = sched_probe__snapshot(sp->sched, &sp->snap, &sp->snap_cap, &nsnap);
		sched_probe__drain(sp->sched);
		recs = sched_probe__records(sp->sched, &nrecs);
		if (!ret && nrecs < sp->recs_seen)
			ret = -EINVAL; /* the records were taken: not this run's */
		n = nrecs - sp->recs_seen + nsnap;
		if (!ret && n > sp->all_cap) {
			struct thread_acct *a = realloc(sp->all, n * sizeof(*a));

			if (a) {
				sp->all = a;
				sp->all_cap = n;
			} else {
				ret = -ENOMEM;
			}
		}
		if (!ret) {
			/* (No memcpy from an array not allocated yet, even of nothing.) */
			if (nrecs > sp->recs_seen)
				memcpy(sp->all, recs + sp->recs_seen,
				       (nrecs - sp->recs_seen) * sizeof(*recs));
			if (nsnap)
				memcpy(sp->all + nrecs - sp->recs_seen, sp->snap,
				       nsnap * sizeof(*recs));
			sp->recs_seen = nrecs;
		}
	} else if (sp->src == SRC_PROCFS) {
		ret = proc_probe__accounts(sp->proc, sp->r->start_mono_ns, &sp->all, &sp->all_cap,
					   &n);
	}
	if (ret) {
		/* The interval is skipped: the next one covers its time (it starts where this did). */
		run__note(sp->r, "stream: cannot read the threads at an interval: %s",
			  strerror(-ret));
	} else {
		/* The snapshots are taken a moment after the tick: the interval ends with them. */
		for (size_t i = 0; i < n; i++)
			if (sp->all[i].end_ns > end)
				end = sp->all[i].end_ns;
		interval(sp, sp->all, n, end, false);
	}
	return 0;
}

/*
 * The run has ended: what waits gets STREAM_FINAL_WAIT_NS to go (the
 * command is gone, so this costs it nothing; the next run, if any, starts
 * that much later). Lines not begun by then are dropped and counted
 * unsent. A line begun stays, to be finished first if the reader comes
 * back during a later run: the reader never gets a line cut in the middle
 * of the stream. Only when tsarun exits with it unfinished is it cut.
 */
static void final_flush(struct stream_probe *sp)
{
	struct run_stream *rs = &sp->r->stream;
	uint64_t t0 = mono_ns(), now = t0;
	size_t keep = 0;

	flush(sp);
	/*
	 * An interrupted run is not held up for a reader: a signal ends tsarun
	 * at once (and one that comes during the wait ends the wait).
	 */
	while (!sp->err && sp->qhead < sp->qn && now - t0 < STREAM_FINAL_WAIT_NS &&
	       !sp->r->interrupt_signal) {
		struct pollfd pfd[2] = {{.fd = sp->fd, .events = POLLOUT},
					{.fd = outfile_cancel_fd(), .events = POLLIN}};
		size_t before = sp->qbytes;
		int ms = (int)((STREAM_FINAL_WAIT_NS - (now - t0) + 999999) / 1000000);

		if (poll(pfd, pfd[1].fd >= 0 ? 2 : 1, ms) < 0 && errno != EINTR)
			break;
		if (pfd[1].fd >= 0 && (pfd[1].revents & POLLIN))
			break;
		flush(sp);
		/* A descriptor poll cannot watch says it has room: do not spin on it. */
		if (!sp->err && sp->qbytes == before)
			nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
		now = mono_ns();
	}
	rs->final_wait_ns = mono_ns() - t0;
	for (size_t i = sp->qhead; i < sp->qn; i++) {
		struct pending *e = &sp->q[i];

		if (e->gen == sp->gen) {
			rs->unsent++;
			rs->partial |= e->off > 0;
		}
		if (e->off) {
			sp->q[sp->qhead + keep++] = *e;
		} else {
			sp->qbytes -= e->len;
			free(e->p);
		}
	}
	sp->qn = sp->qhead + keep;
}

/* Lines the reader will not get: a warning, whatever -q says (figures are missing). */
static void stream_report(struct stream_probe *sp, const struct run *r)
{
	const struct run_stream *rs = &r->stream;

	if (!rs->dropped && !rs->unsent)
		return;
	termwrap_say(
	    stderr, sp->width, "tsarun: warning: ",
	    "the interval stream '%s', run %d: %llu of %llu lines not delivered: %llu dropped "
	    "while its reader fell behind by more than the --stream-backlog (%llu bytes), %llu "
	    "unsent%s%s",
	    sp->name, r->index, (unsigned long long)(rs->dropped + rs->unsent),
	    (unsigned long long)rs->lines, (unsigned long long)rs->dropped,
	    (unsigned long long)sp->backlog_limit, (unsigned long long)rs->unsent,
	    rs->error[0] ? " (streaming stopped)"
	    : rs->unsent ? " when the wait at the run's end ran out (2 s)"
			 : "",
	    rs->partial ? "; one line was begun and not finished" : "");
}

/* After every other source: the run's threads as the artifact has them. */
static int st_collect(struct probe *pr, struct run *r)
{
	struct stream_probe *sp = pr->ctx;
	int64_t end = sp->last_end;

	if (sp->r != r) {
		sp->r = NULL;
		return 0;
	}
	if (sp->err) {
		r->stream.lines++;
		r->stream.unsent++;
	} else {
		for (size_t i = 0; i < r->nthreads; i++)
			if (r->threads[i].end_ns > end)
				end = r->threads[i].end_ns;
		interval(sp, r->threads, r->nthreads, end, true);
		final_flush(sp);
	}
	stream_report(sp, r);
	sp->r = NULL;
	return 0;
}

static int st_out_fd(struct probe *pr)
{
	struct stream_probe *sp = pr->ctx;

	return sp->fd;
}

static bool st_out_pending(struct probe *pr)
{
	struct stream_probe *sp = pr->ctx;

	return !sp->err && sp->qhead < sp->qn;
}

static int st_writable(struct probe *pr)
{
	flush(pr->ctx);
	return 0;
}

void stream_probe__as_probe(struct stream_probe *sp, struct probe *out)
{
	memset(out, 0, sizeof(*out));
	out->name = "stream";
	out->ctx = sp;
	out->arm = st_arm;
	out->tick_ns = sp->interval_ns;
	out->on_tick = st_tick;
	out->collect = st_collect;
	out->out_fd = st_out_fd;
	out->out_pending = st_out_pending;
	out->on_writable = st_writable;
}
