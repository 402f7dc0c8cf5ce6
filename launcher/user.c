// SPDX-License-Identifier: MIT
/* Resolve the user the command runs as. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "user.h"

/* name's groups (gid its primary one); without a name, gid alone. */
static int groups_of(const char *name, gid_t gid, gid_t **groups, int *ngroups)
{
	int n = 32;

	for (int tries = 0; tries < 8; tries++) {
		gid_t *g = realloc(*groups, (size_t)n * sizeof(*g));

		if (!g)
			return -ENOMEM;
		*groups = g;
		if (!name) {
			g[0] = gid;
			*ngroups = 1;
			return 0;
		}
		int want = n;

		if (getgrouplist(name, gid, g, &want) >= 0) {
			*ngroups = want;
			return 0;
		}
		n = want > n ? want : n * 2;
	}
	return -E2BIG;
}

static int load_groups(struct target_user *u, const char *name)
{
	return groups_of(name, u->gid, &u->groups, &u->ngroups);
}

/*
 * A uid without a passwd entry has no home: "/" (as systemd gives such a
 * user), never the HOME of the root that ran tsarun.
 */
static void no_passwd_entry(struct target_user *u, uint64_t id)
{
	snprintf(u->name, sizeof(u->name), "%lu", (unsigned long)id);
	snprintf(u->home, sizeof(u->home), "/");
}

/* Under sudo: the invoking user, whom tsarun works for. */
static int set_caller(struct target_user *u, uint64_t uid, const char *sudo_gid)
{
	struct passwd *pw = getpwuid((uid_t)uid);
	uint64_t gid;

	u->on_behalf = true;
	u->caller_uid = (uid_t)uid;
	u->caller_gid = pw ? pw->pw_gid : (gid_t)uid;
	if (sudo_gid && !parse_uint(sudo_gid, 0, 0xfffffffe, &gid))
		u->caller_gid = (gid_t)gid;
	return groups_of(pw ? pw->pw_name : NULL, u->caller_gid, &u->caller_groups,
			 &u->caller_ngroups);
}

static int fill_from_passwd(struct target_user *u, const struct passwd *pw)
{
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	snprintf(u->home, sizeof(u->home), "%s", pw->pw_dir ? pw->pw_dir : "");
	return load_groups(u, pw->pw_name);
}

int target_user__resolve(struct target_user *u, const char *user_opt, char *err, size_t errlen)
{
	const char *sudo_uid = getenv("SUDO_UID");
	const char *sudo_gid = getenv("SUDO_GID");
	struct passwd *pw;
	bool numeric;
	uint64_t id;
	int ret;

	memset(u, 0, sizeof(*u));
	u->source = "self";

	/* Under sudo, whatever the command runs as, tsarun works for the invoking user. */
	if (geteuid() == 0 && sudo_uid && !parse_uint(sudo_uid, 1, 0xfffffffe, &id) && user_opt &&
	    set_caller(u, id, sudo_gid)) {
		snprintf(err, errlen, "cannot read the groups of user %lu", (unsigned long)id);
		return -ENOMEM;
	}
	if (user_opt) {
		u->source = "--user";
		errno = 0;
		pw = getpwnam(user_opt);
		numeric = !parse_uint(user_opt, 0, 0xfffffffe, &id);
		if (!pw && numeric)
			pw = getpwuid((uid_t)id);
		if (!pw && !numeric) {
			snprintf(err, errlen, "--user: no such user '%s'", user_opt);
			return -ENOENT;
		}
		if (geteuid() != 0 && (pw ? pw->pw_uid : (uid_t)id) != geteuid()) {
			snprintf(err, errlen, "--user '%s': switching users needs root", user_opt);
			return -EPERM;
		}
		if (pw) {
			ret = fill_from_passwd(u, pw);
		} else {
			/* A uid without a passwd entry (containers): the group of that number, no other. */
			u->uid = (uid_t)id;
			u->gid = (gid_t)id;
			no_passwd_entry(u, id);
			ret = load_groups(u, NULL);
		}
		if (ret) {
			snprintf(err, errlen, "--user '%s': cannot read its groups", user_opt);
			return ret;
		}
		u->change = geteuid() == 0;
		return 0;
	}

	if (geteuid() != 0 || !sudo_uid)
		return 0;
	if (parse_uint(sudo_uid, 0, 0xfffffffe, &id)) {
		snprintf(err, errlen, "SUDO_UID='%s' is not a user id (unset it or use --user)",
			 sudo_uid);
		return -EINVAL;
	}
	if (id == 0)
		return 0; /* sudo from root: nothing to drop */
	u->source = "sudo";
	u->change = true;
	pw = getpwuid((uid_t)id);
	if (pw) {
		ret = fill_from_passwd(u, pw);
		if (ret) {
			snprintf(err, errlen, "cannot read the groups of user %lu",
				 (unsigned long)id);
			return ret;
		}
	} else {
		/* A uid without a passwd entry (containers): its ids, no other groups. */
		uint64_t gid;

		if (!sudo_gid || parse_uint(sudo_gid, 0, 0xfffffffe, &gid)) {
			snprintf(err, errlen,
				 "SUDO_UID=%lu has no passwd entry and SUDO_GID is unset",
				 (unsigned long)id);
			return -EINVAL;
		}
		u->uid = (uid_t)id;
		u->gid = (gid_t)gid;
		no_passwd_entry(u, id);
		ret = load_groups(u, NULL);
		if (ret)
			return ret;
	}
	/* sudo's idea of the primary group wins over the passwd entry. */
	if (sudo_gid && !parse_uint(sudo_gid, 0, 0xfffffffe, &id))
		u->gid = (gid_t)id;
	/* tsarun works for the user the command runs as: the same ids and groups, read once. */
	u->on_behalf = true;
	u->caller_uid = u->uid;
	u->caller_gid = u->gid;
	u->caller_groups = malloc((size_t)u->ngroups * sizeof(gid_t) + 1);
	if (!u->caller_groups)
		return -ENOMEM;
	memcpy(u->caller_groups, u->groups, (size_t)u->ngroups * sizeof(gid_t));
	u->caller_ngroups = u->ngroups;
	return 0;
}

void target_user__free(struct target_user *u)
{
	free(u->groups);
	free(u->caller_groups);
	u->groups = u->caller_groups = NULL;
	u->ngroups = u->caller_ngroups = 0;
}
