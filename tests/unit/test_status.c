// SPDX-License-Identifier: MIT
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "unit.h"

#include "run.h"
#include "status.h"

static void test_exit_codes(void **state)
{
	struct run r;

	for (int code = 0; code < 256; code++) {
		memset(&r, 0, sizeof(r));
		status_from_wait(&r, code << 8);
		assert_int_equal(r.status, RUN_EXITED);
		assert_int_equal(r.exit_code, code);
		assert_int_equal(status_exit_code(&r), code);
	}
}

static void test_signals(void **state)
{
	struct run r;
	char buf[64];

	memset(&r, 0, sizeof(r));
	status_from_wait(&r, SIGTERM);
	assert_int_equal(r.status, RUN_SIGNALED);
	assert_int_equal(r.term_signal, SIGTERM);
	assert_int_equal(status_exit_code(&r), 143);
	status_describe(&r, buf, sizeof(buf));
	assert_string_equal(buf, "killed by SIGTERM");

	memset(&r, 0, sizeof(r));
	status_from_wait(&r, SIGSEGV | 0x80);
	assert_true(r.core_dumped);
	assert_int_equal(status_exit_code(&r), 139);
	status_describe(&r, buf, sizeof(buf));
	assert_string_equal(buf, "killed by SIGSEGV (core dumped)");
}

static void test_interrupted(void **state)
{
	struct run r;
	char buf[64];

	/* Interrupted, and the command died of the signal: 128+N. */
	memset(&r, 0, sizeof(r));
	r.status = RUN_INTERRUPTED;
	r.interrupt_signal = SIGINT;
	status_from_wait(&r, SIGINT);
	assert_int_equal(r.status, RUN_INTERRUPTED);
	assert_int_equal(status_exit_code(&r), 130);

	/* Interrupted, the command caught it and exited 0: still 128+N. */
	memset(&r, 0, sizeof(r));
	r.status = RUN_INTERRUPTED;
	r.interrupt_signal = SIGTERM;
	status_from_wait(&r, 0);
	assert_int_equal(status_exit_code(&r), 143);
	status_describe(&r, buf, sizeof(buf));
	assert_string_equal(buf, "exit 0, interrupted by SIGTERM");

	/* Ctrl-C on the terminal, which the command handled and exited 0: 130. */
	memset(&r, 0, sizeof(r));
	r.status = RUN_INTERRUPTED;
	r.interrupt_signal = SIGINT;
	r.interrupt_tty = true;
	status_from_wait(&r, 0);
	assert_int_equal(status_exit_code(&r), 130);

	/* SIGINT to tsarun alone, passed on, and the command finished (exit 0): 0. */
	memset(&r, 0, sizeof(r));
	r.status = RUN_INTERRUPTED;
	r.interrupt_signal = SIGINT;
	status_from_wait(&r, 0);
	assert_int_equal(status_exit_code(&r), 0);
	status_describe(&r, buf, sizeof(buf));
	assert_string_equal(buf, "exit 0, interrupted by SIGINT");

	/* Interrupted, the command failed on its own terms: its code wins. */
	memset(&r, 0, sizeof(r));
	r.status = RUN_INTERRUPTED;
	r.interrupt_signal = SIGTERM;
	status_from_wait(&r, 3 << 8);
	assert_int_equal(status_exit_code(&r), 3);
}

static void test_not_started(void **state)
{
	struct run r;

	memset(&r, 0, sizeof(r));
	r.status = RUN_NOT_STARTED;
	status_from_wait(&r, 127 << 8);
	assert_int_equal(r.status, RUN_NOT_STARTED);
	assert_int_equal(status_exit_code(&r), 127);
}

static void test_signame(void **state)
{
	char buf[16];

	assert_string_equal(status_signame(SIGKILL, buf, sizeof(buf)), "SIGKILL");
	assert_string_equal(status_signame(SIGRTMIN + 6, buf, sizeof(buf)), "SIGRTMIN+6");
	assert_string_equal(status_signame(0, buf, sizeof(buf)), "SIG0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_codes),	cmocka_unit_test(test_signals),
	    cmocka_unit_test(test_interrupted), cmocka_unit_test(test_not_started),
	    cmocka_unit_test(test_signame),
	};

	return cmocka_run_group_tests_name("status", tests, NULL, NULL);
}
