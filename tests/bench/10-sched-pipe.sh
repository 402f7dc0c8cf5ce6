#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The worst case for a scheduler tracer: perf bench sched pipe pinned to one
# CPU (two tasks ping-ponging through a pipe, a switch every ~1.4 us), bare
# and under tsarun, interleaved, ROUNDS times. perf's own usecs/op is the
# figure (tsarun's start-up and report are not in it). Target: ratio <= 1.10.
. "$(dirname "$0")/lib.sh"
LOOPS=${LOOPS:-300000}
EXTRA=${EXTRA:-}
name=${NAME:-sched-pipe}
target=${TARGET:-1.10}
bare=() traced=()
op() { grep usecs/op | awk '{print $1}'; }
for ((i = 0; i < ROUNDS; i++)); do
	bare+=("$(taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>&1 | op)")
	# shellcheck disable=SC2086
	traced+=("$("$TSARUN" -q $EXTRA --json /dev/null -- taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>&1 | op)")
done
b=$(printf '%s\n' "${bare[@]}" | median)
t=$(printf '%s\n' "${traced[@]}" | median)
r=$(ratio "$t" "$b")
echo "bench $name: bare ${b} us/op, under tsarun${EXTRA:+ $EXTRA} ${t} us/op, ratio of medians $r over $ROUNDS interleaved rounds (target <= $target: $(verdict "$r" "$target"))"
