/* SPDX-License-Identifier: MIT */
/*
 * Everything a session leaves behind once its runs are over: the table on
 * stderr (or --report), the artifact, and the files later features add.
 */
#ifndef TSARUN_OUTPUTS_H
#define TSARUN_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>

struct session;
struct target_user;
struct tsarun_opts;

/*
 * Before the command runs: whether --report, --junit and --markdown are
 * written in place (a device or a FIFO) or as new files renamed over their
 * paths, so that a link the command puts there is replaced, not followed.
 */
void outputs_prepare(const struct tsarun_opts *o);

/*
 * Write every output. Returns 0, or -errno when an output could not be
 * written (the message is already on stderr); the caller still returns
 * the command's status when that is non-zero.
 */
int outputs_write(struct session *s, const struct tsarun_opts *o, const struct target_user *user,
		  const char *artifact_path);

#include <sys/types.h>

struct comparison;

/*
 * The gate's verdict for CI: --junit and --markdown files, and in GitHub
 * Actions (GITHUB_ACTIONS=true) the Markdown table appended to
 * $GITHUB_STEP_SUMMARY and annotations on stderr (the runner reads
 * workflow commands from both streams; stdout stays the command's).
 * Files tsarun creates belong to owner_uid:owner_gid unless that is -1
 * (under sudo, the invoking user). Returns 0, or -errno when a file could
 * not be written (the message is on stderr).
 */
int outputs_gate(const struct comparison *c, const struct tsarun_opts *o, const char *command,
		 uid_t owner_uid, gid_t owner_gid);

/*
 * Colour on f: --color always or never, else on a terminal unless NO_COLOR
 * is set to something (an empty NO_COLOR is unset, as no-color.org says).
 */
bool outputs_use_color(const struct tsarun_opts *o, FILE *f);

struct run;

/*
 * One stacked view of a run (enum report_profile: off-CPU, on-CPU, wall)
 * to f, as folded text or an SVG flame graph titled for command: the
 * files --flame writes, and tsarun report --format folded|svg. Returns 0,
 * -ENOENT when the run has no stacks, or -errno.
 */
int outputs_stack_profile(FILE *f, const struct run *r, int which, bool svg, const char *command);

#endif /* TSARUN_OUTPUTS_H */
