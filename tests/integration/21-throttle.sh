#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU quota (CFS bandwidth: cgroup v2 cpu.max, v1 cpu.cfs_quota_us). A
# throttled thread is runnable and the kernel counts its wait in run_delay,
# as tsarun counts it in runqueue; but it waits for quota, not for a CPU,
# and the report must say how much of RUNQ that was (throttled_ns), checked
# against the cgroup's own throttled time. Likewise real-time throttling (RT
# bandwidth, kernel.sched_rt_runtime_us), in rt_throttled_ns.
. "$(dirname "$0")/../lib.sh"
need_bpf "throttling tests"
cd "$T_TMP"

# A cgroup with the cpu controller: v2 where the cpu controller is there,
# else v1's cpu hierarchy.
CG= V=
for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	if grep -qw cpu "$root/cgroup.controllers" 2>/dev/null; then
		grep -qw cpu "$root/cgroup.subtree_control" ||
			echo +cpu >"$root/cgroup.subtree_control" 2>/dev/null
		if grep -qw cpu "$root/cgroup.subtree_control"; then
			CG=$root/tsarun-test.$$ V=2
			break
		fi
	fi
done
if [ -z "$CG" ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	CG=/sys/fs/cgroup/cpu/tsarun-test.$$ V=1
fi
[ -n "$CG" ] || cannot_run "throttling tests" "no cgroup with the cpu controller (v2 cpu.max or v1 cpu.cfs_quota_us)"
mkdir "$CG" || cannot_run "throttling tests" "cannot create the cgroup $CG"
trap 'rmdir "$CG" 2>/dev/null; rm -rf "$T_TMP"' EXIT
# A heavy group: once it has quota again, it preempts what else runs on its
# CPU at once, so its wait for the CPU after each throttling stays short on
# this shared machine.
if [ $V = 2 ]; then echo 10000 >"$CG/cpu.weight"; else echo 262144 >"$CG/cpu.shares"; fi

# quota US PERIOD_US (quota "max": none)
quota() {
	if [ $V = 2 ]; then
		echo "$1 $2" >"$CG/cpu.max"
	else
		echo "$2" >"$CG/cpu.cfs_period_us"
		[ "$1" = max ] && echo -1 >"$CG/cpu.cfs_quota_us" || echo "$1" >"$CG/cpu.cfs_quota_us"
	fi
}
# The group's throttled time so far, in ns, and how many times it was throttled.
throttled() {
	if [ $V = 2 ]; then
		awk '$1 == "throttled_usec" { print $2 * 1000 }' "$CG/cpu.stat"
	else
		awk '$1 == "throttled_time" { print $2 }' "$CG/cpu.stat"
	fi
}
nr_throttled() { awk '$1 == "nr_throttled" { print $2 }' "$CG/cpu.stat"; }
procs=$CG/cgroup.procs
[ $V = 1 ] && procs=$CG/tasks

# 60 ms of CPU at 10 ms per 50 ms, on one CPU (one runqueue: the group's
# throttled time is the thread's): about 5 periods throttled.
quota 10000 50000
J=$T_TMP/q.json
before=$(throttled) n0=$(nr_throttled)
"$TSARUN" --json "$J" --report q.txt -- sh -c "echo \$\$ >$procs && exec taskset -c 1 $WORKLOADS/burn 60"
after=$(throttled) n1=$(nr_throttled)
validate "$J"
cg=$((after - before))
th=$(jq '[.runs[0].threads[] | select(.comm == "burn")][0].throttled_ns' "$J")
rq=$(jq '[.runs[0].threads[] | select(.comm == "burn")][0].runqueue_ns' "$J")
at_least "the cgroup was throttled (ms)" "$(awk -v c="$cg" 'BEGIN { print c / 1e6 }')" 100
at_most "throttled time is part of runqueue time" "$th" "$rq"
# From below: a throttled thread leaves the CPU at its next return to user
# space, microseconds after its group ran out. From above: its wait lasts
# until it runs again: once its group has quota, it preempts the task on
# its CPU (the group is heavy), at the latest when that task's slice ends
# (the base slice, 3 ms): 3 ms at most each time it was throttled.
at_least "throttled_ns >= 95% of the cgroup's throttled time (ms)" \
	"$(awk -v t="$th" 'BEGIN { print t / 1e6 }')" "$(awk -v c="$cg" 'BEGIN { print c * 0.95 / 1e6 }')"
at_most "throttled_ns <= the cgroup's throttled time + 3 ms per throttling (ms)" \
	"$(awk -v t="$th" 'BEGIN { print t / 1e6 }')" \
	"$(awk -v c="$cg" -v n=$((n1 - n0)) 'BEGIN { print (c + n * 3e6) / 1e6 }')"
equal "totals.throttled_ns is the threads' sum" \
	"$(jq '.runs[0].totals.throttled_ns' "$J")" "$(jq '[.runs[0].threads[].throttled_ns] | add' "$J")"
check "the table says how much of RUNQ was throttling" grep -q "of RUNQ was throttling" q.txt

# Without a quota, a wait for a CPU is no throttling: two burners on one CPU.
# Contention by mechanism, not by luck: two processes started by sh need not
# overlap (one can end before the other starts) and need not share a CPU.
# pinned's two threads are pinned to one CPU and start spinning together
# (a barrier), so until the first of them has had its 40 ms of CPU the
# other is runnable and waits: their runqueue times add up to 40 ms at least
# (the bound is the one the sh version had).
quota max 100000
J=$T_TMP/c.json
"$TSARUN" --json "$J" --report c.txt -- sh -c "echo \$\$ >$procs && exec $WORKLOADS/pinned 40 0"
validate "$J"
at_least "two burners on one CPU wait in the runqueue (ms)" \
	"$(jq '[.runs[0].threads[] | select(.comm | startswith("pinned-")) | .runqueue_ns] | add / 1e6' "$J")" 20
equal "no quota: nothing throttled" "$(jq '.runs[0].totals.throttled_ns' "$J")" 0
equal "no quota, no real-time thread: nothing RT-throttled" "$(jq '.runs[0].totals.rt_throttled_ns' "$J")" 0
check "no quota: the table has no throttling note" bash -c "! grep -q 'of RUNQ was throttling' c.txt"

# Real-time bandwidth: a SCHED_FIFO thread spinning on one CPU may run
# sched_rt_runtime_us of each sched_rt_period_us (950 ms of 1 s by
# default); then lower classes run (the fair class's deadline server since
# 6.12, or a throttled RT runqueue) and it waits as runnable, until the
# period ends. 2 s of CPU span at least one whole period, so it is held off
# once at least, for about period - runtime.
rt_runtime=$(cat /proc/sys/kernel/sched_rt_runtime_us) rt_period=$(cat /proc/sys/kernel/sched_rt_period_us)
[ "$rt_runtime" -ge 0 ] ||
	cannot_run "real-time throttling" "kernel.sched_rt_runtime_us is -1: RT bandwidth is not limited here"
J=$T_TMP/rt.json
"$TSARUN" --json "$J" --report rt.txt -- chrt -f 10 taskset -c 1 "$WORKLOADS/burn" 2000
validate "$J"
rt=$(jq '[.runs[0].threads[] | select(.comm == "burn")][0].rt_throttled_ns' "$J")
rq=$(jq '[.runs[0].threads[] | select(.comm == "burn")][0].runqueue_ns' "$J")
# Half of period - runtime: the kernel charges RT runtime at each tick, so a
# throttle can start a tick late; the wait then lasts to the period's end.
at_least "a SCHED_FIFO spinner is RT-throttled at least once (ms)" \
	"$(awk -v t="$rt" 'BEGIN { print t / 1e6 }')" "$(awk -v r="$rt_runtime" -v p="$rt_period" 'BEGIN { print (p - r) / 2 / 1e3 }')"
at_most "RT-throttled time is part of runqueue time" "$rt" "$rq"
# Nothing but throttling keeps a SCHED_FIFO thread from its CPU here (no
# other real-time task is pinned there, and once its runqueue has bandwidth
# again it preempts whatever runs at once): RUNQ is nearly all throttling.
at_least "RT-throttled time is nearly all of its runqueue time (%)" \
	"$(awk -v t="$rt" -v q="$rq" 'BEGIN { print t * 100 / q }')" 90
equal "... and none of it is CPU-quota throttling" \
	"$(jq '[.runs[0].threads[] | select(.comm == "burn")][0].throttled_ns' "$J")" 0
check "the table says how much of RUNQ was real-time throttling" grep -q "of RUNQ was real-time throttling" rt.txt

