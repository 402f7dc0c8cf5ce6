/* SPDX-License-Identifier: MIT */
/*
 * The JSON artifact ("schema": "tsarun/1", documented by
 * doc/tsarun.schema.json). The only module that includes cJSON.
 *
 * artifact_emit() streams the document to a FILE: threads and processes
 * are built and freed one at a time, so memory does not grow with them.
 * artifact_render() returns the same text (malloc'd, caller frees).
 * artifact_write() streams it atomically: a temporary file in the same
 * directory, fsync, rename. A path that names something other than a
 * regular file (/dev/null, a FIFO) is written in place. artifact_read()
 * (artifact_read.c) reads one back.
 */
#ifndef TSARUN_ARTIFACT_H
#define TSARUN_ARTIFACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct session;

#define ARTIFACT_SCHEMA "tsarun/1"

struct artifact_opts {
	uid_t owner_uid; /* chown the file to this user (-1: leave as is) */
	gid_t owner_gid;
	/*
	 * Write in place (a device, a FIFO: 1) or by rename (-1), as decided
	 * before the command ran, so that a link it put at the path meanwhile
	 * is replaced, not followed; 0: decide now.
	 */
	int in_place;
};

int artifact_emit(const struct session *s, FILE *f);
char *artifact_render(const struct session *s);

/* Returns 0 or -errno; err names the file and says what failed. */
int artifact_write(const struct session *s, const char *path, const struct artifact_opts *o,
		   char *err, size_t errlen);

/*
 * Read an artifact back (any tsarun/1 document): host, command, and every
 * run's figures (status, exit, wall, rusage, instructions, totals, sources)
 * and in a paired artifact the baseline command's runs. With `detail`
 * also the process and thread rows of the runs that kept them, and the
 * quality figures the table prints; with `cmp` (NULL: not wanted) the
 * comparison, when there is one (*have_cmp says). `what` names the file in
 * messages ("baseline", "NEW"). Every way a file can be wrong (missing,
 * empty, truncated, not JSON, another schema, a run without its figures)
 * gives -errno and a message that names the file and says what is wrong.
 * s is zeroed first; free it with session__free(), cmp with
 * comparison__free().
 */
struct comparison;

struct artifact_read_opts {
	const char *what;
	bool detail;
	struct comparison *cmp;
	bool *have_cmp;
};

int artifact_read(const char *path, const struct artifact_read_opts *o, struct session *s,
		  char *err, size_t errlen);

/* The same from text in memory (name is used in messages). */
int artifact_parse(const char *text, size_t len, const char *name,
		   const struct artifact_read_opts *o, struct session *s, char *err, size_t errlen);

struct host_info;

/* One line of `tsarun doctor`. */
struct doctor_check {
	char name[24];
	bool available;
	char status[24]; /* "available", "unavailable", "off", ... */
	char detail[512];
};

/* The --json form of `tsarun doctor`. Caller frees. */
char *artifact_render_doctor(const struct doctor_check *c, int n, const struct host_info *h);

#endif /* TSARUN_ARTIFACT_H */
