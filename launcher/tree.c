// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "procfs.h"
#include "tree.h"
#include "lib/vec.h"

struct node {
	pid_t pid, ppid;
	bool zombie;
};

int tree_read_stat(pid_t pid, struct procfs_stat *st)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	return procfs_parse_stat(buf, (size_t)n, st);
}

int tree_descendants(pid_t ancestor, pid_t **out, size_t *nout)
{
	struct node *nodes = NULL;
	pid_t *res = NULL;
	size_t n = 0, cap = 0, nres = 0;
	struct dirent *de;
	DIR *d;
	int err = 0;

	*out = NULL;
	*nout = 0;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct procfs_stat st;
		struct node *nn;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (tree_read_stat((pid_t)pid, &st) || st.state == 'X')
			continue;
		nn = vec_grow(nodes, &cap, n + 1, sizeof(*nn), 256);
		if (!nn) {
			err = -ENOMEM;
			goto out;
		}
		nodes = nn;
		nodes[n].pid = (pid_t)pid;
		nodes[n].ppid = st.ppid;
		/* A zombie is not counted, but its children are: they may not be reparented yet. */
		nodes[n].zombie = st.state == 'Z';
		n++;
	}
	res = malloc((n ? n : 1) * sizeof(*res));
	if (!res) {
		err = -ENOMEM;
		goto out;
	}
	/* Breadth-first over every node, zombies included; res[] keeps the live ones. */
	{
		pid_t *queue = malloc((n ? n : 1) * sizeof(*queue));
		size_t nq = 0;

		if (!queue) {
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			if (nodes[i].ppid == ancestor)
				queue[nq++] = (pid_t)i;
		for (size_t q = 0; q < nq; q++) {
			const struct node *parent = &nodes[queue[q]];

			if (!parent->zombie)
				res[nres++] = parent->pid;
			for (size_t i = 0; i < n && nq < n; i++)
				if (nodes[i].ppid == parent->pid)
					queue[nq++] = (pid_t)i;
		}
		free(queue);
	}
	*out = res;
	*nout = nres;
	res = NULL;
out:
	closedir(d);
	free(nodes);
	free(res);
	return err;
}
