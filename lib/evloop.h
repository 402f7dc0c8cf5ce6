/* SPDX-License-Identifier: MIT */
/*
 * A small epoll loop: descriptors with callbacks, and a deadline. Each
 * source (pidfd, signalfd, ring buffer, netlink socket, timers) registers
 * itself; the loop owns none of the descriptors.
 */
#ifndef TSARUN_EVLOOP_H
#define TSARUN_EVLOOP_H

#include <stdint.h>

struct evloop;

/* Return 0 to continue, a positive value to stop the loop, or -errno. */
typedef int (*evloop_cb)(void *ctx, uint32_t events);

struct evloop *evloop__new(void);
void evloop__free(struct evloop *l);

/* Watch fd for EPOLLIN. Returns 0 or -errno. */
int evloop__add(struct evloop *l, int fd, evloop_cb cb, void *ctx);
/* Watch fd for these epoll events (EPOLLOUT: room to write). Returns 0 or -errno. */
int evloop__add_events(struct evloop *l, int fd, uint32_t events, evloop_cb cb, void *ctx);
int evloop__del(struct evloop *l, int fd);

/*
 * Wait up to timeout_ms (-1: forever) and dispatch. Returns the first
 * non-zero callback result, 0 on timeout, or -errno.
 */
int evloop__run_once(struct evloop *l, int timeout_ms);

#endif /* TSARUN_EVLOOP_H */
