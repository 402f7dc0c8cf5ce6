// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

#include "lib/outfile.h"

#include "artifact.h"
#include "fixtures.h"
#include "account.h"
#include "run.h"
#include "status.h"

/* A session with one folded run: two processes, three threads. */
static void make_session(struct session *s, struct run *r)
{
	static char *argv[] = {"./bench", "--fast", "quote\"d", NULL};
	struct tsa_thread t[3];

	memset(s, 0, sizeof(*s));
	memset(r, 0, sizeof(*r));
	s->tool_version = "9.9.9";
	snprintf(s->host.kernel, sizeof(s->host.kernel), "6.1.0-test");
	snprintf(s->host.arch, sizeof(s->host.arch), "x86_64");
	s->host.cpus = 4;
	snprintf(s->host.cpu_model, sizeof(s->host.cpu_model), "Test CPU");
	snprintf(s->host.virtualized, sizeof(s->host.virtualized), "kvm");
	snprintf(s->host.container, sizeof(s->host.container), "none");
	s->host.btf = true;
	s->host.task_delayacct = 0;
	snprintf(s->host.pmu_reason, sizeof(s->host.pmu_reason), "no hardware PMU");
	snprintf(s->host.ci, sizeof(s->host.ci), "none");
	s->argv = argv;
	s->argc = 3;
	s->mode = "run";
	s->runs = r;
	s->nruns = 1;

	t[0] = fx_thread(100, 100, 99, "bench", 0, 500, 300, 20, 170, 10);
	t[0].flags |= TSA_F_GROUP_DEAD | TSA_F_ROOT;
	t[1] = fx_thread(101, 100, 99, "worker", 1, 400, 350, 40, 9, 0);
	t[2] = fx_thread(200, 200, 100, "helper", 10, 50, 5, 1, 34, 0);
	t[2].flags |= TSA_F_GROUP_DEAD;
	t[2].exit_status = 11 | 0x80;
	r->start_mono_ns = T0;
	r->ru.user_ns = 600 * MS;
	r->ru.sys_ns = 55 * MS;
	r->ru.max_rss_kb = 12345;
	r->wall_ns = 500 * MS;
	r->root_pid = 100;
	run__source(r, "ebpf", true, NULL);
	run__source(r, "taskstats", true, NULL);
	status_from_wait(r, 0);
	assert_int_equal(fold_run(r, t, 3), 0);
	/* taskstats: one thread with delays (extremes known, two counters not in this record). */
	for (size_t i = 0; i < r->nthreads; i++) {
		struct thread_acct *th = &r->threads[i];

		if (th->tid != 101)
			continue;
		th->have_delays = true;
		th->delays_final = true;
		th->delays_version = 16;
		for (int d = 0; d < DELAY_NR - 2; d++)
			th->delays[d] = (struct delay_counter){.available = true,
							       .have_extremes = true,
							       .count = (uint64_t)d,
							       .total_ns = 1000ull * (uint64_t)d,
							       .max_ns = 900ull * (uint64_t)d,
							       .min_ns = d ? 100 : 0};
		/* One the kernel gave but that was impossible: null, and said so. */
		th->delays[DELAY_NR - 1].refused = true;
	}
	r->quality.ts = (struct taskstats_quality){.active = true,
						   .exit_records = 3,
						   .attached = 1,
						   .identity_mismatches = 1,
						   .unmatched_records = 1,
						   .threads_without = 2,
						   .cpu_after_exit_ns = 45000,
						   .cpu_after_exit_threads = 1,
						   .version_min = 16,
						   .version_max = 16};
	r->quality.delayacct = (struct delayacct_quality){
	    .known = true, .before = 0, .during = 1, .switched_on = true, .non_cpu_live = true};
}

static void test_golden(void **state)
{
	struct session s;
	struct run r;
	char *text;

	make_session(&s, &r);
	text = artifact_render(&s);
	assert_non_null(text);
	assert_int_equal(golden_check("artifact-basic.json", text), 0);
	free(text);
	run__free_detail(&r);
}

static void test_required_names(void **state)
{
	static const char *const names[] = {
	    "\"schema\":\"tsarun/1\"",
	    "\"runs\"",
	    "\"wall_ns\"",
	    "\"user_ns\"",
	    "\"sys_ns\"",
	    "\"max_rss_kb\"",
	    "\"threads\"",
	    "\"processes\"",
	    "\"totals\"",
	    "\"quality\"",
	    "\"residual_ns\"",
	    "\"lifetime_ns\"",
	    "\"wakeup_latency_ns\"",
	    "\"sources_active\"",
	    "\"sources_unavailable\"",
	    "\"cross_check\"",
	    "\"quote\\\"d\"",
	    "\"core_dumped\":true",
	    "\"delays\":null",
	    "\"below_threshold\":null",
	};
	struct session s;
	struct run r;
	char *text;

	make_session(&s, &r);
	text = artifact_render(&s);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strstr(text, names[i]))
			fail_msg("artifact lacks %s", names[i]);
	free(text);
	run__free_detail(&r);
}

static void test_big_integers_stay_exact(void **state)
{
	struct session s;
	struct run r;
	char *text;

	make_session(&s, &r);
	r.threads[0].task_start_ns = 18446744073709551615ull;
	text = artifact_render(&s);
	assert_non_null(strstr(text, "\"task_start_ns\":18446744073709551615"));
	free(text);
	run__free_detail(&r);
}

/* The artifact into a planned output file (lib/outfile.h), as tsarun writes it. */
static int write_to(const struct session *s, const char *path, char *err, size_t errlen)
{
	struct outfile *of =
	    outfile__plan(path, &(struct outfile_opts){.what = "the artifact"}, err, errlen);
	int ret;

	if (!of)
		return strstr(err, "No such file") ? -ENOENT : -EINVAL;
	ret = artifact_write(s, of, err, errlen);
	outfile__free(of);
	return ret;
}

static void test_write_atomic(void **state)
{
	char dir[] = "/tmp/tsarun-unit.XXXXXX", path[256], err[256];
	struct session s;
	struct run r;
	struct stat st;

	make_session(&s, &r);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a.json", dir);
	assert_int_equal(write_to(&s, path, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 100);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* Overwrite in place through rename: nothing else is left in the directory. */
	assert_int_equal(write_to(&s, path, err, sizeof(err)), 0);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1", dir);
		assert_int_equal(system(cmd), 0);
	}
	unlink(path);
	rmdir(dir);
	run__free_detail(&r);
}

static void test_write_errors_name_the_file(void **state)
{
	struct session s;
	struct run r;
	char err[256];

	make_session(&s, &r);
	assert_int_equal(write_to(&s, "/nonexistent-dir/a.json", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent-dir/a.json"));
	/* A device is written in place, not replaced. */
	assert_int_equal(write_to(&s, "/dev/null", err, sizeof(err)), 0);
	{
		struct stat st;

		assert_int_equal(stat("/dev/null", &st), 0);
		assert_true(S_ISCHR(st.st_mode));
	}
	run__free_detail(&r);
}

static void test_doctor_json(void **state)
{
	struct doctor_check c[2] = {
	    {.name = "ebpf", .available = true, .status = "available", .detail = "ok"},
	    {.name = "pmu", .available = false, .status = "unavailable", .detail = "no \"PMU\""},
	};
	struct host_info h = {.cpus = 2};
	char *text = artifact_render_doctor(c, 2, &h);

	assert_non_null(text);
	assert_non_null(strstr(text, "\"schema\":\t\"tsarun-doctor/1\""));
	assert_non_null(strstr(text, "no \\\"PMU\\\""));
	free(text);
}

/*
 * A command's bytes need not be UTF-8 (names, argv): the artifact is strict
 * UTF-8 all the same, each ill-formed subpart U+FFFD, and reads back.
 */
static void test_bad_utf8_is_valid_json(void **state)
{
	static char *argv[] = {"./b\xff\xed\xa0\x80", "\x9b[31m\033]0;T\007", NULL};
	struct session s, back;
	struct run r;
	char *text, err[256];

	make_session(&s, &r);
	s.argv = argv;
	s.argc = 2;
	memcpy(r.threads[0].comm, "\xc0\xaf\xc2\x9b\x7f##[e]", 11);
	run__note(&r, "%s", "note \xf4\x90\x80\x80");
	text = artifact_render(&s);
	assert_non_null(text);
	assert_true(fx_utf8_valid(text));
	assert_null(strstr(text, "##["));
	assert_non_null(strstr(text, "\"argv\":[\"./b\\ufffd\\ufffd\\ufffd\\ufffd\","
				     "\"\\ufffd[31m\\u001b]0;T\\u0007\"]"));
	assert_non_null(strstr(text, "\"comm\":\"\\ufffd\\ufffd\\u009b\\u007f##\\u005be]\""));
	assert_non_null(strstr(text, "\"note \\ufffd\\ufffd\\ufffd\\ufffd\""));
	assert_int_equal(artifact_parse(text, strlen(text), "t.json",
					&(struct artifact_read_opts){.what = "run", .detail = true},
					&back, err, sizeof(err)),
			 0);
	assert_string_equal(back.argv[0], "./b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(back.runs[0].threads[0].comm,
			    "\xef\xbf\xbd\xef\xbf\xbd\xc2\x9b\x7f##[e]");
	session__free(&back);
	free(text);
	run__free_detail(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden),
	    cmocka_unit_test(test_bad_utf8_is_valid_json),
	    cmocka_unit_test(test_required_names),
	    cmocka_unit_test(test_big_integers_stay_exact),
	    cmocka_unit_test(test_write_atomic),
	    cmocka_unit_test(test_write_errors_name_the_file),
	    cmocka_unit_test(test_doctor_json),
	};

	return cmocka_run_group_tests_name("artifact", tests, NULL, NULL);
}
