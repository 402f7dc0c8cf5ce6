/* SPDX-License-Identifier: MIT */
/*
 * The numeric entries of a directory, read with getdents64(2): /proc's
 * pids, a process's task/ tids. The caller opens the descriptor and keeps
 * it (readdir(3)'s DIR would own it and allocate); the iterator holds one
 * buffer of records and makes no other call than getdents64 and, to start
 * over, lseek, so it allocates nothing and runs under a seccomp filter
 * that allows those two. Names that are not a decimal number from 1 to
 * UINT32_MAX (".", "..", "self", "sys", "+5") are skipped.
 *
 *	struct procdir d;
 *	const char *name;
 *	uint32_t tid;
 *	int ret;
 *
 *	procdir__init(&d, taskfd);
 *	while ((ret = procdir__next(&d, &tid, &name)) > 0)
 *		read_thread(taskfd, name, tid);
 *	if (ret < 0)
 *		return ret;
 *
 * Entries added or removed while the directory is read may be seen or not
 * (getdents64's rule); a rewound listing sees the directory anew.
 *
 * Knows nothing of tsarun.
 */
#ifndef LIB_PROCDIR_H
#define LIB_PROCDIR_H

#include <stdint.h>

struct procdir {
	int fd;
	long len, off; /* bytes of records in buf, and the next one's offset */
	_Alignas(uint64_t) char buf[8192];
};

/* Read fd from where its position is (a fresh descriptor: from its first entry). */
void procdir__init(struct procdir *d, int fd);

/* From the first entry again (lseek to 0). 0, or -errno. */
int procdir__rewind(struct procdir *d);

/*
 * The next numeric entry: 1 with *id and, when name is given, *name (valid
 * until the next call) set; 0 at the end; -errno when getdents64 failed.
 */
int procdir__next(struct procdir *d, uint32_t *id, const char **name);

#endif /* LIB_PROCDIR_H */
