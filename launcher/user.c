// SPDX-License-Identifier: MIT
/* Resolve the user the command runs as. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "user.h"

static int load_groups(struct target_user *u, const char *name)
{
	int n = 32;

	for (int tries = 0; tries < 8; tries++) {
		gid_t *g = realloc(u->groups, (size_t)n * sizeof(*g));

		if (!g)
			return -ENOMEM;
		u->groups = g;
		if (!name) {
			u->groups[0] = u->gid;
			u->ngroups = 1;
			return 0;
		}
		int want = n;

		if (getgrouplist(name, u->gid, u->groups, &want) >= 0) {
			u->ngroups = want;
			return 0;
		}
		n = want > n ? want : n * 2;
	}
	return -E2BIG;
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
			snprintf(u->name, sizeof(u->name), "%lu", (unsigned long)id);
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
		snprintf(u->name, sizeof(u->name), "%lu", (unsigned long)id);
		ret = load_groups(u, NULL);
		if (ret)
			return ret;
	}
	/* sudo's idea of the primary group wins over the passwd entry. */
	if (sudo_gid && !parse_uint(sudo_gid, 0, 0xfffffffe, &id))
		u->gid = (gid_t)id;
	return 0;
}

void target_user__free(struct target_user *u)
{
	free(u->groups);
	u->groups = NULL;
	u->ngroups = 0;
}
