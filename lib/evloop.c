// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "evloop.h"

#define EVLOOP_MAX 16

struct evsrc {
	int fd;
	evloop_cb cb;
	void *ctx;
};

struct evloop {
	int epfd;
	struct evsrc src[EVLOOP_MAX];
};

struct evloop *evloop__new(void)
{
	struct evloop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int err = errno;

		free(l);
		errno = err;
		return NULL;
	}
	for (int i = 0; i < EVLOOP_MAX; i++)
		l->src[i].fd = -1;
	return l;
}

void evloop__free(struct evloop *l)
{
	if (!l)
		return;
	close(l->epfd);
	free(l);
}

int evloop__add(struct evloop *l, int fd, evloop_cb cb, void *ctx)
{
	return evloop__add_events(l, fd, EPOLLIN, cb, ctx);
}

int evloop__add_events(struct evloop *l, int fd, uint32_t events, evloop_cb cb, void *ctx)
{
	struct epoll_event ev = {.events = events};
	int i;

	for (i = 0; i < EVLOOP_MAX && l->src[i].fd >= 0; i++)
		;
	if (i == EVLOOP_MAX)
		return -ENOSPC;
	ev.data.u32 = (uint32_t)i;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	l->src[i] = (struct evsrc){.fd = fd, .cb = cb, .ctx = ctx};
	return 0;
}

int evloop__del(struct evloop *l, int fd)
{
	for (int i = 0; i < EVLOOP_MAX; i++) {
		if (l->src[i].fd == fd) {
			l->src[i].fd = -1;
			if (epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL))
				return -errno;
			return 0;
		}
	}
	return -ENOENT;
}

int evloop__run_once(struct evloop *l, int timeout_ms)
{
	struct epoll_event evs[EVLOOP_MAX];
	int n, ret;

	n = epoll_wait(l->epfd, evs, EVLOOP_MAX, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		struct evsrc *s = &l->src[evs[i].data.u32];

		if (s->fd < 0)
			continue;
		ret = s->cb(s->ctx, evs[i].events);
		if (ret)
			return ret;
	}
	return 0;
}
