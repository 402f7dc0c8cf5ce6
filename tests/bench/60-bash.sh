#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tsarun --bash: what profiling adds per simple command, all-in (the trap,
# the builtin, the records, tsarun reading and folding them), next to an
# empty DEBUG trap, in interleaved rounds; and the post-processing rate of
# the decoder on a generated stream with the memory it adds.
# Targets: at most 5 us added per command; at least 1M records/s.
. "$(dirname "$0")/lib.sh"
N=${N:-20000}
body=':;:;:;:;:;:;:;:;:;:'
loop="for i in {1..$N}; do $body; done"
cmds=$((N * 11)) # ten ':' and the for's own trap per iteration
now() { date +%s%N; }
bare=() empty=() prof=() bare0=() prof0=()
for ((r = 0; r < ROUNDS; r++)); do
	t0=$(now); bash -c "$loop"; t1=$(now)
	bash -c "set -T; trap : DEBUG; $loop"; t2=$(now)
	"$TSARUN" -q --json /dev/null --bash -c "$loop"; t3=$(now)
	bash -c ':'; t4=$(now)
	"$TSARUN" -q --json /dev/null --bash -c ':'; t5=$(now)
	bare+=("$((t1 - t0))") empty+=("$((t2 - t1))") prof+=("$((t3 - t2))")
	bare0+=("$((t4 - t3))") prof0+=("$((t5 - t4))")
done
m() { printf '%s\n' "$@" | median; }
b=$(m "${bare[@]}") e=$(m "${empty[@]}") p=$(m "${prof[@]}") b0=$(m "${bare0[@]}") p0=$(m "${prof0[@]}")
# Per command: the loop's time beyond the same run of ':' alone (start-up,
# calibration and tsarun's own start-up cancel), minus the bare loop's.
per() { awk -v t="$1" -v t0="$2" -v b="$b" -v b0="$b0" -v n="$cmds" 'BEGIN { printf "%.2f", ((t - t0) - (b - b0)) / n / 1000 }'; }
ep=$(per "$e" "$b0")
pp=$(per "$p" "$p0")
echo "bench bash-trap: per command, empty DEBUG trap adds ${ep} us; tsarun --bash adds ${pp} us all-in (ratio $(ratio "$pp" "$ep") to the empty trap; median of $ROUNDS interleaved rounds of $cmds commands; target <= 5 us: $(verdict "$pp" 5))"
out=$("${OUTPUT:-build}/tests/bench/bashprof_rate" 4000000)
rate=$(echo "$out" | awk '{print $6}')
rss=$(echo "$out" | awk '{print $14}')
nodes=$(echo "$out" | awk '{print $8}')
echo "bench bash-decode: $(awk -v r="$rate" 'BEGIN { printf "%.1f", r / 1e6 }') M records/s post-processing (4M generated records, $nodes nodes, ${rss} KB added: memory follows the tree; target >= 1 M/s: $(awk -v r="$rate" 'BEGIN { print (r >= 1e6) ? "meets the target" : "MISSES the target" }'))"
