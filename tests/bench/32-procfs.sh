#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What procfs sampling costs, and why auto does not sample when eBPF works.
# 1. perf bench sched pipe pinned to one CPU under --backend ebpf and under
#    --backend ebpf,proc (sampling every 10 ms beside eBPF), interleaved:
#    the ratio is the sampler's cost on top of eBPF's.
# 2. The sampler's own CPU time, alone: tsarun -p (monitor mode has no
#    child, so its user + sys is the sampling) on a process with 3 threads
#    and on one with 102 (1 spinning, the rest asleep), at --sample 10ms:
#    the difference between 4 s and 2 s of monitoring (start-up cancels
#    out) is the steady cost: a share of one CPU, and per thread read.
. "$(dirname "$0")/lib.sh"
LOOPS=${LOOPS:-300000}
ebpf=() both=()
op() { grep usecs/op | awk '{print $1}'; }
for ((i = 0; i < ROUNDS; i++)); do
	ebpf+=("$("$TSARUN" -q -b ebpf --json /dev/null -- taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>&1 | op)")
	both+=("$("$TSARUN" -q -b ebpf,proc --json /dev/null -- taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>&1 | op)")
done
e=$(printf '%s\n' "${ebpf[@]}" | median)
b=$(printf '%s\n' "${both[@]}" | median)
echo "bench procfs-beside-ebpf: sched pipe ${e} us/op under -b ebpf, ${b} us/op under -b ebpf,proc, ratio of medians $(ratio "$b" "$e") over $ROUNDS interleaved rounds"

# cpu_of CMD...: user + sys of CMD, in ms
cpu_of() {
	local out
	out=$( { /usr/bin/env TIMEFORMAT='%U %S' bash -c 'time "$@" >/dev/null 2>&1' _ "$@"; } 2>&1)
	awk -v u="${out% *}" -v s="${out#* }" 'BEGIN { printf "%.1f", (u + s) * 1000 }'
}
for n in 1 100; do
	"$WORKLOADS/spinner" 60 "$n" &
	P=$!
	sleep 0.5
	threads=$(ls /proc/$P/task | wc -l)
	short=() long=()
	for ((i = 0; i < 3; i++)); do
		short+=("$(cpu_of "$TSARUN" -p "$P" --sample 10ms --interval 1s --count 2 --output json)")
		long+=("$(cpu_of "$TSARUN" -p "$P" --sample 10ms --interval 1s --count 4 --output json)")
	done
	kill "$P" 2>/dev/null
	wait "$P" 2>/dev/null
	s2=$(printf '%s\n' "${short[@]}" | median)
	s4=$(printf '%s\n' "${long[@]}" | median)
	echo "bench procfs-sampler-$threads-threads: $(awk -v a="$s4" -v b="$s2" 'BEGIN { printf "%.1f", a - b }') ms of CPU per 2 s at 10 ms ($(awk -v a="$s4" -v b="$s2" 'BEGIN { printf "%.2f", (a - b) / 2000 * 100 }')% of a CPU; $(awk -v a="$s4" -v b="$s2" -v n="$threads" 'BEGIN { printf "%.1f", (a - b) * 1000 / 200 / n }') us per thread read), medians of 3 runs of 2 s and 4 s"
done
