#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What --timeline costs on the worst case for it: perf bench sched pipe
# pinned to one CPU, two intervals closing at every switch (a few
# microseconds apart). Interleaved in each round: bare, tsarun (accounting
# only: the timeline code is there and removed by the verifier), tsarun
# --timeline (every interval sent; the bound, 1,000,000, is reached: what
# is sent past it is counted, the kernel side costs the same). Target:
# without --timeline the ratio is 10-sched-pipe's (<= 1.10); with it, none.
. "$(dirname "$0")/lib.sh"
LOOPS=${LOOPS:-300000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bare=() plain=() tl=()
op() { grep usecs/op | awk '{print $1}'; }
pipe() { "$@" taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>&1 | op; }
for ((i = 0; i < ROUNDS; i++)); do
	bare+=("$(pipe)")
	plain+=("$(pipe "$TSARUN" -q --json /dev/null --)")
	tl+=("$(pipe "$TSARUN" -q --timeline --out-dir "$out" --json /dev/null --)")
done
b=$(printf '%s\n' "${bare[@]}" | median)
p=$(printf '%s\n' "${plain[@]}" | median)
t=$(printf '%s\n' "${tl[@]}" | median)
rp=$(ratio "$p" "$b") rt=$(ratio "$t" "$b")
echo "bench sched-pipe-timeline: bare ${b} us/op; tsarun ${p} (ratio $rp, target <= 1.10: $(verdict "$rp" 1.10)); --timeline ${t} (ratio $rt, no target); medians of $ROUNDS interleaved rounds"
