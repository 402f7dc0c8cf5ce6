// SPDX-License-Identifier: MIT
/* The bash record decoder and call tree: streams built here, fed as datagrams. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "bashprof.h"
#include "flame.h"
#include "run.h"
#include "tsa_wire.h"

struct w {
	unsigned char buf[TSA_WIRE_MAX_CHUNK];
	size_t len;
	uint32_t pid, gen, seq, nrec;
};

static void w_begin(struct w *w, uint32_t pid, uint32_t gen)
{
	memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->gen = gen;
	w->len = sizeof(struct tsa_chunk);
}

static void w_flush(struct w *w, struct bashprof *bp)
{
	struct tsa_chunk c = {TSA_WIRE_MAGIC, TSA_WIRE_VERSION, sizeof(c), w->pid,
			      w->gen,	      w->seq,		w->nrec};

	memcpy(w->buf, &c, sizeof(c));
	if (bp)
		bashprof__feed(bp, w->buf, w->len);
	w->seq += w->nrec;
	w->nrec = 0;
	w->len = sizeof(struct tsa_chunk);
}

static void *w_rec(struct w *w, struct bashprof *bp, size_t len, uint8_t type, uint8_t flags,
		   uint32_t arg)
{
	struct tsa_rec *r;

	if (w->len + len > sizeof(w->buf))
		w_flush(w, bp);
	r = (struct tsa_rec *)(w->buf + w->len);
	memset(r, 0, len);
	r->type = type;
	r->flags = flags;
	r->len = (uint16_t)len;
	r->arg = arg;
	w->len += len;
	w->nrec++;
	return r;
}

static struct tsa_hello *w_hello(struct w *w, struct bashprof *bp, uint32_t how, uint64_t t,
				 uint32_t ppid, uint32_t pgen, uint32_t fidx, uint32_t env,
				 uint32_t cal)
{
	struct tsa_hello *h = w_rec(w, bp, sizeof(*h), TSA_R_HELLO, 0, how);

	h->t = t;
	h->pid = w->pid;
	h->ppid = ppid;
	h->parent_gen = pgen;
	h->fork_index = fidx;
	h->subshell_env = env;
	h->cal[TSA_COST_BASE].wall_ns = cal;
	h->cal[TSA_COST_BASE].cpu_ns = cal;
	h->hflags = (how == TSA_HELLO_START ? TSA_HF_ROOT : 0) | (cal ? TSA_HF_CALIBRATED : 0);
	return h;
}

static void w_text(struct w *w, struct bashprof *bp, uint32_t id, const char *s)
{
	size_t n = strlen(s), len = (sizeof(struct tsa_text) + n + 7) & ~(size_t)7;
	char *p = w_rec(w, bp, len, TSA_R_TEXT, 0, id);

	memcpy(p + sizeof(struct tsa_text), s, n);
}

/* A trap run's CMD record with flags; CPU runs at half the wall clock. */
static void w_cmdf(struct w *w, struct bashprof *bp, uint64_t t, uint32_t line, uint32_t text,
		   uint8_t flags)
{
	struct tsa_cmd *c = w_rec(w, bp, sizeof(*c), TSA_R_CMD, flags | TSA_RUN, line);

	c->t = t;
	c->cpu = t / 2;
	c->text = text;
}

static void w_cmd(struct w *w, struct bashprof *bp, uint64_t t, uint32_t line, uint32_t text)
{
	w_cmdf(w, bp, t, line, text, 0);
}

/* A CMD record saying the children's CPU is now cc (bash reaped some). */
static void w_cmd_cc(struct w *w, struct bashprof *bp, uint64_t t, uint32_t line, uint32_t text,
		     uint64_t cc)
{
	struct tsa_cmd_cc *c =
	    w_rec(w, bp, sizeof(*c), TSA_R_CMD, TSA_CF_CHILD_CPU | TSA_RUN, line);

	c->c.t = t;
	c->c.cpu = t / 2;
	c->c.text = text;
	c->child_cpu = cc;
}

static void w_end(struct w *w, struct bashprof *bp, uint64_t t)
{
	struct tsa_end *e = w_rec(w, bp, sizeof(*e), TSA_R_END, 0, 0);

	e->t = t;
	e->cpu = t / 2;
}

static const struct bash_node *find(const struct bashprof *bp, const char *text, uint32_t line)
{
	for (size_t i = 0; i < bashprof__nodes(bp); i++) {
		const struct bash_node *n = bashprof__node(bp, i);

		if (!strcmp(n->text, text) && n->line == line)
			return n;
	}
	return NULL;
}

/* 20,000 runs of one command collapse into one node with exact figures. */
static void test_loop_collapses(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w w;
	const struct bash_node *loop, *body;
	uint64_t t = 1000000;

	w_begin(&w, 100, 7);
	w_hello(&w, bp, TSA_HELLO_START, t, 1, 0, 0, 0, 1000);
	w_text(&w, bp, 1, "for i in {1..20000}");
	w_text(&w, bp, 2, "x=$((x+1))");
	for (int i = 0; i < 20000; i++) {
		w_cmd(&w, bp, t, 3, 1);
		t += 3000;
		w_cmd(&w, bp, t, 4, 2);
		t += 5000;
	}
	w_end(&w, bp, t);
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);

	loop = find(bp, "for i in {1..20000}", 3);
	body = find(bp, "x=$((x+1))", 4);
	assert_non_null(loop);
	assert_non_null(body);
	assert_int_equal(loop->count, 20000);
	assert_int_equal(body->count, 20000);
	/*
	 * Each span holds one trap run (1000 ns) that the correction removes,
	 * but for the last, closed by the exit: it holds the rest of the last
	 * trap run after its clock read (half of it, by default).
	 */
	assert_int_equal(loop->raw_wall_ns, 20000ull * 3000);
	assert_int_equal(loop->wall_ns, 20000ull * 2000);
	assert_int_equal(body->wall_ns, 20000ull * 4000 + 500);
	assert_int_equal(bashprof__total(bp)->commands, 40000);
	assert_int_equal(bashprof__total(bp)->raw_self_wall_ns, 20000ull * 8000);
	assert_int_equal(bashprof__total(bp)->self_wall_ns, 20000ull * 6000);
	assert_int_equal(bashprof__quality(bp)->lost_records, 0);
	assert_int_equal(bashprof__quality(bp)->bad_records, 0);
	assert_true(bashprof__nodes(bp) == 3);
	bashprof__free(bp);
}

/* A function call: the calling command becomes a function node, its body below. */
static void test_function_frames(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w w;
	const struct bash_node *call, *body;
	uint64_t t = 5000;

	w_begin(&w, 100, 1);
	w_hello(&w, bp, TSA_HELLO_START, t, 1, 0, 0, 0, 0);
	w_text(&w, bp, 1, "f 1");
	w_text(&w, bp, 2, "f");
	w_text(&w, bp, 3, "lib.sh");
	w_text(&w, bp, 4, "echo in f");
	w_text(&w, bp, 5, "echo after");
	for (int i = 0; i < 37; i++) {
		struct tsa_push *p;
		struct tsa_pop *q;

		w_cmd(&w, bp, t, 10, 1);
		p = w_rec(&w, bp, sizeof(*p), TSA_R_PUSH, TSA_FR_FUNC, 2);
		p->t = t + 10;
		p->name = 2;
		p->file = 3;
		w_cmd(&w, bp, t + 20, 3, 4);
		q = w_rec(&w, bp, sizeof(*q), TSA_R_POP, 0, 0);
		q->t = t + 100;
		t += 100;
	}
	w_cmd(&w, bp, t, 11, 5);
	w_end(&w, bp, t + 5);
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);
	call = find(bp, "f 1", 10);
	body = find(bp, "echo in f", 3);
	assert_non_null(call);
	assert_non_null(body);
	assert_int_equal(call->kind, BK_FUNCTION);
	assert_string_equal(call->file, "lib.sh");
	assert_int_equal(call->count, 37);
	assert_ptr_equal(body->parent, call);
	assert_int_equal(body->count, 37);
	assert_int_equal(body->raw_wall_ns, 37 * 80);
	assert_int_equal(call->raw_wall_ns, 37 * 100);
	bashprof__free(bp);
}

/* A subshell forked without a DEBUG trap, and its child stream below it. */
static void test_fork_child(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w p, c;
	struct tsa_fork *f;
	const struct bash_node *sub, *inner;

	w_begin(&p, 100, 1);
	w_hello(&p, bp, TSA_HELLO_START, 1000, 1, 0, 0, 0, 0);
	w_text(&p, bp, 1, "echo 0");
	w_text(&p, bp, 2, "( sleep 0.12 )");
	w_text(&p, bp, 3, "echo 3");
	w_cmd(&p, bp, 2000, 1, 1);
	f = w_rec(&p, bp, sizeof(*f), TSA_R_FORK, TSA_FF_ORPHAN, 2);
	f->t = 3000;
	f->index = 0;
	f->text = 2;
	w_flush(&p, bp); /* the parent flushes before it forks */

	w_begin(&c, 101, 9);
	w_hello(&c, bp, TSA_HELLO_FORK, 3000, 100, 1, 0, 0x82, 0);
	w_text(&c, bp, 1, "sleep 0.12");
	w_cmd(&c, bp, 4000, 2, 1);
	w_end(&c, bp, 120004000);
	w_flush(&c, bp);

	w_cmd(&p, bp, 120010000, 3, 3);
	w_end(&p, bp, 120020000);
	w_flush(&p, bp);
	bashprof__finish(bp, NULL, 0);

	sub = find(bp, "( sleep 0.12 )", 2);
	inner = find(bp, "sleep 0.12", 2);
	assert_non_null(sub);
	assert_non_null(inner);
	assert_int_equal(sub->kind, BK_SUBSHELL);
	assert_ptr_equal(inner->parent, sub);
	assert_int_equal(sub->raw_wall_ns, 120010000 - 3000);
	assert_int_equal(inner->raw_wall_ns, 120000000);
	assert_int_equal(find(bp, "echo 0", 1)->raw_wall_ns, 1000);
	assert_int_equal(bashprof__quality(bp)->streams, 2);
	assert_int_equal(bashprof__quality(bp)->unterminated, 0);
	bashprof__free(bp);
}

/* A missing datagram is seen through the sequence numbers. */
static void test_loss_counted(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w w;

	w_begin(&w, 100, 1);
	w_hello(&w, bp, TSA_HELLO_START, 1, 1, 0, 0, 0, 0);
	w_text(&w, bp, 1, ":");
	w_flush(&w, bp);
	for (int i = 0; i < 5; i++)
		w_cmd(&w, bp, 10 + i, 1, 1);
	w_flush(&w, NULL); /* lost */
	w_cmd(&w, bp, 100, 1, 1);
	w_end(&w, bp, 200);
	w_flush(&w, bp);
	/* A replayed datagram is refused. */
	w.seq -= 2;
	w_cmd(&w, bp, 300, 1, 1);
	w_end(&w, bp, 400);
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);
	assert_int_equal(bashprof__quality(bp)->lost_records, 5);
	assert_int_equal(bashprof__quality(bp)->bad_datagrams, 1);
	assert_int_equal(find(bp, ":", 1)->count, 1);
	bashprof__free(bp);
}

/* Garbage, truncations and bit flips of a valid stream: counted, never a crash. */
/* A stream that is not the script's and names no parent (a forged one). */
static void w_stranger(struct w *w, struct bashprof *bp, uint32_t pid)
{
	w_begin(w, pid, 1);
	w_hello(w, bp, TSA_HELLO_START, 1000, 1, 0, 0, 0, 0)->hflags = 0;
}

/* A 240-byte text of its own for each k. */
static const char *long_text(char *buf, unsigned k)
{
	int n = snprintf(buf, TSA_WIRE_TEXT_MAX + 1, "t%u ", k);

	memset(buf + n, 'x', (size_t)(TSA_WIRE_TEXT_MAX - n));
	buf[TSA_WIRE_TEXT_MAX] = '\0';
	return buf;
}

/*
 * Issue 23: text id 65535 costs what one text costs, not a table sized by
 * the id (512 KiB a stream), and thousands of such streams stay small.
 */
static void test_forged_ids_bounded(void **state)
{
	struct bashprof *bp = bashprof__new();
	const struct bash_quality *q = bashprof__quality(bp);
	struct w w;

	w_begin(&w, 100, 7);
	w_hello(&w, bp, TSA_HELLO_START, 1000, 1, 0, 0, 0, 0);
	w_text(&w, bp, 65535, "echo high");
	w_cmd(&w, bp, 2000, 3, 65535);
	w_end(&w, bp, 3000);
	w_flush(&w, bp);
	assert_true(q->mem_bytes < 64 << 10);
	for (uint32_t pid = 1000; pid < 4000; pid++) {
		w_stranger(&w, bp, pid);
		w_text(&w, bp, 65535, "x");
		w_flush(&w, bp);
	}
	bashprof__finish(bp, NULL, 0);
	assert_int_equal(q->streams, 3001);
	assert_int_equal(q->limit_drops, 0);
	/* About 700 bytes a stream (its state, a node, a slot in each table); 1.5 GiB before. */
	assert_true(q->mem_bytes < 4 << 20);
	assert_non_null(find(bp, "echo high", 3));
	assert_int_equal(find(bp, "echo high", 3)->count, 1);
	bashprof__free(bp);
}

/* One stream's ids and frames: past the limits, dropped and counted; TEXT_RESET starts over. */
static void test_stream_limits(void **state)
{
	struct bashprof *bp = bashprof__new();
	const struct bash_quality *q = bashprof__quality(bp);
	struct w w;
	char buf[TSA_WIRE_TEXT_MAX + 1];
	uint64_t t = 1000;

	w_begin(&w, 100, 7);
	w_hello(&w, bp, TSA_HELLO_START, t, 1, 0, 0, 0, 0);
	for (unsigned k = 1; k <= BASHPROF_STREAM_IDS + 1000; k++)
		w_text(&w, bp, k, long_text(buf, k));
	w_flush(&w, bp);
	assert_int_equal(q->limit_drops, 1000);
	assert_int_equal(q->bad_records, 0);
	/* A held id works; one whose definition was dropped is a drop too, not a bad record. */
	w_cmd(&w, bp, t += 100, 1, 1);
	w_cmd(&w, bp, t += 100, 2, BASHPROF_STREAM_IDS);
	w_cmd(&w, bp, t += 100, 3, BASHPROF_STREAM_IDS + 1);
	w_flush(&w, bp);
	assert_int_equal(q->limit_drops, 1001);
	assert_non_null(find(bp, long_text(buf, 1), 1));
	assert_non_null(find(bp, long_text(buf, BASHPROF_STREAM_IDS), 2));
	/* The builtin starts over: the ids are free again, and an unknown id is malformed. */
	w_rec(&w, bp, sizeof(struct tsa_rec), TSA_R_TEXT_RESET, 0, 0);
	w_text(&w, bp, 60000, "f");
	w_cmd(&w, bp, t += 100, 4, 60000);
	w_cmd(&w, bp, t += 100, 5, 2);
	w_flush(&w, bp);
	assert_int_equal(q->limit_drops, 1001);
	assert_int_equal(q->bad_records, 1);
	/* Frames: the builtin keeps 512, a forged stream pushes 3,000. */
	for (int i = 0; i < 3000; i++) {
		struct tsa_push *p = w_rec(&w, bp, sizeof(*p), TSA_R_PUSH, TSA_FR_FUNC, 6);

		p->t = t += 100;
		p->name = 60000;
		w_cmd(&w, bp, t += 100, 7, 60000);
	}
	w_end(&w, bp, t += 100);
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);
	assert_int_equal(q->limit_drops, 1001 + 3000 - (BASHPROF_STREAM_LEVELS - 1));
	assert_true(q->mem_bytes < 8 << 20);
	bashprof__free(bp);
}

/*
 * Streams that each stay within their limits hold the profile at its
 * total: 80 streams of 8,192 distinct 240-byte texts (160 MB of records)
 * would take about 200 MiB; what passes 128 MiB is dropped and counted,
 * and what came before it is intact.
 */
static void test_total_limit(void **state)
{
	struct bashprof *bp = bashprof__new();
	const struct bash_quality *q = bashprof__quality(bp);
	struct w w, root;
	char buf[TSA_WIRE_TEXT_MAX + 1];
	unsigned k = 0;

	w_begin(&root, 100, 7);
	w_hello(&root, bp, TSA_HELLO_START, 1000, 1, 0, 0, 0, 0);
	w_text(&root, bp, 1, "echo before");
	w_cmd(&root, bp, 2000, 3, 1);
	w_flush(&root, bp);
	for (uint32_t pid = 1000; pid < 1080; pid++) {
		w_stranger(&w, bp, pid);
		for (uint32_t id = 1; id <= BASHPROF_STREAM_IDS; id++)
			w_text(&w, bp, id, long_text(buf, k++));
		w_flush(&w, bp);
	}
	assert_true(q->limit_drops > 0);
	assert_true(q->mem_bytes <= BASHPROF_MEM_MAX);
	assert_true(q->mem_bytes > BASHPROF_MEM_MAX - (1 << 20));
	/* The script's own stream goes on with what it holds. */
	w_cmd(&root, bp, 3000, 4, 1);
	w_end(&root, bp, 4000);
	w_flush(&root, bp);
	bashprof__finish(bp, NULL, 0);
	assert_int_equal(find(bp, "echo before", 3)->count, 1);
	/* Streams that began past the limit were dropped too: the rest never ended. */
	assert_true(q->streams < 81);
	assert_int_equal(q->unterminated, q->streams - 1);
	bashprof__free(bp);
}

static void test_hostile_input(void **state)
{
	struct w w;
	unsigned char copy[TSA_WIRE_MAX_CHUNK];
	size_t len;
	uint64_t bad = 0;

	w_begin(&w, 100, 1);
	w_hello(&w, NULL, TSA_HELLO_START, 1, 1, 0, 0, 0, 0);
	w_text(&w, NULL, 1, "echo hi");
	w_text(&w, NULL, 2, "f");
	for (int i = 0; i < 20; i++) {
		struct tsa_push *p;

		w_cmd(&w, NULL, 10 + i, 1, (uint32_t)(i % 3));
		p = w_rec(&w, NULL, sizeof(*p), TSA_R_PUSH, (uint8_t)(i % 6), 2);
		p->name = (uint32_t)i;
		w_rec(&w, NULL, sizeof(struct tsa_pop), TSA_R_POP, 0, (uint32_t)(i % 4));
	}
	w_end(&w, NULL, 100);
	len = w.len;
	{
		struct tsa_chunk c = {TSA_WIRE_MAGIC, TSA_WIRE_VERSION, sizeof(c), 100, 1, 0,
				      w.nrec};

		memcpy(w.buf, &c, sizeof(c));
	}
	srand(42);
	for (int round = 0; round < 3000; round++) {
		struct bashprof *bp = bashprof__new();

		memcpy(copy, w.buf, len);
		if (round % 3 == 0) {
			bashprof__feed(bp, copy, (size_t)rand() % (len + 1));
		} else if (round % 3 == 1) {
			for (int k = 0; k < 1 + round % 7; k++)
				copy[(size_t)rand() % len] ^= (unsigned char)(1u << (rand() % 8));
			bashprof__feed(bp, copy, len);
			bashprof__feed(bp, copy, len);
		} else {
			for (size_t k = sizeof(struct tsa_chunk); k < len; k++)
				copy[k] = (unsigned char)rand();
			bashprof__feed(bp, copy, len);
		}
		bashprof__finish(bp, NULL, 0);
		bad += bashprof__quality(bp)->bad_records + bashprof__quality(bp)->bad_datagrams +
		       bashprof__quality(bp)->lost_records;
		bashprof__free(bp);
	}
	assert_true(bad > 0);
}

/*
 * Each trap run costs the base, plus what its record says the tail of the
 * run before it paid (terminal hand-back, job-table walk). A span holds the
 * part of its closing trap run before the clock read (half, by default)
 * and the rest of the one before; the last, closed by the exit, only that
 * rest. The script's total holds every trap run, whole.
 */
static void test_tail_costs(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w w;
	struct tsa_hello *h;
	const struct bash_node *a, *b, *c, *d;

	w_begin(&w, 100, 1);
	h = w_hello(&w, bp, TSA_HELLO_START, 0, 1, 0, 0, 0, 1000);
	h->cal[TSA_COST_TTY].wall_ns = h->cal[TSA_COST_TTY].cpu_ns = 500;
	h->cal[TSA_COST_JOBS].wall_ns = h->cal[TSA_COST_JOBS].cpu_ns = 100;
	w_text(&w, bp, 1, "a");
	w_text(&w, bp, 2, "b");
	w_text(&w, bp, 3, "c");
	w_text(&w, bp, 4, "d");
	w_cmdf(&w, bp, 10000, 1, 1, 0);
	w_cmdf(&w, bp, 20000, 2, 2, 0);
	w_cmdf(&w, bp, 30000, 3, 3, TSA_TAIL_TTY);
	w_cmdf(&w, bp, 40000, 4, 4, TSA_TAIL_TTY | TSA_TAIL_JOBS);
	w_end(&w, bp, 50000);
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);
	a = find(bp, "a", 1);
	b = find(bp, "b", 2);
	c = find(bp, "c", 3);
	d = find(bp, "d", 4);
	assert_int_equal(a->wall_ns, 10000 - 1000);
	assert_int_equal(b->wall_ns, 10000 - 1500);
	assert_int_equal(c->wall_ns, 10000 - 1600);
	assert_int_equal(d->wall_ns, 10000 - 500);
	assert_int_equal(a->cpu_ns, 5000 - 1000);
	assert_int_equal(c->cpu_ns, 5000 - 1600);
	assert_int_equal(c->cor_cpu_ns, 1600);
	assert_int_equal(bashprof__total(bp)->commands, 4);
	assert_int_equal(bashprof__total(bp)->self_wall_ns, 50000 - 5100);
	assert_int_equal(bashprof__total(bp)->raw_cpu_ns, 25000);
	assert_int_equal(bashprof__total(bp)->cpu_ns, 25000 - 5100);
	assert_true(bashprof__quality(bp)->calibrated);
	assert_int_equal(bashprof__quality(bp)->cal[BASH_COST_TTY].cpu_ns, 500);
	assert_int_equal(bashprof__quality(bp)->stretch_milli, 1000);
	bashprof__free(bp);
}

/* A trap run's timed parts (SPAN) and its start-up rest, at the speed the timed parts show. */
static void w_span(struct w *w, struct bashprof *bp, uint8_t flags, uint32_t ns)
{
	w_rec(w, bp, sizeof(struct tsa_rec), TSA_R_SPAN, flags, ns);
}

static void w_cmd_in_run(struct w *w, struct bashprof *bp, uint64_t t, uint32_t line, uint32_t text)
{
	struct tsa_cmd *c = w_rec(w, bp, sizeof(*c), TSA_R_CMD, 0, line);

	c->t = t;
	c->cpu = t / 2;
	c->text = text;
}

static void test_timed_spans(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w w;
	struct tsa_hello *h;
	const struct bash_node *a, *b, *c;

	w_begin(&w, 100, 1);
	h = w_hello(&w, bp, TSA_HELLO_START, 0, 1, 0, 0, 0, 100);
	h->cal[TSA_COST_TTY].wall_ns = h->cal[TSA_COST_TTY].cpu_ns = 40;
	h->cal_pre_permille = 500;
	h->span_med_ns = 1000;
	h->span_tty_ns = 500;
	w_text(&w, bp, 1, "a");
	w_text(&w, bp, 2, "b");
	w_text(&w, bp, 3, "c");
	/* The first run: its head (1000), half the rest before the clock read (50). */
	w_span(&w, bp, TSA_RUN, 1000);
	w_cmd_in_run(&w, bp, 10000, 1, 1);
	/*
	 * Twice as slow as at start-up: the rest (100) costs 200, plus 2000
	 * timed, plus 700 a part stalled on the CPU, charged but no speed.
	 */
	w_span(&w, bp, TSA_RUN, 2000);
	w_span(&w, bp, TSA_SF_STALL, 700);
	w_cmd_in_run(&w, bp, 20000, 2, 2);
	/* The terminal's part is in the tail: 1500 is start-up speed; rest 50 + 50 + 40. */
	w_span(&w, bp, TSA_RUN | TSA_TAIL_TTY, 1500);
	w_cmd_in_run(&w, bp, 30000, 3, 3);
	/* The last tail (300), then the rest after the clock read (50). */
	w_span(&w, bp, TSA_SF_GUESSED, 300);
	/* A second of trap in one record is no trap run: refused, not charged. */
	w_span(&w, bp, 0, 2000000000u);
	w_end(&w, bp, 40000);
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);
	a = find(bp, "a", 1);
	b = find(bp, "b", 2);
	c = find(bp, "c", 3);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal(a->cor_cpu_ns, 2900);
	assert_int_equal(a->cpu_ns, 5000 - 2900);
	assert_int_equal(a->wall_ns, 10000 - 2900);
	assert_int_equal(b->cor_cpu_ns, 1640);
	assert_int_equal(c->cor_cpu_ns, 350);
	assert_int_equal(bashprof__quality(bp)->timed_runs, 3);
	assert_int_equal(bashprof__quality(bp)->timed_ns, 4800);
	assert_int_equal(bashprof__quality(bp)->stall_ns, 700);
	assert_int_equal(bashprof__quality(bp)->guessed_parts, 1);
	assert_int_equal(bashprof__quality(bp)->bad_records, 1);
	assert_int_equal(bashprof__total(bp)->commands, 3);
	assert_int_equal(bashprof__total(bp)->cpu_ns, 20000 - (1050 + 2900 + 1640 + 350));
	bashprof__free(bp);
}

/*
 * Two pipeline parts run side by side while their parent waits in one
 * command: it pays their trap CPU, both, and in wall time the slower one's.
 */
static void test_waited_children(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w p, c1, c2;
	struct tsa_fork *f;
	const struct bash_node *x;

	w_begin(&p, 100, 1);
	w_hello(&p, bp, TSA_HELLO_START, 0, 1, 0, 0, 0, 1000);
	w_text(&p, bp, 1, "a | b");
	w_text(&p, bp, 2, "next");
	w_cmd(&p, bp, 1000, 10, 1);
	f = w_rec(&p, bp, sizeof(*f), TSA_R_FORK, 0, 10);
	f->t = 2000;
	f->index = 0;
	w_flush(&p, bp);
	f = w_rec(&p, bp, sizeof(*f), TSA_R_FORK, 0, 10);
	f->t = 2100;
	f->index = 1;
	f->pipe = 1;
	w_flush(&p, bp);

	w_begin(&c1, 101, 5);
	w_hello(&c1, bp, TSA_HELLO_FORK, 2000, 100, 1, 0, 0x10, 1000);
	w_text(&c1, bp, 1, "a");
	for (int i = 0; i < 5; i++)
		w_cmd(&c1, bp, 3000 + i * 1000, 10, 1);
	w_begin(&c2, 102, 6);
	w_hello(&c2, bp, TSA_HELLO_FORK, 2100, 100, 1, 1, 0x10, 1000);
	w_text(&c2, bp, 1, "b");
	for (int i = 0; i < 2; i++)
		w_cmd(&c2, bp, 3000 + i * 1000, 10, 1);
	w_end(&c2, bp, 9000);
	w_flush(&c2, bp);
	w_end(&c1, bp, 10000);
	w_flush(&c1, bp);

	w_cmd_cc(&p, bp, 13000, 11, 2, 20000);
	w_end(&p, bp, 14000);
	w_flush(&p, bp);
	bashprof__finish(bp, NULL, 0);
	x = find(bp, "a | b", 10);
	assert_non_null(x);
	/* Its own trap run, and the slower child's five. */
	assert_int_equal(x->cor_wall_ns, 1000 + 5000);
	assert_int_equal(x->wall_ns, 12000 - 6000);
	/* Its own trap run, and both children's seven. */
	assert_int_equal(x->cor_cpu_ns, 1000 + 7000);
	assert_int_equal(x->cpu_ns, 6000 + 20000 - 8000);
	assert_int_equal(bashprof__total(bp)->commands, 2 + 5 + 2);
	bashprof__free(bp);
}

/*
 * A background child is paid for by its parent's CPU when reaped, and in
 * wall time by a `wait` that waited for it: here half of its life.
 */
static void test_background_child(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w p, c;
	struct tsa_fork *f;
	const struct bash_node *wt, *echo;

	w_begin(&p, 100, 1);
	w_hello(&p, bp, TSA_HELLO_START, 0, 1, 0, 0, 0, 1000);
	w_text(&p, bp, 1, "loop &");
	w_text(&p, bp, 2, "echo x");
	w_text(&p, bp, 3, "wait");
	w_text(&p, bp, 4, "done");
	w_cmd(&p, bp, 1000, 1, 1);
	f = w_rec(&p, bp, sizeof(*f), TSA_R_FORK, 0, 1);
	f->t = 1500;
	f->index = 0;
	w_flush(&p, bp);

	w_begin(&c, 201, 3);
	w_hello(&c, bp, TSA_HELLO_FORK, 1500, 100, 1, 0, 0x01, 1000);
	w_text(&c, bp, 1, ":");
	for (int i = 0; i < 10; i++)
		w_cmd(&c, bp, 2000 + i * 1000, 1, 1);
	w_end(&c, bp, 101500);
	w_flush(&c, bp);

	w_cmd(&p, bp, 2000, 2, 2);
	w_cmd(&p, bp, 51500, 3, 3);
	w_cmd_cc(&p, bp, 102000, 4, 4, 30000);
	w_end(&p, bp, 103000);
	w_flush(&p, bp);
	bashprof__finish(bp, NULL, 0);
	wt = find(bp, "wait", 3);
	echo = find(bp, "echo x", 2);
	assert_non_null(wt);
	assert_int_equal(find(bp, "loop &", 1)->kind, BK_BACKGROUND);
	/* echo ran beside the child: only its own trap run. */
	assert_int_equal(echo->cor_wall_ns, 1000);
	assert_int_equal(wt->cor_wall_ns, 1000 + 5000);
	assert_int_equal(wt->wall_ns, 50500 - 6000);
	assert_int_equal(wt->cor_cpu_ns, 1000 + 10000);
	assert_int_equal(wt->cpu_ns, (51000 - 25750) + 30000 - 11000);
	bashprof__free(bp);
}

/*
 * A function's body: the trap run after the return starts with the POP
 * (TSA_RUN on whatever record comes first), so the body's last span pays
 * for it, not the call.
 */
static void test_function_body_corrected(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w w;
	struct tsa_push *p;
	struct tsa_pop *q;
	struct tsa_cmd *c;
	const struct bash_node *call, *body, *after;

	w_begin(&w, 100, 1);
	w_hello(&w, bp, TSA_HELLO_START, 0, 1, 0, 0, 0, 1000);
	w_text(&w, bp, 1, "f");
	w_text(&w, bp, 2, "body");
	w_text(&w, bp, 3, "after");
	w_cmd(&w, bp, 10000, 10, 1);
	p = w_rec(&w, bp, sizeof(*p), TSA_R_PUSH, TSA_FR_FUNC | TSA_RUN, 2);
	p->t = 20000;
	p->name = 1;
	w_cmd(&w, bp, 30000, 3, 2);
	q = w_rec(&w, bp, sizeof(*q), TSA_R_POP, TSA_RUN, 0);
	q->t = 40000;
	c = w_rec(&w, bp, sizeof(*c), TSA_R_CMD, 0, 11); /* the same trap run */
	c->t = 40000;
	c->cpu = 20000;
	c->text = 3;
	w_end(&w, bp, 50000);
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);
	call = find(bp, "f", 10);
	body = find(bp, "body", 3);
	after = find(bp, "after", 11);
	assert_int_equal(call->kind, BK_FUNCTION);
	assert_int_equal(body->cor_wall_ns, 1000);
	assert_int_equal(body->wall_ns, 9000);
	/* The call: its entry's trap run, its body's first, and the one after the return. */
	assert_int_equal(call->cor_wall_ns, 3000);
	assert_int_equal(after->cor_wall_ns, 500);
	assert_int_equal(bashprof__total(bp)->commands, 4);
	bashprof__free(bp);
}

/* What the builtin sends while it measures its cost (pid 0) is dropped, not counted as bad. */
static void test_calibration_chunks(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w w;

	w_begin(&w, 0, 0);
	w_cmd(&w, NULL, 10, 1, 1);
	w_cmd(&w, NULL, 20, 1, 1);
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);
	assert_int_equal(bashprof__quality(bp)->streams, 0);
	assert_int_equal(bashprof__quality(bp)->bad_datagrams, 0);
	assert_int_equal(bashprof__quality(bp)->unknown_streams, 0);
	assert_int_equal(bashprof__quality(bp)->lost_records, 0);
	bashprof__free(bp);
}

/*
 * Without the eBPF tree, a trap run's wall cost is its CPU cost stretched as
 * the start-up measurement found it stretched (waits for a CPU).
 */
static void test_wall_stretch(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w w;
	struct tsa_hello *h;

	w_begin(&w, 100, 1);
	h = w_hello(&w, bp, TSA_HELLO_START, 0, 1, 0, 0, 0, 1000);
	h->cal[TSA_COST_BASE].wall_ns = 1500;
	w_text(&w, bp, 1, "x");
	for (int i = 0; i < 10; i++)
		w_cmd(&w, bp, 10000 * (i + 1), 1, 1);
	w_end(&w, bp, 200000);
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);
	assert_int_equal(bashprof__quality(bp)->stretch_milli, 1500);
	assert_int_equal(find(bp, "x", 1)->cor_cpu_ns, 9 * 1000 + 500);
	assert_int_equal(find(bp, "x", 1)->cor_wall_ns, (9 * 1000 + 500) * 3 / 2);
	bashprof__free(bp);
}

/*
 * A script that ran on its CPU all along has its wall time corrected at
 * its own stretch (1), not at the run's average (3 here, as when only the
 * start-up measurement waited for a CPU): the total and the node agree.
 */
static void test_total_wall_own_stretch(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w w;
	struct tsa_hello *h;
	struct tsa_end *e;
	const struct bash_total *tot;

	w_begin(&w, 100, 1);
	h = w_hello(&w, bp, TSA_HELLO_START, 0, 1, 0, 0, 0, 1000);
	h->cal[TSA_COST_BASE].wall_ns = 3000;
	w_text(&w, bp, 1, "x");
	for (int i = 0; i < 10; i++) {
		struct tsa_cmd *c = w_rec(&w, bp, sizeof(*c), TSA_R_CMD, TSA_RUN, 1);

		c->t = c->cpu = 10000 * (uint64_t)(i + 1);
		c->text = 1;
	}
	e = w_rec(&w, bp, sizeof(*e), TSA_R_END, 0, 0);
	e->t = e->cpu = 110000;
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);
	tot = bashprof__total(bp);
	assert_int_equal(bashprof__quality(bp)->stretch_milli, 3000);
	assert_int_equal(tot->raw_self_wall_ns, 110000);
	/* Ten trap runs of 1000 ns of CPU each, at stretch 1. */
	assert_int_equal(tot->self_wall_ns, 110000 - 10 * 1000);
	assert_int_equal(tot->total_wall_ns, tot->self_wall_ns);
	assert_int_equal(find(bp, "x", 1)->cor_wall_ns, find(bp, "x", 1)->cor_cpu_ns);
	bashprof__free(bp);
}

/*
 * The flame graph: one stack per node, named as in bash.folded, valued by
 * the node's own time (its children's taken away), in the SVG renderer.
 */
static void test_flame(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct flame *fl = flame__new(), *fc = flame__new();
	struct w w;
	char *svg = NULL;
	size_t len = 0;
	FILE *f;

	w_begin(&w, 100, 1);
	w_hello(&w, bp, TSA_HELLO_START, 0, 1, 0, 0, 0, 0);
	w_text(&w, bp, 1, "f 1");
	w_text(&w, bp, 2, "echo in f");
	w_text(&w, bp, 3, "f");
	for (int i = 0; i < 3; i++) {
		struct tsa_push *p;
		struct tsa_pop *q;

		w_cmd(&w, bp, 1000 + i * 1000, 10, 1);
		p = w_rec(&w, bp, sizeof(*p), TSA_R_PUSH, TSA_FR_FUNC | TSA_RUN, 3);
		p->t = 1100 + i * 1000;
		p->name = 3;
		w_cmd(&w, bp, 1200 + i * 1000, 2, 2);
		q = w_rec(&w, bp, sizeof(*q), TSA_R_POP, TSA_RUN, 0);
		q->t = 2000 + i * 1000;
	}
	w_end(&w, bp, 4000);
	w_flush(&w, bp);
	bashprof__finish(bp, NULL, 0);
	assert_int_equal(bashprof__flame(bp, fl, false), 0);
	assert_int_equal(bashprof__flame(bp, fc, true), 0);
	/*
	 * Every node's own time, once: the calls' 3 x 200 ns, the bodies' 3 x
	 * 800 ns, the script's own 1000 ns before its first command: its wall.
	 */
	assert_int_equal(flame__total(fl), 3 * 200 + 3 * 800 + 1000);
	assert_int_equal(flame__total(fl), bashprof__total(bp)->self_wall_ns);
	assert_int_equal(flame__total(fc), bashprof__total(bp)->cpu_ns);
	f = open_memstream(&svg, &len);
	assert_non_null(f);
	assert_int_equal(flame__write_svg(fl, f, &(struct flame_svg_opts){.units = "ns"}), 0);
	fclose(f);
	assert_non_null(strstr(svg, "10: f 1"));
	assert_non_null(strstr(svg, "2: echo in f"));
	assert_non_null(strstr(svg, "function, source, eval"));
	free(svg);
	flame__free(fl);
	flame__free(fc);
	bashprof__free(bp);
}

/*
 * A bash that make ran through sh: its parent is no bash of the tree when
 * it begins, so it waits in limbo; at the end the process tree places it
 * below the make command, which pays for its trap runs. Ids are numbered
 * again, parents first.
 */
static void test_nested_through_programs(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w p, k, n;
	struct tsa_fork *f;
	struct tsa_exec *x;
	struct proc_acct procs[3] = {
	    {.pid = 101, .ppid = 100, .comm = "make", .start_ns = 1100, .end_ns = 19000},
	    {.pid = 102, .ppid = 101, .comm = "sh", .start_ns = 2000, .end_ns = 18000},
	    {.pid = 103, .ppid = 102, .comm = "bash", .start_ns = 4000, .end_ns = 11000},
	};
	struct run r = {.procs = procs, .nprocs = 3};
	const struct bash_node *make, *nested, *colon;

	w_begin(&p, 100, 1);
	w_hello(&p, bp, TSA_HELLO_START, 0, 1, 0, 0, 0, 1000);
	w_text(&p, bp, 1, "make");
	w_text(&p, bp, 2, "echo after");
	w_cmd(&p, bp, 1000, 5, 1);
	f = w_rec(&p, bp, sizeof(*f), TSA_R_FORK, 0, 5);
	f->t = 1100;
	w_flush(&p, bp);
	w_begin(&k, 101, 2); /* the fork that execs make */
	w_hello(&k, bp, TSA_HELLO_FORK, 1100, 100, 1, 0, 0, 1000);
	w_text(&k, bp, 1, "/usr/bin/make");
	x = w_rec(&k, bp, sizeof(*x), TSA_R_EXEC, 0, 1);
	x->t = 1200;
	w_flush(&k, bp);
	w_begin(&n, 103, 3); /* make -> sh -> bash */
	w_hello(&n, bp, TSA_HELLO_START, 5000, 102, 0, 0, 0, 1000)->hflags &= ~TSA_HF_ROOT;
	w_text(&n, bp, 1, ":");
	for (int i = 0; i < 3; i++)
		w_cmd(&n, bp, 6000 + i * 1000, 1, 1);
	w_end(&n, bp, 10000);
	w_flush(&n, bp);
	w_cmd(&p, bp, 20000, 6, 2);
	w_end(&p, bp, 21000);
	w_flush(&p, bp);
	bashprof__finish(bp, &r, 0);

	make = find(bp, "make", 5);
	colon = find(bp, ":", 1);
	assert_non_null(make);
	assert_non_null(colon);
	nested = colon->parent;
	assert_int_equal(nested->kind, BK_BASH);
	assert_ptr_equal(nested->parent, make);
	assert_int_equal(colon->count, 3);
	assert_int_equal(bashprof__quality(bp)->placed_streams, 1);
	assert_int_equal(bashprof__quality(bp)->orphan_streams, 0);
	/* Its trap runs: 500 + 1000 + 1000 + 500; make's own span: 1000 more. */
	assert_int_equal(nested->cor_wall_ns, 3000);
	assert_int_equal(make->cor_wall_ns, 1000 + 3000);
	for (size_t i = 0; i < bashprof__nodes(bp); i++) {
		const struct bash_node *nd = bashprof__node(bp, i);

		assert_int_equal(nd->id, i);
		if (nd->parent)
			assert_true(nd->parent->id < nd->id);
		assert_false(nd->dead);
	}
	bashprof__free(bp);
}

/*
 * A pipeline, run twice in a loop: the script launches `seq 3`, then
 * `grep x`, and waits for both in the second. The pipeline is one node
 * (count 2) holding the script's spans; below it each part holds its
 * processes' lives and the CPU time of each and of what it started.
 */
static void test_pipeline_node(void **state)
{
	struct bashprof *bp = bashprof__new();
	struct w p;
	struct tsa_fork *f;
	struct proc_acct procs[6] = {
	    {.pid = 101, .ppid = 100, .comm = "seq", .start_ns = 1100, .end_ns = 6000},
	    {.pid = 102, .ppid = 100, .comm = "grep", .start_ns = 1400, .end_ns = 8500},
	    {.pid = 103, .ppid = 102, .comm = "helper", .start_ns = 2000, .end_ns = 3000},
	    {.pid = 104, .ppid = 100, .comm = "seq", .start_ns = 11100, .end_ns = 16000},
	    {.pid = 105, .ppid = 100, .comm = "grep", .start_ns = 11400, .end_ns = 18500},
	    {.pid = 106, .ppid = 105, .comm = "helper", .start_ns = 12000, .end_ns = 13000},
	};
	struct run r = {.procs = procs, .nprocs = 6};
	const struct bash_node *pl, *seq, *grep, *next;

	for (int i = 0; i < 6; i++)
		procs[i].state_ns[TSA_ST_ONCPU] = i % 3 == 0 ? 2000 : i % 3 == 1 ? 1500 : 700;
	w_begin(&p, 100, 1);
	w_hello(&p, bp, TSA_HELLO_START, 0, 1, 0, 0, 0, 0);
	w_text(&p, bp, 1, "seq 3");
	w_text(&p, bp, 2, "grep x");
	w_text(&p, bp, 3, "next");
	for (int i = 0; i < 2; i++) {
		uint64_t o = (uint64_t)i * 10000;

		w_cmd(&p, bp, o + 1000, 4, 1);
		f = w_rec(&p, bp, sizeof(*f), TSA_R_FORK, 0, 4);
		f->t = o + 1100;
		f->index = (uint32_t)i * 2;
		f->pipe = 0;
		w_cmd(&p, bp, o + 1300, 4, 2);
		f = w_rec(&p, bp, sizeof(*f), TSA_R_FORK, 0, 4);
		f->t = o + 1400;
		f->index = (uint32_t)i * 2 + 1;
		f->pipe = 1;
		w_cmd_cc(&p, bp, o + 9000, 5, 3, (uint64_t)(i + 1) * 5000);
	}
	w_end(&p, bp, 20000);
	w_flush(&p, bp);
	bashprof__finish(bp, &r, 0);

	seq = find(bp, "seq 3", 4);
	grep = find(bp, "grep x", 4);
	pl = find(bp, "seq 3 | grep x", 4);
	next = find(bp, "next", 5);
	assert_non_null(seq);
	assert_non_null(grep);
	assert_non_null(pl);
	assert_non_null(next);
	assert_int_equal(pl->kind, BK_PIPELINE);
	assert_ptr_equal(pl->parent, bashprof__root(bp));
	assert_ptr_equal(seq->parent, pl);
	assert_ptr_equal(grep->parent, pl);
	assert_true(seq->pipe_part && grep->pipe_part && !pl->pipe_part);
	assert_int_equal(pl->count, 2);
	assert_int_equal(seq->count, 2);
	/* The script's time: from the launch of seq to the next command, twice. */
	assert_int_equal(pl->wall_ns, 2 * 8000);
	assert_int_equal(pl->cpu_ns, 2 * 4000 + 2 * 5000);
	/* The parts': their processes' lives, and their CPU with what they started. */
	assert_int_equal(seq->wall_ns, 2 * 4900);
	assert_int_equal(seq->cpu_ns, 2 * 2000);
	assert_int_equal(grep->wall_ns, 2 * 7100);
	assert_int_equal(grep->cpu_ns, 2 * (1500 + 700));
	assert_int_equal(grep->nprocs, 1);
	assert_int_equal(grep->procs[0].count, 2);
	/* The next command holds its own spans only (up to the loop's next turn, and the end). */
	assert_int_equal(next->wall_ns, (11000 - 9000) + (20000 - 19000));
	for (size_t i = 0; i < bashprof__nodes(bp); i++) {
		const struct bash_node *nd = bashprof__node(bp, i);

		assert_int_equal(nd->id, i);
		if (nd->parent) {
			assert_true(nd->parent->id < nd->id);
			assert_int_equal(nd->depth, nd->parent->depth + 1);
		}
	}
	bashprof__free(bp);
}

/* A run gives its bash profile up with its detail (series.c: only the last run keeps it). */
static void test_run_detail_frees_profile(void **state)
{
	struct run r = {0};

	r.bash = bashprof__new();
	assert_non_null(r.bash);
	run__free_detail(&r);
	assert_null(r.bash); /* and ASan sees no leak */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loop_collapses),
	    cmocka_unit_test(test_function_frames),
	    cmocka_unit_test(test_fork_child),
	    cmocka_unit_test(test_loss_counted),
	    cmocka_unit_test(test_hostile_input),
	    cmocka_unit_test(test_forged_ids_bounded),
	    cmocka_unit_test(test_stream_limits),
	    cmocka_unit_test(test_total_limit),
	    cmocka_unit_test(test_tail_costs),
	    cmocka_unit_test(test_timed_spans),
	    cmocka_unit_test(test_waited_children),
	    cmocka_unit_test(test_background_child),
	    cmocka_unit_test(test_calibration_chunks),
	    cmocka_unit_test(test_wall_stretch),
	    cmocka_unit_test(test_total_wall_own_stretch),
	    cmocka_unit_test(test_function_body_corrected),
	    cmocka_unit_test(test_flame),
	    cmocka_unit_test(test_nested_through_programs),
	    cmocka_unit_test(test_pipeline_node),
	    cmocka_unit_test(test_run_detail_frees_profile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
