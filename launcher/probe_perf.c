// SPDX-License-Identifier: MIT
/* Counting the tree's instructions with one inherited perf event. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe_perf.h"
#include "probe.h"
#include "run.h"
#include "spawn.h"

struct perf_probe {
	struct perf_event_attr attr;
	int fd;
};

static int perf_open(struct perf_event_attr *attr, int pid)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static const char *why_not(int err, char *buf, size_t len)
{
	if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
		snprintf(buf, len, "no hardware PMU (the counter is not supported here)");
	else if (err == EACCES || err == EPERM)
		snprintf(buf, len, "not permitted (kernel.perf_event_paranoid; needs CAP_PERFMON)");
	else
		snprintf(buf, len, "perf_event_open: %s", strerror(err));
	return buf;
}

struct perf_probe *perf_probe__new(const struct perf_probe_opts *o, char *err, size_t errlen)
{
	struct perf_probe *pp = calloc(1, sizeof(*pp));
	int fd;

	if (!pp) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pp->fd = -1;
	pp->attr.size = sizeof(pp->attr);
	pp->attr.type = o->type;
	pp->attr.config = o->config;
	pp->attr.exclude_kernel = o->exclude_kernel;
	pp->attr.exclude_hv = 1;
	pp->attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	/* Every thread and process the command creates, from its exec on. */
	pp->attr.inherit = 1;
	pp->attr.disabled = 1;
	pp->attr.enable_on_exec = 1;
	/* Can it be opened at all? On ourselves, disabled: nothing is counted. */
	fd = perf_open(&pp->attr, 0);
	if (fd < 0) {
		why_not(errno, err, errlen);
		free(pp);
		return NULL;
	}
	close(fd);
	return pp;
}

void perf_probe__free(struct perf_probe *pp)
{
	if (!pp)
		return;
	if (pp->fd >= 0)
		close(pp->fd);
	free(pp);
}

int perf_probe__open(struct perf_probe *pp, int pid)
{
	if (pp->fd >= 0)
		close(pp->fd);
	pp->fd = perf_open(&pp->attr, pid);
	return pp->fd < 0 ? -errno : 0;
}

int perf_probe__read(struct perf_probe *pp, uint64_t *count, double *running_fraction)
{
	uint64_t v[3]; /* value, time enabled, time running */
	ssize_t n;

	if (pp->fd < 0)
		return -EBADF;
	n = read(pp->fd, v, sizeof(v));
	close(pp->fd);
	pp->fd = -1;
	if (n != (ssize_t)sizeof(v))
		return n < 0 ? -errno : -EIO;
	*running_fraction = v[1] ? (double)v[2] / (double)v[1] : 1.0;
	/* Multiplexed with other events: the kernel's usual estimate, and the caller says so. */
	if (v[2] && v[2] < v[1])
		*count = (uint64_t)((double)v[0] * (double)v[1] / (double)v[2]);
	else
		*count = v[0];
	if (!v[2] && v[1])
		return -ENODATA; /* enabled but never scheduled on the PMU */
	return 0;
}

static int arm(struct probe *p, const struct spawn *child, struct run *r)
{
	struct perf_probe *pp = p->ctx;
	int ret = perf_probe__open(pp, child->pid);

	if (ret)
		why_not(-ret, p->reason, sizeof(p->reason));
	return ret;
}

static int collect(struct probe *p, struct run *r)
{
	struct perf_probe *pp = p->ctx;
	double frac;
	int ret = perf_probe__read(pp, &r->instructions, &frac);

	if (ret == -ENODATA) {
		snprintf(p->reason, sizeof(p->reason),
			 "the counter never ran (every PMU counter was in use)");
		return ret;
	}
	if (ret) {
		snprintf(p->reason, sizeof(p->reason), "reading the counter: %s", strerror(-ret));
		return ret;
	}
	r->have_instructions = true;
	run__source(r, "perf", true, NULL);
	if (frac < 1.0)
		run__note(r,
			  "perf: the instruction counter ran %.1f%% of the time (shared with other "
			  "events); the count is scaled",
			  frac * 100);
	if (r->desc.left_running)
		run__note(r, "perf: processes left running are not in the instruction count");
	return 0;
}

void perf_probe__as_probe(struct perf_probe *pp, struct probe *p)
{
	memset(p, 0, sizeof(*p));
	p->name = "perf";
	p->ctx = pp;
	p->arm = arm;
	p->collect = collect;
}
