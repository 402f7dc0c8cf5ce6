#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A failing gate says where the change came from: on workloads whose change
# is known, the comparison's explanation (comparison.explanation) names the
# part that changed, with its share of the measured change, and blames
# nothing when nothing changed.
#   - one of four "worker" threads burns 25% more CPU in hot_function():
#     cpu fails; the top part is that thread (worker#2, by creation order
#     among its same-name siblings), on-CPU, at hot_function's stack;
#   - the main thread's mutex wait grows by 40 ms: wall fails, cpu does
#     not; the top part is the main thread asleep at the futex stack;
#   - a CPU hog pinned to the workload's CPU: wall's change is charged to
#     runqueue time, not to on-CPU time;
#   - a bash script's sleep on line 3 grows from 50 to 80 ms: that line;
#   - identical workloads, 20 comparisons: no part blamed in any.
. "$(dirname "$0")/../lib.sh"
need_bpf "explained regressions"
cd "$T_TMP"
unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY
jcheck() { check "$1" sh -c "jq -e '$2' '$3' >/dev/null"; }
# The explanation of metric M in FILE: jx FILE M FILTER
jx() { jq -r --arg m "$2" ".comparison.explanation.metrics[] | select(.name == \$m) | $3" "$1"; }
show() { jq -c --arg m "$2" '.comparison.explanation.metrics[] | select(.name == $m) | .levels[] | select(.available) | .parts[:3][] | {thread, process, state, stack: (.stack // "" | .[-80:]), command, change_ns, share, blamed}' "$1" | sed 's/^/#   /'; }

# --- 1. one worker of four does 25% more CPU in one function: 80 ms -> +20 ms,
# sampled at 4999 Hz: some 100 samples of the change in each run.
W=$WORKLOADS/workers
"$TSARUN" -q -r 10 --flame --freq 4999 --json base.json -- "$W" 4 80 2 0
"$TSARUN" -r 10 --flame --freq 4999 --fail-over 3% --baseline base.json --json new.json \
	-- "$W" 4 80 2 25 2>new.err
equal "workers: +25% in one thread's function fails the cpu gate (exit 3)" "$?" 3
validate new.json
show new.json cpu
equal "... the top thread part is that thread, matched by creation order" \
	"$(jx new.json cpu '.levels.thread.parts[0] | "\(.thread) \(.state) \(.blamed)"')" \
	"workers:worker#2 on_cpu true"
share=$(jx new.json cpu '.levels.thread.parts[0].share')
at_least "... holding at least 80% of the measured change" "$share" 0.8
within "... its change is the 20 ms added" "$(jx new.json cpu '.levels.thread.parts[0].change_ns / 1e6')" 20 15
equal "... the only thread blamed" "$(jx new.json cpu '.levels.thread.blamed')" 1
check "... the top stack part is that thread's, on-CPU, in hot_function" \
	sh -c "[ \"\$(jq -r '.comparison.explanation.metrics[] | select(.name == \"cpu\") | .levels.stack.parts[0] | select(.thread == \"workers:worker#2\" and .state == \"on_cpu\" and .blamed) | .stack | test(\"hot_function\")' new.json)\" = true ]"
# The function's stacks: every stack through it (its samples, interrupts in it included).
hot=$(jx new.json cpu '[.levels.stack.parts[] | select(.thread == "workers:worker#2" and (.stack | test(";hot_function(;|$)")))] | map(.share) | add')
at_least "... hot_function's stacks hold at least 80% of the measured change" "$hot" 0.8
echo "# workers: cpu $(jx new.json cpu '.change_ns / 1e6') ms; worker#2 on-CPU share $share, hot_function's stacks $hot (known: +20 ms, all of it there)"
check "the terminal report says where it moved after the verdict" \
	sh -c "sed -n '/gate FAILED/,\$p' new.err | grep -q 'where it moved: cpu' && sed -n '/where it moved: cpu/,\$p' new.err | grep -q 'thread worker#2 in workers, on-CPU at .*hot_function'"
"$TSARUN" --no-table -r 10 --fail-over 3% --baseline base.json --json new2.json \
	-- "$W" 4 80 2 25 2>short.err
check "--no-table: the gate's line, then where it moved, on one line" \
	grep -q '^tsarun: Where it moved (cpu +.* per run): +.*thread worker#2 in workers, on-CPU' short.err
# The same offline, with every report.
GITHUB_ACTIONS=true "$TSARUN" compare --fail-over 3% --junit j.xml --markdown m.md \
	base.json new.json >cmp.out 2>cmp.err
equal "tsarun compare: exit 3" "$?" 3
check "... its report says where it moved" grep -q 'where it moved: cpu' cmp.out
check "... the ::error annotation names the top parts" \
	grep -q '^::error title=tsarun gate%3A cpu regression::.*Where it moved (cpu +.*thread worker#2 in workers, on-CPU' cmp.err
check "... the JUnit failure message too" \
	grep -q '<failure type="regression" message="[^"]*Where it moved (cpu +[^"]*thread worker#2 in workers, on-CPU' j.xml
check "... the Markdown has a where-it-moved table" \
	sh -c "grep -q '^#### Where it moved: cpu' m.md && grep -q '^| +.* | thread worker\\\\#2 in workers, on-CPU at' m.md"
xmllint --noout j.xml 2>/dev/null && ok "... the JUnit is well-formed XML" || not_ok "... the JUnit is well-formed XML" "$(xmllint --noout j.xml 2>&1 | head -3)"
# Differential flame graphs: beside the artifact when --flame ran with a baseline, and by compare.
check "--flame with a baseline writes the differential flame graphs beside the artifact" \
	test -s new.oncpu.diff.svg -a -s new.wall.diff.folded -a -s new.offcpu.diff.folded
"$TSARUN" compare -q --fail-over 3% --flame-diff fd base.json new.json
hotline=$(grep ';hot_function;' fd/oncpu.diff.folded | awk '{b += $(NF-1); n += $NF} END {print b, n}')
echo "# hot_function in oncpu.diff.folded: baseline, new ns per run: $hotline"
equal "compare --flame-diff: hot_function is absent from the baseline's stacks" "${hotline%% *}" 0
within "... and holds the 20 ms added in the new ones" "$(echo "$hotline" | awk '{print $2 / 1e6}')" 20 20
if command -v chromium >/dev/null && /usr/bin/python3 -c 'import websocket' 2>/dev/null; then
	timeout 180 /usr/bin/python3 "$REPO/tests/html/check-diff-svg" fd/oncpu.diff.svg hot_function >svg.out 2>&1
	while IFS= read -r l; do
		case "$l" in
		"ok "*) ok "diff SVG in Chromium: ${l#ok }" ;;
		"not ok "*) not_ok "diff SVG in Chromium: ${l#not ok }" ;;
		esac
	done <svg.out
	grep -q '^ok .*marked grown' svg.out || not_ok "diff SVG in Chromium: ran" "$(tail -5 svg.out)"
	# The same graphs on compare's HTML page, with the rest of its checks.
	"$TSARUN" compare -q --fail-over 3% --html cmp.html base.json new.json
	mkdir -p "$REPO/${OUTPUT:-build}/html"
	timeout 300 /usr/bin/python3 "$REPO/tests/html/check-page" cmp.html new.json --base base.json \
		--grown hot_function --shots "$REPO/${OUTPUT:-build}/html/explain-compare" >page.out 2>&1
	while IFS= read -r l; do
		case "$l" in
		"ok "*) ok "compare --html in Chromium: ${l#ok }" ;;
		"not ok "*) not_ok "compare --html in Chromium: ${l#not ok }" ;;
		esac
	done <page.out
	grep -q '^ok diff flame graphs: hot_function marked grown' page.out ||
		not_ok "compare --html in Chromium: the diff flame graphs checked" "$(tail -5 page.out)"
else
	skip "diff SVG in Chromium" "chromium or python3-websocket is not installed"
fi
"$TSARUN" report --format markdown new.json >rep.md 2>&1
check "tsarun report --format markdown reads the explanation back" \
	grep -q '^#### Where it moved: cpu' rep.md

# --- 2. the main thread's mutex wait grows by 40 ms (100 -> 140 ms), the
# old and the new interleaved (--baseline-cmd): on a loaded machine a stored
# baseline's wall time is taken under another load.
L=$WORKLOADS/lock_wait
"$TSARUN" -q -r 10 --stacks --metric wall,cpu --baseline-cmd "$L 100 30 20" --json lnew.json \
	-- "$L" 140 30 20 2>lnew.err
rc=$?
show lnew.json wall
outcome=$(jqv lnew.json '.comparison.metrics[] | select(.name == "wall") | .outcome')
if [ "$outcome" = warning ] && [ "$(jqv lnew.json '.comparison.noise_sentinel.fired')" = true ]; then
	# The gate's own rule on a busy machine: a wall failure is a warning. The parts still say why.
	skip "lock_wait: +40 ms of mutex wait fails wall" "the noise sentinel fired: the new runs waited longer for a CPU"
else
	equal "lock_wait: +40 ms of mutex wait fails wall (exit 3)" "$rc/$outcome" 3/fail ||
		jq -r '.comparison.metrics[] | "#   \(.name): \(.verdict) \(.ratio) [\(.ci_low), \(.ci_high)] \(.note // "")"' lnew.json
fi
check "... cpu does not fail" sh -c "[ \"\$(jq -r '.comparison.metrics[] | select(.name == \"cpu\") | .outcome' lnew.json)\" != fail ]"
equal "... wall follows the main thread" "$(jx lnew.json wall '.root_thread')" "lock_wait:lock_wait"
equal "... the top thread part is its sleep" \
	"$(jx lnew.json wall '.levels.thread.parts[0] | "\(.thread) \(.state) \(.blamed)"')" \
	"lock_wait:lock_wait sleeping true"
top=$(jx lnew.json wall '.levels.stack.parts[0] | select(.blamed and .state == "sleeping") | .stack')
check "... the top stack part is the futex wait in main_waits_on_mutex" \
	sh -c "echo '$top' | grep -q 'main_waits_on_mutex.*futex'"
lshare=$(jx lnew.json wall '.levels.stack.parts[0].share')
at_least "... holding most of the measured change" "$lshare" 0.5
within "... its change is the 40 ms added" "$(jx lnew.json wall '.levels.stack.parts[0].change_ns / 1e6')" 40 20
echo "# lock_wait: futex stack share $lshare of wall $(jx lnew.json wall '.change_ns / 1e6') ms (known: +40 ms)"

# --- 3. a CPU hog pinned beside the workload: waiting for a CPU, not more work.
"$TSARUN" -q -r 10 --json pbase.json -- taskset -c 0 "$WORKLOADS/burn" 100
taskset -c 0 "$WORKLOADS/burn" 60000 &
hog=$!
"$TSARUN" -q -r 10 --metric wall --fail-over 10% --baseline pbase.json --json pnew.json \
	-- taskset -c 0 "$WORKLOADS/burn" 100 2>/dev/null
kill "$hog" 2>/dev/null
wait "$hog" 2>/dev/null
show pnew.json wall
equal "pinned hog: wall's top part is the runqueue of the main thread" \
	"$(jx pnew.json wall '.levels.thread.parts[0] | "\(.state) \(.blamed)"')" "runqueue true"
rq=$(jx pnew.json wall '[.levels.thread.parts[] | select(.state == "runqueue")][0].share')
at_least "... holding most of the measured change" "$rq" 0.5
# A hog sharing the CPU also costs the burn a little more CPU time (caches and
# switches: 1-5%, measured by rusage as well): when that is beyond noise it is
# rightly blamed, but it never carries the change.
oncpu=$(jx pnew.json wall '[.levels.thread.parts[] | select(.state == "on_cpu" and .blamed) | .share] | add // 0')
at_most "... on-CPU time carries at most 5% of the change" "$oncpu" 0.05
echo "# pinned hog: runqueue share $rq of wall $(jx pnew.json wall '.change_ns / 1e6') ms"

# --- 4. bash: line 3 sleeps 50 ms, then 80 ms.
S=$REPO/tests/bash/explain-nap.sh
NAP=0.05 "$TSARUN" -q -r 10 --json bbase.json --bash "$S"
NAP=0.08 "$TSARUN" -q -r 10 --metric wall --baseline bbase.json --json bnew.json --bash "$S" 2>/dev/null
show bnew.json wall
equal "bash: the top part is line 3" \
	"$(jx bnew.json wall '.levels.bash.parts[0] | "\(.command | split(";") | last) \(.blamed)"')" \
	'3: sleep "${NAP:-0.05}" true'
# Its share is of wall's whole change, which a stored baseline taken under
# another load moves by more than the 30 ms (-91 ms once here): reported, not checked.
bshare=$(jx bnew.json wall '.levels.bash.parts[0].share')
within "... its change is the 30 ms added" "$(jx bnew.json wall '.levels.bash.parts[0].change_ns / 1e6')" 30 20
equal "... the only command blamed" "$(jx bnew.json wall '.levels.bash.blamed')" 1
echo "# bash: line 3 share $bshare of wall $(jx bnew.json wall '.change_ns / 1e6') ms (known: +30 ms)"

# --- 5. no change: 20 comparisons, interleaved with the same command.
# A part is blamed only when its interval lies wholly beyond the floor (a
# tenth of the threshold's worth) and its rank-sum test rejects "no change"
# at 1% corrected for its level's parts: an unchanged command's part must
# first move by the floor, then be told from noise. None may be blamed in
# any of the 20. The parts whose interval excludes zero (those that blame
# beyond zero, the rule before, could have taken with their rank-sum test)
# are counted and shown.
blamed=0 compared=0 tested=0 beyond0=0
for i in $(seq 1 20); do
	"$TSARUN" -q -r 10 --stacks --baseline-cmd "$W 4 20 2 0" --json same.json -- "$W" 4 20 2 0 2>/dev/null
	read -r n t z <<<"$(jq -r '[.comparison.explanation.metrics[] | select(.available) | .levels[] | select(.available)] |
		"\(map(.blamed) | add) \(map(.tested) | add) \([.[].parts[] | select(.ci_low_ns != null and (.ci_low_ns > 0 or .ci_high_ns < 0))] | length)"' same.json)"
	numbers "$n" "$t" "$z" || continue
	compared=$((compared + 1)) blamed=$((blamed + n)) tested=$((tested + t)) beyond0=$((beyond0 + z))
	if [ "$n" != 0 ] || [ "$z" != 0 ]; then
		echo "# comparison $i: $n blamed, $z with an interval beyond zero"
		show same.json wall
		show same.json cpu
	fi
done
echo "# no change: $compared comparisons explained, $tested parts tested, $beyond0 with an interval beyond zero, $blamed blamed"
equal "no change: 20 comparisons explained" "$compared" 20
equal "... no part blamed in any of them ($tested tested)" "$blamed" 0
