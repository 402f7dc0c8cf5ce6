/* SPDX-License-Identifier: MIT */
/*
 * Which user the command runs as, and whom tsarun works for. Under sudo
 * the command runs as the invoking user (SUDO_UID, SUDO_GID and that
 * user's groups), never root by accident; --user chooses explicitly, root
 * included. Under sudo tsarun also works for the invoking user (the
 * caller): every file it writes or opens for them is made with the
 * caller's rights (lib/fscreds.h), and after set-up the supervisor becomes
 * the caller (privdrop.h). The struct owns its groups arrays.
 */
#ifndef TSARUN_USER_H
#define TSARUN_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct target_user {
	bool change; /* false: the command keeps tsarun's credentials */
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int ngroups;
	char name[64];
	char home[256];	    /* "/" for a uid without a passwd entry, never root's */
	const char *source; /* "sudo", "--user" or "self" */
	/* Under sudo: the invoking user, for whom files are made (else on_behalf is false). */
	bool on_behalf;
	uid_t caller_uid;
	gid_t caller_gid;
	gid_t *caller_groups;
	int caller_ngroups;
};

/*
 * Decide the target user from --user (may be NULL) and the environment.
 * Returns 0 or -errno with a message in err.
 */
int target_user__resolve(struct target_user *u, const char *user_opt, char *err, size_t errlen);
void target_user__free(struct target_user *u);

#endif /* TSARUN_USER_H */
