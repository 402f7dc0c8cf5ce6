// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * On-CPU samples (--flame): a software cpu-clock perf event, opened on the
 * command with inherit (so only the tracked tree is sampled, at --freq per
 * second of each thread's CPU time; no PMU needed), runs this program at
 * each sample; it takes the thread's stacks and counts them in the kernel.
 * The stack maps and the counters are sched.bpf.c's, reused by descriptor,
 * so off-CPU and on-CPU aggregates name stacks with the same ids.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tsarun.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#ifndef EEXIST
#define EEXIST 17
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TSA_C_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		*c += 1;
}

#include "stacks.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* set by user space */
	__type(key, struct tsa_oncpu_key);
	__type(value, __u64);
} oncpu SEC(".maps");

static __always_inline __u32 exec_id(struct task_struct *p)
{
	if (bpf_core_field_size(p->self_exec_id) == 8)
		return (__u32)BPF_CORE_READ(p, self_exec_id);
	else {
		__u32 v = 0;

		bpf_core_read(&v, sizeof(v), &p->self_exec_id);
		return v;
	}
}

SEC("perf_event")
int tsa_oncpu(struct bpf_perf_event_data *ctx)
{
	struct task_struct *cur = current_task();
	struct tsa_oncpu_key k;
	__u64 id = bpf_get_current_pid_tgid(), *c, one = 1;
	bool in_kernel;

	__builtin_memset(&k, 0, sizeof(k));
	k.pid = id >> 32;
	k.tid = (__u32)id;
	if (!k.tid)
		return 0;
	/* Interrupted in the kernel: its addresses are the upper half on x86-64 and arm64. */
	in_kernel = (long)PT_REGS_IP(&ctx->regs) < 0;
	if (in_kernel)
		take_current_kstack(ctx, &k.kstack);
	else
		id_status(&k.kstack, TSA_SS_NONE);
	if (has_user_space(cur))
		take_current_ustack(ctx, task_regs(cur), k.pid, exec_id(cur), bpf_ktime_get_ns(),
				    true, &k.ustack);
	else
		id_status(&k.ustack, TSA_SS_NONE);
	count(TSA_C_ONCPU_SAMPLES);
	c = bpf_map_lookup_elem(&oncpu, &k);
	if (c) {
		__sync_fetch_and_add(c, 1);
		return 0;
	}
	if (bpf_map_update_elem(&oncpu, &k, &one, BPF_NOEXIST)) {
		c = bpf_map_lookup_elem(&oncpu, &k);
		if (c)
			__sync_fetch_and_add(c, 1);
		else
			count(TSA_C_ONCPU_FULL);
	}
	return 0;
}
