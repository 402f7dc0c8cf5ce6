#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --critical-path (and --timeline): the path walked back from the command's
# end along the wakeups, on workloads whose path is known
# (tests/workloads/critpath.c). Its segments cover the run: they sum to the
# wall time (to the nanosecond by construction; the test allows 1%) and
# follow one another without a gap. Times on the path are on-CPU time, so
# the bounds hold on a loaded machine: the runqueue waits around them grow,
# the CPU time does not. On a CPU a thread is there for its own work and for
# the steal and interrupts of its slices (on-CPU time counts them, the
# thread's clock does not; a host once took 48 ms of a 400 ms spin): so the
# path is held to the threads' on-CPU time, and their work (on-CPU less
# steal) to what the workload spins.
. "$(dirname "$0")/../lib.sh"
need_bpf "critical path tests"
cd "$T_TMP"
CP=$WORKLOADS/critpath

# Path time (ms) of the groups matching a jq condition on a group.
path_ms() { # FILE COND
	jq -r "[.runs[-1].critical_path.groups[] | select($2) | .total_ns] | add // 0 | . / 1e6 | floor" "$1"
}
# On-CPU time (ms) of the threads whose comm matches a regex, and their work:
# on-CPU less steal.
oncpu_ms() { # FILE REGEX
	jq -r --arg re "$2" '[.runs[-1].threads[] | select(.comm | test($re)) | .on_cpu_ns] | add // 0 | . / 1e6 | floor' "$1"
}
work_ms() { # FILE REGEX
	jq -r --arg re "$2" '[.runs[-1].threads[] | select(.comm | test($re)) | .on_cpu_ns - .steal_ns] | add // 0 | . / 1e6 | floor' "$1"
}
covers() { # NAME FILE
	local wall sum gaps
	wall=$(jqv "$2" '.runs[-1].wall_ns')
	sum=$(jqv "$2" '[.runs[-1].critical_path.segments[][1]] | add')
	within "$1: the segments sum to the wall time" "$sum" "$wall" 1
	gaps=$(jq '.runs[-1].critical_path.segments as $s | [range(1; $s | length) | select($s[.][0] != $s[. - 1][0] + $s[. - 1][1])] | length' "$2")
	equal "$1: the segments follow one another without a gap" "$gaps" 0
}

# A pool of four workers spinning 100/200/300/400 ms, joined by main: the
# path holds the last worker's CPU, and none of the others'.
"$TSARUN" --critical-path --json pool.json -- "$CP" pool 100 2>pool.err
check "pool: runs" test -s pool.json
validate pool.json
covers pool pool.json
within "pool: cp-w4 spins its 400 ms (on-CPU less steal)" "$(work_ms pool.json '^cp-w4$')" 400 5
within "pool: the path holds cp-w4's on-CPU time" \
	"$(path_ms pool.json '.comm == "cp-w4" and .kind == "on_cpu"')" "$(oncpu_ms pool.json '^cp-w4$')" 2
at_most "pool: and not the other workers' CPU (ms)" \
	"$(path_ms pool.json '(.comm // "" | test("^cp-w[123]$")) and .kind == "on_cpu"')" 2
equal "pool: the path is complete" "$(jqv pool.json '.runs[-1].critical_path.complete')" true
check "pool: the terminal shows the path after the table" grep -q "^critical path: " pool.err
check "pool: its top line is cp-w4" sh -c "grep -A3 '^critical path' pool.err | grep -q cp-w4"
long=$(awk '/^critical path/,/^  sources:/' pool.err | grep -v '^  sources:' | awk 'length > 80' | head -1)
equal "pool: the path's lines fit 80 columns" "$long" ""

# A ring A -> B -> C -> A through pipes, 10 items, 10/20/30 ms each: the
# path alternates through the three, 1:2:3.
"$TSARUN" --critical-path -q --json ring.json -- "$CP" ring 10 10
covers ring ring.json
for t in a:100 b:200 c:300; do
	c=cp-${t%:*} n=${t#*:}
	within "ring: $c works $n ms (on-CPU less steal)" "$(work_ms ring.json "^$c\$")" "$n" 10
	within "ring: $c on the path, its on-CPU time" \
		"$(path_ms ring.json ".comm == \"$c\" and .kind == \"on_cpu\"")" "$(oncpu_ms ring.json "^$c\$")" 10
done
# The on-CPU segments of the three, in time order, merged by thread: a, b, c, a, b, c, ...
seq=$(jq -r '.runs[-1].critical_path as $p | [$p.segments[] | $p.groups[.[2]] | select(.kind == "on_cpu" and (.comm | test("^cp-")) ) | .comm] | reduce .[] as $c ([]; if (.[-1] // "") == $c then . else . + [$c] end) | join(" ")' ring.json)
# Before the items, the start: a forks b and c and waits for both to be ready
# (the last one's start-up is on the path); after them, a's exit.
want="$(for i in $(seq 10); do printf 'cp-a cp-b cp-c '; done)cp-a"
case $seq in
*"$want") ok "ring: the path alternates a b c, item by item (a's exit last)" ;;
*) not_ok "ring: the path alternates a b c, item by item (a's exit last)" "got '$seq'" ;;
esac

# A lock convoy: four threads take one mutex five times each for 10 ms:
# the path goes through each holder in turn, 50 ms each.
"$TSARUN" --critical-path -q --json convoy.json -- "$CP" convoy 4 5 10
covers convoy convoy.json
for l in 1 2 3 4; do
	at_least "convoy: cp-l$l holds the lock on the path in its turn (ms)" \
		"$(path_ms convoy.json ".comm == \"cp-l$l\" and .kind == \"on_cpu\"")" 10
done
within "convoy: the holders work 200 ms (on-CPU less steal)" "$(work_ms convoy.json '^cp-l')" 200 15
within "convoy: the holders' on-CPU time on the path" \
	"$(path_ms convoy.json '(.comm // "" | test("^cp-l")) and .kind == "on_cpu"')" "$(oncpu_ms convoy.json '^cp-l')" 15
hand=$(jq '.runs[-1].critical_path as $p | [$p.segments[] | select(.[3] != null) | $p.groups[.[2]].comm as $from | select($from | test("^cp-l"))] | length' convoy.json)
at_least "convoy: the path jumps from holder to holder at the unlocks" "$hand" 15

# Direct I/O: the waits are a segment named for the block I/O completion,
# about the time the workload measured in its calls (which also holds the
# calls' CPU and the wait for a CPU after each completion).
mkdir -p /var/tmp/tsarun-cp.$$ && trap 'rm -rf "$T_TMP" /var/tmp/tsarun-cp.$$' EXIT
io=$("$TSARUN" --critical-path -q --json dio.json -- "$CP" dio /var/tmp/tsarun-cp.$$ 200 | sed -n 's/^io_wait_ns=//p')
covers dio dio.json
blk=$(jq '[.runs[-1].critical_path.groups[] | select(.kind == "blocked" and (.what | startswith("block I/O completion"))) | .total_ns] | add // 0' dio.json)
at_most "dio: the block I/O completion segments are no more than the I/O calls took" "$blk" "$io"
within "dio: they are the kernel's block I/O delay of the thread (taskstats)" "$blk" \
	"$(jq '.runs[-1].threads[] | select(.comm == "cp-dio") | .delays.block_io.total_ns' dio.json)" 15

# bash: `wait` on a background job follows into the job.
cat > wait.sh <<EOS
"$CP" pool 50 &
wait
EOS
"$TSARUN" --critical-path -q --json bash.json -- bash wait.sh
covers bash bash.json
job=$(path_ms bash.json '.kind == "on_cpu" and .comm == "cp-w4"')
# The worker spins 200 ms of its own CPU time; on a CPU it is there for that
# and for the steal and interrupts of its slices (on-CPU time counts them).
w4=$(jq '[.runs[-1].threads[] | select(.comm == "cp-w4") | .on_cpu_ns] | add / 1e6 | floor' bash.json)
at_least "bash: the job's worker spun its 200 ms (on-CPU, ms)" "$w4" 200
within "bash: the path follows wait into the background job's worker, all of its on-CPU time" "$job" "$w4" 5

# --timeline turns it on too; the Chrome trace has the path's track; the
# flame graph of the path is written with --flame.
"$TSARUN" --timeline --flame -q --json tl.json -- "$CP" ring 3 5
equal "--timeline: the path is there too" "$(jqv tl.json '.runs[-1].critical_path | type')" object
check "trace: a critical path track" jq -e '[.traceEvents[] | select(.name == "critical path" or (.cat // "") == "critical_path")] | length > 0' tl.trace.json
check "trace: its wakeup flow arrows" jq -e '[.traceEvents[] | select(.ph == "s" and .cat == "critical_path")] | length > 0' tl.trace.json
check "flame: tl.critpath.folded" test -s tl.critpath.folded
check "flame: tl.critpath.svg" grep -q "<svg" tl.critpath.svg
fsum=$(awk '{s += $NF} END {print s}' tl.critpath.folded)
within "flame: the folded path sums to the wall time" "$fsum" "$(jqv tl.json '.runs[-1].wall_ns')" 1
"$TSARUN" report tl.json --format table 2>&1 >/dev/null | grep -q "^critical path" || "$TSARUN" report tl.json --format table | grep -q "^critical path"
check "report: the path again from the artifact" test $? -eq 0
