// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "unit.h"

#include "artifact.h"
#include "artifact_fields.h"
#include "fixtures.h"
#include "account.h"
#include "gate.h"
#include "metrics.h"
#include "run.h"
#include "stats.h"
#include "status.h"
#include "timeline.h"

static const struct artifact_read_opts baseline = {.what = "baseline"};

/* A session of three runs: a warmup, two measured; the last one detailed. */
static void make_session(struct session *s, struct run *r)
{
	static char *argv[] = {"./bench", "--fast", NULL};
	struct tsa_thread t[2];

	memset(s, 0, sizeof(*s));
	memset(r, 0, 3 * sizeof(*r));
	s->tool_version = "9.9.9";
	snprintf(s->host.kernel, sizeof(s->host.kernel), "6.1.0-test");
	snprintf(s->host.arch, sizeof(s->host.arch), "x86_64");
	s->host.cpus = 4;
	snprintf(s->host.cpu_model, sizeof(s->host.cpu_model), "Test CPU \"quoted\"");
	snprintf(s->host.virtualized, sizeof(s->host.virtualized), "kvm");
	snprintf(s->host.container, sizeof(s->host.container), "none");
	snprintf(s->host.pmu_reason, sizeof(s->host.pmu_reason), "no hardware PMU");
	snprintf(s->host.ci, sizeof(s->host.ci), "none");
	s->host.task_delayacct = 1;
	s->argv = argv;
	s->argc = 2;
	s->mode = "run";
	s->runs = r;
	s->nruns = 3;
	for (int i = 0; i < 3; i++) {
		r[i].index = i;
		r[i].warmup = i == 0;
		r[i].wall_ns = 500 * MS + (uint64_t)i;
		r[i].ru.user_ns = 600 * MS + (uint64_t)i * MS;
		r[i].ru.sys_ns = 55 * MS;
		r[i].ru.max_rss_kb = 12345 + i;
		r[i].start_mono_ns = T0;
		r[i].root_pid = 100;
		run__source(&r[i], "ebpf", true, NULL);
		run__source(&r[i], "perf", false, "no hardware PMU");
		status_from_wait(&r[i], 0);
		t[0] = fx_thread(100, 100, 99, "bench", 0, 500, 300 + i, 20, 170, 10);
		t[0].flags |= TSA_F_GROUP_DEAD | TSA_F_ROOT;
		t[1] = fx_thread(101, 100, 99, "worker", 1, 400, 350, 40, 9, 0);
		assert_int_equal(fold_run(&r[i], t, 2), 0);
		if (i < 2)
			run__free_detail(&r[i]);
	}
	r[2].have_instructions = true;
	r[2].instructions = 123456789012ull;
	/* taskstats on the detailed run: delays on one thread, its quality figures. */
	r[2].threads[1].have_delays = true;
	r[2].threads[1].delays_final = true;
	r[2].threads[1].delays_version = 16;
	r[2].threads[1].delays[DELAY_CPU] = (struct delay_counter){.available = true,
								   .have_extremes = true,
								   .count = 3,
								   .total_ns = 3000,
								   .max_ns = 2000,
								   .min_ns = 100};
	r[2].threads[1].delays[DELAY_BLOCK_IO] =
	    (struct delay_counter){.available = true, .count = 1, .total_ns = 777};
	r[2].quality.ts = (struct taskstats_quality){
	    .active = true, .attached = 1, .identity_mismatches = 2, .threads_without = 1};
	r[2].quality.taskstats_drops = 5;
	r[2].quality.delayacct = (struct delayacct_quality){
	    .known = true, .before = 0, .during = -1, .reason = "off for the run"};
}

/* The thread of r that is t, by identity (tid and start), or NULL. */
static const struct thread_acct *same_thread(const struct run *r, const struct thread_acct *t)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == t->tid && r->threads[i].start_ns == t->start_ns)
			return &r->threads[i];
	return NULL;
}

/* Each figure of the field tables that the reader reads: the same in a and b. */
static void assert_rows_same(const char *file, enum artifact_row kind, const void *a, const void *b,
			     uint32_t ua, uint32_t ub)
{
	for (size_t i = 0; i < artifact_ncount_fields; i++) {
		const struct artifact_count_field *f = &artifact_count_fields[i];
		size_t off = artifact_field_off(f, kind);
		uint64_t va, vb;

		if (off == ARTIFACT_FIELD_NONE || !f->read)
			continue;
		memcpy(&va, (const char *)a + off, sizeof(va));
		memcpy(&vb, (const char *)b + off, sizeof(vb));
		if (va != vb)
			fail_msg("%s: %s %llu read back as %llu", file, f->name,
				 (unsigned long long)va, (unsigned long long)vb);
		if ((ua & f->unmeasured) != (ub & f->unmeasured))
			fail_msg("%s: %s null on one side only", file, f->name);
	}
}

/*
 * Each field of the tables the reader reads, in the document as written
 * (from) and as written again from what was read (to): the same number,
 * or null in both. Rows are matched by tid and start_ns.
 */
static size_t assert_json_same(const char *file, const cJSON *from, const cJSON *to)
{
	const cJSON *rf, *rt;
	size_t compared = 0;

	for (rf = cJSON_GetObjectItem(from, "runs")->child,
	    rt = cJSON_GetObjectItem(to, "runs")->child;
	     rf && rt; rf = rf->next, rt = rt->next) {
		const cJSON *tf;

		for (int k = 0; k < 2; k++) {
			enum artifact_row kind = k ? ARTIFACT_ROW_THREAD : ARTIFACT_ROW_TOTALS;
			const cJSON *rows_f = k ? cJSON_GetObjectItem(rf, "threads") : NULL;

			for (tf = k ? (rows_f ? rows_f->child : NULL)
				    : cJSON_GetObjectItem(rf, "totals");
			     tf; tf = k ? tf->next : NULL) {
				const cJSON *tt = NULL;

				if (k) {
					cJSON_ArrayForEach(tt, cJSON_GetObjectItem(rt, "threads"))
					{
						if (cJSON_Compare(cJSON_GetObjectItem(tt, "tid"),
								  cJSON_GetObjectItem(tf, "tid"),
								  1) &&
						    cJSON_Compare(
							cJSON_GetObjectItem(tt, "start_ns"),
							cJSON_GetObjectItem(tf, "start_ns"), 1))
							break;
					}
				} else {
					tt = cJSON_GetObjectItem(rt, "totals");
				}
				assert_non_null(tt);
				for (size_t i = 0; i < artifact_ncount_fields; i++) {
					const struct artifact_count_field *f =
					    &artifact_count_fields[i];
					const cJSON *a = cJSON_GetObjectItem(tf, f->name),
						    *b = cJSON_GetObjectItem(tt, f->name);

					if (artifact_field_off(f, kind) == ARTIFACT_FIELD_NONE ||
					    !f->read)
						continue;
					if (!a || !b || !cJSON_Compare(a, b, 1))
						fail_msg("%s: %s %s is %s written again", file,
							 k ? "a thread's" : "the totals'", f->name,
							 b ? cJSON_PrintUnformatted(b) : "missing");
					compared++;
				}
			}
		}
	}
	return compared;
}

/*
 * Every sample and golden artifact, read, written and read again, gives
 * back each figure of the field tables (artifact_fields.h) the reader
 * reads, and null where it was null: the writer and the reader use one
 * description of the format.
 */
static void test_tables_round_trip(void **state)
{
	static const char *const files[] = {
	    "examples/samples/run.json",    "examples/samples/base.json",
	    "examples/samples/bash.json",   "examples/samples/gate.json",
	    "examples/samples/stacks.json", "tests/golden/artifact-basic.json",
	};
	static const struct artifact_read_opts detail = {.what = "artifact", .detail = true};
	size_t threads = 0, fields = 0;

	(void)state;
	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		struct session a, b;
		char err[512], *text, *again;
		size_t len = 0;

		text = fx_read_file(files[k], &len);
		assert_non_null(text);
		if (artifact_parse(text, len, files[k], &detail, &a, err, sizeof(err)))
			fail_msg("%s: %s", files[k], err);
		again = artifact_render(&a);
		assert_non_null(again);
		{
			cJSON *from = cJSON_Parse(text), *to = cJSON_Parse(again);

			assert_true(from && to);
			fields += assert_json_same(files[k], from, to);
			cJSON_Delete(from);
			cJSON_Delete(to);
		}
		if (artifact_parse(again, strlen(again), files[k], &detail, &b, err, sizeof(err)))
			fail_msg("%s written again: %s", files[k], err);
		assert_int_equal(a.nruns, b.nruns);
		for (size_t r = 0; r < a.nruns; r++) {
			const struct run *ra = &a.runs[r], *rb = &b.runs[r];

			assert_rows_same(files[k], ARTIFACT_ROW_TOTALS, &ra->totals, &rb->totals,
					 ra->totals.unmeasured, rb->totals.unmeasured);
			for (size_t s = 0; s < TSA_ST_NR; s++)
				assert_true(ra->totals.state_ns[s] == rb->totals.state_ns[s]);
			assert_int_equal(ra->nthreads, rb->nthreads);
			for (size_t i = 0; i < ra->nthreads; i++) {
				const struct thread_acct *ta = &ra->threads[i],
							 *tb = same_thread(rb, ta);

				assert_non_null(tb);
				assert_rows_same(files[k], ARTIFACT_ROW_THREAD, ta, tb,
						 ta->unmeasured, tb->unmeasured);
				assert_int_equal(ta->unmeasured, tb->unmeasured);
				for (size_t s = 0; s < TSA_ST_NR; s++)
					assert_true(ta->state_ns[s] == tb->state_ns[s]);
				threads++;
			}
		}
		session__free(&a);
		session__free(&b);
		free(again);
		free(text);
	}
	print_message("%zu thread rows read, written and read again; %zu figures compared\n",
		      threads, fields);
	assert_true(threads >= 20);
}

static void test_round_trip(void **state)
{
	struct session s, back;
	struct run r[3];
	char *text, err[512];
	double v, w;

	make_session(&s, r);
	text = artifact_render(&s);
	assert_non_null(text);
	assert_int_equal(
	    artifact_parse(text, strlen(text), "a.json", &baseline, &back, err, sizeof(err)), 0);
	assert_string_equal(back.tool_version, "9.9.9");
	assert_string_equal(back.host.cpu_model, "Test CPU \"quoted\"");
	assert_string_equal(back.host.kernel, "6.1.0-test");
	assert_string_equal(back.host.virtualized, "kvm");
	assert_int_equal(back.host.cpus, 4);
	assert_int_equal(back.host.task_delayacct, 1);
	assert_int_equal(back.argc, 2);
	assert_string_equal(back.argv[1], "--fast");
	assert_null(back.argv[2]);
	assert_int_equal(back.nruns, 3);
	assert_true(back.runs[0].warmup && !back.runs[1].warmup);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(back.runs[i].status, RUN_EXITED);
		assert_true(metric_run_counts(&back.runs[i]) == metric_run_counts(&r[i]));
		for (int m = 0; m < METRIC_NR; m++) {
			int a = metric_value(&r[i], m, &v, NULL, 0);
			int b = metric_value(&back.runs[i], m, &w, NULL, 0);

			assert_int_equal(a, b);
			if (!a && v != w)
				fail_msg("run %d metric %s: %f != %f", i, metric_def(m)->name, v,
					 w);
		}
	}
	assert_true(back.runs[2].have_instructions);
	assert_true(back.runs[2].instructions == 123456789012ull);
	assert_false(back.runs[1].have_instructions);
	/* Rows are not read back: a baseline needs the figures only. */
	assert_int_equal(back.runs[2].nthreads, 0);
	session__free(&back);
	free(text);
	run__free_detail(&r[2]);
}

/* Replace the first occurrence of `from` in text by `to` (into a new buffer). */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	char *out;

	assert_non_null(at);
	out = malloc(strlen(text) + strlen(to) + 1);
	memcpy(out, text, (size_t)(at - text));
	strcpy(out + (at - text), to);
	strcat(out, at + strlen(from));
	return out;
}

static void expect_bad(const char *text, size_t len, const char *says)
{
	struct session s;
	char err[512];

	err[0] = '\0';
	if (artifact_parse(text, len, "base.json", &baseline, &s, err, sizeof(err)) == 0)
		fail_msg("accepted a bad artifact that should say '%s'", says);
	if (!strstr(err, says) || !strstr(err, "baseline 'base.json'"))
		fail_msg("message '%s' should name the file and say '%s'", err, says);
}

static void test_bad_input(void **state)
{
	static const char mon[] = "{\"schema\":\"tsarun-monitor/1\",\"type\":\"interval\"}\n{}\n";
	struct session s;
	struct run r[3];
	char *text, *bad;
	size_t len;

	make_session(&s, r);
	text = artifact_render(&s);
	len = strlen(text);

	expect_bad("", 0, "empty");
	expect_bad(" \n\t", 3, "empty");
	expect_bad(text, len / 2, "truncated");
	expect_bad("hello", 5, "not valid JSON: line 1, column 1");
	expect_bad("{\n \"schema\": x}", 15, "not valid JSON: line 2");
	expect_bad("[1, 2]", 6, "not an object");
	expect_bad("{}", 2, "no \"schema\" key");
	expect_bad("{\"schema\": \"tsarun-doctor/1\"}", 29,
		   "schema 'tsarun-doctor/1' is not supported: that is tsarun doctor --json's "
		   "report, not a run's artifact");
	/* tsarun -p --output json: JSON Lines, whose first line parses as an object. */
	expect_bad(mon, strlen(mon),
		   "schema 'tsarun-monitor/1' is not supported: that is tsarun -p's JSON Lines, "
		   "not a run's artifact (record one with tsarun --json FILE -- COMMAND)");

	bad = edit(text, "tsarun/1", "tsarun/2");
	expect_bad(bad, strlen(bad),
		   "schema 'tsarun/2' is not supported: this tsarun reads tsarun/1 (read it with "
		   "the tsarun that wrote it, or run the command again with this one)");
	free(bad);
	bad = edit(text, "\"runs\":", "\"nurs\":");
	expect_bad(bad, strlen(bad), "has no runs");
	free(bad);
	bad = edit(text, "\"wall_ns\":500000000,", "");
	expect_bad(bad, strlen(bad), "run 0: 'wall_ns' is missing");
	free(bad);
	bad = edit(text, "\"wall_ns\":500000000", "\"wall_ns\":-5");
	expect_bad(bad, strlen(bad), "run 0: 'wall_ns' is not a non-negative integer");
	free(bad);
	bad = edit(text, "\"user_ns\":601000000", "\"user_ns\":\"fast\"");
	expect_bad(bad, strlen(bad), "run 1: 'user_ns' is not a number");
	free(bad);
	bad = edit(text, "\"status\":\"exited\"", "\"status\":\"bored\"");
	expect_bad(bad, strlen(bad), "run 0: 'status' 'bored' is not");
	free(bad);
	bad = edit(text, "\"cpus\":4", "\"cpus\":0");
	expect_bad(bad, strlen(bad), "'cpus' is not an integer");
	free(bad);
	bad = edit(text, "\"totals\":", "\"t0tals\":");
	expect_bad(bad, strlen(bad), "run 0: 'totals' is missing");
	free(bad);
	free(text);
	run__free_detail(&r[2]);
}

/* With detail: the rows and quality figures the table prints; and the comparison. */
static void test_detail_and_comparison(void **state)
{
	struct session s, back;
	struct run r[3];
	struct gate_spec g;
	struct gate_side b, n;
	struct comparison c = {.baseline_kind = "artifact", .baseline_name = "b.json"}, cb;
	bool have = false;
	struct artifact_read_opts ro = {
	    .what = "run", .detail = true, .cmp = &cb, .have_cmp = &have};
	char *text, err[512];

	make_session(&s, r);
	/*
	 * Fractions the table prints with %.3f read back as they were: stored
	 * with six digits, this residual came back as 11.8315 and was reported
	 * as 11.832% (11.831% when the run printed it).
	 */
	r[2].quality.residual_percent = 11.831487804572792;
	r[2].quality.runnable.total = 1.0 / 3;
	gate_spec_defaults(&g);
	gate_spec_finish(&g, false);
	assert_int_equal(gate_side_init(&b, r, 3, &s.host), 0);
	assert_int_equal(gate_side_init(&n, r, 3, &s.host), 0);
	assert_int_equal(gate_compare(&g, &b, &n, false, &c), 0);
	s.cmp = &c;
	text = artifact_render(&s);
	assert_int_equal(artifact_parse(text, strlen(text), "a.json", &ro, &back, err, sizeof(err)),
			 0);
	assert_true(have);
	assert_false(back.runs[0].detailed);
	assert_true(back.runs[2].detailed);
	assert_int_equal(back.runs[2].nthreads, r[2].nthreads);
	assert_int_equal(back.runs[2].nprocs, r[2].nprocs);
	for (size_t i = 0; i < r[2].nthreads; i++) {
		const struct thread_acct *x = &r[2].threads[i], *y = &back.runs[2].threads[i];

		assert_int_equal(x->tid, y->tid);
		assert_string_equal(x->comm, y->comm);
		assert_memory_equal(x->state_ns, y->state_ns, sizeof(x->state_ns));
		assert_true(x->start_ns == y->start_ns && x->end_ns == y->end_ns);
		assert_true(x->wakeup_lat_max == y->wakeup_lat_max);
		assert_true(x->wakeup_lat_sum / x->wakeup_lat_count ==
			    y->wakeup_lat_sum / y->wakeup_lat_count);
	}
	assert_true(back.runs[2].quality.runnable.available);
	assert_true(back.runs[2].quality.residual_percent == r[2].quality.residual_percent);
	assert_true(back.runs[2].quality.runnable.total == r[2].quality.runnable.total);
	assert_true(back.runs[2].quality.runnable.worst == r[2].quality.runnable.worst);
	/* taskstats delays and quality come back as the table prints them. */
	{
		const struct thread_acct *x = &r[2].threads[1], *y = &back.runs[2].threads[1];
		const struct run_quality *q = &back.runs[2].quality;

		assert_true(y->have_delays && y->delays_final);
		assert_int_equal(y->delays_version, 16);
		assert_memory_equal(&x->delays[DELAY_CPU], &y->delays[DELAY_CPU],
				    sizeof(x->delays[0]));
		assert_true(y->delays[DELAY_BLOCK_IO].available);
		assert_false(y->delays[DELAY_BLOCK_IO].have_extremes);
		assert_int_equal(y->delays[DELAY_BLOCK_IO].total_ns, 777);
		assert_false(y->delays[DELAY_SWAP_IN].available);
		assert_false(back.runs[2].threads[0].have_delays);
		assert_true(q->ts.active);
		assert_int_equal(q->ts.identity_mismatches, 2);
		assert_int_equal(q->ts.threads_without, 1);
		assert_int_equal(q->taskstats_drops, 5);
		assert_true(q->delayacct.known);
		assert_int_equal(q->delayacct.before, 0);
		assert_int_equal(q->delayacct.during, -1);
		assert_string_equal(q->delayacct.reason, "off for the run");
	}
	assert_int_equal(cb.nmetrics, c.nmetrics);
	assert_int_equal(cb.metrics[0].metric, METRIC_CPU);
	assert_int_equal(cb.metrics[0].verdict, c.metrics[0].verdict);
	/* Two runs a side: too few for an interval, which is null and reads back as NAN. */
	assert_true(isnan(c.metrics[0].ci_low) && isnan(cb.metrics[0].ci_low));
	assert_true(fabs(cb.metrics[0].ratio - c.metrics[0].ratio) < 1e-6);
	assert_string_equal(cb.metrics[0].note, c.metrics[0].note);
	assert_int_equal(cb.metrics[0].nb, 2);
	assert_true(cb.metrics[0].base_values[1] == c.metrics[0].base_values[1]);
	assert_string_equal(cb.baseline_name, "b.json");
	assert_int_equal(cb.nnotes, c.nnotes);
	comparison__free(&cb);
	comparison__free(&c);
	gate_side_free(&b);
	gate_side_free(&n);
	session__free(&back);
	free(text);
	run__free_detail(&r[2]);
}

/*
 * An interval with an unbounded top (replicates that drew a zero baseline
 * median, the baseline's own median not 0) is written with a null bound and
 * reads back as +inf, so a report of the artifact says what the run said.
 */
static void test_unbounded_interval(void **state)
{
	static const double bv[] = {0, 0, 1, 2, 3}, nv[] = {20, 9, 18, 16, 10};
	struct session s, back;
	struct run r[3];
	struct comparison c = {.baseline_kind = "artifact", .baseline_name = "b.json"}, cb;
	bool have = false;
	struct artifact_read_opts ro = {.what = "run", .cmp = &cb, .have_cmp = &have};
	struct gate_metric *gm = &c.metrics[0];
	char *text, err[512];

	make_session(&s, r);
	c.seed = STATS_SEED;
	c.resamples = STATS_RESAMPLES;
	c.confidence = STATS_CONFIDENCE;
	c.nmetrics = 1;
	*gm = (struct gate_metric){.metric = METRIC_INVOLUNTARY,
				   .threshold = 0.1,
				   .nb = 5,
				   .nn = 5,
				   .base_median = 1,
				   .new_median = 16,
				   .ratio = 16,
				   .ci_low = 3,
				   .ci_high = INFINITY,
				   .verdict = GATE_REGRESSION,
				   .outcome = GATE_FAIL};
	gm->base_values = malloc(sizeof(bv));
	gm->new_values = malloc(sizeof(nv));
	memcpy(gm->base_values, bv, sizeof(bv));
	memcpy(gm->new_values, nv, sizeof(nv));
	s.cmp = &c;
	text = artifact_render(&s);
	assert_non_null(strstr(text, "\"ci_high\":null"));
	assert_int_equal(artifact_parse(text, strlen(text), "a.json", &ro, &back, err, sizeof(err)),
			 0);
	assert_true(have);
	assert_true(cb.metrics[0].ci_low == 3);
	assert_true(isinf(cb.metrics[0].ci_high) && cb.metrics[0].ci_high > 0);
	assert_true(cb.metrics[0].ratio == 16);
	comparison__free(&cb);
	comparison__free(&c);
	session__free(&back);
	free(text);
	run__free_detail(&r[2]);
}

/* --timeline: written as compact rows, read back the same, validated as read. */
static void test_timeline_round_trip(void **state)
{
	struct session s, back;
	struct run r[3];
	struct artifact_read_opts ro = {.what = "run", .detail = true};
	struct timeline_builder *b = timeline_builder__new(2, 8192);
	const struct run_timeline *x, *y;
	char *text, *bad, err[512];
	struct tsa_tl_event e = {.cpu = (uint32_t)-1};
	struct tsa_tl_name n = {.h = {.kind = TSA_TL_NAME}};
	static const struct {
		uint32_t kind, cpu;
		double from, to;
	} iv[] = {{TSA_TL_ONCPU, 2, 1, 3},
		  {TSA_TL_SLEEP, (uint32_t)-1, 3, 400},
		  {TSA_TL_ONCPU, 1, 400, 401}};

	make_session(&s, r);
	for (size_t i = 0; i < 3; i++) {
		e.task_start_ns = r[2].threads[1].task_start_ns;
		e.tid = r[2].threads[1].tid;
		e.kind = iv[i].kind;
		e.cpu = iv[i].cpu;
		e.start_ns = T0 + (uint64_t)(iv[i].from * MS);
		e.end_ns = T0 + (uint64_t)(iv[i].to * MS);
		assert_int_equal(timeline_builder__add(b, &e, sizeof(e)),
				 0); /* the third: beyond */
	}
	n.h.task_start_ns = e.task_start_ns;
	n.h.tid = e.tid;
	n.h.start_ns = T0 + MS;
	snprintf(n.comm, sizeof(n.comm), "wo\"rker");
	assert_int_equal(timeline_builder__add(b, &n, sizeof(n)), 0);
	r[2].threads[1].tl_lost = 7;
	r[2].threads[1].tl_lost_ns = 70;
	assert_int_equal(timeline_attach(&r[2], b, T0, 11, 7, NULL), 0);
	text = artifact_render(&s);
	assert_int_equal(artifact_parse(text, strlen(text), "a.json", &ro, &back, err, sizeof(err)),
			 0);
	x = r[2].timeline;
	y = back.runs[2].timeline;
	assert_non_null(y);
	assert_int_equal(y->n, 2);
	assert_memory_equal(x->iv, y->iv, 2 * sizeof(*x->iv));
	assert_int_equal(y->nnames, 1);
	assert_string_equal(y->names[0].comm, "wo\"rker");
	assert_int_equal(y->names[0].at_ns, MS);
	assert_int_equal(y->lost_events, 7);
	assert_int_equal(y->lost_ns, 70);
	assert_int_equal(y->beyond_bound, 1);
	assert_int_equal(y->truncated_at_ns, 401 * MS);
	assert_int_equal(y->max_intervals, 2);
	assert_int_equal(y->sent, 11);
	assert_false(timeline_complete(y));
	for (size_t i = 0; i < back.runs[2].nthreads; i++) {
		const struct tl_thread *g = timeline_thread(y, &back.runs[2].threads[i]);

		assert_true(back.runs[2].threads[i].tid == 101 ? g && g->n == 2 : g && !g->n);
		if (back.runs[2].threads[i].tid == 101)
			assert_int_equal(back.runs[2].threads[i].tl_lost, 7);
	}
	session__free(&back);
	/* A row that is not one is refused, and the message says where. */
	bad = strstr(text, "[1000000,2000000,0,2]");
	assert_non_null(bad);
	memcpy(bad, "[1000000,2000000,9,2]", 21); /* no such kind */
	assert_int_not_equal(
	    artifact_parse(text, strlen(text), "a.json", &ro, &back, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "timeline: an interval is not"));
	free(text);
	timeline_builder__free(b);
	run__free_detail(&r[2]);
}

static void test_read_file_errors(void **state)
{
	struct session s;
	char err[512], dir[] = "/tmp/tsarun-read.XXXXXX", path[512];
	FILE *f;

	assert_int_equal(artifact_read("/nonexistent/base.json", &baseline, &s, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(
	    err, "cannot read baseline '/nonexistent/base.json': No such file or directory");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(artifact_read(dir, &baseline, &s, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
	snprintf(path, sizeof(path), "%s/empty.json", dir);
	f = fopen(path, "w");
	fclose(f);
	assert_int_equal(artifact_read(path, &baseline, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty"));
	unlink(path);
	rmdir(dir);
}

/*
 * Every sample and golden artifact, read with its detail and comparison and
 * written again, is the same text byte for byte as the writer wrote it
 * before it moved from cJSON to lib/jsonw (tests/golden/rewrite/, made by
 * the cJSON writer): users' scripts read these bytes.
 */
static void test_rewrite_golden(void **state)
{
	static const char *const files[] = {
	    "examples/samples/run.json",    "examples/samples/base.json",
	    "examples/samples/bash.json",   "examples/samples/gate.json",
	    "examples/samples/stacks.json", "tests/golden/artifact-basic.json",
	};
	int bad = 0;

	(void)state;
	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		struct comparison cmp;
		bool have_cmp = false;
		struct artifact_read_opts o = {
		    .what = "artifact", .detail = true, .cmp = &cmp, .have_cmp = &have_cmp};
		struct session a;
		char err[512], name[128], *text, *again;
		const char *base = strrchr(files[k], '/') + 1;
		size_t len = 0;

		memset(&cmp, 0, sizeof(cmp));
		text = fx_read_file(files[k], &len);
		assert_non_null(text);
		if (artifact_parse(text, len, files[k], &o, &a, err, sizeof(err)))
			fail_msg("%s: %s", files[k], err);
		if (have_cmp)
			a.cmp = &cmp;
		again = artifact_render(&a);
		assert_non_null(again);
		snprintf(name, sizeof(name), "rewrite/%s", base);
		bad |= golden_check(name, again);
		a.cmp = NULL;
		if (have_cmp)
			comparison__free(&cmp);
		session__free(&a);
		free(again);
		free(text);
	}
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_tables_round_trip),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_detail_and_comparison),
	    cmocka_unit_test(test_unbounded_interval),
	    cmocka_unit_test(test_read_file_errors),
	    cmocka_unit_test(test_timeline_round_trip),
	    cmocka_unit_test(test_rewrite_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
