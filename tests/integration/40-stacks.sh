#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Off-CPU stacks, on-CPU samples, symbols and flame graphs on workloads whose
# blocking points are known: a mutex waiter, a nanosleep, a vfork parent.
. "$(dirname "$0")/../lib.sh"
need_bpf "stack tests"
cd "$T_TMP"
J=$T_TMP/s.json

# top COMM FIELD: the FIELD frames (user or kernel) of the thread's largest off-CPU stack, one line.
top() { jq -r --arg c "$1" "[.runs[0].stacks.offcpu_stacks[] | select(.comm == \$c)] | max_by(.total_ns) | .$2 | join(\";\")" "$J"; }

# Per thread, stack-charged time plus below-threshold time is the blocked time.
closes() {
	local what=$1 bad
	# 1%: the mechanism charges each sleep's exact interval at its wakeup, so only a
	# sleep still open at the end could differ, and these workloads end every sleep.
	bad=$(jq '.runs[0] as $r | [$r.threads[] | . as $t
		| ([$r.stacks.offcpu_stacks[] | select(.tid == $t.tid and .pid == $t.pid) | .total_ns] | add // 0) as $st
		| ($t.sleeping_ns + $t.uninterruptible_ns) as $blocked
		| (($st + $t.below_threshold.total_ns) - $blocked) | if . < 0 then -. else . end
		| select(. > $blocked * 0.01 + 1000)] | length' "$J")
	if [ "$bad" = 0 ]; then
		ok "$what: per thread, stacks + below-threshold = blocked time (within 1%)"
	else
		not_ok "$what: per thread, stacks + below-threshold = blocked time (within 1%)" \
			"$(jq -c '.runs[0] as $r | $r.threads[] | {tid, comm, s: .sleeping_ns, d: .uninterruptible_ns, below: .below_threshold, stacks: ([$r.stacks.offcpu_stacks[] | select(.tid == .tid)] | length)}' "$J")" \
			"$(jq -c '.runs[0].stacks.offcpu_stacks[] | {tid, state, count, total_ns, u: .user_status, k: (.kernel | last)}' "$J")"
	fi
}

# A contended mutex and a nanosleep, every sleep charged. This machine's
# kernel now and then switches a task in without a sched_switch event
# (quality.untraced_switch_ins; tsarun repairs the accounting, and the
# stack the thread slept on is gone by the next event, so the sleep is
# charged as a dropped stack, "not seen": once in CI, the waiter's 150 ms).
# These checks are of stacks at switches the kernel reports: a run with an
# untraced switch-in is run again, at most twice, saying so. What tsarun
# does at an untraced switch-in is checked below (TSARUN_TEST_DROP_SWITCH_IN).
for try in 1 2 3; do
	"$TSARUN" -q --offcpu-min 0 --json "$J" -- "$WORKLOADS/mutex_wait" 150 100
	untraced=$(jq '.runs[0].quality.untraced_switch_ins' "$J")
	[ "$untraced" = 0 ] && break
	echo "# mutex_wait run $try: the kernel left $untraced switch-in(s) untraced" \
		"($(jq -c '.runs[0].stacks.drops | with_entries(select(.value != 0))' "$J") dropped); again"
done
validate "$J"
u=$(top waiter user) k=$(top waiter kernel)
check "waiter: the top stack has the workload's function (built with -g)" grep -q 'waiter_blocks_on_mutex' <<<"$u"
check "waiter: ... the mutex frames" grep -qE 'pthread_mutex_lock|__lll_lock_wait' <<<"$u"
check "waiter: ... and the kernel's futex wait" grep -q 'futex_wait' <<<"$k"
check "waiter: frames the frame-pointer walk skipped were recovered (CFI)" \
	test "$(jq '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "waiter")] | max_by(.total_ns) | .repaired_frames' "$J")" -ge 1
within "waiter: its top stack holds the hold time (ms)" \
	"$(jq '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "waiter")] | max_by(.total_ns) | .total_ns / 1e6' "$J")" 150 15
check "napper: the top stack is in nanosleep" grep -qE '(^|;)(__)?(clock_)?nanosleep' <<<"$(top napper user)" ||
	jq -c '.runs[0].threads[] | select(.comm == "napper")' "$J" | sed 's/^/# /'
cp "$J" /tmp/tsarun-40-stacks-last.json 2>/dev/null || true
check "napper: ... and the kernel's hrtimer sleep" grep -q 'nanosleep' <<<"$(top napper kernel)"
check "napper: ... called from the workload's napper_sleeps" grep -q 'napper_sleeps' <<<"$(top napper user)"
equal "kernel frames are symbolized" "$(jq -r '.runs[0].stacks.symbols.kernel' "$J")" null
equal "user frames are symbolized" "$(jq -r '.runs[0].stacks.symbols.user' "$J")" null
equal "no stack was dropped" "$(jq '.runs[0].quality.stack_drops' "$J")" 0
equal "quality.stack_drops is the sum of the drops by reason" "$(jq '.runs[0].quality.stack_drops' "$J")" \
	"$(jq '.runs[0].stacks.drops | .kernel_stack_failed + .user_stack_failed + .stack_map_full + .truncated + .aggregate_full + .pending_lost + .waker_missed + .oncpu_full' "$J")"
equal "no tracer frames in any stack" "$(jq '[.runs[0].stacks.offcpu_stacks[].kernel[] | select(test("^(bpf_prog_|bpf_trace_run|__bpf_trace_)"))] | length' "$J")" 0
equal "below-threshold is zero with --offcpu-min 0" "$(jq '[.runs[0].threads[].below_threshold.count] | add' "$J")" 0
closes "mutex, every sleep"

# A threshold above the nap: the nap is counted, not stacked, and the report says so.
# The waiter blocks from when it runs after the barrier to the holder's
# release: a hold of 250 ms keeps that sleep above 120 ms when the waiter
# gets a CPU up to 130 ms after the barrier (with a 150 ms hold, once in CI
# it was not on the table).
"$TSARUN" --color never --offcpu-min 120ms --json "$J" -- "$WORKLOADS/mutex_wait" 250 100 2>"$T_TMP/table" >/dev/null
validate "$J"
equal "napper: the 100 ms nap is below 120 ms: on no stack" "$(jq '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "napper")] | length' "$J")" 0
within "napper: ... but in below_threshold (ms)" "$(jq '.runs[0].threads[] | select(.comm == "napper") | .below_threshold.total_ns / 1e6' "$J")" 100 10
closes "mutex, 120 ms threshold"
check "the table lists the top blocking stacks" grep -q 'top blocking stacks' "$T_TMP/table"
check "... with the waiter's function" grep -q 'waiter_blocks_on_mutex' "$T_TMP/table" || {
	sed -n '/top blocking stacks/,$s/^/#   /p' "$T_TMP/table"
	jq -c '.runs[0].threads[] | select(.comm == "waiter") | {sleeping_ns, runqueue_ns, below_threshold, offcpu_hist_log2_us}' "$J" | sed 's/^/#   /'
}
check "the table warns when sleeps below the threshold are a large share" grep -q 'shorter than --offcpu-min' "$T_TMP/table"
"$TSARUN" report --color never "$J" >"$T_TMP/report" 2>&1
if diff <(grep -v '^  artifact:' "$T_TMP/table") <(grep -v '^  artifact:' "$T_TMP/report") >"$T_TMP/report.diff"; then
	ok "tsarun report prints the same table, stacks included"
else
	# Once in CI, not reproduced in 18 runs here: say what differed.
	mapfile -t d <"$T_TMP/report.diff"
	not_ok "tsarun report prints the same table, stacks included" "${d[@]}"
	cp "$J" /tmp/tsarun-40-stacks-report.json 2>/dev/null
fi

# The default threshold (10 us) on the same workload: closes too.
"$TSARUN" -q --stacks --json "$J" -- "$WORKLOADS/mutex_wait" 50 30
closes "mutex, default threshold"

# A vfork parent waits in D for its child: charged to the kernel's vfork path.
"$TSARUN" -q --stacks --json "$J" -- "$WORKLOADS/vfork_wait" 300
validate "$J"
d=$(jq -r '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "vfork_wait" and .state == "D")] | max_by(.total_ns)' "$J")
check "vfork: the parent's D time is on a kernel stack in vfork" grep -q 'vfork' <<<"$(jq -r '.kernel | join(";")' <<<"$d")"
# All of the parent's D time is on that stack: at least the child's 300 ms
# sleep (load can only stretch it), and the parent's whole D time.
at_least "vfork: ... all 300 ms of it (ms)" "$(jq '.total_ns / 1e6' <<<"$d")" 300
within "vfork: ... and all of the parent's D time (ms)" "$(jq '.total_ns / 1e6' <<<"$d")" \
	"$(jq '[.runs[0].threads[] | select(.comm == "vfork_wait")] | sort_by(.start_ns) | .[0].uninterruptible_ns / 1e6' "$J")" 1
closes "vfork"

# The waker's stacks: the holder wakes the waiter when it unlocks.
"$TSARUN" -q --waker --offcpu-min 0 --json "$J" -- "$WORKLOADS/mutex_wait" 150 100
validate "$J"
w=$(jq -c '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "waiter")] | max_by(.total_ns) | .waker' "$J")
equal "waker: the waiter was woken by the holder" "$(jq -r .comm <<<"$w")" holder
check "waker: ... unlocking the mutex (its user stack)" grep -qE 'pthread_mutex_unlock|__lll_lock_wake' <<<"$(jq -r '.user | join(";")' <<<"$w")"
check "waker: ... through futex_wake (its kernel stack)" grep -q 'futex_wake' <<<"$(jq -r '.kernel | join(";")' <<<"$w")"
equal "waker: the nap is woken by an interrupt (the timer)" \
	"$(jq -r '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "napper")] | max_by(.total_ns) | .waker.comm' "$J")" "[interrupt]"
# A child's exit wakes its parent after its memory is gone: no user stack to
# take, which is said, and is no failure (each once counted as one).
"$TSARUN" -q --waker --offcpu-min 0 --json "$J" -- sh -c 'for i in 1 2 3 4 5; do /bin/true; done'
equal "waker: a child's exit: its user stack is gone, and that is said" \
	"$(jq -r '[.runs[0].stacks.offcpu_stacks[] | select(.waker.comm == "true") | .waker.user[0]] | unique | join(",")' "$J")" \
	"[user stack not captured: exited]"
equal "waker: ... and no failure is counted" "$(jq '.runs[0].stacks.drops.user_stack_failed' "$J")" 0

# --flame: on-CPU samples, folded files, SVG flame graphs.
mkdir -p "$T_TMP/fl"
"$TSARUN" -q --flame --out-dir "$T_TMP/fl" --json s.json -- "$WORKLOADS/spin_sleep" 300 100
J=$T_TMP/fl/s.json
validate "$J"
for f in offcpu oncpu wall; do
	check "$f.folded exists and is not empty" test -s "$T_TMP/fl/s.$f.folded"
	equal "$f.folded: every line is 'stack, space, integer'" \
		"$(grep -cvE '^[^ ].* [0-9]+$' "$T_TMP/fl/s.$f.folded")" 0
	check "$f.svg is well-formed XML" python3 -c "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" "$T_TMP/fl/s.$f.svg"
	check "$f.svg is interactive (zoom and search script)" grep -q 'function zoom' "$T_TMP/fl/s.$f.svg"
done
# Named after the artifact's stem: a second profile in the folder keeps the first.
"$TSARUN" --color never --flame --out-dir "$T_TMP/fl" --json t.json -- "$WORKLOADS/burn" 20 \
	>/dev/null 2>"$T_TMP/t.err"
check "a second profile beside it: t.wall.svg, and s.wall.svg kept" \
	cmp -s "$T_TMP/fl/s.wall.svg" <("$TSARUN" report --format svg "$J")
check "... t.wall.svg written" test -s "$T_TMP/fl/t.wall.svg"
equal "one line says what was written where" "$(grep -c '^tsarun: wrote ' "$T_TMP/t.err")" 1
check "... every flame graph in it, and the folder" grep -qE \
	"^tsarun: wrote t\.offcpu\.folded, t\.(oncpu\.folded, t\.)?wall\.folded, t\.offcpu\.svg, (t\.oncpu\.svg, )?t\.wall\.svg in $T_TMP/fl\$" \
	"$T_TMP/t.err"
# C++ names as people read them, in the artifact, the table and the flame graph.
if [ -x "$WORKLOADS/cxx_join" ]; then
	"$TSARUN" --color never --stacks --json "$T_TMP/cxx.json" -- "$WORKLOADS/cxx_join" 200 2>"$T_TMP/cxx.err"
	check "C++: the main thread's stack, demangled: workload::wait_for(std::thread&) > std::thread::join()" \
		sh -c "jq -r '.runs[0].stacks.offcpu_stacks[].user | join(\";\")' '$T_TMP/cxx.json' |
			grep -qF 'main;workload::wait_for(std::thread&);std::thread::join();'"
	check "C++: no mangled name left in the stacks" \
		sh -c "! jq -r '.runs[0].stacks.offcpu_stacks[].user[]' '$T_TMP/cxx.json' | grep -q '^_Z'"
	check "C++: the table's stack line too" grep -qF 'std::thread::join() > __pthread_clockjoin_ex' "$T_TMP/cxx.err"
	"$TSARUN" report --format svg --view offcpu "$T_TMP/cxx.json" >"$T_TMP/cxx.svg"
	check "C++: and the flame graph" grep -qF '<title>std::thread::join()' "$T_TMP/cxx.svg"
else
	not_ok "C++: the demangler's workload" "build/tests/workloads/cxx_join is missing (make workloads; g++)"
fi

# As flamegraph.pl draws them: kernel frames without their _[k] mark (the folded files keep it).
check "offcpu.folded marks kernel frames _[k]" grep -q '_\[k\]' "$T_TMP/fl/s.offcpu.folded"
check "offcpu.svg names them without it, and says kernel" \
	sh -c "! grep -q '_\[k\]' '$T_TMP/fl/s.offcpu.svg' && grep -q '\[kernel\]' '$T_TMP/fl/s.offcpu.svg'"
"$TSARUN" report --format svg --view offcpu --inverted "$J" >"$T_TMP/fl/icicle.svg"
equal "report --format svg --inverted: exit 0" "$?" 0
check "... an icicle graph, well-formed" sh -c "grep -q 'data-inverted=\"1\"' '$T_TMP/fl/icicle.svg' &&
	python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' '$T_TMP/fl/icicle.svg'"
# --reverse (flamegraph.pl's): rooted where the stacks end. The frames right
# above "all" are the folded stacks' last frames, and the largest is there.
"$TSARUN" report --format svg --view offcpu --reverse "$J" >"$T_TMP/fl/rev.svg"
equal "report --format svg --reverse: exit 0" "$?" 0
check "... says so under its title" grep -q 'reversed: rooted where stacks end' "$T_TMP/fl/rev.svg"
rev_roots() {
	python3 - "$1" "$2" <<'EOP'
import collections, html, re, sys
leaf = collections.Counter()
for line in open(sys.argv[1]):
    stack, v = line.rstrip("\n").rsplit(" ", 1)
    last = stack.split(";")[-1]
    leaf[last[:-4] + " [kernel]" if last.endswith("_[k]") else last] += int(v)
frames = [(html.unescape(t).split("\n")[0], float(y)) for t, y in
          re.findall(r'<title>([^<]*)</title><rect[^>]*? y="([0-9.]+)"', open(sys.argv[2]).read())]
y_all = [y for n, y in frames if n == "all"][0]
above = {n for n, y in frames if y < y_all and y >= max(y for n, y in frames if y < y_all)}
top = leaf.most_common(1)[0][0]
print("ok" if above and above <= set(leaf) and top in above else
      "roots %s, leaves %s" % (sorted(above)[:5], leaf.most_common(5)))
EOP
}
equal "... the frames above the root are the stacks' last frames, the largest among them" \
	"$(rev_roots "$T_TMP/fl/s.offcpu.folded" "$T_TMP/fl/rev.svg")" ok
equal "... not so without --reverse (the check can fail)" \
	"$(rev_roots "$T_TMP/fl/s.offcpu.folded" "$T_TMP/fl/s.offcpu.svg" | cut -c1-6)" "roots "
# Each flame graph as a user sees it, in headless Chromium (screenshots kept
# in build/tests/shots/ to look at).
"$TSARUN" report --format svg --view offcpu --inverted --reverse "$J" >"$T_TMP/fl/icirev.svg"
svg_in_chromium "$REPO/build/tests/shots/stacks" \
	"$T_TMP/fl/s.offcpu.svg" main "$T_TMP/fl/s.oncpu.svg" spin_cpu_ms "$T_TMP/fl/s.wall.svg" main \
	"$T_TMP/fl/icicle.svg" main "$T_TMP/fl/rev.svg" main "$T_TMP/fl/icirev.svg" main
"$TSARUN" report --format folded --reverse "$J" >/dev/null 2>"$T_TMP/fl/rev.err"
equal "report --reverse without svg: refused (125)" "$?" 125
"$TSARUN" report --format folded --inverted "$J" >/dev/null 2>"$T_TMP/fl/inv.err"
equal "report --inverted without svg: refused (125)" "$?" 125
samples=$(jq '[.runs[0].stacks.oncpu_stacks[] | select(.comm == "spinsleep") | .count] | add' "$J")
# The sampling clock is the CPU's (cpu-clock): it ticks through the steal and
# interrupts of the thread's slices too, which its on-CPU time counts. 300 ms on
# a CPU at 99 Hz is 29.7 samples; the first period starts at an arbitrary phase
# and a preempted thread's clock pauses with it: +-3 samples.
spun=$(jq '.runs[0].threads[] | select(.comm == "spinsleep") | .on_cpu_ns' "$J")
within "on-CPU: samples of the spinning thread (99 Hz x its on-CPU time)" "$samples" \
	"$(awk -v n="$spun" 'BEGIN { printf "%.1f", n * 99 / 1e9 }')" 10
check "on-CPU: the spinning function is on the top stack" grep -q 'spin_cpu_ms' \
	<<<"$(jq -r '[.runs[0].stacks.oncpu_stacks[] | select(.comm == "spinsleep")] | max_by(.count) | .user | join(";")' "$J")"
# spin_cpu_ms reads its thread's CPU clock through clock_ns(), the C
# library's clock_gettime() (no frame pointer) and the vDSO's (which falls
# back to the system call): the walk skips clock_ns, which is recovered
# from the vDSO's CFI (read from tsarun's own vDSO), and the vDSO has names.
# Some 12-22% of the loop's samples fall there (3.3 of 29 at 99 Hz, measured
# here; none, now and then): at 999 Hz, 42-65 of 300 here.
mkdir -p "$T_TMP/cg"
"$TSARUN" -q --flame --freq 999 --out-dir "$T_TMP/cg" --json "$T_TMP/fl/cg.json" -- "$WORKLOADS/spin_sleep" 300 100
in_cg='[.runs[0].stacks.oncpu_stacks[] | select(.comm == "spinsleep" and (.user | index("clock_gettime")))]'
at_least "on-CPU: samples inside clock_gettime (of about 300 at 999 Hz)" "$(jq "$in_cg | map(.count) | add // 0" "$T_TMP/fl/cg.json")" 1
equal "on-CPU: ... each with its caller clock_ns, and no vDSO frame without a name" \
	"$(jq -c "$in_cg | [map(select(.user | index(\"clock_ns\") | not)) | length, ([.[].user[] | select(startswith(\"[vdso]\"))] | length)]" "$T_TMP/fl/cg.json")" "[0,0]"

# The wall view: each thread's lines add up to its lifetime (by construction: every state is there).
bad=$(awk '{ v = $NF; sub(/ [0-9]+$/, ""); split($0, f, ";"); sum[f[2]] += v } END { for (t in sum) print t, sum[t] }' "$T_TMP/fl/s.wall.folded" |
	while read -r t v; do
		tid=${t##*-}
		life=$(jq --argjson t "$tid" '.runs[0].threads[] | select(.tid == $t) | .lifetime_ns' "$J")
		awk -v a="$v" -v b="$life" 'BEGIN { d = a - b; if (d < 0) d = -d; if (d > b * 0.001) print "bad" }'
	done | wc -l)
equal "wall.folded: each thread's widths add up to its lifetime (0.1%)" "$bad" 0
check "wall.folded has on-CPU stacks, the runqueue and blocked stacks" \
	sh -c "grep -q 'spin_cpu_ms' '$T_TMP/fl/s.wall.folded' && grep -q '\[runqueue\]' '$T_TMP/fl/s.wall.folded' && grep -q '\[S\];' '$T_TMP/fl/s.wall.folded'"

# tsarun report --format folded|svg: the stored artifact gives back what
# --flame wrote, view by view (the stacks are read back whole).
for v in wall offcpu oncpu; do
	"$TSARUN" report --format folded --view "$v" "$J" >"$T_TMP/r-$v.folded"
	equal "report --format folded --view $v: the $v.folded the run wrote" \
		"$(cmp "$T_TMP/r-$v.folded" "$T_TMP/fl/s.$v.folded" && echo same)" same
done
"$TSARUN" report --format svg "$J" >"$T_TMP/r.svg"
check "report --format svg: the wall flame graph (the default view) the run wrote" \
	cmp "$T_TMP/r.svg" "$T_TMP/fl/s.wall.svg"
"$TSARUN" -q --json "$T_TMP/n0.json" -- true
"$TSARUN" report --format folded "$T_TMP/n0.json" >/dev/null 2>"$T_TMP/err"
equal "report --format folded of a run without stacks: refused (125)" "$?" 125
check "... saying how to record them" grep -q "no stacks: record them with --stacks" "$T_TMP/err"
"$TSARUN" report --view offcpu "$J" >/dev/null 2>"$T_TMP/err"
equal "report --view without a stacked format: refused (125)" "$?" 125

# Blocking points that differ only in the caller the frame-pointer walk
# skips (nanosleep is the C library's, which has no frame pointer): two
# functions behind one call site, and a function of its own per thread.
# Each must be a stack of its own with its own time, not the first one
# seen: the stack's id covers the return addresses it is rebuilt from.
# Once built with frame pointers, once without (CFI alone).
for w in two_paths two_paths_nofp; do
	took=$("$TSARUN" -q --stacks --offcpu-min 0 --json "$J" -- "$WORKLOADS/$w" 10 5 15)
	# path FUNC OTHER FIELD: the stacks of the main thread with FUNC and not OTHER
	path() {
		jq --arg f "$1" --arg o "$2" --arg w "$w" "[.runs[0].stacks.offcpu_stacks[] |
			select(.comm == \$w and (.user | index(\$f)) and ((.user | index(\$o)) | not))] | $3" "$J"
	}
	# A sleep whose switch-in the kernel left unreported has no user stack
	# (not seen, see below): none on a quiet machine, a few under load. The
	# others are each on their own function's stack, with their own time.
	lost=$(jq --arg w "$w" '[.runs[0].stacks.offcpu_stacks[] | select(.comm == $w and .user_status == "not seen" and .total_ns > 4000000) | .count] | add // 0' "$J")
	fast=$(path fast_path slow_path 'map(.count) | add // 0')
	slow=$(path slow_path fast_path 'map(.count) | add // 0')
	equal "$w: the 20 sleeps: 10 in fast_path, 10 in slow_path, each on its own stack (not seen: $lost)" \
		"$(((fast <= 10 && slow <= 10) ? fast + slow + lost : -1))" 20
	# Each of those is explained by a counted cause: the sleep ends without
	# its stacks only where tsarun repaired a switch-in no event reported
	# (repair_switch_in() in sched.bpf.c), which the thread's
	# untraced_switch_ins counts (also its preemptions' unreported
	# switch-ins, hence at most), and its kernel stack is not seen either.
	at_most "$w: ... each sleep without its user stack follows an unreported switch-in of its thread" \
		"$(jq --arg w "$w" '[.runs[0].stacks.offcpu_stacks[] | select(.comm == $w and .user_status == "not seen") | .count] | add // 0' "$J")" \
		"$(jq --arg w "$w" '[.runs[0].threads[] | select(.comm == $w) | .untraced_switch_ins] | add // 0' "$J")"
	equal "$w: ... and its kernel stack is not seen either" \
		"$(jq --arg w "$w" '[.runs[0].stacks.offcpu_stacks[] | select(.comm == $w and .user_status == "not seen" and .kernel_status != "not seen")] | length' "$J")" 0
	# Each stack's time is its function's sleeps: at most what its calls took
	# by the workload's own clock (the sleep, the wait for a CPU after it and
	# the call's own CPU; the timer fires late where the host does not run the
	# guest's CPU then: 0.69 ms a sleep was seen, so the time asked for is no
	# upper bound), and within 10% of the time asked for below it: each sleep
	# lasts that long, but a wakeup inferred from a queue stamp on another CPU
	# may be placed early by that CPU's clock offset (issue 30): 48.7 of 50 ms
	# under load once.
	for f in fast_path:slow_path:5:$fast slow_path:fast_path:15:$slow; do
		IFS=: read -r fn other each count <<<"$f"
		got=$(path "$fn" "$other" 'map(.total_ns) | add / 1e6')
		at_least "$w: ... $fn's $each ms each, within 10% (ms)" "$got" "$(awk -v n=$((each * count)) 'BEGIN { print n * 0.9 }')"
		at_most "$w: ... and no more than its calls took (ms)" "$got" \
			"$(echo "$took" | sed -n "s/.*$fn""_ns=\([0-9]*\).*/\1/p" | awk '{ print $1 / 1e6 }')"
	done
	# A thread may also wait where it was not asked to: a page fault in
	# printf that waits for the page cache (D, filemap_fault, seen in CI
	# with a fresh build), unwound from its 512 bytes of stack to two C
	# library frames. Such a wait names no thread's function; one that
	# names one must name its own, and each thread's 10 nanosleeps (S) are
	# its own.
	equal "$w: each thread's sleeps that name a thread's function name its own, and no other's" \
		"$(jq '[.runs[0].stacks.offcpu_stacks[] | select(.comm | test("^own[0-2]$")) | . as $s
			| [$s.user[] | select(test("^own[0-2]$"))] as $o
			| select($s.user_status != "not seen" and ($o | length) > 0 and $o != [$s.comm])] | length' "$J")" 0
	equal "$w: ... 10 nanosleeps each (S)" \
		"$(jq -c '[.runs[0].stacks.offcpu_stacks[] | select((.comm | test("^own[0-2]$")) and .state == "S")] | group_by(.comm) | map(map(.count) | add)' "$J")" "[10,10,10]"
	jq -r '.runs[0].stacks.offcpu_stacks[] | select((.comm | test("^own[0-2]$")) and .state != "S")
		| "#   \(.comm): \(.count) \(.state) wait(s) outside its nanosleeps, at \(.user[:2] | join(" > ")) (\(.kernel[-1:] | join("")))"' "$J"
	# A sleep at the bottom of 30 recursive calls with 64-byte frames.
	"$TSARUN" -q --stacks --offcpu-min 0 --json "$J" -- "$WORKLOADS/$w" 1 1 1 30
	deep=$(jq -c '[.runs[0].stacks.offcpu_stacks[] | select(any(.user[]; test("^recurse")))][0] | [.truncated, ([.user[] | select(test("^recurse"))] | length)]' "$J")
	if [ "$w" = two_paths ]; then
		equal "$w: 30 recursive calls, walked by frame pointers: all 31 frames, whole" "$deep" "[false,31]"
	else
		equal "$w: 30 recursive calls, unwound from 512 bytes of stack: marked truncated" "${deep%%,*}" "[true"
		at_least "$w: ... and counted apart" "$(jq '.runs[0].stacks.drops.unwind_incomplete' "$J")" 1
	fi
	equal "$w: ... which is no drop" "$(jq '.runs[0].quality.stack_drops' "$J")" 0
done
# report gives back what the run wrote for cut stacks too: the mark goes on
# the half that was cut (the user's here), never on both.
mkdir -p "$T_TMP/deep"
"$TSARUN" -q --stacks --flame --offcpu-min 0 --out-dir "$T_TMP/deep" --json d.json -- \
	"$WORKLOADS/two_paths_nofp" 1 1 1 30
equal "cut stacks: the user half marked, the kernel half not" \
	"$(jq -c '[.runs[0].stacks.offcpu_stacks[] | select(any(.user[]; test("^recurse")))][0] | [.user_truncated, .kernel_truncated]' "$T_TMP/deep/d.json")" \
	"[true,false]"
for v in wall offcpu oncpu; do
	"$TSARUN" report --format folded --view "$v" "$T_TMP/deep/d.json" >"$T_TMP/deep/r-$v.folded"
	equal "cut stacks: report --format folded --view $v is the $v.folded the run wrote" \
		"$(cmp "$T_TMP/deep/r-$v.folded" "$T_TMP/deep/d.$v.folded" && echo same)" same
	"$TSARUN" report --format svg --view "$v" "$T_TMP/deep/d.json" >"$T_TMP/deep/r-$v.svg"
	equal "... and --format svg the $v.svg" "$(cmp "$T_TMP/deep/r-$v.svg" "$T_TMP/deep/d.$v.svg" && echo same)" same
done

# A switch-in no event reports (this VM's kernel leaves some out; forced
# here on every 7th of the tracked threads'): the sleep before it is seen
# to end only at the next switch-out, once its system call has ended. Its
# user stack is then not known, and never the next system call's: a 15 ms
# sleep in slow_path was charged to fast_path's stack (5 ms sleeps), and a
# 5 ms one to slow_path's.
TSARUN_TEST_DROP_SWITCH_IN=7 "$TSARUN" -q --stacks --offcpu-min 0 --json "$J" -- "$WORKLOADS/two_paths" 10 5 15
validate "$J"
at_least "switch-ins left unreported: repaired" "$(jqv "$J" '.runs[0].quality.untraced_switch_ins')" 1
equal "... no sleep on the other function's stack (rows of the wrong mean sleep)" \
	"$(jq -c '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "two_paths") | (.total_ns / .count / 1e6) as $ms
		| select(((.user | index("fast_path")) and $ms > 10) or ((.user | index("slow_path")) and $ms < 10))
		| {count, ms: $ms}]' "$J")" "[]"
at_least "... each sleep without its user stack counted as an unreported switch-in of its thread" \
	"$(jq '[.runs[0].threads[] | select(.comm == "two_paths") | .untraced_switch_ins] | add // 0' "$J")" \
	"$(jq '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "two_paths" and .user_status == "not seen") | .count] | add // 0' "$J")"
equal "... and all 20 sleeps are there, known or not" \
	"$(jq '[.runs[0].stacks.offcpu_stacks[] | select(.comm == "two_paths" and .total_ns > 4000000) | .count] | add' "$J")" 20

# A process that execs: its stacks before the exec are another program's,
# and carry the name it had then (they once took the new program's: bash
# waiting for its job was shown as sleep, in the table, the artifact and
# the flame graphs alike).
"$TSARUN" -q --stacks --flame --out-dir "$T_TMP/ex" --json "$J" -- bash -c 'sleep 0.2 & wait; exec sleep 0.2'
validate "$J"
root=$(jqv "$J" '.runs[0].root_pid')
rows() { jq -r --argjson p "$root" --arg f "$1" '[.runs[0].stacks.offcpu_stacks[] | select(.tid == $p and any(.user[]; test($f))) | .comm] | unique | join(",")' "$J"; }
equal "exec: the leader's stack waiting for its job, before the exec, is bash's" "$(rows '^wait_for$')" bash ||
	jq -c --argjson p "$root" '.runs[0].stacks.offcpu_stacks[] | select(.tid == $p) | [.comm, .user]' "$J" | sed 's/^/#   /'
equal "exec: ... its sleep after it, sleep's" "$(rows '^nanosleep$')" sleep
check "exec: ... in the flame graph too" grep -q "^bash-$root;bash-$root;.*wait" "$T_TMP/ex/s.offcpu.folded"
"$TSARUN" report "$J" >"$T_TMP/rep" 2>&1
check "exec: ... and in tsarun report's table" grep -Eq "S bash +$root " "$T_TMP/rep"

# Without --stacks there are no stacks and nothing is counted below a threshold.
"$TSARUN" -q --json "$T_TMP/n.json" -- "$WORKLOADS/mutex_wait" 20 10
equal "without --stacks: stacks is null" "$(jq -r '.runs[0].stacks' "$T_TMP/n.json")" null
equal "without --stacks: below_threshold is null" "$(jq '[.runs[0].threads[].below_threshold | select(. != null)] | length' "$T_TMP/n.json")" 0
