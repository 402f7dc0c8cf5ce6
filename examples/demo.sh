#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run tsarun on the bundled example benchmark (make demo).
set -euo pipefail
tsarun=${1:-build/tsarun}
out=$(dirname "$tsarun")
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: tsarun needs root for eBPF and taskstats; running with sudo" >&2
	exec sudo "$0" "$@"
fi
echo "demo: $tsarun --json $out/demo.json -- $out/examples/bench"
echo
"$tsarun" --json "$out/demo.json" -- "$out/examples/bench" "$out"
echo
echo "demo: the artifact is $out/demo.json; try: jq '.runs[0].threads[] | {comm, on_cpu_ns, runqueue_ns, sleeping_ns, uninterruptible_ns}' $out/demo.json"
