// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact.h"
#include "gate_report.h"
#include "bashprof.h"
#include "options.h"
#include "outputs.h"
#include "run.h"
#include "table.h"
#include "user.h"

static bool use_color(const struct tsarun_opts *o, FILE *f)
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

static void write_table(const struct session *s, const struct tsarun_opts *o,
			const char *artifact_path)
{
	const struct run *r = &s->runs[s->nruns - 1];
	struct table_opts to = {
	    .sort = o->sort,
	    .top = o->top,
	    .command = o->argv[0],
	    .artifact = artifact_path,
	};
	FILE *f = stderr;

	if (o->report_path) {
		f = fopen(o->report_path, "we");
		if (!f) {
			fprintf(stderr, "tsarun: cannot write the report '%s': %s\n",
				o->report_path, strerror(errno));
			f = stderr;
		}
	}
	to.color = use_color(o, f);
	table_print(f, r, &to);
	if (s->nruns > 1)
		gate_report_runs(f, s->runs, s->nruns, to.color);
	if (r->bash) {
		struct bashprof_print_opts bo = {.color = to.color};

		bashprof__print(r->bash, f, &bo);
	}
	if (f != stderr)
		fclose(f);
}

/*
 * --bash: bash.folded beside the artifact. Not when the artifact goes to
 * a device or a pipe (--json /dev/null): there is no "beside" there.
 */
static char *write_folded(const struct run *r, const char *artifact_path,
			  const struct target_user *user)
{
	struct stat st;
	char *dir, *path = NULL, *slash;
	FILE *f;

	if (!stat(artifact_path, &st) && !S_ISREG(st.st_mode))
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
	f = fopen(path, "we");
	if (!f || bashprof__write_folded(r->bash, f) || fclose(f)) {
		fprintf(stderr, "tsarun: cannot write '%s': %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		free(path);
		return NULL;
	}
	if (user->change && chown(path, user->uid, user->gid))
		(void)0;
	return path;
}

int outputs_write(struct session *s, const struct tsarun_opts *o, const struct target_user *user,
		  const char *artifact_path)
{
	struct rusage self;
	struct artifact_opts ao = {
	    .owner_uid = user->change ? user->uid : (uid_t)-1,
	    .owner_gid = user->change ? user->gid : (gid_t)-1,
	};
	char err[512];
	int ret = 0;

	char *folded = NULL;

	if (s->nruns && s->runs[s->nruns - 1].bash) {
		folded = write_folded(&s->runs[s->nruns - 1], artifact_path, user);
		s->bash_folded = folded;
	}
	if (!o->no_table && s->nruns)
		write_table(s, o, artifact_path);
	if (!getrusage(RUSAGE_SELF, &self))
		s->supervisor_max_rss_kb = self.ru_maxrss;
	if (artifact_write(s, artifact_path, &ao, err, sizeof(err))) {
		fprintf(stderr, "tsarun: %s\n", err);
		ret = -EIO;
	}
	s->bash_folded = NULL;
	free(folded);
	return ret;
}
