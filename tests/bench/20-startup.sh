#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Start-up and tear-down cost: 'tsarun -- true' against 'true', interleaved.
# Target: at most 30 ms added per run.
. "$(dirname "$0")/lib.sh"
N=${N:-20}
bare=() traced=()
now() { date +%s%N; }
for ((i = 0; i < N; i++)); do
	t0=$(now); true; t1=$(now)
	"$TSARUN" -q --json /dev/null -- true; t2=$(now)
	bare+=("$(((t1 - t0)))")
	traced+=("$(((t2 - t1)))")
done
b=$(printf '%s\n' "${bare[@]}" | median)
t=$(printf '%s\n' "${traced[@]}" | median)
added=$(awk -v t="$t" -v b="$b" 'BEGIN { printf "%.1f", (t - b) / 1e6 }')
how=$("$TSARUN" doctor 2>/dev/null | grep -o 'loaded by [^;]*' | head -1)
echo "bench startup: 'tsarun -- true' takes ${added} ms more than 'true' (median of $N interleaved runs, probe ${how:-not loaded}; target <= 30 ms: $(verdict "$added" 30))"
