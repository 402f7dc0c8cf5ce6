/* SPDX-License-Identifier: MIT */
/*
 * Everything a session leaves behind once its runs are over: the table on
 * stderr (or --report), the artifact, and the files later features add.
 */
#ifndef TSARUN_OUTPUTS_H
#define TSARUN_OUTPUTS_H

struct session;
struct target_user;
struct tsarun_opts;

/*
 * Write every output. Returns 0, or -errno when an output could not be
 * written (the message is already on stderr); the caller still returns
 * the command's status when that is non-zero.
 */
int outputs_write(struct session *s, const struct tsarun_opts *o, const struct target_user *user,
		  const char *artifact_path);

#endif /* TSARUN_OUTPUTS_H */
