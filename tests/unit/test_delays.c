// SPDX-License-Identifier: MIT
/* Taskstats records reach a thread only on a proven identity. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "delays.h"
#include "fixtures.h"
#include "account.h"
#include "run.h"
#include "sampling.h"
#include "taskstats.h"

/* An eBPF thread whose identity (task start) is on the same clock as its times. */
static struct tsa_thread thread(uint32_t tid, double start, double end, double on, double rq,
				double s)
{
	struct tsa_thread t = fx_thread(tid, 100, 1, "worker", start, end, on, rq, s, 0);

	t.task_start_ns = t.start_ns;
	return t;
}

/*
 * The exit record the kernel would send for t, written tail_cpu + tail_rq
 * before its final switch (tail_pc switch-ins in between), received 1 ms
 * after that switch.
 */
static struct ts_record exit_record(const struct tsa_thread *t, uint64_t tail_cpu, uint64_t tail_rq,
				    uint64_t tail_pc)
{
	struct ts_record r;
	uint64_t when = t->end_ns - tail_cpu - tail_rq;

	memset(&r, 0, sizeof(r));
	r.version = 16;
	r.tid = t->tid;
	r.tgid = t->pid;
	r.have_tgid = true;
	r.ppid = 1;
	strcpy(r.comm, "worker");
	r.etime_ns = (when - t->task_start_ns) / 1000 * 1000;
	r.run_ns = t->kend[TSA_K_SUM_EXEC] - tail_cpu;
	r.delays[DELAY_CPU] =
	    (struct delay_counter){.available = true,
				   .count = t->kend[TSA_K_PCOUNT] - tail_pc,
				   .total_ns = t->kend[TSA_K_RUN_DELAY] - tail_rq};
	r.delays[DELAY_BLOCK_IO] =
	    (struct delay_counter){.available = true, .count = 2, .total_ns = 3 * MS};
	r.from_exit = true;
	r.recv_ns = t->end_ns + MS;
	return r;
}

static void fold(struct run *r, struct tsa_thread *t, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->start_mono_ns = T0;
	r->quality.ts.active = true;
	assert_int_equal(fold_run(r, t, n), 0);
}

/* delays_attach() on an array of records. */
static int attach_all(struct run *r, const struct ts_record *recs, size_t n,
		      const struct delays_opts *o)
{
	const struct ts_record *p[8];

	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		p[i] = &recs[i];
	return delays_attach(r, p, n, o);
}

static const struct delays_opts live = {.non_cpu_live = true, .non_cpu_live_preexisting = true};

static struct thread_acct *by_start(struct run *r, double start_ms)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].start_ns == (int64_t)(start_ms * MS))
			return &r->threads[i];
	fail();
	return NULL;
}

static void test_exit_record_attaches(void **state)
{
	struct tsa_thread t = thread(101, 0, 500, 300, 150, 50);
	struct ts_record rec = exit_record(&t, 20000, 0, 0);
	struct run r;

	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	assert_true(r.threads[0].have_delays);
	assert_true(r.threads[0].delays_final);
	assert_int_equal(r.threads[0].delays_version, 16);
	assert_int_equal(r.threads[0].delays[DELAY_BLOCK_IO].total_ns, 3 * MS);
	assert_int_equal(r.quality.ts.attached, 1);
	assert_int_equal(r.quality.ts.identity_mismatches, 0);
	assert_int_equal(r.quality.ts.threads_without, 0);
	/* The CPU delay agrees with the runqueue time: the cross-check says so. */
	assert_true(r.quality.ts_cpu.available);
	assert_int_equal(r.quality.ts_cpu.compared, 1);
	assert_true(r.quality.ts_cpu.worst < 1e-9);
	/* It ran 20 us after writing its record: CPU time only eBPF saw. */
	assert_int_equal(r.quality.ts.cpu_after_exit_ns, 20000);
	assert_int_equal(r.quality.ts.cpu_after_exit_threads, 1);
	run__free_detail(&r);
}

/*
 * The CPU after the exit records is summed over the threads that had one
 * (a record written 5 us into a runqueue wait, the thread switched in once
 * more after it); a thread without one adds nothing.
 */
static void test_cpu_after_exit_records(void **state)
{
	struct tsa_thread t[3] = {thread(101, 0, 100, 60, 30, 10), thread(102, 0, 200, 60, 30, 10),
				  thread(103, 0, 300, 60, 30, 10)};
	struct ts_record rec[2];
	struct run r;

	rec[0] = exit_record(&t[0], 45000, 0, 0);
	rec[1] = exit_record(&t[1], 70000, 5000, 1);
	fold(&r, t, 3);
	assert_int_equal(attach_all(&r, rec, 2, &live), 0);
	assert_int_equal(r.quality.ts.attached, 2);
	assert_int_equal(r.quality.ts.cpu_after_exit_ns, 115000);
	assert_int_equal(r.quality.ts.cpu_after_exit_threads, 2);
	run__free_detail(&r);
}

/*
 * sum_exec_runtime in a record can be stale by up to a tick (it is brought
 * up to date at ticks and switches): the record still fits.
 */
static void test_stale_runtime_fits(void **state)
{
	struct tsa_thread t = thread(101, 0, 500, 300, 150, 50);
	struct ts_record rec = exit_record(&t, 20000, 0, 0);
	struct run r;

	rec.run_ns -= 4 * MS; /* the last 4 ms on the CPU were not yet in the counter */
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	assert_true(r.threads[0].have_delays);
	run__free_detail(&r);
}

/* A tid used twice in a run: each record goes to its own thread, in either order. */
static void test_tid_reuse(void **state)
{
	struct tsa_thread t[2] = {thread(101, 0, 100, 60, 30, 10),
				  thread(101, 200, 300, 60, 30, 10)};
	struct ts_record rec[2] = {exit_record(&t[1], 0, 0, 0), exit_record(&t[0], 0, 0, 0)};
	struct run r;

	rec[1].delays[DELAY_BLOCK_IO].total_ns = 1; /* to tell them apart */
	fold(&r, t, 2);
	assert_int_equal(attach_all(&r, rec, 2, &live), 0);
	assert_int_equal(r.quality.ts.attached, 2);
	assert_int_equal(r.quality.ts.identity_mismatches, 0);
	assert_int_equal(by_start(&r, 0)->delays[DELAY_BLOCK_IO].total_ns, 1);
	assert_int_equal(by_start(&r, 200)->delays[DELAY_BLOCK_IO].total_ns, 3 * MS);
	run__free_detail(&r);
}

/*
 * Two identical threads with one tid, and only the later one's record (the
 * earlier was dropped): it fits both, so it goes to neither.
 */
static void test_ambiguous_not_attached(void **state)
{
	struct tsa_thread t[2] = {thread(101, 0, 100, 60, 30, 10),
				  thread(101, 200, 300, 60, 30, 10)};
	struct ts_record rec = exit_record(&t[1], 0, 0, 0);
	struct run r;

	fold(&r, t, 2);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	assert_int_equal(r.quality.ts.attached, 0);
	assert_int_equal(r.quality.ts.identity_mismatches, 1);
	assert_int_equal(r.quality.ts.threads_without, 2);
	assert_false(r.threads[0].have_delays);
	assert_false(r.threads[1].have_delays);
	run__free_detail(&r);
}

/* Same tid, wrong life: refused, counted. */
static void test_wrong_identity_refused(void **state)
{
	struct tsa_thread t = thread(101, 0, 500, 300, 150, 50);
	struct ts_record rec[4];
	struct run r;

	rec[0] = exit_record(&t, 0, 0, 0);
	rec[0].etime_ns += 50 * MS; /* started 50 ms before this thread did */
	rec[1] = exit_record(&t, 0, 0, 0);
	rec[1].run_ns += 1; /* more CPU than the thread ever had */
	rec[2] = exit_record(&t, 0, 0, 0);
	rec[2].delays[DELAY_CPU].total_ns -= 1000; /* waited after its last switch-in */
	rec[3] = exit_record(&t, 0, 0, 0);
	rec[3].tgid = 999; /* another process's thread */
	fold(&r, &t, 1);
	for (int i = 0; i < 4; i++) {
		r.quality.ts = (struct taskstats_quality){.active = true};
		assert_int_equal(attach_all(&r, &rec[i], 1, &live), 0);
		assert_int_equal(r.quality.ts.identity_mismatches, 1);
		assert_false(r.threads[0].have_delays);
	}
	run__free_detail(&r);
}

/* Preempted after writing its record: sleep in the tail is allowed for, runqueue time known. */
static void test_switched_in_tail(void **state)
{
	struct tsa_thread t = thread(101, 0, 500, 300, 150, 50);
	struct ts_record rec = exit_record(&t, 1 * MS, 2 * MS, 3);
	struct run r;

	rec.etime_ns -= 10 * MS; /* it also slept 10 ms after the record */
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	assert_true(r.threads[0].have_delays);
	run__free_detail(&r);
}

/*
 * The thread's counters were last brought up to date at the top of its
 * final __schedule(); the switch-out came 70 us later, after the scheduler
 * had balanced the load of the CPU going idle. The record is placed from
 * that last update, not from the switch.
 */
static void test_pick_after_last_update(void **state)
{
	struct tsa_thread t = thread(101, 0, 500, 300, 150, 50), upd;
	struct ts_record rec;
	struct run r;

	t.kend_ns = t.end_ns - 70000;
	upd = t;
	upd.end_ns = t.kend_ns;
	rec = exit_record(&upd, 20000, 0, 0);
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	assert_true(r.threads[0].have_delays);
	assert_int_equal(r.quality.ts.identity_mismatches, 0);
	run__free_detail(&r);

	/* Timed from the switch-out, the same record would seem to start 70 us late. */
	t.kend_ns = 0;
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	assert_false(r.threads[0].have_delays);
	assert_int_equal(r.quality.ts.identity_mismatches, 1);
	run__free_detail(&r);
}

/* Without kernel.task_delayacct at the thread's start, only the CPU delay means anything. */
static void test_non_cpu_not_live(void **state)
{
	struct tsa_thread t = thread(101, 0, 500, 300, 150, 50);
	struct ts_record rec = exit_record(&t, 0, 0, 0);
	struct delays_opts o = {.non_cpu_live = false};
	struct run r;

	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &o), 0);
	assert_true(r.threads[0].delays[DELAY_CPU].available);
	assert_false(r.threads[0].delays[DELAY_BLOCK_IO].available);
	assert_int_equal(r.threads[0].delays[DELAY_BLOCK_IO].total_ns, 0);
	run__free_detail(&r);
}

/* A thread alive at the end is queried: the answer's time window proves it. */
static void test_query(void **state)
{
	struct tsa_thread t = thread(101, 0, 500, 300, 150, 50);
	struct ts_record rec = exit_record(&t, 0, 0, 0), bad;
	struct run r;

	t.flags = (t.flags & ~TSA_F_EXITED) | TSA_F_SURVIVOR;
	rec.from_exit = false;
	rec.sent_ns = t.end_ns + 100 * MS;
	rec.recv_ns = rec.sent_ns + 30000;
	rec.etime_ns = (rec.sent_ns + 10000 - t.task_start_ns) / 1000 * 1000;
	bad = rec;
	bad.etime_ns -= 5 * MS;
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &bad, 1, &live), 0);
	assert_false(r.threads[0].have_delays);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	assert_true(r.threads[0].have_delays);
	assert_false(r.threads[0].delays_final);
	/* An exit record is never a survivor's. */
	run__free_detail(&r);
}

/* No scheduler source saw it: the record becomes a thread of its own, if asked. */
static void test_create_missing(void **state)
{
	struct tsa_thread t = thread(101, 0, 50, 30, 15, 5);
	struct ts_record rec = exit_record(&t, 0, 0, 0);
	struct delays_opts o = live;
	struct run r;

	memset(&r, 0, sizeof(r));
	r.start_mono_ns = T0;
	assert_int_equal(attach_all(&r, &rec, 1, &o), 0);
	assert_int_equal(r.nthreads, 0);
	assert_int_equal(r.quality.ts.unmatched_records, 1);
	o.create_missing = true;
	r.quality.ts = (struct taskstats_quality){0};
	assert_int_equal(attach_all(&r, &rec, 1, &o), 0);
	assert_int_equal(fold_finish(&r), 0);
	assert_int_equal(r.nthreads, 1);
	assert_int_equal(r.threads[0].source, ACCT_SRC_TASKSTATS);
	assert_int_equal(r.threads[0].state_ns[TSA_ST_ONCPU], 30 * MS);
	assert_int_equal(r.threads[0].state_ns[TSA_ST_RUNQ], 15 * MS);
	assert_int_equal(r.threads[0].lifetime_ns, rec.etime_ns);
	assert_true(r.threads[0].unmeasured & ACCT_NO_WAKEUPS);
	assert_int_equal(r.totals.threads, 1);
	run__free_detail(&r);
}

/*
 * A thread the procfs source sampled from its birth: its exit record's
 * counters (at its exit) replace its last sample's, and its elapsed time
 * is the thread's life. A record whose runqueue wait or slices are below the
 * samples' is not its end: nothing is replaced. Its on-CPU time alone may
 * be below a sample taken in the rest of the exit: the sample's stays.
 */
static void test_procfs_counters_to_exit(void **state)
{
	const struct smp_clock clk = {.ns_per_tick = 10 * MS};
	struct procfs_stat st = {
	    .pid = 101, .state = 'R', .ppid = 1, .starttime_ticks = T0 / (10 * MS)};
	struct procfs_schedstat ss = {0};
	struct smp_thread s;
	struct ts_record rec = {0};
	struct run r;

	for (int pass = 0; pass < 3; pass++) {
		memset(&r, 0, sizeof(r));
		r.start_mono_ns = T0;
		r.threads = calloc(1, sizeof(*r.threads));
		r.nthreads = 1;
		/* Born at T0 + 1 ms, sampled at 5 and 15 ms (10 ms of CPU then), gone at 25 ms. */
		smp_thread_start(&s, &st, &ss, T0 + 5 * MS, T0 + 1 * MS, &clk);
		s.pid = 100;
		ss = (struct procfs_schedstat){10 * MS, 1 * MS, 4};
		smp_thread_sample(&s, &st, &ss, T0 + 15 * MS);
		smp_thread_gone(&s, T0 + 25 * MS);
		smp_thread_acct(&s, &r.threads[0], T0, &clk);
		assert_int_equal(r.threads[0].state_ns[TSA_ST_ONCPU], 10 * MS);
		rec.tid = 101;
		rec.tgid = 100;
		rec.have_tgid = true;
		rec.from_exit = true;
		rec.version = 16;
		rec.etime_ns = 18 * MS;
		rec.recv_ns = T0 + 21 * MS;
		/* The second: on-CPU below the samples; the third: the wait below them. */
		rec.run_ns = pass == 1 ? 9 * MS : 14 * MS;
		rec.delays[DELAY_CPU] = (struct delay_counter){
		    .available = true, .count = 6, .total_ns = pass == 2 ? MS / 2 : 2 * MS};
		assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
		assert_true(r.threads[0].have_delays);
		if (!pass) {
			assert_true(r.threads[0].counters_from_exit);
			assert_int_equal(r.threads[0].state_ns[TSA_ST_ONCPU], 14 * MS);
			assert_int_equal(r.threads[0].state_ns[TSA_ST_RUNQ], 2 * MS);
			assert_int_equal(r.threads[0].slices, 6);
			/*
			 * Life: the record's 18 ms to the microsecond (its middle),
			 * not the 17 ms between the middles of the gaps around the
			 * samples (3 .. 20 ms); it ends where that estimate put it.
			 * 16 ms runnable, the rest residual.
			 */
			assert_int_equal(r.threads[0].lifetime_ns, 18 * MS + 500);
			assert_int_equal(r.threads[0].residual_ns, 2 * MS + 500);
			assert_int_equal(r.threads[0].end_ns, 20 * MS);
			assert_int_equal(r.threads[0].start_ns, 2 * MS - 500);
			assert_int_equal(r.threads[0].sampled.on_cpu_ns,
					 10 * MS); /* the samples' own */
		} else if (pass == 1) {
			assert_true(r.threads[0].counters_from_exit);
			assert_int_equal(r.threads[0].state_ns[TSA_ST_ONCPU], 10 * MS);
			assert_int_equal(r.threads[0].state_ns[TSA_ST_RUNQ], 2 * MS);
			assert_int_equal(r.threads[0].slices, 6);
		} else {
			assert_false(r.threads[0].counters_from_exit);
			assert_int_equal(r.threads[0].state_ns[TSA_ST_ONCPU], 10 * MS);
			assert_int_equal(r.threads[0].state_ns[TSA_ST_RUNQ], 1 * MS);
		}
		run__free_detail(&r);
		ss = (struct procfs_schedstat){0};
	}
}

/*
 * The kernel timed one wait from an unset start (0): that wait is longer
 * than the thread's life. It is left out, and said so; an impossible
 * counter is refused.
 */
static void test_impossible_counters(void **state)
{
	struct tsa_thread t = thread(101, 0, 500, 300, 150, 50);
	struct ts_record rec = exit_record(&t, 0, 0, 0);
	struct run r;

	rec.delays[DELAY_BLOCK_IO] = (struct delay_counter){.available = true,
							    .have_extremes = true,
							    .count = 5,
							    .total_ns = 8000000 * MS + 4 * MS,
							    .max_ns = 8000000 * MS,
							    .min_ns = MS};
	rec.delays[DELAY_SWAP_IN] =
	    (struct delay_counter){.available = true, .count = 1, .total_ns = 900 * MS};
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	assert_true(r.threads[0].delays[DELAY_BLOCK_IO].available);
	assert_int_equal(r.threads[0].delays[DELAY_BLOCK_IO].count, 4);
	assert_int_equal(r.threads[0].delays[DELAY_BLOCK_IO].total_ns, 4 * MS);
	assert_int_equal(r.threads[0].delays[DELAY_BLOCK_IO].dropped, 1);
	assert_false(r.threads[0].delays[DELAY_BLOCK_IO].have_extremes);
	assert_int_equal(r.quality.ts.dropped_waits, 1);
	/* 900 ms of swap-in in a 500 ms life: refused, and said so. */
	assert_false(r.threads[0].delays[DELAY_SWAP_IN].available);
	assert_true(r.threads[0].delays[DELAY_SWAP_IN].refused);
	assert_false(r.threads[0].delays[DELAY_BLOCK_IO].refused);
	assert_int_equal(r.quality.ts.implausible, 1);
	run__free_detail(&r);

	/* Block I/O longer than all the time the thread slept: refused too. */
	rec.delays[DELAY_BLOCK_IO] =
	    (struct delay_counter){.available = true, .count = 10, .total_ns = 100 * MS};
	rec.delays[DELAY_SWAP_IN] = (struct delay_counter){.available = true};
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	assert_false(r.threads[0].delays[DELAY_BLOCK_IO].available);
	assert_true(r.threads[0].delays[DELAY_BLOCK_IO].refused);
	assert_int_equal(r.quality.ts.implausible, 1);
	run__free_detail(&r);

	/* Within the sleep, it stands. */
	rec.delays[DELAY_BLOCK_IO].total_ns = 45 * MS;
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	assert_true(r.threads[0].delays[DELAY_BLOCK_IO].available);
	assert_int_equal(r.threads[0].delays[DELAY_BLOCK_IO].total_ns, 45 * MS);
	assert_int_equal(r.quality.ts.implausible, 0);
	run__free_detail(&r);
}

/*
 * With the delayed dequeue the kernel's block I/O counter misses waits (a
 * sleeper woken while still on its runqueue). The probe's own count of the
 * sleeps that began in io_schedule() is given instead, and said so; a
 * counter that agrees with it stands, with its extremes.
 */
static void test_blkio_missed_waits(void **state)
{
	struct tsa_thread t = thread(101, 0, 500, 300, 50, 150);
	struct ts_record rec = exit_record(&t, 0, 0, 0);
	const struct delay_counter *c;
	struct run r;

	/* Figures of a run on this VM: 138 waits counted of 721, 37.6 ms of 133.4. */
	t.iowait_waits = 721;
	t.iowait_ns = 133 * MS;
	rec.delays[DELAY_BLOCK_IO] = (struct delay_counter){.available = true,
							    .have_extremes = true,
							    .count = 138,
							    .total_ns = 37 * MS,
							    .max_ns = 2 * MS,
							    .min_ns = 10000};
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	c = &r.threads[0].delays[DELAY_BLOCK_IO];
	assert_true(c->available && c->from_ebpf);
	assert_int_equal(c->count, 721);
	assert_int_equal(c->total_ns, 133 * MS);
	assert_false(c->have_extremes);
	assert_int_equal(r.quality.ts.blkio_from_ebpf, 1);
	run__free_detail(&r);

	/* Within two waits and 1%: the kernel's own, with its extremes. */
	rec.delays[DELAY_BLOCK_IO].count = 721 - 2 - 7;
	rec.delays[DELAY_BLOCK_IO].total_ns = 134 * MS;
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	c = &r.threads[0].delays[DELAY_BLOCK_IO];
	assert_false(c->from_ebpf);
	assert_true(c->have_extremes);
	assert_int_equal(c->count, 712);
	assert_int_equal(r.quality.ts.blkio_from_ebpf, 0);
	run__free_detail(&r);

	/* Impossible (longer than all the sleep): the probe's, not null. */
	rec.delays[DELAY_BLOCK_IO] =
	    (struct delay_counter){.available = true, .count = 721, .total_ns = 400 * MS};
	fold(&r, &t, 1);
	assert_int_equal(attach_all(&r, &rec, 1, &live), 0);
	c = &r.threads[0].delays[DELAY_BLOCK_IO];
	assert_true(c->available && c->from_ebpf && !c->refused);
	assert_int_equal(c->total_ns, 133 * MS);
	assert_int_equal(r.quality.ts.implausible, 0);
	assert_int_equal(r.quality.ts.blkio_from_ebpf, 1);
	run__free_detail(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_record_attaches),
	    cmocka_unit_test(test_cpu_after_exit_records),
	    cmocka_unit_test(test_stale_runtime_fits),
	    cmocka_unit_test(test_tid_reuse),
	    cmocka_unit_test(test_ambiguous_not_attached),
	    cmocka_unit_test(test_wrong_identity_refused),
	    cmocka_unit_test(test_switched_in_tail),
	    cmocka_unit_test(test_pick_after_last_update),
	    cmocka_unit_test(test_non_cpu_not_live),
	    cmocka_unit_test(test_query),
	    cmocka_unit_test(test_create_missing),
	    cmocka_unit_test(test_procfs_counters_to_exit),
	    cmocka_unit_test(test_impossible_counters),
	    cmocka_unit_test(test_blkio_missed_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
