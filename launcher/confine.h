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
struct outputs;
struct probeset;
struct sandbox_opts;
struct outputs_opts;
struct target_user;

/* What the confinement was asked for (options.h holds them; options_for_confine()). */
struct confine_opts {
	bool stacks;	 /* --stacks: the kernel's symbols opened before the sandbox */
	bool timeline;	 /* --timeline: the interrupts that woke threads too */
	bool no_sandbox; /* --no-sandbox: neither root given up nor the sandbox */
	int verbose;
	bool wide; /* --wide: its warnings unwrapped (outputs_stderr_width()) */
};

struct confine {
	struct confine_opts o;
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

/*
 * Whom tsarun works for: under sudo, the files it makes or opens for the
 * user are made with the user's rights (lib/fscreds.h), and what the
 * command's user could have put in place is read with that user's. 0 or
 * -errno with a message.
 */
int confine_act_for(const struct target_user *u, char *err, size_t errlen);

/*
 * compare and report read artifacts anyone may have written: they do it
 * under the supervisor's filter (sandbox.h), which allows all they need,
 * as the invoking user under sudo. Their files, as plan asks, are planned
 * into *out first (when out is given; plan may then be NULL). 0, or
 * -EINVAL once the reason is printed.
 */
int confine_offline(const struct confine_opts *o, const struct outputs_opts *plan,
		    struct outputs **out);

#endif /* TSARUN_CONFINE_H */
