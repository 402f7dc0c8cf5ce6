#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tsarun against an independent account of the same run: perf records every
# sched_switch and sched_wakeup on the machine (its own clock, its own
# tracepoint handler) while tsarun runs a workload, and tests/perf-sched-ref
# rebuilds each thread's on-CPU, runqueue, S, D and stopped time from those
# events. Every thread perf saw whole must agree with tsarun's figures, to
# within what two tools timing one kernel operation can differ by (see the
# tolerances in tests/perf-sched-ref).
. "$(dirname "$0")/../lib.sh"
need_bpf "perf cross-check"
command -v perf >/dev/null || cannot_run "perf cross-check" "perf is not installed (Debian: linux-perf)"
cd "$T_TMP"
J=$T_TMP/run.json
REF=$REPO/tests/perf-sched-ref

# perf finds tracepoints in tracefs, which is not always mounted.
TRACEFS=/sys/kernel/tracing
if [ ! -e $TRACEFS/events/sched/sched_switch ]; then
	mount -t tracefs nodev $TRACEFS 2>/dev/null || cannot_run "perf cross-check" "cannot mount tracefs on $TRACEFS"
	trap 'umount $TRACEFS; rm -rf "$T_TMP"' EXIT
fi

# record NAME COMMAND...: run COMMAND under tsarun under perf, compare them.
# perf misses a switch now and then (a thread whose events do not form a
# whole sequence is not compared); a thread that tsarun saw switched in
# without any event is not compared either. So a workload is run again, at
# most 6 times, until the threads it is there for are compared: $WANT, a jq
# test on the comparison (by default, any thread).
# Every record is made with --timeline, so that tests/perf-sched-ref pairs
# each of a compared thread's stamps (creation, wakeups, switches, exit)
# with perf's and takes what vCPU stops moved out of each figure before its
# bound (see the pipe records below and MOVES in the script); the stops
# must stay rare (stop_checks). --timeline adds work after a switch's
# stamp, not before.
WANT='.compared > 0' WANT_AT_LEAST=
# stop_checks NAME: stamps moved by stops must be a minority, so that a
# tsarun that stamps off as a rule cannot pass its error off as stops: an
# error of more than the 10 us a stamp may be off moves every stamp of its
# kind (a tsarun adding 100 us to every switch-in had 50-67% of each
# record's stamps so moved), stops only some. At most a quarter of a
# record's stamps. Measured on the PVM guest: short threads ("threads"),
# 0.1-1.8% of a run's stamps (switches up to 1.6%, creations up to 2.2% of
# their kind: a creation's stamp is the runqueue clock read before
# wake_up_new_task() enqueues, a longer window than a switch's); messaging
# 0.1-0.6%; none off the way no stop moves a stamp, in 15,000 and 23,000
# stamps; but the small records around an idle CPU, whose wakeups and
# creations are where stops land most, 2-3 of their 21-31 (up to 13%).
# The pipe records, whose switch stamps measured 0.03-0.40%, hold theirs to
# 1% (pipe_checks).
stop_checks() {
	jq -r '.stamps | select(.paired > 0) | "# \(.stops) of \(.paired) stamps moved by stops: "
		+ (.by_kind | to_entries | map("\(.key) \(.value.stops)/\(.value.paired)") | join(", "))' \
		cmp.json 2>/dev/null | sed "s/^# /# $1: /"
	at_most "$1: stamps moved by stops (a quarter of the compared threads' stamps)" \
		"$(jq '.stamps.stops // 0' cmp.json)" "$(jq '(.stamps.paired // 0) * 0.25' cmp.json)"
}
holds() { jq -e "$1" cmp.json >/dev/null 2>&1; }
record() {
	local name=$1 try out
	shift
	for try in 1 2 3 4 5 6; do
		perf record -q -a -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_wakeup_new \
			-o perf.data -- "$TSARUN" -q --timeline --json "$J" -- "$@" >perf.out 2>&1
		python3 "$REF" perf.data "$J" --json >cmp.json 2>cmp.err
		holds "$WANT" && break
	done
	# After the tries, a weaker $WANT_AT_LEAST will do, said in the output.
	if [ -n "$WANT_AT_LEAST" ] && ! holds "$WANT" && holds "$WANT_AT_LEAST"; then
		echo "# $name: $WANT in none of $try tries; $WANT_AT_LEAST holds"
		WANT=$WANT_AT_LEAST
	fi
	check "$name: the threads it is for are compared ($WANT)" holds "$WANT" || {
		tail -n 5 perf.out cmp.err
		jq -r '.threads[] | select(.compared | not) | "tid \(.tid) \(.comm): \(.reason)"' \
			cmp.json 2>/dev/null | head -n 5
	} | sed 's/^/#   /'
	WANT='.compared > 0' WANT_AT_LEAST=
	stop_checks "$name"
	out=$(jq -r '.threads[] | select(.compared and (.over | length > 0))
		| "tid \(.tid) \(.comm): \(.over | join(", ")) off: tsarun - perf = \(.delta_ns), allowed \(.allowed_ns)"' cmp.json)
	equal "$name: every compared thread agrees with perf's events" "$(jq .disagree cmp.json)" 0 ||
		echo "$out" | sed 's/^/#   /'
}

# The workloads run on one CPU, one where perf records the switches out of
# idle. On the virtual machines this is developed on, perf records none on
# one of the two CPUs (the BPF programs on the same tracepoint see them, and
# the kernel's pcount counts them): a thread woken there would lose a
# switch-in in perf's record, and could not be compared.
allowed=$(taskset -pc $$ | sed 's/.*: //')
may_use() { # CPU: in this shell's affinity list (a,b-c,...)
	tr ',' '\n' <<<"$allowed" | awk -v c="$1" -F- '{ hi = NF > 1 ? $2 : $1 } c >= $1 && c <= hi { f = 1 } END { exit !f }'
}
CPU=
perf record -q -a -e sched:sched_switch -o idle.data -- sleep 0.3 >/dev/null 2>&1
for c in $(perf script -i idle.data -F cpu,trace 2>/dev/null |
	awk '/prev_comm=swapper/ { gsub(/[][]/, "", $1); print $1 + 0 }' | sort -un); do
	may_use "$c" && CPU=$c && break
done
[ -n "$CPU" ] || CPU=$(sed 's/[,-].*//' <<<"$allowed") # never idle: no such gap either
echo "# workloads on CPU $CPU"
ON=(taskset -c "$CPU")

# worst FIELD: the largest |tsarun - perf| of FIELD over compared threads,
# less what vCPU stops moved (stamps.moved, measured per thread), in us.
worst() {
	jq --arg f "$1" '[.threads[] | select(.compared)
		| .delta_ns[$f] - (.stamps.moved[$f] // 0) | fabs] | max / 1000' cmp.json
}
# bound US: US plus the run's steal time. The hypervisor may stop the CPU
# between the two tools' handlers at any switch; tsarun counts that time as
# steal, in whichever slice it lands (0 on a quiet host).
bound() { jq --argjson b "$1" '[.runs[0].threads[].steal_ns] | add / 1000 + $b' "$J"; }

# Two threads on one CPU, 200 ms of CPU each: on-CPU and runqueue by preemption.
# On the CPU chosen above, the kernel here leaves switch-ins of the pair
# without any event (perf's record lacks them too, so such a thread cannot
# be rebuilt), with or without perf recording: in most runs, and in all 6
# tries twice in a row once; never on the other CPU. The pair never idles,
# so the other CPU's missing switches out of idle do not matter to it: it
# runs there when there is one. Both threads are compared when a run
# allows it; one is enough to hold the figures.
PIN=$CPU
for c in $(tr ',' '\n' <<<"$allowed" | awk -F- '{ for (i = $1; i <= (NF > 1 ? $2 : $1); i++) print i }'); do
	[ "$c" != "$CPU" ] && PIN=$c && break
done
echo "# pinned on CPU $PIN"
WANT='[.threads[] | select(.compared)] | length == 2'
WANT_AT_LEAST='[.threads[] | select(.compared)] | length >= 1'
record "pinned" taskset -c "$PIN" "$WORKLOADS/pinned" 200 "$PIN"
at_most "pinned: on-CPU, worst thread (us)" "$(worst on_cpu)" "$(bound 100)"
at_most "pinned: runqueue, worst thread (us)" "$(worst runq)" "$(bound 100)"

# Sleeps: a contended mutex and a nanosleep, each thread created in the run.
record "mutex" "${ON[@]}" "$WORKLOADS/mutex_wait" 100 50
at_most "mutex: sleeping, worst thread (us)" "$(worst sleep)" "$(bound 100)"

# D: a vfork parent, started by a shell so that perf sees it created.
WANT='[.threads[] | select(.compared and .perf.disk > 150000000)] | length == 1'
record "vfork" "${ON[@]}" sh -c "$WORKLOADS/vfork_wait 200; true"
at_most "vfork: uninterruptible, worst thread (us)" "$(worst disk)" "$(bound 100)"

# Stopped: a child stops itself and is continued 100 ms after it stopped.
WANT='[.threads[] | select(.compared and .perf.stopped > 80000000)] | length == 1'
record "stopped" "${ON[@]}" sh -c 'sh -c "kill -STOP \$\$" &
	until grep -q "^[0-9]* ([^)]*) T" /proc/$!/stat; do sleep 0.01; done
	sleep 0.1; kill -CONT $!; wait'
at_most "stopped: stopped time, worst thread (us)" "$(worst stopped)" "$(bound 100)"

# Short threads: creation, a slice or two, exit.
WANT='.compared >= 250'
record "threads" "${ON[@]}" "$WORKLOADS/threads" 500 4 100

# Many wakers and sleepers: 80 threads in 4 groups passing messages over
# sockets, every one created and ending in the run.
WANT='.compared >= 40'
record "messaging" "${ON[@]}" perf bench sched messaging -t -g 2 -l 50

# A switch every 1.4 us between two threads on one CPU, 40,000 in all; about
# 40% follow a wakeup preemption. Measured on a machine whose hypervisor
# does not stop the CPU unannounced: on-CPU within 210 us of perf's per
# thread (under 10 ns a slice: the two tools' handlers run one after the
# other, at slightly different costs by the kind of switch).
#
# A hypervisor may stop the vCPU without telling the guest (no steal time):
# on a PVM guest, 2,000-3,900 times a second for 20-50 us each. A stop
# that lands between perf's handler and tsarun's program (perf's runs
# first) makes tsarun's stamp of that switch 23-90 us later than perf's,
# moving that time from the thread switched out to the one switched in:
# some 60 switches a run there, +-25 us each, up to about 200 us per
# thread from that alone (416-533 us measured in all). So these runs are
# recorded with --timeline (it adds work after the switch's stamp, not
# before), and tests/perf-sched-ref pairs each switch's two stamps: a
# tsarun stamp more than 10 us behind the run's median offset from perf's
# is such a stop, and the on-CPU time those moved is taken out before the
# bound (below). Measured on that guest, 10 runs of this
# script: raw 37-618 us per thread, what is left 8-206 us, from 31-160
# late stamps a run (0.03-0.40% of the stamps). Only a late stamp is
# excused (with perf's handler first, no stop makes tsarun's stamp early),
# and late ones must be rare, under 1% of the stamps, so that a tsarun that
# stamps late as a rule cannot pass for stops.
#
# What is left is not tsarun's accounting: a thread's on-CPU difference is
# exactly the sum, over its slices, of (tsarun - perf) at the switch out
# less the same at the switch in (to 0.1 us in 6 threads of 20,000
# slices). Those differences come in 10 ns steps, and their mean depends
# on the kind of switch as perf records it: 62-132 ns lower where the
# thread switched out was preempted than where it blocked, on this PVM
# guest, alone or beside a busy task (40 records, the gap varying with the
# host from hour to hour), and the same when tsarun reads its clock before
# anything else in its program (7 records): the gap lies in perf's handler
# or the kernel's call between the two. The pipe's two threads end
# different numbers of their slices preempted (up to 2,900 apart in 20,000
# here), so each thread's difference moves by that count times the gap,
# opposite ways: 0.1-15.4 ns a slice here. A bound of 30 ns a slice on
# that raw difference failed once in CI, at 33. tests/perf-sched-ref
# measures each kind's mean offset from the switches between the run's
# threads that no stop moved, and what those offsets put in each thread's
# on-CPU time (stamps.switch_kinds_ns); taken out with what stops moved,
# 0-9.3 ns a slice is left (41 records: stops shorter than the 10 us
# counted as one, and noise). The bound on what is left is 30 ns a slice,
# with the run's steal. A tsarun that stamped a kind of switch off would
# pass its error off as perf's that way, so the two kinds' offsets must
# lie within 500 ns of each other, each from at least 1,000 switches. They
# were 62-132 ns apart in 40 records here; if the 33 ns a slice in CI came
# from them, the gap on that host was about 200 ns or more (660 us over at
# most some 3,000 more preemptions). A tsarun stamping preempted switches
# 1 us late put them 917-934 ns apart (2 records), and fails; one stamping
# them 400 ns late (311-330 ns apart in 6 records) passes, as it passed
# the raw bound in 3 records of 4. A stamp from a clock the scheduler did
# not refresh at a preemption comes early, by however long the waker ran
# on (what tsarun once did, moving 60-1,400 us): no stamp may be early by
# more than the 10 us a stop is allowed late (none was in the 46 records
# measured for that, nor in these 41).
# pipe_checks NAME: the checks of a pipe record.
pipe_checks() {
	local split steal
	steal=$(jq '[.runs[0].threads[].steal_ns] | add' "$J")
	split=$(jq -r '.threads[] | select(.compared) | "# \(.tid): on-CPU tsarun - perf \(.delta_ns.on_cpu / 1000) us, "
		+ "moved by \(.stamps.stops) stopped stamps of \(.stamps.paired) \(.stamps.moved_ns / 1000) us, "
		+ "\(.stamps.odd) off the other way; by the kinds of switch \(.stamps.switch_kinds_ns / 1000) us; "
		+ "left \((.delta_ns.on_cpu - .stamps.moved_ns - .stamps.switch_kinds_ns) / .slices.perf * 10 | round / 10) ns a slice"' \
		cmp.json 2>/dev/null | sed "s/^# /# $1: tid /"
	jq -r '.stamps.switch_kinds | "# \(to_entries | map("\(.key) \(.value.offset_ns) ns (\(.value.paired))") | join(", "))"' \
		cmp.json 2>/dev/null | sed "s/^# /# $1: switch kinds' mean offsets from the median: /")
	split+=$'\n'"# $1: the run's steal $((steal / 1000)) us"
	# Shown with the checks below when they fail (CI shows a failure's own lines only).
	echo "$split"
	equal "$1: every compared thread's stamps paired with perf's" \
		"$(jq '[.threads[] | select(.compared and .stamps.moved_ns == null)] | length' cmp.json)" 0
	at_most "$1: switch stamps moved by stops, %" \
		"$(jq '.stamps.by_kind.switch.stop_fraction * 100' cmp.json)" 1 ||
		sed 's/^# /#   /' <<<"$split"
	equal "$1: stamps off by more than 10 us the way no stop moves them" \
		"$(jq '.stamps.odd' cmp.json)" 0 ||
		sed 's/^# /#   /' <<<"$split"
	at_most "$1: preempted and blocked switches' mean offsets from perf's, apart (ns)" \
		"$(jq '.stamps.switch_kinds | select(.preempted.paired >= 1000 and .blocked.paired >= 1000)
			| .preempted.offset_ns - .blocked.offset_ns | fabs' cmp.json)" 500 ||
		sed 's/^# /#   /' <<<"$split"
	at_most "$1: on-CPU less what stops and the kinds of switch moved, less the run's steal, worst thread (ns a slice)" \
		"$(jq --argjson steal "$steal" '[.threads[] | select(.compared)
			  | ((.delta_ns.on_cpu - .stamps.moved_ns - .stamps.switch_kinds_ns | fabs) - $steal)
			  / .slices.perf] | max' cmp.json)" 30 ||
		sed 's/^# /#   /' <<<"$split"
}
WANT='[.threads[] | select(.compared) | .perf.slices] | add >= 15000'
record "pipe" "${ON[@]}" perf bench sched pipe -T -l 20000
pipe_checks "pipe"

# The same with a third task on that CPU: after a wakeup preemption the
# scheduler may switch to that task instead of the woken thread, on a clock
# it did not refresh. Timed by that clock, a switch lags by however long the
# waker ran on after the wakeup: 60-800 us of CPU time moved between the
# two threads in five runs (1.4 ms at most), when tsarun did that.
"${ON[@]}" sh -c 'while :; do :; done' &
hog=$!
sleep 0.2
WANT='[.threads[] | select(.compared) | .perf.slices] | add >= 15000'
record "pipe beside a busy task" "${ON[@]}" perf bench sched pipe -T -l 20000
kill $hog
wait $hog 2>/dev/null
pipe_checks "pipe beside a busy task"
