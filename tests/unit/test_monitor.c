// SPDX-License-Identifier: MIT
/* Monitor mode's pure side: which threads, in what order, and the JSON line. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "fixtures.h"

#include "monitor.h"
#include "run.h"

static struct thread_acct thread(uint32_t tid, const char *comm, uint64_t on, uint64_t s)
{
	struct thread_acct t = {.tid = tid, .pid = 10, .flags = TSA_F_SURVIVOR};

	strcpy(t.comm, comm);
	t.state_ns[TSA_ST_ONCPU] = on;
	t.state_ns[TSA_ST_SLEEP] = s;
	t.sampled.by_state_ns[0] = on;
	t.sampled.by_state_ns[1] = s;
	t.lifetime_ns = on + s;
	t.slices = on ? 3 : 0;
	return t;
}

static void test_comm_match(void **state)
{
	assert_true(monitor_comm_match(NULL, "anything"));
	assert_true(monitor_comm_match("ork", "worker-1"));
	assert_false(monitor_comm_match("ork", "main"));
	assert_true(monitor_comm_match("work*", "worker-1"));
	assert_false(monitor_comm_match("ork*", "worker-1")); /* a glob matches the whole name */
	assert_true(monitor_comm_match("worker-[0-9]", "worker-7"));
	assert_true(monitor_comm_match("w?rker-1", "worker-1"));
	assert_true(monitor_comm_match("[", "[")); /* an unclosed [ is itself, as in the shell */
}

static void test_idle_and_select(void **state)
{
	struct thread_acct t[4] = {thread(3, "sleeper", 0, 100), thread(1, "main", 0, 100),
				   thread(2, "worker", 90, 10), thread(4, "worker", 20, 80)};
	struct monitor_filter f = {.sort = SORT_TID};
	size_t idx[4], n;

	t[1].state_ns[TSA_ST_RUNQ] = 1; /* waited for a CPU: not idle */
	assert_true(monitor_idle(&t[0]));
	assert_false(monitor_idle(&t[1]));
	assert_false(monitor_idle(&t[2]));
	n = monitor_select(&f, t, 4, idx);
	assert_int_equal(n, 3);
	assert_int_equal(t[idx[0]].tid, 1); /* by tid, ascending */
	assert_int_equal(t[idx[1]].tid, 2);
	assert_int_equal(t[idx[2]].tid, 4);
	f.show_idle = true;
	f.sort = SORT_CPU;
	n = monitor_select(&f, t, 4, idx);
	assert_int_equal(n, 4);
	assert_int_equal(t[idx[0]].tid, 2); /* most CPU first */
	assert_int_equal(t[idx[1]].tid, 4);
	f.comm = "work";
	assert_int_equal(monitor_select(&f, t, 4, idx), 2);
	f.comm = NULL;
	f.tid = 3;
	assert_int_equal(monitor_select(&f, t, 4, idx), 1);
	assert_int_equal(t[idx[0]].tid, 3);
}

static void test_json_line(void **state)
{
	struct thread_acct t[2] = {thread(2, "we\nird\"", 150000000, 150000000),
				   thread(3, "other", 0, 300000000)};
	struct source_status src[2] = {
	    {.name = "procfs", .active = true},
	    {.name = "taskstats", .active = false, .reason = "not permitted"}};
	size_t shown[1] = {0};
	struct monitor_report m = {
	    .pid = 10,
	    .comm = "app",
	    .index = 2,
	    .start_ns = 300000000,
	    .end_ns = 600000000,
	    .sample_ns = 10000000,
	    .samples = 30,
	    .max_gap_ns = 10500000,
	    .sources = src,
	    .nsources = 2,
	    .threads = t,
	    .nthreads = 2,
	    .shown = shown,
	    .nshown = 1,
	};
	char *line;

	t[0].delays[DELAY_CPU] =
	    (struct delay_counter){.available = true, .count = 4, .total_ns = 99};
	t[0].have_delays = true;
	line = monitor_json_line(&m);
	assert_non_null(line);
	/* One line: the newline only at the end. */
	assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);
	assert_non_null(strstr(line, "\"schema\":\"tsarun-monitor/1\""));
	assert_non_null(strstr(line, "\"type\":\"interval\""));
	assert_non_null(strstr(line, "\"index\":2"));
	assert_non_null(strstr(line, "\"interval_ns\":300000000"));
	assert_non_null(strstr(line, "\"threads_total\":2"));
	assert_non_null(strstr(line, "\"comm\":\"we\\nird\\\"\""));
	assert_non_null(strstr(line, "\"on_cpu_percent\":50.000"));
	assert_non_null(strstr(line, "\"cpu\":{\"count\":4,\"total_ns\":99}"));
	assert_non_null(strstr(line, "\"block_io\":null"));
	assert_non_null(strstr(
	    line,
	    "\"sources_unavailable\":[{\"source\":\"taskstats\",\"reason\":\"not permitted\"}]"));
	assert_null(strstr(line, "\"tid\":3")); /* not shown */
	/* and the whole line, byte for byte */
	assert_int_equal(golden_check("monitor-line.jsonl", line), 0);
	free(line);
	m.final = true;
	line = monitor_json_line(&m);
	assert_non_null(strstr(line, "\"type\":\"final\""));
	free(line);
}

/* -p attaches to any process: its name and its threads' are shown escaped, in their column. */
static void test_table_hostile_names(void **state)
{
	struct thread_acct t[2] = {thread(2, "\033]0;T\007\x9b", 150000000, 0),
				   thread(3, "plain", 10, 0)};
	size_t shown[2] = {0, 1};
	struct monitor_report m = {.pid = 10,
				   .end_ns = 300000000,
				   .threads = t,
				   .nthreads = 2,
				   .shown = shown,
				   .nshown = 2};
	char *text = NULL, *a, *b;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	memcpy(m.comm, "\033[2J\xff", 6);
	monitor_print_table(f, &m, true);
	fclose(f);
	assert_null(strchr(text, '\033'));
	assert_null(strchr(text, '\x9b'));
	assert_non_null(strstr(text, " 10 (\\x1b[2J\\xff) "));
	a = strstr(text, "\\x1b]0;T\\x07\\x9b ");
	b = strstr(text, "plain ");
	assert_non_null(a);
	assert_non_null(b);
	/* Rows of the same width: the name's column is 16 wide, escapes counted as shown. */
	assert_int_equal(strcspn(a, "\n"), strcspn(b, "\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_comm_match),
	    cmocka_unit_test(test_idle_and_select),
	    cmocka_unit_test(test_json_line),
	    cmocka_unit_test(test_table_hostile_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
