// SPDX-License-Identifier: MIT
/*
 * The bash record decoder: what any process of a profiled script can send
 * to tsarun's socket, and the pure-bash fallback's lines.
 *
 * Input: a first byte 'F' makes the rest one fallback file; otherwise the
 * input is a sequence of datagrams, each a 16-bit little-endian length and
 * that many bytes (tests/fuzz/bash-seeds.py writes real streams so).
 * Everything the profile then produces is rendered.
 */
#include "bashprof.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bashprof *bp = bashprof__new();
	struct bashprof_print_opts po = {.color = true, .top = -1, .min_percent = -1, .width = 100};
	const struct bash_quality *q;

	if (!bp)
		abort();
	if (size && data[0] == 'F') {
		FILE *f = fmemopen((void *)(data + 1), size - 1, "r");

		if (size > 1 && f) {
			bashprof__feed_fallback(bp, f, 1000000000ll);
			fclose(f);
		}
	} else {
		size_t off = 0;

		while (off + 2 <= size) {
			size_t len = (size_t)data[off] | (size_t)data[off + 1] << 8;
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
	}
	bashprof__finish(bp, NULL, 0);
	for (size_t i = 0; i < bashprof__nodes(bp); i++) {
		const struct bash_node *n = bashprof__node(bp, i);

		if (!n || (i && (!n->parent || n->parent->id >= n->id)))
			abort(); /* parents come before their children */
	}
	q = bashprof__quality(bp);
	if (q->bad_datagrams > q->datagrams)
		abort();
	bashprof__write_folded(bp, fuzz_sink());
	bashprof__print(bp, fuzz_sink(), &po);
	bashprof__free(bp);
	return 0;
}
