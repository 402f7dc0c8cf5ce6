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
equal "markdown: the tool, its version and the machine" "$(sed -n 3p again.md | sed 's/ on .*//')" "tsarun $(jq -r .tool.version run.json)"
"$TSARUN" --color never --sort cpu --top 3 --json one.json -- "$WORKLOADS/threads" 50 4 10 2>live.txt
"$TSARUN" report --color never --sort cpu --top 3 one.json >again.txt
check "report of one run, --sort cpu --top 3: the same table" cmp -s live.txt again.txt
# Markdown keeps --sort, and has no figure where nothing was counted.
"$TSARUN" report --format markdown --sort tid --top 3 one.json >md.txt
check "markdown --sort tid: the heading says so" grep -q '^#### Threads of the last run, by tid (3 of ' md.txt
equal "markdown --sort tid: ... and the rows come in that order" \
	"$(awk -F'|' '/^\| [0-9]+ \| [0-9]+ \|/ { printf "%d ", $3 }' md.txt)" \
	"$(jq -r '[.runs[-1].threads[].tid] | sort | .[:3] | map(tostring + " ") | join("")' one.json)"
"$TSARUN" -q -b proc --json pm.json -- "$WORKLOADS/spin_sleep" 30 10
"$TSARUN" report --format markdown pm.json >md.txt
equal "markdown of a procfs run: switches not counted show '-', not 0/0" \
	"$(awk -F'|' '/^\| [0-9]+ \| [0-9]+ \|/ { gsub(/ /, "", $11); print $11 }' md.txt | sort -u)" "-"

# On a terminal, an empty NO_COLOR is unset (no-color.org), as for a run.
esc() { script -qc "$1" /dev/null | grep -c $'\033\['; }
at_least "report on a terminal, NO_COLOR empty: coloured (lines)" "$(esc "NO_COLOR= '$TSARUN' report one.json")" 1
equal "report on a terminal, NO_COLOR=1: no colour" "$(esc "NO_COLOR=1 '$TSARUN' report one.json")" 0

# A --bash run: the report names the script, as the run did (not bash).
printf 'sleep 0.01\n' >s.sh
"$TSARUN" --color never --json bash.json --bash ./s.sh 2>live.txt
"$TSARUN" report --color never bash.json >again.txt
equal "report of a --bash run: its first line is the run's" "$(head -1 again.txt)" "$(head -1 live.txt)"

# With procfs sampled (alone, or beside eBPF as a cross-check), its line too.
for b in proc ebpf,proc; do
	# A new file: a run that replaces one says where the old one went, which is no part of it.
	rm -f pf.json
	"$TSARUN" --color never -b "$b" --json pf.json -- "$WORKLOADS/spin_sleep" 60 20 2>live.txt
	"$TSARUN" report --color never pf.json >again.txt
	check "report, --backend $b: the procfs line too, line for line" \
		sh -c "grep -q '^  procfs: ' live.txt && cmp -s live.txt again.txt"
done

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
"$TSARUN" report --format chrome run.json 2>err.txt
equal "report --format chrome: 125" "$?" 125
check "... and says what is accepted" grep -q "is not table, markdown, folded, svg, trace, html, csv, runs-csv or hyperfine" err.txt
"$TSARUN" report 2>err.txt
equal "report without a file: 125" "$?" 125

# Exports for other tools: the threads and the runs as CSV, the runs as hyperfine writes them,
# written by the run itself and by report from its artifact, byte for byte the same.
"$TSARUN" -q -r 3 --warmup 1 --json hf.json --export-csv run-threads.csv \
	--export-runs-csv run-runs.csv --export-hyperfine run-hf.json -- "$WORKLOADS/threads" 30 3 10
equal "--export-csv, --export-runs-csv, --export-hyperfine: exit 0" "$?" 0
"$TSARUN" report --format csv hf.json >threads.csv
equal "report --format csv: exit 0" "$?" 0
equal "csv: a row per thread, their lifetimes the artifact's" \
	"$(python3 -c "import csv, sys; r = list(csv.DictReader(open('threads.csv'))); print(len(r), sum(int(x['lifetime_ns']) for x in r))")" \
	"$(jq -r '.runs[-1] | "\(.threads | length) \([.threads[].lifetime_ns] | add)"' hf.json)"
"$TSARUN" report --format runs-csv hf.json >runs.csv
equal "runs-csv: every run, the warmup marked, walls the artifact's" \
	"$(python3 -c "import csv; r = list(csv.DictReader(open('runs.csv'))); print(len(r), [x['warmup'] for x in r].count('true'), sum(int(x['wall_ns']) for x in r))")" \
	"$(jq -r '"\(.runs | length) \([.runs[] | select(.warmup)] | length) \([.runs[].wall_ns] | add)"' hf.json)"
"$TSARUN" report --format hyperfine hf.json >ours.json
equal "hyperfine: the measured runs' times, in seconds" \
	"$(jq -c '.results[0].times | map(. * 1e9 | round)' ours.json)" \
	"$(jq -c '[.runs[] | select(.warmup | not) | .wall_ns]' hf.json)"
if command -v hyperfine >/dev/null; then
	hyperfine -N --runs 2 --export-json theirs.json "$WORKLOADS/threads 1 1 1" >/dev/null 2>&1
	equal "hyperfine: the keys and types of hyperfine's own export" \
		"$(jq -c '.results[0] | to_entries | map([.key, (.value | type)])' ours.json)" \
		"$(jq -c '.results[0] | to_entries | map([.key, (.value | type)])' theirs.json)"
else
	skip "hyperfine: the keys of hyperfine's own export" "hyperfine is not installed"
fi
check "--export-csv: the run's threads as report --format csv gives them" cmp run-threads.csv threads.csv
check "--export-runs-csv: the runs as report --format runs-csv gives them" cmp run-runs.csv runs.csv
check "--export-hyperfine: as report --format hyperfine gives it" cmp run-hf.json ours.json
"$TSARUN" -q --json same.json --export-csv same.json -- true 2>err.txt
equal "--export-csv onto the artifact's own path: refused (125)" "$?" 125
check "... saying which two" grep -q "the artifact and --export-csv would both be written to 'same.json'" err.txt
"$TSARUN" -p 1 --count 1 --export-runs-csv x.csv 2>err.txt
equal "--export-runs-csv in monitor mode: refused (125)" "$?" 125
