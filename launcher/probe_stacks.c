// SPDX-License-Identifier: MIT
/* The stacks probe: perf tracking and sampling events, reading, symbolizing. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hashmap.h"
#include "oncpu.skel.h"
#include "oncpu_compat.skel.h"
#include "probe.h"
#include "run.h"
#include "probe_sched.h"
#include "spawn.h"
#include "probe_stacks.h"
#include "stacks.h"
#include "symbolize.h"
#include "tsarun.h"
#include "vec.h"

_Static_assert(sizeof(struct tsa_stack_id) == 16, "struct tsa_stack_id changed size");
_Static_assert(sizeof(struct tsa_offcpu_key) % 8 == 0, "struct tsa_offcpu_key needs no padding");

#define PERF_PAGES 64 /* ring buffer data pages per CPU (256 KiB) */

/* A record of the tree's address spaces, kept until the run is collected. */
struct prec {
	uint8_t type; /* PERF_RECORD_* */
	uint8_t bid_len;
	uint8_t bid[20];
	uint32_t pid, ppid;
	uint64_t time, start, len, pgoff;
	char *path;
};

struct pcpu {
	int fd;
	void *base;
	struct bpf_link *link;
};

struct stacks_probe {
	struct sched_probe *sched;
	struct sched_stack_maps maps;
	struct oncpu_bpf *oncpu;
	bool flame, waker;
	uint64_t offcpu_min_ns;
	unsigned freq;
	int ncpus;
	long page;
	struct pcpu *cpus;
	int epfd;
	bool perf_on;
	char perf_reason[192];
	struct prec *recs;
	size_t nrecs, cap;
	uint64_t perf_lost;
	uint64_t prev[TSA_C_NR];
};

/* Key of a stored stack (bpf/stacks.bpf.h). */
struct stack_key {
	uint64_t h1;
	uint32_t h2;
	uint32_t nr;
};

/*
 * The sampler's object for kernels without bpf_loop() (TSA_COMPAT), with
 * oncpu.skel.h's skeleton: the same maps and programs (as probe_sched.c does).
 */
static struct oncpu_bpf *open_compat(void)
{
	struct oncpu_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = oncpu_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)oncpu_compat_bpf__elf_bytes(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		oncpu_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

static int oncpu_load(struct stacks_probe *p, char *err, size_t errlen)
{
	struct oncpu_bpf *o = p->maps.compat_obj ? open_compat() : oncpu_bpf__open();
	int ret;

	if (!o) {
		snprintf(err, errlen, "cannot open the on-CPU sampler: %s", strerror(errno));
		return -errno;
	}
	/* What the kernel lacks, as the scheduler probe found (bpf/stacks.bpf.h). */
	o->rodata->targ_no_btf_current = p->maps.no_btf_current;
	o->rodata->targ_no_task_regs = p->maps.no_task_regs;
	ret = bpf_map__reuse_fd(o->maps.counters, p->maps.counters);
	if (!ret)
		ret = bpf_map__reuse_fd(o->maps.kstacks, p->maps.kstacks);
	if (!ret)
		ret = bpf_map__reuse_fd(o->maps.ustacks, p->maps.ustacks);
	if (!ret)
		ret = bpf_map__reuse_fd(o->maps.stack_scratch, p->maps.scratch);
	if (!ret)
		ret = bpf_map__set_max_entries(o->maps.oncpu, 16384);
	if (!ret)
		ret = oncpu_bpf__load(o);
	if (ret) {
		snprintf(err, errlen, "cannot load the on-CPU sampler: %s", strerror(-ret));
		oncpu_bpf__destroy(o);
		return ret;
	}
	p->oncpu = o;
	return 0;
}

struct stacks_probe *stacks_probe__new(const struct stacks_probe_opts *o, struct sched_probe *sched,
				       char *err, size_t errlen)
{
	struct stacks_probe *p = calloc(1, sizeof(*p));
	int ret;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->sched = sched;
	p->flame = o->flame;
	p->waker = o->waker;
	p->offcpu_min_ns = o->offcpu_min_ns;
	p->freq = o->freq;
	p->epfd = -1;
	p->page = sysconf(_SC_PAGESIZE);
	p->ncpus = libbpf_num_possible_cpus();
	ret = sched_probe__stack_maps(sched, &p->maps);
	if (ret) {
		snprintf(err, errlen, "the scheduler probe was loaded without stacks");
		goto out_free;
	}
	if (p->ncpus <= 0) {
		ret = -EINVAL;
		snprintf(err, errlen, "cannot count possible CPUs");
		goto out_free;
	}
	p->cpus = calloc((size_t)p->ncpus, sizeof(*p->cpus));
	if (!p->cpus) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out_free;
	}
	for (int c = 0; c < p->ncpus; c++)
		p->cpus[c].fd = -1;
	if (p->flame) {
		ret = oncpu_load(p, err, errlen);
		if (ret)
			goto out_free;
	}
	for (int i = 0; i < TSA_C_NR; i++)
		p->prev[i] = sched_probe__counter(sched, i);
	return p;

out_free:
	free(p->cpus);
	free(p);
	errno = -ret;
	return NULL;
}

static void close_events(struct stacks_probe *p)
{
	for (int c = 0; p->cpus && c < p->ncpus; c++) {
		struct pcpu *pc = &p->cpus[c];

		bpf_link__destroy(pc->link);
		pc->link = NULL;
		if (pc->base)
			munmap(pc->base, (size_t)(PERF_PAGES + 1) * (size_t)p->page);
		pc->base = NULL;
		if (pc->fd >= 0)
			close(pc->fd);
		pc->fd = -1;
	}
	if (p->epfd >= 0)
		close(p->epfd);
	p->epfd = -1;
	p->perf_on = false;
}

static void free_recs(struct stacks_probe *p)
{
	for (size_t i = 0; i < p->nrecs; i++)
		free(p->recs[i].path);
	p->nrecs = 0;
}

void stacks_probe__free(struct stacks_probe *p)
{
	if (!p)
		return;
	close_events(p);
	free_recs(p);
	free(p->recs);
	oncpu_bpf__destroy(p->oncpu);
	free(p->cpus);
	free(p);
}

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Open the per-CPU events on the command (inherited by everything it starts). */
static int open_events(struct stacks_probe *p, pid_t pid)
{
	struct perf_event_attr a;
	int ret = 0;

	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0) {
		ret = -errno;
		snprintf(p->perf_reason, sizeof(p->perf_reason), "epoll: %s", strerror(-ret));
		return ret;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = p->flame ? PERF_COUNT_SW_CPU_CLOCK : PERF_COUNT_SW_DUMMY;
	a.sample_period = p->flame ? 1000000000ull / p->freq : 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.mmap = 1;
	a.mmap2 = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.task = 1;
	a.inherit = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(PERF_PAGES * p->page / 4);
	a.build_id = 1;
	for (int c = 0; c < p->ncpus; c++) {
		struct pcpu *pc = &p->cpus[c];
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)c};

		pc->fd = perf_open(&a, pid, c);
		if (pc->fd < 0 && errno == EINVAL && a.build_id) {
			a.build_id = 0; /* before 5.12: device and inode instead of the build ID */
			pc->fd = perf_open(&a, pid, c);
		}
		if (pc->fd < 0 && errno == ENODEV)
			continue; /* a possible CPU that is not present */
		if (pc->fd < 0) {
			ret = -errno;
			snprintf(p->perf_reason, sizeof(p->perf_reason),
				 "perf_event_open (software %s event): %s",
				 p->flame ? "cpu-clock" : "dummy", strerror(-ret));
			return ret;
		}
		pc->base = mmap(NULL, (size_t)(PERF_PAGES + 1) * (size_t)p->page,
				PROT_READ | PROT_WRITE, MAP_SHARED, pc->fd, 0);
		if (pc->base == MAP_FAILED) {
			ret = -errno;
			pc->base = NULL;
			snprintf(p->perf_reason, sizeof(p->perf_reason),
				 "cannot map a perf ring buffer: %s", strerror(-ret));
			return ret;
		}
		if (p->flame) {
			pc->link =
			    bpf_program__attach_perf_event(p->oncpu->progs.tsa_oncpu, pc->fd);
			if (!pc->link) {
				ret = -errno;
				snprintf(p->perf_reason, sizeof(p->perf_reason),
					 "cannot attach the on-CPU sampler: %s", strerror(-ret));
				return ret;
			}
		}
		epoll_ctl(p->epfd, EPOLL_CTL_ADD, pc->fd, &ev);
	}
	p->perf_on = true;
	return 0;
}

static int add_rec(struct stacks_probe *p, const struct prec *r)
{
	struct prec *n = vec_grow(p->recs, &p->cap, p->nrecs + 1, sizeof(*n), 256);

	if (!n)
		return -ENOMEM;
	p->recs = n;
	p->recs[p->nrecs++] = *r;
	return 0;
}

/* One record from a perf ring buffer (already copied out, len bytes). */
static void parse_record(struct stacks_probe *p, const struct perf_event_header *h,
			 const uint8_t *d, size_t len)
{
	struct prec r;
	uint64_t t;

	memset(&r, 0, sizeof(r));
	if (h->type == PERF_RECORD_LOST && len >= 24) {
		uint64_t lost;

		memcpy(&lost, d + 16, 8);
		p->perf_lost += lost;
		return;
	}
	/* sample_id_all with TID and TIME: the last 16 bytes. */
	if (len < sizeof(*h) + 16)
		return;
	memcpy(&t, d + len - 8, 8);
	r.time = t;
	r.type = (uint8_t)h->type;
	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		const uint8_t *q = d + sizeof(*h);
		size_t fixed = 8 + 24 + 24 + 8;

		if (len < sizeof(*h) + fixed + 16)
			return;
		memcpy(&r.pid, q, 4);
		memcpy(&r.start, q + 8, 8);
		memcpy(&r.len, q + 16, 8);
		memcpy(&r.pgoff, q + 24, 8);
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			r.bid_len = q[32] > 20 ? 20 : q[32];
			memcpy(r.bid, q + 36, r.bid_len);
		}
		r.path = strndup((const char *)q + fixed, len - sizeof(*h) - fixed - 16);
		if (!r.path || add_rec(p, &r))
			free(r.path);
		return;
	}
	case PERF_RECORD_COMM:
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
			return;
		memcpy(&r.pid, d + sizeof(*h), 4);
		/* The name after the exec (path holds it): stacks before it had another. */
		r.path = strndup((const char *)d + sizeof(*h) + 8,
				 len > sizeof(*h) + 8 + 16 ? len - sizeof(*h) - 8 - 16 : 0);
		if (!r.path || add_rec(p, &r))
			free(r.path);
		return;
	case PERF_RECORD_FORK:
		memcpy(&r.pid, d + sizeof(*h), 4);
		memcpy(&r.ppid, d + sizeof(*h) + 4, 4);
		if (r.pid != r.ppid) /* a new process, not a thread */
			add_rec(p, &r);
		return;
	default:
		return;
	}
}

static void drain_cpu(struct stacks_probe *p, struct pcpu *pc)
{
	struct perf_event_mmap_page *mp = pc->base;
	uint8_t *data = (uint8_t *)pc->base + p->page, buf[4096 + 64];
	uint64_t size = (uint64_t)PERF_PAGES * (uint64_t)p->page, head, tail;

	if (!mp)
		return;
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		size_t off = (size_t)(tail % size);

		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(off + i) % size];
		if (h.size < sizeof(h))
			break;
		if (h.size <= sizeof(buf)) {
			for (size_t i = 0; i < h.size; i++)
				buf[i] = data[(off + i) % size];
			parse_record(p, &h, buf, h.size);
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(struct stacks_probe *p)
{
	for (int c = 0; c < p->ncpus; c++)
		if (p->cpus[c].base)
			drain_cpu(p, &p->cpus[c]);
}

/* The probe seam. */

static int st_arm(struct probe *pr, const struct spawn *child, struct run *r)
{
	struct stacks_probe *p = pr->ctx;

	free_recs(p);
	p->perf_lost = 0;
	p->perf_reason[0] = '\0';
	for (int i = 0; i < TSA_C_NR; i++)
		p->prev[i] = sched_probe__counter(p->sched, i);
	if (open_events(p, child->pid))
		close_events(p);
	if (!p->perf_on && p->flame)
		run__source(r, "oncpu", false, p->perf_reason);
	else if (p->flame)
		run__source(r, "oncpu", true, NULL);
	run__source(r, "stacks", true, NULL);
	return 0;
}

static int st_fd(struct probe *pr)
{
	struct stacks_probe *p = pr->ctx;

	return p->epfd;
}

static int st_ready(struct probe *pr)
{
	struct stacks_probe *p = pr->ctx;
	struct epoll_event ev[16];

	epoll_wait(p->epfd, ev, 16, 0);
	drain_all(p);
	return 0;
}

static int cmp_prec(const void *a, const void *b)
{
	const struct prec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->type == PERF_RECORD_MMAP2 ? (y->type == PERF_RECORD_MMAP2 ? 0 : 1)
					    : (y->type == PERF_RECORD_MMAP2 ? -1 : 0);
}

/* All keys of a map (then the caller reads and deletes them). */
static void *map_keys(int fd, size_t ksz, size_t *n)
{
	size_t cap = 1024, cnt = 0;
	uint8_t *keys = malloc(cap * ksz), prev[256];
	bool first = true;

	if (!keys)
		return NULL;
	while (!bpf_map_get_next_key(fd, first ? NULL : prev, keys + cnt * ksz)) {
		memcpy(prev, keys + cnt * ksz, ksz);
		first = false;
		if (++cnt == cap) {
			uint8_t *nk = vec_grow(keys, &cap, cnt + 1, ksz, 1024);

			if (!nk)
				break;
			keys = nk;
		}
	}
	*n = cnt;
	return keys;
}

static void map_clear(int fd, size_t ksz)
{
	size_t n = 0;
	uint8_t *keys = map_keys(fd, ksz, &n);

	for (size_t i = 0; keys && i < n; i++)
		bpf_map_delete_elem(fd, keys + i * ksz);
	free(keys);
}

/* Stack ids seen in the aggregates, to their trace index. */
struct idmap {
	struct idrec {
		struct tsa_stack_id id;
		bool kernel;
		uint32_t trace; /* index in the run's traces */
		uint64_t time;	/* a user stack's first capture (CLOCK_MONOTONIC), 0: unknown */
	} * v;
	size_t n, cap;
	struct hmap index; /* a stack id (and which stack) -> its record in v */
};

/* The stack id looked up, and the records it is looked up among. */
struct id_probe {
	const struct tsa_stack_id *id;
	bool kernel;
	const struct idrec *v;
};

static uint64_t id_hash(const struct tsa_stack_id *id, bool kernel)
{
	return (id->h1 ^ ((uint64_t)id->h2 << 7) ^ ((uint64_t)id->status << 55) ^ id->nr ^
		(kernel ? 0x5bd1e995ull : 0)) *
	       0x9E3779B97F4A7C15ull;
}

static bool id_eq(const struct tsa_stack_id *a, const struct tsa_stack_id *b)
{
	return a->h1 == b->h1 && a->h2 == b->h2 && a->nr == b->nr && a->status == b->status;
}

static bool idrec_equal(uint32_t i, const void *probe, void *ctx)
{
	const struct id_probe *p = probe;

	return p->v[i].kernel == p->kernel && id_eq(&p->v[i].id, p->id);
}

struct symctx {
	struct stacks_probe *p;
	const struct run *r;
	const struct prec **names; /* the fork and exec records, in time order */
	size_t nnames;
	struct symbolizer *sym;
	struct run_stacks *rs;
	struct idmap map;
	uint64_t cut; /* sleeps and samples whose user stack's unwinding ended early */
};

static bool tracer_frame(const char *name)
{
	return !strncmp(name, "bpf_prog_", 9) || !strncmp(name, "bpf_trace_run", 13) ||
	       !strncmp(name, "__bpf_trace_", 12) || !strncmp(name, "__traceiter_", 12) ||
	       !strncmp(name, "bpf_get_stack", 13) || !strncmp(name, "__bpf_get_stack", 15) ||
	       !strncmp(name, "bpf_get_task_stack", 18);
}

static int64_t kernel_trace(struct symctx *c, const struct tsa_stack_id *id)
{
	struct stack_key k = {id->h1, id->h2, id->nr};
	struct tsa_kstack ks;
	char *names[TSA_STACK_DEPTH];
	const char *frames[TSA_STACK_DEPTH];
	size_t n = 0;
	int64_t ret;

	if (bpf_map_lookup_elem(c->p->maps.kstacks, &k, &ks))
		return run_stacks__add_missing(c->rs, true, TSA_SS_FAILED);
	for (uint32_t i = ks.nr; i-- > 0;) {
		char buf[320];

		/* Every frame but the innermost is a return address (a sleeper's all are). */
		symbolizer__kernel_frame(c->sym, ks.ip[i], i > 0, buf, sizeof(buf));
		if (tracer_frame(buf))
			continue;
		names[n] = strdup(buf);
		if (!names[n])
			break;
		frames[n] = names[n];
		n++;
	}
	ret = run_stacks__add_trace(c->rs, frames, n, TSA_SS_OK, true,
				    (ks.flags & TSA_SF_TRUNCATED) != 0, 0);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	return ret;
}

static int64_t user_trace(struct symctx *c, const struct tsa_stack_id *id, uint64_t *time)
{
	struct stack_key k = {id->h1, id->h2, id->nr};
	struct tsa_ustack *us = malloc(sizeof(*us));
	uint64_t out[TSA_STACK_DEPTH + 16];
	char *names[TSA_STACK_DEPTH + 16];
	const char *frames[TSA_STACK_DEPTH + 16];
	uint32_t added = 0;
	bool partial = false;
	size_t n, nf = 0;
	int64_t ret;

	if (!us)
		return -ENOMEM;
	if (bpf_map_lookup_elem(c->p->maps.ustacks, &k, us)) {
		free(us);
		return run_stacks__add_missing(c->rs, false, TSA_SS_FAILED);
	}
	*time = us->time_ns;
	n = symbolizer__repair(
	    c->sym, us->pid, us->time_ns, (const uint64_t *)us->frames,
	    us->nr > TSA_STACK_DEPTH ? TSA_STACK_DEPTH : us->nr, us->ip, us->sp, us->bp, us->region,
	    us->region_len > TSA_REGION_BYTES ? TSA_REGION_BYTES : us->region_len, out,
	    sizeof(out) / sizeof(out[0]), &added, &partial);
	/*
	 * A walk that went astray through data (code without frame pointers
	 * below the thread's first frame) can read any number: past a
	 * return address no user space can have, the rest is not the stack.
	 */
	for (size_t i = 1; i < n; i++) {
		if (out[i] >= (1ull << 56)) {
			n = i;
			partial = true;
			break;
		}
	}
	for (size_t i = n; i-- > 0;) {
		char buf[320];

		if (!out[i])
			continue; /* the end of a frame-pointer chain, not a frame */
		if (!symbolizer__user_frame(c->sym, us->pid, us->time_ns, out[i], i > 0, buf,
					    sizeof(buf)) &&
		    !strncmp(buf, "[unknown]", 9))
			c->rs->drops.unresolved++;
		names[nf] = strdup(buf);
		if (!names[nf])
			break;
		frames[nf] = names[nf];
		nf++;
	}
	ret = run_stacks__add_trace(c->rs, frames, nf, TSA_SS_OK, false,
				    partial || (us->flags & TSA_SF_TRUNCATED), added);
	/* Cut short by the unwinding, not by the kernel's depth (which BPF counts). */
	if (ret >= 0)
		c->rs->traces[ret].cut = partial && !(us->flags & TSA_SF_TRUNCATED);
	for (size_t i = 0; i < nf; i++)
		free(names[i]);
	free(us);
	return ret;
}

/*
 * The trace index of a stack id, symbolized on first sight; time (may be
 * NULL) gets a user stack's first capture, 0 when not known.
 */
static int64_t trace_of(struct symctx *c, const struct tsa_stack_id *id, bool kernel,
			uint64_t *time)
{
	struct idmap *m = &c->map;
	struct id_probe probe = {id, kernel, m->v};
	uint64_t h = id_hash(id, kernel), when = 0;
	struct idrec *v;
	uint32_t i;
	int64_t t;

	if (time)
		*time = 0;

	if (hmap__find(&m->index, h, idrec_equal, &probe, &i)) {
		if (time)
			*time = m->v[i].time;
		return m->v[i].trace;
	}
	/* Room first: a stack is symbolized once. */
	if (hmap__reserve(&m->index))
		return -ENOMEM;
	v = vec_grow(m->v, &m->cap, m->n + 1, sizeof(*m->v), 1024);
	if (!v)
		return -ENOMEM;
	m->v = v;
	if (id->status != TSA_SS_OK)
		t = run_stacks__add_missing(c->rs, kernel, id->status);
	else if (kernel)
		t = kernel_trace(c, id);
	else
		t = user_trace(c, id, &when);
	if (t < 0)
		return t;
	if (time)
		*time = when;
	m->v[m->n] = (struct idrec){*id, kernel, (uint32_t)t, when};
	hmap__insert(&m->index, h, (uint32_t)m->n++); /* reserved above */
	return t;
}

/*
 * The name process pid had at time t, when it exec'd after t (a stack
 * then was of another program, and the thread's last name is the new
 * one's): the name its last exec before t gave it, else the one it was
 * forked with, its parent's then; the command before its exec is a clone
 * of tsarun's spawner. NULL when no exec came after t, or not known.
 */
static const char *comm_before_exec(const struct symctx *c, uint32_t pid, uint64_t t, int depth)
{
	const char *before = NULL;
	uint64_t fork_t = 0;
	uint32_t ppid = 0;
	bool later = false;

	if (!t || depth > 16)
		return NULL;
	for (size_t i = 0; i < c->nnames; i++) {
		const struct prec *x = c->names[i];

		if (x->pid != pid)
			continue;
		if (x->type == PERF_RECORD_FORK && x->time <= t) {
			before = NULL; /* a pid used again: a new process */
			ppid = x->ppid;
			fork_t = x->time;
		} else if (x->type == PERF_RECORD_COMM) {
			if (x->time > t)
				later = true;
			else
				before = x->path;
		}
	}
	if (!later)
		return NULL;
	if (before)
		return before;
	if (ppid) {
		const char *pc = comm_before_exec(c, ppid, fork_t, depth + 1);

		if (pc)
			return pc;
		for (size_t i = 0; i < c->r->nthreads; i++)
			if (c->r->threads[i].tid == ppid && c->r->threads[i].pid == ppid)
				return c->r->threads[i].comm;
		return NULL;
	}
	return pid == c->r->root_pid ? program_invocation_short_name : NULL;
}

/* An aggregate of the thread that survives its process's exec takes its name then. */
static void agg_comm(const struct symctx *c, struct stack_agg *ag, uint64_t when)
{
	const char *name = ag->tid == ag->pid ? comm_before_exec(c, ag->pid, when, 0) : NULL;

	if (name)
		snprintf(ag->comm, sizeof(ag->comm), "%s", name);
}

static bool irq_stack(const struct run_stacks *rs, uint32_t t)
{
	static const char *const entries[] = {
	    "asm_sysvec_", "asm_common_interrupt", "handle_softirqs", "__do_softirq",
	    "irq_exit",	   "asm_exc_nmi",	   "sysvec_"};

	if (t >= rs->ntraces)
		return false;
	for (uint32_t i = 0; i < rs->traces[t].nframes; i++)
		for (size_t e = 0; e < sizeof(entries) / sizeof(entries[0]); e++)
			if (!strncmp(rs->traces[t].frames[i], entries[e], strlen(entries[e])))
				return true;
	return false;
}

static int add_offcpu(struct symctx *c, const struct tsa_offcpu_key *k, const struct tsa_agg *a)
{
	struct stack_agg ag;
	int64_t u, kk, wu = 0, wk = 0;
	uint64_t when;
	bool irq = false;

	memset(&ag, 0, sizeof(ag));
	u = trace_of(c, &k->ustack, false, &when);
	kk = trace_of(c, &k->kstack, true, NULL);
	if (c->p->waker) {
		wk = trace_of(c, &k->waker_kstack, true, NULL);
		/*
		 * A wakeup from an interrupt (a timer, a device) runs on whatever
		 * task it interrupted: that task is not the waker and its user
		 * stack says nothing. The kernel stack (the interrupt path) is.
		 */
		irq = wk >= 0 && irq_stack(c->rs, (uint32_t)wk);
		wu = trace_of(
		    c, irq ? &(struct tsa_stack_id){.status = TSA_SS_NONE} : &k->waker_ustack,
		    false, NULL);
	}
	if (u < 0 || kk < 0 || wu < 0 || wk < 0)
		return -ENOMEM;
	ag.kind = STACK_OFFCPU;
	ag.pid = k->pid;
	ag.tid = k->tid;
	ag.state = (int)k->state;
	ag.ustack = (uint32_t)u;
	ag.kstack = (uint32_t)kk;
	if (c->p->waker) {
		ag.has_waker = true;
		ag.waker_pid = k->waker_pid;
		ag.waker_tid = k->waker_tid;
		memcpy(ag.waker_comm, k->waker_comm, sizeof(ag.waker_comm));
		ag.waker_comm[sizeof(ag.waker_comm) - 1] = '\0';
		if (k->waker_kstack.status == TSA_SS_MISSED)
			snprintf(ag.waker_comm, sizeof(ag.waker_comm), "[not seen]");
		if (irq) {
			ag.waker_pid = ag.waker_tid = 0;
			snprintf(ag.waker_comm, sizeof(ag.waker_comm), "[interrupt]");
		}
		ag.waker_ustack = (uint32_t)wu;
		ag.waker_kstack = (uint32_t)wk;
	}
	ag.count = a->count;
	ag.total_ns = a->total_ns;
	agg_comm(c, &ag, when);
	c->cut += (c->rs->traces[u].cut ? a->count : 0) +
		  (c->p->waker && c->rs->traces[wu].cut ? a->count : 0);
	return run_stacks__add_agg(c->rs, &ag);
}

/* Leftover sleeps whose thread never reached its system call's end (exited, or still there). */
static int flush_pending(struct symctx *c, const struct run *r)
{
	size_t n = 0;
	uint32_t *tids = map_keys(c->p->maps.pending, sizeof(uint32_t), &n);
	int err = 0;

	for (size_t i = 0; tids && !err && i < n; i++) {
		struct tsa_pending pe;
		uint8_t status = TSA_SS_AT_END;

		if (bpf_map_lookup_elem(c->p->maps.pending, &tids[i], &pe))
			continue;
		for (size_t t = 0; t < r->nthreads; t++)
			if (r->threads[t].tid == tids[i] &&
			    r->threads[t].task_start_ns == pe.task_start &&
			    (r->threads[t].flags & TSA_F_EXITED))
				status = TSA_SS_EXITED;
		for (uint32_t e = 0; !err && e < pe.n && e < TSA_PENDING_MAX; e++) {
			pe.e[e].key.ustack = (struct tsa_stack_id){.status = status};
			err = add_offcpu(c, &pe.e[e].key, &pe.e[e].agg);
		}
	}
	free(tids);
	return err;
}

static int read_offcpu(struct symctx *c)
{
	size_t n = 0;
	struct tsa_offcpu_key *keys = map_keys(c->p->maps.offcpu, sizeof(*keys), &n);
	int err = 0;

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		struct tsa_agg a;

		if (!bpf_map_lookup_elem(c->p->maps.offcpu, &keys[i], &a))
			err = add_offcpu(c, &keys[i], &a);
	}
	free(keys);
	return err;
}

static int read_oncpu(struct symctx *c)
{
	int fd = bpf_map__fd(c->p->oncpu->maps.oncpu);
	size_t n = 0;
	struct tsa_oncpu_key *keys = map_keys(fd, sizeof(*keys), &n);
	int err = 0;

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		struct stack_agg ag;
		uint64_t cnt, when;
		int64_t u, k;

		if (bpf_map_lookup_elem(fd, &keys[i], &cnt))
			continue;
		u = trace_of(c, &keys[i].ustack, false, &when);
		k = trace_of(c, &keys[i].kstack, true, NULL);
		if (u < 0 || k < 0) {
			err = -ENOMEM;
			break;
		}
		memset(&ag, 0, sizeof(ag));
		ag.kind = STACK_ONCPU;
		ag.pid = keys[i].pid;
		ag.tid = keys[i].tid;
		ag.state = TSA_ST_ONCPU;
		ag.ustack = (uint32_t)u;
		ag.kstack = (uint32_t)k;
		ag.count = cnt;
		agg_comm(c, &ag, when);
		c->rs->oncpu_samples += cnt;
		c->cut += c->rs->traces[u].cut ? cnt : 0;
		err = run_stacks__add_agg(c->rs, &ag);
	}
	free(keys);
	return err;
}

static uint64_t delta(struct stacks_probe *p, int which)
{
	uint64_t v = sched_probe__counter(p->sched, which);

	return v - p->prev[which];
}

static void clear_maps(struct stacks_probe *p)
{
	map_clear(p->maps.offcpu, sizeof(struct tsa_offcpu_key));
	map_clear(p->maps.pending, sizeof(uint32_t));
	sched_probe__reset_pending(p->sched);
	if (p->oncpu)
		map_clear(bpf_map__fd(p->oncpu->maps.oncpu), sizeof(struct tsa_oncpu_key));
	map_clear(p->maps.kstacks, sizeof(struct stack_key));
	map_clear(p->maps.ustacks, sizeof(struct stack_key));
}

static void self_maps(struct symbolizer *sym, uint32_t pid)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], path[3072];
		int n =
		    sscanf(line, "%llx-%llx %7s %llx %*s %*s %3071s", &lo, &hi, perms, &off, path);

		if (n == 5 && perms[2] == 'x')
			symbolizer__mmap(sym, pid, 0, lo, hi - lo, off, path, NULL, 0);
	}
	fclose(f);
}

static int st_collect(struct probe *pr, struct run *r)
{
	struct stacks_probe *p = pr->ctx;
	struct symctx c = {.p = p, .r = r};
	struct run_stacks *rs;
	bool perf_was_on = p->perf_on;
	int err = 0;

	drain_all(p);
	close_events(p);
	rs = run_stacks__new();
	c.sym = symbolizer__new();
	if (!rs || !c.sym) {
		err = -ENOMEM;
		goto out;
	}
	c.rs = rs;
	rs->offcpu = true;
	rs->oncpu = p->flame && perf_was_on;
	rs->waker = p->waker;
	rs->offcpu_min_ns = p->offcpu_min_ns;
	rs->freq = p->flame ? p->freq : 0;
	rs->oncpu_period_ns = p->flame ? 1000000000ull / p->freq : 0;
	if (p->flame && !perf_was_on)
		snprintf(rs->oncpu_reason, sizeof(rs->oncpu_reason), "%s", p->perf_reason);
	if (!perf_was_on)
		snprintf(rs->user_symbols, sizeof(rs->user_symbols),
			 "no mapping records (%.120s): user frames are addresses", p->perf_reason);
	symbolizer__load_kernel(c.sym);
	snprintf(rs->kernel_symbols, sizeof(rs->kernel_symbols), "%s",
		 symbolizer__kernel_reason(c.sym));
	/*
	 * Before its exec the command is a clone of the spawner, a fork of
	 * tsarun made at start-up: its code mappings are tsarun's own (the
	 * barrier wait is charged to the command's first thread).
	 */
	self_maps(c.sym, r->root_pid);
	/* The address-space history, in time order. */
	qsort(p->recs, p->nrecs, sizeof(*p->recs), cmp_prec);
	for (size_t i = 0; i < p->nrecs; i++) {
		const struct prec *x = &p->recs[i];

		if (x->type == PERF_RECORD_FORK)
			symbolizer__fork(c.sym, x->pid, x->ppid, x->time);
		else if (x->type == PERF_RECORD_COMM)
			symbolizer__exec(c.sym, x->pid, x->time);
		else if (x->type == PERF_RECORD_MMAP2)
			symbolizer__mmap(c.sym, x->pid, x->time, x->start, x->len, x->pgoff,
					 x->path, x->bid_len ? x->bid : NULL, x->bid_len);
	}
	/* Names change at forks and execs: those records alone, for comm_before_exec(). */
	c.names = calloc(p->nrecs ? p->nrecs : 1, sizeof(*c.names));
	if (!c.names) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->nrecs; i++)
		if (p->recs[i].type == PERF_RECORD_FORK || p->recs[i].type == PERF_RECORD_COMM)
			c.names[c.nnames++] = &p->recs[i];
	err = read_offcpu(&c);
	if (!err)
		err = flush_pending(&c, r);
	if (!err && p->oncpu && rs->oncpu)
		err = read_oncpu(&c);
	if (err)
		goto out;
	rs->drops.kstack_fail = delta(p, TSA_C_KSTACK_FAIL);
	rs->drops.ustack_fail = delta(p, TSA_C_USTACK_FAIL);
	rs->drops.map_full = delta(p, TSA_C_STACK_FULL);
	rs->drops.truncated = delta(p, TSA_C_TRUNCATED);
	rs->drops.cut = c.cut;
	rs->drops.agg_full = delta(p, TSA_C_AGG_FULL);
	rs->drops.agg_full_ns = delta(p, TSA_C_AGG_FULL_NS);
	rs->drops.pending_lost = delta(p, TSA_C_PENDING_FULL) + delta(p, TSA_C_PENDING_OVER);
	rs->drops.waker_missed = delta(p, TSA_C_WAKER_MISSED);
	rs->drops.oncpu_full = delta(p, TSA_C_ONCPU_FULL);
	rs->drops.perf_lost = p->perf_lost;
	run_stacks__sort(rs);
	for (size_t i = 0; i < r->nthreads; i++)
		r->threads[i].have_below = true;
	r->quality.stack_drops += stack_drops_total(&rs->drops);
	r->stacks = rs;
	rs = NULL;
out:
	clear_maps(p);
	free(c.map.v);
	hmap__free(&c.map.index);
	free(c.names);
	symbolizer__free(c.sym);
	run_stacks__free(rs);
	free_recs(p);
	return err;
}

void stacks_probe__as_probe(struct stacks_probe *sp, struct probe *out)
{
	memset(out, 0, sizeof(*out));
	out->name = "stacks";
	out->ctx = sp;
	out->arm = st_arm;
	out->fd = st_fd;
	out->on_ready = st_ready;
	out->collect = st_collect;
}
