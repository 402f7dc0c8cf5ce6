#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Start-up and tear-down cost: 'tsarun -- true' against 'true', interleaved.
# Target: at most 30 ms added per run. 'true' bare is the program tsarun
# runs ($(type -P true)), forked and executed by this shell as the command
# is without tsarun; against bash's builtin, which would charge tsarun with
# running the command itself, is said too. The same with --stacks (no
# target): the on-CPU sampler, the stack maps, and the kernel's symbols
# read at the end to name the kernel frames. And with --timeline (no
# target): its ring buffer, the timeline code the verifier walks, the
# trace written at the end.
. "$(dirname "$0")/lib.sh"
N=${N:-20}
bare=() builtin=() traced=() stacks=() timeline=()
TRUE=$(type -P true)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
now() { date +%s%N; }
for ((i = 0; i < N; i++)); do
	tb=$(now); true; t0=$(now); "$TRUE"; t1=$(now)
	"$TSARUN" -q --json /dev/null -- true; t2=$(now)
	"$TSARUN" -q --stacks --json /dev/null -- true; t3=$(now)
	"$TSARUN" -q --timeline --out-dir "$out" --json /dev/null -- true; t4=$(now)
	builtin+=("$(((t0 - tb)))")
	bare+=("$(((t1 - t0)))")
	traced+=("$(((t2 - t1)))")
	stacks+=("$(((t3 - t2)))")
	timeline+=("$(((t4 - t3)))")
done
b=$(printf '%s\n' "${bare[@]}" | median)
bb=$(printf '%s\n' "${builtin[@]}" | median)
t=$(printf '%s\n' "${traced[@]}" | median)
s=$(printf '%s\n' "${stacks[@]}" | median)
l=$(printf '%s\n' "${timeline[@]}" | median)
added=$(awk -v t="$t" -v b="$b" 'BEGIN { printf "%.1f", (t - b) / 1e6 }')
added_builtin=$(awk -v t="$t" -v b="$bb" 'BEGIN { printf "%.1f", (t - b) / 1e6 }')
added_stacks=$(awk -v t="$s" -v b="$b" 'BEGIN { printf "%.1f", (t - b) / 1e6 }')
added_timeline=$(awk -v t="$l" -v b="$b" 'BEGIN { printf "%.1f", (t - b) / 1e6 }')
how=$("$TSARUN" doctor 2>/dev/null | grep -o 'loaded by [^;]*' | head -1)
echo "bench startup: 'tsarun -- true' takes ${added} ms more than '$TRUE' (median of $N interleaved runs, probe ${how:-not loaded}; target <= 30 ms: $(verdict "$added" 30)); ${added_builtin} ms more than bash's builtin true"
echo "bench startup-stacks: 'tsarun --stacks -- true' takes ${added_stacks} ms more than 'true' (same runs; no target)"
echo "bench startup-timeline: 'tsarun --timeline -- true' takes ${added_timeline} ms more than 'true' (same runs; no target)"
