#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The kernel matrix's own checks, on whatever kernel runs them (a guest of
# tests/kernels/run, or this machine): which variant of the scheduler probe
# loaded and that it is the one this kernel should take, the fallbacks of
# older kernels forced on this one, PREEMPT_RT's lock waits, the loud failure
# of eBPF, and short forms of the bash, gate and procfs checks (their whole
# suites run on this machine in make check).
. "$(dirname "$0")/../lib.sh"
need_bpf "kernel matrix checks"
cd "$T_TMP"
J=$T_TMP/a.json
B=$REPO/tests/bash

ms() { jq -r --arg c "$1" "[.runs[0].threads[] | select(.comm == \$c)][0] | ($2) / 1e6" "$J"; }
# Every thread closes and agrees with the kernel's counters (as 20-accounting's closes()).
closes() {
	local what=$1
	equal "$what: every thread closes to under 0.1%" "$(jq '[.runs[0].threads[] | select(
		((.lifetime_ns - (.on_cpu_ns + .runqueue_ns + .sleeping_ns + .uninterruptible_ns + .stopped_ns))
		  | if . < 0 then -. else . end) > .lifetime_ns * 0.001)] | length' "$J")" 0
	at_most "$what: kernel cross-check, worst thread (% of lifetime)" \
		"$(jq '.runs[0].quality.cross_check.runnable_vs_kernel.worst_fraction * 100' "$J")" 1 ||
		echo "#   worst thread: $(jq -c '.runs[0] as $r | $r.quality.cross_check.runnable_vs_kernel.worst_tid as $w
			| [$r.threads[] | select(.tid == $w)][0] | {tid, comm, lifetime_ns, on_cpu_ns, steal_ns, runqueue_ns,
			   uninterruptible_ns, unstamped_wait_ns, kernel}' "$J")"
	equal "$what: switches match the kernel's nvcsw and nivcsw" \
		"$(jq '.runs[0].quality.cross_check.switches_vs_nvcsw_nivcsw.worst_count' "$J")" 0
	equal "$what: nothing lost" "$(jq '.runs[0].quality.lost_events + .runs[0].quality.map_full_drops + .runs[0].quality.unsettled_threads' "$J")" 0
}

variant=$("$TSARUN" doctor | sed -n 's/^  ebpf  *available  *attached: //p')
check "doctor: eBPF loads on $(uname -r)" test -n "$variant"
echo "# variant: $variant"
check "doctor states the minimum kernel" sh -c "'$TSARUN' doctor | grep -q 'Linux 5.10 or later'"
# The variant this kernel should take, by what its BTF and BPF have, read
# here from the kernel's own files rather than from tsarun.
btf=$(bpftool btf dump file /sys/kernel/btf/vmlinux format raw 2>/dev/null)
has() { grep -q "$1" <<<"$variant"; }
lacks() { ! grep -q "$1" <<<"$variant"; }
if grep -q "BPF_MAP_TYPE_TASK_STORAGE" <<<"$btf"; then
	check "... with task storage, where the kernel has it" lacks 'hash map by task'
else
	check "... with task records in a hash map by task, without task storage" has 'hash map by task'
fi
if grep -q "'bpf_rdonly_cast'" <<<"$btf"; then
	check "... by the loader written at build time, where bpf_rdonly_cast exists" has 'written at build time'
fi
if grep -q "'BPF_FUNC_loop'" <<<"$btf"; then
	check "... with bpf_loop, where the kernel has it" lacks 'bounded loops'
fi

# --stacks --waker charge the known sleeps to the right stacks (40-stacks.sh
# in full on this machine; in a guest its times are the emulator's: a 5 ms
# nanosleep there sleeps up to a millisecond more, which tsarun measures).
top() { jq -r --arg c "$1" "[.runs[0].stacks.offcpu_stacks[] | select(.comm == \$c)] | max_by(.total_ns) | .$2 | join(\";\")" "$J"; }
stacks() {
	local what=$1
	"$TSARUN" -q --stacks --waker --offcpu-min 0 --json "$J" -- "$WORKLOADS/mutex_wait" 150 100
	check "$what: the waiter's top stack is in the workload's function" grep -q 'waiter_blocks_on_mutex' <<<"$(top waiter user)"
	check "$what: ... in the kernel's futex wait" grep -q 'futex_wait' <<<"$(top waiter kernel)"
	within "$what: ... holding the 150 ms the mutex was held (ms)" \
		"$(jq '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "waiter")] | max_by(.total_ns) | .total_ns / 1e6' "$J")" 150 10
	equal "$what: ... woken by the holder" "$(jq -r '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "waiter")] | max_by(.total_ns) | .waker.comm' "$J")" holder
	check "$what: ... through futex_wake (its kernel stack)" grep -q 'futex_wake' \
		<<<"$(jq -r '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "waiter")] | max_by(.total_ns) | .waker.kernel | join(";")' "$J")"
	check "$what: the napper's top stack is in nanosleep" grep -qE '(^|;)(__)?(clock_)?nanosleep' <<<"$(top napper user)"
	equal "$what: no stack was dropped" "$(jq '.runs[0].quality.stack_drops' "$J")" 0 ||
		echo "#   drops: $(jq -c '.runs[0].stacks.drops | with_entries(select(.value != 0))' "$J")"
	"$TSARUN" -q --stacks --offcpu-min 0 --json "$J" -- "$WORKLOADS/two_paths_nofp" 10 5 15
	path() {
		jq --arg f "$1" --arg o "$2" "[.runs[0].stacks.offcpu_stacks[] |
			select(.comm == \"two_paths_nofp\" and (.user | index(\$f)) and ((.user | index(\$o)) | not))] | map(.count) | add // 0" "$J"
	}
	equal "$what: two_paths_nofp: 10 sleeps in fast_path, 10 in slow_path, each on its own stack" \
		"$(path fast_path slow_path) $(path slow_path fast_path)" "10 10"
}
stacks "stacks"

# The fallbacks of older kernels (task records by tid, no bpf_task_pt_regs,
# no bpf_loop), forced on this one: the same figures.
export TSARUN_BPF_COMPAT=old
check "the fallbacks of older kernels load here" \
	sh -c "'$TSARUN' doctor | grep -q 'hash map by task.*bounded loops'"
"$TSARUN" -q --json "$J" -- "$WORKLOADS/spin_sleep" 300 200
within "old-kernel fallbacks: on-CPU less steal (ms)" "$(ms spinsleep '.on_cpu_ns - .steal_ns')" 300 10
within "old-kernel fallbacks: sleeping (ms)" "$(ms spinsleep .sleeping_ns)" 200 10
closes "old-kernel fallbacks, spin then sleep"
"$TSARUN" -q --json "$J" -- "$WORKLOADS/threads" 300 4 100
equal "old-kernel fallbacks: 300 threads, each seen" "$(jq '.runs[0].threads | length' "$J")" 301
closes "old-kernel fallbacks, 300 threads"
stacks "old-kernel fallbacks, stacks"
"$TSARUN" -q --flame --out-dir "$T_TMP/fl" -- "$WORKLOADS/spin_sleep" 100 10
check "old-kernel fallbacks: --flame samples on-CPU stacks" grep -q spin_cpu_ms "$T_TMP/fl/tsarun.oncpu.folded"
"$TSARUN" -q --timeline --json "$J" -- "$WORKLOADS/mutex_wait" 50 50
equal "old-kernel fallbacks: --timeline: each thread's intervals sum to its account, state by state" \
	"$(jq -c '.runs[-1] as $r | [$r.timeline.threads[] as $g
		| ($r.threads[] | select(.tid == $g.tid and .task_start_ns == $g.task_start_ns)) as $t
		| def s(k): [$g.intervals[] | select(.[2] as $x | k | index($x)) | .[1]] | add // 0;
		(($t.on_cpu_ns - s([0,1])) + ($t.runqueue_ns - s([2,3,4])) + ($t.sleeping_ns - s([5]))
		 + ($t.uninterruptible_ns - s([6])) + ($t.stopped_ns - s([7])) - $g.lost_ns)
		| select(. != 0)] | length' "$J")" 0
unset TSARUN_BPF_COMPAT

# PREEMPT_RT: a thread blocked on a sleeping spinlock (the process's siglock)
# is in D, not waiting for a CPU: the kernel's run_delay and nvcsw say so.
"$TSARUN" -q --json "$J" -- "$WORKLOADS/lockstorm" 4 400
closes "signal-mask storm (4 threads)"
if [ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ]; then
	# The storm's workers (not its main thread, which joins them) never sleep
	# of their own: their only waits off the CPU are for the lock, and each
	# is a voluntary switch in the kernel's nvcsw (which also counts the
	# switch away from the dead thread). How many there are is up to the
	# scheduler: a waiter spins while the lock's holder runs, and blocks
	# only when the holder was preempted holding it (one to four times per
	# worker in 400 ms under QEMU). A storm in which no worker blocked
	# tests nothing, and is run again (three times at most).
	workers='[.runs[0].threads[] | select(.comm == "lockstorm" and .tid != .pid)]'
	for try in 1 2 3; do
		blocks=$(jq "$workers | map(.kernel.nvcsw - 1) | add" "$J")
		[ "$blocks" -gt 0 ] 2>/dev/null && break
		"$TSARUN" -q --json "$J" -- "$WORKLOADS/lockstorm" 4 400
	done
	check "PREEMPT_RT: the storm made its workers wait for the lock (the kernel's nvcsw: $blocks)" \
		test "$blocks" -gt 0
	equal "PREEMPT_RT: ... each wait is one in D (D waits = the kernel's voluntary switches)" \
		"$(jq "$workers | map(.offcpu_hist_log2_us.uninterruptible | add // 0) | add" "$J")" "$blocks"
	at_least "PREEMPT_RT: ... and takes time in D (ms)" \
		"$(jq "$workers | map(.uninterruptible_ns) | add / 1e6" "$J")" 0.001
	at_most "PREEMPT_RT: ... not in S (ms)" "$(jq "$workers | map(.sleeping_ns) | add / 1e6" "$J")" 1
	[ "$try" -eq 1 ] || closes "signal-mask storm (4 threads), run $try"
fi

# The loud failure: a program the verifier refuses (TSARUN_TEST_BPF_FAIL).
export TSARUN_TEST_BPF_FAIL=1
"$TSARUN" --color never --json "$J" -- true 2>"$T_TMP/err"
equal "a refused program: the run still succeeds" "$?" 0
check "... and the report's first line is the warning, naming the program and the verifier's words" \
	sh -c "head -1 '$T_TMP/err' | grep -q '^tsarun: warning: eBPF did not load: the kernel refused the program tsa_switch: .*bpf_skb_load_bytes'"
equal "... the artifact keeps it" "$(jqv "$J" '.runs[0].quality.ebpf_load_failure | "\(.kind) \(.object)"')" "program tsa_switch"
validate "$J"
check "... doctor says the same" sh -c "'$TSARUN' doctor | grep -q '^  ebpf  *unavailable  *the kernel refused the BPF program tsa_switch: .*bpf_skb_load_bytes'"
check "... -v prints the verifier's log" sh -c "'$TSARUN' -v --json /dev/null -- true 2>&1 | grep -q \"verifier log of tsa_switch\""
for opt in --stacks --waker --flame --timeline "--offcpu-min 1ms"; do
	rm -f "$T_TMP/ran"
	# shellcheck disable=SC2086
	"$TSARUN" -q $opt --json "$J" -- touch "$T_TMP/ran" 2>"$T_TMP/err"
	equal "$opt without eBPF: 125" "$?" 125
	check "... before running the command, saying why" \
		sh -c "test ! -e '$T_TMP/ran' && grep -q 'needs eBPF.*tsa_switch' '$T_TMP/err'"
done
unset TSARUN_TEST_BPF_FAIL

# --bash ties commands to their processes (60-bash.sh in full on the host).
"$TSARUN" --color never --json "$J" --bash "$B/counts.sh" >/dev/null 2>&1
equal "--bash: the script's exit status" "$?" 3
node() { jq -r --arg t "$1" --argjson l "$2" "[.bash.commands[] | select(.text == \$t and .line == \$l)] | .[0].$3" "$J"; }
equal "--bash: a 20,000-iteration loop: body count 20000" "$(node 'n=$((n + 1))' 6 count)" 20000
equal "--bash: the sleep process is attached to its command" "$(node 'sleep 0.12' 7 'processes[0].comm')" sleep
within "... and slept 120 ms in S (ms)" "$(node 'sleep 0.12' 7 'processes[0].sleeping_ns / 1e6')" 120 5
equal "--bash: a pipeline's parts have their processes" \
	"$(jq -r '[.bash.commands[] | select(.line == 10) | .processes[].comm] | sort | join(",")' "$J")" "bash,cat,tr"

# The gate passes on no change and fails on a real regression (40-gate.sh in full on the host).
# 200 ms of CPU against 400: under an emulator each start costs tens of
# milliseconds of CPU that vary from run to run, which a smaller step drowns.
"$TSARUN" -q -r 5 --json base.json -- "$WORKLOADS/burn" 200
"$TSARUN" --no-table -r 5 --baseline base.json --json new.json -- "$WORKLOADS/burn" 200 2>/dev/null
equal "gate: no change passes (0)" "$?" 0
"$TSARUN" --no-table -r 5 --baseline base.json --json new.json -- "$WORKLOADS/burn" 400 2>/dev/null
equal "gate: twice the CPU fails (3)" "$?" 3
equal "... as a regression" "$(jqv new.json .comparison.verdict)" regression

# Without eBPF (-b proc,taskstats), procfs sampling still measures (32-procfs.sh in full on the host).
"$TSARUN" -q -b proc,taskstats --json "$J" -- "$WORKLOADS/spin_sleep" 300 200
equal "procfs fallback: eBPF not used" "$(jqv "$J" '.runs[0].quality.sources_active | index("ebpf")')" null
within "procfs fallback: on-CPU (ms)" "$(ms spinsleep .on_cpu_ns)" 300 10
