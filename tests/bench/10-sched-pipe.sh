#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The worst case for a scheduler tracer: perf bench sched pipe pinned to one
# CPU (two tasks ping-ponging through a pipe, a switch every ~1.4 us), bare
# and under tsarun, interleaved, ROUNDS times. perf's own usecs/op is the
# figure (tsarun's start-up and report are not in it). Target: ratio <= 1.10.
# Each round also runs the benchmark beside an empty sched_switch program:
# the floor any sched_switch tracer pays on this machine (the kernel's
# dispatch of a BPF program at every switch), so that what tsarun's own
# program adds can be read off the same run.
. "$(dirname "$0")/lib.sh"
LOOPS=${LOOPS:-300000}
EXTRA=${EXTRA:-}
name=${NAME:-sched-pipe}
target=${TARGET:-1.10}
empty=${OUTPUT:-build}/tests/bench/empty_switch
bare=() traced=() floor=()
op() { grep usecs/op | awk '{print $1}'; }
pipe() { taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>&1 | op; }
# The benchmark with the empty program attached (nothing if it cannot be).
beside_empty() {
	local line stdin
	coproc EMPTY { exec "$empty" "$empty.bpf.o" 2>/dev/null; }
	stdin=${EMPTY[1]}
	read -r -u "${EMPTY[0]}" line && [ "$line" = attached ] && pipe
	exec {stdin}>&- # its stdin ends: it detaches and exits
	wait "$EMPTY_PID"
}
for ((i = 0; i < ROUNDS; i++)); do
	bare+=("$(pipe)")
	# shellcheck disable=SC2086
	traced+=("$("$TSARUN" -q $EXTRA --json /dev/null -- taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>&1 | op)")
	floor+=("$(beside_empty)")
done
b=$(printf '%s\n' "${bare[@]}" | median)
t=$(printf '%s\n' "${traced[@]}" | median)
r=$(ratio "$t" "$b")
f=$(printf '%s\n' "${floor[@]}" | grep . | median)
if printf '%s\n' "${floor[@]}" | grep -q .; then
	floor_note="; an empty sched_switch program alone: ${f} us/op, ratio $(ratio "$f" "$b")"
else
	floor_note="; the empty sched_switch program could not be attached"
fi
echo "bench $name: bare ${b} us/op, under tsarun${EXTRA:+ $EXTRA} ${t} us/op, ratio of medians $r over $ROUNDS interleaved rounds (target <= $target: $(verdict "$r" "$target"))$floor_note"
