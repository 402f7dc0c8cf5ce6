#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What --interval 100ms costs the measured command: perf bench sched pipe
# pinned to one CPU under tsarun without and with the stream, interleaved,
# ROUNDS times (perf's own usecs/op is the figure). Twice: with tsarun free
# to run on the other CPU (the usual case), and with tsarun pinned to the
# benchmark's CPU too, so that every tick (the task iterator's pass, the
# line written) is time taken from the command. Target: ratio with/without
# <= 1.02 in both. Then start-up with and without (no target), and what a
# tick costs tsarun itself: its CPU time over a 3 s sleep with --interval
# 10ms against without, per tick, for a command of 2 threads and for 200
# (no target).
. "$(dirname "$0")/lib.sh"
LOOPS=${LOOPS:-300000}
target=${TARGET:-1.02}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plain=() iv=() plain0=() iv0=()
op() { grep usecs/op | awk '{print $1}'; }
pipe() { "$@" taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>&1 | op; }
for ((i = 0; i < ROUNDS; i++)); do
	plain+=("$(pipe "$TSARUN" -q --json /dev/null --)")
	iv+=("$(pipe "$TSARUN" -q --interval 100ms --stream "$tmp/s.jsonl" --json /dev/null --)")
	plain0+=("$(pipe taskset -c 0 "$TSARUN" -q --json /dev/null --)")
	iv0+=("$(pipe taskset -c 0 "$TSARUN" -q --interval 100ms --stream "$tmp/s.jsonl" --json /dev/null --)")
done
lines=$(wc -l <"$tmp/s.jsonl")
p=$(printf '%s\n' "${plain[@]}" | median)
v=$(printf '%s\n' "${iv[@]}" | median)
p0=$(printf '%s\n' "${plain0[@]}" | median)
v0=$(printf '%s\n' "${iv0[@]}" | median)
r=$(ratio "$v" "$p") r0=$(ratio "$v0" "$p0")
echo "bench sched-pipe-interval: tsarun ${p} us/op, with --interval 100ms ${v} us/op, ratio $r (target <= $target: $(verdict "$r" "$target")); tsarun pinned to the benchmark's CPU ${p0}, with --interval 100ms ${v0}, ratio $r0 (target <= $target: $(verdict "$r0" "$target")); medians of $ROUNDS interleaved rounds, $lines lines in the last run"

# Start-up and tear-down: 'tsarun --interval 100ms -- true' against 'tsarun -- true'.
now() { date +%s%N; }
s0=() s1=()
for ((i = 0; i < ${N:-20}; i++)); do
	t0=$(now)
	"$TSARUN" -q --json /dev/null -- true
	t1=$(now)
	"$TSARUN" -q --interval 100ms --stream "$tmp/u.jsonl" --json /dev/null -- true
	t2=$(now)
	s0+=("$((t1 - t0))")
	s1+=("$((t2 - t1))")
done
a=$(printf '%s\n' "${s0[@]}" | median)
b=$(printf '%s\n' "${s1[@]}" | median)
echo "bench startup-interval: 'tsarun -- true' $(awk -v a="$a" 'BEGIN { printf "%.1f", a / 1e6 }') ms, with --interval 100ms $(awk -v b="$b" 'BEGIN { printf "%.1f", b / 1e6 }') ms, ratio $(ratio "$b" "$a") (medians of ${N:-20} interleaved runs; no target)"

# What a tick costs tsarun itself: its CPU time (user + sys, with its
# children's: sleep's is nothing to speak of) over a 3 s sleep.
cpu() { # tsarun options...
	local TIMEFORMAT='%3U %3S'
	{ time "$TSARUN" -q --json /dev/null "$@" -- sleep 3; } 2>"$tmp/t"
	awk '{ printf "%d", ($1 + $2) * 1e6 }' "$tmp/t" # us
}
c0=() c1=()
for ((i = 0; i < 3; i++)); do
	c0+=("$(cpu)")
	c1+=("$(cpu --interval 10ms --stream "$tmp/c.jsonl")")
done
n=$(wc -l <"$tmp/c.jsonl")
a=$(printf '%s\n' "${c0[@]}" | median)
b=$(printf '%s\n' "${c1[@]}" | median)
echo "bench interval-tick: tsarun's CPU over a 3 s sleep: ${a} us, with --interval 10ms ${b} us ($n lines): $(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.0f", (b - a) / n }') us per tick (medians of 3 interleaved runs; no target)"

# The same with 200 live threads to read and write at every tick: a tree of
# 200 processes, each asleep for 2 s.
cpu_tree() { # tsarun options...
	local TIMEFORMAT='%3U %3S'
	{ time "$TSARUN" -q --json /dev/null "$@" -- "$WORKLOADS/proctree" 200 3 2000; } 2>"$tmp/t"
	awk '{ printf "%d", ($1 + $2) * 1e6 }' "$tmp/t" # us, the tree's own included
}
c0=() c1=()
for ((i = 0; i < 3; i++)); do
	c0+=("$(cpu_tree)")
	c1+=("$(cpu_tree --interval 10ms --stream "$tmp/c.jsonl")")
done
n=$(wc -l <"$tmp/c.jsonl")
a=$(printf '%s\n' "${c0[@]}" | median)
b=$(printf '%s\n' "${c1[@]}" | median)
echo "bench interval-tick-200: CPU of tsarun and a tree of 200 sleeping processes: ${a} us, with --interval 10ms ${b} us ($n lines): $(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.0f", (b - a) / n }') us per tick (medians of 3 interleaved runs; no target)"
