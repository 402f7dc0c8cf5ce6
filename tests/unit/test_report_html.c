// SPDX-License-Identifier: MIT
/* The HTML report's writer: the page around its data, and nothing in the data ends an element. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "unit.h"

#include "artifact.h"
#include "fixtures.h"
#include "account.h"
#include "report_html.h"
#include "run.h"
#include "status.h"

#define HOSTILE "</script><img"

static void make_session(struct session *s, struct run *r)
{
	static char *argv[] = {"./<script>alert(1)</script>", "\xe2\x80\xa8<!--", NULL};
	struct tsa_thread t[2];

	memset(s, 0, sizeof(*s));
	memset(r, 0, sizeof(*r));
	s->tool_version = "9.9.9";
	snprintf(s->host.kernel, sizeof(s->host.kernel), "6.1.0-test");
	s->host.cpus = 2;
	s->argv = argv;
	s->argc = 2;
	s->mode = "run";
	s->runs = r;
	s->nruns = 1;
	t[0] = fx_thread(100, 100, 99, "bench", 0, 500, 300, 20, 170, 10);
	t[0].flags |= TSA_F_GROUP_DEAD | TSA_F_ROOT;
	t[1] = fx_thread(101, 100, 99, HOSTILE, 1, 400, 350, 40, 9, 0);
	r->start_mono_ns = T0;
	r->ru.user_ns = 600 * MS;
	r->ru.sys_ns = 55 * MS;
	r->wall_ns = 500 * MS;
	r->root_pid = 100;
	run__source(r, "ebpf", true, NULL);
	status_from_wait(r, 0);
	assert_int_equal(fold_run(r, t, 2), 0);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0, at = 0, len = strlen(s);
	const char *p;

	while (at < len && (p = strstr(s + at, what))) {
		n++;
		at = (size_t)(p - s) + 1;
	}
	return n;
}

/* The JSON of the data element id (malloc'd text between its tags), or NULL. */
static cJSON *block(const char *page, const char *id)
{
	char open[96], *text;
	const char *p, *e;
	cJSON *j;

	snprintf(open, sizeof(open), "<script type=\"application/json\" id=\"%s\">", id);
	p = strstr(page, open);
	if (!p)
		return NULL;
	p += strlen(open);
	e = strstr(p, "</script>");
	assert_non_null(e);
	text = strndup(p, (size_t)(e - p));
	j = cJSON_Parse(text);
	free(text);
	return j;
}

__attribute__((noinline)) static char *render(struct session *s)
{
	char *art = artifact_render(s), *page = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&page, &len);
	struct report_html h = {
	    .run = {.artifact = art, .artifact_len = strlen(art), .s = s, .name = "run.json"}};

	assert_non_null(m);
	assert_int_equal(report_html_write(m, &h), 0);
	fclose(m);
	free(art);
	return page;
}

static void test_page(void **state)
{
	struct session s;
	struct run r;
	char *page;
	cJSON *a, *d, *pg, *th, *m;
	bool found = false;

	make_session(&s, &r);
	page = render(&s);
	assert_true(fx_utf8_valid(page));
	assert_int_equal(strncmp(page, "<!DOCTYPE html>", 15), 0);
	assert_non_null(strstr(page, "</html>\n"));
	/* Every script element is closed once: the data closed none, opened none. */
	assert_int_equal(count(page, "<script"), count(page, "</script>"));
	assert_null(strstr(page, "<img"));
	assert_int_equal(count(page, "<!--"), 1); /* the template's SPDX line */
	assert_null(strstr(page, "\xe2\x80\xa8"));
	/* The policy names the scripts the page runs, by hash, and no network. */
	assert_non_null(strstr(page, "default-src 'none'; script-src 'sha256-"));
	pg = block(page, "tsarun-page");
	a = block(page, "tsarun-artifact");
	d = block(page, "tsarun-derived");
	assert_non_null(pg);
	assert_non_null(a);
	assert_non_null(d);
	assert_string_equal(cJSON_GetObjectItem(pg, "kind")->valuestring, "run");
	/* The data is the artifact, hostile text and all, as JSON.parse() reads it. */
	assert_string_equal(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "command"), "argv"), 0)
		->valuestring,
	    "./<script>alert(1)</script>");
	cJSON_ArrayForEach(
	    th,
	    cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "runs"), 0), "threads"))
	{
		found |= !strcmp(cJSON_GetObjectItem(th, "comm")->valuestring, HOSTILE);
	}
	assert_true(found);
	/* Derived: the text report, no stacks, the metrics of the one run. */
	assert_non_null(strstr(cJSON_GetObjectItem(d, "report")->valuestring, "TOTAL"));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(d, "flames")));
	m = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "metrics"), 0);
	assert_string_equal(cJSON_GetObjectItem(m, "name")->valuestring, "wall");
	assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "values"), 0)->valuedouble,
			 500 * MS);
	assert_int_equal(cJSON_GetObjectItem(m, "median")->valuedouble, 500 * MS);
	/* No baseline, no comparison: their elements are not there at all. */
	assert_null(strstr(page, "id=\"tsarun-base\""));
	assert_null(strstr(page, "id=\"tsarun-comparison\""));
	cJSON_Delete(pg);
	cJSON_Delete(a);
	cJSON_Delete(d);
	free(page);
	run__free_detail(&r);
}

static void test_failed_output(void **state)
{
	struct session s;
	struct run r;
	char *art;
	FILE *f = fopen("/dev/full", "w");
	struct report_html h = {0};

	make_session(&s, &r);
	art = artifact_render(&s);
	h.run = (struct report_html_side){.artifact = art, .artifact_len = strlen(art), .s = &s};
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(report_html_write(f, &h), -EIO);
	fclose(f);
	h.run.artifact = NULL;
	assert_int_equal(report_html_write(stdout, &h), -EINVAL);
	free(art);
	run__free_detail(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_page),
	    cmocka_unit_test(test_failed_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
