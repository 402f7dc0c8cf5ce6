/* SPDX-License-Identifier: MIT */
/*
 * A reader of BPF ring buffers that maps only what it reads.
 *
 * The kernel lays a ring's data out twice in a row, so that a record that
 * wraps around reads in one piece; libbpf's ring_buffer maps all of it
 * when a ring is added. For the 4 MB default that is 2,048 pages mapped,
 * then unmapped at the end: about 1 ms of tsarun's start-up on a PVM
 * guest, for a run that may read one record. Here a ring starts with its
 * two control pages mapped, and its records are read through a window of
 * the doubled data, mapped where they wait: 16 KB at first, four times
 * larger at each new window, and the whole doubled data once that is as
 * large as the ring, after which it never moves. A run that reads a few
 * records maps a few pages; a busy one remaps a handful of times.
 *
 * The contract is libbpf's: one epoll descriptor for every ring, records
 * handed to the ring's callback in order, the data read-only and valid
 * only during the call; a negative callback result stops the read and is
 * returned.
 */
#ifndef TSARUN_RINGBUF_H
#define TSARUN_RINGBUF_H

#include <stddef.h>

struct ringbuf_reader;

typedef int (*ringbuf_cb)(void *ctx, void *data, size_t size);

/* NULL with errno set on failure. */
struct ringbuf_reader *ringbuf_reader__new(void);
void ringbuf_reader__free(struct ringbuf_reader *r);

/* Read the BPF_MAP_TYPE_RINGBUF map_fd too. 0 or -errno. */
int ringbuf_reader__add(struct ringbuf_reader *r, int map_fd, ringbuf_cb cb, void *ctx);

/* Readable when some ring has records (or its producer woke it). */
int ringbuf_reader__epoll_fd(const struct ringbuf_reader *r);

/* Read every ring: the number of records read, or a negative result (-errno, or a callback's). */
int ringbuf_reader__consume(struct ringbuf_reader *r);

/* Wait up to timeout_ms for a ring to be woken, then read those woken: as consume. */
int ringbuf_reader__poll(struct ringbuf_reader *r, int timeout_ms);

#endif /* TSARUN_RINGBUF_H */
