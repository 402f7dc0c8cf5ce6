# SPDX-License-Identifier: MIT
# Helpers for benchmarks: interleaved runs, medians, ratios. Benchmarks print
# "bench NAME: ..." lines; tests/bench/run collects them.
set -u
TSARUN=${TSARUN:-$PWD/build/tsarun}
WORKLOADS=${WORKLOADS:-$PWD/build/tests/workloads}
ROUNDS=${ROUNDS:-7}

median() { sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# ratio NEW BASE -> NEW/BASE with 3 decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

# verdict VALUE TARGET -> "meets target" / "MISSES target"
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "meets the target" : "MISSES the target" }'; }
