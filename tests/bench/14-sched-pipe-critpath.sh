#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What --critical-path costs on the worst case for it: perf bench sched pipe
# pinned to one CPU, two wakeups per round trip, each a wakeup event on top
# of --timeline's intervals (sched_waking is attached: every wakeup on the
# machine runs it). Interleaved in each round: bare, tsarun (accounting
# only), tsarun --critical-path, and with TSARUN_REF (a build from before
# the critical path) its --timeline, to see what the wakers add. Target:
# --critical-path within 1.30 of bare.
. "$(dirname "$0")/lib.sh"
LOOPS=${LOOPS:-300000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bare=() plain=() cp=() ref=()
op() { grep usecs/op | awk '{print $1}'; }
pipe() { "$@" taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>&1 | op; }
for ((i = 0; i < ROUNDS; i++)); do
	bare+=("$(pipe)")
	plain+=("$(pipe "$TSARUN" -q --json /dev/null --)")
	cp+=("$(pipe "$TSARUN" -q --critical-path --out-dir "$out" --json /dev/null --)")
	[ -n "${TSARUN_REF:-}" ] && ref+=("$(pipe "$TSARUN_REF" -q --timeline --out-dir "$out" --json /dev/null --)")
done
b=$(printf '%s\n' "${bare[@]}" | median)
p=$(printf '%s\n' "${plain[@]}" | median)
c=$(printf '%s\n' "${cp[@]}" | median)
rp=$(ratio "$p" "$b") rc=$(ratio "$c" "$b") rcp=$(ratio "$c" "$p")
extra=
if [ -n "${TSARUN_REF:-}" ]; then
	r=$(printf '%s\n' "${ref[@]}" | median)
	extra="; the reference's --timeline ${r} (ratio $(ratio "$r" "$b"); --critical-path is $(ratio "$c" "$r") of it)"
fi
echo "bench sched-pipe-critpath: bare ${b} us/op; tsarun ${p} (ratio $rp); --critical-path ${c} (ratio $rc, target <= 1.30: $(verdict "$rc" 1.30); $rcp of tsarun)$extra; medians of $ROUNDS interleaved rounds"
