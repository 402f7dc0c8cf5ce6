// SPDX-License-Identifier: MIT
/* One run: spawn, arm, release, watch, collect. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "confine.h"
#include "critpath.h"
#include "evloop.h"
#include "metrics.h"
#include "probe.h"
#include "procfs.h"
#include "run.h"
#include "sandbox.h"
#include "spawn.h"
#include "status.h"
#include "supervise.h"
#include "textsafe.h"
#include "tree.h"
#include "watchdog.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

const int supervise_forwarded[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

struct watch {
	struct supervisor *sv;
	struct run *r;
	struct spawn *child;
	struct evloop *loop;
	bool main_exited;
	bool tree_empty;
	bool stop_waiting;     /* a second signal: do not wait for the rest */
	bool exit_counted;     /* descendants counted when the command exited */
	bool interrupt_passed; /* the interrupt was passed on to what the command left */
	uint64_t main_exit_ns;
	int kill_stage;		     /* 0 none, 1 SIGTERM sent, 2 SIGKILL sent */
	bool out_watched[PROBE_MAX]; /* a probe's out_fd() is in the loop, for room to write */
	bool out_refused[PROBE_MAX]; /* ... which epoll cannot watch */
	uint64_t kill_deadline_ns;
	int err;
};

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

static void add_rusage(struct run_rusage *sum, const struct rusage *ru)
{
	sum->user_ns += tv_ns(&ru->ru_utime);
	sum->sys_ns += tv_ns(&ru->ru_stime);
	if (ru->ru_maxrss > sum->max_rss_kb)
		sum->max_rss_kb = ru->ru_maxrss;
	sum->minflt += ru->ru_minflt;
	sum->majflt += ru->ru_majflt;
	sum->nvcsw += ru->ru_nvcsw;
	sum->nivcsw += ru->ru_nivcsw;
	sum->inblock += ru->ru_inblock;
	sum->oublock += ru->ru_oublock;
}

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* waitid(2) with the rusage argument the raw system call has and glibc hides. */
static int waitid_rusage(int idtype, int id, siginfo_t *si, int options, struct rusage *ru)
{
	memset(si, 0, sizeof(*si));
	return (int)syscall(SYS_waitid, idtype, id, si, options, ru);
}

static int wait_status(const siginfo_t *si)
{
	if (si->si_code == CLD_EXITED)
		return (si->si_status & 0xff) << 8;
	return (si->si_status & 0x7f) | (si->si_code == CLD_DUMPED ? 0x80 : 0);
}

/*
 * The command's exit. Its pidfd stays readable from now on: out of the
 * loop with it, or waiting for descendants would spin.
 */
static void main_reaped(struct watch *w, const siginfo_t *si, const struct rusage *ru)
{
	add_rusage(&w->r->ru, ru);
	evloop__del(w->loop, w->child->pidfd);
	w->main_exited = true;
	w->main_exit_ns = mono_ns();
	status_from_wait(w->r, wait_status(si));
}

/*
 * The command's wall time ends at its exit as the scheduler saw it (the
 * last switch-out of its last thread), not when tsarun got to see it:
 * tsarun, one more task on a loaded machine, noticed 2-5 ms late there,
 * once 82 ms (291 ms for a command of 209 ms). It can also notice early:
 * the exit makes the command reapable (exit_notify()) before its last
 * switch-out, with preemption on in between, so a command preempted or
 * whose virtual CPU stops there is reaped before it leaves its CPU. The
 * wall then ended before the command did, and its lifetime exceeded it.
 * So the scheduler's end is taken either way. Without eBPF, the notice.
 */
void supervise_wall_to_exit(struct run *r)
{
	if (!run_source_active(r, "ebpf"))
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct proc_acct *p = &r->procs[i];

		if (p->pid == r->root_pid && p->exited && p->end_ns > 0)
			r->wall_ns = (uint64_t)p->end_ns;
	}
}

/*
 * Reap what has exited: the command, and orphans reparented to tsarun.
 * The command is born with the spawner's exit signal, 0, but exec(2) resets
 * it to SIGCHLD, so a waitid(P_ALL) can reap it as well as the pidfd: it is
 * recognised by its pid either way. The tree is empty when the command is
 * gone and waitid() finds no child.
 */
static void reap(struct watch *w)
{
	struct rusage ru;
	siginfo_t si;

	if (!w->main_exited) {
		int ret;

		/* Exited: a last look for the sources before it is reaped (a zombie keeps its counters). */
		do
			ret = waitid_rusage(P_PIDFD, w->child->pidfd, &si,
					    WEXITED | WNOHANG | WNOWAIT | __WALL, NULL);
		while (ret < 0 && errno == EINTR);
		if (!ret && si.si_pid)
			for (int i = 0; i < w->sv->nprobes; i++)
				if (w->sv->probes[i].armed && w->sv->probes[i].on_exit)
					w->sv->probes[i].on_exit(&w->sv->probes[i]);
		do
			ret = waitid_rusage(P_PIDFD, w->child->pidfd, &si,
					    WEXITED | WNOHANG | __WALL, &ru);
		while (ret < 0 && errno == EINTR);
		if (!ret && si.si_pid)
			main_reaped(w, &si, &ru);
	}
	w->tree_empty = false;
	for (;;) {
		if (waitid_rusage(P_ALL, 0, &si, WEXITED | WNOHANG, &ru) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				w->tree_empty = w->main_exited;
			return;
		}
		if (si.si_pid == 0)
			return; /* children remain, none has exited */
		if (si.si_pid == w->child->pid && !w->main_exited) {
			main_reaped(w, &si, &ru);
			continue;
		}
		add_rusage(&w->r->ru, &ru);
		w->r->desc.reaped_orphans++;
	}
}

static int on_pidfd(void *ctx, uint32_t events)
{
	reap(ctx);
	return 0;
}

/* Stopped by a signal (T), where a signal other than SIGKILL stays pending. */
static bool stopped(pid_t pid)
{
	struct procfs_stat st;

	return !tree_read_stat(pid, &st) && st.state == 'T';
}

/*
 * Send sig to every live process of the tree, and SIGCONT to those stopped
 * (as a shell does to a stopped job), so that it is acted on. Returns how
 * many it reached.
 */
static uint32_t signal_descendants(int sig, pid_t spawner_pid)
{
	uint32_t sent = 0;
	pid_t *pids;
	size_t n;

	if (tree_descendants(getpid(), &pids, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (pids[i] == spawner_pid || kill(pids[i], sig))
			continue;
		sent++;
		if (sig != SIGKILL && stopped(pids[i]))
			kill(pids[i], SIGCONT);
	}
	free(pids);
	return sent;
}

/*
 * SIGINT, SIGTERM, SIGHUP, SIGQUIT. The first goes to the command (and on
 * to a stopped command with SIGCONT); once it has exited, the watch loop
 * passes it on to what the command left running and gives that
 * --kill-grace. A second one kills a command still running, and stops the
 * wait for the rest at once.
 */
/*
 * The watchdog is gone (killed): tsarun was killed, as far as its caller
 * can tell. The command and what it started go with it, as --descendants
 * says (left running with leave), and the run ends unwritten.
 */
static void on_watchdog_gone(struct watch *w)
{
	watchdog_note_gone();
	w->sv->abandoned = true;
	w->stop_waiting = true;
	if (w->sv->o.descendants == DESC_LEAVE)
		return;
	if (!w->main_exited)
		syscall(SYS_pidfd_send_signal, w->child->pidfd, SIGKILL, NULL, 0);
	signal_descendants(SIGKILL, spawner__pid(w->sv->spawner));
}

static void on_interrupt(struct watch *w, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	/*
	 * A signal from the terminal already reached a command in the job's
	 * process group; the watchdog passes it on marked as such.
	 */
	bool fwd_tty = false, forwarded = watchdog_forwarded(si, &fwd_tty);
	bool from_tty = forwarded ? fwd_tty : si->ssi_code == SI_KERNEL;
	pid_t job = watchdog_active() ? watchdog_job_pgrp() : getpgrp();
	bool first = !w->r->interrupt_signal;

	if (first) {
		w->r->interrupt_signal = sig;
		w->r->interrupt_tty = from_tty;
	}
	if (!w->sv->interrupted)
		w->sv->interrupted = sig;
	w->r->status = RUN_INTERRUPTED;
	if (!w->main_exited) {
		if (!first) {
			syscall(SYS_pidfd_send_signal, w->child->pidfd, SIGKILL, NULL, 0);
			w->stop_waiting = true;
			return;
		}
		if (!from_tty || getpgid(w->child->pid) != job)
			syscall(SYS_pidfd_send_signal, w->child->pidfd, sig, NULL, 0);
		if (stopped(w->child->pid))
			syscall(SYS_pidfd_send_signal, w->child->pidfd, SIGCONT, NULL, 0);
		return;
	}
	if (first && w->sv->o.descendants == DESC_WAIT)
		return;
	/* A second signal, or --descendants kill under way: stop waiting. */
	if (!from_tty)
		signal_descendants(sig, spawner__pid(w->sv->spawner));
	w->stop_waiting = true;
}

static int on_signal(void *ctx, uint32_t events)
{
	struct watch *w = ctx;
	struct signalfd_siginfo si;
	ssize_t n;

	for (;;) {
		n = read(w->sv->sigfd, &si, sizeof(si));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(si))
			break;
		if (si.ssi_signo == SIGCHLD)
			reap(w);
		else if ((int)si.ssi_signo == watchdog_signal())
			on_watchdog_gone(w);
		else
			on_interrupt(w, &si);
	}
	/* SIGCHLD can be coalesced with one already consumed: reap anyway. */
	reap(w);
	return 0;
}

static int on_probe(void *ctx, uint32_t events)
{
	struct probe *p = ctx;

	return p->on_ready ? p->on_ready(p) : 0;
}

static int on_out(void *ctx, uint32_t events)
{
	struct probe *p = ctx;

	(void)events; /* EPOLLERR (no reader left) too: the write says what happened */
	return p->on_writable ? p->on_writable(p) : 0;
}

/*
 * An output written without blocking (the interval stream) is watched for
 * room only while something waits to go there: a descriptor that always
 * has room would wake the loop at once, every time. A descriptor epoll
 * cannot watch is left out: its probe writes at its ticks instead.
 */
static void watch_outputs(struct watch *w)
{
	struct supervisor *sv = w->sv;

	for (int i = 0; i < sv->nprobes && i < PROBE_MAX; i++) {
		struct probe *p = &sv->probes[i];
		bool want = p->armed && p->out_fd && p->out_pending && p->out_pending(p);

		if (want == w->out_watched[i] || (want && w->out_refused[i]))
			continue;
		if (want) {
			w->out_watched[i] =
			    !evloop__add_events(w->loop, p->out_fd(p), EPOLLOUT, on_out, p);
			w->out_refused[i] = !w->out_watched[i];
		} else {
			evloop__del(w->loop, p->out_fd(p));
			w->out_watched[i] = false;
		}
	}
}

/* Live processes of the tree: tsarun's descendants, its spawner and that one's excepted. */
static uint32_t count_descendants(pid_t spawner_pid)
{
	pid_t *pids;
	size_t n, count = 0;

	if (tree_descendants(getpid(), &pids, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (pids[i] != spawner_pid)
			count++;
	free(pids);
	return (uint32_t)count;
}

static int watch_loop(struct watch *w, struct evloop *l)
{
	struct supervisor *sv = w->sv;
	uint64_t next_tick[PROBE_MAX] = {0};
	int ret;

	for (int i = 0; i < sv->nprobes && i < PROBE_MAX; i++)
		if (sv->probes[i].armed && sv->probes[i].tick_ns)
			next_tick[i] = mono_ns() + sv->probes[i].tick_ns;
	reap(w);
	for (;;) {
		uint64_t now = mono_ns(), deadline = UINT64_MAX;
		int timeout;

		/* tsarun was killed: what had to end was ended, nothing is collected. */
		if (sv->abandoned)
			return 0;
		for (int i = 0; i < sv->nprobes && i < PROBE_MAX; i++) {
			if (!next_tick[i])
				continue;
			if (now >= next_tick[i]) {
				sv->probes[i].on_tick(&sv->probes[i], now);
				next_tick[i] += sv->probes[i].tick_ns;
				if (next_tick[i] <= now)
					next_tick[i] = now + sv->probes[i].tick_ns;
			}
			if (next_tick[i] < deadline)
				deadline = next_tick[i];
		}
		if (w->main_exited) {
			if (w->tree_empty || w->stop_waiting)
				return 0;
			if (sv->o.descendants == DESC_LEAVE)
				return 0;
			/*
			 * Interrupted, and the command has now exited: what it left
			 * running gets the same signal (a terminal's already did) and
			 * --kill-grace to end; a second signal stops the wait at once.
			 */
			if (w->r->interrupt_signal && sv->o.descendants == DESC_WAIT) {
				if (!w->interrupt_passed) {
					w->interrupt_passed = true;
					if (!w->r->interrupt_tty)
						signal_descendants(w->r->interrupt_signal,
								   spawner__pid(sv->spawner));
					w->kill_deadline_ns = now + sv->o.kill_grace_ns;
				} else if (now >= w->kill_deadline_ns) {
					return 0; /* what remains is reported as left running */
				}
				if (w->kill_deadline_ns < deadline)
					deadline = w->kill_deadline_ns;
			}
			if (sv->o.descendants == DESC_KILL) {
				if (w->kill_stage == 0) {
					w->r->desc.killed =
					    signal_descendants(SIGTERM, spawner__pid(sv->spawner));
					w->kill_stage = 1;
					w->kill_deadline_ns = now + sv->o.kill_grace_ns;
				} else if (w->kill_stage == 1 && now >= w->kill_deadline_ns) {
					signal_descendants(SIGKILL, spawner__pid(sv->spawner));
					w->kill_stage = 2;
				}
				if (w->kill_stage == 1 && w->kill_deadline_ns < deadline)
					deadline = w->kill_deadline_ns;
			}
		}
		watch_outputs(w);
		timeout = -1;
		if (deadline != UINT64_MAX)
			timeout = deadline > now ? (int)((deadline - now + 999999) / 1000000) : 0;
		ret = evloop__run_once(l, timeout);
		if (ret < 0)
			return ret;
		if (w->main_exited && !w->exit_counted) {
			w->exit_counted = true;
			/*
			 * waitid() said children remain; /proc may not show them yet
			 * (a child in the middle of fork or exec): at least one.
			 */
			if (!w->tree_empty) {
				w->r->desc.running_at_exit =
				    count_descendants(spawner__pid(w->sv->spawner));
				if (!w->r->desc.running_at_exit)
					w->r->desc.running_at_exit = 1;
			}
		}
	}
}

int supervise_run(struct supervisor *sv, struct run *r, char *err, size_t errlen)
{
	struct spawn child;
	struct spawn_result sres;
	struct watch w = {.sv = sv, .r = r, .child = &child};
	struct evloop *l;
	int ret;

	r->desc.policy = sv->o.descendants;
	l = evloop__new();
	if (!l) {
		ret = -errno;
		snprintf(err, errlen, "cannot create the event loop: %s", strerror(-ret));
		return ret;
	}
	w.loop = l;
	ret = spawn__order(sv->spawner);
	/* The sandbox's filter, which goes on below, is built while the spawner forks. */
	if (!ret && sv->confine && !sv->confine->done && !sv->o.no_sandbox && !sandbox_tried()) {
		struct sandbox_opts so;
		int dirs[32];

		confine_sandbox_opts(sv->confine, &so, dirs, 32);
		sandbox_prepare(&so);
	}
	ret = ret ? ret : spawn__take(&child, sv->spawner);
	if (ret) {
		snprintf(err, errlen, "cannot create the child process: %s", strerror(-ret));
		goto out_loop;
	}
	r->root_pid = (uint32_t)child.pid;

	/* The exec barrier: every probe goes in place while the child waits. */
	for (int i = 0; i < sv->nprobes; i++) {
		struct probe *p = &sv->probes[i];

		p->armed = false;
		if (!p->arm) {
			p->armed = true;
		} else {
			ret = p->arm(p, &child, r);
			if (ret) {
				if (!p->reason[0])
					snprintf(p->reason, sizeof(p->reason), "%s",
						 strerror(-ret));
				run__source(r, p->name, false, p->reason);
				continue;
			}
			p->armed = true;
		}
		if (p->fd && p->fd(p) >= 0) {
			ret = evloop__add(l, p->fd(p), on_probe, p);
			if (ret) {
				snprintf(err, errlen, "cannot watch the %s source: %s", p->name,
					 strerror(-ret));
				goto out_child;
			}
		}
	}
	ret = evloop__add(l, sv->sigfd, on_signal, &w);
	if (!ret)
		ret = evloop__add(l, child.pidfd, on_pidfd, &w);
	if (ret) {
		snprintf(err, errlen, "cannot watch the command: %s", strerror(-ret));
		goto out_child;
	}

	/*
	 * Everything that needs privilege or loads code is done: the probes are
	 * loaded and armed. The confinement (root given up, Landlock, the
	 * filter) goes on before the command is released, so it never runs
	 * beside an unconfined tsarun (it is a process of its own already,
	 * which none of it reaches).
	 */
	if (sv->confine && !sv->confine->done) {
		struct confine *c = sv->confine;

		for (int i = 0; !sv->o.no_sandbox && i < sv->nprobes; i++) {
			struct probe *p = &sv->probes[i];

			if (!p->armed || !p->seal)
				continue;
			ret = p->seal(p);
			if (ret && sv->o.verbose)
				fprintf(stderr, "tsarun: %s: cannot prepare for the sandbox: %s\n",
					p->name, strerror(-ret));
		}
		ret = confine_supervisor(c, err, errlen);
		if (ret)
			goto out_child;
	}
	r->start_mono_ns = mono_ns();
	for (int i = 0; i < sv->nprobes; i++) {
		struct probe *p = &sv->probes[i];

		if (p->armed && p->on_release)
			p->on_release(p, r->start_mono_ns);
	}
	ret = spawn__release(&child, &sres);
	if (ret) {
		snprintf(err, errlen, "cannot release the child: %s", strerror(-ret));
		goto out_child;
	}
	if (sres.stage != SPAWN_OK) {
		r->status = RUN_NOT_STARTED;
		if (sres.stage == SPAWN_EXEC) {
			r->exit_code = spawn_exec_exit_code(sres.err);
			/* The command's name is its text: escaped. */
			fputs("tsarun: cannot execute '", stderr);
			textsafe_fput(stderr, textsafe_term, sv->name, TEXTSAFE_NUL);
			fprintf(stderr, "': %s\n", strerror(sres.err));
		} else {
			r->exit_code = 125;
			fprintf(stderr, "tsarun: cannot %s for '",
				sres.stage == SPAWN_CREDS ? "switch user" : "set up the command");
			textsafe_fput(stderr, textsafe_term, sv->name, TEXTSAFE_NUL);
			fprintf(stderr, "': %s\n", strerror(sres.err));
		}
	}

	ret = watch_loop(&w, l);
	if (ret < 0) {
		snprintf(err, errlen, "event loop failed: %s", strerror(-ret));
		goto out_child;
	}
	if (sv->abandoned) {
		snprintf(err, errlen, "tsarun was killed: the run is not written");
		ret = -ECANCELED;
		goto out_child;
	}
	r->wall_ns = w.main_exit_ns - r->start_mono_ns;
	r->desc.waited_ns = mono_ns() - w.main_exit_ns;
	if (!w.tree_empty)
		r->desc.left_running = count_descendants(spawner__pid(sv->spawner));

	for (int i = 0; i < sv->nprobes; i++) {
		struct probe *p = &sv->probes[i];

		if (!p->armed || !p->collect)
			continue;
		ret = p->collect(p, r);
		if (ret) {
			run__source(r, p->name, false, p->reason[0] ? p->reason : strerror(-ret));
			run__note(r, "%s: collecting failed: %s", p->name, strerror(-ret));
		}
	}
	supervise_wall_to_exit(r);
	/* The critical path ends where the wall time does, now final. */
	ret = r->timeline ? critpath_compute(r) : 0;
	if (ret)
		run__note(r, "critical path: %s", strerror(-ret));
	ret = 0;
out_child:
	spawn__free(&child);
out_loop:
	evloop__free(l);
	return ret;
}
