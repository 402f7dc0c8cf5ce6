// SPDX-License-Identifier: MIT
/*
 * kernel.task_delayacct's state directory must be root's own: a directory
 * (not a link) that nobody else may write to, else tsarun leaves the switch
 * alone and says why. The switch itself is never turned on here (want is
 * false), and the test directory is one of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "delayacct.h"
#include "watchdog.h"

static char base[64], dir[128];

static int setup(void **state)
{
	snprintf(base, sizeof(base), "/tmp/tsarun-delayacct.XXXXXX");
	if (!mkdtemp(base))
		return -1;
	snprintf(dir, sizeof(dir), "%s/state", base);
	return 0;
}

static int teardown(void **state)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) ? -1 : 0;
}

static void hold(struct delayacct_hold *h)
{
	delayacct__acquire(h, false, dir);
	delayacct__release(h);
}

static void test_state_dir_must_be_roots(void **state)
{
	struct delayacct_hold h;
	char victim[160];

	if (geteuid() != 0 || delayacct_read() < 0) {
		print_message("# SKIP: needs root and kernel.task_delayacct\n");
		skip();
	}
	/* Made by tsarun: its own. */
	hold(&h);
	assert_null(strstr(h.reason, "not tsarun's own"));
	assert_int_equal(access(dir, F_OK), 0);
	/* Writable by others: anyone could have put links there. */
	assert_int_equal(chmod(dir, 0777), 0);
	hold(&h);
	assert_non_null(strstr(h.reason, "not tsarun's own"));
	/* Another user's. */
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chown(dir, 1, 1), 0);
	hold(&h);
	assert_non_null(strstr(h.reason, "not tsarun's own"));
	assert_non_null(strstr(h.reason, "owner uid 1"));
	/* A link to a directory of root's: not followed, not written through. */
	snprintf(victim, sizeof(victim), "%s/victim", base);
	assert_int_equal(mkdir(victim, 0755), 0);
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(symlink(victim, dir), 0);
	hold(&h);
	assert_non_null(strstr(h.reason, "a symbolic link"));
	{
		char lock[200];

		snprintf(lock, sizeof(lock), "%s/delayacct.lock", victim);
		assert_int_equal(access(lock, F_OK), -1);
	}
}

/*
 * The watchdog holds the switch for the run. Killed before the supervisor
 * took it, the supervisor's parent is a reaper (init): the holder file must
 * still name the watchdog (dead, so the next tsarun repairs), never the
 * reaper, whose file would look alive for as long as the machine runs.
 */
static void test_holder_is_the_watchdog_after_it_died(void **state)
{
	struct watchdog_opts wo = {.leave = true, .no_sandbox = true};
	int fds[2], code = 0;
	char got[160] = "";
	pid_t child;

	if (geteuid() != 0 || delayacct_read() < 0) {
		print_message("# SKIP: needs root and kernel.task_delayacct\n");
		skip();
	}
	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t wd = getpid();
		sigset_t m;

		close(fds[0]);
		if (watchdog_start(&wo, &code))
			_exit(0); /* the watchdog: killed before it returns */
		/* The supervisor: outlive the watchdog, then take the switch. */
		sigemptyset(&m);
		sigaddset(&m, watchdog_signal());
		sigprocmask(SIG_BLOCK, &m, NULL);
		kill(wd, SIGKILL);
		for (int i = 0; i < 2000 && getppid() == wd; i++)
			nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
		{
			struct delayacct_hold h;
			int before = delayacct_read();
			FILE *f;

			/*
			 * Off first: a switch found on that tsarun did not turn on is
			 * left alone, unregistered (another tsarun's run, or a suite
			 * before this one, may have left it on).
			 */
			if ((f = fopen("/proc/sys/kernel/task_delayacct", "w"))) {
				fprintf(f, "0\n");
				fclose(f);
			}
			delayacct__acquire(&h, true, dir);
			dprintf(fds[1], "%d %s\n", (int)wd, h.holder);
			/* Put the switch back as it was (the hold is the dead watchdog's). */
			if (before >= 0 && (f = fopen("/proc/sys/kernel/task_delayacct", "w"))) {
				fprintf(f, "%d\n", before);
				fclose(f);
			}
		}
		_exit(0);
	}
	close(fds[1]);
	waitpid(child, NULL, 0);
	{
		ssize_t n = read(fds[0], got, sizeof(got) - 1);

		assert_true(n > 0);
		got[n] = '\0';
	}
	close(fds[0]);
	{
		int wd = 0;
		char path[140] = "", want[160];

		assert_int_equal(sscanf(got, "%d %139s", &wd, path), 2);
		assert_int_equal(wd, child);
		snprintf(want, sizeof(want), "%s/delayacct.%d", dir, wd);
		assert_string_equal(path, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_state_dir_must_be_roots, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_holder_is_the_watchdog_after_it_died, setup,
					    teardown),
	};

	return cmocka_run_group_tests_name("delayacct", tests, NULL, NULL);
}
