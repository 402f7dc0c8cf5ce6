#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --interval DUR on a command's run: one JSON line per interval (tsarun-
# stream/1), flushed as it is made, whose figures are what each thread did
# in that interval and which sum, thread by thread, to the artifact exactly.
. "$(dirname "$0")/../lib.sh"
need_bpf "interval streaming"
cd "$T_TMP"

SCHEMA="$REPO/doc/tsarun-stream.schema.json"
lines_valid() { # NAME FILE
	local out
	if [ ! -s "$2" ]; then
		not_ok "$1: every line validates against tsarun-stream/1" "no lines: $2 is missing or empty"
	elif out=$(/usr/bin/python3 "$REPO/tests/validate-artifact" --lines "$SCHEMA" "$2" 2>&1); then
		ok "$1: every line validates against tsarun-stream/1"
	else
		not_ok "$1: every line validates against tsarun-stream/1" "$out"
	fi
}

# Every figure of every thread of run RUN, summed over the run's lines,
# against the artifact's thread; and the artifact's threads against the
# stream's. Prints the differences (nothing: they agree).
FIELDS='["lifetime_ns","on_cpu_ns","runqueue_ns","sleeping_ns","uninterruptible_ns","stopped_ns",
	"residual_ns","slices","voluntary_switches","involuntary_switches","wakeups"]'
# A file missing or empty is a difference too: a check on nothing passes nothing.
missing() { local f; for f; do [ -s "$f" ] || echo "$f is missing or empty"; done; }
sum_diff() { # JSONL ARTIFACT RUN
	missing "$1" "$2"
	jq -rn --slurpfile L "$1" --slurpfile A "$2" --argjson run "$3" --argjson F "$FIELDS" '
		([$L[] | select(.run == $run) | .threads[]] | group_by(.tid)
		 | map(. as $rows | {key: (.[0].tid | tostring),
			value: (reduce $F[] as $f ({}; .[$f] = ([$rows[][$f]] | add)))}) | from_entries) as $S
		| ($A[0].runs[] | select(.index == $run) | .threads) as $T
		| ([$T[] | . as $t | $F[] as $f | select($S[$t.tid | tostring][$f] != $t[$f])
			| "thread \($t.tid) \($t.comm) \($f): stream \($S[$t.tid | tostring][$f]), artifact \($t[$f])"]
		   + (if ($S | length) != ($T | length)
		      then ["threads: \($S | length) in the stream, \($T | length) in the artifact"] else [] end))[]'
}

# The figures of each line's threads sum to its processes' and to its totals.
line_sums_diff() { # JSONL (figures not null: a line without threads sums to 0)
	missing "$1"
	jq -rc --argjson F "$FIELDS" '. as $l | $F[] as $f
		| ([$l.threads[][$f]] | add // 0) as $t | ([$l.processes[][$f]] | add // 0) as $p
		| select($t != $l.totals[$f] or $p != $l.totals[$f])
		| "line \($l.index) \($f): threads \($t), processes \($p), totals \($l.totals[$f])"' "$1"
}

# Lines numbered 1, 2, ... per run, each starting where the one before ended, the last one last.
chain_diff() { # JSONL RUN
	missing "$1"
	jq -rn --slurpfile L "$1" --argjson run "$2" '[$L[] | select(.run == $run)] as $l
		| [range(0; $l | length) as $i | $l[$i]
		   | select(.index != $i + 1 or .interval_ns != .end_ns - .start_ns
			or .start_ns != (if $i == 0 then 0 else $l[$i - 1].end_ns end)
			or .last != ($i == ($l | length) - 1))
		   | "line \($i + 1): index \(.index), \(.start_ns)..\(.end_ns), last \(.last)"][]'
}

# One thread spins 300 ms of its own CPU time, then sleeps 600 ms.
"$TSARUN" -q --interval 100ms -- "$WORKLOADS/spin_sleep" 300 600
J=tsarun.json S=tsarun.jsonl
check "the stream goes beside the artifact, named after it (tsarun.jsonl)" test -s "$S"
validate "$J"
lines_valid "spin then sleep" "$S"
n=$(wc -l <"$S")
at_least "spin then sleep: a line per 100 ms of a 900 ms run, and the last" "$n" 9
equal "spin then sleep: the lines follow each other, the last one last" "$(chain_diff "$S" 0)" ""
equal "spin then sleep: every figure of every thread sums to the artifact's, exactly" \
	"$(sum_diff "$S" "$J" 0)" ""
equal "spin then sleep: each line's threads sum to its processes and totals" "$(line_sums_diff "$S")" ""
equal "spin then sleep: eBPF accounts for every figure (none null)" \
	"$(jq -rc 'select(.accounting_source != "ebpf" or (.unmeasured | length) > 0) | .index' "$S")" ""

# The worker's intervals: runnable (on-CPU or waiting for it) until its
# sleep, then asleep for whole intervals. An interval wholly inside the
# sleep shows all of the thread's time in it as S: the sleep still open at
# each read is counted up to that read.
jq -c '.interval_ns as $i | .threads[] | select(.comm == "spinsleep")
	| [.lifetime_ns, .on_cpu_ns, .runqueue_ns, .sleeping_ns, .residual_ns, .alive, $i]' "$S" >w.txt
# Fields: $2 its time in the line, $3 on-CPU, $4 runqueue, $5 S, $6 residual, $7 alive, $8 the line's length.
first_s=$(awk -F'[][,]' '$5 > 0 { print NR; exit }' w.txt)
numbers "$first_s" && ok "spin then sleep: the worker falls asleep in line $first_s" ||
	not_ok "spin then sleep: the worker falls asleep" "$(cat w.txt)"
equal "spin then sleep: before its sleep, the worker is only runnable (on-CPU + runqueue = its time)" \
	"$(awk -F'[][,]' -v k="$first_s" 'NR < k && ($3 + $4 != $2 || $5 != 0 || $6 != 0)' w.txt)" ""
at_least "spin then sleep: ... and mostly on a CPU before it (ms)" \
	"$(awk -F'[][,]' -v k="$first_s" 'NR < k { s += $3 } END { print s / 1e6 }' w.txt)" 200
# The line it wakes in: the first after it fell asleep with CPU or runqueue time, or its end.
wake=$(awk -F'[][,]' -v k="$first_s" 'NR > k && ($3 > 0 || $4 > 0 || $7 == "false") { print NR; exit }' w.txt)
# The lines between are S and only S, for the whole line: the sleep still
# open at each read is counted up to it. A thread's span in a line and the
# line's bounds come from the same pass of the task iterator, microseconds
# apart; 5 ms leaves room for tsarun preempted during a pass on a busy machine.
between=$(awk -F'[][,]' -v k="$first_s" -v w="$wake" 'NR > k && NR < w' w.txt)
equal "spin then sleep: every line between falling asleep and waking is S and only S, all of the line" \
	"$(awk -F'[][,]' -v k="$first_s" -v w="$wake" 'NR > k && NR < w &&
		($5 != $2 || $3 != 0 || $4 != 0 || $6 != 0 || $2 - $8 > 5e6 || $8 - $2 > 5e6)' w.txt)" ""
# 600 ms of sleep at 100 ms intervals: at least 4 whole lines lie inside it
# (a late tick only makes a line longer, it never adds one).
at_least "spin then sleep: whole lines asleep" "$(printf '%s\n' "$between" | grep -c .)" 4
equal "spin then sleep: the worker ends in the last line that has it" \
	"$(tail -1 w.txt | awk -F'[][,]' '{ print $7 }')" false

# The stream is written as it goes: lines are there while the command runs.
"$TSARUN" -q --interval 100ms --stream live.jsonl -- "$WORKLOADS/spin_sleep" 10 3000 &
tp=$!
for _ in $(seq 100); do
	[ "$(wc -l 2>/dev/null <live.jsonl || echo 0)" -ge 3 ] && break
	sleep 0.05
done
if kill -0 $tp 2>/dev/null && [ "$(wc -l <live.jsonl)" -ge 3 ]; then
	ok "--stream FILE: lines are in the file while the command still runs (tail -f)"
else
	not_ok "--stream FILE: lines are in the file while the command still runs" "$(wc -l <live.jsonl) lines"
fi
wait $tp
check "--stream FILE: no partial line" test "$(tail -c 1 live.jsonl | od -An -c | tr -d ' ')" = '\n'
lines_valid "--stream FILE" live.jsonl

# Many threads and processes, born and gone between reads: their exit
# records come through the ring buffer and end them in the line they end in.
"$TSARUN" -q --interval 20ms --json tree.json -- "$WORKLOADS/proctree" 60 3 50
lines_valid "process tree" tree.jsonl
equal "process tree: --json tree.json streams to tree.jsonl, every thread summing exactly" \
	"$(sum_diff tree.jsonl tree.json 0)" ""
equal "process tree: each line's threads sum to its processes and totals" "$(line_sums_diff tree.jsonl)" ""
equal "process tree: every process of the artifact is in some line" \
	"$(jq -r '.runs[0].processes | length' tree.json)" \
	"$(jq -r '.processes[].pid' tree.jsonl | sort -u | wc -l)"
equal "process tree: a thread ended is in no later line" \
	"$(jq -r '.threads[] | select(.alive == false) | .tid' tree.jsonl | sort | uniq -d)" ""
"$TSARUN" -q --interval 10ms --json thr.json -- "$WORKLOADS/threads" 300 4 2000
equal "short threads: every thread sums exactly" "$(sum_diff thr.jsonl thr.json 0)" ""
equal "short threads: the lines' totals sum to the artifact's" \
	"$(jq -rn --slurpfile L thr.jsonl --slurpfile A thr.json --argjson F "$FIELDS" '
		$A[0].runs[0] as $r | select($r.quality.lost_events == 0)
		| $F[] as $f | select(([$L[].totals[$f]] | add) != $r.totals[$f]) | $f')" ""

# A ring buffer too small for the exit records: every record lost is counted in the line it was lost in.
"$TSARUN" -q --ringbuf 4K --interval 20ms --json lost.json -- "$WORKLOADS/threads" 1500 32 50
lines_valid "--ringbuf 4K" lost.jsonl
at_least "--ringbuf 4K: records were lost (the case under test)" "$(jq -r .runs[0].quality.lost_events lost.json)" 1
equal "--ringbuf 4K: the lines' lost_records sum to the artifact's lost_events" \
	"$(jq -s 'map(.lost_records) | add' lost.jsonl)" "$(jq -r .runs[0].quality.lost_events lost.json)"

# D state: a vfork parent waits uninterruptibly for 300 ms.
"$TSARUN" -q --interval 50ms --json vf.json -- "$WORKLOADS/vfork_wait" 300
equal "vfork: every thread sums exactly" "$(sum_diff vf.jsonl vf.json 0)" ""
at_least "vfork: some line's parent time is all D (an open D stretch is counted to the read)" \
	"$(jq -r '.threads[] | select(.tid == .pid and .uninterruptible_ns > 0
		and .uninterruptible_ns == .lifetime_ns) | .tid' vf.jsonl | wc -l)" 2

# Several runs: each run's lines start again from 1 and sum to that run.
"$TSARUN" -q --interval 50ms --warmup 1 --runs 2 --json runs.json -- "$WORKLOADS/spin_sleep" 50 100
equal "--warmup 1 --runs 2: lines of three runs, the first one a warmup" \
	"$(jq -r '"\(.run) \(.warmup)"' runs.jsonl | sort -u | tr '\n' ' ')" "0 true 1 false 2 false "
for run in 0 1 2; do
	equal "--runs: run $run's lines follow each other" "$(chain_diff runs.jsonl $run)" ""
done
equal "--runs: the last run's threads sum exactly" "$(sum_diff runs.jsonl runs.json 2)" ""
equal "--runs: an earlier run's lines sum to its totals" \
	"$(jq -rn --slurpfile L runs.jsonl --slurpfile A runs.json --argjson F "$FIELDS" '
		($A[0].runs[] | select(.index == 1)) as $r
		| $F[] as $f | select(([$L[] | select(.run == 1) | .totals[$f]] | add) != $r.totals[$f]) | $f')" ""

# --stream - is stderr; --out-dir puts the default beside the artifact there.
"$TSARUN" -q --interval 50ms --stream - --json e.json -- "$WORKLOADS/spin_sleep" 20 100 2>err.jsonl
lines_valid "--stream -" err.jsonl
at_least "--stream -: the lines go to stderr" "$(wc -l <err.jsonl)" 2
"$TSARUN" -q --interval 50ms --out-dir od -- "$WORKLOADS/spin_sleep" 20 50
check "--out-dir DIR: the stream is DIR/tsarun.jsonl" test -s od/tsarun.jsonl
"$TSARUN" -q --interval 50ms --out-dir od2 --stream s.jsonl -- "$WORKLOADS/spin_sleep" 20 50
check "--out-dir DIR --stream FILE: a relative FILE is in DIR, as --json's" test -s od2/s.jsonl

# procfs alone: what it measures, and null with a reason for what it does not.
"$TSARUN" -q -b proc --interval 100ms --json p.json -- "$WORKLOADS/spin_sleep" 300 300
lines_valid "procfs" p.jsonl
equal "procfs: the figures come from procfs" "$(jq -r .accounting_source p.jsonl | sort -u)" procfs
equal "procfs: switches and wakeups are null, and the line says why" \
	"$(jq -rc '[.totals.wakeups, .totals.voluntary_switches, .threads[].wakeups,
		.threads[].voluntary_switches] | unique' p.jsonl | sort -u)" "[null]"
equal "procfs: ... and every line says why" \
	"$(jq -rc '[.unmeasured[] | select(.reason | length > 0) | .fields] | sort' p.jsonl | sort -u)" \
	'["voluntary_switches,involuntary_switches","wakeups"]'

equal "procfs: every thread sums exactly to the artifact" "$(sum_diff p.jsonl p.json 0)" ""

# taskstats alone sees no live thread: the lines say so, with no figure.
"$TSARUN" -q -b taskstats --interval 50ms --json t.json -- "$WORKLOADS/spin_sleep" 20 100
lines_valid "taskstats" t.jsonl
equal "taskstats: no figures, a reason instead" \
	"$(jq -rc '[.accounting_source, .threads, .totals, .lost_records, (.reason | length > 0)]' t.jsonl | sort -u)" \
	'[null,null,null,null,true]'

# Refused before anything runs.
"$TSARUN" -q --interval 50ms --json /dev/null -- touch ran 2>err
equal "--interval with the artifact on a device and no --stream: refused (125)" "$?" 125
check "... saying to name the stream's file" grep -q -- "--stream FILE" err
check "... and the command did not run" test ! -e ran
"$TSARUN" -q --interval 50ms --stream /nonexistent/dir/s.jsonl -- touch ran 2>err
equal "--stream into a missing directory: refused (125)" "$?" 125
check "... naming it" grep -q "/nonexistent/dir/s.jsonl" err
check "... and the command did not run" test ! -e ran

echo '{}' >keep.json
"$TSARUN" -q --interval 50ms --stream ./keep.json --json "$T_TMP/keep.json" -- touch ran 2>err
equal "--stream on the artifact's file: refused (125)" "$?" 125
check "... saying so" grep -q "also the artifact's file" err
check "... and the file is left as it was" test "$(cat keep.json)" = '{}'
check "... and the command did not run" test ! -e ran

echo "1..$T_N"
