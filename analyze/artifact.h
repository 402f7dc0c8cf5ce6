/* SPDX-License-Identifier: MIT */
/*
 * The JSON artifact ("schema": "tsarun/1", documented by
 * doc/tsarun.schema.json). The only module that includes cJSON.
 *
 * artifact_emit() streams the document to a FILE: threads and processes
 * are built and freed one at a time, so memory does not grow with them.
 * artifact_render() returns the same text (malloc'd, caller frees).
 * artifact_write() streams it into a planned output file (lib/outfile.h:
 * a new file renamed over the path, fsynced, or the descriptor planned).
 * artifact_read() (artifact_read.c) reads one back.
 */
#ifndef TSARUN_ARTIFACT_H
#define TSARUN_ARTIFACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct outfile;
struct session;

#define ARTIFACT_SCHEMA "tsarun/1"

int artifact_emit(const struct session *s, FILE *f);
char *artifact_render(const struct session *s);

/*
 * The comparison of a session (s->cmp set) as the artifact writes its
 * "comparison" key, on its own: the offline verdict of `tsarun compare`
 * for the HTML page. malloc'd (free() it); NULL when out of memory.
 */
char *artifact_render_comparison(const struct session *s);

/*
 * Write into of, and commit it (aborted on failure). Returns 0 or -errno;
 * err names the file and says what failed.
 */
int artifact_write(const struct session *s, struct outfile *of, char *err, size_t errlen);

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
	/*
	 * Not NULL: *text is set to the whole document as read (every key,
	 * also the ones this reader does not know), made strict UTF-8 by
	 * textsafe_json_doc. malloc'd: the caller frees it. Left alone when
	 * the read fails.
	 */
	char **text;
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
