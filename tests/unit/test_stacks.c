// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "unit.h"

#include "artifact.h"
#include "fixtures.h"
#include "flame.h"
#include "account.h"
#include "run.h"
#include "stacks.h"
#include "table.h"

static char *capture(int (*fn)(FILE *, const struct run *), const struct run *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	assert_non_null(m);
	assert_int_equal(fn(m, r), 0);
	fclose(m);
	return text;
}

static int64_t trace(struct run_stacks *s, const char *const *f, size_t n, bool kernel)
{
	int64_t i = run_stacks__add_trace(s, f, n, TSA_SS_OK, kernel, false, 0);

	assert_true(i >= 0);
	return i;
}

/*
 * A worker (tid 101) that ran 350 ms (sampled 30 + 10 times), waited 40 ms
 * for a CPU, slept 9 ms on a futex (8 ms charged to a stack, 1 ms in short
 * sleeps); and the main thread that slept 170 ms in wait4, 10 ms in D on a
 * page fault.
 */
static void make_run(struct run *r)
{
	struct tsa_thread t[2] = {
	    fx_thread(100, 100, 99, "bench", 0, 500, 300, 20, 170, 10),
	    fx_thread(101, 100, 99, "worker", 1, 400, 350, 40, 9, 0),
	};
	struct run_stacks *s;
	int64_t u_main, k_wait, u_work, k_futex, u_spin, u_fault, k_fault, none;

	t[1].below_count = 10;
	t[1].below_ns = 1 * MS;
	memset(r, 0, sizeof(*r));
	r->start_mono_ns = T0;
	assert_int_equal(fold_run(r, t, 2), 0);
	for (size_t i = 0; i < r->nthreads; i++) {
		r->threads[i].have_below = true;
		r->threads[i].below_count = r->threads[i].tid == 101 ? 10 : 0;
		r->threads[i].below_ns = r->threads[i].tid == 101 ? 1 * MS : 0;
	}
	s = run_stacks__new();
	assert_non_null(s);
	s->offcpu = s->oncpu = true;
	s->offcpu_min_ns = 10000;
	s->freq = 99;
	u_main = trace(s, (const char *[]){"_start", "main", "wait"}, 3, false);
	k_wait = trace(s, (const char *[]){"do_syscall_64_[k]", "kernel_wait4_[k]"}, 2, true);
	u_work =
	    trace(s, (const char *[]){"start_thread", "worker", "pthread_mutex_lock"}, 3, false);
	k_futex = trace(s, (const char *[]){"do_syscall_64_[k]", "futex_wait_[k]"}, 2, true);
	u_spin =
	    trace(s, (const char *[]){"start_thread", "worker", "spin;with;semicolons"}, 3, false);
	u_fault = trace(s, (const char *[]){"_start", "main", "touch"}, 3, false);
	k_fault =
	    trace(s, (const char *[]){"asm_exc_page_fault_[k]", "filemap_fault_[k]"}, 2, true);
	none = run_stacks__add_missing(s, true, TSA_SS_NONE);
	/* Two raw stacks that symbolize alike: merged. */
	assert_int_equal(run_stacks__add_agg(s, &(struct stack_agg){.kind = STACK_OFFCPU,
								    .pid = 100,
								    .tid = 100,
								    .state = TSA_ST_SLEEP,
								    .ustack = (uint32_t)u_main,
								    .kstack = (uint32_t)k_wait,
								    .count = 1,
								    .total_ns = 100 * MS}),
			 0);
	u_main = trace(s, (const char *[]){"_start", "main", "wait"}, 3, false);
	run_stacks__add_agg(s, &(struct stack_agg){.kind = STACK_OFFCPU,
						   .pid = 100,
						   .tid = 100,
						   .state = TSA_ST_SLEEP,
						   .ustack = (uint32_t)u_main,
						   .kstack = (uint32_t)k_wait,
						   .count = 2,
						   .total_ns = 70 * MS});
	run_stacks__add_agg(s, &(struct stack_agg){.kind = STACK_OFFCPU,
						   .pid = 100,
						   .tid = 100,
						   .state = TSA_ST_DISK,
						   .ustack = (uint32_t)u_fault,
						   .kstack = (uint32_t)k_fault,
						   .count = 1,
						   .total_ns = 10 * MS});
	run_stacks__add_agg(s, &(struct stack_agg){.kind = STACK_OFFCPU,
						   .pid = 100,
						   .tid = 101,
						   .state = TSA_ST_SLEEP,
						   .ustack = (uint32_t)u_work,
						   .kstack = (uint32_t)k_futex,
						   .count = 4,
						   .total_ns = 8 * MS});
	run_stacks__add_agg(s, &(struct stack_agg){.kind = STACK_ONCPU,
						   .pid = 100,
						   .tid = 101,
						   .state = TSA_ST_ONCPU,
						   .ustack = (uint32_t)u_spin,
						   .kstack = (uint32_t)none,
						   .count = 30});
	run_stacks__add_agg(s, &(struct stack_agg){.kind = STACK_ONCPU,
						   .pid = 100,
						   .tid = 101,
						   .state = TSA_ST_ONCPU,
						   .ustack = (uint32_t)u_work,
						   .kstack = (uint32_t)k_futex,
						   .count = 10});
	run_stacks__sort(s);
	r->stacks = s;
}

static void test_merge_and_order(void **state)
{
	struct run r;
	uint64_t ns, n;

	make_run(&r);
	/* The two wait4 aggregates became one; off-CPU first, largest first. */
	assert_int_equal(r.stacks->naggs, 5);
	assert_int_equal(r.stacks->aggs[0].kind, STACK_OFFCPU);
	assert_int_equal(r.stacks->aggs[0].total_ns, 170 * MS);
	assert_int_equal(r.stacks->aggs[0].count, 3);
	run_stacks__thread_sums(r.stacks, 100, 100, &ns, &n);
	assert_int_equal(ns, 180 * MS);
	assert_int_equal(n, 4);
	run__free_detail(&r);
}

static void test_folded_golden(void **state)
{
	struct run r;
	char *off, *on, *wall, *all;

	make_run(&r);
	off = capture(stacks_write_offcpu_folded, &r);
	on = capture(stacks_write_oncpu_folded, &r);
	wall = capture(stacks_write_wall_folded, &r);
	assert_true(asprintf(&all, "# offcpu\n%s# oncpu\n%s# wall\n%s", off, on, wall) > 0);
	assert_int_equal(golden_check("stacks.folded", all), 0);
	/* A frame's ';' would split it: it is written as ':'. */
	assert_non_null(strstr(on, "spin:with:semicolons 30\n"));
	free(off);
	free(on);
	free(wall);
	free(all);
	run__free_detail(&r);
}

/* The wall view: each thread's lines add up to its lifetime, and parse as folded lines. */
static void test_wall_adds_up(void **state)
{
	struct run r;
	struct flame *f;
	char *wall;
	uint64_t sum[2] = {0};
	size_t bad = 0;

	make_run(&r);
	wall = capture(stacks_write_wall_folded, &r);
	for (char *line = strtok(wall, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strrchr(line, ' ');

		assert_non_null(sp);
		sum[strstr(line, "worker-101") ? 1 : 0] += strtoull(sp + 1, NULL, 10);
	}
	assert_int_equal(sum[0], r.threads[0].lifetime_ns);
	assert_int_equal(sum[1], r.threads[1].lifetime_ns);
	free(wall);
	f = flame__new();
	assert_int_equal(stacks_flame(f, &r, 2), 0);
	assert_int_equal(flame__total(f), r.threads[0].lifetime_ns + r.threads[1].lifetime_ns);
	flame__free(f);
	(void)bad;
	run__free_detail(&r);
}

static void test_artifact_and_table(void **state)
{
	struct session s = {.tool_version = "0.0.0-test", .mode = "run"};
	struct table_opts o = {.top = 20, .command = "./bench"};
	struct run *r = calloc(1, sizeof(*r));
	char *text, *table = NULL;
	size_t len = 0;
	FILE *m;

	make_run(r);
	s.runs = r;
	s.nruns = 1;
	text = artifact_render(&s);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"offcpu_stacks\""));
	assert_non_null(strstr(text, "\"kernel_wait4_[k]\""));
	assert_non_null(strstr(text, "\"below_threshold\":{\"count\":10,\"total_ns\":1000000"));
	free(text);
	m = open_memstream(&table, &len);
	table_print(m, r, &o);
	fclose(m);
	assert_non_null(strstr(table, "top blocking stacks"));
	assert_non_null(strstr(table, "_start > main > wait > [k] kernel_wait4"));
	free(table);
	session__free(&s);
}

static void test_missing_names_why(void **state)
{
	struct run_stacks *s = run_stacks__new();
	int64_t i = run_stacks__add_missing(s, false, TSA_SS_EXITED);

	assert_true(i >= 0);
	assert_string_equal(s->traces[i].frames[0], "[user stack not captured: exited]");
	i = run_stacks__add_missing(s, true, TSA_SS_NONE);
	assert_int_equal(s->traces[i].nframes, 0);
	run_stacks__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_merge_and_order),   cmocka_unit_test(test_folded_golden),
	    cmocka_unit_test(test_wall_adds_up),      cmocka_unit_test(test_artifact_and_table),
	    cmocka_unit_test(test_missing_names_why),
	};

	return cmocka_run_group_tests_name("stacks", tests, NULL, NULL);
}
