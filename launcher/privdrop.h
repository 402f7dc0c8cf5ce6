/* SPDX-License-Identifier: MIT */
/*
 * Giving up root once set-up is done (OpenSSH's privilege separation: the
 * process that reads what others wrote holds no privilege it does not
 * need). Under sudo the supervisor becomes the invoking user (uid, gid
 * and groups, real, effective and saved), and keeps, of all capabilities,
 * only those its sources still use on descriptors opened before (see
 * privdrop_needed()): what a compromised supervisor can then do is what
 * the user can, plus reading its own maps and counters. Run by root
 * itself, it stays root but loses every capability it does not need.
 * The bounding set is cut to the same, so nothing it could execute
 * (it can execute nothing: sandbox.h) would get more back.
 *
 * The parent-death signal (watchdog.h), which a change of credentials
 * clears, is set again.
 */
#ifndef TSARUN_PRIVDROP_H
#define TSARUN_PRIVDROP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct privdrop_opts {
	bool change_user; /* become uid:gid with groups; else keep the user, drop capabilities */
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	int ngroups;
	uint64_t keep; /* capabilities kept (1ull << CAP_x) */
	int pdeathsig; /* set again after the change (0: none) */
};

/* The capabilities the sources may still use after set-up (see privdrop.c). */
#define PRIVDROP_NEED_BPF     (1u << 0) /* map reads on a kernel that gates every bpf() call */
#define PRIVDROP_NEED_PERF    (1u << 1) /* perf events opened per run */
#define PRIVDROP_NEED_NETLINK (1u << 2) /* taskstats queries (GENL_ADMIN_PERM) */
#define PRIVDROP_NEED_OTHERS  (1u << 3) /* the command runs as another user: signals, /proc */
#define PRIVDROP_NEED_ROOT_FS (1u << 4) /* root stays root: its file rights, acting as others */
uint64_t privdrop_caps(unsigned need);

/*
 * Does bpf() on a map descriptor this process holds need CAP_BPF on this
 * kernel (kernel.unprivileged_bpf_disabled gated every command before
 * Linux 6.5)? Probed on one of the process's own map descriptors with the
 * capability lowered for the call; false when there is none.
 */
bool privdrop_bpf_needs_cap(void);

/* Returns 0, or -errno with why set (the process is then unchanged, or as far as it got). */
int privdrop_apply(const struct privdrop_opts *o, char *why, size_t len);

#endif /* TSARUN_PRIVDROP_H */
