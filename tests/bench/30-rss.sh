#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The supervisor's memory with 10,000 threads tracked: tsarun records its own
# peak RSS in the artifact (tool.supervisor_max_rss_kb). Target: <= 32 MB.
. "$(dirname "$0")/lib.sh"
THREADS=${THREADS:-10000}
j=$(mktemp)
"$TSARUN" -q --json "$j" -- "$WORKLOADS/threads" "$THREADS" 16 20
kb=$(jq '.tool.supervisor_max_rss_kb' "$j")
seen=$(jq '.runs[0].threads | length' "$j")
lost=$(jq '.runs[0].quality.lost_events' "$j")
mb=$(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }')
echo "bench rss: supervisor peak RSS ${mb} MB with $seen threads tracked ($lost records lost; target <= 32 MB: $(verdict "$mb" 32))"
rm -f "$j"
