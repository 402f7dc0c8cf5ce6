// SPDX-License-Identifier: MIT
/* The taskstats decoder: by version and payload length, never by the build's header. */
#include <errno.h>
#include <string.h>

#include "unit.h"

#include <linux/taskstats.h>

#include "taskstats.h"

/* A record as the running kernel (version 16, 560 bytes) sends it. */
static void fill_v16(unsigned char *b, uint16_t version)
{
	struct taskstats *t = (struct taskstats *)b; /* the fields the build's header knows */

	memset(b, 0, TASKSTATS_V16_SIZE);
	t->version = version;
	t->ac_exitcode = 3 << 8;
	t->cpu_count = 5;
	t->cpu_delay_total = 1000;
	t->blkio_count = 2;
	t->blkio_delay_total = 2000;
	t->swapin_count = 0;
	t->swapin_delay_total = 0;
	t->cpu_run_virtual_total = 777777;
	strcpy(t->ac_comm, "a-very-long-thread-name");
	t->ac_pid = 4242;
	t->ac_ppid = 4000;
	t->ac_btime = 1700000000;
	t->ac_etime = 1234567; /* us */
	t->ac_utime = 10;
	t->ac_stime = 20;
	t->nvcsw = 7;
	t->nivcsw = 9;
	t->freepages_count = 1;
	t->freepages_delay_total = 3000;
	t->thrashing_count = 1;
	t->thrashing_delay_total = 4000;
	t->ac_btime64 = 1700000001;
	t->compact_count = 1;
	t->compact_delay_total = 5000;
	t->ac_tgid = 4100;
	t->wpcopy_count = 1;
	t->wpcopy_delay_total = 6000;
	/* Version 14 and 16 fields, past what the build's header knows. */
	uint64_t irq[2] = {3, 7000};
	memcpy(b + 416, irq, sizeof(irq));
	for (int d = 0; d < 8; d++) {
		uint64_t mm[2] = {100 + (uint64_t)d, 10 + (uint64_t)d};

		memcpy(b + 432 + 16 * d, mm, sizeof(mm));
	}
}

static void test_v16(void **state)
{
	unsigned char b[TASKSTATS_V16_SIZE];
	struct ts_record r;

	fill_v16(b, 16);
	assert_int_equal(taskstats_decode(b, sizeof(b), &r), 0);
	assert_int_equal(r.version, 16);
	assert_int_equal(r.tid, 4242);
	assert_true(r.have_tgid);
	assert_int_equal(r.tgid, 4100);
	assert_int_equal(r.ppid, 4000);
	assert_string_equal(r.comm, "a-very-long-thr"); /* 15 characters and the NUL */
	assert_int_equal(r.etime_ns, 1234567000ull);
	assert_int_equal(r.btime_s, 1700000001);
	assert_int_equal(r.run_ns, 777777);
	assert_int_equal(r.utime_ns, 10000);
	assert_int_equal(r.stime_ns, 20000);
	assert_true(r.have_switches);
	assert_int_equal(r.nvcsw, 7);
	assert_int_equal(r.nivcsw, 9);
	assert_int_equal(r.exitcode, 3 << 8);
	for (int d = 0; d < DELAY_NR; d++) {
		assert_true(r.delays[d].available);
		assert_true(r.delays[d].have_extremes);
		assert_int_equal(r.delays[d].max_ns, 100 + d);
		assert_int_equal(r.delays[d].min_ns, 10 + d);
	}
	assert_int_equal(r.delays[DELAY_CPU].count, 5);
	assert_int_equal(r.delays[DELAY_CPU].total_ns, 1000);
	assert_int_equal(r.delays[DELAY_BLOCK_IO].total_ns, 2000);
	/* A real zero is available and zero. */
	assert_int_equal(r.delays[DELAY_SWAP_IN].count, 0);
	assert_int_equal(r.delays[DELAY_RECLAIM].total_ns, 3000);
	assert_int_equal(r.delays[DELAY_THRASHING].total_ns, 4000);
	assert_int_equal(r.delays[DELAY_COMPACTION].total_ns, 5000);
	assert_int_equal(r.delays[DELAY_WPCOPY].total_ns, 6000);
	assert_int_equal(r.delays[DELAY_IRQ].count, 3);
	assert_int_equal(r.delays[DELAY_IRQ].total_ns, 7000);
}

/* Version 13 (416 bytes): no IRQ delay, no extremes; what it has is read. */
static void test_v13(void **state)
{
	unsigned char b[TASKSTATS_V16_SIZE];
	struct ts_record r;

	fill_v16(b, 13);
	assert_int_equal(taskstats_decode(b, 416, &r), 0);
	assert_true(r.delays[DELAY_WPCOPY].available);
	assert_int_equal(r.delays[DELAY_WPCOPY].total_ns, 6000);
	assert_false(r.delays[DELAY_IRQ].available);
	assert_int_equal(r.delays[DELAY_IRQ].total_ns, 0);
	for (int d = 0; d < DELAY_NR; d++)
		assert_false(r.delays[d].have_extremes);
}

/* An old kernel (version 8, 328 bytes): no tgid, no 64-bit btime, four counters unknown. */
static void test_v8(void **state)
{
	unsigned char b[TASKSTATS_V16_SIZE];
	struct ts_record r;

	fill_v16(b, 8);
	assert_int_equal(taskstats_decode(b, 328, &r), 0);
	assert_false(r.have_tgid);
	assert_int_equal(r.tgid, 0);
	assert_int_equal(r.btime_s, 1700000000);
	assert_true(r.delays[DELAY_RECLAIM].available);
	assert_false(r.delays[DELAY_THRASHING].available);
	assert_false(r.delays[DELAY_COMPACTION].available);
	assert_false(r.delays[DELAY_WPCOPY].available);
	assert_false(r.delays[DELAY_IRQ].available);
}

/* The version says a field exists but the payload stops short: the length wins. */
static void test_truncated(void **state)
{
	unsigned char b[TASKSTATS_V16_SIZE];
	struct ts_record r;

	fill_v16(b, 14);
	assert_int_equal(taskstats_decode(b, 420, &r), 0);
	assert_true(r.delays[DELAY_WPCOPY].available);
	assert_false(r.delays[DELAY_IRQ].available); /* needs 432 bytes */
	/* Too short to say whose record it is. */
	assert_int_equal(taskstats_decode(b, 100, &r), -EINVAL);
	assert_int_equal(taskstats_decode(b, 1, &r), -EINVAL);
}

/* Version 15 put its new fields in the middle: refused, never read shifted. */
static void test_v15_refused(void **state)
{
	unsigned char b[TASKSTATS_V16_SIZE];
	struct ts_record r;

	fill_v16(b, 15);
	assert_int_equal(taskstats_decode(b, sizeof(b), &r), -EPROTO);
}

/* A newer kernel appends fields: the known ones are still read. */
static void test_newer_version(void **state)
{
	unsigned char b[TASKSTATS_V16_SIZE + 64];
	struct ts_record r;

	memset(b, 0xff, sizeof(b));
	fill_v16(b, 17);
	assert_int_equal(taskstats_decode(b, sizeof(b), &r), 0);
	assert_int_equal(r.version, 17);
	assert_true(r.delays[DELAY_IRQ].available);
	assert_int_equal(r.delays[DELAY_IRQ].total_ns, 7000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v16),		cmocka_unit_test(test_v13),
	    cmocka_unit_test(test_v8),		cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_v15_refused), cmocka_unit_test(test_newer_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
