#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CI recipes in examples/ work as written: the `make check` wrapper
# (examples/tsarun-gate.mk) and the GitHub Actions workflow's gate steps
# (examples/github-actions-perf.yml), run here with the variables the runner
# sets.
. "$(dirname "$0")/../lib.sh"
need_bpf "gate examples"
cd "$T_TMP"
BURN=$WORKLOADS/burn
unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY

# --- the make check wrapper.
cp "$REPO/examples/tsarun-gate.mk" .
cat >Makefile <<'EOF'
include tsarun-gate.mk
check: perf-check
EOF
mk() { make --no-print-directory TSARUN="$TSARUN" PERF_RUNS=5 "$@"; }
# 100 ms: long enough that the start-up's changes with the machine's load
# (below) move the ratio by a few tenths of a percent, not a few percent.
mk perf-baseline PERF_BENCH="$BURN 100" >make.out 2>&1
equal "make perf-baseline: exit 0" "$?" 0
validate perf/baseline.json
mk check PERF_BENCH="$BURN 100" >make.out 2>&1
equal "make check, no change: exit 0" "$?" 0
check "make check: the gate says it passed" grep -q 'tsarun: gate passed' make.out
check "make check: perf/perf.md has the table" grep -q '^| cpu | ' perf/perf.md
check "make check: perf/junit.xml has the test case" grep -q '<testcase classname="tsarun.gate" name="cpu" time="' perf/junit.xml
# 25% slower in all: every run also carries the command's start-up CPU
# (exec, the dynamic loader, tsarun's set-up; 0.7-1.1 ms on some machines,
# 3.4-7 ms on a PVM guest), so the slower bench burns a quarter of it more.
"$TSARUN" -q -r 5 --json zero.json -- "$BURN" 0
mk check PERF_BENCH="$BURN $(jqv zero.json '.summary.cpu.median / 1e6 * 0.25 + 125')" >make.out 2>&1
equal "make check, 25% slower: make fails" "$?" 2
check "make check, 25% slower: make says Error 3" grep -q 'Error 3' make.out
check "make check, 25% slower: the gate says why" grep -q 'tsarun: gate FAILED: regression: cpu +2' make.out ||
	grep 'tsarun: gate' make.out | sed 's/^/#   /'
mk check PERF_BENCH="$BURN 20" PERF_BASELINE_CMD="$BURN 20" >make.out 2>&1
equal "make check in paired mode (PERF_BASELINE_CMD): exit 0" "$?" 0
equal "make check in paired mode: the artifact says paired" "$(jqv perf/latest.json '.comparison.statistic.paired')" true
rm perf/baseline.json
mk check PERF_BENCH="$BURN 20" >make.out 2>&1
equal "make check without a baseline: make fails" "$?" 2
check "make check without a baseline: tsarun says so (Error 125)" \
	sh -c "grep -q \"cannot read baseline 'perf/baseline.json'\" make.out && grep -q 'Error 125' make.out"

# --- the GitHub Actions workflow: valid YAML, both set-ups, and its gate steps run.
WF=$REPO/examples/github-actions-perf.yml
check "workflow: valid YAML with the paired and stored jobs" python3 -c "
import sys, yaml
wf = yaml.safe_load(open('$WF'))
sys.exit(not ({'paired', 'stored'} <= set(wf['jobs'])))"
# Each step's script, as the runner would run it (bash -e).
step() {
	python3 -c "
import sys, yaml
wf = yaml.safe_load(open('$WF'))
for s in wf['jobs'][sys.argv[1]]['steps']:
    if s.get('name') == sys.argv[2]:
        print(s['run'])
" "$1" "$2"
}
# The runner's sudo is passwordless; here tsarun already runs as root, so a
# stand-in that honours --preserve-env (and nothing else) runs the rest.
mkdir -p bin
cat >bin/sudo <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in --preserve-env=*|-E) shift ;; *) break ;; esac; done
exec "$@"
EOF
chmod +x bin/sudo
ln -sf "$TSARUN" bin/tsarun
mkdir -p rt/base ws
cp "$BURN" rt/base/bench
cp "$BURN" ws/bench
run_step() {
	local job=$1 name=$2
	shift 2
	(cd ws && env PATH="$T_TMP/bin:$PATH" RUNNER_TEMP="$T_TMP/rt" BENCH=./bench GITHUB_ACTIONS=true \
		GITHUB_STEP_SUMMARY="$T_TMP/summary.md" "$@" bash -e -c "$(step "$job" "$name")")
}
# burn reads its CPU time from argv[1]; the steps run ./bench without one: 50 ms.
: >summary.md
run_step paired "Gate (base and head interleaved)" 2>step.err
equal "workflow, paired step, no change: exit 0" "$?" 0
check "workflow, paired step: the job summary has the table" grep -q '^| cpu | .* pass |$' summary.md
# 10 pairs, more when a verdict was inconclusive (wall, on a loaded machine).
check "workflow, paired step: base and head ran in pairs, at least 10" \
	sh -c "jq -e '.comparison.statistic.paired and ([.comparison.baseline.runs[] | select(.warmup | not)] | length) as \$b | ([.runs[] | select(.warmup | not)] | length) as \$n | \$b == \$n and \$n >= 10' ws/perf.json >/dev/null"
check "workflow, paired step: JUnit written" test -s ws/perf-junit.xml
: >summary.md
run_step stored "Record the baseline (main)"
equal "workflow, stored set-up: the baseline is recorded" "$?,$(jqv ws/perf-baseline.json '.summary.cpu.n')" 0,10
run_step stored "Gate against the stored baseline" 2>step.err
equal "workflow, stored set-up, no change: exit 0" "$?" 0
check "workflow, stored set-up: the job summary says passed" grep -q '^### tsarun regression gate: .* passed$' summary.md
# A slower head: a wrapper passes a larger burn to ./bench, 25% slower in
# all. The wrapper's shell adds its own start-up to burn's; both are
# measured (the wrapper with burn 0), and the burn makes up the rest.
printf '#!/bin/sh\nexec %s 0\n' "$BURN" >wrap0
chmod +x wrap0
"$TSARUN" -q -r 5 --json wrap0.json -- ./wrap0
printf '#!/bin/sh\nexec %s %s\n' "$BURN" "$(jq -n --argjson b "$(jqv zero.json .summary.cpu.median)" \
	--argjson w "$(jqv wrap0.json .summary.cpu.median)" '(1.25 * (50e6 + $b) - $w) / 1e6')" >ws/bench
chmod +x ws/bench
: >summary.md
run_step stored "Gate against the stored baseline" 2>step.err
equal "workflow, stored set-up, 25% slower: exit 3" "$?" 3 || {
	jq -c '.comparison | [.verdict, .outcome, .runs_added, .notes, (.metrics[] | select(.name == "cpu") | del(.base_values, .new_values))]' ws/perf.json
	grep -v '^::' step.err | tail -15
} 2>&1 | sed 's/^/#   /'
# The figure itself moves with the start-up's drift between the stored
# baseline and now on a 50 ms bench (3.4-7 ms of start-up on a PVM guest):
# 40-gate checks the measured ratio on workloads long enough for that.
check "workflow: the annotation says so" grep -q '^::error title=tsarun gate%3A cpu regression::cpu +[0-9]' step.err ||
	grep '^::error' step.err | sed 's/^/#   /'
check "workflow: the job summary says so" grep -q '^### tsarun regression gate: .* failed$' summary.md
