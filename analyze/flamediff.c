// SPDX-License-Identifier: MIT
/* Differential flame graphs of a comparison (see flamediff.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "flamediff.h"
#include "metrics.h"
#include "parts.h"
#include "run.h"
#include "tsarun.h"
#include "vec.h"

#define MAX_FRAMES 512

const char *flamediff_view_name(enum flamediff_view v)
{
	static const char *const names[] = {"offcpu", "oncpu", "wall"};

	return v < FLAMEDIFF_NVIEWS ? names[v] : "unknown";
}

static size_t counting(const struct run *r, size_t n, bool *stacks)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (!metric_run_counts(&r[i]))
			continue;
		k++;
		if (!r[i].parts || !r[i].parts->stacks)
			*stacks = false;
	}
	return k;
}

int flamediff_check(const struct run *b, size_t nb, const struct run *n, size_t nn, char *why,
		    size_t whylen)
{
	bool sb = true, sn = true;
	size_t kb = counting(b, nb, &sb), kn = counting(n, nn, &sn);

	if (!kb || !kn || !sb || !sn) {
		snprintf(why, whylen, "%s has %s", !kb || !sb ? "the baseline" : "the new side",
			 (!kb || !kn) ? "no run that counts"
				      : "runs without stacks (record with --flame)");
		return -ENODATA;
	}
	return 0;
}

/* One line of the diff: the stack (its frames as folded text) and each side's sum over its runs. */
struct line {
	char *key;
	double v[2];
};

struct lines {
	struct line *v;
	size_t n, cap;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->key, ((const struct line *)b)->key);
}

static bool in_view(enum flamediff_view v, int state)
{
	switch (v) {
	case FLAMEDIFF_OFFCPU:
		return state == TSA_ST_SLEEP || state == TSA_ST_DISK;
	case FLAMEDIFF_ONCPU:
		return state == TSA_ST_ONCPU;
	default:
		return true;
	}
}

/* "proc/child:thread" -> "proc;child;thread", then the state's frame, then the stack. */
static char *key_of(const struct part *x, enum flamediff_view v)
{
	size_t tl = strlen(x->thread), sl = strlen(x->stack);
	char *k = malloc(tl + sl + 8), *p;

	if (!k)
		return NULL;
	memcpy(k, x->thread, tl + 1);
	for (p = k; *p; p++)
		if (*p == '/' || *p == ':' || *p == ';')
			*p = *p == ';' ? ',' : ';';
	if (v != FLAMEDIFF_ONCPU && (x->state == TSA_ST_SLEEP || x->state == TSA_ST_DISK) &&
	    x->stack[0] != '[')
		strcat(k, x->state == TSA_ST_SLEEP ? ";[S]" : ";[D]");
	strcat(k, ";");
	strcat(k, x->stack);
	return k;
}

static int collect(struct lines *l, const struct run *r, size_t n, int side, enum flamediff_view v)
{
	for (size_t i = 0; i < n; i++) {
		const struct run_parts *p = r[i].parts;

		if (!metric_run_counts(&r[i]) || !p)
			continue;
		for (size_t j = 0; j < p->n; j++) {
			const struct part *x = &p->v[j];
			struct line *e;

			if (x->kind != PART_STACK || !in_view(v, x->state))
				continue;
			e = vec_grow(l->v, &l->cap, l->n + 1, sizeof(*e), 256);
			if (!e)
				return -ENOMEM;
			l->v = e;
			e = &l->v[l->n];
			e->key = key_of(x, v);
			if (!e->key)
				return -ENOMEM;
			e->v[side] = (double)x->ns;
			e->v[!side] = 0;
			l->n++;
		}
	}
	return 0;
}

int flamediff_write(FILE *f, const struct run *b, size_t nb, const struct run *n, size_t nn,
		    enum flamediff_view v, enum flamediff_format fmt, const char *command)
{
	bool svg = fmt != FLAMEDIFF_FOLDED;
	static const char *const titles[] = {"Off-CPU time", "On-CPU time", "Wall time"};
	bool sb = true, sn = true;
	size_t kb = counting(b, nb, &sb), kn = counting(n, nn, &sn), k = 0;
	struct lines l = {0};
	struct flame *fl = NULL;
	int ret;

	if (!kb || !kn)
		return -ENODATA;
	ret = collect(&l, b, nb, 0, v);
	if (!ret)
		ret = collect(&l, n, nn, 1, v);
	if (ret)
		goto out;
	/* Merge the lines of one stack; each side's sum over its runs becomes a mean per run. */
	qsort(l.v, l.n, sizeof(*l.v), by_key);
	for (size_t i = 0; i < l.n; i++) {
		if (k && !strcmp(l.v[k - 1].key, l.v[i].key)) {
			l.v[k - 1].v[0] += l.v[i].v[0];
			l.v[k - 1].v[1] += l.v[i].v[1];
			free(l.v[i].key);
			continue;
		}
		l.v[k++] = l.v[i];
	}
	l.n = k;
	if (svg && !(fl = flame__new())) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; !ret && i < l.n; i++) {
		uint64_t base = (uint64_t)llround(l.v[i].v[0] / (double)kb),
			 new = (uint64_t)llround(l.v[i].v[1] / (double)kn);

		if (!base && !new)
			continue;
		if (!svg) {
			if (fprintf(f, "%s %llu %llu\n", l.v[i].key, (unsigned long long)base,
				    (unsigned long long)new) < 0)
				ret = -EIO;
			continue;
		}
		{
			const char *frames[MAX_FRAMES];
			size_t nf = 0;

			/* split in place: the key is ours */
			for (char *s = l.v[i].key, *t; s && nf < MAX_FRAMES; s = t) {
				t = strchr(s, ';');
				if (t)
					*t++ = '\0';
				frames[nf++] = s;
			}
			ret = flame__add_diff(fl, frames, nf, base, new);
		}
	}
	if (!ret && fmt == FLAMEDIFF_JSON)
		ret = flame__write_json(fl, f, "ns");
	if (!ret && fmt == FLAMEDIFF_SVG) {
		char title[256], sub[512];

		snprintf(title, sizeof(title), "%s, baseline against new: red grew, blue shrank",
			 titles[v]);
		snprintf(sub, sizeof(sub), "%s: mean per run over %zu baseline and %zu new runs",
			 command ? command : "", kb, kn);
		ret = flame__write_svg(
		    fl, f,
		    &(struct flame_svg_opts){.title = title, .subtitle = sub, .units = "ns"});
	}
	if (!ret && ferror(f))
		ret = -EIO;
out:
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].key);
	free(l.v);
	flame__free(fl);
	return ret;
}
