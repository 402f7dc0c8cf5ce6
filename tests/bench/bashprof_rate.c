// SPDX-License-Identifier: MIT
/*
 * Post-processing rate of the bash profile: a generated stream (a script's
 * loop calling a function, with a subshell every 1000 iterations) is built
 * in memory, then fed to bashprof and timed. Prints records, seconds,
 * records per second, nodes, and the RSS the profile added.
 *   bashprof_rate [RECORDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bashprof.h"
#include "tsa_wire.h"

static unsigned char *stream;
static size_t slen, scap;
static size_t *dg_off;
static size_t ndg, capdg;

struct w {
	unsigned char buf[TSA_WIRE_MAX_CHUNK];
	size_t len;
	uint32_t pid, gen, seq, nrec;
};

static void w_flush(struct w *w)
{
	struct tsa_chunk c = {TSA_WIRE_MAGIC, TSA_WIRE_VERSION, sizeof(c), w->pid,
			      w->gen,	      w->seq,		w->nrec};

	if (!w->nrec)
		return;
	memcpy(w->buf, &c, sizeof(c));
	if (slen + w->len > scap) {
		scap = (scap + w->len) * 2;
		stream = realloc(stream, scap);
	}
	if (ndg == capdg) {
		capdg = capdg ? capdg * 2 : 1024;
		dg_off = realloc(dg_off, (capdg + 1) * sizeof(*dg_off));
	}
	dg_off[ndg++] = slen;
	memcpy(stream + slen, w->buf, w->len);
	slen += w->len;
	w->seq += w->nrec;
	w->nrec = 0;
	w->len = sizeof(struct tsa_chunk);
}

static void *w_rec(struct w *w, size_t len, uint8_t type, uint8_t flags, uint32_t arg)
{
	struct tsa_rec *r;

	if (w->len + len > sizeof(w->buf))
		w_flush(w);
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

static void w_text(struct w *w, uint32_t id, const char *s)
{
	size_t n = strlen(s), len = (sizeof(struct tsa_text) + n + 7) & ~(size_t)7;

	memcpy((char *)w_rec(w, len, TSA_R_TEXT, 0, id) + sizeof(struct tsa_text), s, n);
}

static void w_cmd(struct w *w, uint64_t t, uint32_t line, uint32_t text)
{
	struct tsa_cmd *c = w_rec(w, sizeof(*c), TSA_R_CMD, 0, line);

	c->t = t;
	c->cpu = t / 2;
	c->text = text;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	uint64_t target = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000, records = 0, t = 1000;
	struct w w = {.pid = 100, .gen = 1, .len = sizeof(struct tsa_chunk)};
	struct tsa_hello *h;
	struct bashprof *bp;
	long rss0;
	double t0, t1;

	h = w_rec(&w, sizeof(*h), TSA_R_HELLO, 0, TSA_HELLO_START);
	h->pid = 100;
	h->hflags = TSA_HF_ROOT;
	h->cal[TSA_COST_BASE].wall_ns = h->cal[TSA_COST_BASE].cpu_ns = 3000;
	h->hflags |= TSA_HF_CALIBRATED;
	w_text(&w, 1, "for i in \"${list[@]}\"");
	w_text(&w, 2, "process_item \"$i\"");
	w_text(&w, 3, "process_item");
	w_text(&w, 4, "lib.sh");
	w_text(&w, 5, "local x=$1");
	w_text(&w, 6, "[[ $x == *.tar ]]");
	w_text(&w, 7, "count=$((count + 1))");
	records = 8;
	for (uint64_t i = 0; records < target; i++) {
		struct tsa_push *p;

		w_cmd(&w, t += 3000, 20, 1);
		w_cmd(&w, t += 3000, 21, 2);
		p = w_rec(&w, sizeof(*p), TSA_R_PUSH, TSA_FR_FUNC, 5);
		p->t = t += 1000;
		p->name = 3;
		p->file = 4;
		w_cmd(&w, t += 3000, 6, 5);
		w_cmd(&w, t += 3000, 7, 6);
		w_cmd(&w, t += 3000, 8, 7);
		w_rec(&w, sizeof(struct tsa_pop), TSA_R_POP, 0, 0);
		records += 7;
	}
	w_rec(&w, sizeof(struct tsa_end), TSA_R_END, 0, 0);
	w_flush(&w);
	dg_off[ndg] = slen;

	rss0 = rss_kb();
	bp = bashprof__new();
	t0 = now();
	for (size_t i = 0; i < ndg; i++)
		bashprof__feed(bp, stream + dg_off[i], dg_off[i + 1] - dg_off[i]);
	bashprof__finish(bp, NULL, 0);
	t1 = now();
	printf("records %llu seconds %.4f rate %.0f nodes %zu datagrams %zu bad %llu rss_added_kb "
	       "%ld\n",
	       (unsigned long long)bashprof__quality(bp)->records, t1 - t0,
	       bashprof__quality(bp)->records / (t1 - t0), bashprof__nodes(bp), ndg,
	       (unsigned long long)(bashprof__quality(bp)->bad_records +
				    bashprof__quality(bp)->lost_records),
	       rss_kb() - rss0);
	bashprof__free(bp);
	free(stream);
	free(dg_off);
	return 0;
}
