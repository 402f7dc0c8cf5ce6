// SPDX-License-Identifier: MIT
/* The taskstats records: the decoder and the walk over netlink messages (no socket). */
#include <errno.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/taskstats.h>
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

int taskstats_walk(const void *data, size_t len, int family, struct ts_record *rec, ts_record_fn fn,
		   void *ctx, int *nlerr, int *count, uint64_t recv_ns, uint64_t *unreadable)
{
	const unsigned char *buf = data;
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
		if (h->nlmsg_type != family)
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
			(*unreadable)++; /* an exit record in the version 15 layout: counted, not read */
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
	struct ts_record rec;
	uint64_t skipped = 0;
	int count = 0, ret;

	ret = taskstats_walk(buf, len, family, &rec, fn, ctx, NULL, &count, 0, &skipped);
	if (unreadable)
		*unreadable = skipped;
	return ret ? ret : count;
}
