// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact.h"
#include "bashprof.h"
#include "flame.h"
#include "gate.h"
#include "gate_report.h"
#include "options.h"
#include "outputs.h"
#include "run.h"
#include "stacks.h"
#include "table.h"
#include "trace.h"
#include "user.h"

bool outputs_use_color(const struct tsarun_opts *o, FILE *f)
{
	const char *no = getenv("NO_COLOR");

	if (o->color == COLOR_NEVER)
		return false;
	if (o->color == COLOR_ALWAYS)
		return true;
	if (no && *no)
		return false;
	return isatty(fileno(f));
}

/*
 * --report, --junit and --markdown: written in place when the path is a
 * device or a FIFO (/dev/stderr, a pipe), else as a new file renamed over
 * it, decided before the command runs (outputs_prepare()): root then
 * replaces a link the command put at the path, and never writes through
 * it. 0: not decided (compare, which runs no command): decided when written.
 */
static struct {
	int report, junit, markdown;
} in_place;

static int decide_in_place(const char *path)
{
	struct stat st;

	return path && !stat(path, &st) && !S_ISREG(st.st_mode) ? 1 : -1;
}

void outputs_prepare(const struct tsarun_opts *o)
{
	in_place.report = decide_in_place(o->report_path);
	in_place.junit = decide_in_place(o->junit_path);
	in_place.markdown = decide_in_place(o->markdown_path);
}

/*
 * Open path for writing: in place, or a new file beside it (*tmp, to be
 * renamed over path by out_close()). NULL with errno set.
 */
static FILE *out_open(const char *path, int where, char **tmp)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct stat st;
	char *copy;
	FILE *f;
	int fd, err;

	*tmp = NULL;
	if (where > 0 || (!where && !stat(path, &st) && !S_ISREG(st.st_mode))) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
	} else {
		copy = strdup(path);
		if (!copy || asprintf(tmp, "%s/.%s.XXXXXX", dirname(copy), base) < 0) {
			free(copy);
			*tmp = NULL;
			errno = ENOMEM;
			return NULL;
		}
		free(copy);
		fd = mkostemp(*tmp, O_CLOEXEC);
		if (fd >= 0 && fchmod(fd, 0644)) {
			err = errno;
			close(fd);
			unlink(*tmp);
			errno = err;
			fd = -1;
		}
	}
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		err = errno;
		if (fd >= 0) {
			close(fd);
			if (*tmp)
				unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
		errno = err;
	}
	return f;
}

/*
 * Finish what out_open() opened: a new file gets its owner (uid -1: keep),
 * everything is flushed, and the new file replaces path. 0 or -errno.
 */
static int out_close(FILE *f, const char *path, char *tmp, uid_t uid, gid_t gid)
{
	int ret = 0;

	if (tmp && uid != (uid_t)-1 && fchown(fileno(f), uid, gid))
		ret = -errno;
	/* A full disk shows only when the buffer goes out: say so, do not truncate quietly. */
	if ((fflush(f) || ferror(f)) && !ret)
		ret = errno ? -errno : -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (tmp) {
		if (!ret && rename(tmp, path))
			ret = -errno;
		if (ret)
			unlink(tmp);
		free(tmp);
	}
	return ret;
}

/* Returns 0, or -errno when the --report file could not be written whole. */
static int write_table(const struct session *s, const struct tsarun_opts *o,
		       const char *artifact_path, uid_t uid, gid_t gid)
{
	const struct run *r = &s->runs[s->nruns - 1];
	struct table_opts to = {
	    .sort = o->sort,
	    .top = o->top,
	    .command = session_command(s),
	    .artifact = artifact_path,
	};
	FILE *f = stderr;
	char *tmp = NULL;
	int ret = 0;

	if (o->report_path) {
		f = out_open(o->report_path, in_place.report, &tmp);
		if (!f) {
			ret = -errno;
			fprintf(stderr, "tsarun: cannot write the report '%s': %s\n",
				o->report_path, strerror(-ret));
			f = stderr;
		}
	}
	to.color = outputs_use_color(o, f);
	table_print(f, r, &to);
	if (s->nruns > 1)
		gate_report_runs(f, s->runs, s->nruns, to.color);
	if (r->bash) {
		struct bashprof_print_opts bo = {.color = to.color};

		bashprof__print(r->bash, f, &bo);
	}
	if (s->cmp)
		gate_report_comparison(f, s->cmp, session_command(s), to.color);
	if (f == stderr)
		return ret;
	ret = out_close(f, o->report_path, tmp, uid, gid);
	if (ret)
		fprintf(stderr, "tsarun: cannot write the report '%s': %s\n", o->report_path,
			strerror(-ret));
	return ret;
}

/*
 * --bash: bash.folded beside the artifact. Not when the artifact goes to
 * a device or a pipe (--json /dev/null): there is no "beside" there.
 */
static char *write_folded(const struct session *s, const struct run *r, const char *artifact_path,
			  const struct target_user *user, int *failed)
{
	struct stat st;
	char *dir, *path = NULL, *tmp = NULL, *slash;
	FILE *f;
	int fd, err = 0;

	if (s->artifact_in_place > 0 ||
	    (!s->artifact_in_place && !stat(artifact_path, &st) && !S_ISREG(st.st_mode)))
		return NULL;
	dir = strdup(artifact_path);
	if (!dir)
		return NULL;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (asprintf(&path, "%s/bash.folded", slash ? (dir[0] ? dir : "/") : ".") < 0)
		path = NULL;
	free(dir);
	if (!path)
		return NULL;
	/*
	 * A temporary file (O_EXCL: never through a link) renamed over the
	 * path: the directory may be the command's, which could have put a
	 * link at bash.folded to any file for root to write.
	 */
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		free(path);
		return NULL;
	}
	errno = 0;
	fd = mkostemp(tmp, O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		err = errno;
		if (fd >= 0)
			close(fd);
	} else {
		if (fchmod(fd, 0644) || (user->change && fchown(fd, user->uid, user->gid)) ||
		    bashprof__write_folded(r->bash, f) || fflush(f) || ferror(f))
			err = errno ? errno : EIO;
		if (fclose(f) && !err)
			err = errno;
		if (!err && rename(tmp, path))
			err = errno;
	}
	if (err || !f) {
		fprintf(stderr, "tsarun: cannot write '%s': %s\n", path, strerror(err ? err : EIO));
		if (fd >= 0)
			unlink(tmp);
		free(tmp);
		free(path);
		*failed = -(err ? err : EIO);
		return NULL;
	}
	free(tmp);
	return path;
}

typedef void (*gate_renderer)(FILE *f, const struct comparison *c, const char *command);

/*
 * Open the runner's $GITHUB_STEP_SUMMARY to append to it. The file is the
 * CI runner's, but the command ran (as the invoking user) before tsarun
 * (root) writes to it and could have replaced it: never through a link
 * (O_NOFOLLOW), only a regular file (O_NONBLOCK: a FIFO does not block
 * the open), and when the command ran as another user (uid not -1) only a
 * file with one name that belongs to that user or to tsarun's own, so a
 * hard link to another file is refused too. Created when missing (O_EXCL:
 * not through a link), for uid:gid. NULL with errno set and why saying
 * what was refused (empty for a plain system error).
 */
static FILE *summary_open(const char *path, uid_t uid, gid_t gid, char *why, size_t len)
{
	const int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	struct stat st;
	FILE *f = NULL;
	int fd, err = 0;

	why[0] = '\0';
	fd = open(path, flags);
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, flags | O_CREAT | O_EXCL, 0644);
		if (fd >= 0 && uid != (uid_t)-1 && fchown(fd, uid, gid)) {
			err = errno;
			goto out_close;
		}
	}
	if (fd < 0) {
		err = errno;
		if (err == ELOOP)
			snprintf(why, len,
				 "it is a symbolic link, and tsarun appends only to the "
				 "runner's own file, never through a link");
		else if (err == ENXIO) /* a FIFO with no reader, a socket */
			snprintf(why, len, "not a regular file, and the runner's summary is one");
		goto out;
	}
	if (fstat(fd, &st)) {
		err = errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		err = EINVAL;
		snprintf(why, len, "not a regular file, and the runner's summary is one");
		goto out_close;
	}
	if (uid != (uid_t)-1 && st.st_nlink != 1) {
		err = EPERM;
		snprintf(why, len,
			 "it has %ju names (hard links), and tsarun appends only to the runner's "
			 "own file",
			 (uintmax_t)st.st_nlink);
		goto out_close;
	}
	if (uid != (uid_t)-1 && st.st_uid != uid && st.st_uid != geteuid()) {
		err = EPERM;
		snprintf(why, len,
			 "it belongs to uid %ju, not to the user the command ran as (uid %ju)",
			 (uintmax_t)st.st_uid, (uintmax_t)uid);
		goto out_close;
	}
	f = fdopen(fd, "a");
	if (!f)
		err = errno;
out_close:
	if (!f)
		close(fd);
out:
	errno = err;
	return f;
}

/*
 * where: as out_open() (--junit, --markdown); -2 appends to path, the
 * runner's $GITHUB_STEP_SUMMARY (summary_open()). A new file belongs to
 * uid:gid, the user tsarun runs the command as, like the artifact; a device
 * stays root's.
 */
static int write_file(const char *path, int where, const char *what, gate_renderer render,
		      const struct comparison *c, const char *command, uid_t uid, gid_t gid)
{
	char *tmp = NULL, why[160] = "";
	FILE *f = where == -2 ? summary_open(path, uid, gid, why, sizeof(why))
			      : out_open(path, where, &tmp);
	int ret = 0;

	if (!f) {
		ret = -errno;
		fprintf(stderr, "tsarun: cannot write the %s '%s': %s\n", what, path,
			why[0] ? why : strerror(-ret));
		return ret;
	}
	render(f, c, command);
	ret = out_close(f, path, tmp, uid, gid);
	if (ret)
		fprintf(stderr, "tsarun: cannot write the %s '%s': %s\n", what, path,
			strerror(-ret));
	return ret;
}

int outputs_gate(const struct comparison *c, const struct tsarun_opts *o, const char *command,
		 uid_t uid, gid_t gid)
{
	const char *gha = getenv("GITHUB_ACTIONS"), *summary = getenv("GITHUB_STEP_SUMMARY");
	int ret = 0, r;

	if (o->junit_path) {
		r = write_file(o->junit_path, in_place.junit, "JUnit report", gate_report_junit, c,
			       command, uid, gid);
		ret = ret ? ret : r;
	}
	if (o->markdown_path) {
		r = write_file(o->markdown_path, in_place.markdown, "Markdown report",
			       gate_report_markdown, c, command, uid, gid);
		ret = ret ? ret : r;
	}
	if (!gha || strcmp(gha, "true"))
		return ret;
	if (summary && *summary) {
		r = write_file(summary, -2, "step summary (GITHUB_STEP_SUMMARY)",
			       gate_report_markdown, c, command, uid, gid);
		ret = ret ? ret : r;
	}
	fflush(stderr);
	gate_report_annotations(stderr, c, command);
	fflush(stderr);
	return ret;
}

/* Where --flame's files go: --out-dir, else the artifact's directory, else here. */
static char *profile_dir(const struct session *s, const struct tsarun_opts *o,
			 const char *artifact_path)
{
	struct stat st;
	char *copy, *dir;

	if (o->out_dir)
		return strdup(o->out_dir);
	if (s->artifact_in_place > 0 ||
	    (!s->artifact_in_place && !stat(artifact_path, &st) && !S_ISREG(st.st_mode)))
		return strdup("."); /* --json /dev/null: not next to a device */
	copy = strdup(artifact_path);
	if (!copy)
		return NULL;
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

enum { PROF_FOLDED, PROF_SVG, PROF_BASH_SVG, PROF_TRACE };

int outputs_stack_profile(FILE *f, const struct run *r, int which, bool svg, const char *command)
{
	static const char *const titles[] = {"Off-CPU time: where threads blocked",
					     "On-CPU samples: where threads ran",
					     "Wall-clock time: every thread's whole life"};
	static const char *const units[] = {"ns", "samples", "ns"};
	struct flame *fl;
	char sub[256];
	int ret;

	if (!svg)
		return which == 0   ? stacks_write_offcpu_folded(f, r)
		       : which == 1 ? stacks_write_oncpu_folded(f, r)
				    : stacks_write_wall_folded(f, r);
	fl = flame__new();
	snprintf(sub, sizeof(sub), "tsarun -- %s (run %d)", command ? command : "", r->index);
	ret = fl ? stacks_flame(fl, r, which) : -ENOMEM;
	if (!ret)
		ret = flame__write_svg(fl, f,
				       &(struct flame_svg_opts){.title = titles[which],
								.subtitle = sub,
								.units = units[which]});
	flame__free(fl);
	return ret;
}

/* Write one profile file atomically (temporary file, rename), owned like the artifact. */
static int write_profile(const char *dir, const char *name, const struct run *r, int which,
			 int kind, const struct target_user *user, const char *command)
{
	char *path = NULL, *tmp = NULL;
	FILE *f = NULL;
	int fd, ret = 0;

	if (asprintf(&path, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (kind == PROF_BASH_SVG) {
		struct flame *fl = flame__new();
		char sub[256];

		snprintf(sub, sizeof(sub), "tsarun --bash %s (run %d): each command's own %s",
			 command ? command : "", r->index, which ? "CPU time" : "wall time");
		ret = fl ? bashprof__flame(r->bash, fl, which == 1) : -ENOMEM;
		if (!ret)
			ret = flame__write_svg(
			    fl, f,
			    &(struct flame_svg_opts){.title = which ? "bash: CPU time per command"
								    : "bash: wall time per command",
						     .subtitle = sub,
						     .units = "ns"});
		flame__free(fl);
	} else if (kind == PROF_TRACE) {
		ret = trace_write(f, r, command);
	} else {
		ret = outputs_stack_profile(f, r, which, kind == PROF_SVG, command);
	}
	if (!ret && fchmod(fileno(f), 0644))
		ret = -errno;
	if (!ret && user->change && fchown(fileno(f), user->uid, user->gid))
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -EIO;
	f = NULL;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
out:
	if (ret)
		fprintf(stderr, "tsarun: cannot write '%s': %s\n", path ? path : name,
			strerror(-ret));
	free(path);
	free(tmp);
	return ret;
}

/* --flame: folded profiles and their SVG flame graphs for the last run. */
static int write_profiles(const struct session *s, const struct tsarun_opts *o,
			  const struct target_user *user, const char *artifact_path)
{
	static const char *const folded[] = {"offcpu.folded", "oncpu.folded", "wall.folded"};
	static const char *const svg[] = {"offcpu.svg", "oncpu.svg", "wall.svg"};
	const struct run *r = &s->runs[s->nruns - 1];
	char *dir;
	int ret = 0;

	if (!r->stacks && !r->bash)
		return 0;
	dir = profile_dir(s, o, artifact_path);
	if (!dir)
		return -ENOMEM;
	if (r->bash) {
		if (write_profile(dir, "bash.svg", r, 0, PROF_BASH_SVG, user, session_command(s)) ||
		    write_profile(dir, "bash-cpu.svg", r, 1, PROF_BASH_SVG, user,
				  session_command(s)))
			ret = -EIO;
		else if (!o->quiet)
			fprintf(stderr, "tsarun: bash flame graphs: %s/bash{,-cpu}.svg\n", dir);
	}
	if (!r->stacks)
		goto out;
	for (int w = 0; w < 3; w++) {
		if (w == 1 && !r->stacks->oncpu)
			continue; /* said in the report and the artifact */
		if (write_profile(dir, folded[w], r, w, PROF_FOLDED, user, session_command(s)) ||
		    write_profile(dir, svg[w], r, w, PROF_SVG, user, session_command(s)))
			ret = -EIO;
	}
	if (!ret && !o->quiet)
		fprintf(stderr, "tsarun: flame graphs: %s/{offcpu,%swall}.{folded,svg}\n", dir,
			r->stacks->oncpu ? "oncpu," : "");
out:
	free(dir);
	return ret;
}

/*
 * --timeline: the last run as a Chrome trace (tsarun.trace.json) where
 * --flame puts its files; `tsarun report --format trace` writes the same
 * from the artifact.
 */
static int write_trace(const struct session *s, const struct tsarun_opts *o,
		       const struct target_user *user, const char *artifact_path)
{
	const struct run *r = &s->runs[s->nruns - 1];
	char *dir;
	int ret;

	if (!r->timeline)
		return 0; /* unavailable: said with the sources */
	dir = profile_dir(s, o, artifact_path);
	if (!dir)
		return -ENOMEM;
	ret = write_profile(dir, "tsarun.trace.json", r, 0, PROF_TRACE, user, session_command(s));
	if (!ret && !o->quiet)
		fprintf(stderr,
			"tsarun: trace: %s/tsarun.trace.json (open it in ui.perfetto.dev)\n", dir);
	free(dir);
	return ret;
}

int outputs_write(struct session *s, const struct tsarun_opts *o, const struct target_user *user,
		  const char *artifact_path)
{
	struct rusage self;
	struct artifact_opts ao = {
	    .owner_uid = user->change ? user->uid : (uid_t)-1,
	    .owner_gid = user->change ? user->gid : (gid_t)-1,
	    .in_place = s->artifact_in_place,
	};
	char err[512];
	int ret = 0;

	char *folded = NULL;

	if (s->nruns && s->runs[s->nruns - 1].bash) {
		folded = write_folded(s, &s->runs[s->nruns - 1], artifact_path, user, &ret);
		s->bash_folded = folded;
	}
	/* A --report file asked for is written, with -q or --no-table too: they quiet stderr. */
	if ((!o->no_table || o->report_path) && s->nruns) {
		if (write_table(s, o, artifact_path, ao.owner_uid, ao.owner_gid))
			ret = -EIO;
	}
	if ((o->no_table || !s->nruns) && s->cmp && !o->quiet) {
		char head[512];

		/* Without the table, the gate still says what it decided. */
		gate_report_headline(s->cmp, head, sizeof(head));
		fprintf(stderr, "tsarun: gate %s: %s\n",
			s->cmp->outcome == GATE_FAIL   ? "FAILED"
			: s->cmp->outcome == GATE_WARN ? "passed with a warning"
						       : "passed",
			head);
	}
	if (!getrusage(RUSAGE_SELF, &self))
		s->supervisor_max_rss_kb = self.ru_maxrss;
	if (s->cmp && outputs_gate(s->cmp, o, session_command(s), ao.owner_uid, ao.owner_gid))
		ret = -EIO;
	if (artifact_write(s, artifact_path, &ao, err, sizeof(err))) {
		fprintf(stderr, "tsarun: %s\n", err);
		ret = -EIO;
	}
	s->bash_folded = NULL;
	free(folded);
	if (o->flame && s->nruns && write_profiles(s, o, user, artifact_path))
		ret = -EIO;
	if (o->timeline && s->nruns && write_trace(s, o, user, artifact_path))
		ret = -EIO;
	return ret;
}
