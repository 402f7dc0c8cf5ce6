// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "unit.h"

#include "procfs.h"

#define S(x) x, sizeof(x) - 1

static void test_stat(void **state)
{
	struct procfs_stat st;
	const char line[] =
	    "1234 (my proc) S 1 1234 1234 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 4 0 "
	    "5555 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

	assert_int_equal(procfs_parse_stat(S(line), &st), 0);
	assert_int_equal(st.pid, 1234);
	assert_string_equal(st.comm, "my proc");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.utime_ticks, 7);
	assert_int_equal(st.stime_ticks, 3);
	assert_int_equal(st.num_threads, 4);
	assert_int_equal(st.starttime_ticks, 5555);
	assert_int_equal(st.processor, 1);
}

/* A comm can hold ")" and spaces: the last ")" closes it. */
static void test_hostile_comm(void **state)
{
	struct procfs_stat st;
	const char line[] = "77 (a) R (b) D 5 6 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 99\n";

	assert_int_equal(procfs_parse_stat(S(line), &st), 0);
	assert_string_equal(st.comm, "a) R (b");
	assert_int_equal(st.state, 'D');
	assert_int_equal(st.ppid, 5);
	assert_int_equal(st.starttime_ticks, 99);
}

static void test_bad_stat(void **state)
{
	static const char *const bad[] = {
	    "",
	    "(x) S 1",
	    "12 x S 1",
	    "12 (x S 1",
	    "12 (x) S",
	    "12 (x) S 1 2 3",
	    "-1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 99",
	    "12 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 99999999999999999999999",
	};
	struct procfs_stat st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (procfs_parse_stat(bad[i], strlen(bad[i]), &st) == 0)
			fail_msg("accepted '%s'", bad[i]);
}

static void test_schedstat(void **state)
{
	struct procfs_schedstat ss;

	assert_int_equal(procfs_parse_schedstat(S("275737 1200 3\n"), &ss), 0);
	assert_int_equal(ss.on_cpu_ns, 275737);
	assert_int_equal(ss.run_delay_ns, 1200);
	assert_int_equal(ss.slices, 3);
	assert_int_equal(procfs_parse_schedstat(S("1 2\n"), &ss), -EINVAL);
	assert_int_equal(procfs_parse_schedstat(S("1 x 3\n"), &ss), -EINVAL);
}

static void test_ctxt_switches(void **state)
{
	uint64_t nv = 0, niv = 0;
	/* A hostile comm that looks like the lines: only a line's start counts. */
	static const char status[] = "Name:\tvoluntary_ctxt_switches: 9\n"
				     "State:\tS (sleeping)\n"
				     "voluntary_ctxt_switches:\t12\n"
				     "nonvoluntary_ctxt_switches:\t3\n";

	(void)state;
	assert_int_equal(procfs_parse_ctxt_switches(S(status), &nv, &niv), 0);
	assert_int_equal(nv, 12);
	assert_int_equal(niv, 3);
	/* Both lines are required, and their values must be numbers. */
	assert_int_equal(procfs_parse_ctxt_switches(S("voluntary_ctxt_switches:\t1\n"), &nv, &niv),
			 -EINVAL);
	assert_int_equal(procfs_parse_ctxt_switches(S("voluntary_ctxt_switches:\tx\n"
						      "nonvoluntary_ctxt_switches:\t3\n"),
						    &nv, &niv),
			 -EINVAL);
	/* The last line need not end with a newline. */
	assert_int_equal(procfs_parse_ctxt_switches(S("nonvoluntary_ctxt_switches:\t4\n"
						      "voluntary_ctxt_switches:\t5"),
						    &nv, &niv),
			 0);
	assert_int_equal(nv, 5);
	assert_int_equal(niv, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stat),	  cmocka_unit_test(test_hostile_comm),
	    cmocka_unit_test(test_bad_stat),	  cmocka_unit_test(test_schedstat),
	    cmocka_unit_test(test_ctxt_switches),
	};

	return cmocka_run_group_tests_name("procfs", tests, NULL, NULL);
}
