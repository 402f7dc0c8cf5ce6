/* SPDX-License-Identifier: MIT */
/*
 * A private work directory: PREFIX.XXXXXX, mode 0700, in $TMPDIR (else
 * /tmp), made with its user's credentials (lib/fscreds.h) so that it and
 * what is made in it are that user's from the start, and held by
 * descriptor: what is made, read or removed in it later goes through the
 * descriptor, never through its path again, so a directory swapped for a
 * link meanwhile is not followed.
 *
 * Knows nothing of tsarun.
 */
#ifndef LIB_WORKDIR_H
#define LIB_WORKDIR_H

#include <limits.h>
#include <stddef.h>

struct fscreds;

struct workdir {
	char path[PATH_MAX]; /* for others to use (an environment variable) */
	char name[64];	     /* in parent */
	int fd;		     /* the directory */
	int parent;	     /* where it was made */
};

/*
 * Make one. maxlen: the longest its path may be (a socket's address has
 * 108 bytes); $TMPDIR when it is set, absolute and short enough, else /tmp
 * (note says why $TMPDIR was not used, else it is empty). Returns 0, or
 * -errno with err set.
 */
int workdir_make(struct workdir *w, const char *prefix, const struct fscreds *owner, size_t maxlen,
		 char *note, size_t notelen, char *err, size_t errlen);

/* Remove files (a '\0'-separated list ending with an empty name), then the directory. */
void workdir_remove(struct workdir *w, const char *files, const struct fscreds *owner);

#endif /* LIB_WORKDIR_H */
