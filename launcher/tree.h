/* SPDX-License-Identifier: MIT */
/* The live processes below a given one, read from /proc. */
#ifndef TSARUN_TREE_H
#define TSARUN_TREE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Pids of every live process descending from ancestor (not ancestor itself).
 * Zombies are not in the list, but their children are (an exiting parent's
 * children may not be reparented yet). *out is malloc'd; the caller frees
 * it. Returns 0 or -errno.
 */
int tree_descendants(pid_t ancestor, pid_t **out, size_t *n);

struct procfs_stat;

/* Read and parse /proc/<pid>/stat. Returns 0 or -errno. */
int tree_read_stat(pid_t pid, struct procfs_stat *st);

#endif /* TSARUN_TREE_H */
