#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The supervisor's seccomp sandbox: in force during the run (Seccomp: 2 in
# tsarun's /proc status, seen from the command itself), not on the command,
# and every option's path works under it: each scenario below must end as
# it would unconfined, with no sandbox message and a valid artifact.
# (tests/unit/test_sandbox.c checks that a forbidden call stops tsarun with
# 125 and names the call.) Add a scenario here for each new option.
. "$(dirname "$0")/../lib.sh"
need_bpf "sandbox tests"
cd "$T_TMP"
W=$T_TMP/w # writable by the users the command runs as
mkdir -m 1777 "$W"

# The command's parent is tsarun (the spawner clones it with CLONE_PARENT).
probe="grep -q '^Seccomp:[[:space:]]*2' /proc/\$PPID/status && touch $W/confined.\$\$"
confined() { ls "$W"/confined.* 2>/dev/null | wc -l; }

# scenario NAME EXPECTED_EXIT ARTIFACT TSARUN-ARGS...: run, then check it all.
scenario() {
	local name=$1 want=$2 art=$3 rc
	shift 3
	rm -f "$W"/confined.*
	"$TSARUN" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	equal "$name: exit $want" "$rc" "$want" || sed 's/^/#   stderr: /' "$T_TMP/err" | head -5
	if grep -q 'sandbox' "$T_TMP/err"; then
		not_ok "$name: no sandbox violation" "$(grep sandbox "$T_TMP/err")"
	else
		ok "$name: no sandbox violation"
	fi
	at_least "$name: the command saw tsarun confined" "$(confined)" 1
	equal "$name: the artifact says so" "$(jqv "$art" '.tool.sandbox | "\(.active) \(.reason)"')" "true null"
	validate "$art"
}

# Everything a run can be asked for at once: repeated runs, warmups, a user,
# descendants killed after a grace, a small ring buffer, every output.
scenario "every run option" 0 "$W/out/run.json" \
	--json run.json --out-dir "$W/out" --report "$W/report.txt" --sort cpu --top 3 \
	--color always -v -v --user nobody --descendants kill --kill-grace 100ms --ringbuf 64K \
	-r 3 --warmup 1 -- sh -c "$probe; '$WORKLOADS/threads' 200 8 100; sleep 5 & exit 0"
check "every run option: the report was written" grep -q TOTAL "$W/report.txt"
equal "every run option: 4 runs" "$(jqv "$W/out/run.json" '.runs | length')" 4
equal "every run option: the survivors were killed" "$(jqv "$W/out/run.json" '.runs[-1].descendants.killed')" 1

# Stacks: off-CPU and waker stacks, on-CPU samples, the symbolizer reading
# ELF files and /proc/PID/maps, folded files and SVG flame graphs.
scenario "--flame --waker --offcpu-min 0 --freq 499" 0 "$W/fl/fl.json" \
	-q --json fl.json --out-dir "$W/fl" --flame --waker --offcpu-min 0 --freq 499 -r 2 \
	--user nobody -- sh -c "$probe; '$WORKLOADS/mutex_wait' 50 20; '$WORKLOADS/burn' 30"
for f in fl.offcpu.folded fl.oncpu.folded fl.wall.folded; do
	check "--flame: $f written" test -s "$W/fl/$f"
done
check "--flame: an SVG written" sh -c "ls '$W/fl'/*.svg >/dev/null"
check "--flame: stacks are symbolized" grep -q 'spin_cpu_ms\|main' "$W/fl/fl.oncpu.folded"

# procfs sampling beside eBPF and alone (open, read, getdents64 and lseek on
# /proc at every --sample), with short threads and forks between samples,
# taskstats filling in the threads no sample saw, and survivors left running.
scenario "--backend ebpf,proc --sample 2ms" 0 "$T_TMP/pf1.json" \
	-q --json "$T_TMP/pf1.json" --backend ebpf,proc --sample 2ms --user nobody \
	-- sh -c "$probe; '$WORKLOADS/threads' 100 4 500; '$WORKLOADS/proctree' 6 2 20"
check "--backend ebpf,proc: procfs sampled under the filter" \
	jq -e '.runs[0].quality.procfs.scans > 10 and .runs[0].quality.cross_check.procfs_on_cpu_vs_ebpf.available' "$T_TMP/pf1.json"
scenario "--backend taskstats,proc, --descendants leave" 0 "$T_TMP/pf2.json" \
	-q --json "$T_TMP/pf2.json" -b taskstats,proc --descendants leave \
	-- sh -c "$probe; '$WORKLOADS/threads' 100 4 500; sleep 3.5 & exit 0"
check "--backend taskstats,proc: threads from samples and from exit records, a survivor" \
	jq -e '[.runs[0].threads[] | .accounting_source] | (index("procfs") != null and index("taskstats") != null)' "$T_TMP/pf2.json"
check "... the survivor is alive at the end" jq -e '[.runs[0].threads[] | select(.alive_at_end)] | length >= 1' "$T_TMP/pf2.json"

# Survivors left running: the task iterator reads them at the end.
scenario "--descendants leave" 0 "$T_TMP/leave.json" \
	-q --json "$T_TMP/leave.json" --descendants leave -- sh -c "$probe; sleep 3.$$ & exit 0"
equal "--descendants leave: the survivor is read" \
	"$(jqv "$T_TMP/leave.json" '[.runs[0].processes[] | select(.alive_at_end)] | length')" 1
pkill -f "^sleep 3.$$\$"

# Records lost to a full ring buffer.
scenario "--ringbuf 4K" 0 "$T_TMP/rb.json" \
	-q --ringbuf 4K --json "$T_TMP/rb.json" -- sh -c "$probe; '$WORKLOADS/threads' 1000 16 50"

# The gate against a stored baseline, with every output it has.
"$TSARUN" -q --no-sandbox -r 5 --json "$T_TMP/base.json" -- "$WORKLOADS/burn" 20
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$T_TMP/summary.md \
	scenario "the gate, every output" 0 "$T_TMP/gate.json" \
	--json "$T_TMP/gate.json" --baseline "$T_TMP/base.json" --fail-over cpu=400%,wall=400% \
	--metric cpu,wall -r 3 --max-runs 4 --inconclusive warn --junit "$T_TMP/j.xml" \
	--markdown "$T_TMP/m.md" -- sh -c "$probe; '$WORKLOADS/burn' 20"
check "the gate: JUnit written" grep -q '<testsuite' "$T_TMP/j.xml"
check "the gate: Markdown written" test -s "$T_TMP/m.md"
check "the gate: step summary appended" test -s "$T_TMP/summary.md"

# A baseline command run alongside, interleaved.
echo "$probe" >"$T_TMP/probe.sh"
scenario "--baseline-cmd" 0 "$T_TMP/paired.json" \
	-q --json "$T_TMP/paired.json" --baseline-cmd "sh $T_TMP/probe.sh" -r 2 --fail-over 900% \
	-- sh -c "$probe"

# --bash: the record socket, the fallback file, bash.folded.
cat >"$T_TMP/s.sh" <<EOF
f() { (true); bash -c 'true'; }
for i in 1 2 3; do f; done
sh -c "$probe"
EOF
scenario "--bash" 0 "$W/bash/a.json" --out-dir "$W/bash" --json a.json -q --user nobody \
	--bash "$T_TMP/s.sh"
check "--bash: bash.folded written" test -s "$W/bash/a.bash.folded"
scenario "--bash-no-follow --bash -c" 0 "$T_TMP/bc.json" -q --json "$T_TMP/bc.json" \
	--bash-no-follow --bash -c "f() { true; }; f; $probe"

# A command that fails, one that cannot be executed, one interrupted.
scenario "a failing command" 3 "$T_TMP/f.json" -q --json "$T_TMP/f.json" -- sh -c "$probe; exit 3"
"$TSARUN" -q --json "$T_TMP/n.json" -- "$T_TMP/no-such-command" 2>"$T_TMP/err"
equal "a missing command: 127 under the sandbox" "$?" 127
equal "a missing command: the artifact says the sandbox was on" \
	"$(jqv "$T_TMP/n.json" '.tool.sandbox.active')" true
rm -f "$W"/confined.*
"$TSARUN" -q --json "$T_TMP/i.json" -- sh -c "$probe; sleep 10" 2>"$T_TMP/err" &
pid=$!
for _ in $(seq 100); do [ "$(confined)" -gt 0 ] && break; sleep 0.05; done
equal "during the run: Seccomp 2 in tsarun's status" "$(awk '/^Seccomp:/ {print $2}' /proc/$pid/status)" 2
kill -TERM $pid
wait $pid
equal "interrupted under the sandbox: 143" "$?" 143
equal "interrupted under the sandbox: the artifact is written" "$(jqv "$T_TMP/i.json" '.runs[0].status')" interrupted

# The command itself is not confined.
equal "the command has no filter and no no_new_privs" \
	"$("$TSARUN" -q --json "$T_TMP/c.json" -- sh -c 'grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status | tr -s "\t" " " | tr "\n" " "')" \
	"NoNewPrivs: 0 Seccomp: 0 "

# --no-sandbox: unconfined, and the artifact says why.
rm -f "$W"/confined.*
"$TSARUN" -q --no-sandbox --json "$T_TMP/ns.json" -- sh -c "$probe"
equal "--no-sandbox: tsarun is not confined" "$(confined)" 0
equal "--no-sandbox: the artifact says why" "$(jqv "$T_TMP/ns.json" '.tool.sandbox.reason')" "disabled with --no-sandbox"
validate "$T_TMP/ns.json"

# compare and report read artifacts anyone may have written: confined too.
# (LeakSanitizer cannot stop the world under strace: no leak check there.)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
strace -f -qq -e trace=seccomp -o "$T_TMP/st" "$TSARUN" report "$T_TMP/ns.json" >"$T_TMP/out" 2>&1
equal "report: exit 0 under the filter" "$?" 0
check "report: puts the filter on before it reads" grep -q 'SECCOMP_SET_MODE_FILTER' "$T_TMP/st"
check "report: prints the table" grep -q TOTAL "$T_TMP/out"
strace -f -qq -e trace=seccomp -o "$T_TMP/st" "$TSARUN" compare "$T_TMP/base.json" "$T_TMP/base.json" \
	--fail-over 900% --junit "$T_TMP/cj.xml" >"$T_TMP/out" 2>&1
equal "compare: exit 0 under the filter" "$?" 0
check "compare: puts the filter on before it reads" grep -q 'SECCOMP_SET_MODE_FILTER' "$T_TMP/st"
check "compare: its JUnit report is written" grep -q '<testsuite' "$T_TMP/cj.xml"

# Monitor mode (-p): confined before its first sample; sampling, taskstats
# queries, the signalfd and the JSON Lines all under the filter.
"$WORKLOADS/spinner" 5 3 &
sp=$!
sleep 0.3
strace -f -qq -e trace=seccomp -o "$T_TMP/st" "$TSARUN" -p "$sp" --interval 200ms --count 2 \
	--output json --show-idle --comm 'sp*' --sort cpu >"$T_TMP/m.jsonl" 2>"$T_TMP/err"
equal "-p: exit 0 under the filter" "$?" 0
check "-p: puts the filter on" grep -q 'SECCOMP_SET_MODE_FILTER' "$T_TMP/st"
check "-p: no sandbox message" test ! -s "$T_TMP/err"
equal "-p: two lines, with taskstats delays" \
	"$(jq -r '[.threads[] | select(.delays != null)] | length > 0' "$T_TMP/m.jsonl" | tr '\n' ' ')" "true true "
kill "$sp" 2>/dev/null
wait "$sp" 2>/dev/null || true # killed: its 143 is not the suite's
