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

#include "bashprobe.h"
#include "artifact.h"
#include "attach.h"
#include "doctor.h"
#include "gate_report.h"
#include "gating.h"
#include "host.h"
#include "options.h"
#include "outputs.h"
#include "probes.h"
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
#include "user.h"

#define EXIT_TSARUN 125
#define EXIT_GATE   3 /* the command succeeded, the regression gate failed */

static int mkdir_p(const char *dir)
{
	char buf[4096];
	size_t len = strlen(dir);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	/* EEXIST: but is it a directory? */
	{
		struct stat st;

		if (stat(buf, &st))
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
	}
	return 0;
}

/*
 * Can path be written (its directory, or the file itself)? 0, or -1 with
 * "cannot write WHAT 'PATH': REASON[HINT]" in err. Checked before the
 * command runs, so that a typo does not cost a run.
 */
static int check_writable(const char *path, const char *what, const char *hint, char *err,
			  size_t errlen)
{
	char dir[PATH_MAX], *slash;
	struct stat st;
	int ret, dir_errno;

	if (!path)
		return 0;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cannot write %s '%s': %s%s", what, path, strerror(EISDIR),
			 hint);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		slash[slash == dir ? 1 : 0] = '\0';
		ret = access(dir, W_OK);
	} else {
		ret = access(".", W_OK);
	}
	/* The directory's reason (EROFS, EACCES) unless the file itself is writable. */
	dir_errno = errno;
	if (ret && access(path, W_OK)) {
		snprintf(err, errlen, "cannot write %s '%s': %s%s", what, path,
			 strerror(errno == ENOENT ? dir_errno : errno), hint);
		return -1;
	}
	return 0;
}

/* The artifact's path; NULL with a message when its directory cannot be used. */
static char *artifact_path(const struct tsarun_opts *o, char *err, size_t errlen)
{
	const char *name = o->json_path ? o->json_path : "tsarun.json";
	char *path = NULL;
	int ret;

	if (o->out_dir) {
		ret = mkdir_p(o->out_dir);
		if (ret) {
			snprintf(err, errlen, "cannot create --out-dir '%s': %s", o->out_dir,
				 strerror(-ret));
			return NULL;
		}
		if (name[0] != '/' && asprintf(&path, "%s/%s", o->out_dir, name) < 0)
			path = NULL;
		else if (name[0] == '/')
			path = strdup(name);
	} else {
		path = strdup(name);
	}
	if (!path) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* Fail before running the command, not after. */
	if (check_writable(path, "the artifact", " (use --json FILE or --out-dir DIR)", err,
			   errlen)) {
		free(path);
		return NULL;
	}
	return path;
}

/* path made absolute, its links resolved (its directory's, when it does not exist yet). */
static char *canonical(const char *path)
{
	char *dir, *out = realpath(path, NULL), *slash, *real;

	if (out || errno != ENOENT)
		return out;
	dir = strdup(path);
	if (!dir)
		return NULL;
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	real = realpath(slash ? dir : ".", NULL);
	if (real && asprintf(&out, "%s/%s", real, slash ? strrchr(path, '/') + 1 : path) < 0)
		out = NULL;
	free(real);
	free(dir);
	return out;
}

/* Is the stream's file one of the files tsarun reads or writes besides it? Which one, or NULL. */
static const char *stream_clash(const struct tsarun_opts *o, const char *stream,
				const char *artifact)
{
	const struct {
		const char *path, *what;
	} others[] = {
	    {artifact, "the artifact"},	      {o->report_path, "--report"},
	    {o->junit_path, "--junit"},	      {o->markdown_path, "--markdown"},
	    {o->baseline_path, "--baseline"},
	};
	char *s = canonical(stream);
	const char *clash = NULL;

	for (size_t i = 0; s && !clash && i < sizeof(others) / sizeof(others[0]); i++) {
		char *c = others[i].path ? canonical(others[i].path) : NULL;

		if (c && !strcmp(c, s))
			clash = others[i].what;
		free(c);
	}
	free(s);
	return clash;
}

/*
 * --interval: open the stream's file before the command runs, so that a
 * typo does not cost a run and a link the command puts there later is not
 * followed. --stream FILE, "-" for stderr; by default beside the artifact,
 * named after it (tsarun.json: tsarun.jsonl). A new file belongs to the
 * command's user under sudo, as the artifact does. Returns the descriptor,
 * or -1 with a message in err; *name is the path for messages.
 */
static int stream_open(const struct tsarun_opts *o, const char *artifact, bool artifact_in_place,
		       const struct target_user *user, char **name, char *err, size_t errlen)
{
	struct stat st;
	size_t len;
	int fd;

	*name = NULL;
	if (o->stream_path && !strcmp(o->stream_path, "-")) {
		*name = strdup("stderr");
		return *name ? 2 : -1;
	}
	if (o->stream_path && o->out_dir && o->stream_path[0] != '/') {
		/* Like --json: every file a run leaves goes into --out-dir. */
		if (asprintf(name, "%s/%s", o->out_dir, o->stream_path) < 0)
			*name = NULL;
	} else if (o->stream_path) {
		*name = strdup(o->stream_path);
	} else if (artifact_in_place) {
		snprintf(err, errlen,
			 "--interval: the artifact goes to '%s', not a file: name the stream's "
			 "file with --stream FILE (- for stderr)",
			 artifact);
		return -1;
	} else {
		len = strlen(artifact);
		if (len > 5 && !strcmp(artifact + len - 5, ".json"))
			len -= 5;
		if (asprintf(name, "%.*s.jsonl", (int)len, artifact) < 0)
			*name = NULL;
	}
	if (!*name) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (check_writable(*name, "the interval stream", " (use --stream FILE, - for stderr)", err,
			   errlen))
		return -1;
	/* Opening it truncates it: never a file tsarun reads or writes otherwise. */
	if (stream_clash(o, *name, artifact)) {
		snprintf(err, errlen, "--stream '%s' is also %s's file: give each its own", *name,
			 stream_clash(o, *name, artifact));
		return -1;
	}
	fd = open(*name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen,
			 "cannot write the interval stream '%s': %s (use --stream FILE, - for "
			 "stderr)",
			 *name, strerror(errno));
		return -1;
	}
	/* A regular file is ours to give; a device or a FIFO is left as it is. */
	if (user->change && !fstat(fd, &st) && S_ISREG(st.st_mode))
		(void)!fchown(fd, user->uid, user->gid);
	return fd;
}

static int run_main(struct tsarun_opts *o)
{
	struct session s = {0};
	struct target_user user;
	struct supervisor sv = {0};
	struct probeset *ps = NULL;
	struct spawner *spawner = NULL, *base_spawner = NULL;
	struct bash_probe *bash = NULL;
	char *const *argv = o->argv;
	int argc = o->argc;
	struct supervisor base_sv = {0};
	struct gating g = {0};
	sigset_t mask, orig;
	char err[512];
	char *path = NULL, *stream_name = NULL;
	int sigfd = -1, code = EXIT_TSARUN, stream_fd = -1;
	struct series se = {0};
	int ret;

	if (target_user__resolve(&user, o->user, err, sizeof(err))) {
		fprintf(stderr, "tsarun: %s\n", err);
		return EXIT_TSARUN;
	}
	path = artifact_path(o, err, sizeof(err));
	if (!path) {
		fprintf(stderr, "tsarun: %s\n", err);
		goto out_user;
	}
	/* The other files asked for, likewise. */
	if (check_writable(o->report_path, "the report", " (use --report FILE)", err,
			   sizeof(err)) ||
	    check_writable(o->junit_path, "the JUnit report", " (use --junit FILE)", err,
			   sizeof(err)) ||
	    check_writable(o->markdown_path, "the Markdown report", " (use --markdown FILE)", err,
			   sizeof(err))) {
		fprintf(stderr, "tsarun: %s\n", err);
		goto out_path;
	}
	/*
	 * A device or a FIFO is written in place; anything else by rename. Decided
	 * now: a link the command puts at the path is then replaced, not followed.
	 */
	{
		struct stat st;

		s.artifact_in_place = !stat(path, &st) && !S_ISREG(st.st_mode) ? 1 : -1;
	}
	if (o->interval_given) {
		stream_fd = stream_open(o, path, s.artifact_in_place > 0, &user, &stream_name, err,
					sizeof(err));
		if (stream_fd < 0) {
			fprintf(stderr, "tsarun: %s\n", err);
			goto out_path;
		}
	}
	outputs_prepare(o);
	/* A bad baseline is refused before the command runs. */
	if (o->gate && gating__prepare(&g, o, err, sizeof(err))) {
		fprintf(stderr, "tsarun: %s\n", err);
		goto out_path;
	}

	sigemptyset(&mask);
	for (int i = 0; i < 4; i++)
		sigaddset(&mask, supervise_forwarded[i]);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, &orig)) {
		fprintf(stderr, "tsarun: cannot block signals: %s\n", strerror(errno));
		goto out_path;
	}
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		fprintf(stderr, "tsarun: cannot create a signalfd: %s\n", strerror(errno));
		goto out_mask;
	}
	/* Orphaned descendants come to us, so they are reaped and counted. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		fprintf(stderr, "tsarun: cannot become a child subreaper: %s\n", strerror(errno));
		goto out_sigfd;
	}
	/* --bash: the environment and command line the spawner hands to bash. */
	if (o->bash) {
		bash = bash_probe__new(o, &user, err, sizeof(err));
		if (!bash) {
			fprintf(stderr, "tsarun: --bash: %s\n", err);
			goto out_sigfd;
		}
		argv = bash_probe__argv(bash);
		argc = bash_probe__argc(bash);
	}
	/* Before anything large is loaded: commands are forked from this small image. */
	spawner = spawner__new(argv, &user, &orig);
	if (!spawner) {
		fprintf(stderr, "tsarun: cannot start the spawner process: %s\n", strerror(errno));
		goto out_sigfd;
	}
	if (o->baseline_cmd) {
		base_spawner = spawner__new(g.base_argv, &user, &orig);
		if (!base_spawner) {
			fprintf(stderr, "tsarun: cannot start the spawner process: %s\n",
				strerror(errno));
			goto out_session;
		}
	}

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
		fprintf(stderr, "tsarun: %s\n", err);
		goto out_session;
	}
	if (bash)
		probeset__add_bash(ps, bash);
	if (stream_fd >= 0) {
		/* Last: its final line is the run's closing account, after every source's. */
		struct stream_probe *stp =
		    stream_probe__new(stream_fd, stream_name, o->interval_ns,
				      o->stream_backlog_bytes, ps->sched, ps->proc);

		if (!stp || probeset__add_stream(ps, stp)) {
			fprintf(stderr, "tsarun: cannot set up the interval stream\n");
			goto out_session;
		}
		stream_fd = -1; /* the stream's now */
		if (o->verbose)
			fprintf(stderr, "tsarun: a line every %llu ms to '%s'\n",
				(unsigned long long)(o->interval_ns / 1000000), stream_name);
		/* A reader that goes away is an error to report, not a reason to die. */
		signal(SIGPIPE, SIG_IGN);
	}
	if (o->gate && gating__check_machine(&g, ps, err, sizeof(err))) {
		fprintf(stderr, "tsarun: %s\n", err);
		goto out_session;
	}

	sv.o = o;
	sv.spawner = spawner;
	sv.probes = ps->probes;
	sv.nprobes = ps->nprobes;
	sv.sigfd = sigfd;
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
	if (ret) {
		fprintf(stderr, "tsarun: %s\n", err);
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
		if (g.cmp.outcome == GATE_FAIL)
			code = EXIT_GATE;
	}
	s.sandbox_known = true;
	s.sandboxed = sandbox_active();
	s.sandbox_reason = o->no_sandbox       ? "disabled with --no-sandbox"
			   : sandbox_failure() ? sandbox_failure()
			   : !sandbox_active() ? "no command was started"
					       : NULL;
	/* The stream said what failed when it did; the exit status says it too. */
	if (stream_probe__error(ps->stream) && code == 0)
		code = EXIT_TSARUN;
	if (outputs_write(&s, o, &user, path)) {
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
out_mask:
	sigprocmask(SIG_SETMASK, &orig, NULL);
out_path:
	gating__free(&g);
	if (stream_fd > 2)
		close(stream_fd);
	free(stream_name);
	free(path);
out_user:
	target_user__free(&user);
	return code;
}

/* tsarun compare BASE.json NEW.json: the same verdict, offline. */
/*
 * compare and report read artifacts anyone may have written: they do it
 * under the supervisor's filter (sandbox.h), which allows all they need.
 */
static void confine(void)
{
	char why[160];

	if (sandbox_enter(why, sizeof(why)))
		fprintf(stderr, "tsarun: warning: running unconfined: %s\n", why);
}

static int compare_main(const struct tsarun_opts *o)
{
	struct session base = {0}, new = {0};
	struct gate_side bside = {0}, nside = {0};
	struct comparison cmp = {
	    .baseline_kind = "artifact", .baseline_name = o->compare_base, .offline = true};
	char err[1536], what[600], nwhat[600];
	int code = EXIT_TSARUN, ret;
	bool color;

	confine();
	ret = artifact_read(o->compare_base, &(struct artifact_read_opts){.what = "baseline"},
			    &base, err, sizeof(err));
	if (!ret)
		ret = artifact_read(o->compare_new,
				    &(struct artifact_read_opts){.what = "new artifact"}, &new, err,
				    sizeof(err));
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
	color = outputs_use_color(o, stdout);
	if (!o->quiet)
		gate_report_comparison(stdout, &cmp, o->compare_new, color);
	fflush(stdout);
	code = cmp.outcome == GATE_FAIL ? EXIT_GATE : 0;
	if (outputs_gate(&cmp, o, o->compare_new, (uid_t)-1, (gid_t)-1) && code == 0)
		code = EXIT_TSARUN;
	goto out;
out_err:
	fprintf(stderr, "tsarun: %s\n", err);
out:
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
		fprintf(stderr,
			"tsarun: report: '%s' has no stacks: record them with --stacks (where "
			"threads blocked) or --flame (and where they ran)\n",
			o->report_artifact);
		return EXIT_TSARUN;
	}
	if (o->report_profile == REPORT_ONCPU && !r->stacks->oncpu) {
		fprintf(
		    stderr,
		    "tsarun: report: '%s' has no on-CPU samples: record them with --flame%s%s\n",
		    o->report_artifact, r->stacks->oncpu_reason[0] ? " (this run: " : "",
		    r->stacks->oncpu_reason[0] ? r->stacks->oncpu_reason : "");
		return EXIT_TSARUN;
	}
	ret = outputs_stack_profile(stdout, r, o->report_profile, o->report_svg, command);
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
		fprintf(stderr,
			"tsarun: report: '%s' has no threads for a trace (its last run kept no "
			"detail)\n",
			o->report_artifact);
		return EXIT_TSARUN;
	}
	if (!r->timeline && !o->quiet)
		fprintf(
		    stderr,
		    "tsarun: report: '%s' has no timeline: each thread is one slice of its whole "
		    "life; record with --timeline for its on-CPU, runqueue, S and D intervals\n",
		    o->report_artifact);
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
	struct artifact_read_opts ro = {
	    .what = "artifact", .detail = true, .cmp = &cmp, .have_cmp = &have_cmp};
	const char *command;
	char err[768];
	int code = 0;

	confine();
	if (artifact_read(o->report_artifact, &ro, &s, err, sizeof(err))) {
		fprintf(stderr, "tsarun: %s\n", err);
		return EXIT_TSARUN;
	}
	if (have_cmp)
		s.cmp = &cmp;
	command = session_command(&s);
	if (o->report_trace) {
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
		};

		table_print(stdout, r, &to);
		if (s.nruns > 1)
			gate_report_runs(stdout, s.runs, s.nruns, color);
		if (s.cmp)
			gate_report_comparison(stdout, s.cmp, command, color);
		if (!strcmp(s.mode, "bash"))
			printf("\n  the bash profile is in the artifact's \"bash\" key, and in "
			       "the file its bash.folded names (none when the artifact went to a "
			       "device)\n");
	}
	if (fflush(stdout) || ferror(stdout))
		code = EXIT_TSARUN;
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
		fprintf(stderr, "tsarun: %s\n", err);
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
	return run_main(&o);
}
