// SPDX-License-Identifier: MIT
/*
 * Synchronous direct I/O: writes N blocks of 4 KiB with O_DIRECT | O_DSYNC
 * to a file in DIR, fsyncs it, reads the blocks back with O_DIRECT, and
 * removes the file. Each write and read waits for the device: block I/O
 * delay, spent in uninterruptible sleep. DIR must be on a block device's
 * file system (ext4, xfs, btrfs): tmpfs may accept O_DIRECT but does no I/O.
 * Usage: dio DIR [N=200]
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	int n = (int)arg_double(argc, argv, 2, 200), fd;
	char path[4096];
	void *buf;

	if (argc < 2) {
		fprintf(stderr, "usage: dio DIR [N]\n");
		return 2;
	}
	prctl(PR_SET_NAME, "dio");
	snprintf(path, sizeof(path), "%s/tsarun-dio.XXXXXX", argv[1]);
	fd = mkostemp(path, O_DIRECT | O_DSYNC);
	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		perror("dio: cannot create the file");
		return 1;
	}
	unlink(path); /* removed when closed */
	memset(buf, 0x5a, 4096);
	for (int i = 0; i < n; i++)
		if (pwrite(fd, buf, 4096, (off_t)i * 4096) != 4096) {
			perror("dio: write");
			return 1;
		}
	if (fsync(fd)) {
		perror("dio: fsync");
		return 1;
	}
	for (int i = 0; i < n; i++)
		if (pread(fd, buf, 4096, (off_t)i * 4096) != 4096) {
			perror("dio: read");
			return 1;
		}
	close(fd);
	free(buf);
	return 0;
}
