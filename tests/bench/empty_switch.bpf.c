// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor under any sched_switch tracer: a tp_btf program that does
 * nothing. What it costs the pipe benchmark is the kernel's dispatch of a
 * BPF program at every context switch (tracepoint, run context, the
 * indirect call and whatever the CPU's mitigations add to it), which no
 * program body can take back.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(empty_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}
