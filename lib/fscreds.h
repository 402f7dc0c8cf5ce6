/* SPDX-License-Identifier: MIT */
/*
 * Acting on a user's behalf for a moment, the way sudoedit opens files: a
 * privileged process that creates, opens or reads a file for someone else
 * does it with that someone's filesystem credentials (fsuid, fsgid and
 * supplementary groups of the calling thread), so that the kernel checks
 * that user's permissions, applies fs.protected_* as for that user, and
 * new files and directories belong to that user. Nothing else about the
 * process changes, and only the calling thread is affected.
 *
 * fscreds_set_default() names the user a process acts for (the invoking
 * user under sudo); fscreds_enter(NULL, ...) then takes that user's rights
 * until fscreds_leave(). Both are no-ops in a process that has no one to
 * act for, or that is not privileged (it can only act as itself anyway),
 * or that already is that user (after a privilege drop).
 *
 * Knows nothing of tsarun.
 */
#ifndef LIB_FSCREDS_H
#define LIB_FSCREDS_H

#include <stdbool.h>
#include <sys/types.h>

struct fscreds {
	uid_t uid;
	gid_t gid;
	const gid_t *groups; /* supplementary groups; copied by fscreds_set_default() */
	int ngroups;
};

/*
 * The user this process acts for (NULL: itself). The groups are copied,
 * and the process's own supplementary groups are saved to go back to.
 * Returns 0 or -errno.
 */
int fscreds_set_default(const struct fscreds *c);
const struct fscreds *fscreds_default(void);

/*
 * The user whose files the process reads on someone else's behalf, where
 * that user could have put them (the executables of a command run as that
 * user): NULL, the default one. Copied like the default.
 */
int fscreds_set_reader(const struct fscreds *c);
const struct fscreds *fscreds_reader(void);

/* What fscreds_leave() puts back. */
struct fscreds_save {
	bool active;
	uid_t fsuid;
	gid_t fsgid;
};

/*
 * Take c's filesystem credentials (NULL: the default user's) until
 * fscreds_leave(). Returns 0, or -errno when they could not be taken (the
 * thread's own are then intact; the caller must not go on as if they had).
 */
int fscreds_enter(const struct fscreds *c, struct fscreds_save *s);
void fscreds_leave(struct fscreds_save *s);

/* Would fscreds_enter(c) change anything (privileged, and c is not this process's user)? */
bool fscreds_needed(const struct fscreds *c);

#endif /* LIB_FSCREDS_H */
