// SPDX-License-Identifier: MIT
/*
 * tsarun: run a command and account for where every thread's time went.
 *
 * main() parses, dispatches, and maps every outcome to the documented exit
 * codes: the command's own status, 128+N for a signal, 125 for tsarun's own
 * errors, 126/127 when the command cannot be executed or found. Nothing
 * below main() exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fscreds.h"
#include "lib/outfile.h"

#include "bashprobe.h"
#include "artifact.h"
#include "attach.h"
#include "confine.h"
#include "delayacct.h"
#include "doctor.h"
#include "gate_report.h"
#include "gating.h"
#include "host.h"
#include "options.h"
#include "outputs.h"
#include "probes.h"
#include "report_html.h"
#include "run.h"
#include "sandbox.h"
#include "series.h"
#include "spawn.h"
#include "stacks.h"
#include "streamprobe.h"
#include "trace.h"
#include "status.h"
#include "supervise.h"
#include "table.h"
#include "export.h"
#include "termwrap.h"
#include "textsafe.h"
#include "user.h"
#include "privdrop.h"
#include "watchdog.h"

#define EXIT_TSARUN 125
#define EXIT_GATE   3 /* the command succeeded, the regression gate failed */

/*
 * Whom tsarun works for: under sudo, the files it makes or opens for the
 * user are made with the user's rights (lib/fscreds.h), and what the
 * command's user could have put in place is read with that user's. 0 or
 * -errno with a message.
 */
static int act_for(const struct target_user *u, char *err, size_t errlen)
{
	int ret = 0;

	if (u->on_behalf)
		ret = fscreds_set_default(&(struct fscreds){.uid = u->caller_uid,
							    .gid = u->caller_gid,
							    .groups = u->caller_groups,
							    .ngroups = u->caller_ngroups});
	else
		ret = fscreds_set_default(NULL);
	if (!ret && u->change && u->uid != 0)
		ret = fscreds_set_reader(&(struct fscreds){
		    .uid = u->uid, .gid = u->gid, .groups = u->groups, .ngroups = u->ngroups});
	if (ret)
		snprintf(err, errlen, "cannot act for the user: %s", strerror(-ret));
	return ret;
}

static int run_main(struct tsarun_opts *o)
{
	struct session s = {0};
	struct target_user user;
	struct supervisor sv = {0};
	struct probeset *ps = NULL;
	struct spawner *spawner = NULL, *base_spawner = NULL;
	struct bash_probe *bash = NULL;
	struct outputs *out = NULL;
	struct confine conf = {.o = o, .work_dir = -1, .work_parent = -1};
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
	if (act_for(&user, err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		goto out_user;
	}
	/*
	 * Every file the run writes, planned before it runs: a typo does not
	 * cost a run, and nothing the command puts at a path is followed.
	 */
	out = outputs__plan(o, &user, true, err, sizeof(err));
	if (!out) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		goto out_user;
	}
	s.artifact_in_place = outputs__artifact_in_place(out) ? 1 : -1;
	if (o->interval_given)
		stream_fd = outputs__take_stream(out, &stream_name, &stream_shared);
	/* A baseline is read now, parsed once tsarun is confined, refused before the command runs. */
	if (o->gate && gating__prepare(&g, o, err, sizeof(err))) {
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
		bash = bash_probe__new(o, &user, err, sizeof(err));
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

	ps = probeset__new(o);
	if (!ps) {
		fprintf(stderr, "tsarun: out of memory\n");
		goto out_session;
	}
	if (probeset__check_forced(ps, o, err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		goto out_session;
	}
	if (bash)
		probeset__add_bash(ps, bash);
	if (stream_fd >= 0) {
		/* Last: its final line is the run's closing account, after every source's. */
		struct stream_probe *stp =
		    stream_probe__new(stream_fd, stream_name, stream_shared, o->interval_ns,
				      o->stream_backlog_bytes, ps->sched, ps->proc);

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
	sv.o = o;
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
	if (outputs_write(&s, o, out)) {
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

/* tsarun compare BASE.json NEW.json: the same verdict, offline. */
/*
 * compare and report read artifacts anyone may have written: they do it
 * under the supervisor's filter (sandbox.h), which allows all they need.
 */
static int confine(const struct tsarun_opts *o, struct outputs **out)
{
	struct target_user u;
	struct sandbox_opts so = {.work_dir = -1, .work_parent = -1};
	char why[600];
	int dirs[32], ret = 0;

	if (target_user__resolve(&u, NULL, why, sizeof(why)) || act_for(&u, why, sizeof(why))) {
		textsafe_term_line(stderr, "tsarun: ", why, "");
		return -EINVAL;
	}
	/* Its files (--junit, --markdown, the step summary), planned as a run's are. */
	if (out) {
		*out = outputs__plan(o, NULL, false, why, sizeof(why));
		if (!*out) {
			textsafe_term_line(stderr, "tsarun: ", why, "");
			ret = -EINVAL;
			goto out;
		}
	}
	if (o->no_sandbox)
		goto out;
	/* Nothing here needs a privilege: under sudo, the invoking user; root keeps its file rights. */
	if (geteuid() == 0) {
		struct privdrop_opts po = {
		    .change_user = u.on_behalf,
		    .uid = u.caller_uid,
		    .gid = u.caller_gid,
		    .groups = u.caller_groups,
		    .ngroups = u.caller_ngroups,
		    .keep = u.on_behalf ? 0 : privdrop_caps(PRIVDROP_NEED_ROOT_FS),
		};

		if (privdrop_apply(&po, why, sizeof(why)))
			fprintf(stderr, "tsarun: warning: keeping root: %s\n", why);
	}
	so.nwrite_dirs = outfile_dirs(dirs, 32);
	so.write_dirs = dirs;
	if (sandbox_enter(&so, why, sizeof(why)))
		fprintf(stderr, "tsarun: warning: running unconfined: %s\n", why);
out:
	target_user__free(&u);
	return ret;
}

static int compare_main(const struct tsarun_opts *o)
{
	struct session base = {0}, new = {0};
	struct gate_side bside = {0}, nside = {0};
	struct comparison cmp = {
	    .baseline_kind = "artifact", .baseline_name = o->compare_base, .offline = true};
	char err[1536], what[600], nwhat[600];
	char *base_text = NULL, *new_text = NULL, *cmp_text = NULL;
	struct outputs *out = NULL;
	int code = EXIT_TSARUN, ret;
	bool color, html = o->html_path != NULL;

	if (confine(o, &out))
		return EXIT_TSARUN;
	ret =
	    artifact_read(o->compare_base,
			  &(struct artifact_read_opts){
			      .what = "baseline", .detail = html, .text = html ? &base_text : NULL},
			  &base, err, sizeof(err));
	if (!ret)
		ret = artifact_read(o->compare_new,
				    &(struct artifact_read_opts){.what = "new artifact",
								 .detail = html,
								 .text = html ? &new_text : NULL},
				    &new, err, sizeof(err));
	if (ret)
		goto out_err;
	if (gate_side_init(&bside, base.runs, base.nruns, &base.host) ||
	    gate_side_init(&nside, new.runs, new.nruns, &new.host)) {
		snprintf(err, sizeof(err), "out of memory");
		goto out_err;
	}
	snprintf(what, sizeof(what), "baseline '%s'", o->compare_base);
	snprintf(nwhat, sizeof(nwhat), "new artifact '%s'", o->compare_new);
	ret = gate_check_mode(base.mode, new.mode, what, nwhat, err, sizeof(err));
	if (!ret)
		ret = gate_check_available(&o->gate_spec, &bside, what, err, sizeof(err));
	if (!ret)
		ret = gate_check_runs(&bside, what, err, sizeof(err));
	if (!ret) {
		snprintf(what, sizeof(what), "new artifact '%s'", o->compare_new);
		ret = gate_check_available(&o->gate_spec, &nside, what, err, sizeof(err));
	}
	/* Offline no run can be added: a short side could only be inconclusive. */
	if (!ret)
		ret = gate_check_runs(&nside, what, err, sizeof(err));
	if (ret)
		goto out_err;
	cmp.base_command = session_command(&base);
	cmp.new_command = session_command(&new);
	ret = gate_compare(&o->gate_spec, &bside, &nside, false, &cmp);
	if (ret) {
		snprintf(err, sizeof(err), "cannot compare: %s", strerror(-ret));
		goto out_err;
	}
	outputs_stamp(&cmp);
	color = outputs_use_color(o, stdout);
	if (!o->quiet)
		gate_report_comparison(stdout, &cmp, o->compare_new, color,
				       o->wide ? 0 : termwrap_width(STDOUT_FILENO));
	fflush(stdout);
	code = cmp.outcome == GATE_FAIL ? EXIT_GATE : 0;
	if (outputs_gate(&cmp, o, o->compare_new, out) && code == 0)
		code = EXIT_TSARUN;
	if (outputs_flame_diff(
		out,
		&(struct comparison_sides){
		    .base = base.runs, .nbase = base.nruns, .new = new.runs, .nnew = new.nruns},
		o->compare_new, o->quiet) &&
	    code == 0)
		code = EXIT_TSARUN;
	if (html) {
		struct session cs = {.cmp = &cmp};
		struct report_html_side bs = {.artifact = base_text,
					      .artifact_len = strlen(base_text),
					      .s = &base,
					      .name = o->compare_base};
		struct report_html h = {
		    .run = {.artifact = new_text,
			    .artifact_len = strlen(new_text),
			    .s = &new,
			    .name = o->compare_new},
		    .base = &bs,
		    .cmp = &cmp,
		};

		cmp_text = artifact_render_comparison(&cs);
		h.comparison = cmp_text;
		if ((!cmp_text || outputs_html(out, &h)) && code == 0)
			code = EXIT_TSARUN;
		if (!cmp_text)
			fprintf(stderr, "tsarun: cannot write the HTML report '%s': %s\n",
				o->html_path, strerror(ENOMEM));
	}
	goto out;
out_err:
	textsafe_term_line(stderr, "tsarun: ", err, "");
out:
	free(base_text);
	free(new_text);
	free(cmp_text);
	outputs__free(out);
	comparison__free(&cmp);
	gate_side_free(&bside);
	gate_side_free(&nside);
	session__free(&base);
	session__free(&new);
	return code;
}

/* tsarun report --format folded|svg: the last run's stacks, as --flame wrote them. */
static int report_stacks(const struct tsarun_opts *o, const struct session *s, const char *command)
{
	static const char *const views[] = {"offcpu", "oncpu", "wall"};
	const struct run *r = &s->runs[s->nruns - 1];
	int ret;

	if (!r->stacks) {
		textsafe_term_line(stderr, "tsarun: report: '", o->report_artifact,
				   "' has no stacks: record them with --stacks (where threads "
				   "blocked) or --flame (and where they ran)");
		return EXIT_TSARUN;
	}
	if (o->report_profile == REPORT_ONCPU && !r->stacks->oncpu) {
		/* The reason is the artifact's text: escaped like the path. */
		fputs("tsarun: report: '", stderr);
		textsafe_fput(stderr, textsafe_term, o->report_artifact, TEXTSAFE_NUL);
		fputs("' has no on-CPU samples: record them with --flame", stderr);
		if (r->stacks->oncpu_reason[0])
			textsafe_term_line(stderr, " (this run: ", r->stacks->oncpu_reason, ")");
		else
			fputc('\n', stderr);
		return EXIT_TSARUN;
	}
	ret = outputs_stack_profile(stdout, r, o->report_profile, o->report_svg,
				    (struct stack_profile_layout){.inverted = o->report_inverted,
								  .reversed = o->report_reversed},
				    command);
	if (ret) {
		fprintf(stderr, "tsarun: report: cannot write the %s view: %s\n",
			views[o->report_profile], strerror(-ret));
		return EXIT_TSARUN;
	}
	return 0;
}

/* tsarun report --format trace: the last run as Chrome Trace Event JSON (Perfetto). */
static int report_trace(const struct tsarun_opts *o, const struct session *s, const char *command)
{
	const struct run *r = &s->runs[s->nruns - 1];

	if (!r->detailed) {
		textsafe_term_line(stderr, "tsarun: report: '", o->report_artifact,
				   "' has no threads for a trace (its last run kept no detail)");
		return EXIT_TSARUN;
	}
	if (!r->timeline && !o->quiet)
		textsafe_term_line(stderr, "tsarun: report: '", o->report_artifact,
				   "' has no timeline: each thread is one slice of its whole life; "
				   "record with --timeline for its on-CPU, runqueue, S and D "
				   "intervals");
	if (trace_write(stdout, r, command)) {
		fprintf(stderr, "tsarun: report: cannot write the trace: %s\n", strerror(EIO));
		return EXIT_TSARUN;
	}
	return 0;
}

/* tsarun report RUN.json: a stored artifact's report, again, to stdout. */
static int report_main(const struct tsarun_opts *o)
{
	struct session s = {0};
	struct comparison cmp = {0};
	bool have_cmp = false;
	char *text = NULL;
	struct artifact_read_opts ro = {.what = "artifact",
					.detail = true,
					.cmp = &cmp,
					.have_cmp = &have_cmp,
					.text = o->report_html ? &text : NULL};
	const char *command;
	char err[768];
	int code = 0;

	if (confine(o, NULL))
		return EXIT_TSARUN;
	if (artifact_read(o->report_artifact, &ro, &s, err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		return EXIT_TSARUN;
	}
	if (have_cmp)
		s.cmp = &cmp;
	command = session_command(&s);
	if (o->report_html) {
		struct report_html h = {
		    .run = {.artifact = text,
			    .artifact_len = strlen(text),
			    .s = &s,
			    .name = o->report_artifact},
		};
		int ret = report_html_write(stdout, &h);

		if (ret) {
			fprintf(stderr, "tsarun: report: cannot write the HTML page: %s\n",
				strerror(-ret));
			code = EXIT_TSARUN;
		}
	} else if (o->report_export) {
		int ret = o->report_export == 1	  ? export_threads_csv(stdout, &s.runs[s.nruns - 1])
			  : o->report_export == 2 ? export_runs_csv(stdout, &s)
						  : export_hyperfine_json(stdout, &s);

		if (ret) {
			fprintf(stderr, "tsarun: report: cannot write the export: %s\n",
				strerror(-ret));
			code = EXIT_TSARUN;
		}
	} else if (o->report_trace) {
		code = report_trace(o, &s, command);
	} else if (o->report_profile >= 0) {
		code = report_stacks(o, &s, command);
	} else if (o->report_markdown) {
		gate_report_session_markdown(stdout, &s, o->top, o->sort);
	} else {
		const struct run *r = &s.runs[s.nruns - 1];
		bool color = outputs_use_color(o, stdout);
		struct table_opts to = {
		    .sort = o->sort,
		    .top = o->top,
		    .color = color,
		    .command = command,
		    .artifact = o->report_artifact,
		    .width = o->wide ? 0 : termwrap_width(STDOUT_FILENO),
		};

		table_print(stdout, r, &to);
		if (s.nruns > 1)
			gate_report_runs(stdout, s.runs, s.nruns, color, to.width);
		if (s.cmp)
			gate_report_comparison(stdout, s.cmp, command, color, to.width);
		if (!strcmp(s.mode, "bash"))
			printf("\n  the bash profile is in the artifact's \"bash\" key, and in "
			       "the file its bash.folded names (none when the artifact went to a "
			       "device)\n");
	}
	if (fflush(stdout) || ferror(stdout))
		code = EXIT_TSARUN;
	free(text);
	comparison__free(&cmp);
	session__free(&s);
	return code;
}

int main(int argc, char **argv)
{
	struct tsarun_opts o;
	char err[256];

	options_defaults(&o);
	if (options_parse(&o, argc, argv, err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		return EXIT_TSARUN;
	}
	switch (o.mode) {
	case MODE_HELP:
		fputs(options_usage(), stdout);
		return 0;
	case MODE_VERSION:
		printf("tsarun %s (%s)\n", TSARUN_VERSION, TSARUN_REV);
		return 0;
	case MODE_DOCTOR:
		return doctor_run(o.doctor_json);
	case MODE_COMPARE:
		return compare_main(&o);
	case MODE_REPORT:
		return report_main(&o);
	case MODE_MONITOR:
		return monitor_main(&o);
	case MODE_RUN:
		break;
	}
	/*
	 * The watchdog stays behind as the process the shell started (it
	 * returns the supervisor's status); the supervisor runs the session.
	 */
	{
		struct watchdog_opts wo = {
		    .leave = o.descendants == DESC_LEAVE,
		    .grace_ns = o.kill_grace_ns,
		    .no_sandbox = o.no_sandbox,
		};
		int code, ret = watchdog_start(&wo, &code);

		if (ret > 0)
			return code;
		if (ret < 0) {
			fprintf(stderr, "tsarun: cannot fork the supervisor: %s\n", strerror(-ret));
			return EXIT_TSARUN;
		}
	}
	/* SIGSYS: what tsarun holds for the machine goes back before it exits. */
	sandbox_on_violation(delayacct_on_violation);
	return run_main(&o);
}
