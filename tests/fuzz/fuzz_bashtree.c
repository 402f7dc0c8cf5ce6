// SPDX-License-Identifier: MIT
/*
 * The bash record decoder and the tree building together: the records any
 * process of a profiled script can send, and the process tree the eBPF
 * probes saw, through bashprof__finish() (nested bash placed from the
 * process tree, processes attached to fork points, pipelines grouped,
 * exec'd streams closed at their process's end, the nodes renumbered).
 * fuzz_bashprof has no process tree: those paths run only here.
 *
 * Input (tests/fuzz/bash-seeds.py --tree writes real runs so):
 *   u64 origin     CLOCK_MONOTONIC of the run's start, little-endian
 *   u8  nprocs     then that many processes of 48 bytes each:
 *                  u32 pid, u32 ppid, i64 start_ns, i64 end_ns (relative
 *                  to origin), u64 on-CPU ns, u64 runqueue ns, char comm[8]
 *   then datagrams, each a u16 little-endian length and that many bytes.
 * Each process has one thread of the same figures.
 */
#include "bashprof.h"
#include "fuzz.h"
#include "run.h"

#define PROC_BYTES 48

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bashprof *bp = bashprof__new();
	struct bashprof_print_opts po = {.top = -1, .min_percent = -1, .max_depth = 3, .width = 80};
	struct run r = {0};
	size_t off = 9, np;

	if (!bp)
		abort();
	if (size < 9)
		goto out;
	r.start_mono_ns = le(data, 8);
	np = data[8];
	if (np > (size - off) / PROC_BYTES)
		np = (size - off) / PROC_BYTES;
	r.procs = calloc(np ? np : 1, sizeof(*r.procs));
	r.threads = calloc(np ? np : 1, sizeof(*r.threads));
	if (!r.procs || !r.threads)
		abort();
	for (size_t i = 0; i < np; i++, off += PROC_BYTES) {
		struct proc_acct *p = &r.procs[i];
		struct thread_acct *t = &r.threads[i];
		const uint8_t *d = data + off;

		p->pid = t->tid = t->pid = (uint32_t)le(d, 4);
		p->ppid = t->ppid = (uint32_t)le(d + 4, 4);
		p->start_ns = t->start_ns = (int64_t)le(d + 8, 8);
		p->end_ns = t->end_ns = (int64_t)le(d + 16, 8);
		p->state_ns[TSA_ST_ONCPU] = t->state_ns[TSA_ST_ONCPU] = le(d + 24, 8);
		p->state_ns[TSA_ST_RUNQ] = t->state_ns[TSA_ST_RUNQ] = le(d + 32, 8);
		memcpy(p->comm, d + 40, 8);
		memcpy(t->comm, d + 40, 8);
		p->threads = 1;
		p->exited = true;
	}
	r.nprocs = r.nthreads = np;
	while (off + 2 <= size) {
		size_t len = (size_t)le(data + off, 2);
		uint8_t *dgram;

		off += 2;
		if (len > size - off)
			len = size - off;
		/* A copy of exactly len bytes, as recv() would leave it to be read. */
		dgram = malloc(len ? len : 1);
		if (!dgram)
			abort();
		memcpy(dgram, data + off, len);
		bashprof__feed(bp, dgram, len);
		free(dgram);
		off += len;
	}
	bashprof__finish(bp, np ? &r : NULL, r.start_mono_ns);
	for (size_t i = 0; i < bashprof__nodes(bp); i++) {
		const struct bash_node *n = bashprof__node(bp, i);

		if (!n || n->id != i || (i && (!n->parent || n->parent->id >= n->id)))
			abort(); /* numbered in order, parents before their children */
	}
	bashprof__write_folded(bp, fuzz_sink());
	bashprof__print(bp, fuzz_sink(), &po);
out:
	free(r.procs);
	free(r.threads);
	bashprof__free(bp);
	return 0;
}
