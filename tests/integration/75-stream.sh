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
equal "a regular file: written whole, waiting (runs[].stream says so, and why)" \
	"$(jq -rc '.runs[0].stream | [.nonblocking, (.blocking_reason | test("regular file")), .dropped, .unsent, .error]' "$J")" \
	'[false,true,0,0,null]'
equal "a regular file: every line made is in it" "$(jq -r '.runs[0].stream | "\(.lines) \(.written)"' "$J")" "$n $n"

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
# Its 300 ms of CPU end in the line it falls asleep in, which holds at most
# that line's length of it (100 ms, more when the tick comes late).
at_least "spin then sleep: ... and mostly on a CPU before it (ms)" \
	"$(awk -F'[][,]' -v k="$first_s" 'NR < k { s += $3 } END { print s / 1e6 }' w.txt)" \
	"$(awk -F'[][,]' -v k="$first_s" 'NR == k { print 300 - $8 / 1e6 }' w.txt)"
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
# 600 ms of sleep at 100 ms intervals: whole lines lie inside it, as many
# as tsarun made there (a loaded machine delays its reads: one run under
# ASan beside two CPU hogs had none of 100 ms), and with the lines it
# falls asleep and wakes in they span the sleep.
at_least "spin then sleep: whole lines asleep" "$(printf '%s\n' "$between" | grep -c .)" 1
at_least "spin then sleep: ... which with the lines it falls asleep and wakes in span its 600 ms sleep (ms)" \
	"$(awk -F'[][,]' -v k="$first_s" -v w="$wake" 'NR >= k && NR <= w { s += $8 } END { print s / 1e6 }' w.txt)" 600
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
"$TSARUN" -q --timeline --interval 50ms --json vf.json -- "$WORKLOADS/vfork_wait" 300
equal "vfork: every thread sums exactly" "$(sum_diff vf.jsonl vf.json 0)" ""
# The lines that begin and end within the parent's D stretch (its
# uninterruptible interval on the timeline) have it all in D. Under load
# tsarun may make fewer of them than 300 ms / 50 ms: they are found by
# their bounds, and each one that is not all D is shown.
vf_d=$(jq -c '.runs[0] as $r | $r.timeline.kinds as $k | [$r.timeline.threads[] | select(.tid == $r.root_pid)
	| .intervals[] | select($k[.[2]] == "uninterruptible")] | max_by(.[1]) | [.[0], .[0] + .[1]]' vf.json)
inside=$(jq -r --argjson d "$vf_d" 'select(.start_ns >= $d[0] and .end_ns <= $d[1]) | .index as $i
	| .pid as $p | .threads[] | select(.tid == $p) | "\($i) \(.uninterruptible_ns) \(.lifetime_ns)"' vf.jsonl)
at_least "vfork: lines lie within the parent's D stretch (the case under test)" "$(printf '%s\n' "$inside" | grep -c .)" 1
equal "vfork: each of them has the parent all in D (an open D stretch is counted to the read)" \
	"$(printf '%s\n' "$inside" | awk 'NF == 3 && ($2 != $3 || $2 == 0) { print "line " $1 ": D " $2 " of " $3 }')" ""

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

# A FIFO whose reader takes one line, then stops reading for 2.5 s (it
# keeps the FIFO open). tsarun never waits for it: the FIFO's 64 KiB fill
# within a few tenths of a second of 10 ms lines, what follows waits in the
# 16K backlog, and lines it cannot take are dropped whole and counted. The
# reader resumes within the 2 s that the run's end waits, so every line
# kept reaches it.
mkfifo slow.fifo
( { IFS= read -r l; printf '%s\n' "$l"; sleep 2.5; cat; } <slow.fifo >slow.got ) &
rp=$!
"$TSARUN" -q --interval 10ms --stream slow.fifo --stream-backlog 16K --json slow.json -- \
	"$WORKLOADS/spin_sleep" 300 1500 2>slow.err
equal "a stalled FIFO reader: tsarun exits with the command's status" "$?" 0
wait $rp
validate slow.json
st() { jq -r ".runs[0].stream.$1" slow.json; }
equal "a stalled FIFO reader: written without blocking" "$(st nonblocking) $(st blocking_reason)" "true null"
at_least "a stalled FIFO reader: lines were dropped (the case under test)" "$(st dropped)" 1
equal "a stalled FIFO reader: lines made = written + dropped + unsent, none unsent (the reader came back in time)" \
	"$(st lines) $(st unsent)" "$(($(st written) + $(st dropped))) 0"
equal "a stalled FIFO reader: the reader got every line written, each whole" "$(wc -l <slow.got)" "$(st written)"
check "... and nothing after the last newline" test "$(tail -c 1 slow.got | od -An -c | tr -d ' ')" = '\n'
lines_valid "a stalled FIFO reader" slow.got
# Each line kept says how many were dropped since the one before (its
# index skips them); the last line, the run's closing account, is kept.
equal "a stalled FIFO reader: each line's dropped_lines is the gap in index before it" \
	"$(jq -rn '[inputs] | . as $l | range(1; length) as $i
		| select($l[$i].dropped_lines != $l[$i].index - $l[$i - 1].index - 1) | $i' slow.got)" ""
equal "a stalled FIFO reader: the lines' dropped_lines sum to the artifact's dropped" \
	"$(jq -s 'map(.dropped_lines) | add' slow.got)" "$(st dropped)"
equal "a stalled FIFO reader: the last line arrived, numbered as the lines made" \
	"$(tail -1 slow.got | jq -r '"\(.last) \(.index)"')" "true $(st lines)"
at_most "a stalled FIFO reader: the backlog held at most its bound and one line more (bytes)" \
	"$(st backlog_peak_bytes)" $((16384 + $(tail -1 slow.got | wc -c)))
check "a stalled FIFO reader: stderr warns, naming the stream and the lines dropped" \
	grep -q "the interval stream 'slow.fifo', run 0: $(st dropped) of $(st lines) lines not delivered: $(st dropped) dropped" slow.err
# The command's figures are its own: 300 ms on a CPU less steal (the
# worker spins until its thread CPU clock, the kernel's sum_exec_runtime,
# has counted 300 ms, and that clock leaves out the time the hypervisor
# took while it ran, which on-CPU holds: CI saw 332 ms on a loaded host),
# 1500 ms asleep (a timed sleep: 5% covers a timer's slack
# and a wakeup on a loaded machine), and the run's wall time is the
# worker's life plus the process's start and end around it (50 ms).
within "a stalled FIFO reader: the worker's on-CPU time less steal is its 300 ms (ms)" \
	"$(jq -r '.runs[0].threads[] | select(.comm == "spinsleep") | (.on_cpu_ns - .steal_ns) / 1e6' slow.json)" 300 5
within "a stalled FIFO reader: the worker's sleep is its 1500 ms (ms)" \
	"$(jq -r '.runs[0].threads[] | select(.comm == "spinsleep") | .sleeping_ns / 1e6' slow.json)" 1500 5
at_most "a stalled FIFO reader: the run's wall time is the worker's life, and no more (ms beyond it)" \
	"$(jq -r '.runs[0] | (.wall_ns - (.threads[] | select(.comm == "spinsleep") | .lifetime_ns)) / 1e6' slow.json)" 50

# A reader that stays away past the run's end: the end waits 2 s for it,
# no more (tsarun is gone before the reader comes back), and the lines still
# waiting are counted unsent.
mkfifo gone.fifo
( { IFS= read -r l; printf '%s\n' "$l"; sleep 6; date +%s%N >gone.back; cat; } <gone.fifo >gone.got ) &
rp=$!
"$TSARUN" -q --interval 10ms --stream gone.fifo --json gone.json -- "$WORKLOADS/spin_sleep" 10 800 2>gone.err
gone_end=$(date +%s%N)
wait $rp
validate gone.json
gs() { jq -r ".runs[0].stream.$1" gone.json; }
at_least "a reader away past the run's end: lines were left unsent" "$(gs unsent)" 1
equal "a reader away past the run's end: lines made = written + dropped + unsent" \
	"$(gs lines)" "$(($(gs written) + $(gs dropped) + $(gs unsent)))"
# The wait is poll()'s, in whole milliseconds: 250 ms beyond it leaves room
# for tsarun waking late on a loaded machine; the reader's 6 s would not fit.
equal "a reader away past the run's end: the wait's bound is 2 s" "$(gs final_wait_limit_ns)" 2000000000
at_least "a reader away past the run's end: the end waited its 2 s for the reader (ms)" \
	"$(jq -r '.runs[0].stream.final_wait_ns / 1e6' gone.json)" 2000
at_most "... and no more (ms)" "$(jq -r '.runs[0].stream.final_wait_ns / 1e6' gone.json)" 2250
at_least "a reader away past the run's end: tsarun had exited before the reader came back (ms between)" \
	"$((($(cat gone.back) - gone_end) / 1000000))" 1
check "a reader away past the run's end: stderr says how many were unsent after the 2 s wait" \
	grep -q "$(gs unsent) unsent when the wait at the run's end ran out (2 s)" gone.err
# What the reader found when it came back: the lines written, whole, and
# the beginning of one more only when the artifact says one was begun.
equal "a reader away past the run's end: it got the lines written whole" \
	"$(grep -c '}$' gone.got)" "$(gs written)"
if [ "$(gs partial_line)" = true ]; then
	check "... and the line begun, cut (partial_line)" test "$(tail -c 1 gone.got | od -An -c | tr -d ' ')" != '\n'
	head -n "$(gs written)" gone.got >gone.whole
else
	check "... and nothing else (partial_line false)" test "$(tail -c 1 gone.got | od -An -c | tr -d ' ')" = '\n'
	cp gone.got gone.whole
fi
lines_valid "a reader away past the run's end" gone.whole

# Signals still reach the command while the reader is stopped: one second
# after the first line (the FIFO has been full for most of it), SIGTERM to
# tsarun goes on to the command at once. A tsarun stuck in a write would
# pass it on only when the reader came back, 4 s later.
mkfifo sig.fifo
( { IFS= read -r l; printf '%s\n' "$l" >sig.first; sleep 4; cat >/dev/null; } <sig.fifo ) &
rp=$!
"$TSARUN" -q --interval 10ms --stream sig.fifo --json sig.json -- "$WORKLOADS/spin_sleep" 10 8000 2>sig.err &
tp=$!
for _ in $(seq 200); do [ -s sig.first ] && break; sleep 0.05; done
sleep 1
kill -TERM $tp
wait $tp
equal "SIGTERM with the FIFO's reader stopped: tsarun exits as the command did (128 + SIGTERM)" "$?" 143
wait $rp
validate sig.json
equal "SIGTERM with the FIFO's reader stopped: the command was killed by it" \
	"$(jq -r '.runs[0] | "\(.interrupted_by) \(.exit.signal)"' sig.json)" "SIGTERM 15"
# The run's wall time: up to the first line (a 10 ms tick, the reader's
# wakeup and the 50 ms polls above), the second, and the signal's way to
# the command (a few ms). At least 1 s: the line came after the release.
# At most 1.5 s leaves room for a loaded machine; a tsarun stuck in its
# write would have passed the signal on after 4 s.
wall_ms=$(jq -r '.runs[0].wall_ns / 1e6' sig.json)
at_least "SIGTERM with the FIFO's reader stopped: the command ran until the signal (ms)" "$wall_ms" 1000
at_most "... and ended on it, while the reader still slept (ms)" "$wall_ms" 1500
at_least "SIGTERM with the FIFO's reader stopped: lines were waiting or dropped (the FIFO was full)" \
	"$(jq -r '.runs[0].stream | .lines - .written' sig.json)" 1

# A pipe (--stream /dev/stdout | slow consumer) and stderr (--stream -)
# are the command's too: tsarun writes its lines through a descriptor of its
# own, non-blocking, and the command's stays as it was (blocking). The
# consumer takes one line and sleeps 2.5 s, as the FIFO's reader above.
nonblock() { # FILE with a line "flags: OCTAL" from /proc/PID/fdinfo: is O_NONBLOCK (04000) set?
	local f
	f=$(awk '/^flags:/ { print $2 }' "$1")
	[ -n "$f" ] || { echo "no flags in $1"; return; }
	[ $((0$f & 04000)) -ne 0 ] && echo set || echo clear
}
"$TSARUN" -q --interval 10ms --stream /dev/stdout --stream-backlog 16K --json pipe.json -- \
	sh -c 'cat /proc/self/fdinfo/1 >pipe.flags; exec "$0" 300 1200' "$WORKLOADS/spin_sleep" 2>pipe.err |
	{ IFS= read -r l; printf '%s\n' "$l"; sleep 2.5; cat; } >pipe.got
validate pipe.json
equal "--stream /dev/stdout into a slow pipe: written without blocking, lines dropped and counted" \
	"$(jq -r '.runs[0].stream | "\(.nonblocking) \(.dropped > 0) \(.lines == .written + .dropped + .unsent)"' pipe.json)" \
	"true true true"
equal "--stream /dev/stdout into a slow pipe: the consumer got the lines written, whole" \
	"$(wc -l <pipe.got)" "$(jq -r '.runs[0].stream.written' pipe.json)"
lines_valid "--stream /dev/stdout into a slow pipe" pipe.got
equal "--stream /dev/stdout: the command's stdout is not made non-blocking" "$(nonblock pipe.flags)" clear
mkfifo errp.fifo
( { IFS= read -r l; printf '%s\n' "$l"; sleep 2.5; cat; } <errp.fifo >errp.got ) &
rp=$!
"$TSARUN" -q --interval 10ms --stream - --stream-backlog 16K --json errp.json -- \
	sh -c 'cat /proc/self/fdinfo/2 >errp.flags; exec "$0" 300 1200' "$WORKLOADS/spin_sleep" 2>errp.fifo
wait $rp
validate errp.json
equal "--stream - into a slow pipe: written without blocking, lines dropped and counted" \
	"$(jq -r '.runs[0].stream | "\(.nonblocking) \(.dropped > 0) \(.lines == .written + .dropped + .unsent)"' errp.json)" \
	"true true true"
equal "--stream -: the command's stderr is not made non-blocking" "$(nonblock errp.flags)" clear
grep '^{' errp.got >errp.lines
lines_valid "--stream - into a slow pipe" errp.lines

# A reader that closes early (head): no SIGPIPE for tsarun, the command runs
# to its end, and the run says the stream stopped and why.
mkfifo early.fifo
( head -n 2 <early.fifo >early.got ) &
rp=$!
"$TSARUN" -q --interval 10ms --stream early.fifo --json early.json -- "$WORKLOADS/spin_sleep" 100 400 2>early.err
equal "a reader that closes early: tsarun is not killed by SIGPIPE, it exits as the command did" "$?" 0
wait $rp
validate early.json
check "a reader that closes early: stderr says the reader left (EPIPE)" grep -q "no reader left (EPIPE)" early.err
equal "a reader that closes early: the artifact says why streaming stopped" \
	"$(jq -r '.runs[0].stream.error' early.json)" "the reader closed the stream (EPIPE): streaming stopped"
equal "a reader that closes early: the command ran to its end" "$(jq -r '.runs[0].exit.code' early.json)" 0
at_least "a reader that closes early: lines were left unsent" "$(jq -r '.runs[0].stream.unsent' early.json)" 1
equal "a reader that closes early: lines made = written + dropped + unsent" \
	"$(jq -r '.runs[0].stream | .lines - .written - .dropped - .unsent' early.json)" 0
equal "a reader that closes early: it got its 2 lines" "$(wc -l <early.got)" 2

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
