#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tsarun report RUN.json: a stored artifact's report, again. The table is
# the one the run printed, line for line; Markdown holds the same facts.
. "$(dirname "$0")/../lib.sh"
need_bpf "report"
cd "$T_TMP"
unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY

# A tree of processes and threads, several runs, a gate: every part of the report.
"$TSARUN" -q -r 5 --json base.json -- "$WORKLOADS/proctree" 6 3 5
"$TSARUN" --color never --top 8 -r 5 --baseline base.json --json run.json -- "$WORKLOADS/proctree" 6 3 5 2>live.txt
"$TSARUN" report --color never --top 8 run.json >again.txt
equal "report: exit 0" "$?" 0
check "report: the table is the one the run printed, line for line" cmp -s live.txt again.txt
check "report: with the thread rows" grep -q '^  TOTAL' again.txt
check "report: with the summary of the runs" grep -q '[0-9] measured runs' again.txt
check "report: with the gate" grep -q '^regression gate: ' again.txt
"$TSARUN" report --format markdown run.json >again.md
equal "report --format markdown: exit 0" "$?" 0
check "markdown: the summary table" grep -q '^| cpu | ' again.md
check "markdown: the thread table" grep -q '^| PID | TID | COMM |' again.md
check "markdown: the gate" grep -q '^### tsarun regression gate: ' again.md
"$TSARUN" --color never --sort cpu --top 3 --json one.json -- "$WORKLOADS/threads" 50 4 10 2>live.txt
"$TSARUN" report --color never --sort cpu --top 3 one.json >again.txt
check "report of one run, --sort cpu --top 3: the same table" cmp -s live.txt again.txt
# The tree's CPU against rusage (60 ms of it: compared) says which way it
# differs: both ways come back, as the run printed them and as stored.
"$TSARUN" --color never --json spin.json -- "$WORKLOADS/spin_sleep" 60 10 2>live.txt
"$TSARUN" report --color never spin.json >again.txt
check "report: the quality line's comparison with rusage, line for line" \
	sh -c "grep -q 'vs rusage: ' live.txt && cmp -s live.txt again.txt"
jq '.runs[0].quality.cross_check.tree_cpu_vs_rusage |= (.unseen_fraction = 0.05 | .excess_ns = 56800000)' spin.json >unseen.json
check "report: the quality line's unseen share and thread-exit excess, as stored" \
	grep -q 'vs rusage: 5.000% unseen, +56.8 ms of thread exits it lacks' <<<"$("$TSARUN" report --color never unseen.json)"

"$TSARUN" report nope.json 2>err.txt
equal "report of a missing file: 125" "$?" 125
check "... named" grep -q "cannot read artifact 'nope.json'" err.txt
"$TSARUN" report --format svg run.json 2>err.txt
equal "report --format svg: 125" "$?" 125
check "... and says what is accepted" grep -q "is not table or markdown" err.txt
"$TSARUN" report 2>err.txt
equal "report without a file: 125" "$?" 125
