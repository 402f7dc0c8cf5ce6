#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# taskstats: every thread of the tree, however short its life, gets its
# exit record's delay counters, attached by identity (never by tid alone);
# the CPU delay agrees with the eBPF runqueue time.
. "$(dirname "$0")/../lib.sh"
need_bpf "taskstats tests"
if ! "$TSARUN" doctor --json | jq -e '.checks[] | select(.name=="taskstats") | .available' >/dev/null; then
	cannot_run "taskstats tests" "taskstats unavailable: $("$TSARUN" doctor --json | jq -r '.checks[] | select(.name=="taskstats") | .detail')"
fi
cd "$T_TMP"
J=$T_TMP/a.json

# 300 threads of about 1 ms each: every one carries its delays, from its exit record.
"$TSARUN" -q --json "$J" -- "$WORKLOADS/threads" 300 4 1000
equal "300 short threads: all seen" "$(jqv "$J" '.runs[0].threads | length')" 301
equal "300 short threads: every thread has delays" \
	"$(jqv "$J" '[.runs[0].threads[] | select(.delays == null or .delays.cpu == null)] | length')" 0
equal "300 short threads: from exit records" \
	"$(jqv "$J" '[.runs[0].threads[] | select(.delays.final != true)] | length')" 0
equal "300 short threads: attached = threads" "$(jqv "$J" '.runs[0].quality.taskstats.attached')" 301
equal "300 short threads: no identity mismatch" "$(jqv "$J" '.runs[0].quality.taskstats.identity_mismatches')" 0
equal "300 short threads: no record dropped" "$(jqv "$J" '.runs[0].quality.taskstats_drops')" 0
check "taskstats is an active source" jq -e '.runs[0].quality.sources_active | index("taskstats")' "$J"
# Each record is its thread's own: written just before the thread's final
# switch-out, it counts the same switch-ins as the kernel's pcount read at
# that switch, or fewer when the thread was preempted in between. (The
# command's own thread is left out: its kernel counters start at exec.)
workers='[.runs[0] | .root_pid as $r | .threads[] | select(.tid != $r)]'
equal "300 short threads: no record counts more switch-ins than its thread had" \
	"$(jqv "$J" "$workers | map(select(.delays.cpu.count > .kernel.pcount)) | length")" 0
at_least "300 short threads: most records count exactly its thread's switch-ins" \
	"$(jqv "$J" "$workers | map(select(.delays.cpu.count == .kernel.pcount)) | length")" 285
validate "$J"

# A contended thread: the taskstats CPU delay (run_delay) agrees with the eBPF runqueue time.
"$TSARUN" -q --json "$J" -- "$WORKLOADS/pinned" 300 0
for c in pinned-a pinned-b; do
	within "contended $c: taskstats CPU delay vs eBPF runqueue (ms)" \
		"$(jqv "$J" "[.runs[0].threads[] | select(.comm == \"$c\")][0].delays.cpu.total_ns / 1e6")" \
		"$(jqv "$J" "[.runs[0].threads[] | select(.comm == \"$c\")][0].runqueue_ns / 1e6")" 5
done
check "the cross-check compares them" jq -e '.runs[0].quality.cross_check.taskstats_cpu_vs_runqueue.available' "$J"
# A thread preempted on its way out waits in the runqueue after writing its
# record (the other one still spins on the CPU): the record cannot count
# that wait, and the cross-check says how much it was. With it, the two agree.
cc='.runs[0].quality.cross_check.taskstats_cpu_vs_runqueue'
within "cross-check: eBPF runqueue = taskstats CPU delay + the waits after the records (ms)" \
	"$(jqv "$J" "$cc.sum_ebpf / 1e6")" "$(jqv "$J" "($cc.sum_kernel + $cc.after_record_ns) / 1e6")" 1
validate "$J"

# Tids are reused: with pid_max at 32768, 40,000 threads in turn wrap the pid space.
pid_max=$(cat /proc/sys/kernel/pid_max)
n=$((pid_max + 7000))
"$TSARUN" -q --json "$J" -- "$WORKLOADS/threads" "$n" 1 0
# (The command's own thread is left out of the counter comparisons: its kernel
# counters are over the tracked life, from exec, its record's from its fork.)
jq -r '.runs[0] | .root_pid as $root | (.threads | map(select(.tid != $root))) as $w | .threads as $t | [($t | length), ($t | map(.tid) | unique | length),
	($t | map(select(.delays == null)) | length), .quality.taskstats.identity_mismatches,
	($w | map(select(.delays != null and (.delays.cpu.count > .kernel.pcount
		or .delays.cpu.total_ns > .kernel.run_delay_ns))) | length),
	($w | map(select(.delays != null and .delays.cpu.total_ns == .kernel.run_delay_ns)) | length)]
	| @tsv' "$J" >"$T_TMP/reuse"
read -r total distinct without mismatches impossible exact <"$T_TMP/reuse"
equal "tid reuse: every thread seen" "$total" $((n + 1))
at_least "tid reuse: tids were reused" $((total - distinct)) 1000
equal "tid reuse: every thread has delays" "$without" 0
equal "tid reuse: no identity mismatch" "$mismatches" 0
# A record given to the wrong thread of a reused tid would show counters that thread never had.
equal "tid reuse: no thread has more CPU delay than its kernel counters" "$impossible" 0
at_least "tid reuse: CPU delay equals the thread's own run_delay (threads)" "$exact" $((total * 99 / 100))

# Exits of other processes on the machine are heard and ignored.
( for i in $(seq 200); do /bin/true; done ) &
bg=$!
"$TSARUN" -q --json "$J" -- "$WORKLOADS/threads" 50 2 2000
wait $bg
equal "foreign exits: only the tree's threads" "$(jqv "$J" '.runs[0].threads | length')" 51
at_least "foreign exits: other processes' records were ignored" "$(jqv "$J" '.runs[0].quality.taskstats.foreign_records')" 1
equal "foreign exits: no record without a thread" "$(jqv "$J" '.runs[0].quality.taskstats.unmatched_records')" 0

# A process left running is queried at the end: its delays so far, not final.
"$TSARUN" -q --descendants leave --json "$J" -- sh -c 'sleep 3 & exit 0'
equal "left running: the sleeper has delays" \
	"$(jqv "$J" '[.runs[0].threads[] | select(.comm == "sleep")][0].delays.final')" false
equal "left running: queried" "$(jqv "$J" '.runs[0].quality.taskstats.queried')" 1
validate "$J"
