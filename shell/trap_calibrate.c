// SPDX-License-Identifier: MIT
/*
 * trap_calibrate.c: the start-up part of tsarun-trap.so, the measurement
 * of the trap's own cost and its cache; tsarun-trap.c is the trap itself.
 *
 * The trap's own cost, measured in this process before the script runs, so
 * that the profile can remove it from every span (bashprof.c). What a trap
 * run costs depends on the shell's state, and start-up is not the state a
 * script runs in; three things are set up to match it:
 *
 * - bash creates its object caches (command words, unwind-protect frames)
 *   only after the start-up files: while BASH_ENV is read, every trap run
 *   mallocs and frees some twenty objects the script's trap runs take from
 *   the caches (measured: 0.2 us more per trap run). The caches are
 *   created for the measurement and destroyed after it, as they were.
 * - once a process has had children, bash gives the terminal back at the
 *   end of every trap run (give_terminal_to(): two sigprocmask() and a
 *   tcsetpgrp(), 0.5 us here) and walks its job table. Each is measured
 *   on its own, with pipeline_pgrp and an empty job table set for the
 *   measurement; each record says which of them the trap run before it
 *   paid (TSA_TAIL_*). The terminal is never touched: when tcsetpgrp()
 *   would change its foreground group, the call goes to a descriptor that
 *   is not a terminal, which takes the same path and fails.
 * - records are sent as in a run (as calibration chunks the reader drops).
 *
 * The base cost is a loop without and with the DEBUG trap, per trap run,
 * which includes what the trap does to the command after it; the loop is
 * bash's counting loop with an arithmetic assignment, the cheap commands
 * tight loops are made of, where the correction matters (the cost varies
 * by about 1.5% between kinds of command: see tests/bench/60-bash.sh).
 * The added tail costs are run_debug_trap() called in a loop in each
 * state. Each figure is a mean over rounds of the difference within a
 * round (cal_mean()): the script runs under the load of the moment, not
 * the best of it.
 */
#include <config.h> /* bash's: defines _GNU_SOURCE */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "builtins.h"
#include "shell.h"
#include "jobs.h"

#include "tsa_wire.h"
#include "trap_internal.h"

extern pid_t pipeline_pgrp, shell_pgrp, terminal_pgrp;
extern int shell_tty;
extern int run_debug_trap(void);

/* bash's object caches (ocache.h, not installed): see calibrate(). */
struct tsa_objcache {
	void **data;
	int cs; /* slots */
	int nc; /* objects cached */
};
extern struct tsa_objcache uwcache, wdcache, wlcache;
extern void cmd_init(void), uwp_init(void);

#define CAL_ROUNDS	11 /* of the base, 200 iterations each; about 25 ms in all */
#define CAL_TAIL_ROUNDS 7  /* of the tail costs (smaller, and added only after a child) */
#define CAL_CALLS	100

struct cal_round {
	uint64_t w, c;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The value most of v[0..n) hold, if 9 in 10 do; else 0. */
static int steady(const int *v, int n)
{
	for (int i = 0; i < n; i++) {
		int same = 0;

		for (int j = 0; j < n; j++)
			same += v[j] == v[i];
		if (same * 10 >= n * 9)
			return v[i];
	}
	return 0;
}

/*
 * The timed parts of a trap run (see span_call()): how many sigprocmask()
 * calls come before the builtin's clock read and after it up to
 * restore_pipeline(), counted over run_debug_trap() calls in the base
 * state, then each part's median, for SPAN_GUARD. A count that is not the
 * same in 9 runs of 10 leaves trap runs untimed (all estimated, as before).
 */
static void cal_spans(void)
{
	int before[CAL_CALLS], after[CAL_CALLS];
	uint64_t part[2][CAL_CALLS];

	span_head = span_tail = span_tty = span_jobs = 0;
	span_med[0] = span_med[1] = 0;
	if (!real_sigprocmask_hooked())
		return;
	eval("trap '" TRAP_STRING "' DEBUG");
	calibrating = 1;
	enabled = 1;
	span_counting = 1;
	for (int i = 0; i < CAL_CALLS; i++) {
		unsigned long c0 = span_calls;

		span_calls_debug = c0;
		run_debug_trap();
		before[i] = (int)(span_calls_debug - c0);
		after[i] = (int)(span_calls - span_calls_debug);
	}
	span_counting = 0;
	span_head = steady(before, CAL_CALLS);
	span_tail = steady(after, CAL_CALLS);
	if (!span_head || !span_tail) {
		span_head = span_tail = 0;
	} else {
		for (int i = 0; i < CAL_CALLS; i++) {
			span_last_part[0] = span_last_part[1] = 0;
			run_debug_trap();
			part[0][i] = span_last_part[0];
			part[1][i] = span_last_part[1];
		}
		qsort(part[0], CAL_CALLS, sizeof(part[0][0]), cmp_u64);
		qsort(part[1], CAL_CALLS, sizeof(part[1][0]), cmp_u64);
		span_med[0] = (uint32_t)part[0][CAL_CALLS / 2];
		span_med[1] = (uint32_t)part[1][CAL_CALLS / 2];
		if (!span_med[0] || !span_med[1])
			span_head = span_tail = 0;
	}
	calibrating = 0;
	enabled = 0;
	eval("trap - DEBUG");
}

/* Whether the mean of v[0..k) (their sum) is above 0 by two standard errors. */
static int cal_significant(const int64_t *v, int k, int64_t sum)
{
	double mean, var = 0;

	if (sum <= 0 || k < 2)
		return sum > 0;
	mean = (double)sum / k;
	for (int i = 0; i < k; i++)
		var += ((double)v[i] - mean) * ((double)v[i] - mean);
	var /= k - 1;
	/* mean > 2 * sqrt(var / k), without libm */
	return mean * mean * k > 4 * var;
}

/*
 * The mean of (with[i] - without[i]) / n over the rounds, the highest and
 * the lowest quarter left out, in wall and CPU. What is measured is the
 * part of a trap run that is not timed (span_call()): a small difference
 * between two loops run a few milliseconds apart, and this machine's speed
 * changes within that (a round that straddles a change is off by the
 * change times the whole loop), so the quarters at either end go. A mean
 * of the middle, not a median: on a loaded machine the script is
 * preempted all along and pays for the caches it finds cold after each
 * preemption, in proportion to its time; most rounds carry some of that.
 *
 * A cost cannot be negative, so a mean below 0 is 0; when the true cost
 * is near 0 and the rounds are noisy, that alone makes the figure a
 * positive bias, not a measurement. The tails' system calls are timed
 * (span_call()), so what is left of them is a few instructions; on a PVM
 * guest a system call costs 1.2-1.6 us and its cost varies by a
 * microsecond from one loop to the next, and the terminal's and the job
 * table's figures came out anywhere from 0 to 3.3 us a trap run (0 in 6
 * start-ups of 15), charged at every trap run of every process that had
 * had a child: a subshell's loop came out with no CPU time at all. With
 * noise_is_0, a mean within two standard errors of 0 (the middle rounds'
 * spread) is 0.
 */
static struct tsa_cost cal_mean(const struct cal_round *with, const struct cal_round *without,
				int rounds, uint64_t n, int noise_is_0)
{
	int64_t w[CAL_ROUNDS], c[CAL_ROUNDS], sw = 0, sc = 0;
	struct tsa_cost r = {0, 0};
	int cut = rounds / 4;

	if (!n || rounds < 3)
		return r;
	if (!cut)
		cut = 1;
	/* Signed: with the timed parts taken out, what is left is small and noisy. */
	for (int i = 0; i < rounds; i++) {
		w[i] = (int64_t)with[i].w - (int64_t)without[i].w;
		c[i] = (int64_t)with[i].c - (int64_t)without[i].c;
	}
	qsort(w, (size_t)rounds, sizeof(w[0]), cmp_i64);
	qsort(c, (size_t)rounds, sizeof(c[0]), cmp_i64);
	for (int i = cut; i < rounds - cut; i++) {
		sw += w[i];
		sc += c[i];
	}
	if (noise_is_0) {
		sw = cal_significant(w + cut, rounds - 2 * cut, sw) ? sw : 0;
		sc = cal_significant(c + cut, rounds - 2 * cut, sc) ? sc : 0;
	}
	r.wall_ns = sw > 0 ? (uint32_t)((uint64_t)sw / ((uint64_t)(rounds - 2 * cut) * n)) : 0;
	r.cpu_ns = sc > 0 ? (uint32_t)((uint64_t)sc / ((uint64_t)(rounds - 2 * cut) * n)) : 0;
	return r;
}

/* Create bash's object caches if they are not there yet; 1 if we did. */
static int caches_create(void)
{
	if (uwcache.cs || wdcache.cs || wlcache.cs)
		return 0;
	cmd_init();
	uwp_init();
	return 1;
}

static void cache_destroy(struct tsa_objcache *c)
{
	while (c->nc > 0)
		free(c->data[--c->nc]);
	free(c->data);
	c->data = NULL;
	c->cs = 0;
}

/* Undo caches_create() when it made them (MADE). */
static void caches_destroy(int made)
{
	if (!made)
		return;
	cache_destroy(&uwcache);
	cache_destroy(&wdcache);
	cache_destroy(&wlcache);
}

/*
 * The base: a loop without and with the trap (which must run under the
 * script's set -u too). In wall time, its CPU cost at the stretch the
 * loops had (their wall over their CPU): a difference of wall times is
 * mostly the waits for a CPU that fell in one loop and not the other (on a
 * loaded machine, from -3.9 to +25 ms a round), and its mean came out at
 * 0 or below in one start-up in six there.
 */
static const char cal_loop[] = "for ((__tsa_i = 0; __tsa_i < 200; __tsa_i++)); do "
			       "__tsa_v=$((${__tsa_v:-0} + __tsa_i)); done";

static void cal_base(void)
{
	struct cal_round bare[CAL_ROUNDS], trap[CAL_ROUNDS];
	uint64_t bare_c[CAL_ROUNDS];
	uint64_t events = 0, all_w = 0, all_c = 0;

	for (int round = 0; round < CAL_ROUNDS; round++) {
		uint64_t w0, c0, s0;

		w0 = mono_ns();
		c0 = cpu_ns();
		eval(cal_loop);
		bare[round].w = mono_ns() - w0;
		bare[round].c = cpu_ns() - c0;
		bare_c[round] = bare[round].c;
		all_w += bare[round].w;
		all_c += bare[round].c;

		eval("trap '" TRAP_STRING "' DEBUG");
		/* The full recording path runs. */
		calibrating = 1;
		enabled = 1;
		calib_events = 0;
		s0 = span_sum;
		w0 = mono_ns();
		c0 = cpu_ns();
		eval(cal_loop);
		all_w += mono_ns() - w0;
		all_c += cpu_ns() - c0;
		/* What the runs timed is charged as timed: the estimate is the rest. */
		trap[round].w = mono_ns() - w0 - (span_sum - s0);
		trap[round].c = cpu_ns() - c0 - (span_sum - s0);
		eval("trap - DEBUG");
		calibrating = 0;
		enabled = 0;
		events = calib_events - 1; /* the trap run before `trap - DEBUG` */
	}
	eval("unset __tsa_i __tsa_v");
	qsort(bare_c, CAL_ROUNDS, sizeof(bare_c[0]), cmp_u64);
	cal_bare = (uint32_t)(bare_c[0] < UINT32_MAX ? bare_c[0] : UINT32_MAX);
	cal[TSA_COST_BASE] = cal_mean(trap, bare, CAL_ROUNDS, events, 0);
	if (all_c && all_w > all_c)
		cal[TSA_COST_BASE].wall_ns =
		    (uint32_t)((uint64_t)cal[TSA_COST_BASE].cpu_ns * all_w / all_c);
	else
		cal[TSA_COST_BASE].wall_ns = cal[TSA_COST_BASE].cpu_ns;
}

/* Where the builtin reads the clock within a trap run: the median over single runs. */
static void cal_split(void)
{
	uint64_t frac[CAL_CALLS];
	int n = 0;

	calibrating = 1;
	enabled = 1;
	for (int i = 0; i < CAL_CALLS; i++) {
		uint64_t w0 = mono_ns(), w1, s0 = span_sum, pre, all;

		debug_t = 0;
		span_last_part[0] = 0;
		run_debug_trap();
		w1 = mono_ns();
		if (debug_t <= w0 || w1 <= debug_t)
			continue;
		/* Of what is estimated: the timed parts are charged where they fell. */
		pre = debug_t - w0;
		all = w1 - w0;
		if (span_head) {
			if (pre <= span_last_part[0] ||
			    all <= pre + (span_sum - s0) - span_last_part[0])
				continue;
			pre -= span_last_part[0];
			all -= span_sum - s0;
		}
		frac[n++] = pre * 1000 / all;
	}
	calibrating = 0;
	enabled = 0;
	qsort(frac, (size_t)n, sizeof(frac[0]), cmp_u64);
	cal_pre = n ? (uint32_t)frac[n / 2] : 500;
}

/* Tail state k: 0 none, 1 the terminal given back, 2 that and a job table (when faked). */
static void tail_state(int k, pid_t pgrp, int fake_jobs)
{
	static JOB *empty_table[8];

	pipeline_pgrp = k ? pgrp : 0;
	if (fake_jobs) {
		jobs = k == 2 ? empty_table : NULL;
		js.j_jobslots = k == 2 ? 8 : 0;
	}
}

/* The tail states, by run_debug_trap() in a loop: none, terminal, terminal + jobs. */
static void cal_tails(void)
{
	JOB **jobs0 = jobs;
	int slots0 = js.j_jobslots, tty0 = shell_tty;
	pid_t tpgrp0 = terminal_pgrp;
	pid_t pgrp = shell_pgrp > 0 ? shell_pgrp : getpgrp();
	/* A job table bash made already stays: its walk is then in every state. */
	int fake_jobs = !jobs0 && !slots0;
	struct cal_round st[3][CAL_TAIL_ROUNDS];
	int tail[3] = {0, 0, 0};
	uint64_t timed[3][CAL_TAIL_ROUNDS], tty[CAL_TAIL_ROUNDS];

	if (shell_tty >= 0 && isatty(shell_tty) && tcgetpgrp(shell_tty) != pgrp)
		shell_tty = sock_fd;
	eval("trap '" TRAP_STRING "' DEBUG");
	/* The calls of each part of the tail (span_call()), counted in each state. */
	for (int k = 0; k < 3 && span_head; k++) {
		int after[CAL_CALLS / 4];
		unsigned long tty0 = span_tty_calls;

		tail_state(k, pgrp, fake_jobs);
		calibrating = 1;
		enabled = 1;
		span_counting = 1;
		for (int i = 0; i < CAL_CALLS / 4; i++) {
			span_calls_debug = span_calls;
			run_debug_trap();
			after[i] = (int)(span_calls - span_calls_debug);
		}
		span_counting = 0;
		calibrating = 0;
		enabled = 0;
		tail[k] = steady(after, CAL_CALLS / 4);
		/* The terminal's part is recognised by SIGTTOU: without it, it is estimated. */
		if (k == 1 && span_tty_calls == tty0)
			tail[k] = 0;
	}
	span_tty = tail[0] == span_tail && tail[1] > tail[0] ? tail[1] - tail[0] : 0;
	span_jobs = fake_jobs && span_tty && tail[2] > tail[1] ? tail[2] - tail[1] : 0;
	for (int round = 0; round < CAL_TAIL_ROUNDS; round++) {
		for (int k = 0; k < 3; k++) {
			uint64_t w0, c0, s0, x0;

			tail_state(k, pgrp, fake_jobs);
			calibrating = 1;
			enabled = 1;
			/*
			 * A round's records fill about one datagram (16 KiB): its
			 * send would fall in the same state's loop round after
			 * round, and count as that state's cost.
			 */
			flush();
			s0 = span_sum;
			x0 = span_stall_sum;
			w0 = mono_ns();
			c0 = cpu_ns();
			for (int i = 0; i < CAL_CALLS; i++)
				run_debug_trap();
			st[k][round].w = mono_ns() - w0 - (span_sum - s0);
			st[k][round].c = cpu_ns() - c0 - (span_sum - s0);
			/* The parts' own time: a stall is no part of a tail. */
			timed[k][round] = (span_sum - s0 - (span_stall_sum - x0)) / CAL_CALLS;
			calibrating = 0;
			enabled = 0;
		}
	}
	pipeline_pgrp = 0;
	jobs = jobs0;
	js.j_jobslots = slots0;
	shell_tty = tty0;
	terminal_pgrp = tpgrp0;
	cal_split();
	eval("trap - DEBUG");
	cal[TSA_COST_TTY] = cal_mean(st[1], st[0], CAL_TAIL_ROUNDS, CAL_CALLS, 1);
	/* The terminal's part of a timed tail: the median over rounds of the difference. */
	for (int round = 0; round < CAL_TAIL_ROUNDS; round++)
		tty[round] = sub_or_0(timed[1][round], timed[0][round]);
	qsort(tty, CAL_TAIL_ROUNDS, sizeof(tty[0]), cmp_u64);
	span_tty_med = span_tty ? (uint32_t)tty[CAL_TAIL_ROUNDS / 2] : 0;
	if (fake_jobs)
		cal[TSA_COST_JOBS] = cal_mean(st[2], st[1], CAL_TAIL_ROUNDS, CAL_CALLS, 1);
}

void calibrate(void)
{
	uint64_t c0 = cpu_ns();
	pid_t pgrp0 = pipeline_pgrp;
	int made = caches_create();

	/* The base is the state of a process that has had no child yet. */
	pipeline_pgrp = 0;
	cal_spans();
	cal_base();
	cal_tails();
	pipeline_pgrp = pgrp0;
	span_reset();
	caches_destroy(made);
	text_reset();
	blen = 0;
	nrec = 0;
	nframes = 0;
	have_base = 0;
	tty_seen = tty_calls;
	last_jobs = 0;
	cal_spent_cpu = cpu_ns() - c0;
	have_cal = 1;
}

/* The start-up figures as one line of text: TSA_ENV_CAL's value, and the cache's. */
void cal_format(char *v, size_t n)
{
	snprintf(v, n, "%u %u %u %u %u %u %u %d %d %d %d %u %u %u", cal[0].wall_ns, cal[0].cpu_ns,
		 cal[1].wall_ns, cal[1].cpu_ns, cal[2].wall_ns, cal[2].cpu_ns, cal_pre, span_head,
		 span_tail, span_tty, span_jobs, span_med[0], span_med[1], span_tty_med);
}

int cal_parse(const char *v)
{
	return sscanf(v, "%u %u %u %u %u %u %u %d %d %d %d %u %u %u", &cal[0].wall_ns,
		      &cal[0].cpu_ns, &cal[1].wall_ns, &cal[1].cpu_ns, &cal[2].wall_ns,
		      &cal[2].cpu_ns, &cal_pre, &span_head, &span_tail, &span_tty, &span_jobs,
		      &span_med[0], &span_med[1], &span_tty_med) == 2 * TSA_COST_NR + 8;
}

/*
 * The start-up figures kept between runs. Measuring them takes bash
 * 70-115 ms of CPU on the project VM, more than many scripts run, and they
 * depend on the machine and on the programs, not on the script; so the
 * first run measures them and later ones read them from the user's cache,
 * $XDG_CACHE_HOME/tsarun/bash-trap-cost (else ~/.cache/...). This process
 * runs as the script's user, so the file is the user's own, read and
 * written with the user's rights and nobody else's: a script that forges
 * it skews only its own user's profiles, as it could by forging records.
 *
 * The key is what the figures depend on: this builtin and the bash running
 * it (device, inode, size and change time of each), the kernel (release,
 * build, machine), the CPU's model and how many CPUs are online. The
 * figures are also what a trap run cost at the machine's speed when they
 * were measured, and a machine's speed moves with what else it runs (on a
 * 2-core VM with tests on its other CPU a trap run took a third more CPU
 * time to twice as much, with no more waits) and with its host's or its
 * power's state (the project VM's host makes it about 1.6 or 2 times
 * slower for seconds at a time, and back): an entry measured at one speed
 * would be removed from every profile of the day at another. So a key
 * holds up to CAL_CACHE_ENTRIES entries, each for the speed it was
 * measured at (cal_speed_now()), newest first, and a run uses the one at
 * its own speed. A file for another key, not the user's own regular file,
 * or not well formed is measured again and replaced; an entry older than
 * CAL_CACHE_MAX_AGE, out of bounds or without a speed is dropped; when no
 * entry is at this run's speed, it measures again and its entry replaces
 * any at that speed, else the oldest (and every entry under `tsarun
 * --bash-recalibrate`, TSA_ENV_RECAL). A profile says which it used
 * (TSA_HF_CAL_CACHED, TSA_HF_CAL_RESPEED; the artifact's
 * trap_cost.calibration).
 */
#define CAL_CACHE_MAX_AGE (24 * 3600)
#define CAL_CACHE_NAME	  "bash-trap-cost"
#define CAL_CACHE_MAGIC	  "tsarun bash trap cost 3"
#define CAL_CACHE_ENTRIES 4
#define CAL_ENTRY_MAX	  (CAL_TEXT_MAX + 48) /* "at WHEN BARE " and the figures */
#define CAL_SPEED_ROUNDS  5
#define CAL_SPEED_SLACK	  10 /* percent either way: an entry of another speed is not used */

/* The entries of the cache's file that are still good (cal_cache_load), to be kept by cal_cache_store. */
static char cal_kept[CAL_CACHE_ENTRIES][CAL_ENTRY_MAX];
static uint32_t cal_kept_bare[CAL_CACHE_ENTRIES];
static int cal_nkept;

/*
 * The machine's speed now: the base's bare loop, its least CPU time in a
 * few rounds (about 3.5 ms of bash's CPU), to set against its least in
 * calibration (cal_bare; the least as the steadiest: over 24 start-ups in
 * a row on a quiet 2-core VM it stayed within 4% of calibration's where
 * the median moved by 20%; within 6% on a day the VM's host moved it
 * between speeds, at each speed).
 */
static uint32_t cal_speed_now(void)
{
	uint64_t c[CAL_SPEED_ROUNDS];
	int made = caches_create();

	for (int i = 0; i < CAL_SPEED_ROUNDS; i++) {
		uint64_t c0 = cpu_ns();

		eval(cal_loop);
		c[i] = cpu_ns() - c0;
	}
	eval("unset __tsa_i __tsa_v");
	caches_destroy(made);
	qsort(c, CAL_SPEED_ROUNDS, sizeof(c[0]), cmp_u64);
	return (uint32_t)(c[0] < UINT32_MAX ? c[0] : UINT32_MAX);
}

/* How far speed A is from B, in percent of B rounded up (a loop's CPU time: more is slower). */
static uint64_t cal_speed_off(uint32_t a, uint32_t b)
{
	return b ? ((a > b ? a - b : b - a) * (uint64_t)100 + b - 1) / b : UINT64_MAX;
}

static int stat_key(char *p, size_t n, const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	return snprintf(p, n, "%llx:%llu:%lld:%lld.%09ld", (unsigned long long)st.st_dev,
			(unsigned long long)st.st_ino, (long long)st.st_size,
			(long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* The first "model name" of /proc/cpuinfo (else its first line), printable. */
static void cpu_model(char *m, size_t n)
{
	char buf[4096];
	ssize_t len = 0;
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	char *p, *e;

	snprintf(m, n, "?");
	if (fd < 0)
		return;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = 0;
	p = strstr(buf, "model name");
	if (!p)
		p = buf;
	e = strchr(p, '\n');
	if (e)
		*e = 0;
	if (p != buf && strchr(p, ':'))
		p = strchr(p, ':') + 1 + (strchr(p, ':')[1] == ' ');
	snprintf(m, n, "%.*s", (int)n - 1, p);
	for (p = m; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '_';
}

int cal_key(char *key, size_t n)
{
	struct utsname u;
	char so[96], sh[96], model[128];

	if (stat_key(so, sizeof(so), getenv(TSA_ENV_SO)) < 0 ||
	    stat_key(sh, sizeof(sh), "/proc/self/exe") < 0 || uname(&u))
		return 0;
	cpu_model(model, sizeof(model));
	return snprintf(key, n, "so=%s bash=%s kernel=%s %s %s cpus=%ld cpu=%s", so, sh, u.release,
			u.version, u.machine, sysconf(_SC_NPROCESSORS_ONLN), model) < (int)n;
}

/*
 * The cache's directory ($XDG_CACHE_HOME/tsarun, an absolute path), made if
 * missing: a directory of this user's that nobody else can write (not a
 * link, say to another user's directory in a shared XDG_CACHE_HOME).
 */
static int cal_cache_dir(char *dir, size_t n, int make)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	struct stat st;
	int len, fd;

	if (x && *x == '/')
		len = snprintf(dir, n, "%s", x);
	else if (home && *home == '/')
		len = snprintf(dir, n, "%s/.cache", home);
	else
		return -1;
	if (len <= 0 || (size_t)len + sizeof("/tsarun/" CAL_CACHE_NAME ".XXXXXX") > n)
		return -1;
	if (make && mkdir(dir, 0700) && errno != EEXIST)
		return -1;
	strcat(dir, "/tsarun");
	if (make && mkdir(dir, 0700) && errno != EEXIST)
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = fstat(fd, &st);
	close(fd);
	return len || st.st_uid != geteuid() || (st.st_mode & 022) ? -1 : 0;
}

static int cal_bounded(void)
{
	/* A trap run costs microseconds; anything near a millisecond is not a measurement. */
	for (int k = 0; k < TSA_COST_NR; k++)
		if (cal[k].cpu_ns > 1000000 || cal[k].wall_ns > 1000000)
			return 0;
	/* Timed parts need the sigprocmask() hook in this process too (start()). */
	if (span_head && !real_sigprocmask_hooked())
		return 0;
	return cal[0].cpu_ns > 0 && cal_pre <= 1000 && span_head >= 0 && span_tail >= 0 &&
	       span_tty >= 0 && span_jobs >= 0 && span_med[0] <= 1000000 &&
	       span_med[1] <= 1000000 && span_tty_med <= 1000000;
}

static void cal_clear(void)
{
	memset(cal, 0, sizeof(cal));
	cal_pre = 0;
	span_head = span_tail = span_tty = span_jobs = 0;
	span_med[0] = span_med[1] = span_tty_med = 0;
}

/*
 * One entry: "at WHEN BARE FIGURES". Its figures into cal[] and the spans
 * if it is good (fresh, with a speed, in bounds): BARE, else 0.
 */
static uint32_t cal_entry_parse(const char *e)
{
	long long when, now = (long long)time(NULL);
	unsigned int bare;
	int at = 0;

	if (sscanf(e, "at %lld %u %n", &when, &bare, &at) != 2 || !at || !bare || when > now + 60 ||
	    when < now - CAL_CACHE_MAX_AGE || !cal_parse(e + at) || !cal_bounded()) {
		cal_clear();
		return 0;
	}
	return bare;
}

/*
 * The entry for this key at this run's speed: 1 with its figures in
 * cal[]. The good entries of the file are kept in cal_kept for the store.
 */
int cal_cache_load(const char *key)
{
	char dir[PATH_MAX], buf[CAL_KEY_MAX + CAL_CACHE_ENTRIES * CAL_ENTRY_MAX + 64], *line, *p;
	struct stat st;
	uint32_t now, bare;
	uint64_t best_off = UINT64_MAX;
	ssize_t len;
	int fd, n, best = -1;

	cal_nkept = 0;
	if (cal_cache_dir(dir, sizeof(dir), 0))
		return 0;
	strcat(dir, "/" CAL_CACHE_NAME);
	fd = open(dir, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_size >= (off_t)sizeof(buf)) {
		close(fd);
		return 0;
	}
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = 0;
	/* The magic, the key, then entries, each line ended by a newline. */
	for (p = buf, n = 0; (line = p) && (p = strchr(p, '\n')); n++) {
		*p++ = 0;
		if (n == 0 && strcmp(line, CAL_CACHE_MAGIC))
			return 0;
		if (n == 1 && (strncmp(line, "key ", 4) || strcmp(line + 4, key)))
			return 0;
		if (n < 2 || cal_nkept == CAL_CACHE_ENTRIES || strlen(line) >= CAL_ENTRY_MAX)
			continue;
		bare = cal_entry_parse(line);
		if (!bare)
			continue;
		strcpy(cal_kept[cal_nkept], line);
		cal_kept_bare[cal_nkept++] = bare;
	}
	cal_clear();
	if (!cal_nkept)
		return 0;
	now = cal_speed_now();
	for (int i = 0; i < cal_nkept; i++)
		if (cal_speed_off(now, cal_kept_bare[i]) < best_off) {
			best_off = cal_speed_off(now, cal_kept_bare[i]);
			best = i;
		}
	if (best_off > CAL_SPEED_SLACK) {
		cal_respeed = 1;
		return 0;
	}
	cal_bare = cal_entry_parse(cal_kept[best]);
	cal_cached = 1;
	have_cal = 1;
	return 1;
}

/*
 * This run's entry first, then the kept ones of other speeds, up to
 * CAL_CACHE_ENTRIES: written new and renamed over the old, so that a
 * reader sees one whole file or none.
 */
void cal_cache_store(const char *key)
{
	char dir[PATH_MAX], tmp[PATH_MAX + sizeof("/" CAL_CACHE_NAME ".XXXXXX")], v[CAL_TEXT_MAX];
	FILE *f;
	int fd, ok, n = 1;

	if (!cal_bare || !cal_bounded() || cal_cache_dir(dir, sizeof(dir), 1))
		return;
	snprintf(tmp, sizeof(tmp), "%s/%s.XXXXXX", dir, CAL_CACHE_NAME);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return;
	}
	cal_format(v, sizeof(v));
	fprintf(f, "%s\nkey %s\nat %lld %u %s\n", CAL_CACHE_MAGIC, key, (long long)time(NULL),
		cal_bare, v);
	for (int i = 0; i < cal_nkept && n < CAL_CACHE_ENTRIES; i++)
		if (cal_speed_off(cal_kept_bare[i], cal_bare) > CAL_SPEED_SLACK) {
			fprintf(f, "%s\n", cal_kept[i]);
			n++;
		}
	ok = !ferror(f);
	ok &= fclose(f) == 0;
	strcat(dir, "/" CAL_CACHE_NAME);
	if (!ok || rename(tmp, dir))
		unlink(tmp);
}
