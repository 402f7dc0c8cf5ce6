// SPDX-License-Identifier: MIT
/*
 * --interval's JSON Lines (see stream.h): one object per interval, on one
 * line, integers written exactly (nanoseconds never pass through a double). The
 * format is doc/tsarun-stream.schema.json; its thread rows use the names of
 * monitor mode's (doc/tsarun-monitor.schema.json) and of the artifact.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "stream.h"
#include "textsafe.h"
#include "vec.h"

/* Fields a source does not measure: null in every row, with the reason once per line. */
static const struct {
	uint32_t bit;
	const char *fields;
	const char *reason;
} unmeasured_reasons[] = {
    {ACCT_NO_STATES, "sleeping_ns,uninterruptible_ns,stopped_ns",
     "the source does not split off-CPU time by state: it is in residual_ns"},
    {ACCT_NO_SLICES, "slices", "the source does not count switch-ins"},
    {ACCT_NO_SWITCHES, "voluntary_switches,involuntary_switches",
     "only the eBPF source counts switches"},
    {ACCT_NO_WAKEUPS, "wakeups", "only the eBPF source counts wakeups"},
};

/*
 * The line is written straight into a growing buffer: a tree of cJSON
 * objects per thread, and printf for each number, made a line of 200
 * threads cost tsarun 2.7 ms at every tick. Strings are escaped as the
 * artifact's other writers escape them (textsafe_json: valid UTF-8 whatever
 * the command's bytes).
 */
struct jbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct jbuf *b, const char *s, size_t n)
{
	char *p;

	if (b->oom)
		return;
	p = vec_grow(b->p, &b->cap, b->len + n + 2, 1, 4096);
	if (!p) {
		b->oom = true;
		return;
	}
	b->p = p;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

#define PUT(b, lit) put(b, lit, sizeof(lit) - 1)

static void put_u64(struct jbuf *b, uint64_t v)
{
	char buf[24], *e = buf + sizeof(buf), *q = e;

	do
		*--q = (char)('0' + v % 10);
	while (v /= 10);
	put(b, q, (size_t)(e - q));
}

static void put_i64(struct jbuf *b, int64_t v)
{
	if (v < 0) {
		PUT(b, "-");
		put_u64(b, -(uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

/* ,"name": */
static void key(struct jbuf *b, const char *name)
{
	if (b->len && b->p[b->len - 1] != '{' && b->p[b->len - 1] != '[')
		PUT(b, ",");
	PUT(b, "\"");
	put(b, name, strlen(name));
	PUT(b, "\":");
}

/* An array's next object: { after a comma unless it is the first. */
static void elem(struct jbuf *b)
{
	if (b->len && b->p[b->len - 1] != '[')
		PUT(b, ",");
	PUT(b, "{");
}

/* A JSON string: escaped by the rule every JSON writer of tsarun's follows (lib/textsafe). */
static void put_str(struct jbuf *b, const char *s)
{
	char small[256], *e = small;
	size_t n = textsafe_json(small, sizeof(small), s, TEXTSAFE_NUL);

	if (n >= sizeof(small)) {
		e = textsafe_dup(textsafe_json, s, TEXTSAFE_NUL);
		if (!e) {
			b->oom = true;
			return;
		}
	}
	PUT(b, "\"");
	put(b, e, n);
	PUT(b, "\"");
	if (e != small)
		free(e);
}

static void kv_i64(struct jbuf *b, const char *name, int64_t v)
{
	key(b, name);
	put_i64(b, v);
}

static void kv_i64_or_null(struct jbuf *b, const char *name, int64_t v, bool null)
{
	key(b, name);
	if (null)
		PUT(b, "null");
	else
		put_i64(b, v);
}

static void kv_bool(struct jbuf *b, const char *name, bool v)
{
	key(b, name);
	if (v)
		PUT(b, "true");
	else
		PUT(b, "false");
}

static void kv_str(struct jbuf *b, const char *name, const char *v)
{
	key(b, name);
	put_str(b, v);
}

/* A percentage with three decimals, rounded half up, from integers (span > 0). */
static void kv_percent(struct jbuf *b, const char *name, int64_t part, int64_t span)
{
	unsigned __int128 m;
	bool neg = part < 0;
	uint64_t a = neg ? -(uint64_t)part : (uint64_t)part, r;
	char frac[4];

	key(b, name);
	if (span <= 0) {
		PUT(b, "0.000");
		return;
	}
	m = ((unsigned __int128)a * 200000 + (uint64_t)span) / (2 * (uint64_t)span);
	r = (uint64_t)(m % 1000);
	if (neg && m)
		PUT(b, "-");
	put_u64(b, (uint64_t)(m / 1000));
	frac[0] = '.';
	frac[1] = (char)('0' + r / 100);
	frac[2] = (char)('0' + r / 10 % 10);
	frac[3] = (char)('0' + r % 10);
	put(b, frac, 4);
}

static void figures(struct jbuf *b, const struct stream_figures *f, int64_t span)
{
	uint32_t um = f->unmeasured;
	bool nostates = um & ACCT_NO_STATES;

	kv_i64(b, "lifetime_ns", f->lifetime_ns);
	kv_i64(b, "on_cpu_ns", f->state_ns[TSA_ST_ONCPU]);
	kv_i64(b, "runqueue_ns", f->state_ns[TSA_ST_RUNQ]);
	kv_i64_or_null(b, "sleeping_ns", f->state_ns[TSA_ST_SLEEP], nostates);
	kv_i64_or_null(b, "uninterruptible_ns", f->state_ns[TSA_ST_DISK], nostates);
	kv_i64_or_null(b, "stopped_ns", f->state_ns[TSA_ST_STOPPED], nostates);
	kv_i64(b, "residual_ns", f->residual_ns);
	kv_i64_or_null(b, "slices", f->slices, um & ACCT_NO_SLICES);
	kv_i64_or_null(b, "voluntary_switches", f->voluntary, um & ACCT_NO_SWITCHES);
	kv_i64_or_null(b, "involuntary_switches", f->involuntary, um & ACCT_NO_SWITCHES);
	kv_i64_or_null(b, "wakeups", f->wakeups, um & ACCT_NO_WAKEUPS);
	kv_percent(b, "on_cpu_percent", f->state_ns[TSA_ST_ONCPU], span);
}

char *stream_json_line(const struct stream_interval *iv)
{
	int64_t span = iv->end_ns - iv->start_ns;
	struct jbuf b = {0};
	bool first;

	PUT(&b, "{");
	kv_str(&b, "schema", "tsarun-stream/1");
	kv_str(&b, "type", "interval");
	kv_i64(&b, "run", iv->run);
	kv_bool(&b, "warmup", iv->warmup);
	kv_i64(&b, "index", (int64_t)iv->index);
	kv_bool(&b, "last", iv->last);
	kv_i64(&b, "start_ns", iv->start_ns);
	kv_i64(&b, "end_ns", iv->end_ns);
	kv_i64(&b, "interval_ns", span);
	kv_i64(&b, "pid", iv->root_pid);
	kv_i64_or_null(&b, "lost_records", iv->lost_records, iv->lost_records < 0);
	kv_i64(&b, "dropped_lines", (int64_t)iv->dropped_lines);
	key(&b, "accounting_source");
	if (iv->source)
		put_str(&b, iv->source);
	else
		PUT(&b, "null");
	key(&b, "sources_active");
	PUT(&b, "[");
	first = true;
	for (int i = 0; i < iv->nsources; i++) {
		if (!iv->sources[i].active)
			continue;
		if (!first)
			PUT(&b, ",");
		put_str(&b, iv->sources[i].name);
		first = false;
	}
	PUT(&b, "]");
	key(&b, "sources_unavailable");
	PUT(&b, "[");
	for (int i = 0; i < iv->nsources; i++) {
		if (iv->sources[i].active)
			continue;
		elem(&b);
		kv_str(&b, "source", iv->sources[i].name);
		kv_str(&b, "reason", iv->sources[i].reason);
		PUT(&b, "}");
	}
	PUT(&b, "]");
	if (!iv->source) {
		/* No source sees live threads: nothing to say, and not 0 either. */
		kv_str(&b, "reason", iv->no_threads_reason ? iv->no_threads_reason : "no source");
		PUT(&b,
		    ",\"unmeasured\":null,\"totals\":null,\"processes\":null,\"threads\":null}");
		goto out;
	}
	key(&b, "unmeasured");
	PUT(&b, "[");
	for (size_t i = 0; i < sizeof(unmeasured_reasons) / sizeof(unmeasured_reasons[0]); i++) {
		if (!(iv->totals.unmeasured & unmeasured_reasons[i].bit))
			continue;
		elem(&b);
		kv_str(&b, "fields", unmeasured_reasons[i].fields);
		kv_str(&b, "reason", unmeasured_reasons[i].reason);
		PUT(&b, "}");
	}
	PUT(&b, "]");
	key(&b, "totals");
	PUT(&b, "{");
	kv_i64(&b, "processes", (int64_t)iv->nprocs);
	kv_i64(&b, "threads", (int64_t)iv->nthreads);
	kv_i64(&b, "threads_born", iv->threads_born);
	kv_i64(&b, "threads_ended", iv->threads_ended);
	figures(&b, &iv->totals, span);
	PUT(&b, "}");
	key(&b, "processes");
	PUT(&b, "[");
	for (size_t i = 0; i < iv->nprocs; i++) {
		const struct stream_proc *p = &iv->procs[i];

		elem(&b);
		kv_i64(&b, "pid", p->pid);
		kv_str(&b, "comm", p->comm);
		kv_i64(&b, "threads", p->threads);
		figures(&b, &p->f, span);
		PUT(&b, "}");
	}
	PUT(&b, "]");
	key(&b, "threads");
	PUT(&b, "[");
	for (size_t i = 0; i < iv->nthreads; i++) {
		const struct stream_thread *t = &iv->threads[i];

		elem(&b);
		kv_i64(&b, "tid", t->tid);
		kv_i64(&b, "pid", t->pid);
		kv_str(&b, "comm", t->comm);
		kv_bool(&b, "alive", t->alive);
		kv_bool(&b, "born", t->born);
		kv_i64(&b, "start_ns", t->start_ns);
		kv_i64_or_null(&b, "end_ns", t->end_ns, t->alive);
		figures(&b, &t->f, span);
		PUT(&b, "}");
	}
	PUT(&b, "]}");
out:
	PUT(&b, "\n");
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	b.p[b.len] = '\0';
	return b.p;
}
