// SPDX-License-Identifier: MIT
/*
 * The privilege drop (privdrop.h), with the raw capset(2): the kernel's
 * version 3 interface, two 32-bit words per set.
 */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/capability.h>

#include "privdrop.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int cap_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static int cap_set(const struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static void to_data(uint64_t eff, uint64_t prm, struct __user_cap_data_struct d[2])
{
	memset(d, 0, 2 * sizeof(*d));
	d[0].effective = (uint32_t)eff;
	d[1].effective = (uint32_t)(eff >> 32);
	d[0].permitted = (uint32_t)prm;
	d[1].permitted = (uint32_t)(prm >> 32);
}

uint64_t privdrop_caps(unsigned need)
{
	uint64_t keep = 0;

	if (need & PRIVDROP_NEED_BPF)
		keep |= 1ull << CAP_BPF;
	if (need & PRIVDROP_NEED_PERF)
		keep |= 1ull << CAP_PERFMON;
	if (need & PRIVDROP_NEED_NETLINK)
		keep |= 1ull << CAP_NET_ADMIN;
	/* Signals to, and /proc of, a command that runs as someone else. */
	if (need & PRIVDROP_NEED_OTHERS)
		keep |= 1ull << CAP_KILL | 1ull << CAP_SYS_PTRACE;
	/*
	 * Root that stays root: its rights on files (it writes where its
	 * caller, root, said), and acting for the command's user when it reads
	 * what that user could have put there (lib/fscreds.h).
	 */
	if (need & PRIVDROP_NEED_ROOT_FS)
		keep |= 1ull << CAP_DAC_OVERRIDE | 1ull << CAP_DAC_READ_SEARCH |
			1ull << CAP_FOWNER | 1ull << CAP_SETUID | 1ull << CAP_SETGID |
			1ull << CAP_KILL | 1ull << CAP_SYS_PTRACE;
	return keep;
}

/* One of this process's BPF map descriptors, or -1. */
static int some_map_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char p[300], link[64];
	int fd = -1;

	if (!d)
		return -1;
	while (fd < 0 && (de = readdir(d))) {
		ssize_t n;

		snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
		n = readlink(p, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (!strcmp(link, "anon_inode:bpf-map"))
			fd = atoi(de->d_name);
	}
	closedir(d);
	return fd;
}

bool privdrop_bpf_needs_cap(void)
{
	struct __user_cap_data_struct d[2], lowered[2];
	struct bpf_map_info info;
	union bpf_attr attr;
	int fd = some_map_fd(), ret;

	if (fd < 0 || cap_get(d))
		return false;
	memcpy(lowered, d, sizeof(lowered));
	lowered[1].effective &= ~(1u << (CAP_BPF - 32));
	lowered[0].effective &= ~(1u << CAP_SYS_ADMIN);
	if (cap_set(lowered))
		return true;
	memset(&attr, 0, sizeof(attr));
	memset(&info, 0, sizeof(info));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uint64_t)(uintptr_t)&info;
	ret = (int)syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr));
	ret = ret < 0 && errno == EPERM;
	cap_set(d);
	return ret;
}

/* The highest capability the kernel knows. */
static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int n = 40;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 40;
		fclose(f);
	}
	return n < 63 ? n : 63;
}

int privdrop_apply(const struct privdrop_opts *o, char *why, size_t len)
{
	struct __user_cap_data_struct d[2];
	uid_t r, e, s;
	int ret, last = last_cap();

	/* The bounding set first, while CAP_SETPCAP is there to do it. */
	for (int c = 0; c <= last; c++)
		if (!(o->keep & (1ull << c)) && prctl(PR_CAPBSET_READ, c, 0, 0, 0) > 0 &&
		    prctl(PR_CAPBSET_DROP, c, 0, 0, 0)) {
			ret = -errno;
			snprintf(why, len, "cannot drop capability %d from the bounding set: %s", c,
				 strerror(-ret));
			return ret;
		}
	if (o->change_user) {
		/* Keep the permitted set across the change of user; cut below. */
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) ||
		    setgroups((size_t)o->ngroups, o->groups) || setresgid(o->gid, o->gid, o->gid) ||
		    setresuid(o->uid, o->uid, o->uid)) {
			ret = -errno;
			snprintf(why, len, "cannot become uid %u: %s", (unsigned)o->uid,
				 strerror(-ret));
			return ret;
		}
		prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
		if (getresuid(&r, &e, &s) || r != o->uid || e != o->uid || s != o->uid) {
			snprintf(why, len, "the change to uid %u did not hold", (unsigned)o->uid);
			return -EPERM;
		}
	}
	to_data(o->keep, o->keep, d);
	ret = cap_set(d);
	if (ret) {
		snprintf(why, len, "cannot set the capabilities: %s", strerror(-ret));
		return ret;
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (o->pdeathsig)
		prctl(PR_SET_PDEATHSIG, o->pdeathsig, 0, 0, 0);
	return 0;
}
