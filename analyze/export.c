// SPDX-License-Identifier: MIT
/* CSV and hyperfine JSON exports. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "jsonw.h"
#include "run.h"
#include "textsafe.h"

/*
 * A CSV field: the text in its visible form (a name is the command's: no
 * control or ill-formed byte reaches a spreadsheet), quoted when it holds a
 * comma, a quote or a space at either end, and a leading = + or @ made text
 * with a quote mark, so that no spreadsheet takes it for a formula.
 */
static void csv_text(FILE *f, const char *s)
{
	char buf[TEXTSAFE_SIZE(4096)];
	size_t n;
	bool quote;

	textsafe_term(buf, sizeof(buf), s, TEXTSAFE_NUL);
	n = strlen(buf);
	quote = strpbrk(buf, ",\"") || (n && (buf[0] == ' ' || buf[n - 1] == ' '));
	if (quote)
		fputc('"', f);
	if (buf[0] == '=' || buf[0] == '+' || buf[0] == '@')
		fputc('\'', f);
	for (const char *p = buf; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	if (quote)
		fputc('"', f);
}

static void csv_u64(FILE *f, bool known, uint64_t v)
{
	if (known)
		fprintf(f, ",%" PRIu64, v);
	else
		fputc(',', f);
}

int export_threads_csv(FILE *f, const struct run *r)
{
	fputs("pid,tid,comm,start_ns,lifetime_ns,on_cpu_ns,runqueue_ns,sleeping_ns,"
	      "uninterruptible_ns,stopped_ns,residual_ns,voluntary_switches,"
	      "involuntary_switches,wakeups,wakeup_latency_avg_ns,wakeup_latency_max_ns\r\n",
	      f);
	for (size_t i = 0; r->detailed && i < r->nthreads; i++) {
		const struct thread_acct *t = &r->threads[i];
		bool states = !(t->unmeasured & ACCT_NO_STATES);
		bool sw = !(t->unmeasured & ACCT_NO_SWITCHES);
		bool wk = !(t->unmeasured & ACCT_NO_WAKEUPS);

		fprintf(f, "%" PRIu32 ",%" PRIu32 ",", t->pid, t->tid);
		csv_text(f, run_shown_comm(t->comm, t->execs));
		fprintf(f, ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, t->start_ns,
			t->lifetime_ns, t->state_ns[TSA_ST_ONCPU], t->state_ns[TSA_ST_RUNQ]);
		csv_u64(f, states, t->state_ns[TSA_ST_SLEEP]);
		csv_u64(f, states, t->state_ns[TSA_ST_DISK]);
		csv_u64(f, states, t->state_ns[TSA_ST_STOPPED]);
		fprintf(f, ",%" PRIu64, t->residual_ns);
		csv_u64(f, sw, t->voluntary);
		csv_u64(f, sw, t->involuntary);
		csv_u64(f, wk, t->wakeups);
		csv_u64(f, wk && t->wakeup_lat_count,
			t->wakeup_lat_count ? t->wakeup_lat_sum / t->wakeup_lat_count : 0);
		csv_u64(f, wk && t->wakeup_lat_count, t->wakeup_lat_max);
		fputs("\r\n", f);
	}
	return ferror(f) ? -EIO : 0;
}

static void runs_rows(FILE *f, const char *side, const struct run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct run *r = &runs[i];

		fprintf(f, "%s,%d,%s,%s,", side, r->index, r->warmup ? "true" : "false",
			run_status_name(r->status));
		if (r->status == RUN_EXITED || r->status == RUN_NOT_STARTED)
			fprintf(f, "%d", r->exit_code);
		fputc(',', f);
		if (r->term_signal)
			fprintf(f, "%d", r->term_signal);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%ld,%ld,%ld,%ld,%ld\r\n",
			r->wall_ns, r->ru.user_ns, r->ru.sys_ns, r->ru.max_rss_kb, r->ru.minflt,
			r->ru.majflt, r->ru.nvcsw, r->ru.nivcsw);
	}
}

int export_runs_csv(FILE *f, const struct session *s)
{
	fputs("command,run,warmup,status,exit_code,signal,wall_ns,user_ns,sys_ns,max_rss_kb,"
	      "minor_faults,major_faults,voluntary_switches,involuntary_switches\r\n",
	      f);
	runs_rows(f, "new", s->runs, s->nruns);
	runs_rows(f, "baseline", s->base_runs, s->nbase_runs);
	return ferror(f) ? -EIO : 0;
}

/*
 * argv as one command line, as a shell would take it back (words with
 * specials in '...'), as one JSON string.
 */
static int put_command_line(struct jsonw *w, char *const *argv, int argc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	for (int i = 0; i < argc && argv[i]; i++) {
		const char *a = argv[i];
		bool plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789_-+=./:,@%^") == strlen(a);

		if (i)
			fputc(' ', f);
		if (plain) {
			fputs(a, f);
			continue;
		}
		fputc('\'', f);
		for (const char *p = a; *p; p++) {
			if (*p == '\'')
				fputs("'\\''", f); /* ' closes, \' is a quote, ' reopens */
			else
				fputc(*p, f);
		}
		fputc('\'', f);
	}
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	jsonw__strn(w, text, len);
	free(text);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A value of hyperfine's, or null for what the runs cannot give (stddev of one, none at all). */
static void seconds(struct jsonw *w, const char *key, bool known, double v)
{
	jsonw__key(w, key);
	if (known)
		jsonw__fixed(w, v, 9);
	else
		jsonw__null(w);
}

static int hyperfine_result(struct jsonw *w, char *const *argv, int argc, const struct run *runs,
			    size_t nruns)
{
	double *t = malloc((nruns ? nruns : 1) * sizeof(*t)), *sorted;
	double sum = 0, sq = 0, user = 0, sys = 0, mean, median = NAN;
	size_t n = 0;
	int ret;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < nruns; i++) {
		if (runs[i].warmup)
			continue;
		t[n] = (double)runs[i].wall_ns / 1e9;
		sum += t[n];
		user += (double)runs[i].ru.user_ns / 1e9;
		sys += (double)runs[i].ru.sys_ns / 1e9;
		n++;
	}
	mean = n ? sum / (double)n : NAN;
	for (size_t i = 0; i < n; i++)
		sq += (t[i] - mean) * (t[i] - mean);
	jsonw__obj_open(w);
	jsonw__key(w, "command");
	ret = put_command_line(w, argv, argc);
	sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (ret || !sorted) {
		free(sorted);
		free(t);
		return ret ? ret : -ENOMEM;
	}
	memcpy(sorted, t, n * sizeof(*t));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	if (n)
		median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	seconds(w, "mean", n, mean);
	seconds(w, "stddev", n > 1, n > 1 ? sqrt(sq / (double)(n - 1)) : 0);
	seconds(w, "median", n, median);
	seconds(w, "user", n, user / (double)n);
	seconds(w, "system", n, sys / (double)n);
	seconds(w, "min", n, n ? sorted[0] : 0);
	seconds(w, "max", n, n ? sorted[n - 1] : 0);
	jsonw__key(w, "times");
	jsonw__arr_open(w);
	for (size_t i = 0; i < n; i++)
		jsonw__fixed(w, t[i], 9);
	jsonw__arr_close(w);
	jsonw__key(w, "exit_codes");
	jsonw__arr_open(w);
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];

		if (r->warmup)
			continue;
		/* As hyperfine: the code, or null for a command a signal ended. */
		if (r->status == RUN_EXITED || r->status == RUN_NOT_STARTED)
			jsonw__int(w, r->exit_code);
		else
			jsonw__null(w);
	}
	jsonw__arr_close(w);
	jsonw__obj_close(w);
	free(sorted);
	free(t);
	return 0;
}

int export_hyperfine_json(FILE *f, const struct session *s)
{
	struct jsonw *w = jsonw__new(f, JSONW_PRETTY | JSONW_NEWLINE);
	int ret, err;

	if (!w)
		return -ENOMEM;
	jsonw__obj_open(w);
	jsonw__key(w, "results");
	jsonw__arr_open(w);
	ret = hyperfine_result(w, s->argv, s->argc, s->runs, s->nruns);
	if (!ret && s->nbase_runs && s->base_argv)
		ret = hyperfine_result(w, s->base_argv, s->base_argc, s->base_runs, s->nbase_runs);
	jsonw__arr_close(w);
	jsonw__obj_close(w);
	err = jsonw__finish(w);
	jsonw__free(w);
	return ret ? ret : err;
}
