// SPDX-License-Identifier: MIT
/* The supervisor's confinement, in its order (confine.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/fscreds.h"
#include "lib/outfile.h"

#include "confine.h"
#include "gating.h"
#include "outputs.h"
#include "privdrop.h"
#include "probe_set.h"
#include "sandbox.h"
#include "symbolize.h"
#include "termwrap.h"
#include "textsafe.h"
#include "user.h"
#include "watchdog.h"

#define MAX_DIRS 32

/* Root that stays root (no one to become) and acts as the command's user to read. */
static bool stays_root_as_others(const struct confine *c)
{
	return geteuid() == 0 && !c->user->on_behalf && fscreds_reader();
}

void confine_sandbox_opts(const struct confine *c, struct sandbox_opts *so, int *dirs,
			  size_t maxdirs)
{
	memset(so, 0, sizeof(*so));
	so->nwrite_dirs = outfile_dirs(dirs, maxdirs);
	so->write_dirs = dirs;
	so->work_dir = c->work_dir;
	so->work_parent = c->work_parent;
	so->fscreds = stays_root_as_others(c);
}

/* Which capabilities the sources use after set-up, on this kernel. */
static unsigned sources_need(const struct confine *c)
{
	const struct probeset *ps = c->ps;
	unsigned need = 0;

	if (ps->sched && privdrop_bpf_needs_cap())
		need |= PRIVDROP_NEED_BPF;
	if (ps->perf || ps->stacks)
		need |= PRIVDROP_NEED_PERF;
	if (ps->ts)
		need |= PRIVDROP_NEED_NETLINK;
	return need;
}

static void give_up_root(struct confine *c)
{
	const struct target_user *u = c->user;
	struct privdrop_opts po = {.pdeathsig = watchdog_active() ? watchdog_signal() : 0};
	unsigned need;
	char why[160];

	if (geteuid() != 0)
		return; /* nothing to give up */
	need = sources_need(c);
	if (u->on_behalf) {
		po.change_user = true;
		po.uid = u->caller_uid;
		po.gid = u->caller_gid;
		po.groups = u->caller_groups;
		po.ngroups = u->caller_ngroups;
		/* The command runs as someone else: its signals, its /proc, its work directory. */
		if (u->change && u->uid != u->caller_uid)
			need |= PRIVDROP_NEED_OTHERS;
	} else {
		need |= PRIVDROP_NEED_ROOT_FS;
		snprintf(c->drop_reason, sizeof(c->drop_reason),
			 "run by root itself, not for a user (no SUDO_UID): root keeps only the "
			 "capabilities it needs");
	}
	po.keep = privdrop_caps(need);
	if (privdrop_apply(&po, why, sizeof(why))) {
		snprintf(c->drop_reason, sizeof(c->drop_reason), "%s", why);
		termwrap_say(stderr, outputs_stderr_width(c->o.wide),
			     "tsarun: warning: ", "the supervisor keeps root: %s", why);
		return;
	}
	c->dropped = po.change_user;
	/* The parent-death signal was set again: had the watchdog gone meanwhile? */
	if (watchdog_active() && watchdog_gone())
		watchdog_note_gone();
}

int confine_supervisor(struct confine *c, char *err, size_t errlen)
{
	const struct target_user *u = c->user;
	struct sandbox_opts so;
	int dirs[MAX_DIRS];
	size_t n = outfile_dirs(dirs, MAX_DIRS);
	char why[192];

	if (c->done)
		return 0;
	c->done = true;
	/* 1: while tsarun is still its own: what the watchdog may clean, the kernel's symbols. */
	watchdog_seal(dirs, n, u->on_behalf ? u->caller_uid : (uid_t)-1,
		      u->on_behalf ? u->caller_gid : (gid_t)-1, u->caller_groups,
		      u->on_behalf ? u->caller_ngroups : 0);
	outfile_set_temp_hook(watchdog_temp);
	/* --timeline: the interrupts that woke threads are named by their kernel frames. */
	if (c->o.stacks || c->o.timeline)
		symbolizer_open_kernel();
	if (!c->o.no_sandbox) {
		/* 2 and 3 */
		give_up_root(c);
		confine_sandbox_opts(c, &so, dirs, MAX_DIRS);
		if (sandbox_enter(&so, why, sizeof(why)))
			termwrap_say(stderr, outputs_stderr_width(c->o.wide),
				     "tsarun: warning: ", "running unconfined: %s", why);
		else if (c->o.verbose && sandbox_landlock_reason())
			termwrap_say(stderr, outputs_stderr_width(c->o.wide), "tsarun: ",
				     "Landlock not in force: %s (the seccomp filter is)",
				     sandbox_landlock_reason());
	}
	/* 4: the baseline, then whether this machine can measure what it gates */
	if (c->g) {
		int ret = gating__parse(c->g, err, errlen);

		return ret ? ret : gating__check_machine(c->g, c->ps, err, errlen);
	}
	return 0;
}

int confine_act_for(const struct target_user *u, char *err, size_t errlen)
{
	int ret = 0;

	if (u->on_behalf)
		ret = fscreds_set_default(&(struct fscreds){.uid = u->caller_uid,
							    .gid = u->caller_gid,
							    .groups = u->caller_groups,
							    .ngroups = u->caller_ngroups});
	else
		ret = fscreds_set_default(NULL);
	if (!ret && u->change && u->uid != 0)
		ret = fscreds_set_reader(&(struct fscreds){
		    .uid = u->uid, .gid = u->gid, .groups = u->groups, .ngroups = u->ngroups});
	if (ret)
		snprintf(err, errlen, "cannot act for the user: %s", strerror(-ret));
	return ret;
}

int confine_offline(const struct confine_opts *o, const struct outputs_opts *plan,
		    struct outputs **out)
{
	struct target_user u;
	struct sandbox_opts so = {.work_dir = -1, .work_parent = -1};
	char why[600];
	int dirs[32], ret = 0;

	if (target_user__resolve(&u, NULL, why, sizeof(why)) ||
	    confine_act_for(&u, why, sizeof(why))) {
		textsafe_term_line(stderr, "tsarun: ", why, "");
		return -EINVAL;
	}
	/* Its files (--junit, --markdown, the step summary), planned as a run's are. */
	if (out) {
		*out = outputs__plan(plan, NULL, false, why, sizeof(why));
		if (!*out) {
			textsafe_term_line(stderr, "tsarun: ", why, "");
			ret = -EINVAL;
			goto out;
		}
	}
	if (o->no_sandbox)
		goto out;
	/* Nothing here needs a privilege: under sudo, the invoking user; root keeps its file rights. */
	if (geteuid() == 0) {
		struct privdrop_opts po = {
		    .change_user = u.on_behalf,
		    .uid = u.caller_uid,
		    .gid = u.caller_gid,
		    .groups = u.caller_groups,
		    .ngroups = u.caller_ngroups,
		    .keep = u.on_behalf ? 0 : privdrop_caps(PRIVDROP_NEED_ROOT_FS),
		};

		if (privdrop_apply(&po, why, sizeof(why)))
			termwrap_say(stderr, outputs_stderr_width(o->wide),
				     "tsarun: warning: ", "keeping root: %s", why);
	}
	so.nwrite_dirs = outfile_dirs(dirs, 32);
	so.write_dirs = dirs;
	if (sandbox_enter(&so, why, sizeof(why)))
		termwrap_say(stderr, outputs_stderr_width(o->wide),
			     "tsarun: warning: ", "running unconfined: %s", why);
out:
	target_user__free(&u);
	return ret;
}
