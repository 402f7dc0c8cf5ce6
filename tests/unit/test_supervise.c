// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "run.h"
#include "supervise.h"

/* A run whose root process (pid 100) ended at end_ns, noticed at wall_ns. */
static struct run *run_ended(bool ebpf, uint64_t wall_ns, int64_t end_ns)
{
	struct run *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->root_pid = 100;
	r->wall_ns = wall_ns;
	r->procs = calloc(2, sizeof(*r->procs));
	assert_non_null(r->procs);
	r->nprocs = 2;
	r->procs[0] =
	    (struct proc_acct){.pid = 101, .ppid = 100, .end_ns = 9000000, .exited = true};
	r->procs[1] = (struct proc_acct){.pid = 100, .end_ns = end_ns, .exited = true};
	run__source(r, "ebpf", ebpf, ebpf ? NULL : "off");
	return r;
}

static void run_free(struct run *r)
{
	free(r->procs);
	free(r);
}

/* tsarun noticed the exit late (one more task on a loaded machine). */
static void test_noticed_late(void **state)
{
	struct run *r = run_ended(true, 5000000, 3000000);

	supervise_wall_to_exit(r);
	assert_int_equal(r->wall_ns, 3000000);
	run_free(r);
}

/*
 * tsarun reaped the command before its last switch-out (preempted, or its
 * virtual CPU stopped, between exit_notify() and its final schedule()):
 * the wall still ends where the command's life does, never before, or its
 * lifetime would exceed its run's wall time.
 */
static void test_reaped_before_last_switch_out(void **state)
{
	struct run *r = run_ended(true, 3000000, 3040000);

	supervise_wall_to_exit(r);
	assert_int_equal(r->wall_ns, 3040000);
	run_free(r);
}

/* Without eBPF, or without the root's end, the notice is all there is. */
static void test_notice_only(void **state)
{
	struct run *r = run_ended(false, 5000000, 3000000);

	supervise_wall_to_exit(r);
	assert_int_equal(r->wall_ns, 5000000);
	run_free(r);
	r = run_ended(true, 5000000, 0);
	supervise_wall_to_exit(r);
	assert_int_equal(r->wall_ns, 5000000);
	r->procs[1].end_ns = 3000000;
	r->procs[1].exited = false;
	supervise_wall_to_exit(r);
	assert_int_equal(r->wall_ns, 5000000);
	run_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_noticed_late),
	    cmocka_unit_test(test_reaped_before_last_switch_out),
	    cmocka_unit_test(test_notice_only),
	};

	return cmocka_run_group_tests_name("supervise", tests, NULL, NULL);
}
