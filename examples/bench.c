// SPDX-License-Identifier: MIT
/*
 * A small benchmark with something in every column: four workers hash a
 * buffer (on-CPU), take turns on a shared lock (sleeping on a futex), write
 * and fsync a file (uninterruptible waits), and there are more of them than
 * CPUs (runqueue). Run it under tsarun:  sudo tsarun -- ./bench
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 4
#define ROUNDS	40

static pthread_mutex_t journal_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *dir;

static uint64_t hash_block(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* Append a line to the journal and make it durable, one writer at a time. */
static void journal(int fd, uint64_t h)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%016llx\n", (unsigned long long)h);

	pthread_mutex_lock(&journal_lock);
	if (write(fd, line, (size_t)n) != n)
		perror("bench: write");
	fdatasync(fd);
	pthread_mutex_unlock(&journal_lock);
}

static void *worker(void *arg)
{
	static const struct timespec pause = {.tv_nsec = 2000000};
	unsigned char *buf = malloc(1 << 20);
	char path[512];
	uint64_t h = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/bench-journal-%ld", dir, (long)(intptr_t)arg);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!buf || fd < 0) {
		perror("bench");
		return NULL;
	}
	memset(buf, (int)(intptr_t)arg, 1 << 20);
	for (int r = 0; r < ROUNDS; r++) {
		h ^= hash_block(buf, 1 << 20);
		journal(fd, h);
		nanosleep(&pause, NULL);
	}
	close(fd);
	unlink(path);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[WORKERS];
	char name[16];

	dir = argc > 1 ? argv[1] : "/tmp";
	for (long i = 0; i < WORKERS; i++) {
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
		snprintf(name, sizeof(name), "worker-%ld", i);
		pthread_setname_np(t[i], name);
	}
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	printf("bench: %d workers x %d rounds done\n", WORKERS, ROUNDS);
	return 0;
}
