// SPDX-License-Identifier: MIT
/*
 * The ring buffer reader (launcher/ringbuf.c) on real BPF ring buffers:
 * records written by a small BPF program (BPF_PROG_TYPE_SYSCALL, run with
 * BPF_PROG_TEST_RUN, which calls bpf_ringbuf_output() with the bytes it is
 * given), read back in order and intact while the ring wraps many times
 * and the reader's window moves, grows and ends mapping all of it. Needs
 * root (CAP_BPF): skipped, with the reason, without it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "unit.h"

#include "ringbuf.h"

#define MAX_RECORD 1000

struct payload {
	__u32 size; /* the record's size, the first of its bytes */
	__u32 seq;
	unsigned char fill[1016];
};

struct seen {
	__u32 next;  /* the sequence number the next record must have */
	int bad;     /* records out of order or damaged */
	int fail_at; /* return -EIO for this sequence number (-1: never) */
};

static int prog_fd = -1, src_fd = -1;

/*
 * The program: output the payload in src_fd's one element (its first
 * size bytes, size its first u32) to the ring; return the helper's result.
 */
static int load_writer(int map_fd, char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = BPF_F_SLEEPABLE);
	struct bpf_insn insns[] = {
	    {.code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -4, .imm = 0},
	    {.code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD},
	    {0},
	    {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10},
	    {.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -4},
	    {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem},
	    {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6, .src_reg = 0},
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = -EINVAL},
	    {.code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 6, .off = 7, .imm = 0},
	    {.code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 3, .src_reg = 6, .off = 0},
	    {.code = BPF_JMP | BPF_JGT | BPF_K, .dst_reg = 3, .off = 5, .imm = MAX_RECORD},
	    {.code = BPF_LD | BPF_DW | BPF_IMM,
	     .dst_reg = 1,
	     .src_reg = BPF_PSEUDO_MAP_FD,
	     .imm = map_fd},
	    {0},
	    {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 6},
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 4, .imm = 0},
	    {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ringbuf_output},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	int fd;

	src_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "rb_src", 4, sizeof(struct payload), 1, NULL);
	if (src_fd < 0) {
		snprintf(why, whylen, "cannot create a BPF array: %s", strerror(errno));
		return -1;
	}
	insns[1].imm = src_fd;
	fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "rb_writer", "Dual MIT/GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0) {
		snprintf(why, whylen, "cannot load a BPF_PROG_TYPE_SYSCALL program: %s",
			 strerror(errno));
		close(src_fd);
	}
	return fd;
}

static void unload_writer(void)
{
	close(prog_fd);
	close(src_fd);
}

/* Write record seq of size bytes (at least 8). 0, or the helper's -errno (-EAGAIN: full). */
static int write_record(__u32 seq, __u32 size)
{
	struct payload pl = {.size = size, .seq = seq};
	LIBBPF_OPTS(bpf_test_run_opts, run);
	__u32 zero = 0;

	for (__u32 i = 0; i < sizeof(pl.fill); i++)
		pl.fill[i] = (unsigned char)(seq * 31 + i);
	assert_int_equal(bpf_map_update_elem(src_fd, &zero, &pl, BPF_ANY), 0);
	assert_int_equal(bpf_prog_test_run_opts(prog_fd, &run), 0);
	return (int)run.retval;
}

static int check_record(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;
	const struct payload *pl = data;

	if (size < 8 || pl->size != size || pl->seq != s->next) {
		s->bad++;
		return 0;
	}
	for (size_t i = 0; i + 8 < size; i++)
		if (pl->fill[i] != (unsigned char)(pl->seq * 31 + i)) {
			s->bad++;
			break;
		}
	s->next++;
	return (int)pl->seq == s->fail_at ? -EIO : 0;
}

/* A size from 8 to MAX_RECORD that changes with seq, so that records end anywhere. */
static __u32 size_of(__u32 seq)
{
	return 8 + (seq * 97) % (MAX_RECORD - 7);
}

/*
 * A ring of ring_bytes, its writer (prog_fd), and a reader of it that
 * checks records into s; skips the test where BPF is not permitted.
 */
static struct ringbuf_reader *open_ring(__u32 ring_bytes, struct seen *s, int *map_fd)
{
	struct ringbuf_reader *r;
	char why[160];

	*map_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "rb_test", 0, 0, ring_bytes, NULL);
	if (*map_fd < 0) {
		print_message("# SKIP: cannot create a BPF ring buffer: %s\n", strerror(errno));
		skip();
	}
	prog_fd = load_writer(*map_fd, why, sizeof(why));
	if (prog_fd < 0) {
		close(*map_fd);
		print_message("# SKIP: %s\n", why);
		skip();
	}
	r = ringbuf_reader__new();
	assert_non_null(r);
	assert_int_equal(ringbuf_reader__add(r, *map_fd, check_record, s), 0);
	return r;
}

/*
 * Through a ring of ring_bytes: write batches of records (1 to 24, as many
 * as the ring holds) and read each batch back, until the records written
 * add up to `wraps` times the ring.
 */
static void wraps_in_order(__u32 ring_bytes, int wraps)
{
	struct seen s = {.fail_at = -1};
	struct ringbuf_reader *r;
	__u64 bytes = 0;
	__u32 seq = 0;
	int map_fd, n, batch = 0;

	r = open_ring(ring_bytes, &s, &map_fd);
	while (bytes < (__u64)wraps * ring_bytes) {
		__u32 held = 0;
		int want = 0;

		batch++;
		for (int i = 0; i < batch % 24 + 1; i++) {
			/* In the ring: an 8-byte header, the record, aligned to 8. */
			__u32 len = (size_of(seq) + 8 + 7) & ~7u;

			if (held + len > ring_bytes - 8)
				break;
			assert_int_equal(write_record(seq, size_of(seq)), 0);
			held += len;
			seq++;
			want++;
		}
		bytes += held;
		/* Every other batch through poll (the epoll wakeup), the rest by consume. */
		n = batch % 2 ? ringbuf_reader__poll(r, 1000) : ringbuf_reader__consume(r);
		assert_int_equal(n, want);
		assert_int_equal(s.bad, 0);
		assert_int_equal(s.next, seq);
	}
	assert_int_equal(ringbuf_reader__consume(r), 0);
	ringbuf_reader__free(r);
	unload_writer();
	close(map_fd);
}

/* A 4 KB ring: the first window is all of it, and every few records wrap. */
static void test_small_ring_wraps(void **state)
{
	(void)state;
	wraps_in_order(4096, 40);
}

/* 64 KB: one window smaller than the ring, then all of it. */
static void test_medium_ring_wraps(void **state)
{
	(void)state;
	wraps_in_order(64 << 10, 12);
}

/* 1 MB: windows of 16, 64 and 256 KB, moving forward, then all of it. */
static void test_large_ring_wraps(void **state)
{
	(void)state;
	wraps_in_order(1 << 20, 4);
}

/*
 * A callback's error stops the read there and is returned; the records
 * after it are read at the next call. A full ring refuses records, and
 * once read, takes them again.
 */
static void test_callback_error_and_full_ring(void **state)
{
	struct seen s = {.fail_at = 2};
	struct ringbuf_reader *r;
	int map_fd, ret, fitted = 0;

	(void)state;
	r = open_ring(4096, &s, &map_fd);
	for (__u32 i = 0; i < 5; i++)
		assert_int_equal(write_record(i, 200), 0);
	assert_int_equal(ringbuf_reader__consume(r), -EIO);
	assert_int_equal(s.next, 3);
	assert_int_equal(ringbuf_reader__consume(r), 2);
	assert_int_equal(s.next, 5);
	assert_int_equal(s.bad, 0);
	/* 4 KB holds four records of 1,000 bytes (1,008 with the header), not five. */
	while ((ret = write_record(s.next + (__u32)fitted, MAX_RECORD)) == 0)
		fitted++;
	assert_int_equal(ret, -EAGAIN);
	assert_int_equal(fitted, 4);
	assert_int_equal(ringbuf_reader__consume(r), 4);
	assert_int_equal(write_record(s.next, MAX_RECORD), 0);
	assert_int_equal(ringbuf_reader__consume(r), 1);
	assert_int_equal(s.bad, 0);
	ringbuf_reader__free(r);
	unload_writer();
	close(map_fd);
}

/* Only ring buffers are read. */
static void test_refuses_other_maps(void **state)
{
	struct ringbuf_reader *r = ringbuf_reader__new();
	int fd;

	(void)state;
	assert_non_null(r);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "not_rb", 4, 8, 1, NULL);
	if (fd < 0) {
		ringbuf_reader__free(r);
		print_message("# SKIP: cannot create a BPF map: %s\n", strerror(errno));
		skip();
	}
	assert_int_equal(ringbuf_reader__add(r, fd, check_record, NULL), -EINVAL);
	assert_int_equal(ringbuf_reader__consume(r), 0);
	close(fd);
	ringbuf_reader__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_small_ring_wraps),
	    cmocka_unit_test(test_medium_ring_wraps),
	    cmocka_unit_test(test_large_ring_wraps),
	    cmocka_unit_test(test_callback_error_and_full_ring),
	    cmocka_unit_test(test_refuses_other_maps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
