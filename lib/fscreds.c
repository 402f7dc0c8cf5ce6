// SPDX-License-Identifier: MIT
/*
 * Filesystem credentials of the calling thread (fscreds.h). The raw system
 * calls are used on purpose: glibc's setgroups() changes every thread of
 * the process, the kernel's only the caller, which is what a moment's
 * change must do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fscreds.h"

static struct fscreds dflt;
static gid_t *dflt_groups;
static bool have_dflt;
/* The process's own supplementary groups, to go back to. */
static gid_t *own_groups;
static int own_ngroups = -1;

int fscreds_set_default(const struct fscreds *c)
{
	gid_t *g = NULL;
	int n;

	if (own_ngroups < 0) {
		n = getgroups(0, NULL);
		if (n < 0)
			return -errno;
		own_groups = calloc((size_t)n + 1, sizeof(*own_groups));
		if (!own_groups)
			return -ENOMEM;
		n = getgroups(n, own_groups);
		if (n < 0) {
			free(own_groups);
			own_groups = NULL;
			return -errno;
		}
		own_ngroups = n;
	}
	if (!c) {
		have_dflt = false;
		return 0;
	}
	if (c->ngroups > 0) {
		g = calloc((size_t)c->ngroups, sizeof(*g));
		if (!g)
			return -ENOMEM;
		memcpy(g, c->groups, (size_t)c->ngroups * sizeof(*g));
	}
	free(dflt_groups);
	dflt_groups = g;
	dflt = *c;
	dflt.groups = g;
	dflt.ngroups = g ? c->ngroups : 0;
	have_dflt = true;
	return 0;
}

const struct fscreds *fscreds_default(void)
{
	return have_dflt ? &dflt : NULL;
}

static struct fscreds reader;
static gid_t *reader_groups;
static bool have_reader;

int fscreds_set_reader(const struct fscreds *c)
{
	gid_t *g = NULL;

	if (own_ngroups < 0 && fscreds_set_default(fscreds_default()))
		return -ENOMEM;
	have_reader = false;
	if (!c)
		return 0;
	if (c->ngroups > 0) {
		g = calloc((size_t)c->ngroups, sizeof(*g));
		if (!g)
			return -ENOMEM;
		memcpy(g, c->groups, (size_t)c->ngroups * sizeof(*g));
	}
	free(reader_groups);
	reader_groups = g;
	reader = *c;
	reader.groups = g;
	reader.ngroups = g ? c->ngroups : 0;
	have_reader = true;
	return 0;
}

const struct fscreds *fscreds_reader(void)
{
	return have_reader ? &reader : fscreds_default();
}

bool fscreds_needed(const struct fscreds *c)
{
	if (!c)
		c = fscreds_default();
	if (!c || geteuid() != 0)
		return false;
	return c->uid != 0 || c->gid != getegid();
}

static long set_groups(int n, const gid_t *g)
{
	return syscall(SYS_setgroups, (size_t)n, g);
}

int fscreds_enter(const struct fscreds *c, struct fscreds_save *s)
{
	int err;

	s->active = false;
	if (!c)
		c = fscreds_default();
	if (!c || !fscreds_needed(c))
		return 0;
	if (own_ngroups < 0 && fscreds_set_default(fscreds_default()))
		return -ENOMEM;
	s->fsuid = (uid_t)syscall(SYS_setfsuid, -1);
	s->fsgid = (gid_t)syscall(SYS_setfsgid, -1);
	if (set_groups(c->ngroups, c->groups))
		return -errno;
	syscall(SYS_setfsgid, c->gid);
	if ((gid_t)syscall(SYS_setfsgid, -1) != c->gid) {
		err = -EPERM;
		goto out_groups;
	}
	syscall(SYS_setfsuid, c->uid);
	if ((uid_t)syscall(SYS_setfsuid, -1) != c->uid) {
		err = -EPERM;
		syscall(SYS_setfsgid, s->fsgid);
		goto out_groups;
	}
	s->active = true;
	return 0;
out_groups:
	set_groups(own_ngroups, own_groups);
	return err;
}

void fscreds_leave(struct fscreds_save *s)
{
	int saved_errno = errno;

	if (!s->active)
		return;
	/* The uid first: back to 0, the capabilities it took away come back. */
	syscall(SYS_setfsuid, s->fsuid);
	syscall(SYS_setfsgid, s->fsgid);
	set_groups(own_ngroups, own_groups);
	s->active = false;
	errno = saved_errno; /* the caller's -errno comes from what it did as the user */
}
