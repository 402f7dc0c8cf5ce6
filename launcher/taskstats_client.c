// SPDX-License-Identifier: MIT
/* The taskstats client (taskstats_client.h): the query socket and the exit-record listener. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/taskstats.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "taskstats.h"
#include "taskstats_client.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct ts_client {
	struct nl_sock *query;
	struct nl_sock *listen;
	int family;
	char cpumask[128];
	uint64_t overruns;
	uint64_t unreadable;
	unsigned char *buf;
	size_t buflen;
};

#define TS_BUF_LEN (64 * 1024)

static int put_request(struct ts_client *c, struct nl_sock *sk, int attr, const void *val, int vlen)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0, NLM_F_ACK, TASKSTATS_CMD_GET,
			 TASKSTATS_GENL_VERSION) ||
	    nla_put(msg, attr, vlen, val) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return ret == -NLE_PERM ? -EPERM : -EIO;
	return 0;
}

/*
 * Receive on the query socket until the ACK (or error) of the last request.
 * rec gets the record, if one came.
 */
static int await_reply(struct ts_client *c, struct ts_record *rec, bool *got)
{
	int fd = nl_socket_get_fd(c->query);

	for (;;) {
		int nlerr = 1, count = 0, ret;
		ssize_t n = recv(fd, c->buf, c->buflen, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		ret = taskstats_walk(c->buf, (size_t)n, c->family, rec, NULL, NULL, &nlerr, &count,
				     0, &c->unreadable);
		if (ret)
			return ret;
		if (count)
			*got = true;
		if (nlerr <= 0)
			return nlerr;
	}
}

static int possible_cpus(char *out, size_t len)
{
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, out, len - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

struct ts_client *ts_client__new(char *err, size_t errlen)
{
	struct ts_client *c = calloc(1, sizeof(*c));
	struct ts_record rec;
	uint32_t self = (uint32_t)getpid();
	bool got = false;
	int ret;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->buflen = TS_BUF_LEN;
	c->buf = malloc(c->buflen);
	c->query = nl_socket_alloc();
	if (!c->buf || !c->query) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out_free;
	}
	if (genl_connect(c->query) < 0) {
		ret = -EIO;
		snprintf(err, errlen, "cannot open a generic netlink socket");
		goto out_free;
	}
	fcntl(nl_socket_get_fd(c->query), F_SETFD, FD_CLOEXEC);
	c->family = genl_ctrl_resolve(c->query, TASKSTATS_GENL_NAME);
	if (c->family < 0) {
		ret = -ENOENT;
		snprintf(err, errlen,
			 "no TASKSTATS netlink family (kernel built without CONFIG_TASKSTATS)");
		goto out_free;
	}
	/* The request needs CAP_NET_ADMIN (GENL_ADMIN_PERM): try it now. */
	ret = put_request(c, c->query, TASKSTATS_CMD_ATTR_PID, &self, sizeof(self));
	if (!ret)
		ret = await_reply(c, &rec, &got);
	if (ret == -EPERM) {
		snprintf(err, errlen, "not permitted (need CAP_NET_ADMIN, or root)");
		goto out_free;
	}
	if (ret == -EPROTO) {
		snprintf(err, errlen,
			 "the kernel sends taskstats version 15, whose layout cannot be read "
			 "safely");
		goto out_free;
	}
	if (ret || !got) {
		ret = ret ? ret : -EIO;
		snprintf(err, errlen, "taskstats query failed: %s", strerror(-ret));
		goto out_free;
	}
	return c;

out_free:
	ts_client__free(c);
	errno = -ret;
	return NULL;
}

void ts_client__free(struct ts_client *c)
{
	if (!c)
		return;
	if (c->listen) {
		/* Deregister politely; the kernel also drops a listener whose socket closed. */
		put_request(c, c->listen, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, c->cpumask,
			    (int)strlen(c->cpumask) + 1);
		nl_socket_free(c->listen);
	}
	nl_socket_free(c->query);
	free(c->buf);
	free(c);
}

int ts_client__listen(struct ts_client *c, size_t rcvbuf, char *err, size_t errlen)
{
	int fd, size = rcvbuf > (size_t)(1 << 30) ? 1 << 30 : (int)rcvbuf, ret;

	if (c->listen)
		return 0;
	ret = possible_cpus(c->cpumask, sizeof(c->cpumask));
	if (ret) {
		snprintf(err, errlen, "cannot read the possible CPUs: %s", strerror(-ret));
		return ret;
	}
	c->listen = nl_socket_alloc();
	if (!c->listen) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (genl_connect(c->listen) < 0) {
		ret = -EIO;
		snprintf(err, errlen, "cannot open the listener socket");
		goto out_free;
	}
	fd = nl_socket_get_fd(c->listen);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	/* Bursts of exits (a pool of threads ending at once) must fit. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size))) {
		ret = -errno;
		snprintf(err, errlen, "cannot size the listener's buffer: %s", strerror(-ret));
		goto out_free;
	}
	ret = put_request(c, c->listen, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, c->cpumask,
			  (int)strlen(c->cpumask) + 1);
	if (!ret) {
		/* The ACK comes on the listener itself, perhaps after exit records. */
		for (;;) {
			int nlerr = 1, count = 0;
			ssize_t n = recv(fd, c->buf, c->buflen, 0);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				ret = -errno;
				break;
			}
			ret = taskstats_walk(c->buf, (size_t)n, c->family, &(struct ts_record){0},
					     NULL, NULL, &nlerr, &count, 0, &c->unreadable);
			if (ret || nlerr <= 0) {
				ret = ret ? ret : nlerr;
				break;
			}
		}
	}
	if (ret) {
		snprintf(err, errlen, "cannot register for exit records on CPUs %s: %s", c->cpumask,
			 strerror(-ret));
		goto out_free;
	}
	nl_socket_set_nonblocking(c->listen);
	return 0;

out_free:
	nl_socket_free(c->listen);
	c->listen = NULL;
	return ret;
}

int ts_client__fd(const struct ts_client *c)
{
	return c->listen ? nl_socket_get_fd(c->listen) : -1;
}

int ts_client__drain(struct ts_client *c, ts_record_fn fn, void *ctx)
{
	struct ts_record rec;
	int fd, count = 0, ret;

	if (!c->listen)
		return 0;
	fd = nl_socket_get_fd(c->listen);
	for (;;) {
		ssize_t n = recv(fd, c->buf, c->buflen, MSG_DONTWAIT);
		uint64_t now;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* Records were dropped; the drop counter says how many. */
				c->overruns++;
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return count;
			return -errno;
		}
		now = mono_ns();
		ret = taskstats_walk(c->buf, (size_t)n, c->family, &rec, fn, ctx, NULL, &count, now,
				     &c->unreadable);
		if (ret)
			return ret;
	}
}

uint64_t ts_client__drops(const struct ts_client *c)
{
	uint32_t mem[SK_MEMINFO_VARS] = {0};
	socklen_t len = sizeof(mem);

	if (!c->listen ||
	    getsockopt(nl_socket_get_fd(c->listen), SOL_SOCKET, SO_MEMINFO, mem, &len) ||
	    len <= SK_MEMINFO_DROPS * sizeof(mem[0]))
		return 0;
	return mem[SK_MEMINFO_DROPS];
}

uint64_t ts_client__overruns(const struct ts_client *c)
{
	return c->overruns;
}

uint64_t ts_client__unreadable(const struct ts_client *c)
{
	return c->unreadable;
}

int ts_client__query(struct ts_client *c, uint32_t tid, struct ts_record *out)
{
	uint64_t sent = mono_ns();
	bool got = false;
	int ret;

	ret = put_request(c, c->query, TASKSTATS_CMD_ATTR_PID, &tid, sizeof(tid));
	if (!ret)
		ret = await_reply(c, out, &got);
	if (ret)
		return ret;
	if (!got || out->tid != tid)
		return -ESRCH;
	out->from_exit = false;
	out->sent_ns = sent;
	out->recv_ns = mono_ns();
	return 0;
}

bool taskstats_check(char *detail, size_t len)
{
	struct ts_record rec;
	struct ts_client *c = ts_client__new(detail, len);
	int ret;

	if (!c)
		return false;
	ret = ts_client__query(c, (uint32_t)getpid(), &rec);
	if (ret)
		snprintf(detail, len, "taskstats query failed: %s", strerror(-ret));
	else
		snprintf(detail, len, "family %d, record version %u (%u bytes)", c->family,
			 rec.version, rec.len);
	ts_client__free(c);
	return ret == 0;
}
