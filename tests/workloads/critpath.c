// SPDX-License-Identifier: MIT
/*
 * Workloads whose critical path is known, for tests/integration/26-critpath.sh.
 *
 *   critpath pool [MS=100]      four workers spin MS, 2*MS, 3*MS, 4*MS of CPU,
 *                               all on one CPU; main joins them in that order:
 *                               the path holds the last worker's CPU (named
 *                               cp-w4), not the others'
 *   critpath ring [N=10] [MS=10] A -> B -> C -> A through pipes, N items, each
 *                               stage spinning MS, 2*MS, 3*MS per item (cp-a,
 *                               cp-b, cp-c): the stages alternate, 1:2:3
 *   critpath convoy [N=4] [K=5] [MS=10]  N threads (cp-l1..) take one mutex K
 *                               times each, spinning MS while they hold it
 *   critpath dio DIR [N=200]    writes N blocks of 64 KiB to a file in DIR with
 *                               O_DIRECT, fsyncs it and reads them back, one at
 *                               a time, then closes it; prints "io_wait_ns=N" (the
 *                               time in those calls, the close included) on stdout
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static double ms;

static cpu_set_t pool_cpu;

static void *pool_worker(void *arg)
{
	char name[16];
	int i = (int)(intptr_t)arg;

	snprintf(name, sizeof(name), "cp-w%d", i + 1);
	prctl(PR_SET_NAME, name);
	/*
	 * On one CPU the four share it evenly and end in the order of their
	 * work; spread over CPUs loaded by others, a bigger one can end first.
	 */
	sched_setaffinity(0, sizeof(pool_cpu), &pool_cpu);
	spin_cpu_ms(ms * (i + 1));
	return NULL;
}

static int pool(void)
{
	pthread_t t[4];

	CPU_ZERO(&pool_cpu);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &pool_cpu);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, pool_worker, (void *)(intptr_t)i))
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/*
 * One stage of the ring: read an item from in, work, write it to out. B and
 * C say when they are ready, so that each item's path runs through all
 * three (a stage still starting would be on the path instead).
 */
static void stage(const char *name, int in, int out, int n, double work, bool first, int ready)
{
	char c = 'x';

	prctl(PR_SET_NAME, name);
	if (ready >= 0 && write(ready, &c, 1) != 1)
		exit(1);
	for (int i = 0; i < n; i++) {
		if (!first || i)
			if (read(in, &c, 1) != 1)
				exit(1);
		spin_cpu_ms(work);
		if (write(out, &c, 1) != 1)
			exit(1);
	}
	if (first && read(in, &c, 1) != 1) /* the last item back */
		exit(1);
}

static int ring(int n)
{
	int ab[2], bc[2], ca[2], rd[2];
	char two[2];
	pid_t b, c;

	if (pipe(ab) || pipe(bc) || pipe(ca) || pipe(rd))
		return 1;
	/*
	 * The three share one CPU (inherited by the two forks). Spread over
	 * CPUs, a wakeup's stamp can fall microseconds before its waker's own
	 * switch-in on another CPU, and the walk then leaves the ring ("clock
	 * skew at a wakeup", issue 28); this case tests the walk's proportions.
	 */
	CPU_ZERO(&pool_cpu);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &pool_cpu);
	sched_setaffinity(0, sizeof(pool_cpu), &pool_cpu);
	b = fork();
	if (!b) {
		stage("cp-b", ab[0], bc[1], n, 2 * ms, false, rd[1]);
		_exit(0);
	}
	c = fork();
	if (!c) {
		stage("cp-c", bc[0], ca[1], n, 3 * ms, false, rd[1]);
		_exit(0);
	}
	if (read(rd[0], two, 1) != 1 || read(rd[0], two + 1, 1) != 1)
		return 1;
	stage("cp-a", ca[0], ab[1], n, ms, true, -1);
	close(ab[1]);
	while (wait(NULL) > 0)
		;
	return 0;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int rounds;

static void *convoy_worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "cp-l%d", (int)(intptr_t)arg + 1);
	prctl(PR_SET_NAME, name);
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock);
		spin_cpu_ms(ms);
		pthread_mutex_unlock(&lock);
		/* Off the lock a moment, so the next holder is someone else. */
		sleep_ms(0.2);
	}
	return NULL;
}

static int convoy(int n)
{
	pthread_t t[64];

	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, convoy_worker, (void *)(intptr_t)i))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

#define DIO_BLOCK (64 << 10)

static int dio(const char *dir, int n)
{
	char path[4096];
	uint64_t waited = 0;
	void *buf;
	int fd;

	prctl(PR_SET_NAME, "cp-dio");
	snprintf(path, sizeof(path), "%s/tsarun-cp-dio.XXXXXX", dir);
	fd = mkostemp(path, O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, DIO_BLOCK)) {
		perror("critpath dio");
		return 1;
	}
	unlink(path);
	memset(buf, 'x', DIO_BLOCK);
	for (int i = 0; i < n; i++) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

		if (pwrite(fd, buf, DIO_BLOCK, (off_t)i * DIO_BLOCK) != DIO_BLOCK) {
			perror("critpath dio: write");
			return 1;
		}
		waited += clock_ns(CLOCK_MONOTONIC) - t0;
	}
	{
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

		fsync(fd);
		waited += clock_ns(CLOCK_MONOTONIC) - t0;
	}
	for (int i = 0; i < n; i++) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

		if (pread(fd, buf, DIO_BLOCK, (off_t)i * DIO_BLOCK) != DIO_BLOCK) {
			perror("critpath dio: read");
			return 1;
		}
		waited += clock_ns(CLOCK_MONOTONIC) - t0;
	}
	{
		/* The last close of the unlinked file frees its blocks: I/O too. */
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

		close(fd);
		waited += clock_ns(CLOCK_MONOTONIC) - t0;
	}
	printf("io_wait_ns=%llu\n", (unsigned long long)waited);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "pool")) {
		ms = arg_double(argc, argv, 2, 100);
		return pool();
	}
	if (!strcmp(mode, "ring")) {
		ms = arg_double(argc, argv, 3, 10);
		return ring((int)arg_double(argc, argv, 2, 10));
	}
	if (!strcmp(mode, "convoy")) {
		rounds = (int)arg_double(argc, argv, 3, 5);
		ms = arg_double(argc, argv, 4, 10);
		return convoy((int)arg_double(argc, argv, 2, 4));
	}
	if (!strcmp(mode, "dio") && argc > 2)
		return dio(argv[2], (int)arg_double(argc, argv, 3, 200));
	fprintf(stderr, "usage: critpath pool|ring|convoy|dio DIR [...]\n");
	return 2;
}
