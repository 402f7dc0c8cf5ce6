/* SPDX-License-Identifier: MIT */
/*
 * Output files a privileged process writes for a user, written once here.
 *
 * A file is planned before the work that produces it (so that a typo does
 * not cost a run): its directory is resolved and opened once, with the
 * user's rights (fscreds.h), never through a symbolic link that neither
 * root nor that user owns; what is at the path is checked, and anything a
 * later write would go through (a descriptor, the null device, a FIFO
 * for a stream) is opened now. Nothing is ever looked up by name again
 * outside the directory opened then, so a link or a FIFO put at the path
 * meanwhile is replaced, or refused, never followed.
 *
 *   outfile__plan()    before: directory opened, target checked
 *   outfile__open()    when writing: a new file in that directory (O_TMPFILE
 *                      where the file system has it, else a random hidden
 *                      name), created with the user's credentials; or the
 *                      descriptor planned; a FILE * on it
 *   outfile__commit()  flush, fsync, linked and renamed over the path,
 *                      the directory fsynced
 *   outfile__abort()   nothing is left: the new file is gone
 *
 * Modes:
 *   OUTFILE_REPLACE  a whole file, replaced atomically. "-" and the names
 *                    of descriptors (/dev/stdout, /dev/stderr, /dev/fd/N,
 *                    /proc/self/fd/N) write to that descriptor, and the
 *                    null device is written in place; any other FIFO,
 *                    device or socket at the path is refused. A regular
 *                    file in a directory the user may not write to, but
 *                    that the user may write, is written in place.
 *   OUTFILE_STREAM   written as it goes (opened by outfile__plan(), taken
 *                    with outfile__take_fd()): a regular file truncated,
 *                    or a FIFO (with a reader: waited for at most
 *                    wait_reader_ms), a terminal or another character
 *                    device the user may write, opened non-blocking.
 *   OUTFILE_APPEND   appended to when written (opened then, never through
 *                    a link, only a regular file; created when missing).
 *
 * A write to a descriptor that could wait (a pipe, a terminal, a socket)
 * never blocks: it waits in poll() with the cancel descriptor, which, when
 * readable (a signalfd), ends the write with EINTR.
 *
 * Knows nothing of tsarun. Messages are "cannot write WHAT 'PATH': REASON"
 * (WHAT omitted when NULL) followed by the hint.
 */
#ifndef LIB_OUTFILE_H
#define LIB_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct outdir;
struct outfile;

enum outfile_mode {
	OUTFILE_REPLACE = 0,
	OUTFILE_STREAM,
	OUTFILE_APPEND,
};

/* What "-" names. */
enum outfile_dash {
	OUTFILE_DASH_NONE = 0, /* a file called "-" */
	OUTFILE_DASH_STDOUT,
	OUTFILE_DASH_STDERR,
};

struct outfile_opts {
	enum outfile_mode mode;
	const struct outdir *base; /* a relative path starts here (NULL: the working directory) */
	enum outfile_dash dash;
	const char *what;	 /* "the artifact", in messages (NULL: only the path) */
	const char *hint;	 /* appended to messages (" (use --json FILE)") */
	unsigned wait_reader_ms; /* OUTFILE_STREAM: how long a FIFO's reader is waited for */
	bool no_descriptors;	 /* "/dev/stdout" and the like are plain paths */
	/*
	 * Give a new file to this user (a root that runs a command as someone
	 * else, for that someone): then it is made when planned, and chowned
	 * then, so that nothing is chowned once the process reads what others
	 * wrote. OUTFILE_APPEND makes its file when written: never given.
	 */
	bool give;
	uid_t give_uid;
	gid_t give_gid;
	/*
	 * OUTFILE_REPLACE: the regular file the new one replaces stays, as
	 * PATH.old (as perf keeps perf.data.old), when there was one at the
	 * plan; a link or anything else there is never kept.
	 */
	bool keep_old;
};

/*
 * Open a directory once: resolved from base (NULL: the working directory)
 * with the user's rights, created when create is set (each missing
 * component, mode 0755, the user's). Returns NULL with err set.
 */
struct outdir *outdir__open(const struct outdir *base, const char *path, bool create, char *err,
			    size_t errlen);
void outdir__free(struct outdir *d);

/*
 * The same resolution without keeping the directory as one outputs go
 * into: an O_PATH descriptor (start: a directory descriptor or AT_FDCWD),
 * or -errno with why set.
 */
int outdir_resolve(int start, const char *path, bool create, char *why, size_t whylen);
int outdir__fd(const struct outdir *d);
const char *outdir__path(const struct outdir *d);

struct outfile *outfile__plan(const char *path, const struct outfile_opts *o, char *err,
			      size_t errlen);
void outfile__free(struct outfile *of); /* aborts what was not committed; accepts NULL */

/* Written in place (a descriptor, the null device, a FIFO): no directory to put things beside. */
/* keep_old: a file is there to keep (known at the plan), and was kept (after the commit). */
bool outfile__keeps_old(const struct outfile *of);
bool outfile__kept_old(const struct outfile *of);

bool outfile__in_place(const struct outfile *of);
/* The directory the file goes into (NULL in place). */
const struct outdir *outfile__dir(const struct outfile *of);
const char *outfile__path(const struct outfile *of);
/* The descriptor named ("-", /dev/fd/N), or -1. */
int outfile__named_fd(const struct outfile *of);
struct stat;
/* What is at the path now, in the planned directory, not following a link: 0 or -errno. */
int outfile__lstat(const struct outfile *of, struct stat *st);
/* Its description is shared with others (a socket, a pipe not reopened): never make it non-blocking. */
bool outfile__shared(const struct outfile *of);

/* The planned descriptor of an OUTFILE_STREAM; the caller owns it from then on. */
int outfile__take_fd(struct outfile *of);

/*
 * Start writing: the new file or the planned descriptor, as a FILE *
 * (owned by of: do not fclose it). NULL with err set.
 */
FILE *outfile__open(struct outfile *of, char *err, size_t errlen);

/* Finish: 0, or -errno with err set (and nothing left behind). */
int outfile__commit(struct outfile *of, char *err, size_t errlen);
void outfile__abort(struct outfile *of);

/*
 * The descriptors of every directory planned outputs go into (a
 * confinement allows writes there and nowhere else). Returns how many, at
 * most max.
 */
size_t outfile_dirs(int *fds, size_t max);

/* The descriptor that ends a write waiting for room (-1: none). */
void outfile_set_cancel_fd(int fd);
int outfile_cancel_fd(void);

/*
 * Told when a named file of its own appears in dirfd (a hidden temporary,
 * created: true) or is gone (false), so that someone can remove it should
 * this process die in between.
 */
typedef void (*outfile_temp_hook)(int dirfd, const char *name, bool created);
void outfile_set_temp_hook(outfile_temp_hook hook);

#endif /* LIB_OUTFILE_H */
