#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the supervisor's sandbox costs: 'tsarun -- true' with the filter (and
# the survivors' iterator it has loaded first, see probe.h's seal()) against
# --no-sandbox, interleaved; wall time and tsarun's own CPU time (user +
# sys of tsarun and its spawner; 'true' is the same on both sides).
. "$(dirname "$0")/lib.sh"
N=${N:-20}
wall_on=() wall_off=() cpu_on=() cpu_off=()
now() { date +%s%N; }
# cpu CMD...: user + sys of CMD and its children, in ms
cpu() {
	local out
	out=$( { /usr/bin/env TIMEFORMAT='%U %S' bash -c 'time "$@" >/dev/null 2>&1' _ "$@"; } 2>&1)
	awk -v u="${out% *}" -v s="${out#* }" 'BEGIN { printf "%.1f", (u + s) * 1000 }'
}
for ((i = 0; i < N; i++)); do
	t0=$(now); "$TSARUN" -q --json /dev/null -- true; t1=$(now)
	"$TSARUN" -q --no-sandbox --json /dev/null -- true; t2=$(now)
	wall_on+=("$((t1 - t0))")
	wall_off+=("$((t2 - t1))")
	cpu_on+=("$(cpu "$TSARUN" -q --json /dev/null -- true)")
	cpu_off+=("$(cpu "$TSARUN" -q --no-sandbox --json /dev/null -- true)")
done
won=$(printf '%s\n' "${wall_on[@]}" | median)
woff=$(printf '%s\n' "${wall_off[@]}" | median)
con=$(printf '%s\n' "${cpu_on[@]}" | median)
coff=$(printf '%s\n' "${cpu_off[@]}" | median)
echo "bench sandbox: 'tsarun -- true' wall $(awk -v a="$won" 'BEGIN{printf "%.1f", a/1e6}') ms confined vs $(awk -v a="$woff" 'BEGIN{printf "%.1f", a/1e6}') ms with --no-sandbox (ratio $(ratio "$won" "$woff")); CPU $con ms vs $coff ms (ratio $(ratio "$con" "$coff")); median of $N interleaved runs"
