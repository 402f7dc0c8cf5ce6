// SPDX-License-Identifier: MIT
/* Monitor mode's filters, order and table (see monitor.h). */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"
#include "run.h"
#include "textsafe.h"

bool monitor_comm_match(const char *pattern, const char *comm)
{
	if (!pattern)
		return true;
	if (strpbrk(pattern, "*?["))
		return fnmatch(pattern, comm, 0) == 0;
	return strstr(comm, pattern) != NULL;
}

bool monitor_idle(const struct thread_acct *t)
{
	const struct thread_sampled *s = &t->sampled;

	return !t->state_ns[TSA_ST_ONCPU] && !t->state_ns[TSA_ST_RUNQ] && !s->by_state_ns[0] &&
	       !s->by_state_ns[2] && !s->by_state_ns[3] && !t->state_ns[TSA_ST_DISK] &&
	       !t->state_ns[TSA_ST_STOPPED];
}

/* As the run's table orders threads, except what procfs cannot count. */
static double key(const struct thread_acct *t, enum sort_key k)
{
	if (k == SORT_SWITCHES)
		return (double)t->slices; /* switches are not counted here: switch-ins are */
	return sort_key_thread(t, k);
}

struct cmp_ctx {
	const struct thread_acct *threads;
	enum sort_key key;
};

static int cmp(const void *a, const void *b, void *arg)
{
	const struct cmp_ctx *c = arg;
	const struct thread_acct *x = &c->threads[*(const size_t *)a];
	const struct thread_acct *y = &c->threads[*(const size_t *)b];
	double kx = key(x, c->key), ky = key(y, c->key);

	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

size_t monitor_select(const struct monitor_filter *f, const struct thread_acct *threads, size_t n,
		      size_t *idx)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		const struct thread_acct *t = &threads[i];

		if (f->tid && t->tid != f->tid)
			continue;
		if (!monitor_comm_match(f->comm, t->comm))
			continue;
		if (!f->show_idle && monitor_idle(t))
			continue;
		idx[m++] = i;
	}
	qsort_r(idx, m, sizeof(*idx), cmp, &(struct cmp_ctx){threads, f->sort});
	return m;
}

void monitor_print_table(FILE *out, const struct monitor_report *m, bool header)
{
	uint64_t span = m->end_ns > m->start_ns ? (uint64_t)(m->end_ns - m->start_ns) : 0;
	char a[16], b[16], c[16], d[16], e[16], g[16], dl[16];
	char name[TEXTSAFE_SIZE(sizeof(m->comm)) + 16]; /* any process's name: escaped */

	if (header) {
		textsafe_term(name, sizeof(name), m->comm, TEXTSAFE_NUL);
		fprintf(
		    out, "\n%s %u (%s) %s %.3f-%.3f s, %llu samples every %s (largest gap %s)%s\n",
		    m->final ? "whole attach:" : "interval", m->pid, name, m->final ? "" : "",
		    (double)m->start_ns / 1e9, (double)m->end_ns / 1e9,
		    (unsigned long long)m->samples, fmt_dur(m->sample_ns, a, sizeof(a)),
		    fmt_dur(m->max_gap_ns, b, sizeof(b)), m->exited ? "; the process ended" : "");
		fprintf(out, "%7s  %-16s %6s %9s %9s %9s %9s %9s %7s %10s\n", "TID", "COMM", "CPU%",
			"ON-CPU", "RUNQ", "SLEEP", "D", "OTHER", "SLICES", "IO-DELAY");
	}
	for (size_t k = 0; k < m->nshown; k++) {
		const struct thread_acct *t = &m->threads[m->shown[k]];
		uint64_t other = t->state_ns[TSA_ST_STOPPED] + t->residual_ns;

		if (t->have_delays && t->delays[DELAY_BLOCK_IO].available)
			fmt_ms(t->delays[DELAY_BLOCK_IO].total_ns, dl, sizeof(dl));
		else
			snprintf(dl, sizeof(dl), "-");
		textsafe_term_cell(name, sizeof(name), t->comm, TEXTSAFE_NUL, 16);
		fprintf(out, "%7u%c %s %6.1f %9s %9s %9s %9s %9s %7llu %10s\n", t->tid,
			t->first_state_known ? '+' : ' ', name,
			span ? 100.0 * (double)t->state_ns[TSA_ST_ONCPU] / (double)span : 0.0,
			fmt_ms(t->state_ns[TSA_ST_ONCPU], a, sizeof(a)),
			fmt_ms(t->state_ns[TSA_ST_RUNQ], b, sizeof(b)),
			fmt_ms(t->state_ns[TSA_ST_SLEEP], c, sizeof(c)),
			fmt_ms(t->state_ns[TSA_ST_DISK], d, sizeof(d)), fmt_ms(other, e, sizeof(e)),
			(unsigned long long)t->slices, dl);
	}
	if (header && m->final)
		fprintf(
		    out,
		    "  (ms; ON-CPU, RUNQ, SLICES: the kernel's counters between samples; SLEEP, D: "
		    "by sample; + born during the attach)\n");
	(void)g;
}
