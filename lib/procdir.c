// SPDX-License-Identifier: MIT
/* The numeric entries of a directory through getdents64(2) (procdir.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procdir.h"

/* What getdents64(2) returns (glibc's struct dirent64 needs _LARGEFILE64_SOURCE). */
struct dent {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

void procdir__init(struct procdir *d, int fd)
{
	d->fd = fd;
	d->len = 0;
	d->off = 0;
}

int procdir__rewind(struct procdir *d)
{
	d->len = 0;
	d->off = 0;
	return lseek(d->fd, 0, SEEK_SET) < 0 ? -errno : 0;
}

/* A decimal number from 1 to UINT32_MAX, digits only. */
static bool parse_id(const char *s, uint32_t *id)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return false;
	}
	if (!v)
		return false;
	*id = (uint32_t)v;
	return true;
}

int procdir__next(struct procdir *d, uint32_t *id, const char **name)
{
	for (;;) {
		const struct dent *de;

		if (d->off >= d->len) {
			long n = syscall(SYS_getdents64, d->fd, d->buf, sizeof(d->buf));

			if (n < 0)
				return -errno;
			d->len = n;
			d->off = 0;
			if (!n)
				return 0;
		}
		de = (const struct dent *)(d->buf + d->off);
		d->off += de->d_reclen;
		if (!parse_id(de->d_name, id))
			continue;
		if (name)
			*name = de->d_name;
		return 1;
	}
}
