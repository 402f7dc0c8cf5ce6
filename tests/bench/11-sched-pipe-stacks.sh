#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What stacks cost on the worst case for them: perf bench sched pipe pinned
# to one CPU, where every switch-out is a sleep (the case where bcc's
# offcputime takes two stacks at every switch-out).
# Interleaved in each round: bare, tsarun (accounting only), tsarun
# --stacks (default --offcpu-min), and tsarun --stacks --offcpu-min 0 (every
# sleep stack-walked: reported, no target). Targets: --stacks <= 1.5, and
# without --stacks the stack code costs nothing (the accounting-only ratio is
# the one 10-sched-pipe checks).
. "$(dirname "$0")/lib.sh"
LOOPS=${LOOPS:-300000}
bare=() plain=() stacks=() all=()
op() { grep usecs/op | awk '{print $1}'; }
pipe() { "$@" taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>&1 | op; }
for ((i = 0; i < ROUNDS; i++)); do
	bare+=("$(pipe)")
	plain+=("$(pipe "$TSARUN" -q --json /dev/null --)")
	stacks+=("$(pipe "$TSARUN" -q --stacks --json /dev/null --)")
	all+=("$(pipe "$TSARUN" -q --stacks --offcpu-min 0 --json /dev/null --)")
done
b=$(printf '%s\n' "${bare[@]}" | median)
p=$(printf '%s\n' "${plain[@]}" | median)
s=$(printf '%s\n' "${stacks[@]}" | median)
a=$(printf '%s\n' "${all[@]}" | median)
rp=$(ratio "$p" "$b") rs=$(ratio "$s" "$b") ra=$(ratio "$a" "$b")
echo "bench sched-pipe-stacks: bare ${b} us/op; tsarun ${p} (ratio $rp); --stacks ${s} (ratio $rs, target <= 1.5: $(verdict "$rs" 1.5)); --stacks --offcpu-min 0 ${a} (ratio $ra, no target); medians of $ROUNDS interleaved rounds"
