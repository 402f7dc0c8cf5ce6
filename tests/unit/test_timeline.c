// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

#include "fixtures.h"
#include "account.h"
#include "run.h"
#include "timeline.h"

static struct tsa_tl_event ev(const struct tsa_thread *t, uint32_t kind, double from, double to,
			      uint32_t cpu)
{
	return (struct tsa_tl_event){
	    .task_start_ns = t->task_start_ns,
	    .start_ns = T0 + (uint64_t)(from * MS),
	    .end_ns = T0 + (uint64_t)(to * MS),
	    .tid = t->tid_before_exec ? t->tid_before_exec : t->tid,
	    .cpu = cpu,
	    .kind = kind,
	};
}

static struct tsa_tl_name nm(const struct tsa_thread *t, double at, uint32_t execs,
			     const char *comm)
{
	struct tsa_tl_name n = {.h = ev(t, TSA_TL_NAME, at, at, (uint32_t)-1)};

	n.h.end_ns = execs;
	snprintf(n.comm, sizeof(n.comm), "%s", comm);
	return n;
}

/* Two threads; 101 exec'd from a non-main thread, so the kernel knew it as 102. */
static void make_run(struct run *r, struct tsa_thread *t)
{
	memset(r, 0, sizeof(*r));
	t[0] = fx_thread(100, 100, 99, "main", 0, 10, 4, 1, 5, 0);
	t[1] = fx_thread(101, 101, 100, "after", 1, 9, 6, 2, 0, 0);
	t[1].tid_before_exec = 102;
	r->start_mono_ns = T0;
	run__source(r, "ebpf", true, NULL);
	assert_int_equal(fold_run(r, t, 2), 0);
}

static void test_attach_matches_by_identity_and_orders(void **state)
{
	struct timeline_builder *b = timeline_builder__new(100, 4096);
	struct tsa_thread t[2], stranger;
	struct tsa_tl_event e;
	struct tsa_tl_name n;
	const struct tl_thread *g;
	struct run r;

	make_run(&r, t);
	stranger = t[0];
	stranger.task_start_ns += 1; /* the same tid, another task: not this run's thread */
	/* Out of order, as two CPUs' events interleave in the ring buffer. */
	e = ev(&t[0], TSA_TL_SLEEP, 5, 10, (uint32_t)-1);
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
	e = ev(&t[0], TSA_TL_ONCPU, 0, 4, 3);
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
	e = ev(&t[0], TSA_TL_RUNQ_PREEMPTED, 4, 5, (uint32_t)-1);
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
	e = ev(&t[1], TSA_TL_RUNQ_NEW, 1, 3, (uint32_t)-1);
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
	e = ev(&t[1], TSA_TL_ONCPU_INFERRED, 3, 9, 1);
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
	e = ev(&stranger, TSA_TL_ONCPU, 0, 1, 0);
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
	n = nm(&t[1], 3, 1, "after");
	assert_int_equal(timeline_builder__add(b, &n, sizeof(n)), 0);
	n = nm(&t[1], 1, 0, "before");
	assert_int_equal(timeline_builder__add(b, &n, sizeof(n)), 0);
	/* Short or unknown records are ignored, not misread. */
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e) - 1), 0);
	e.kind = TSA_TL_NR;
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);

	assert_int_equal(timeline_attach(&r, b, T0, 9, 0, NULL), 0);
	assert_non_null(r.timeline);
	assert_int_equal(r.timeline->n, 5);
	assert_int_equal(r.timeline->unmatched, 1);
	assert_false(timeline_complete(r.timeline));
	for (size_t i = 0; i < r.nthreads; i++) {
		g = timeline_thread(r.timeline, &r.threads[i]);
		assert_non_null(g);
		if (r.threads[i].tid == 100) {
			assert_int_equal(g->n, 3);
			assert_int_equal(r.timeline->iv[g->first].kind, TSA_TL_ONCPU);
			assert_int_equal(r.timeline->iv[g->first].cpu, 3);
			assert_int_equal(r.timeline->iv[g->first].start_ns, 0);
			assert_int_equal(r.timeline->iv[g->first].dur_ns, 4 * MS);
			assert_int_equal(r.timeline->iv[g->first + 1].kind, TSA_TL_RUNQ_PREEMPTED);
			assert_int_equal(r.timeline->iv[g->first + 1].cpu, TIMELINE_NO_CPU);
			assert_int_equal(r.timeline->iv[g->first + 2].start_ns, 5 * MS);
			assert_int_equal(g->nnames, 0);
		} else {
			/* Matched by the tid it had before its exec (tid_before_exec). */
			assert_int_equal(g->n, 2);
			assert_int_equal(r.timeline->iv[g->first].kind, TSA_TL_RUNQ_NEW);
			assert_int_equal(g->nnames, 2);
			assert_string_equal(r.timeline->names[g->first_name].comm, "before");
			assert_int_equal(r.timeline->names[g->first_name].at_ns, 1 * MS);
			assert_string_equal(r.timeline->names[g->first_name + 1].comm, "after");
			assert_int_equal(r.timeline->names[g->first_name + 1].execs, 1);
		}
	}
	/* The builder starts again empty for the next run. */
	assert_int_equal(timeline_attach(&r, b, T0, 0, 0, NULL), 0);
	assert_int_equal(r.timeline->n, 0);
	assert_true(timeline_complete(r.timeline));
	run__free_detail(&r);
	timeline_builder__free(b);
}

static void test_bound_keeps_the_first_and_says_where_it_cut(void **state)
{
	struct timeline_builder *b = timeline_builder__new(2, 4096);
	struct tsa_thread t[2];
	struct tsa_tl_event e;
	struct run r;

	make_run(&r, t);
	e = ev(&t[0], TSA_TL_ONCPU, 0, 1, 0);
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
	e = ev(&t[0], TSA_TL_SLEEP, 1, 2, (uint32_t)-1);
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
	/* Past the bound: counted with their time; the earliest end is the cut. */
	e = ev(&t[0], TSA_TL_RUNQ_WAKEUP, 2, 7, (uint32_t)-1);
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
	e = ev(&t[1], TSA_TL_ONCPU, 1, 5, 1);
	assert_int_equal(timeline_builder__add(b, &e, sizeof(e)), 0);
	assert_int_equal(timeline_attach(&r, b, T0, 4, 0, NULL), 0);
	assert_int_equal(r.timeline->n, 2);
	assert_int_equal(r.timeline->beyond_bound, 2);
	assert_int_equal(r.timeline->beyond_bound_ns, 9 * MS);
	assert_int_equal(r.timeline->truncated_at_ns, 5 * MS);
	assert_int_equal(r.timeline->max_intervals, 2);
	assert_false(timeline_complete(r.timeline));
	run__free_detail(&r);
	timeline_builder__free(b);
}

static void test_losses_are_the_kernels_and_the_threads(void **state)
{
	struct timeline_builder *b = timeline_builder__new(100, 4096);
	struct tsa_thread t[2];
	struct run r;

	memset(&r, 0, sizeof(r));
	t[0] = fx_thread(100, 100, 99, "main", 0, 10, 4, 1, 5, 0);
	t[0].tl_lost = 3;
	t[0].tl_lost_ns = 2 * MS;
	t[1] = fx_thread(101, 100, 99, "w", 0, 10, 4, 1, 5, 0);
	t[1].tl_lost = 1;
	t[1].tl_lost_ns = 1 * MS;
	r.start_mono_ns = T0;
	run__source(&r, "ebpf", true, NULL);
	assert_int_equal(fold_run(&r, t, 2), 0);
	assert_int_equal(r.threads[0].tl_lost + r.threads[1].tl_lost, 4);
	assert_int_equal(timeline_attach(&r, b, T0, 10, 4, NULL), 0);
	assert_int_equal(r.timeline->lost_events, 4);
	assert_int_equal(r.timeline->lost_ns, 3 * MS);
	assert_false(timeline_complete(r.timeline));
	run__free_detail(&r);
	timeline_builder__free(b);
}

static void test_kinds(void **state)
{
	assert_string_equal(timeline_kind_name(TSA_TL_ONCPU), "on_cpu");
	assert_string_equal(timeline_kind_name(TSA_TL_RUNQ_PREEMPTED), "runqueue_preempted");
	assert_string_equal(timeline_kind_name(TSA_TL_STOPPED), "stopped");
	assert_string_equal(timeline_kind_name(99), "unknown");
	for (unsigned k = 0; k < TSA_TL_NR; k++)
		assert_true(timeline_kind_state(k) >= 0 && timeline_kind_state(k) < TSA_ST_NR);
	assert_int_equal(timeline_kind_state(TSA_TL_ONCPU_INFERRED), TSA_ST_ONCPU);
	assert_int_equal(timeline_kind_state(TSA_TL_RUNQ_NEW), TSA_ST_RUNQ);
	assert_int_equal(timeline_kind_state(TSA_TL_DISK), TSA_ST_DISK);
	assert_int_equal(timeline_kind_state(TSA_TL_NAME), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_attach_matches_by_identity_and_orders),
	    cmocka_unit_test(test_bound_keeps_the_first_and_says_where_it_cut),
	    cmocka_unit_test(test_losses_are_the_kernels_and_the_threads),
	    cmocka_unit_test(test_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
