// SPDX-License-Identifier: MIT
/* The taskstats client: decoder, query socket and exit-record listener. */
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

/*
 * Offsets of struct taskstats fields, and the version that added each. The
 * structure only grows at its end (version 15 excepted, see the header), so
 * a field is present when the version is recent enough and the payload
 * reaches past it. The build's <linux/taskstats.h> checks the offsets it
 * knows (below); the newer ones come from the version 16 layout.
 */
enum {
	OFF_VERSION = 0,
	OFF_EXITCODE = 4,
	OFF_CPU_COUNT = 16,
	OFF_CPU_DELAY = 24,
	OFF_BLKIO_COUNT = 32,
	OFF_BLKIO_DELAY = 40,
	OFF_SWAPIN_COUNT = 48,
	OFF_SWAPIN_DELAY = 56,
	OFF_RUN_VIRTUAL = 72,
	OFF_COMM = 80,
	OFF_PID = 128,
	OFF_PPID = 132,
	OFF_BTIME = 136,
	OFF_ETIME = 144,
	OFF_UTIME = 152,
	OFF_STIME = 160,
	OFF_NVCSW = 272,
	OFF_NIVCSW = 280,
	OFF_FREEPAGES_COUNT = 312,
	OFF_FREEPAGES_DELAY = 320,
	OFF_THRASHING_COUNT = 328,
	OFF_THRASHING_DELAY = 336,
	OFF_BTIME64 = 344,
	OFF_COMPACT_COUNT = 352,
	OFF_COMPACT_DELAY = 360,
	OFF_TGID = 368,
	OFF_WPCOPY_COUNT = 400,
	OFF_WPCOPY_DELAY = 408,
	OFF_IRQ_COUNT = 416,
	OFF_IRQ_DELAY = 424,
	OFF_DELAY_MAXMIN = 432, /* version 16: max, min for each delay, in delay_kind order */
};

#define TS_COMM_OFFSET_LEN 32

_Static_assert(offsetof(struct taskstats, cpu_count) == OFF_CPU_COUNT, "taskstats layout");
_Static_assert(offsetof(struct taskstats, cpu_run_virtual_total) == OFF_RUN_VIRTUAL,
	       "taskstats layout");
_Static_assert(offsetof(struct taskstats, ac_pid) == OFF_PID, "taskstats layout");
_Static_assert(offsetof(struct taskstats, ac_etime) == OFF_ETIME, "taskstats layout");
_Static_assert(offsetof(struct taskstats, nvcsw) == OFF_NVCSW, "taskstats layout");
_Static_assert(offsetof(struct taskstats, freepages_count) == OFF_FREEPAGES_COUNT,
	       "taskstats layout");
_Static_assert(offsetof(struct taskstats, thrashing_count) == OFF_THRASHING_COUNT,
	       "taskstats layout");
_Static_assert(offsetof(struct taskstats, ac_btime64) == OFF_BTIME64, "taskstats layout");
_Static_assert(offsetof(struct taskstats, compact_count) == OFF_COMPACT_COUNT, "taskstats layout");
_Static_assert(offsetof(struct taskstats, ac_tgid) == OFF_TGID, "taskstats layout");
_Static_assert(offsetof(struct taskstats, wpcopy_count) == OFF_WPCOPY_COUNT, "taskstats layout");

/* Where each delay counter lives and the version that introduced it. */
static const struct {
	uint16_t count, total;
	uint16_t since;
} delay_fields[DELAY_NR] = {
    [DELAY_CPU] = {OFF_CPU_COUNT, OFF_CPU_DELAY, 1},
    [DELAY_BLOCK_IO] = {OFF_BLKIO_COUNT, OFF_BLKIO_DELAY, 1},
    [DELAY_SWAP_IN] = {OFF_SWAPIN_COUNT, OFF_SWAPIN_DELAY, 1},
    [DELAY_RECLAIM] = {OFF_FREEPAGES_COUNT, OFF_FREEPAGES_DELAY, 7},
    [DELAY_THRASHING] = {OFF_THRASHING_COUNT, OFF_THRASHING_DELAY, 9},
    [DELAY_COMPACTION] = {OFF_COMPACT_COUNT, OFF_COMPACT_DELAY, 11},
    [DELAY_WPCOPY] = {OFF_WPCOPY_COUNT, OFF_WPCOPY_DELAY, 13},
    [DELAY_IRQ] = {OFF_IRQ_COUNT, OFF_IRQ_DELAY, 14},
};

static bool has(size_t len, size_t off, size_t size)
{
	return off + size <= len;
}

static uint64_t rd64(const unsigned char *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint32_t rd32(const unsigned char *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

int taskstats_decode(const void *buf, size_t len, struct ts_record *r)
{
	const unsigned char *b = buf;
	uint16_t version;
	size_t n;

	memset(r, 0, sizeof(*r));
	if (!has(len, OFF_VERSION, 2))
		return -EINVAL;
	memcpy(&version, b, sizeof(version));
	r->version = version;
	r->len = len > UINT16_MAX ? UINT16_MAX : (uint16_t)len;
	if (version == 15)
		return -EPROTO;
	/* The identity and the elapsed time are what make a record usable. */
	if (!version || !has(len, OFF_ETIME, 8))
		return -EINVAL;
	r->exitcode = rd32(b, OFF_EXITCODE);
	r->tid = rd32(b, OFF_PID);
	r->ppid = rd32(b, OFF_PPID);
	r->etime_ns = rd64(b, OFF_ETIME) * 1000;
	r->btime_s = rd32(b, OFF_BTIME);
	n = strnlen((const char *)b + OFF_COMM, TS_COMM_OFFSET_LEN);
	if (n >= sizeof(r->comm))
		n = sizeof(r->comm) - 1;
	memcpy(r->comm, b + OFF_COMM, n);
	r->comm[n] = '\0';
	r->run_ns = rd64(b, OFF_RUN_VIRTUAL);
	if (has(len, OFF_STIME, 8)) {
		r->utime_ns = rd64(b, OFF_UTIME) * 1000;
		r->stime_ns = rd64(b, OFF_STIME) * 1000;
	}
	if (has(len, OFF_NIVCSW, 8)) {
		r->nvcsw = rd64(b, OFF_NVCSW);
		r->nivcsw = rd64(b, OFF_NIVCSW);
		r->have_switches = true;
	}
	if (version >= 10 && has(len, OFF_BTIME64, 8))
		r->btime_s = rd64(b, OFF_BTIME64);
	if (version >= 12 && has(len, OFF_TGID, 4)) {
		r->tgid = rd32(b, OFF_TGID);
		r->have_tgid = true;
	}
	for (int d = 0; d < DELAY_NR; d++) {
		if (version < delay_fields[d].since || !has(len, delay_fields[d].total, 8))
			continue;
		r->delays[d].available = true;
		r->delays[d].count = rd64(b, delay_fields[d].count);
		r->delays[d].total_ns = rd64(b, delay_fields[d].total);
	}
	if (version >= 16 && has(len, OFF_DELAY_MAXMIN, 16 * DELAY_NR)) {
		for (int d = 0; d < DELAY_NR; d++) {
			if (!r->delays[d].available)
				continue;
			r->delays[d].have_extremes = true;
			r->delays[d].max_ns = rd64(b, OFF_DELAY_MAXMIN + 16 * (size_t)d);
			r->delays[d].min_ns = rd64(b, OFF_DELAY_MAXMIN + 16 * (size_t)d + 8);
		}
	}
	return 0;
}

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

/*
 * Walk the generic netlink messages in buf. For each thread record
 * (TASKSTATS_TYPE_AGGR_PID) call fn. A netlink error message returns its
 * errno through *nlerr (0 for an ACK).
 */
static int parse_messages(struct ts_client *c, const unsigned char *buf, size_t len,
			  struct ts_record *rec, ts_record_fn fn, void *ctx, int *nlerr, int *count,
			  uint64_t recv_ns)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
	int rem = (int)len, ret;

	for (; NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
		struct nlattr *attrs[TASKSTATS_TYPE_MAX + 1], *nested[TASKSTATS_TYPE_MAX + 1];
		struct nlattr *stats;

		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			if (nlerr && h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)))
				*nlerr = e->error;
			continue;
		}
		if (h->nlmsg_type != c->family)
			continue;
		if (genlmsg_parse((struct nlmsghdr *)h, 0, attrs, TASKSTATS_TYPE_MAX, NULL) < 0)
			continue;
		/* An exit message can also carry the whole process (AGGR_TGID): not used. */
		if (!attrs[TASKSTATS_TYPE_AGGR_PID] ||
		    nla_parse_nested(nested, TASKSTATS_TYPE_MAX, attrs[TASKSTATS_TYPE_AGGR_PID],
				     NULL) < 0)
			continue;
		stats = nested[TASKSTATS_TYPE_STATS];
		if (!stats)
			continue;
		ret = taskstats_decode(nla_data(stats), (size_t)nla_len(stats), rec);
		if (ret == -EPROTO && !nlerr) {
			c->unreadable++; /* an exit record in the version 15 layout: counted, not read */
			continue;
		}
		if (ret)
			return ret;
		rec->recv_ns = recv_ns;
		rec->from_exit = fn != NULL;
		if (fn) {
			ret = fn(ctx, rec);
			if (ret)
				return ret;
		}
		(*count)++;
	}
	return 0;
}

int taskstats_parse(const void *buf, size_t len, int family, ts_record_fn fn, void *ctx,
		    uint64_t *unreadable)
{
	struct ts_client c = {.family = family};
	struct ts_record rec;
	int count = 0, ret;

	ret = parse_messages(&c, buf, len, &rec, fn, ctx, NULL, &count, 0);
	if (unreadable)
		*unreadable = c.unreadable;
	return ret ? ret : count;
}

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
		ret = parse_messages(c, c->buf, (size_t)n, rec, NULL, NULL, &nlerr, &count, 0);
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
			ret = parse_messages(c, c->buf, (size_t)n, &(struct ts_record){0}, NULL,
					     NULL, &nlerr, &count, 0);
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
		ret = parse_messages(c, c->buf, (size_t)n, &rec, fn, ctx, NULL, &count, now);
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
