// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "procfs.h"
#include "tree.h"

struct node {
	pid_t pid, ppid;
};

static int read_stat(pid_t pid, struct procfs_stat *st)
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
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (read_stat((pid_t)pid, &st) || st.state == 'Z' || st.state == 'X')
			continue;
		if (n == cap) {
			struct node *nn;

			cap = cap ? cap * 2 : 256;
			nn = realloc(nodes, cap * sizeof(*nn));
			if (!nn) {
				err = -ENOMEM;
				goto out;
			}
			nodes = nn;
		}
		nodes[n].pid = (pid_t)pid;
		nodes[n].ppid = st.ppid;
		n++;
	}
	res = malloc((n ? n : 1) * sizeof(*res));
	if (!res) {
		err = -ENOMEM;
		goto out;
	}
	/* Breadth-first: res[] doubles as the queue of parents to expand. */
	for (size_t i = 0; i < n; i++)
		if (nodes[i].ppid == ancestor)
			res[nres++] = nodes[i].pid;
	for (size_t q = 0; q < nres; q++)
		for (size_t i = 0; i < n; i++)
			if (nodes[i].ppid == res[q] && nres < n)
				res[nres++] = nodes[i].pid;
	*out = res;
	*nout = nres;
	res = NULL;
out:
	closedir(d);
	free(nodes);
	free(res);
	return err;
}
