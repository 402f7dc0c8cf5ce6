// SPDX-License-Identifier: MIT
/* User-space side of the scheduler probe: open -> size -> load -> attach. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/skel_internal.h>

#include "account.h"
#include "probe.h"
#include "procfs.h"
#include "ringbuf.h"
#include "run.h"
#include "probe_sched.h"
#include "sched.skel.h"
#include "sched_compat.skel.h"
#include "sched.loader.h"
#include "spawn.h"
#include "symbolize.h"
#include "timeline.h"
#include "termwrap.h"
#include "lib/vec.h"

_Static_assert(sizeof(struct tsa_thread) == TSA_THREAD_SIZE, "struct tsa_thread changed size");

/* How the object is loaded (see sched_probe__new()). */
struct variant {
	bool has_state;	    /* sched_switch passes prev_state (5.18+) */
	bool wakeup_events; /* time wakeups with sched_wakeup: no sched_info stamps */
	bool kernel_loader; /* load with the kernel's loader program (kernel_load()) */
};

/* Programs the event path can attach (the iterator is attached when read). */
#define SCHED_MAX_LINKS 8

struct sched_probe {
	struct sched_bpf *skel;
	/*
	 * Loaded by the kernel's loader program (kernel_load()): the maps and
	 * programs are these descriptors, not libbpf's, and .bss is mapped here.
	 */
	struct bpf_loader_ctx *kctx;
	bool prebuilt;			 /* ... the loader written at build time (sched.loader.h) */
	bool loads[SCHED_NPROGS];	 /* the programs loaded (enum sched_prog) */
	struct sched_bpf__bss *bss;	 /* the live .bss, whichever loaded it */
	size_t bss_len;			 /* its mapping, when it is ours */
	struct sched_bpf__rodata rodata; /* as loaded */
	int links[SCHED_MAX_LINKS];
	int nlinks;
	struct sched_bpf *iter; /* the survivors' iterator, loaded on first use */
	int iter_err;		/* ... or why it could not be: not tried again */
	bool iter_in_skel;	/* ... or it is loaded with the rest (sched_probe_opts) */
	struct ringbuf_reader *rb;
	struct thread_acct *recs; /* converted as they arrive: the raw records are not kept */
	size_t nrecs, cap;
	const uint64_t *origin; /* the current run's start (set when its barrier opens) */
	int ncpus;
	bool wakeup_events; /* the variant that times wakeups with sched_wakeup */
	uint32_t gen;
	uint64_t stale;
	bool leftovers;		 /* a run left tracked threads running: later runs see theirs */
	uint64_t test_drop_recs; /* tests: records to ignore (TSARUN_TEST_DROP_RECORDS) */
	uint64_t prev[TSA_C_NR];
	struct tsa_lost prev_lost;
	int err; /* first error seen by the ring buffer callback */
	bool stacks;
	bool deferred;
	bool task_hash;		/* tasks is a hash map by task, not task storage (before 5.11) */
	bool compat_obj;	/* the object for kernels without bpf_loop() (TSA_COMPAT) */
	struct variant variant; /* the one that loaded */
	struct timeline_builder *tl; /* --timeline, or NULL */
	bool tl_stalled;	     /* tests: its ring buffer is read only at the end */
	size_t width;		     /* of stderr, for the warnings */
};

static int append(struct sched_probe *p, const struct tsa_thread *t)
{
	if (p->nrecs == p->cap) {
		/* Grow by half: a run of 10,000 threads does not need 16,384 slots. */
		size_t cap = p->cap ? p->cap + p->cap / 2 : 256;
		struct thread_acct *r = realloc(p->recs, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		p->recs = r;
		p->cap = cap;
	}
	fold_convert(&p->recs[p->nrecs++], t, p->origin ? *p->origin : 0);
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sched_probe *p = ctx;
	int err;

	if (size < sizeof(struct tsa_thread))
		return 0;
	if (((const struct tsa_thread *)data)->gen != p->gen) {
		p->stale++;
		return 0;
	}
	if (p->test_drop_recs) {
		p->test_drop_recs--;
		return 0;
	}
	err = append(p, data);
	if (err && !p->err)
		p->err = err;
	return err;
}

static int on_timeline(void *ctx, void *data, size_t size)
{
	struct sched_probe *p = ctx;
	int err;

	if (size < sizeof(struct tsa_tl_event))
		return 0;
	if (((const struct tsa_tl_event *)data)->gen != p->gen)
		return 0; /* a survivor of an earlier run, left running */
	err = timeline_builder__add(p->tl, data, size);
	if (err && !p->err)
		p->err = err;
	return err;
}

static uint64_t round_pow2(uint64_t v)
{
	uint64_t r = 4096;

	while (r < v)
		r <<= 1;
	return r;
}

/*
 * Why a load failed, from what libbpf says on the way (its warnings): the
 * program the kernel refused (or the map it would not create), the
 * verifier's last words about it, and its whole log, for -v. Each load
 * attempt starts afresh (capture_reset()); sched_probe__new() keeps the
 * first failure's, the one of the variant the kernel should have taken.
 */
#define LOG_MAX (64 * 1024)

struct load_capture {
	struct sched_load_failure f;
	char cand[160];	   /* the last line of the log that is not an instruction */
	bool in_log;	   /* between BEGIN and END PROG LOAD LOG */
	char log[LOG_MAX]; /* the refused program's verifier log (its tail, when longer) */
	size_t log_len;
};

static struct load_capture cap, first_cap;

static void capture_reset(void)
{
	memset(&cap.f, 0, sizeof(cap.f));
	cap.cand[0] = '\0';
	cap.in_log = false;
	cap.log_len = 0;
	cap.log[0] = '\0';
}

static void log_append(const char *line)
{
	size_t n = strlen(line) + 1;

	if (n >= LOG_MAX)
		return;
	if (cap.log_len + n >= LOG_MAX) {
		/* Keep the tail, where the verifier says what it refused. */
		size_t drop = cap.log_len + n - LOG_MAX + LOG_MAX / 4;

		memmove(cap.log, cap.log + drop, cap.log_len - drop);
		cap.log_len -= drop;
	}
	memcpy(cap.log + cap.log_len, line, n - 1);
	cap.log_len += n - 1;
	cap.log[cap.log_len++] = '\n';
	cap.log[cap.log_len] = '\0';
}

/* Is this line of a verifier log one that says something (not an instruction, not a state)? */
static bool log_words(const char *line)
{
	if (!*line || (*line >= '0' && *line <= '9') || *line == ';' || *line == ' ' ||
	    *line == '\t' || !strncmp(line, "processed ", 10) || !strncmp(line, "-- ", 3) ||
	    !strncmp(line, "libbpf: ", 8) || !strncmp(line, "verification time", 17) ||
	    !strncmp(line, "stack depth", 11) || !strncmp(line, "from ", 5) ||
	    !strncmp(line, "func#", 5) || !strncmp(line, "Func#", 5) ||
	    !strncmp(line, "reg type unsupported", 20) || strstr(line, "has btf_id"))
		return false;
	return true;
}

static void remember_line(const char *fmt, va_list ap)
{
	char *buf, *line, *save = NULL, name[64];

	/* A whole verifier log comes in one message: megabytes, at worst. */
	if (vasprintf(&buf, fmt, ap) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *l = !strncmp(line, "libbpf: ", 8) ? line + 8 : line;

		if (strstr(l, "-- BEGIN PROG LOAD LOG --")) {
			cap.in_log = true;
			cap.log_len = 0;
			cap.cand[0] = '\0';
			continue;
		}
		if (strstr(l, "-- END PROG LOAD LOG --")) {
			cap.in_log = false;
			if (cap.cand[0])
				snprintf(cap.f.message, sizeof(cap.f.message), "%s", cap.cand);
			continue;
		}
		if (cap.in_log) {
			log_append(line);
			if (log_words(line))
				snprintf(cap.cand, sizeof(cap.cand), "%s", line);
			continue;
		}
		/* "prog 'tsa_switch': failed to load: -22", "map 'tasks': failed to create: ..." */
		if ((sscanf(l, "prog '%63[^']': failed to load", name) == 1 ||
		     sscanf(l, "prog '%63[^']': BPF program load failed", name) == 1) &&
		    !cap.f.object[0]) {
			snprintf(cap.f.object, sizeof(cap.f.object), "%s", name);
			cap.f.is_map = false;
		} else if (sscanf(l, "map '%63[^']': failed to create", name) == 1 &&
			   !cap.f.object[0]) {
			const char *why = strstr(l, "failed to create: ");

			snprintf(cap.f.object, sizeof(cap.f.object), "%s", name);
			cap.f.is_map = true;
			snprintf(cap.f.message, sizeof(cap.f.message), "%s",
				 why ? why + 18 : "failed to create");
		} else if (strstr(l, "failed to resolve CO-RE relocation") && !cap.f.message[0]) {
			snprintf(cap.f.message, sizeof(cap.f.message), "%s", l);
		}
	}
	free(buf);
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;

	va_copy(copy, ap);
	if (level == LIBBPF_WARN)
		remember_line(fmt, copy);
	va_end(copy);
	if (level == LIBBPF_WARN && getenv("TSARUN_DEBUG_BPF"))
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_DEBUG && getenv("TSARUN_DEBUG_BPF") &&
	    !strcmp(getenv("TSARUN_DEBUG_BPF"), "2"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* TSARUN_BPF_COMPAT: a comma-separated list of these words (see sched_probe__new()). */
static const char *const compat_words[] = {"libbpf",   "prev_state",  "wakeup",
					   "no_defer", "no_prebuilt", "old"};

/* Is what one of the list's words? With what NULL: the first word that is none of compat_words. */
static const char *compat_word(const char *what, char *word, size_t len)
{
	const char *v = getenv("TSARUN_BPF_COMPAT"), *end;

	for (; v && *v; v = *end ? end + 1 : end) {
		bool known = false;

		end = strchrnul(v, ',');
		snprintf(word, len, "%.*s", (int)(end - v), v);
		if (!word[0])
			continue;
		if (what && !strcmp(word, what))
			return word;
		for (size_t i = 0; i < sizeof(compat_words) / sizeof(compat_words[0]); i++)
			known |= !strcmp(word, compat_words[i]);
		if (!what && !known)
			return word;
	}
	return NULL;
}

static bool compat(const char *what)
{
	char word[64];

	return compat_word(what, word, sizeof(word)) != NULL;
}

/*
 * The maps and programs are named by their place in the object (enum
 * sched_map and enum sched_prog, sched.loader.h), the same whoever loaded
 * them: the object need not be opened when the kernel's loader written at
 * build time loads it. In an opened object they are found by name: the
 * object for older kernels (TSA_COMPAT) has them all, in another order.
 */
static struct bpf_map *nth_map(const struct sched_probe *p, int idx)
{
	return bpf_object__find_map_by_name(p->skel->obj, sched_maps[idx].name);
}

static struct bpf_program *nth_prog(const struct sched_probe *p, int idx)
{
	return bpf_object__find_program_by_name(p->skel->obj, sched_progs[idx].name);
}

/* The fd of one of the object's maps, whoever loaded it. */
static int map_fd(const struct sched_probe *p, enum sched_map idx)
{
	struct bpf_map *m;

	if (p->kctx)
		return ((const struct bpf_map_desc *)(p->kctx + 1))[idx].map_fd;
	m = nth_map(p, idx);
	return m ? bpf_map__fd(m) : -ENOENT;
}

/* The fd of a loaded program, or a negative errno. */
static int prog_fd(const struct sched_probe *p, enum sched_prog idx)
{
	const struct bpf_prog_desc *pd;
	struct bpf_program *prog;
	int k = 0;

	if (!p->loads[idx])
		return -ENOENT;
	if (!p->kctx) {
		prog = nth_prog(p, idx);
		return prog ? bpf_program__fd(prog) : -ENOENT;
	}
	/* The loader numbers the programs it loads in the object's order (checked at the load). */
	for (int i = 0; i < (int)idx; i++)
		k += p->loads[i];
	pd = (const struct bpf_prog_desc *)((const struct bpf_map_desc *)(p->kctx + 1) +
					    SCHED_NMAPS);
	return pd[k].prog_fd > 0 ? pd[k].prog_fd : -ENOENT;
}

/*
 * What the running kernel's BPF has, by libbpf's feature probes (each a
 * map created or a program loaded and thrown away): probed once, and only
 * when the usual set's loader did not load (then the kernel is new enough
 * for all of it). Before 5.11 tracing programs have no task storage and no
 * bpf_get_current_task_btf(); before 5.15 no bpf_task_pt_regs(); before
 * 5.17 no bpf_loop().
 */
static struct {
	bool probed;
	bool task_storage, btf_current, task_regs, loop;
} feat = {.task_storage = true, .btf_current = true, .task_regs = true, .loop = true};

static void probe_features(void)
{
	if (feat.probed)
		return;
	feat.probed = true;
	feat.task_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
	feat.btf_current =
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_current_task_btf, NULL) == 1;
	feat.task_regs =
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_pt_regs, NULL) == 1;
	feat.loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) == 1;
	/* Tests only: the fallbacks of older kernels, on this one. */
	if (compat("old")) {
		feat.task_storage = feat.btf_current = feat.task_regs = feat.loop = false;
	}
	if (getenv("TSARUN_DEBUG_BPF"))
		fprintf(stderr,
			"tsarun: ebpf: task storage %d, bpf_get_current_task_btf %d, "
			"bpf_task_pt_regs %d, bpf_loop %d\n",
			feat.task_storage, feat.btf_current, feat.task_regs, feat.loop);
}

/* What the object is loaded with: its .rodata, the programs that load, the maps' sizes. */
struct sched_config {
	struct sched_bpf__rodata ro;
	bool loads[SCHED_NPROGS];
	__u32 max_entries[SCHED_NMAPS]; /* 0: the object's own */
};

_Static_assert(sizeof(struct sched_bpf__rodata) == sizeof(sched_rodata),
	       ".rodata is not the object's (sched.loader.h is stale)");
_Static_assert(SCHED_NPROGS == 6, "a program was added: say in configure() when it loads");

/*
 * The configuration for options o and variant v, from the object's own
 * (sched.loader.h). Off-CPU stacks: without --stacks the stack programs are
 * not loaded, the stack maps are minimal, and the switch path's stack code
 * is dead (targ_stacks is a constant the verifier prunes on).
 */
static void configure(struct sched_probe *p, struct sched_config *c,
		      const struct sched_probe_opts *o, const struct variant *v)
{
	struct sched_bpf__rodata *ro = &c->ro;

	memcpy(ro, sched_rodata, sizeof(*ro));
	memset(c->max_entries, 0, sizeof(c->max_entries));
	ro->targ_switch_has_state = v->has_state;
	ro->targ_wakeup_events = v->wakeup_events;
	/* Without task storage, the records in a hash map by task (sched.bpf.c). */
	ro->targ_task_hash = !feat.task_storage || !feat.btf_current;
	ro->targ_no_btf_current = !feat.btf_current;
	ro->targ_no_task_regs = !feat.task_regs;
	p->task_hash = ro->targ_task_hash;
	/* Tests only: see targ_test_drop_in, targ_test_slow_send and targ_test_early_wake (sched.bpf.c). */
	if (getenv("TSARUN_TEST_DROP_SWITCH_IN"))
		ro->targ_test_drop_in =
		    (__u32)strtoul(getenv("TSARUN_TEST_DROP_SWITCH_IN"), NULL, 10);
	ro->targ_test_slow_send = getenv("TSARUN_TEST_SLOW_SEND") != NULL;
	ro->targ_test_fail = getenv("TSARUN_TEST_BPF_FAIL") != NULL;
	if (getenv("TSARUN_TEST_EARLY_WAKE"))
		ro->targ_test_early_wake = strtoull(getenv("TSARUN_TEST_EARLY_WAKE"), NULL, 10);
	c->max_entries[SCHED_MAP_records] = (__u32)round_pow2(o->ringbuf_bytes);
	/* --timeline: user space is woken when an eighth of the buffer waits (sched.bpf.c). */
	ro->targ_timeline = o->timeline_bytes > 0;
	ro->targ_tl_wake_bytes = round_pow2(o->timeline_bytes) / 8;
	c->max_entries[SCHED_MAP_timeline] =
	    o->timeline_bytes ? (__u32)round_pow2(o->timeline_bytes) : 4096;
	c->max_entries[SCHED_MAP_clocks] = (__u32)p->ncpus;
	/* Threads marked by user space, before their first event (monitor mode: many). */
	c->max_entries[SCHED_MAP_marks] = ro->targ_task_hash ? 4096 : 1;
	ro->targ_stacks = o->stacks;
	ro->targ_offcpu_min_ns = o->offcpu_min_ns;
	ro->targ_waker = o->stacks && o->waker;
#if defined(__x86_64__)
	/* The user stack of a sleep in a system call is taken at its exit (sched.bpf.c). */
	ro->targ_defer_user = o->stacks && !compat("no_defer");
#endif
	p->deferred = ro->targ_defer_user;
	p->stacks = o->stacks;
	/* Preallocated (see bpf/stacks.bpf.h): about 17 MB of kernel memory in all. */
	c->max_entries[SCHED_MAP_kstacks] = o->stacks ? 8192 : 1;
	c->max_entries[SCHED_MAP_ustacks] = o->stacks ? 4096 : 1;
	c->max_entries[SCHED_MAP_offcpu] = o->stacks ? 32768 : 1;
	c->max_entries[SCHED_MAP_pending] = o->stacks ? 4096 : 1;
	c->loads[SCHED_PROG_tsa_switch] = true;
	c->loads[SCHED_PROG_tsa_wakeup] = v->wakeup_events;
	/* --waker's stacks, and with --timeline the critical path's wakers. */
	c->loads[SCHED_PROG_tsa_waking] = (o->stacks && o->waker) || o->timeline_bytes > 0;
	c->loads[SCHED_PROG_tsa_sys_exit] = p->deferred;
	c->loads[SCHED_PROG_tsa_wakeup_new] = true;
	/* Otherwise loaded when a run first ends with threads still alive: see iter_load(). */
	c->loads[SCHED_PROG_tsa_survivors] = o->survivors_now;
	p->iter_in_skel = o->survivors_now;
}

/* The same, on the opened object. */
static int apply_config(struct sched_probe *p, const struct sched_config *c)
{
	struct bpf_program *prog;
	struct bpf_map *m;
	int i, ret;

	*p->skel->rodata = c->ro;
	if (c->ro.targ_task_hash) {
		/*
		 * Preallocated: a record is created under the runqueue lock. 16,384
		 * threads of the tree alive at once, 17 MB of kernel memory.
		 */
		m = p->skel->maps.tasks;
		ret = bpf_map__set_type(m, BPF_MAP_TYPE_HASH);
		if (!ret)
			ret = bpf_map__set_map_flags(m, 0);
		if (!ret)
			ret =
			    bpf_map__set_key_size(m, sizeof(__u64)); /* the task's stack address */
		if (!ret)
			ret = bpf_map__set_max_entries(m, 16384);
		if (ret)
			return ret;
	}
	for (i = 0; i < SCHED_NPROGS; i++) {
		prog = nth_prog(p, i);
		if (!prog)
			return -ENOENT;
		bpf_program__set_autoload(prog, c->loads[i]);
	}
	for (i = 0; i < SCHED_NMAPS; i++) {
		m = nth_map(p, i);
		if (!m)
			return -ENOENT;
		if (c->max_entries[i] && c->max_entries[i] != bpf_map__max_entries(m)) {
			ret = bpf_map__set_max_entries(m, c->max_entries[i]);
			if (ret)
				return ret;
		}
	}
	memcpy(p->loads, c->loads, sizeof(p->loads));
	return 0;
}

/*
 * After the kernel's loader: check that it made the maps and programs in
 * the object's order, as their names say, and map .bss.
 */
static int kernel_loaded(struct sched_probe *p)
{
	const struct bpf_map_desc *md = (const struct bpf_map_desc *)(p->kctx + 1);
	struct bpf_prog_info pinfo;
	struct bpf_map_info info;
	__u32 len;
	int fd;

	for (int i = 0; i < SCHED_NMAPS; i++) {
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (md[i].map_fd <= 0 || bpf_obj_get_info_by_fd(md[i].map_fd, &info, &len) ||
		    strncmp(info.name, sched_maps[i].name, sizeof(info.name) - 1))
			return -ENOENT;
	}
	for (int i = 0; i < SCHED_NPROGS; i++) {
		if (!p->loads[i])
			continue;
		memset(&pinfo, 0, sizeof(pinfo));
		len = sizeof(pinfo);
		fd = prog_fd(p, i);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &pinfo, &len) ||
		    strncmp(pinfo.name, sched_progs[i].name, sizeof(pinfo.name) - 1))
			return -ENOENT;
	}
	p->bss_len = (sizeof(struct sched_bpf__bss) + 4095) & ~(size_t)4095;
	p->bss =
	    mmap(NULL, p->bss_len, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd(p, SCHED_MAP_bss), 0);
	if (p->bss == MAP_FAILED) {
		p->bss = NULL;
		return -errno;
	}
	return 0;
}

/* The loader's context: room for every map and every program (it numbers the ones it loads). */
static size_t kctx_size(void)
{
	return sizeof(struct bpf_loader_ctx) + SCHED_NMAPS * sizeof(struct bpf_map_desc) +
	       SCHED_NPROGS * sizeof(struct bpf_prog_desc);
}

static void kernel_unload(struct sched_probe *p);

/*
 * The usual set of programs (no --stacks, not the sched_wakeup variant, the
 * iterator with the rest) on Linux 6.2 and later: the kernel's loader
 * written at build time (bpf/mkloader.c; one with --timeline, one without
 * any of its code), from the object that reads the runqueue through the
 * task cast as untrusted and has as constants the options that are the
 * same in every such load. The object is not even
 * opened: its sizes and .rodata go in through the loader's context, which
 * it reads before creating each map and filling it (libbpf's loaders read
 * max_entries and initial_value there when they are not 0). 0, or -errno
 * when this set or this kernel is not one for it, or the kernel refuses it
 * (sched_probe__new() then opens the object and loads it as before).
 */
static int prebuilt_load(struct sched_probe *p, const struct sched_probe_opts *o)
{
	const struct variant v = {.has_state = true, .kernel_loader = true};
	struct bpf_load_and_run_opts run = {0};
	struct sched_config c;
	struct bpf_map_desc *md;
	int ret;

	/* Tried first: where the kernel lacks bpf_rdonly_cast() (before 6.2), it refuses it. */
	if (compat("no_prebuilt") || compat("libbpf") || compat("prev_state") || compat("wakeup") ||
	    compat("old"))
		return -ENOTSUP;
	configure(p, &c, o, &v);
	for (int i = 0; i < SCHED_NPROGS; i++)
		if (c.loads[i] !=
		    (c.ro.targ_timeline ? sched_progs[i].loads_tl : sched_progs[i].loads))
			return -ENOTSUP;
	/* The options its object has as constants (TSA_USUAL in sched.bpf.c). */
	if (!c.ro.targ_switch_has_state || c.ro.targ_stacks || c.ro.targ_waker ||
	    c.ro.targ_defer_user || c.ro.targ_wakeup_events || c.ro.targ_task_hash ||
	    c.ro.targ_no_btf_current || c.ro.targ_no_task_regs || c.ro.targ_test_fail)
		return -ENOTSUP;
	p->kctx = calloc(1, kctx_size());
	if (!p->kctx)
		return -ENOMEM;
	p->kctx->sz = (__u32)kctx_size();
	md = (struct bpf_map_desc *)(p->kctx + 1);
	for (int i = 0; i < SCHED_NMAPS; i++)
		md[i].max_entries = c.max_entries[i];
	md[SCHED_MAP_rodata].initial_value = (__u64)(unsigned long)&c.ro;
	/* Tests only: a ring buffer the kernel refuses, so that the fallback is tested. */
	if (getenv("TSARUN_TEST_PREBUILT_FAIL"))
		md[SCHED_MAP_records].max_entries = 3;
	memcpy(p->loads, c.loads, sizeof(p->loads));
	run.ctx = p->kctx;
	if (c.ro.targ_timeline) {
		run.data = sched_loader_tl_data;
		run.insns = sched_loader_tl_insns;
		run.data_sz = sizeof(sched_loader_tl_data);
		run.insns_sz = sizeof(sched_loader_tl_insns);
	} else {
		/* Its object has no timeline code at all (TSA_NO_TIMELINE). */
		run.data = sched_loader_data;
		run.insns = sched_loader_insns;
		run.data_sz = sizeof(sched_loader_data);
		run.insns_sz = sizeof(sched_loader_insns);
	}
	ret = bpf_load_and_run(&run);
	if (ret)
		ret = ret < 0 ? ret : -EINVAL;
	else
		ret = kernel_loaded(p);
	if (ret) {
		kernel_unload(p);
		return ret;
	}
	p->rodata = c.ro;
	p->variant = v;
	p->prebuilt = true;
	return 0;
}

/*
 * Load with the kernel's own loader: libbpf writes the object's loading,
 * configured as it would load it, as a BPF program (the loader of its
 * "light skeletons", here written at run time), and the kernel runs it. The
 * kernel then relocates the programs (CO-RE) against its own BTF, with its
 * cache of candidate types, and finds their attach points: tsarun never
 * reads or parses the kernel's 5.5 MB of BTF, which was half of its
 * start-up. It needs BPF_PROG_TYPE_SYSCALL and CO-RE in the kernel (5.17);
 * on any failure the caller loads with libbpf instead.
 */
static int kernel_load(struct sched_probe *p)
{
	LIBBPF_OPTS(gen_loader_opts, gen);
	struct bpf_load_and_run_opts run = {0};
	int ret;

	p->kctx = calloc(1, kctx_size());
	if (!p->kctx)
		return -ENOMEM;
	p->kctx->sz = (__u32)kctx_size();
	ret = bpf_object__gen_loader(p->skel->obj, &gen);
	if (!ret)
		ret = bpf_object__load(p->skel->obj); /* writes the loader, loads nothing */
	if (ret)
		return ret;
	run.ctx = p->kctx;
	run.data = gen.data;
	run.insns = gen.insns;
	run.data_sz = gen.data_sz;
	run.insns_sz = gen.insns_sz;
	ret = bpf_load_and_run(&run);
	if (ret)
		return ret < 0 ? ret : -EINVAL;
	return kernel_loaded(p);
}

/* Close what kernel_load() opened (libbpf closes its own). */
static void kernel_unload(struct sched_probe *p)
{
	const struct bpf_map_desc *md;
	const struct bpf_prog_desc *pd;

	if (!p->kctx)
		return;
	if (p->bss && p->bss_len)
		munmap(p->bss, p->bss_len);
	p->bss = NULL;
	md = (const struct bpf_map_desc *)(p->kctx + 1);
	pd = (const struct bpf_prog_desc *)(md + SCHED_NMAPS);
	for (int i = 0; i < SCHED_NMAPS; i++)
		if (md[i].map_fd > 0)
			close(md[i].map_fd);
	for (int i = 0; i < SCHED_NPROGS; i++)
		if (pd[i].prog_fd > 0)
			close(pd[i].prog_fd);
	free(p->kctx);
	p->kctx = NULL;
}

/*
 * The object for kernels without bpf_loop() (sched_compat.skel.h), opened
 * with sched.skel.h's skeleton: its maps, programs and sections are the
 * same, found by name (bpf/mkloader.c checks it at build time), and its
 * .rodata and .bss are laid out alike.
 */
static struct sched_bpf *open_compat(void)
{
	struct sched_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = sched_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)sched_compat_bpf__elf_bytes(&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	}
	if (err) {
		sched_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/* "program tsa_switch: the kernel's verifier refused it: ..." */
static void describe_failure(const struct sched_load_failure *f, int ret, char *err, size_t errlen)
{
	if (f->object[0] && f->is_map)
		snprintf(err, errlen, "the kernel cannot create the BPF map %s: %s", f->object,
			 f->message[0] ? f->message : strerror(-ret));
	else if (f->object[0])
		snprintf(err, errlen, "the kernel refused the BPF program %s: %s", f->object,
			 f->message[0] ? f->message : strerror(-ret));
	else
		snprintf(err, errlen, "cannot load the BPF programs: %s",
			 f->message[0] ? f->message : strerror(-ret));
}

/* Open, size and load the object as variant v says. */
static int open_and_load(struct sched_probe *p, const struct sched_probe_opts *o,
			 const struct variant *v, char *err, size_t errlen)
{
	struct sched_config c;
	struct sched_bpf *sk;
	int ret;

	probe_features();
	p->compat_obj = !feat.loop;
	/* The kernel's loader numbers maps in the object's order, which that object's is not. */
	if (p->compat_obj && v->kernel_loader) {
		snprintf(err, errlen, "no kernel loader for the object without bpf_loop()");
		return -ENOTSUP;
	}
	p->skel = sk = p->compat_obj ? open_compat() : sched_bpf__open();
	if (!sk) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(-ret));
		return ret;
	}
	configure(p, &c, o, v);
	ret = apply_config(p, &c);
	if (ret) {
		snprintf(err, errlen, "cannot size the maps: %s", strerror(-ret));
		goto out_destroy;
	}
	p->rodata = *sk->rodata;
	if (v->kernel_loader) {
		ret = kernel_load(p);
		if (ret) {
			snprintf(err, errlen, "the kernel's loader failed: %s", strerror(-ret));
			goto out_destroy;
		}
		return 0;
	}
	capture_reset();
	ret = sched_bpf__load(sk);
	if (ret) {
		if (ret == -EPERM || (ret == -EACCES && geteuid() != 0))
			snprintf(err, errlen,
				 "not permitted (need CAP_BPF and CAP_PERFMON, or root)");
		else
			describe_failure(&cap.f, ret, err, errlen);
		goto out_destroy;
	}
	p->bss = sk->bss;
	return 0;

out_destroy:
	kernel_unload(p);
	sched_bpf__destroy(sk);
	p->skel = NULL;
	return ret;
}

static void detach_all(struct sched_probe *p)
{
	while (p->nlinks > 0)
		close(p->links[--p->nlinks]);
}

/*
 * Give every CPU its clock offset before the command runs. The switch
 * program samples it at untracked switches while some CPU has none
 * (sched.bpf.c); here, on each CPU still without one, a short sleep ends
 * in a switch on a clock the scheduler has just refreshed. Otherwise an idle
 * CPU's first tracked event could be the switch-in of a task just woken, on
 * a clock left as it was at the wakeup, which gives no sample: that task's
 * wait would then be counted as part of the sleep before it.
 */
static void seed_clocks(struct sched_probe *p)
{
	struct timespec nap = {0, 1000};
	struct tsa_cpu_clock c;
	cpu_set_t mine, one;
	int slack, fd = map_fd(p, SCHED_MAP_clocks);

	__atomic_store_n(&p->bss->clocks_unset, (int64_t)sysconf(_SC_NPROCESSORS_ONLN),
			 __ATOMIC_RELEASE);
	if (sched_getaffinity(0, sizeof(mine), &mine))
		return;
	slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
	for (uint32_t cpu = 0; cpu < (uint32_t)p->ncpus && cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &mine) || bpf_map_lookup_elem(fd, &cpu, &c) || c.sampled)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (!sched_setaffinity(0, sizeof(one), &one))
			nanosleep(&nap, NULL);
	}
	sched_setaffinity(0, sizeof(mine), &mine);
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
}

/* Attach every loaded program of the event path. */
static int attach_all(struct sched_probe *p)
{
	int fd;

	for (int i = 0; i < SCHED_NPROGS; i++) {
		if (!p->loads[i] || i == SCHED_PROG_tsa_survivors)
			continue;
		fd = prog_fd(p, i);
		if (fd < 0)
			return fd;
		if (p->nlinks == SCHED_MAX_LINKS)
			return -E2BIG;
		fd = bpf_raw_tracepoint_open(NULL, fd);
		if (fd < 0)
			return -errno;
		p->links[p->nlinks++] = fd;
	}
	return 0;
}

int sched_probe__stack_maps(const struct sched_probe *p, struct sched_stack_maps *m)
{
	if (!p->stacks)
		return -ENOENT;
	m->kstacks = map_fd(p, SCHED_MAP_kstacks);
	m->ustacks = map_fd(p, SCHED_MAP_ustacks);
	m->offcpu = map_fd(p, SCHED_MAP_offcpu);
	m->pending = map_fd(p, SCHED_MAP_pending);
	m->counters = map_fd(p, SCHED_MAP_counters);
	m->tasks = map_fd(p, SCHED_MAP_tasks);
	m->scratch = map_fd(p, SCHED_MAP_stack_scratch);
	m->deferred = p->deferred;
	m->compat_obj = p->compat_obj;
	m->no_btf_current = p->rodata.targ_no_btf_current;
	m->no_task_regs = p->rodata.targ_no_task_regs;
	return 0;
}

void sched_probe__reset_pending(struct sched_probe *p)
{
	__atomic_store_n(&p->bss->pending_threads, 0, __ATOMIC_RELEASE);
}

uint64_t sched_probe__counter(const struct sched_probe *p, int which)
{
	uint64_t *vals, sum = 0;
	uint32_t key = (uint32_t)which;

	vals = calloc((size_t)p->ncpus, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(map_fd(p, SCHED_MAP_counters), &key, vals))
		for (int c = 0; c < p->ncpus; c++)
			sum += vals[c];
	free(vals);
	return sum;
}

struct sched_probe *sched_probe__new(const struct sched_probe_opts *o, char *err, size_t errlen)
{
	struct sched_probe *p;
	int ret;

	libbpf_set_print(silent_print);
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* Tests only: the first N exit records read are ignored, as if lost on the way. */
	if (getenv("TSARUN_TEST_DROP_RECORDS"))
		p->test_drop_recs = strtoull(getenv("TSARUN_TEST_DROP_RECORDS"), NULL, 10);
	p->width = o->width;
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		ret = p->ncpus ? p->ncpus : -EINVAL;
		snprintf(err, errlen, "cannot count possible CPUs");
		goto out_free;
	}
	/* A misspelt variant would test the default one and pass for the other. */
	{
		char word[64];

		if (compat_word(NULL, word, sizeof(word))) {
			ret = -EINVAL;
			snprintf(err, errlen,
				 "TSARUN_BPF_COMPAT: unknown variant '%s' (libbpf, prev_state, "
				 "wakeup, no_defer, no_prebuilt, old, comma-separated)",
				 word);
			goto out_free;
		}
	}
	/*
	 * The first variant that loads wins, newest kernels first: without
	 * prev_state (before 5.18) or sched_info (CONFIG_SCHED_INFO off) the
	 * verifier or CO-RE refuses the newer one. Each is tried with the
	 * kernel's loader first (5.17 and later), then with libbpf.
	 * TSARUN_BPF_COMPAT forces the later ones ("libbpf", "prev_state",
	 * "wakeup"), so that they stay tested here.
	 */
	{
		static const struct variant variants[] = {
		    {.has_state = true, .kernel_loader = true},
		    {.kernel_loader = true},
		    {.has_state = true, .wakeup_events = true, .kernel_loader = true},
		    {.wakeup_events = true, .kernel_loader = true},
		    {.has_state = true},
		    {0},
		    {.has_state = true, .wakeup_events = true},
		    {.wakeup_events = true},
		};
		char first[192] = "";

		/* The usual set, on 6.2 and later, without opening the object. */
		ret = prebuilt_load(p, o);
		for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]) && ret; i++) {
			const struct variant *v = &variants[i];

			if ((compat("prev_state") && v->has_state) ||
			    (compat("wakeup") && !v->wakeup_events) ||
			    (compat("libbpf") && v->kernel_loader))
				continue;
			ret = open_and_load(p, o, v, err, errlen);
			if (ret && v->kernel_loader)
				continue; /* libbpf says why, if it fails too */
			if (ret && !first[0]) {
				snprintf(first, sizeof(first), "%s", err);
				memcpy(&first_cap, &cap, sizeof(cap));
			}
			if (ret == -EPERM || (ret && geteuid() != 0))
				break; /* a matter of privilege, not of kernel version */
			if (!ret)
				p->variant = *v;
		}
		if (ret && first[0])
			snprintf(err, errlen, "%s", first);
		if (ret && first[0])
			memcpy(&cap, &first_cap, sizeof(cap));
		else if (!ret)
			capture_reset();
		p->wakeup_events = !ret && p->variant.wakeup_events;
	}
	if (ret)
		goto out_free;
	ret = attach_all(p);
	if (ret) {
		snprintf(err, errlen, "cannot attach to the scheduler tracepoints: %s",
			 strerror(-ret));
		goto out_destroy;
	}
	seed_clocks(p);
	p->rb = ringbuf_reader__new();
	ret = !p->rb ? -errno
		     : ringbuf_reader__add(p->rb, map_fd(p, SCHED_MAP_records), on_record, p);
	if (ret) {
		snprintf(err, errlen, "cannot map the ring buffer: %s", strerror(-ret));
		goto out_destroy;
	}
	if (o->timeline_bytes) {
		p->tl = timeline_builder__new(o->timeline_max, round_pow2(o->timeline_bytes));
		/*
		 * Tests only (TSARUN_TEST_TIMELINE_STALL=1): the timeline is read
		 * only when the run ends, so that a small buffer fills and its
		 * losses are counted whatever the machine's load.
		 */
		p->tl_stalled = getenv("TSARUN_TEST_TIMELINE_STALL") != NULL;
		ret = !p->tl	      ? -ENOMEM
		      : p->tl_stalled ? 0
				      : ringbuf_reader__add(p->rb, map_fd(p, SCHED_MAP_timeline),
							    on_timeline, p);
		if (ret) {
			snprintf(err, errlen, "cannot map the timeline ring buffer: %s",
				 strerror(-ret));
			goto out_destroy;
		}
	}
	return p;

out_destroy:
	ringbuf_reader__free(p->rb);
	timeline_builder__free(p->tl);
	detach_all(p);
	kernel_unload(p);
	sched_bpf__destroy(p->skel);
out_free:
	free(p);
	errno = -ret;
	return NULL;
}

void sched_probe__free(struct sched_probe *p)
{
	if (!p)
		return;
	ringbuf_reader__free(p->rb);
	timeline_builder__free(p->tl);
	detach_all(p);
	sched_bpf__destroy(p->iter);
	kernel_unload(p);
	sched_bpf__destroy(p->skel);
	free(p->recs);
	free(p);
}

int sched_probe__mark(struct sched_probe *p, int pidfd, pid_t tid, pid_t pid, pid_t ppid,
		      uint32_t flags, uint64_t start_ns, const uint64_t *kstart)
{
	struct tsa_thread t;

	memset(&t, 0, sizeof(t));
	t.tid = (uint32_t)tid;
	t.pid = (uint32_t)pid;
	t.ppid = (uint32_t)ppid;
	t.flags = TSA_F_TRACKED | flags | (tid == pid ? TSA_F_LEADER : 0);
	t.state = TSA_ST_UNKNOWN;
	t.gen = p->gen;
	t.start_ns = start_ns;
	if (kstart) {
		memcpy(t.kstart, kstart, sizeof(t.kstart));
		t.flags |= TSA_F_KSTART;
	}
	/* Nothing before the mark counts: the command was queued by the spawner earlier. */
	if (start_ns) {
		t.since_ns = start_ns;
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t.since_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	/* Task storage takes the task by pidfd; without it, marks takes it by tid (sched.bpf.c). */
	if (p->task_hash) {
		__u32 key = (__u32)tid;

		if (bpf_map_update_elem(map_fd(p, SCHED_MAP_marks), &key, &t, BPF_ANY))
			return -errno;
		__atomic_fetch_add(&p->bss->marks_pending, 1, __ATOMIC_RELEASE);
		return 0;
	}
	if (bpf_map_update_elem(map_fd(p, SCHED_MAP_tasks), &pidfd, &t, BPF_NOEXIST))
		return -errno;
	return 0;
}

void sched_probe__new_generation(struct sched_probe *p)
{
	sched_probe__drain(p);
	p->gen++;
	p->nrecs = 0;
	if (p->tl)
		timeline_builder__reset(p->tl);
}

const struct sched_load_failure *sched_probe_failure(void)
{
	return cap.f.object[0] || cap.f.message[0] ? &cap.f : NULL;
}

const char *sched_probe_verifier_log(void)
{
	return cap.log_len ? cap.log : NULL;
}

const char *sched_probe__variant(const struct sched_probe *p)
{
	static char buf[448];
	bool has_state = p->rodata.targ_switch_has_state;
	const char *what;

	if (p->wakeup_events)
		what = has_state ? "tp_btf sched_switch, sched_wakeup and sched_wakeup_new"
				 : "tp_btf sched_switch (state read from the task), sched_wakeup "
				   "and sched_wakeup_new";
	else
		what = has_state ? "tp_btf sched_switch and sched_wakeup_new, wakeups from the "
				   "kernel's sched_info stamps"
				 : "tp_btf sched_switch (state read from the task) and "
				   "sched_wakeup_new, wakeups from the kernel's sched_info stamps";
	snprintf(buf, sizeof(buf), "%s%s%s%s%s; loaded by %s", what,
		 p->loads[SCHED_PROG_tsa_waking] ? "; sched_waking for who woke each sleep" : "",
		 p->task_hash ? "; records in a hash map by task (no task storage)" : "",
		 p->rodata.targ_no_task_regs ? "; user registers from the kernel stack's top "
					       "(no bpf_task_pt_regs)"
					     : "",
		 p->compat_obj ? "; bounded loops (no bpf_loop)" : "",
		 !p->variant.kernel_loader ? "libbpf"
		 : p->prebuilt		   ? "the kernel's loader program, written at build time"
					   : "the kernel's loader program");
	return buf;
}

int sched_probe__fd(const struct sched_probe *p)
{
	return ringbuf_reader__epoll_fd(p->rb);
}

int sched_probe__drain(struct sched_probe *p)
{
	int n = ringbuf_reader__consume(p->rb);

	if (p->err) {
		n = p->err;
		p->err = 0;
	}
	return n;
}

int64_t sched_probe__live(const struct sched_probe *p)
{
	return __atomic_load_n(&p->bss->live_tasks, __ATOMIC_ACQUIRE);
}

int64_t sched_probe__settle(struct sched_probe *p, int timeout_ms)
{
	struct timespec start, now;
	int64_t live;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		sched_probe__drain(p);
		live = sched_probe__live(p);
		if (live <= 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >=
		    timeout_ms)
			break;
		ringbuf_reader__poll(p->rb, 5);
	}
	sched_probe__drain(p);
	return live > 0 ? live : 0;
}

/*
 * The survivors' iterator is verified only when a run needs it: most runs
 * end with the whole tree, and verifying it costs a third of tsarun's
 * start-up. It is a second instance of the same object whose maps are the
 * first one's and whose only program is the iterator. Under the sandbox,
 * which loads no program once the command runs, it is loaded with the rest
 * instead (survivors_now: cheaper than this second instance, which parses
 * the kernel's BTF again).
 */
static int iter_load(struct sched_probe *p)
{
	struct bpf_program *prog;
	struct bpf_map *m;
	int ret;

	if (p->iter || p->iter_in_skel)
		return 0;
	if (p->iter_err)
		return p->iter_err;
	p->iter = p->compat_obj ? open_compat() : sched_bpf__open();
	if (!p->iter)
		return p->iter_err = -errno;
	*p->iter->rodata = p->rodata;
	bpf_object__for_each_map(m, p->iter->obj)
	{
		int mine = -1;

		for (int i = 0; i < SCHED_NMAPS && mine < 0; i++)
			if (!strcmp(sched_maps[i].name, bpf_map__name(m)))
				mine = i;
		ret = mine >= 0 ? bpf_map__reuse_fd(m, map_fd(p, mine)) : -ENOENT;
		if (ret)
			goto out_destroy;
	}
	bpf_object__for_each_program(prog, p->iter->obj)
	    bpf_program__set_autoload(prog, prog == p->iter->progs.tsa_survivors);
	ret = sched_bpf__load(p->iter);
	if (ret)
		goto out_destroy;
	return 0;

out_destroy:
	sched_bpf__destroy(p->iter);
	p->iter = NULL;
	p->iter_err = ret;
	return ret;
}

/* Run the survivors' iterator: each snapshot of this run's generation goes to fn. */
static int iter_read(struct sched_probe *p, int (*fn)(void *ctx, const struct tsa_thread *t),
		     void *ctx)
{
	struct tsa_thread t;
	size_t have = 0;
	int fd, link, n = 0, ret = 0;
	ssize_t r;

	ret = iter_load(p);
	if (ret)
		return ret;
	fd = p->iter_in_skel ? prog_fd(p, SCHED_PROG_tsa_survivors)
			     : bpf_program__fd(p->iter->progs.tsa_survivors);
	if (fd < 0)
		return fd;
	link = bpf_link_create(fd, 0, BPF_TRACE_ITER, NULL);
	if (link < 0)
		return -errno;
	fd = bpf_iter_create(link);
	if (fd < 0) {
		ret = -errno;
		goto out_link;
	}
	for (;;) {
		r = read(fd, (char *)&t + have, sizeof(t) - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			break;
		}
		if (r == 0)
			break;
		have += (size_t)r;
		if (have == sizeof(t)) {
			have = 0;
			if (t.gen != p->gen)
				continue;
			ret = fn(ctx, &t);
			if (ret)
				break;
			n++;
		}
	}
	close(fd);
out_link:
	close(link);
	return ret ? ret : n;
}

static int append_cb(void *ctx, const struct tsa_thread *t)
{
	return append(ctx, t);
}

int sched_probe__survivors(struct sched_probe *p)
{
	int ret;

	/* --timeline: this last read sends the survivors' last intervals (sched.bpf.c). */
	__atomic_store_n(&p->bss->tl_iter_send, 1, __ATOMIC_RELEASE);
	ret = iter_read(p, append_cb, p);
	__atomic_store_n(&p->bss->tl_iter_send, 0, __ATOMIC_RELEASE);
	return ret;
}

/* --interval: snapshots go to an array of their own. */
struct snap_sink {
	const struct sched_probe *p;
	struct thread_acct *a;
	size_t n, cap;
};

static int snap_cb(void *ctx, const struct tsa_thread *t)
{
	struct snap_sink *s = ctx;
	struct thread_acct *a = vec_grow(s->a, &s->cap, s->n + 1, sizeof(*a), 64);

	if (!a)
		return -ENOMEM;
	s->a = a;
	fold_convert(&s->a[s->n++], t, s->p->origin ? *s->p->origin : 0);
	return 0;
}

int sched_probe__snapshot(struct sched_probe *p, struct thread_acct **buf, size_t *cap, size_t *n)
{
	struct snap_sink s = {.p = p, .a = *buf, .cap = *cap};
	int ret = iter_read(p, snap_cb, &s);

	/* The buffer is the caller's, grown or not, whatever happened. */
	*buf = s.a;
	*cap = s.cap;
	*n = ret < 0 ? 0 : s.n;
	return ret < 0 ? ret : 0;
}

const struct thread_acct *sched_probe__records(const struct sched_probe *p, size_t *n)
{
	*n = p->nrecs;
	return p->recs;
}

struct thread_acct *sched_probe__take(struct sched_probe *p, size_t *n)
{
	struct thread_acct *r = p->recs;

	*n = p->nrecs;
	p->recs = NULL;
	p->nrecs = p->cap = 0;
	return r;
}

int sched_probe__stats(struct sched_probe *p, struct sched_probe_stats *st)
{
	uint64_t *vals, sum[TSA_C_NR] = {0};
	struct tsa_lost *lv, lsum = {0};
	uint32_t key;
	int ret = 0;

	memset(st, 0, sizeof(*st));
	vals = calloc((size_t)p->ncpus, sizeof(*vals));
	lv = calloc((size_t)p->ncpus, sizeof(*lv));
	if (!vals || !lv) {
		ret = -ENOMEM;
		goto out;
	}
	for (key = 0; key < TSA_C_NR; key++) {
		if (bpf_map_lookup_elem(map_fd(p, SCHED_MAP_counters), &key, vals)) {
			ret = -errno;
			goto out;
		}
		for (int c = 0; c < p->ncpus; c++)
			sum[key] += vals[c];
	}
	key = 0;
	if (bpf_map_lookup_elem(map_fd(p, SCHED_MAP_lost), &key, lv)) {
		ret = -errno;
		goto out;
	}
	for (int c = 0; c < p->ncpus; c++) {
		lsum.records += lv[c].records;
		lsum.lifetime_ns += lv[c].lifetime_ns;
		for (int s = 0; s < TSA_ST_NR; s++)
			lsum.state_ns[s] += lv[c].state_ns[s];
	}
	st->rb_drops = sum[TSA_C_RB_DROPS] - p->prev[TSA_C_RB_DROPS];
	st->storage_fail = sum[TSA_C_STORAGE_FAIL] - p->prev[TSA_C_STORAGE_FAIL];
	st->unknown_switch = sum[TSA_C_UNKNOWN_SWITCH] - p->prev[TSA_C_UNKNOWN_SWITCH];
	st->untraced_in = sum[TSA_C_UNTRACED_IN] - p->prev[TSA_C_UNTRACED_IN];
	st->tracked = sum[TSA_C_TRACKED] - p->prev[TSA_C_TRACKED];
	st->emitted = sum[TSA_C_EMITTED] - p->prev[TSA_C_EMITTED];
	st->stale = p->stale;
	p->stale = 0;
	st->lost.records = lsum.records - p->prev_lost.records;
	st->lost.lifetime_ns = lsum.lifetime_ns - p->prev_lost.lifetime_ns;
	for (int s = 0; s < TSA_ST_NR; s++)
		st->lost.state_ns[s] = lsum.state_ns[s] - p->prev_lost.state_ns[s];
	st->tl_sent = sum[TSA_C_TL_SENT] - p->prev[TSA_C_TL_SENT];
	st->tl_drops = sum[TSA_C_TL_DROPS] - p->prev[TSA_C_TL_DROPS];
	memcpy(p->prev, sum, sizeof(sum));
	p->prev_lost = lsum;
out:
	free(vals);
	free(lv);
	return ret;
}

/* The probe seam (probe.h). */

/* Read a small /proc file whole. Returns its length or -errno. */
static ssize_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

/* A blocked task's kernel counters (TSA_K_*) from /proc. Returns 0 or -errno. */
static int read_counters(pid_t pid, uint64_t k[TSA_K_NR])
{
	struct procfs_schedstat ss;
	char path[64], buf[8192];
	ssize_t n;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	ret = procfs_parse_schedstat(buf, (size_t)n, &ss);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	ret = procfs_parse_ctxt_switches(buf, (size_t)n, &k[TSA_K_NVCSW], &k[TSA_K_NIVCSW]);
	if (ret)
		return ret;
	k[TSA_K_SUM_EXEC] = ss.on_cpu_ns;
	k[TSA_K_RUN_DELAY] = ss.run_delay_ns;
	k[TSA_K_PCOUNT] = ss.slices;
	return 0;
}

static int sp_arm(struct probe *pr, const struct spawn *child, struct run *r)
{
	struct sched_probe *sp = pr->ctx;
	uint64_t k[TSA_K_NR];
	bool blocked;
	int ret;

	sched_probe__new_generation(sp);
	sched_probe__stats(sp, &(struct sched_probe_stats){0}); /* reset the deltas */
	sp->origin = &r->start_mono_ns; /* records arrive only after the barrier opens */
	/*
	 * The command's life, like the run's wall time, starts when its
	 * barrier opens. Just cloned, it may still be queued or running
	 * towards the barrier, and those switches would be taken for its life
	 * (its wait for tsarun as its runqueue time). Once it is blocked there,
	 * its first event after the mark is the release's wakeup. (Past the
	 * wait's bound, under extreme load, it is marked anyway.)
	 */
	ret = spawn__wait_blocked(child);
	blocked = ret == 0;
	if (ret == -ETIMEDOUT)
		termwrap_say(
		    stderr, sp->width, "tsarun: warning: ",
		    "the command did not reach its exec barrier within %d s; its way there "
		    "may count as its runqueue time",
		    SPAWN_BLOCKED_WAIT_S);
	/*
	 * Blocked, its counters stay as they are until the release: read now,
	 * they let its first switch-out alone close its account if its wakeup
	 * and switch-in go unseen (first_in_unseen() in sched.bpf.c).
	 */
	ret = sched_probe__mark(sp, child->pidfd, child->pid, child->pid, getpid(), TSA_F_ROOT, 0,
				blocked && !read_counters(child->pid, k) ? k : NULL);
	if (ret) {
		snprintf(pr->reason, sizeof(pr->reason), "cannot mark the command: %s",
			 strerror(-ret));
		return ret;
	}
	run__source(r, "ebpf", true, NULL);
	return 0;
}

static int sp_fd(struct probe *pr)
{
	return sched_probe__fd(pr->ctx);
}

static int sp_ready(struct probe *pr)
{
	int n = sched_probe__drain(pr->ctx);

	return n < 0 ? n : 0;
}

/*
 * The run's timeline, its interrupts named by their kernel frames (kernel
 * symbols only: opened before the supervisor confined itself). The critical
 * path is walked on it once the run's wall time is final (supervise.c).
 */
static int sp_timeline(struct sched_probe *sp, struct run *r, const struct sched_probe_stats *st)
{
	struct symbolizer *sym = NULL;
	int ret;

	if (timeline_builder__has_irq_wakes(sp->tl)) {
		sym = symbolizer__new();
		if (sym && symbolizer__load_kernel(sym)) {
			symbolizer__free(sym);
			sym = NULL; /* named by what else is known of them: said so */
		}
	}
	ret = timeline_attach(r, sp->tl, r->start_mono_ns, st->tl_sent, st->tl_drops, sym);
	symbolizer__free(sym);
	return ret;
}

static int sp_collect(struct probe *pr, struct run *r)
{
	struct sched_probe *sp = pr->ctx;
	struct sched_probe_stats st;
	struct thread_acct *recs;
	size_t n;
	int64_t live;
	int ret;

	/* A reaped thread may still be on its way to its final switch-out. */
	if (sp->tl_stalled &&
	    !ringbuf_reader__add(sp->rb, map_fd(sp, SCHED_MAP_timeline), on_timeline, sp))
		sp->tl_stalled = false;
	live = sched_probe__settle(sp, r->desc.left_running ? 50 : 1000);
	if (live > 0) {
		ret = sched_probe__survivors(sp);
		if (ret < 0)
			run__note(r, "ebpf: cannot read the threads still running: %s",
				  strerror(-ret));
		else if (!r->desc.left_running && r->status != RUN_INTERRUPTED)
			r->quality.unsettled = (uint64_t)(live - ret > 0 ? live - ret : 0);
	}
	if (sp->tl)
		sched_probe__drain(sp); /* the survivors' last intervals, sent by the iterator */
	ret = sched_probe__stats(sp, &st);
	if (ret)
		return ret;
	r->quality.lost_events += st.rb_drops;
	r->quality.map_full_drops += st.storage_fail;
	r->quality.unexpected_transitions += st.unknown_switch;
	r->quality.untraced_switch_ins += st.untraced_in;
	r->quality.lost = st.lost;
	/*
	 * Every thread the programs began tracking in this run has a record,
	 * a snapshot, a loss counted or an unsettled count: any other is one
	 * whose record went missing on the way, and the run's figures lack it.
	 * (Threads a run left running may track new ones in later runs, under
	 * their own run's mark: then this count cannot be split by run.)
	 */
	if (!r->desc.left_running && r->status != RUN_INTERRUPTED && !sp->leftovers) {
		uint64_t accounted = sp->nrecs + st.lost.records + r->quality.unsettled;

		if (st.tracked > accounted)
			r->quality.unsettled += st.tracked - accounted;
	}
	if (r->desc.left_running)
		sp->leftovers = true;
	recs = sched_probe__take(sp, &n);
	ret = fold_threads(r, recs, n); /* takes the array */
	if (!ret && sp->tl)
		ret = sp_timeline(sp, r, &st);
	return ret;
}

static int sp_seal(struct probe *p)
{
	return iter_load(p->ctx);
}

/* The command's first event is never stamped before this (after_release() in sched.bpf.c). */
static void sp_on_release(struct probe *pr, uint64_t release_ns)
{
	struct sched_probe *p = pr->ctx;

	__atomic_store_n(&p->bss->release_ns, release_ns, __ATOMIC_RELEASE);
}

void sched_probe__as_probe(struct sched_probe *sp, struct probe *out)
{
	memset(out, 0, sizeof(*out));
	out->name = "ebpf";
	out->ctx = sp;
	out->arm = sp_arm;
	out->fd = sp_fd;
	out->on_ready = sp_ready;
	out->collect = sp_collect;
	out->seal = sp_seal;
	out->on_release = sp_on_release;
}
