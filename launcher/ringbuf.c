// SPDX-License-Identifier: MIT
/* BPF ring buffers read through a window of their data (ringbuf.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "ringbuf.h"

#define FIRST_WINDOW (16u << 10)

struct ring {
	int fd;
	ringbuf_cb cb;
	void *ctx;
	size_t size;			   /* data bytes, a power of two */
	unsigned long *consumer_pos;	   /* its first page, the only one writable */
	const unsigned long *producer_pos; /* its second */
	const char *win;		   /* the window: win_len bytes of the doubled data, */
	size_t win_off, win_len;	   /* from win_off (page multiples) */
	size_t next_len;		   /* the least length of the next window */
};

struct ringbuf_reader {
	struct ring *rings;
	int nrings;
	int epoll_fd;
	size_t page;
};

struct ringbuf_reader *ringbuf_reader__new(void)
{
	struct ringbuf_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epoll_fd < 0) {
		int err = errno;

		free(r);
		errno = err;
		return NULL;
	}
	return r;
}

static void ring_unmap(struct ringbuf_reader *r, struct ring *rg)
{
	if (rg->win)
		munmap((void *)rg->win, rg->win_len);
	if (rg->producer_pos)
		munmap((void *)rg->producer_pos, r->page);
	if (rg->consumer_pos)
		munmap(rg->consumer_pos, r->page);
	rg->win = NULL;
	rg->producer_pos = NULL;
	rg->consumer_pos = NULL;
}

void ringbuf_reader__free(struct ringbuf_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nrings; i++)
		ring_unmap(r, &r->rings[i]);
	free(r->rings);
	close(r->epoll_fd);
	free(r);
}

int ringbuf_reader__add(struct ringbuf_reader *r, int map_fd, ringbuf_cb cb, void *ctx)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct bpf_map_info info = {0};
	__u32 len = sizeof(info);
	struct ring *rings, *rg;
	void *p;
	int err;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	rings = realloc(r->rings, (size_t)(r->nrings + 1) * sizeof(*rings));
	if (!rings)
		return -ENOMEM;
	r->rings = rings;
	rg = &rings[r->nrings];
	memset(rg, 0, sizeof(*rg));
	rg->fd = map_fd;
	rg->cb = cb;
	rg->ctx = ctx;
	rg->size = info.max_entries;
	rg->next_len = FIRST_WINDOW;
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto out_errno;
	rg->consumer_pos = p;
	p = mmap(NULL, r->page, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (p == MAP_FAILED)
		goto out_errno;
	rg->producer_pos = p;
	ev.data.u32 = (uint32_t)r->nrings;
	if (epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, map_fd, &ev))
		goto out_errno;
	r->nrings++;
	return 0;

out_errno:
	err = -errno;
	ring_unmap(r, rg);
	return err;
}

int ringbuf_reader__epoll_fd(const struct ringbuf_reader *r)
{
	return r->epoll_fd;
}

/*
 * Map the window so that it covers [off, end) of the doubled data (off
 * within the ring, end at most one ring's size further).
 */
static int ring_window(struct ringbuf_reader *r, struct ring *rg, size_t off, size_t end)
{
	size_t start, len;
	void *w;

	if (rg->win && off >= rg->win_off && end <= rg->win_off + rg->win_len)
		return 0;
	start = off & ~(r->page - 1);
	len = (end - start + r->page - 1) & ~(r->page - 1);
	if (len < rg->next_len)
		len = rg->next_len;
	if (len >= rg->size) {
		/* All of it: every record, wrapped or not, is inside from now on. */
		start = 0;
		len = 2 * rg->size;
	} else if (start + len > 2 * rg->size) {
		len = 2 * rg->size - start;
	}
	/* The data follows the two control pages, twice. */
	w = mmap(NULL, len, PROT_READ, MAP_SHARED, rg->fd, (off_t)(2 * r->page + start));
	if (w == MAP_FAILED)
		return -errno;
	if (rg->win)
		munmap((void *)rg->win, rg->win_len);
	rg->win = w;
	rg->win_off = start;
	rg->win_len = len;
	rg->next_len = len < SIZE_MAX / 4 ? len * 4 : len;
	return 0;
}

/* A record's length in the ring: its header, its data, 8-byte aligned. */
static size_t record_len(__u32 hdr)
{
	return ((hdr & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT)) + BPF_RINGBUF_HDR_SZ +
		7) &
	       ~(size_t)7;
}

/* As libbpf's ringbuf_process_ring(), through the window. */
static int64_t ring_consume(struct ringbuf_reader *r, struct ring *rg)
{
	unsigned long cons, prod;
	int64_t n = 0;
	bool more;
	int err;

	cons = __atomic_load_n(rg->consumer_pos, __ATOMIC_ACQUIRE);
	do {
		more = false;
		prod = __atomic_load_n(rg->producer_pos, __ATOMIC_ACQUIRE);
		while (cons < prod) {
			size_t off = cons & (rg->size - 1);
			const __u32 *hdr;
			__u32 len;

			/* The producer is never more than the ring's size ahead. */
			err = ring_window(r, rg, off, off + (prod - cons));
			if (err)
				return err;
			hdr = (const __u32 *)(rg->win + (off - rg->win_off));
			len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
			if (len & BPF_RINGBUF_BUSY_BIT)
				return n; /* not committed yet: read at the next wakeup */
			more = true;
			cons += record_len(len);
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				err = rg->cb(rg->ctx, (char *)hdr + BPF_RINGBUF_HDR_SZ, len);
				if (err < 0) {
					__atomic_store_n(rg->consumer_pos, cons, __ATOMIC_RELEASE);
					return err;
				}
				n++;
			}
			__atomic_store_n(rg->consumer_pos, cons, __ATOMIC_RELEASE);
		}
	} while (more);
	return n;
}

static int add_count(int64_t *total, int64_t n)
{
	if (n < 0)
		return (int)n;
	*total += n;
	return 0;
}

int ringbuf_reader__consume(struct ringbuf_reader *r)
{
	int64_t total = 0;
	int err;

	for (int i = 0; i < r->nrings; i++) {
		err = add_count(&total, ring_consume(r, &r->rings[i]));
		if (err)
			return err;
	}
	return total > INT_MAX ? INT_MAX : (int)total;
}

int ringbuf_reader__poll(struct ringbuf_reader *r, int timeout_ms)
{
	struct epoll_event ev[8];
	int64_t total = 0;
	int n, err;

	n = epoll_wait(r->epoll_fd, ev, (int)(sizeof(ev) / sizeof(ev[0])), timeout_ms);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		uint32_t k = ev[i].data.u32;

		if (k >= (uint32_t)r->nrings)
			continue;
		err = add_count(&total, ring_consume(r, &r->rings[k]));
		if (err)
			return err;
	}
	return total > INT_MAX ? INT_MAX : (int)total;
}
