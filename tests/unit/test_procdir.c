// SPDX-License-Identifier: MIT
/*
 * lib/procdir: the numeric entries of a real directory, /proc/self/task
 * with a second thread in it and a temporary directory of numeric and
 * other names, across more than one buffer of records; errors as -errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

#include "procdir.h"

struct thread_arg {
	pthread_barrier_t ready, done;
	pid_t tid;
};

static void *second_thread(void *p)
{
	struct thread_arg *a = p;

	a->tid = gettid();
	pthread_barrier_wait(&a->ready);
	pthread_barrier_wait(&a->done);
	return NULL;
}

static void test_self_task(void **state)
{
	struct thread_arg a = {.tid = 0};
	struct procdir d;
	pthread_t th;
	const char *name;
	uint32_t tid;
	int fd, ret, seen_main = 0, seen_second = 0, n = 0;

	(void)state;
	assert_int_equal(pthread_barrier_init(&a.ready, NULL, 2), 0);
	assert_int_equal(pthread_barrier_init(&a.done, NULL, 2), 0);
	assert_int_equal(pthread_create(&th, NULL, second_thread, &a), 0);
	pthread_barrier_wait(&a.ready);
	fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* Twice: a rewound listing is the whole directory again. */
	for (int pass = 0; pass < 2; pass++) {
		char text[16];

		if (pass)
			assert_int_equal(procdir__rewind(&d), 0);
		else
			procdir__init(&d, fd);
		while ((ret = procdir__next(&d, &tid, &name)) > 0) {
			snprintf(text, sizeof(text), "%u", tid);
			assert_string_equal(name, text);
			seen_main += tid == (uint32_t)getpid();
			seen_second += tid == (uint32_t)a.tid;
			n++;
		}
		assert_int_equal(ret, 0);
		/* At the end it stays at the end. */
		assert_int_equal(procdir__next(&d, &tid, NULL), 0);
	}
	assert_int_equal(seen_main, 2);
	assert_int_equal(seen_second, 2);
	assert_int_equal(n, 4); /* the test's two threads, no ".", "..": nothing else */
	close(fd);
	pthread_barrier_wait(&a.done);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&a.ready);
	pthread_barrier_destroy(&a.done);
}

static char tmpdir[64];

static void make_entry(int dfd, const char *name, bool dir)
{
	int fd;

	if (dir) {
		assert_int_equal(mkdirat(dfd, name, 0700), 0);
		return;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
}

static int remove_all(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void test_numeric_names_only(void **state)
{
	/* Numbers from 1 to UINT32_MAX, files or folders; every other name is skipped. */
	static const struct {
		const char *name;
		bool dir;
		uint32_t id; /* 0: skipped */
	} entries[] = {
	    {"1", false, 1},
	    {"42", true, 42},
	    {"007", false, 7},
	    {"4294967295", false, UINT32_MAX},
	    {"4294967296", false, 0}, /* past UINT32_MAX */
	    {"99999999999999999999999", false, 0},
	    {"0", false, 0},
	    {"self", true, 0},
	    {"12a", false, 0},
	    {"a12", false, 0},
	    {"+5", false, 0},
	    {" 6", false, 0},
	    {"-3", false, 0},
	    {".9", false, 0},
	};
	bool seen[sizeof(entries) / sizeof(entries[0])] = {0};
	struct procdir d;
	const char *name;
	uint32_t id;
	int dfd, ret, n = 0;

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_procdir.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	dfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		make_entry(dfd, entries[i].name, entries[i].dir);
	procdir__init(&d, dfd);
	while ((ret = procdir__next(&d, &id, &name)) > 0) {
		size_t i;

		for (i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
			if (!strcmp(entries[i].name, name))
				break;
		assert_true(i < sizeof(entries) / sizeof(entries[0]));
		assert_int_not_equal(entries[i].id, 0);
		assert_int_equal(id, entries[i].id);
		assert_false(seen[i]);
		seen[i] = true;
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, 4);
	close(dfd);
	assert_int_equal(remove_all(tmpdir), 0);
}

static void test_many_buffers(void **state)
{
	/* Far more records than one getdents64 buffer holds: each id once, none lost. */
	enum { N = 3000 };
	static bool seen[N + 1];
	struct procdir d;
	uint32_t id;
	int dfd, ret, n = 0;

	(void)state;
	memset(seen, 0, sizeof(seen));
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_procdir.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	dfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (int i = 1; i <= N; i++) {
		char name[16];

		snprintf(name, sizeof(name), "%d", i);
		make_entry(dfd, name, false);
	}
	make_entry(dfd, "not-a-pid", false);
	procdir__init(&d, dfd);
	while ((ret = procdir__next(&d, &id, NULL)) > 0) {
		assert_true(id >= 1 && id <= N);
		assert_false(seen[id]);
		seen[id] = true;
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, N);
	close(dfd);
	assert_int_equal(remove_all(tmpdir), 0);
}

static void test_errors(void **state)
{
	struct procdir d;
	uint32_t id;
	int fd;

	(void)state;
	procdir__init(&d, -1);
	assert_int_equal(procdir__next(&d, &id, NULL), -EBADF);
	assert_int_equal(procdir__rewind(&d), -EBADF);
	/* A file is not a directory. */
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	procdir__init(&d, fd);
	assert_int_equal(procdir__next(&d, &id, NULL), -ENOTDIR);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_self_task),
	    cmocka_unit_test(test_numeric_names_only),
	    cmocka_unit_test(test_many_buffers),
	    cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
