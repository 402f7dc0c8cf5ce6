/* SPDX-License-Identifier: MIT */
/*
 * Which user the command runs as. Under sudo it is the invoking user
 * (SUDO_UID, SUDO_GID and that user's groups), never root by accident;
 * --user chooses explicitly, root included. The struct owns its groups array.
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
	char home[256];
	const char *source; /* "sudo", "--user" or "self" */
};

/*
 * Decide the target user from --user (may be NULL) and the environment.
 * Returns 0 or -errno with a message in err.
 */
int target_user__resolve(struct target_user *u, const char *user_opt, char *err, size_t errlen);
void target_user__free(struct target_user *u);

#endif /* TSARUN_USER_H */
