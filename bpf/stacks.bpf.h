/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Taking and storing stacks, shared by the off-CPU code (sched.bpf.c) and
 * the on-CPU sampler (oncpu.bpf.c), which reuses these maps by descriptor
 * so that both refer to stacks by the same ids.
 *
 * Stacks are stored once per distinct content under a 96-bit hash (see
 * struct tsa_stack_id in tsarun.h). The maps are preallocated: stacks are
 * stored with interrupts off (and from timer interrupts), where a map that
 * allocates as it fills runs dry after a burst of new entries until its
 * per-CPU cache is refilled. A full map is counted, and the time of a
 * stack it could not hold is charged to that status.
 * The includer defines count() and the TSA_C_* counters map before this.
 */
#ifndef TSARUN_STACKS_BPF_H
#define TSARUN_STACKS_BPF_H

struct tsa_stack_key {
	__u64 h1;
	__u32 h2;
	__u32 nr;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* set by user space */
	__type(key, struct tsa_stack_key);
	__type(value, struct tsa_kstack);
} kstacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* set by user space */
	__type(key, struct tsa_stack_key);
	__type(value, struct tsa_ustack);
} ustacks SEC(".maps");

/* Room to take a stack in (too large for the BPF stack); one extra frame tells truncation. */
struct stack_scratch {
	__u64 kip[TSA_STACK_DEPTH + 1];
	struct tsa_kstack k;
	struct tsa_ustack u;
	__u64 uip[TSA_STACK_DEPTH + 1];
	/* For sched.bpf.c: an aggregate key and a pending entry being built. */
	struct tsa_offcpu_key key;
	struct tsa_pending pend;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_scratch);
} stack_scratch SEC(".maps");

/*
 * What kernels before 5.11 and 5.15 lack, set by user space from feature
 * probes: bpf_get_current_task_btf() (5.11; then the plain pointer of
 * bpf_get_current_task(), read through probed loads only) and
 * bpf_task_pt_regs() (5.15; then the user registers are found at the top
 * of the task's kernel stack, see task_regs()).
 */
const volatile bool targ_no_btf_current = false;
const volatile bool targ_no_task_regs = false;

static __always_inline struct task_struct *current_task(void)
{
	if (targ_no_btf_current)
		return (struct task_struct *)bpf_get_current_task();
	return bpf_get_current_task_btf();
}

#define PF_EXITING     0x00000004
#define PF_KTHREAD     0x00200000
#define PF_IO_WORKER   0x00000010
#define PF_USER_WORKER 0x00004000

static __always_inline bool has_user_space(struct task_struct *p)
{
	return !(BPF_CORE_READ(p, flags) & (PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER));
}

static __always_inline struct stack_scratch *scratch_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stack_scratch, &zero);
}

/* Two independent hashes of the frames; seed separates address spaces. */
static __always_inline void hash_frames(const __u64 *f, __u32 nr, __u64 seed,
					struct tsa_stack_key *k)
{
	__u64 h1 = seed ^ 0x9E3779B97F4A7C15ull, h2 = (seed + 0x632BE59BD9B4E019ull) | 1;

	for (int i = 0; i < TSA_STACK_DEPTH; i++) {
		__u64 x;

		if (i >= nr)
			break;
		x = f[i];
		h1 = (h1 ^ x) * 0x100000001B3ull;
		h1 ^= h1 >> 31;
		h2 = (h2 + x) * 0xC2B2AE3D27D4EB4Full;
		h2 ^= h2 >> 29;
	}
	k->h1 = h1;
	k->h2 = (__u32)(h2 ^ (h2 >> 32));
	k->nr = nr;
}

static __always_inline void id_from_key(struct tsa_stack_id *id, const struct tsa_stack_key *k,
					__u8 status, __u8 flags)
{
	id->h1 = k->h1;
	id->h2 = k->h2;
	id->nr = (__u16)k->nr;
	id->status = status;
	id->flags = flags;
}

static __always_inline void id_status(struct tsa_stack_id *id, __u8 status)
{
	id->h1 = 0;
	id->h2 = 0;
	id->nr = 0;
	id->status = status;
	id->flags = 0;
}

/* Store a kernel stack of n bytes taken into s->kip. */
static __always_inline void store_kstack(struct stack_scratch *s, long n, struct tsa_stack_id *id)
{
	struct tsa_stack_key k;
	__u32 nr, flags = 0;
	int err;

	if (n <= 0) {
		count(TSA_C_KSTACK_FAIL);
		id_status(id, n < 0 ? TSA_SS_FAILED : TSA_SS_EMPTY);
		return;
	}
	nr = (__u32)n / 8;
	if (nr > TSA_STACK_DEPTH) {
		nr = TSA_STACK_DEPTH;
		flags |= TSA_SF_TRUNCATED;
		count(TSA_C_TRUNCATED);
	}
	hash_frames(s->kip, nr, 0, &k);
	s->k.nr = nr;
	s->k.flags = flags;
	__builtin_memcpy(s->k.ip, s->kip, sizeof(s->k.ip));
	/*
	 * Read as the int the map's update returns: 5.10 hands it back
	 * zero-extended (-EEXIST as 0xffffffef), which as a long is no -EEXIST
	 * and took every stack already stored for a full map.
	 */
	err = (int)bpf_map_update_elem(&kstacks, &k, &s->k, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		count(TSA_C_STACK_FULL);
		id_status(id, TSA_SS_MAP_FULL);
		return;
	}
	id_from_key(id, &k, TSA_SS_OK, (__u8)flags);
}

/* The kernel stack of a task that is not running (a sleeper being woken). */
static __always_inline void take_task_kstack(struct task_struct *p, struct tsa_stack_id *id)
{
	struct stack_scratch *s = scratch_get();
	long n;

	if (!s) {
		id_status(id, TSA_SS_FAILED);
		return;
	}
	n = bpf_get_task_stack(p, s->kip, sizeof(s->kip), 0);
	store_kstack(s, n, id);
}

/* The kernel stack of the current task (the program's own frames are removed by user space). */
static __always_inline void take_current_kstack(void *ctx, struct tsa_stack_id *id)
{
	struct stack_scratch *s = scratch_get();
	long n;

	if (!s) {
		id_status(id, TSA_SS_FAILED);
		return;
	}
	n = bpf_get_stack(ctx, s->kip, sizeof(s->kip), 0);
	store_kstack(s, n, id);
}

#if defined(__TARGET_ARCH_x86)
/*
 * The user registers saved at kernel entry: on x86-64, struct pt_regs is
 * laid out by the entry code and is ptrace's user_regs_struct, so it is
 * read at fixed offsets. Relocating it (CO-RE) cost libbpf a search of the
 * kernel's whole BTF at every start.
 */
struct tsa_x86_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax, ip, cs,
	    flags, sp, ss;
};

#define REGS_READ(regs, field)                                                        \
	({                                                                            \
		__u64 v_ = 0;                                                         \
		bpf_probe_read_kernel(&v_, sizeof(v_),                                \
				      &((const struct tsa_x86_regs *)(regs))->field); \
		v_;                                                                   \
	})
/*
 * The user registers a task entered the kernel with. Before 5.15 (no
 * bpf_task_pt_regs()), where x86-64 keeps them, task_pt_regs(): the top of
 * its 16 KiB kernel stack (THREAD_SIZE without KASAN). The guess is checked
 * on what it finds (a 64-bit user code segment, __USER_CS): if it is wrong
 * (another THREAD_SIZE), or the task never came from user space, there are
 * no registers, and the user stack is taken without its top region.
 */
static __always_inline struct pt_regs *task_regs(struct task_struct *p)
{
	struct tsa_x86_regs *r;
	void *stack;
	__u64 cs = 0;

	if (!targ_no_task_regs)
		return (struct pt_regs *)bpf_task_pt_regs(p);
	stack = BPF_CORE_READ(p, stack);
	if (!stack)
		return NULL;
	r = (struct tsa_x86_regs *)(stack + 16384) - 1;
	if (bpf_probe_read_kernel(&cs, sizeof(cs), &r->cs) || cs != 0x33)
		return NULL;
	return (struct pt_regs *)r;
}

#define regs_ip(regs) REGS_READ(regs, ip)
#define regs_sp(regs) REGS_READ(regs, sp)
#define regs_fp(regs) REGS_READ(regs, bp)
#else
static __always_inline struct pt_regs *task_regs(struct task_struct *p)
{
	return targ_no_task_regs ? NULL : (struct pt_regs *)bpf_task_pt_regs(p);
}

#define regs_ip(regs) PT_REGS_IP_CORE(regs)
#define regs_sp(regs) PT_REGS_SP_CORE(regs)
#define regs_fp(regs) PT_REGS_FP_CORE(regs)
#endif

/*
 * Whether the 8 bytes c (little-endian) that end just before address ra
 * end with a call instruction, as they do when ra is a return address:
 * call rel32, or call through a register or memory (FF /2) in each of its
 * x86-64 encodings.
 */
static __always_inline bool ends_in_call(__u64 c)
{
	__u8 b1 = c >> 56, b2 = c >> 48, b3 = c >> 40, b4 = c >> 32, b5 = c >> 24, b6 = c >> 16,
	     b7 = c >> 8;

	if (b5 == 0xE8)
		return true; /* call rel32 */
	if (b2 == 0xFF &&
	    ((b1 & 0xF8) == 0xD0 || ((b1 & 0xF8) == 0x10 && b1 != 0x14 && b1 != 0x15)))
		return true; /* call *%reg, call *(%reg) */
	if (b3 == 0xFF && (((b2 & 0xF8) == 0x50 && b2 != 0x54) || b2 == 0x14))
		return true; /* call *d8(%reg), call *(%reg,%reg,s) */
	if (b4 == 0xFF && b3 == 0x54)
		return true; /* call *d8(%reg,%reg,s) */
	if (b6 == 0xFF && (((b5 & 0xF8) == 0x90 && b5 != 0x94) || b5 == 0x15))
		return true;		 /* call *d32(%reg), call *d32(%rip) */
	return b7 == 0xFF && b6 == 0x94; /* call *d32(%reg,%reg,s) */
}

/* At most this many words of a region are checked for a call before them. */
#define TSA_RA_PROBES 24

struct region_walk {
	__u64 sp;
	__u64 h1, h2;
	__u32 len;
	__u32 probes;
};

#ifndef TSA_COMPAT
/* One word of the region in the scratch's user stack (bpf_loop: verified once). */
static long region_word(__u32 i, struct region_walk *r)
{
	struct stack_scratch *s = scratch_get();
	__u64 w, c;

	if (!s || i >= TSA_REGION_BYTES / 8 || (i + 1) * 8 > r->len)
		return 1;
	__builtin_memcpy(&w, &s->u.region[i * 8], 8);
	if (w < 0x10000 || w >= (1ull << 47) || (w >= r->sp - 0x10000 && w < r->sp + (64ull << 20)))
		return 0;
	if (r->probes < TSA_RA_PROBES) {
		r->probes++;
		if (bpf_probe_read_user(&c, sizeof(c), (void *)(w - 8)) || !ends_in_call(c))
			return 0;
	}
	r->h1 = (r->h1 ^ (w + i)) * 0x100000001B3ull;
	r->h1 ^= r->h1 >> 31;
	r->h2 = (r->h2 + w + i) * 0xC2B2AE3D27D4EB4Full;
	r->h2 ^= r->h2 >> 29;
	return 0;
}
#endif

/*
 * Mix into k the words of the scratch's region (read at sp, len bytes)
 * that can be return addresses: those user space's unwinding may take for
 * the callers the frame-pointer walk skipped. A word that points at code
 * just after a call is one; so is, past TSA_RA_PROBES checks, any word
 * that is not plainly data (a small number, or an address in the stack),
 * so that two captures with different callers never share an id. Locals
 * and saved registers, which change from one capture of a path to the
 * next, stay out of it.
 */
static __always_inline void hash_region(__u32 len, __u64 sp, struct tsa_stack_key *k)
{
	struct region_walk r = {.sp = sp, .h1 = k->h1, .h2 = k->h2, .len = len};

#ifdef TSA_COMPAT
	/*
	 * The object for kernels before 5.17 (no bpf_loop()), whose verifier
	 * refuses even a reference to a callback: a bounded loop, which it
	 * walks word by word. Without the probes for a call before each word,
	 * whose paths multiply at every word (past a million instructions),
	 * every word that is not plainly data is mixed in, as region_word()
	 * does past its probes: captures with different callers still never
	 * share an id, and those of one path share it less often (more stored
	 * stacks, the same frames).
	 */
	struct stack_scratch *s = scratch_get();

	if (s) {
		for (__u32 i = 0; i < TSA_REGION_BYTES / 8; i++) {
			__u64 w;

			if ((i + 1) * 8 > len)
				break;
			__builtin_memcpy(&w, &s->u.region[i * 8], 8);
			if (w < 0x10000 || w >= (1ull << 47) ||
			    (w >= sp - 0x10000 && w < sp + (64ull << 20)))
				continue;
			r.h1 = (r.h1 ^ (w + i)) * 0x100000001B3ull;
			r.h1 ^= r.h1 >> 31;
			r.h2 = (r.h2 + w + i) * 0xC2B2AE3D27D4EB4Full;
			r.h2 ^= r.h2 >> 29;
		}
	}
#else
	bpf_loop(TSA_REGION_BYTES / 8, region_word, &r, 0);
#endif
	k->h1 = r.h1;
	k->h2 = (__u32)(r.h2 ^ (r.h2 >> 32));
}

/*
 * The user stack of the current task, whose user registers are regs: the
 * kernel's frame-pointer walk, and the top of the stack from sp to just
 * past the first frame pointer, for user space to recover the frames that
 * walk skips. The id covers the walk, the registers' offsets, the process
 * and the return addresses in the region (hash_region()): captures that
 * share an id recover the same frames from the region that is kept, the
 * first one's. whole: copy the whole region, not only up to the first
 * frame pointer (for the on-CPU sampler).
 */
static __always_inline void take_current_ustack(void *ctx, struct pt_regs *regs, __u32 pid,
						__u32 execid, __u64 now, bool whole,
						struct tsa_stack_id *id)
{
	struct stack_scratch *s = scratch_get();
	struct tsa_stack_key k;
	__u32 nr, flags = TSA_SF_USER, len;
	__u64 sp, bp, ip;
	long n;
	int err;

	if (!s) {
		id_status(id, TSA_SS_FAILED);
		return;
	}
	n = bpf_get_stack(ctx, s->uip, sizeof(s->uip), BPF_F_USER_STACK);
	if (n <= 0) {
		count(TSA_C_USTACK_FAIL);
		id_status(id, n < 0 ? TSA_SS_FAILED : TSA_SS_EMPTY);
		return;
	}
	nr = (__u32)n / 8;
	if (nr > TSA_STACK_DEPTH) {
		nr = TSA_STACK_DEPTH;
		flags |= TSA_SF_TRUNCATED;
		count(TSA_C_TRUNCATED);
	}
	ip = regs_ip(regs);
	sp = regs_sp(regs);
	bp = regs_fp(regs);
	/*
	 * Up to just past the first frame pointer: there are the callers the
	 * walk skips under the innermost function built without frame
	 * pointers (a C library wrapper). With whole, all the region: the
	 * walk skips the caller of every such function, and on-CPU samples
	 * are rare enough to pay for them (a vDSO call under a wrapper, a
	 * callback under qsort()). Near the top of a stack, a read of the
	 * whole region fails: then the first part.
	 */
	len = 0;
	if (whole && !bpf_probe_read_user(s->u.region, TSA_REGION_BYTES, (void *)sp))
		len = TSA_REGION_BYTES;
	if (!len) {
		len = TSA_REGION_BYTES;
		if (bp > sp && bp - sp + 16 < TSA_REGION_BYTES)
			len = (__u32)(bp - sp + 16);
		if (len > TSA_REGION_BYTES)
			len = TSA_REGION_BYTES;
		if (len && bpf_probe_read_user(s->u.region, len, (void *)sp))
			len = 0;
	}
	/* The walk's frames, where the frame pointer sits above sp, the process, the callers. */
	hash_frames(s->uip, nr, ((__u64)pid << 32 | execid) ^ ((bp - sp) << 17), &k);
	hash_region(len, sp, &k);
	if (bpf_map_lookup_elem(&ustacks, &k)) {
		id_from_key(id, &k, TSA_SS_OK, (__u8)flags);
		return;
	}
	s->u.pid = pid;
	s->u.nr = nr;
	s->u.time_ns = now;
	s->u.ip = ip;
	s->u.sp = sp;
	s->u.bp = bp;
	s->u.flags = flags;
	__builtin_memcpy(s->u.frames, s->uip, sizeof(s->u.frames));
	s->u.region_len = len;
	err = (int)bpf_map_update_elem(&ustacks, &k, &s->u, BPF_NOEXIST); /* (see store_kstack()) */
	if (err && err != -EEXIST) {
		count(TSA_C_STACK_FULL);
		id_status(id, TSA_SS_MAP_FULL);
		return;
	}
	id_from_key(id, &k, TSA_SS_OK, (__u8)flags);
}

#endif /* TSARUN_STACKS_BPF_H */
