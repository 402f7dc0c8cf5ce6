#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sample artifacts committed in examples/samples/ (made by real runs,
# `make samples`) cannot go stale silently: each validates against the
# schema, `tsarun report` reads each back, and the tables committed beside
# them are what tsarun prints from them today. When the artifact or the
# table changes, regenerate them: make samples.
. "$(dirname "$0")/../lib.sh"
S=$REPO/examples/samples
cd "$T_TMP"
unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY
stale="stale: regenerate with 'make samples' and commit examples/samples/"
jcheck() { check "$1" sh -c "jq -e '$2' '$3' >/dev/null"; }

for f in run stacks base bash gate; do
	check "examples/samples/$f.json is there" test -s "$S/$f.json"
	validate "$S/$f.json"
	# From the directory, as the table's "artifact:" line names it.
	(cd "$S" && "$TSARUN" report --color never "$f.json") >"$f.txt" 2>"$f.err"
	equal "tsarun report $f.json: exit 0" "$?" 0
	"$TSARUN" report --format markdown "$S/$f.json" >"$f.md" 2>>"$f.err"
	equal "tsarun report --format markdown $f.json: exit 0" "$?" 0
	check "... with the tool and the machine" grep -q "^tsarun $(jq -r .tool.version "$S/$f.json") on " "$f.md"
done
for f in run stacks gate; do
	check "$f.txt is what tsarun report prints from $f.json" cmp -s "$S/$f.txt" "$f.txt" ||
		echo "#   $stale"
done
# The same table in a terminal of 80 columns (README.md shows it).
if command -v script >/dev/null; then
	(cd "$S" && script -qec "stty cols 80 rows 40; '$TSARUN' report --color never run.json" \
		/dev/null </dev/null | tr -d '\r') >run-80.txt
	check "run-80.txt is what tsarun report prints from run.json at 80 columns" \
		cmp -s "$S/run-80.txt" run-80.txt || echo "#   $stale"
else
	skip "run-80.txt against tsarun report at 80 columns" "script(1) is not installed"
fi
# tsarun report prints a --bash run's table, and says where the profile is
# (the artifact's "bash" key, bash.folded) instead of printing it.
sed '/^bash profile (/,$d' "$S/bash.txt" >bash-table.txt
sed '/the bash profile is in the artifact/,$d' bash.txt >bash-report.txt
check "bash.txt's table is what tsarun report prints from bash.json" \
	cmp -s bash-table.txt bash-report.txt || echo "#   $stale"
check "... and its profile is there too" grep -q '^bash profile (tsarun-trap builtin): [0-9]* commands$' "$S/bash.txt"

if command -v xmllint >/dev/null; then
	check "gate-junit.xml is valid against doc/junit.xsd" \
		xmllint --noout --schema "$REPO/doc/junit.xsd" "$S/gate-junit.xml"
	check "the unit tests' golden JUnit too" \
		xmllint --noout --schema "$REPO/doc/junit.xsd" "$REPO/tests/golden/gate-junit.xml"
else
	skip "gate-junit.xml against doc/junit.xsd" "xmllint (libxml2-utils) is not installed"
fi

# What each sample is said to show (README.md, regenerate.sh).
equal "run.json: one run of ./bench" "$(jq -r '[(.runs | length), .command.argv[0]] | join(" ")' "$S/run.json")" "1 ./bench"
jcheck "run.json: its four workers" '[.runs[0].threads[].comm | select(startswith("worker-"))] | length == 4' "$S/run.json"
equal "bash.json: examples/deploy.sh, profiled by the builtin" \
	"$(jq -r '[.command.mode, .bash.recorder] | join(" ")' "$S/bash.json")" "bash builtin"
for k in function subshell command_substitution trap; do
	jcheck "bash.json: a $k node" "[.bash.commands[] | select(.kind == \"$k\")] | length > 0" "$S/bash.json"
done
jcheck "bash.json: the background job and the pipeline" \
	'([.bash.commands[] | select(.text == "compress_pages")] | length == 1) and
		([.bash.commands[] | select(.pipeline_part)] | length >= 2)' "$S/bash.json"
jcheck "bash.json: the loop, collapsed: one node, 400 runs" \
	'[.bash.commands[] | select(.text | test("^printf .<p>"))] | .[0].count == 400' "$S/bash.json"
jcheck "stacks.json: a --stacks run of ./bench, its workers' sleeps on stacks" \
	'.command.argv[0] == "./bench" and ([.runs[0].stacks.offcpu_stacks[]?] | length > 0)' "$S/stacks.json"
check "stacks.txt: the top blocking stacks" grep -q '^  top blocking stacks (of ' "$S/stacks.txt"
check "bash.bash.folded: folded stacks of the bash run" grep -q '^bash;' "$S/bash.bash.folded"
jcheck "gate.json: the gate against base.json, 5 runs a side" \
	'.comparison.baseline.path == "base.json" and (.comparison.metrics[0].new_values | length) == 5' "$S/gate.json"
check "gate.md: the step summary's table" grep -q '^### tsarun regression gate: ' "$S/gate.md"
check "gate-junit.xml: one test case per gated metric" grep -q '<testcase classname="tsarun.gate" name="cpu" time="[0-9]*\.[0-9]\{6\}">' "$S/gate-junit.xml"
