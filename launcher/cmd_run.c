// SPDX-License-Identifier: MIT
/*
 * A command's run: the session from the outputs' plan to the files written
 * (cmd.h). The supervisor's side; the watchdog is main()'s.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lib/outfile.h"

#include "probe_bash.h"
#include "cmd.h"
#include "confine.h"
#include "gating.h"
#include "host.h"
#include "options.h"
#include "outputs.h"
#include "probe_set.h"
#include "run.h"
#include "sandbox.h"
#include "series.h"
#include "spawn.h"
#include "status.h"
#include "probe_stream.h"
#include "supervise.h"
#include "termwrap.h"
#include "textsafe.h"
#include "user.h"
#include "watchdog.h"

int cmd_run(struct tsarun_opts *o)
{
	struct session s = {0};
	struct target_user user;
	struct supervisor sv = {0};
	struct probeset *ps = NULL;
	struct spawner *spawner = NULL, *base_spawner = NULL;
	struct bash_probe *bash = NULL;
	struct outputs *out = NULL;
	struct outputs_opts oo = options_for_outputs(o);
	struct probeset_opts po = options_for_probeset(o);
	struct confine conf = {.o = options_for_confine(o), .work_dir = -1, .work_parent = -1};
	char *const *argv = o->argv;
	int argc = o->argc;
	struct supervisor base_sv = {0};
	struct gating g = {0};
	sigset_t mask, orig, cancel;
	char err[1024];
	const char *stream_name = NULL;
	bool stream_shared = false;
	int sigfd = -1, cancel_fd = -1, code = EXIT_TSARUN, stream_fd = -1;
	struct series se = {0};
	int ret;

	if (target_user__resolve(&user, o->user, err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		return EXIT_TSARUN;
	}
	if (confine_act_for(&user, err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		goto out_user;
	}
	/*
	 * Every file the run writes, planned before it runs: a typo does not
	 * cost a run, and nothing the command puts at a path is followed.
	 */
	out = outputs__plan(&oo, &user, true, err, sizeof(err));
	if (!out) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		goto out_user;
	}
	s.artifact_in_place = outputs__artifact_in_place(out) ? 1 : -1;
	if (o->interval_given)
		stream_fd = outputs__take_stream(out, &stream_name, &stream_shared);
	/* A baseline is read now, parsed once tsarun is confined, refused before the command runs. */
	if (o->gate && gating__prepare(&g,
				       &(struct gating_opts){.baseline_path = o->baseline_path,
							     .baseline_cmd = o->baseline_cmd,
							     .spec = &o->gate_spec,
							     .bash = o->bash,
							     .verbose = o->verbose},
				       err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		goto out_path;
	}

	sigemptyset(&mask);
	for (int i = 0; i < 4; i++)
		sigaddset(&mask, supervise_forwarded[i]);
	sigemptyset(&cancel);
	for (int i = 0; i < 4; i++)
		sigaddset(&cancel, supervise_forwarded[i]);
	if (watchdog_active()) {
		sigaddset(&mask, watchdog_signal());
		sigaddset(&cancel, watchdog_signal());
	}
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, &orig)) {
		fprintf(stderr, "tsarun: cannot block signals: %s\n", strerror(errno));
		goto out_path;
	}
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	/* A write that waits for a reader ends on a signal (lib/outfile.h). */
	cancel_fd = signalfd(-1, &cancel, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0 || cancel_fd < 0) {
		fprintf(stderr, "tsarun: cannot create a signalfd: %s\n", strerror(errno));
		goto out_mask;
	}
	outfile_set_cancel_fd(cancel_fd);
	/* Orphaned descendants come to us, so they are reaped and counted. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		fprintf(stderr, "tsarun: cannot become a child subreaper: %s\n", strerror(errno));
		goto out_sigfd;
	}
	/* --bash: the environment and command line the spawner hands to bash. */
	if (o->bash) {
		struct bash_probe_opts bo = {
		    .argv = o->argv,
		    .argc = o->argc,
		    .command = o->bash_command,
		    .no_follow = o->bash_no_follow,
		    .recalibrate = o->bash_recalibrate,
		    .quiet = o->quiet,
		};

		bash = bash_probe__new(&bo, &user, err, sizeof(err));
		if (!bash) {
			textsafe_term_line(stderr, "tsarun: --bash: ", err, "");
			goto out_sigfd;
		}
		argv = bash_probe__argv(bash);
		argc = bash_probe__argc(bash);
		bash_probe__work_dir(bash, &conf.work_dir, &conf.work_parent);
	}
	/* Before anything large is loaded: commands are forked from this small image. */
	{
		/*
		 * A command whose supervisor dies dies with it (its descendants are
		 * the watchdog's to end), unless --descendants leave; it runs in
		 * the job's process group, the terminal's.
		 */
		struct spawn_opts so = {
		    .pdeathsig = o->descendants == DESC_LEAVE ? 0 : SIGKILL,
		    .pgrp = watchdog_active() ? watchdog_job_pgrp() : 0,
		};

		spawner = spawner__new(argv, &user, &so, &orig);
		if (!spawner) {
			fprintf(stderr, "tsarun: cannot start the spawner process: %s\n",
				strerror(errno));
			goto out_sigfd;
		}
		if (o->baseline_cmd) {
			base_spawner = spawner__new(g.base_argv, &user, &so, &orig);
			if (!base_spawner) {
				fprintf(stderr, "tsarun: cannot start the spawner process: %s\n",
					strerror(errno));
				goto out_session;
			}
		}
	}
	/* A reader that goes away (a pipe, the stream) is an error to report, not a reason to die. */
	signal(SIGPIPE, SIG_IGN);

	s.tool_version = TSARUN_VERSION;
	s.argv = argv;
	s.argc = argc;
	s.mode = o->bash ? "bash" : "run";
	host_probe(&s.host);

	ps = probeset__new(&po);
	if (!ps) {
		fprintf(stderr, "tsarun: out of memory\n");
		goto out_session;
	}
	if (probeset__check_forced(ps, &po, err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		goto out_session;
	}
	if (bash)
		probeset__add_bash(ps, bash);
	if (stream_fd >= 0) {
		/* Last: its final line is the run's closing account, after every source's. */
		struct stream_probe_opts spo = {.fd = stream_fd,
						.name = stream_name,
						.shared = stream_shared,
						.interval_ns = o->interval_ns,
						.backlog_bytes = o->stream_backlog_bytes,
						.width = outputs_stderr_width(o->wide)};
		struct stream_probe *stp = stream_probe__new(&spo, ps->sched, ps->proc);

		if (!stp || probeset__add_stream(ps, stp)) {
			fprintf(stderr, "tsarun: cannot set up the interval stream\n");
			goto out_session;
		}
		stream_fd = -1; /* the stream's now */
		if (o->verbose)
			fprintf(stderr, "tsarun: a line every %llu ms to '%s'\n",
				(unsigned long long)(o->interval_ns / 1000000), stream_name);
	}
	conf.user = &user;
	conf.ps = ps;
	conf.g = o->gate ? &g : NULL;
	sv.o = (struct supervisor_opts){.descendants = o->descendants,
					.kill_grace_ns = o->kill_grace_ns,
					.no_sandbox = o->no_sandbox,
					.verbose = o->verbose};
	sv.name = o->argv[0];
	sv.spawner = spawner;
	sv.probes = ps->probes;
	sv.nprobes = ps->nprobes;
	sv.sigfd = sigfd;
	sv.confine = &conf;
	se.sv[SERIES_NEW] = &sv;
	if (base_spawner) {
		base_sv = sv;
		base_sv.spawner = base_spawner;
		base_sv.name = g.base_argv[0];
		se.sv[SERIES_BASE] = &base_sv;
	}
	se.ps = ps;
	se.verbose = o->verbose;
	se.quiet = o->quiet;
	/* On a terminal only: a pipe or a CI log gets no progress at all. */
	se.progress = !o->quiet && termwrap_width(STDERR_FILENO) > 0;
	ret = series_run(&se, o->warmup, o->runs, err, sizeof(err));
	if (!ret && o->gate)
		ret = gating__run(&g, &se, &s, err, sizeof(err));
	/* The session owns the runs from here on. */
	s.runs = se.runs[SERIES_NEW];
	s.nruns = se.n[SERIES_NEW];
	se.runs[SERIES_NEW] = NULL;
	se.n[SERIES_NEW] = 0;
	if (base_spawner) {
		/* The baseline command's runs are kept as figures, without rows. */
		s.base_runs = se.runs[SERIES_BASE];
		s.nbase_runs = se.n[SERIES_BASE];
		for (size_t i = 0; i < s.nbase_runs; i++)
			run__free_detail(&s.base_runs[i]);
		se.runs[SERIES_BASE] = NULL;
		se.n[SERIES_BASE] = 0;
		s.base_argv = g.base_argv;
		s.base_argc = g.base_argc;
	}
	/* tsarun was killed (its watchdog is gone): nothing more is written. */
	if (sv.abandoned || base_sv.abandoned || watchdog_gone())
		goto out_session;
	if (ret) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		goto out_session;
	}
	if (se.stopped) {
		code = status_exit_code(se.stop_side == SERIES_NEW ? &s.runs[se.stop_index]
								   : &s.base_runs[se.stop_index]);
		if (o->gate && !o->quiet)
			fprintf(stderr, "tsarun: the regression gate was not evaluated: a run did "
					"not complete\n");
	} else {
		code = 0;
	}
	if (o->gate && g.compared) {
		s.cmp = &g.cmp;
		/* The baseline's runs, for what is drawn from both sides (differential flame graphs). */
		s.cmp_base_runs = base_spawner ? s.base_runs : g.base.runs;
		s.ncmp_base_runs = base_spawner ? s.nbase_runs : g.base.nruns;
		if (g.cmp.outcome == GATE_FAIL)
			code = EXIT_GATE;
	}
	s.sandbox_known = true;
	s.sandboxed = sandbox_active();
	s.sandbox_reason = o->no_sandbox       ? "disabled with --no-sandbox"
			   : sandbox_failure() ? sandbox_failure()
			   : !sandbox_active() ? "no command was started"
					       : NULL;
	s.landlock_known = sandbox_tried();
	s.landlock_reason = sandbox_landlock_reason();
	s.privileges_known = !o->no_sandbox && conf.user;
	s.privileges_dropped = conf.dropped;
	s.privileges_uid = conf.dropped ? user.caller_uid : geteuid();
	s.privileges_reason = conf.dropped	    ? NULL
			      : conf.drop_reason[0] ? conf.drop_reason
			      : geteuid()	    ? "not root: nothing to give up"
						    : "no command was started";
	/* The stream said what failed when it did; the exit status says it too. */
	if (stream_probe__error(ps->stream) && code == 0)
		code = EXIT_TSARUN;
	if (outputs_write(&s, &oo, out)) {
		/* The caller still learns how the command ended, and that tsarun failed. */
		if (code == 0)
			code = EXIT_TSARUN;
		if (s.nruns) {
			char st[128];

			status_describe(&s.runs[s.nruns - 1], st, sizeof(st));
			fprintf(stderr,
				"tsarun: an output was not written (see above); the command: %s; "
				"tsarun exits %d\n",
				st, code);
		}
	}

out_session:
	series__free(&se);
	session__free(&s);
	probeset__free(ps);
	spawner__free(base_spawner);
	spawner__free(spawner);
out_sigfd:
	bash_probe__free(bash);
	close(sigfd);
	close(cancel_fd);
	outfile_set_cancel_fd(-1);
out_mask:
	sigprocmask(SIG_SETMASK, &orig, NULL);
out_path:
	gating__free(&g);
	if (stream_fd > 2)
		close(stream_fd);
out_user:
	outputs__free(out);
	target_user__free(&user);
	/* Whatever it leaves running from here on is meant to be (--descendants leave). */
	watchdog_clean_exit();
	return code;
}
