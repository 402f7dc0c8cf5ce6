// SPDX-License-Identifier: MIT
/* A private work directory (workdir.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fscreds.h"
#include "outfile.h"
#include "workdir.h"

static void suffix(char out[7])
{
	static const char chars[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[6];

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec t;

		clock_gettime(CLOCK_MONOTONIC, &t);
		for (size_t i = 0; i < sizeof(r); i++)
			r[i] = (unsigned char)((uint64_t)t.tv_nsec >> (i * 4)) ^
			       (unsigned char)getpid();
	}
	for (size_t i = 0; i < sizeof(r); i++)
		out[i] = chars[r[i] % (sizeof(chars) - 1)];
	out[6] = '\0';
}

int workdir_make(struct workdir *w, const char *prefix, const struct fscreds *owner, size_t maxlen,
		 char *note, size_t notelen, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR"), *base = "/tmp";
	char why[512], s[7];
	struct fscreds_save sv;
	struct stat st;
	int ret;

	memset(w, 0, sizeof(*w));
	w->fd = w->parent = -1;
	note[0] = '\0';
	if (tmp && *tmp) {
		/* Room for "/PREFIX.XXXXXX" and the longest name made in it (the caller's maxlen). */
		if (tmp[0] != '/')
			snprintf(note, notelen, "TMPDIR='%s' is not an absolute path: /tmp is used",
				 tmp);
		else if (strlen(tmp) + strlen(prefix) + 8 > maxlen)
			snprintf(
			    note, notelen,
			    "TMPDIR='%s' is too long for a socket's address (%zu bytes at most): "
			    "/tmp is used",
			    tmp, maxlen - strlen(prefix) - 8);
		else
			base = tmp;
	}
	w->parent = outdir_resolve(AT_FDCWD, base, false, why, sizeof(why));
	if (w->parent < 0) {
		ret = w->parent;
		snprintf(err, errlen, "cannot use the directory '%s': %s", base, why);
		return ret;
	}
	ret = fscreds_enter(owner, &sv);
	if (ret) {
		snprintf(err, errlen, "cannot take the user's rights: %s", strerror(-ret));
		goto out_parent;
	}
	ret = -EEXIST;
	for (int tries = 0; tries < 32 && ret == -EEXIST; tries++) {
		suffix(s);
		snprintf(w->name, sizeof(w->name), "%s.%s", prefix, s);
		ret = mkdirat(w->parent, w->name, 0700) ? -errno : 0;
	}
	if (!ret) {
		w->fd = openat(w->parent, w->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (w->fd < 0)
			ret = -errno;
	}
	fscreds_leave(&sv);
	if (ret) {
		snprintf(err, errlen, "cannot create a directory in %s: %s", base, strerror(-ret));
		goto out_parent;
	}
	/* Its own, as made: not a directory someone put there in between. */
	if (fstat(w->fd, &st) || (owner && st.st_uid != owner->uid) || (st.st_mode & 077)) {
		snprintf(err, errlen, "the directory made in %s is not the one expected", base);
		ret = -EPERM;
		goto out_fd;
	}
	snprintf(w->path, sizeof(w->path), "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/",
		 w->name);
	return 0;
out_fd:
	close(w->fd);
	w->fd = -1;
out_parent:
	close(w->parent);
	w->parent = -1;
	return ret;
}

void workdir_remove(struct workdir *w, const char *files, const struct fscreds *owner)
{
	struct fscreds_save sv;

	if (w->fd < 0)
		return;
	if (!fscreds_enter(owner, &sv)) {
		for (const char *f = files; f && *f; f += strlen(f) + 1)
			unlinkat(w->fd, f, 0);
		unlinkat(w->parent, w->name, AT_REMOVEDIR);
		fscreds_leave(&sv);
	}
	close(w->fd);
	close(w->parent);
	w->fd = w->parent = -1;
}
