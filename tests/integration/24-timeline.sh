#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --timeline: every state interval of every thread, from the barrier's
# release to its exit. The switch path sends each interval with the very
# start and end its account adds (bpf/sched.bpf.c, tl_interval()), so a
# thread's intervals, by state, sum to its closing account to the
# nanosecond, less what the ring buffer lost (lost_ns, counted per thread):
# the tolerance is 0 and any difference is an interval some path forgot.
# Likewise the intervals follow one another without a gap, and what they do
# not cover is the thread's residual. tsarun.trace.json and tsarun report
# --format trace are the same Chrome trace.
. "$(dirname "$0")/../lib.sh"
need_bpf "timeline tests"
cd "$T_TMP"
NCPU=$(nproc)

# Per thread: the account less the intervals' sum less the lost time, by
# state (all 0); gaps between consecutive intervals (0); the time before
# the first and after the last interval against the residual (equal).
SUMS='.runs[-1] as $r | [$r.timeline.threads[] as $g
  | ($r.threads[] | select(.tid == $g.tid and .task_start_ns == $g.task_start_ns)) as $t
  | def s(k): [$g.intervals[] | select(.[2] as $x | k | index($x)) | .[1]] | add // 0;
  {tid: $g.tid, comm: $t.comm,
   diff: (($t.on_cpu_ns - s([0,1])) + ($t.runqueue_ns - s([2,3,4])) + ($t.sleeping_ns - s([5]))
          + ($t.uninterruptible_ns - s([6])) + ($t.stopped_ns - s([7])) - $g.lost_ns),
   states_off: ([($t.on_cpu_ns == s([0,1])), ($t.runqueue_ns == s([2,3,4])),
                 ($t.sleeping_ns == s([5])), ($t.uninterruptible_ns == s([6])),
                 ($t.stopped_ns == s([7]))] | map(select(. | not)) | length),
   gaps: ([range(1; $g.intervals | length) as $i
           | $g.intervals[$i][0] - ($g.intervals[$i-1][0] + $g.intervals[$i-1][1])
           | select(. != 0)] | length),
   uncovered: (if ($g.intervals | length) == 0 then $t.lifetime_ns
               else ($g.intervals[0][0] - $t.start_ns)
                    + ($t.end_ns - ($g.intervals[-1][0] + $g.intervals[-1][1])) end),
   residual: $t.residual_ns, lost: $g.lost_events}]'

# The order the mechanism allows: a sleep (S, D, T) ends in a wakeup, so it
# is followed by a runqueue wait after a wakeup (or by its CPU if the wait
# was 0 ns, which is not sent); a preemption wait follows a slice on a CPU;
# every runqueue wait ends on a CPU; a new thread waits first. On-CPU rows
# name a CPU that exists; the others none. Prints the violations.
ORDER='.runs[-1].timeline.threads[] as $g | $g.intervals as $v
  | range(0; $v | length) as $i | $v[$i] as $x | ($v[$i+1] // null) as $n
  | select(
      ($x[2] <= 1 and ($x[3] == null or $x[3] < 0 or $x[3] >= '"$NCPU"'))
      or ($x[2] > 1 and $x[3] != null)
      or ($x[2] >= 5 and $n != null and ($n[2] != 2 and $n[2] > 1))
      or ($x[2] >= 2 and $x[2] <= 4 and $n != null and $n[2] > 1)
      or ($x[2] == 3 and $i > 0 and $v[$i-1][2] > 1)
      or ($x[2] == 4 and $i > 0))
  | "\($g.tid) row \($i): \($x) then \($n)"'

check_closes() { # NAME FILE
	local out
	out=$(jq -c "$SUMS | map(select(.diff != 0 or .states_off != 0 or .gaps != 0 or .uncovered != .residual))" "$2")
	equal "$1: every thread's intervals sum to its account, state by state, with no gap, residual uncovered" "$out" "[]"
	out=$(jq -r "$ORDER" "$2" | head -5)
	equal "$1: the intervals follow in the order the mechanism allows" "$out" ""
}

# With losses, what is left still closes: kept + lost = the account.
check_closes_lossy() { # NAME FILE
	equal "$1: every thread's intervals and lost time sum to its account" \
		"$(jq -c "$SUMS | map(select(.diff != 0))" "$2")" "[]"
}

# 1. One thread spins 300 ms of its CPU time, then sleeps 200 ms. On 6.2
# and later --timeline has a loader of its own written at build time; a run
# that loads otherwise falls back without a word, so -v says which loaded.
kver=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
if [ "$kver" -ge 6002 ]; then
	check "--timeline: the loader written at build time for it loads the probe" \
		sh -c "'$TSARUN' -v --timeline --out-dir '$T_TMP/v' -- true 2>&1 | grep -q '^tsarun: ebpf: .*loaded by the kernel.s loader program, written at build time'"
fi
"$TSARUN" -q --timeline --out-dir "$T_TMP/ss" -- "$WORKLOADS/spin_sleep" 300 200
J=$T_TMP/ss/tsarun.json
validate "$J"
equal "spin_sleep: the timeline is complete" "$(jq '.runs[0].timeline.complete and .runs[0].quality.timeline.complete' "$J")" true
equal "spin_sleep: one timeline entry per thread" "$(jq '.runs[0].timeline.threads | length' "$J")" "$(jq '.runs[0].threads | length' "$J")"
check_closes spin_sleep "$J"
SS='.runs[0] as $r | ($r.threads[] | select(.comm == "spinsleep")) as $t
  | $r.timeline.threads[] | select(.tid == $t.tid) | .intervals'
# nanosleep(200 ms) ends at its timer: at least 200 ms, later by the timer
# slack (50 us) and the expiry's latency; waiting for the CPU after it is
# runqueue, not sleep.
equal "spinsleep: one sleep of 200 ms or more" "$(jq "[$SS[] | select(.[2] == 5 and .[1] >= 200000000)] | length" "$J")" 1
at_most "spinsleep: that sleep ends within 5 ms of its timer (ms)" \
	"$(jq "[$SS[] | select(.[2] == 5 and .[1] >= 200000000)][0][1] / 1e6" "$J")" 205
# Spinning on its own CPU time, it is on a CPU or preempted until then: it
# does not sleep (its thread start aside: a new thread waits first).
equal "spinsleep: before the long sleep only on-CPU and runqueue rows" \
	"$(jq "$SS as \$v | [range(0; [\$v[] | .[1] < 200000000 or .[2] != 5] | index(false)) | \$v[.] | select(.[2] >= 5)] | length" "$J")" 0
at_least "spinsleep: on-CPU rows before the sleep sum to its 300 ms of CPU (ms)" \
	"$(jq "[$SS[] | select(.[2] <= 1) | .[1]] | add / 1e6" "$J")" 300
equal "spinsleep: after the sleep, a wakeup (or its CPU at once)" \
	"$(jq "$SS as \$v | [range(0; \$v | length) | select(\$v[.][2] == 5 and \$v[.][1] >= 200000000) | \$v[. + 1][2]][0] | . == 2 or . == 0" "$J")" true
# Names: the command as the spawner forked it, then what it exec'd.
equal "spin_sleep: the command's names before and after its exec" \
	"$(jq -c '.runs[0] as $r | ($r.threads[] | select(.tid == $r.root_pid)) as $t | $r.timeline.threads[] | select(.tid == $t.tid) | [.names[] | [.[1], .[2]]] | .[-1]' "$J")" '[1,"spin_sleep"]'
at_least "spin_sleep: it had a name before the exec" \
	"$(jq '.runs[0] as $r | $r.timeline.threads[] | select(.tid == $r.root_pid) | .names | length' "$J")" 2

# The trace tsarun wrote, and the one report writes from the artifact: the same.
T=$T_TMP/ss/tsarun.trace.json
check "the trace beside the artifact is JSON" jq -e .traceEvents "$T" >/dev/null
"$TSARUN" report "$J" --format trace >"$T_TMP/report.trace.json"
check "report --format trace writes the trace --timeline wrote" cmp "$T" "$T_TMP/report.trace.json"
equal "trace: a state slice per interval" \
	"$(jq '[.traceEvents[] | select(.ph == "X" and .cat == "state")] | length' "$T")" \
	"$(jq '.runs[0].timeline.intervals' "$J")"
# (Pids from 4194304 up, beyond any pid, are the critical path's and the CPUs' tracks.)
equal "trace: a named track per thread, in its process" \
	"$(jq -c '[.traceEvents[] | select(.ph == "M" and .name == "thread_name" and .pid < 4194304) | [.pid, .tid]] | sort' "$T")" \
	"$(jq -c '[.runs[0].threads[] | [.pid, .tid]] | sort' "$J")"
equal "trace: every state slice lies within its thread's life slice" \
	"$(jq '. as $d | [.traceEvents[] | select(.ph == "X" and .cat == "thread") | {key: "\(.tid)", value: [.ts, .ts + .dur]}] | from_entries as $life
	  | [$d.traceEvents[] | select(.ph == "X" and .cat == "state") | select(.ts < $life["\(.tid)"][0] - 0.0005 or .ts + .dur > $life["\(.tid)"][1] + 0.0005)] | length' "$T")" 0
# Before its exec the command was tsarun's spawner: a name no user gave it.
equal "trace: the command's track is named after it, not tsarun's spawner" \
	"$(jq -r --argjson p "$(jq .runs[0].root_pid "$J")" '.traceEvents[] | select(.ph == "M" and .name == "thread_name" and .tid == $p) | .args.name' "$T")" spin_sleep
equal "trace: no name of tsarun's own anywhere in it" "$(grep -c tsarun-spawner "$T")" 0
equal "artifact: no name of tsarun's own in the timeline's names either" "$(grep -c tsarun-spawner "$J")" 0
equal "... the command before its exec is shown as such" \
	"$(jq -r '[.runs[0].timeline.threads[].names[] | select(.[1] == 0) | .[2]] | index("(before exec)") != null' "$J")" true
equal "trace: the exec mark says what it exec'd" \
	"$(jq -r --argjson p "$(jq .runs[0].root_pid "$J")" '[.traceEvents[] | select(.ph == "i" and .cat == "exec" and .tid == $p)][0].args | [has("from"), .to] | map(tostring) | join(" ")' "$T")" "false spin_sleep"
equal "trace: the life slice carries the account" \
	"$(jq --argjson p "$(jq .runs[0].root_pid "$J")" '.traceEvents[] | select(.ph == "X" and .cat == "thread" and .tid == $p) | .args | has("on_cpu_ns") and has("runqueue_ns") and has("sleeping_ns") and has("residual_ns")' "$T")" true

# 2. Two threads pinned to one CPU, 300 ms of CPU each: a CPU runs one
# thread at a time, and the switch that ends one slice starts the next at
# the same timestamp, so on-CPU rows of one CPU never overlap (inferred
# ones aside: their start comes from sum_exec_runtime).
"$TSARUN" -q --timeline --json "$T_TMP/p.json" -- "$WORKLOADS/pinned" 300 0
J=$T_TMP/p.json
validate "$J"
check_closes pinned "$J"
equal "pinned: no two on-CPU rows of one CPU overlap" \
	"$(jq '[.runs[0].timeline.threads[] | .intervals[] | select(.[2] == 0)] | group_by(.[3])
	  | map(sort_by(.[0]) | . as $c | [range(1; length) | select($c[.][0] < $c[. - 1][0] + $c[. - 1][1])] | length) | add // 0' "$J")" 0
for th in pinned-a pinned-b; do
	# Each waits while the other runs: about the other's 300 ms of CPU.
	at_least "$th: preempted, waiting for its CPU, 100 ms or more (ms)" \
		"$(jq --arg c "$th" '.runs[0] as $r | ($r.threads[] | select(.comm == $c)) as $t | [$r.timeline.threads[] | select(.tid == $t.tid) | .intervals[] | select(.[2] == 3) | .[1]] | add / 1e6' "$J")" 100
	equal "$th: its slices after pinning are on CPU 0" \
		"$(jq --arg c "$th" '.runs[0] as $r | ($r.threads[] | select(.comm == $c)) as $t | [$r.timeline.threads[] | select(.tid == $t.tid) | .intervals[] | select(.[2] == 0)] | .[-1][3]' "$J")" 0
done

# 2b. Switch-ins the kernel did not trace (made on purpose: every third is
# left unseen) are repaired from sum_exec_runtime: their on-CPU rows are
# sent as inferred, and the timeline still closes on the account.
TSARUN_TEST_DROP_SWITCH_IN=3 "$TSARUN" -q --timeline --json "$T_TMP/d.json" -- "$WORKLOADS/mutex_wait" 50 30
J=$T_TMP/d.json
validate "$J"
check_closes "untraced switch-ins" "$J"
# One row per repair that found CPU time (sum_exec_runtime grew: in practice every one).
at_least "untraced switch-ins: repaired ones are inferred on-CPU rows" \
	"$(jq '[.runs[0].timeline.threads[].intervals[] | select(.[2] == 1)] | length' "$J")" 1
at_most "untraced switch-ins: no more inferred rows than repairs" \
	"$(jq '[.runs[0].timeline.threads[].intervals[] | select(.[2] == 1)] | length' "$J")" \
	"$(jq '.runs[0].quality.untraced_switch_ins' "$J")"

# 2c. Every switch-in unseen: the command's first switch-out places its
# release's wakeup and its first slice from the counters read at its mark
# (first_in_unseen()); the timeline has them, and closes.
TSARUN_TEST_DROP_SWITCH_IN=1 "$TSARUN" -q --timeline --json "$T_TMP/d1.json" -- "$WORKLOADS/burn" 30
J=$T_TMP/d1.json
validate "$J"
check_closes "no switch-in seen" "$J"
equal "no switch-in seen: the command's first row on a CPU is inferred" \
	"$(jq '.runs[0] as $r | [$r.timeline.threads[] | select(.tid == $r.root_pid) | .intervals[] | select(.[2] <= 1)][0][2]' "$J")" 1

# 2d. --interval reads the live threads at every tick with the survivors'
# iterator: its snapshots send nothing (or each tick would send the open
# intervals again), and the timeline still closes on the account.
"$TSARUN" -q --timeline --interval 20ms --out-dir "$T_TMP/iv" -- "$WORKLOADS/spin_sleep" 100 100
J=$T_TMP/iv/tsarun.json
validate "$J"
at_least "--interval: ticks were streamed" "$(wc -l <"$T_TMP/iv/tsarun.jsonl")" 5
check_closes "--interval" "$J"

# 3. A thread that execs from another than the main thread takes the main
# thread's tid: its timeline is still its own (matched by the tid it had).
"$TSARUN" -q --timeline --json "$T_TMP/x.json" -- "$WORKLOADS/execthread" 100 100 100
J=$T_TMP/x.json
validate "$J"
check_closes execthread "$J"
equal "execthread: no interval without its thread" "$(jq '.runs[0].timeline.unmatched_intervals' "$J")" 0
at_least "execthread: the thread that exec'd has its intervals" \
	"$(jq '.runs[0] as $r | ($r.threads[] | select(.tid_before_exec)) as $t | [$r.timeline.threads[] | select(.tid == $t.tid and .task_start_ns == $t.task_start_ns) | .intervals[]] | length' "$J")" 3

# 4. Losses are counted, never hidden: a 4 KiB ring buffer (about 80
# events) under a ping-pong (a switch every few microseconds), read only
# when the run ends (a test hook: how much a reader keeps up depends on
# the machine's load), cannot hold what it is sent.
TSARUN_TEST_TIMELINE_STALL=1 "$TSARUN" --timeline --timeline-buffer 4K --json "$T_TMP/l.json" -- \
	"$WORKLOADS/pingpong" 20000 0 2>"$T_TMP/l.err"
J=$T_TMP/l.json
validate "$J"
at_least "lossy: events were lost, and counted" "$(jq '.runs[0].quality.timeline.lost_events' "$J")" 1
equal "lossy: the timeline says it is incomplete" "$(jq '.runs[0].timeline.complete, .runs[0].quality.timeline.complete' "$J" | sort -u)" false
equal "lossy: the kernel's count of losses is the threads' (names included)" \
	"$(jq '.runs[0].timeline | .lost_events == ([.threads[].lost_events] | add)' "$J")" true
check_closes_lossy lossy "$J"
check "lossy: stderr says so, and what to do" grep -q "timeline incomplete.*events lost.*--timeline-buffer" "$T_TMP/l.err"
equal "lossy: the trace says so too" "$(jq .otherData.timeline_complete "$T_TMP/l.trace.json")" false

# 5. The bound: the first intervals are kept, the rest counted with their time.
"$TSARUN" --timeline --timeline-max 20 --json "$T_TMP/m.json" -- "$WORKLOADS/pinned" 100 0 2>"$T_TMP/m.err"
J=$T_TMP/m.json
validate "$J"
equal "bounded: 20 intervals kept" "$(jq '.runs[0].timeline.intervals' "$J")" 20
at_least "bounded: the rest counted" "$(jq '.runs[0].timeline.beyond_bound.intervals' "$J")" 1
# Nothing lost in the kernel here: kept + beyond the bound = every account.
equal "bounded: kept and counted sum to the threads' accounts" \
	"$(jq '.runs[0] | ([.timeline.threads[].intervals[][1]] | add) + .timeline.beyond_bound.total_ns + .timeline.lost_ns
	  == ([.threads[] | .on_cpu_ns + .runqueue_ns + .sleeping_ns + .uninterruptible_ns + .stopped_ns] | add)' "$J")" true
equal "bounded: the cut is no earlier than the first interval kept ended" \
	"$(jq '.runs[0].timeline | .beyond_bound.truncated_at_ns >= ([.threads[].intervals[] | .[0] + .[1]] | min)' "$J")" true
check "bounded: stderr says where it was cut" grep -q "beyond --timeline-max, cut at" "$T_TMP/m.err"
equal "bounded: the trace marks the cut" \
	"$(jq '[.traceEvents[] | select(.ph == "i" and .s == "g")] | length' "$T_TMP/m.trace.json")" 1

# 5b. report prints the table the run printed, its timeline line included.
"$TSARUN" --color never --timeline --out-dir "$T_TMP/tb" -- "$WORKLOADS/spin_sleep" 20 10 2>"$T_TMP/live.txt"
"$TSARUN" report --color never "$T_TMP/tb/tsarun.json" >"$T_TMP/again.txt"
check "report: the table the run printed, line for line" cmp -s <(grep -v '^tsarun: wrote ' "$T_TMP/live.txt") "$T_TMP/again.txt"
check "... and the live run said where the trace went" grep -qxF "tsarun: wrote tsarun.trace.json in $T_TMP/tb (ui.perfetto.dev opens the trace)" "$T_TMP/live.txt"
check "report: with its timeline line" grep -q "^  timeline: [0-9]* intervals, complete" "$T_TMP/again.txt"

# 6. Without --timeline the trace is each thread's life, and says why.
"$TSARUN" -q --json "$T_TMP/n.json" -- "$WORKLOADS/spin_sleep" 20 10
equal "no timeline key without --timeline" "$(jq '.runs[0] | has("timeline")' "$T_TMP/n.json")" false
"$TSARUN" report "$T_TMP/n.json" --format trace >"$T_TMP/n.trace" 2>"$T_TMP/n.err"
equal "no timeline: one slice per thread, its life" \
	"$(jq '[.traceEvents[] | select(.ph == "X")] | map(.cat) | unique' "$T_TMP/n.trace" | jq -c .)" '["thread"]'
equal "no timeline: as many slices as threads" \
	"$(jq '[.traceEvents[] | select(.ph == "X")] | length' "$T_TMP/n.trace")" "$(jq '.runs[0].threads | length' "$T_TMP/n.json")"
check "no timeline: the trace says --timeline gives states" jq -e '.otherData.note | test("--timeline")' "$T_TMP/n.trace" >/dev/null
check "no timeline: so does stderr" grep -q "has no timeline.*--timeline" "$T_TMP/n.err"

# 7. What cannot work together is refused, saying why (125).
"$TSARUN" --timeline -b proc -- true 2>"$T_TMP/r.err"
equal "--timeline with --backend proc is refused" "$?" 125
check "... saying it needs eBPF" grep -q "needs the ebpf backend" "$T_TMP/r.err"
"$TSARUN" -p $$ --timeline 2>"$T_TMP/r.err"
equal "--timeline with -p is refused" "$?" 125
check "... saying it is for running a command" grep -q "\-p: --timeline is for running a command" "$T_TMP/r.err"
