/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's confinement, composed once set-up is done (every probe
 * loaded and armed, every output planned) and before the first command is
 * released:
 *   1. the watchdog learns the directories outputs go into (watchdog.h),
 *      and the kernel's symbols are opened, while tsarun is still root;
 *   2. tsarun gives up root: the invoking user under sudo, only the
 *      capabilities its sources still use (privdrop.h);
 *   3. Landlock and the seccomp filter (sandbox.h);
 *   4. what needs no privilege and reads what others wrote is done from
 *      here on: the baseline is parsed (gating.h).
 * --no-sandbox leaves out 2 and 3 (and says so in the artifact).
 */
#ifndef TSARUN_CONFINE_H
#define TSARUN_CONFINE_H

#include <stdbool.h>
#include <stddef.h>

struct gating;
struct probeset;
struct sandbox_opts;
struct target_user;
struct tsarun_opts;

struct confine {
	const struct tsarun_opts *o;
	const struct target_user *user;
	const struct probeset *ps;
	struct gating *g;	   /* NULL: no gate */
	int work_dir, work_parent; /* --bash's work directory (-1: none) */
	/* what happened, for the artifact */
	bool done; /* once per session, whichever supervisor (command, baseline) comes first */
	bool dropped;
	char drop_reason[192]; /* why root was kept, or empty */
};

/* The sandbox's options for c (for sandbox_prepare() too). */
void confine_sandbox_opts(const struct confine *c, struct sandbox_opts *so, int *dirs,
			  size_t maxdirs);

/* Returns 0, or -errno with a message in err (the run is then not released). */
int confine_supervisor(struct confine *c, char *err, size_t errlen);

#endif /* TSARUN_CONFINE_H */
