#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The procfs source: /proc/<pid>/task/<tid>/stat and schedstat sampled every
# --sample. On-CPU, runqueue and slices are the kernel's own counters between
# two reads, so beside eBPF (--backend ebpf,proc, the same threads in the same
# run) they differ only by what happened after a thread's last sample; states
# are known to within the gaps their changes fell in. It needs no privilege.
. "$(dirname "$0")/../lib.sh"
need_bpf "procfs tests"
cd "$T_TMP"
J=$T_TMP/a.json

# The scheduler tick: a running thread's sum_exec_runtime is brought up to
# date at ticks and switches, so a read can lag it by one tick.
hz=$(grep -hE '^CONFIG_HZ=' "/boot/config-$(uname -r)" 2>/dev/null | cut -d= -f2)
[ -n "$hz" ] || hz=$(zcat /proc/config.gz 2>/dev/null | grep -E '^CONFIG_HZ=' | cut -d= -f2)
[ -n "$hz" ] || hz=100 # the lowest CONFIG_HZ: the widest tick
tick=$((1000000000 / hz))

# thread FILE COMM: the first thread of that name.
thread() { echo "[.runs[0].threads[] | select(.comm == \"$2\")][0]"; }

# --- procfs alone: every figure from it, marked as sampled ---------------------------
"$TSARUN" -q -b proc --json "$J" -- "$WORKLOADS/spin_sleep" 300 200
equal "procfs alone: the command's status" "$?" 0
validate "$J"
equal "procfs alone: the sources are procfs and rusage" \
	"$(jqv "$J" '.runs[0].quality.sources_active | sort | join(",")')" "procfs,rusage"
equal "procfs alone: ebpf and taskstats are listed as not selected" \
	"$(jqv "$J" '[.runs[0].quality.sources_unavailable[] | select(.source == "ebpf" or .source == "taskstats") | .reason] | join(";")')" \
	"not selected (--backend);not selected (--backend)"
equal "procfs alone: every thread says its figures are sampled" \
	"$(jqv "$J" '[.runs[0].threads[] | select(.accounting_source != "procfs" or .sampled == null)] | length')" 0
equal "procfs alone: switches, wakeups and steal are null, not 0" \
	"$(jqv "$J" '[.runs[0].threads[] | select(.voluntary_switches != null or .wakeups != null or .steal_ns != null or .wakeup_latency_ns != null)] | length')" 0
equal "procfs alone: so are their totals" "$(jqv "$J" '[.runs[0].totals | .voluntary_switches, .wakeups] | map(select(. != null)) | length')" 0
equal "procfs alone: summary metrics that need eBPF are null, with the reason" \
	"$(jqv "$J" '.summary.on_cpu == null and (.summary_unavailable.on_cpu | test("ebpf"))')" true
T=$(thread "$J" spinsleep)
# spin_sleep spins 300 ms of its own CPU time (CLOCK_THREAD_CPUTIME_ID is
# sum_exec_runtime), then sleeps: its last sample finds it asleep, with
# counters up to date. 1% allows for thread start-up and the sleep's entry.
within "procfs alone: spinsleep on-CPU is its 300 ms of CPU (ms)" "$(jqv "$J" "$T.on_cpu_ns / 1e6")" 300 1
check "procfs alone: its counters run from its birth" jq -e "$T.sampled.counters_from == \"birth\"" "$J"
check "procfs alone: the thread's time closes (lifetime = states + residual)" \
	jq -e "$T | .lifetime_ns == .on_cpu_ns + .runqueue_ns + .sleeping_ns + .uninterruptible_ns + .stopped_ns + .residual_ns" "$J"
# Its 200 ms sleep: blocked time from the counters, charged to S because every
# sample of it said S; what is missing is at most the gap after its last
# sample (unobserved) and the change from R to S, known to within its gap.
tol=$(jqv "$J" "$T | (.sampled.unobserved_max_ns + .sampled.transition_uncertainty_ns) / 1e6")
s=$(jqv "$J" "$T.sleeping_ns / 1e6")
check "procfs alone: spinsleep slept 200 ms, to within its sampling gaps ($s ms, +-$tol ms)" \
	awk -v s="$s" -v t="$tol" 'BEGIN { d = s - 200; if (d < 0) d = -d; exit !(d <= t + 1) }'
# Time the host took while it spun (steal: not in sum_exec_runtime) is not
# sleep: it is untimed, and residual.
check "procfs alone: its untimed time is in its residual ($(jqv "$J" "$T.sampled.untimed_ns / 1e6") ms)" \
	jq -e "$T | .residual_ns >= .sampled.untimed_ns" "$J"
at_least "procfs alone: scans about every 10 ms (at least half as many as 10 ms intervals)" \
	"$(jqv "$J" '.runs[0].quality.procfs.scans')" \
	"$(jqv "$J" '(.runs[0].wall_ns / 10000000 / 2) | floor')"
check "procfs alone: the largest gap is reported, and at least the interval" \
	jq -e '.runs[0].quality.procfs | .max_gap_ns >= .sample_interval_ns and .sample_interval_ns == 10000000' "$J"
equal "procfs alone: the tree was found by scanning /proc" "$(jqv "$J" '.runs[0].quality.procfs.discovery')" proc-scan
# The tree's CPU time: no sampled thread has more than rusage's.
check "procfs alone: seen CPU time is within rusage's" \
	jq -e '.runs[0].quality.cross_check.tree_cpu_vs_rusage | .available and .sum_ebpf <= .sum_kernel' "$J"

# The stored artifact reads back: tsarun report shows what was not counted as "-".
"$TSARUN" report "$J" >"$T_TMP/report.txt" 2>&1
equal "procfs alone: tsarun report reads the artifact back" "$?" 0
check "... switches not counted show as -, not 0/0" grep -qE 'spinsleep .* - +- *$' "$T_TMP/report.txt"

# --sample changes the cadence.
"$TSARUN" -q -b proc --sample 50ms --json "$J" -- "$WORKLOADS/spin_sleep" 200 100
check "--sample 50ms: the interval is recorded" jq -e '.runs[0].quality.procfs.sample_interval_ns == 50000000' "$J"
# One scan at the barrier, one every 50 ms, one at the exit: 8 for the
# 300 ms the workload takes alone, more when a loaded machine stretches its
# 200 ms of CPU (13 scans of a 540 ms run once); at the default 10 ms, five
# times as many.
at_most "--sample 50ms: a scan every 50 ms of the run, not every 10" \
	"$(jqv "$J" '.runs[0].quality.procfs.scans')" "$(jqv "$J" '(.runs[0].wall_ns / 50000000 | ceil) + 3')"
validate "$J"

# Under auto with eBPF working, procfs is not sampled: a --sample given is not ignored silently.
"$TSARUN" -q --sample 5ms --json "$J" -- true 2>"$T_TMP/err"
# (Only of --sample: a tsarun that starts repairs what a killed one left, and
# says so even under -q; other engineers' test runs killed one once.)
equal "--sample with -q and eBPF: nothing said" "$(grep -c -- '--sample' "$T_TMP/err")" 0
"$TSARUN" --no-table --sample 5ms --json "$J" -- true 2>"$T_TMP/err"
check "--sample with eBPF working: tsarun says procfs is not sampled, and how to sample it" \
	grep -q -- "--sample: procfs is not sampled while eBPF works; add --backend ebpf,proc" "$T_TMP/err"
"$TSARUN" -q -b ebpf --sample 5ms --json "$J" -- true 2>"$T_TMP/err"
equal "--sample with --backend ebpf (no proc): refused with 125" "$?" 125

# D state by sample: the vfork parent waits 300 ms for its child.
"$TSARUN" -q -b proc --json "$J" -- "$WORKLOADS/vfork_wait" 300
T="[.runs[0].threads[] | select(.tid == .pid and .tid == $(jqv "$J" '.runs[0].root_pid'))][0]"
tol=$(jqv "$J" "$T | (.sampled.unobserved_max_ns + .sampled.transition_uncertainty_ns) / 1e6")
d=$(jqv "$J" "$T.uninterruptible_ns / 1e6")
check "procfs alone: the vfork parent was in D for 300 ms, to within its gaps ($d ms, +-$tol ms)" \
	awk -v s="$d" -v t="$tol" 'BEGIN { d = s - 300; if (d < 0) d = -d; exit !(d <= t + 1) }'
validate "$J"

# --- beside eBPF, the same threads of the same run -----------------------------------
# Against the kernel counters eBPF read at each thread's first and final
# event (the same counters, read then): for a thread born in the run (its
# counters from 0 either way) a sampled figure is never larger, and smaller
# by at most what the thread did after its last sample (unobserved_max_ns),
# plus the part of a stint in progress at that read that the counters did
# not have yet: one tick of CPU, or the wait in the runqueue then (at most
# the longest wait eBPF saw: its histogram's top bucket). The command's own
# thread is left out: procfs reads its counters when it is armed at the
# barrier, eBPF at its first event after, so their starts differ.
bounds='.runs[0].threads[] | select(.sampled != null) |
	(if (.offcpu_hist_log2_us.runqueue | length) > 0 then pow(2; .offcpu_hist_log2_us.runqueue | length) * 1000 else 0 end) as $wait |
	[.comm, .tid, .sampled.counters_from,
	 .kernel.sum_exec_runtime_ns - .sampled.on_cpu_ns, .kernel.run_delay_ns - .sampled.runqueue_ns,
	 .sampled.unobserved_max_ns + $tick, .sampled.unobserved_max_ns + $wait] | @tsv'
for w in "pinned 300 0" "spin_sleep 200 100" "mutex_wait 150 100" "vfork_wait 200" "proctree 6 2 60"; do
	# shellcheck disable=SC2086
	"$TSARUN" -q -b ebpf,proc --json "$J" -- "$WORKLOADS"/$w
	name=${w%% *}
	validate "$J"
	equal "$name: ebpf and procfs both active" \
		"$(jqv "$J" '.runs[0].quality.sources_active | map(select(. == "ebpf" or . == "procfs")) | sort | join(",")')" "ebpf,procfs"
	equal "$name: eBPF's figures are the thread's, procfs the cross-check" \
		"$(jqv "$J" '[.runs[0].threads[] | select(.accounting_source != "ebpf")] | length')" 0
	equal "$name: every thread was sampled (each lives many sample intervals)" \
		"$(jqv "$J" '[.runs[0].threads[] | select(.sampled == null)] | length')" 0
	check "$name: the cross-check compares them" \
		jq -e '.runs[0].quality.cross_check.procfs_on_cpu_vs_ebpf.available' "$J"
	bad=$(jq -r --argjson tick "$tick" "$bounds" "$J" | awk -F'\t' '
		$3 == "birth" && ($4 < 0 || $5 < 0) { print "sampled above the kernel:", $0; next }
		$3 == "birth" && ($4 > $6 || $5 > $7) { print "beyond the last-sample bound:", $0 }')
	if [ -z "$bad" ]; then
		ok "$name: per thread, sampled on-CPU and runqueue within the last sample's bound of the kernel's"
	else
		not_ok "$name: per thread, sampled on-CPU and runqueue within the last sample's bound of the kernel's" \
			"comm tid from kernel-sampled(on rq) bound(on rq)" "$bad"
	fi
	# States by sample against eBPF's event-timed states: apart by at most the
	# gaps the changes fell in, the spans where one looked and the other did
	# not (before the first sample, after the last alive; the command's first
	# sample comes at its barrier, before eBPF's first event), the excursions into
	# other states shorter than a gap, which samples on both sides of cannot
	# see: at most the thread's time in those states (eBPF's).
	bad=$(jq -r '.runs[0].threads[] | select(.sampled != null) |
		(.sampled.transition_uncertainty_ns + ((.sampled.first_sample_ns - .start_ns) | fabs) +
		 ((.end_ns - .sampled.last_sample_ns) | fabs) + .on_cpu_ns + .runqueue_ns + .stopped_ns) as $tol |
		[.comm, .tid, (.sampled.by_state_ns.sleeping - .sleeping_ns), (.sampled.by_state_ns.uninterruptible - .uninterruptible_ns),
		 $tol + .uninterruptible_ns, $tol + .sleeping_ns] |
		select((.[2] | fabs) > .[4] or (.[3] | fabs) > .[5]) | @tsv' "$J")
	if [ -z "$bad" ]; then
		ok "$name: per thread, sampled S and D within the sampling gaps of eBPF's"
	else
		not_ok "$name: per thread, sampled S and D within the sampling gaps of eBPF's" "comm tid dS dD tolS tolD" "$bad"
	fi
done

# --- threads that lived between two samples --------------------------------------------
# 200 threads of 2 ms, 4 at a time: procfs alone sees some; the others' CPU
# shows as unseen against rusage, never as a thread that was not measured.
# (The machine's counters around it: the share of busy CPU time the hypervisor took.)
busy_steal() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $9 }' /proc/stat; }
read -r busy0 steal0 < <(busy_steal)
"$TSARUN" -q -b proc --json "$J" -- "$WORKLOADS/threads" 200 4 2000
read -r busy1 steal1 < <(busy_steal)
steal_pc=$(awk -v b=$((busy1 - busy0)) -v s=$((steal1 - steal0)) 'BEGIN { printf "%.1f", b ? s * 100 / b : 0 }')
validate "$J"
seen=$(jqv "$J" '.runs[0].quality.procfs.threads_seen')
at_most "short threads, procfs alone: not all 201 are seen between samples" "$seen" 200
equal "short threads, procfs alone: the rows are the threads seen" "$(jqv "$J" '.runs[0].threads | length')" "$seen"
check "short threads, procfs alone: the CPU time no sample saw is reported" \
	jq -e '.runs[0].quality.procfs.unseen_cpu_ns > 0 and .runs[0].quality.cross_check.tree_cpu_vs_rusage.unseen_fraction > 0' "$J"
equal "procfs alone: what only scheduler events measure is null, not 0" \
	"$(jqv "$J" '.runs[0].quality.cross_check | [.kernel_shift_ns, .unstamped_wait_ns]' | tr -d ' \n')" "[null,null]"
# With taskstats, their exit records fill the gaps: every thread is there.
"$TSARUN" -q -b taskstats,proc --json "$J" -- "$WORKLOADS/threads" 200 4 2000
validate "$J"
equal "short threads, taskstats and procfs: all 201 threads" "$(jqv "$J" '.runs[0].threads | length')" 201
equal "... those no sample saw come from their exit records" \
	"$(jqv "$J" '[.runs[0].threads[] | select(.accounting_source == "taskstats")] | length')" \
	"$((201 - $(jqv "$J" '.runs[0].quality.procfs.threads_seen')))"
equal "... every record attached on identity, none ambiguous" \
	"$(jqv "$J" '.runs[0].quality.taskstats | "\(.attached) \(.identity_mismatches)"')" "201 0"
# A thread known only by its exit record has on-CPU and runqueue time; the
# rest of its life is not split by state: S, D and stopped are null (they
# were 0), and so is any sum over it. Sampled threads keep theirs.
equal "... those have S, D and stopped null, not 0" \
	"$(jqv "$J" '[.runs[0].threads[] | select(.accounting_source == "taskstats") | [.sleeping_ns, .uninterruptible_ns, .stopped_ns] | select(. != [null, null, null])] | length')" 0
equal "... sampled threads keep theirs" \
	"$(jqv "$J" '[.runs[0].threads[] | select(.accounting_source == "procfs") | .sleeping_ns | numbers] | length')" \
	"$(jqv "$J" '.runs[0].quality.procfs.threads_seen')"
equal "... and a sum over both kinds is null too (process, totals)" \
	"$(jqv "$J" '[.runs[0].totals.sleeping_ns, .runs[0].processes[0].uninterruptible_ns]' | tr -d ' \n')" "[null,null]"
"$TSARUN" report "$J" >"$T_TMP/rep" 2>&1
check "... tsarun report reads them back: the totals row shows no S or D" \
	grep -Eq '^ +TOTAL( +[0-9.]+){3} +- +- ' "$T_TMP/rep"
# taskstats alone: every thread's off-CPU time is in its residual, and the
# report says why rather than warn that the figures may not add up.
"$TSARUN" -q -b taskstats --json "$T_TMP/ts.json" -- sh -c 'sleep 0.1; true' 2>"$T_TMP/err"
validate "$T_TMP/ts.json"
equal "taskstats alone: S, D and stopped null for every thread and the totals" \
	"$(jqv "$T_TMP/ts.json" '[(.runs[0].threads[], .runs[0].totals) | .sleeping_ns, .uninterruptible_ns, .stopped_ns | numbers] | length')" 0
"$TSARUN" report "$T_TMP/ts.json" >"$T_TMP/rep" 2>&1
check "... the report says the residual is off-CPU time not split by state" \
	grep -q 'lives is not split by state' "$T_TMP/rep"
check "... without the warning that the figures may not add up" \
	sh -c "! grep -q 'may not add up' \"\$1\"" _ "$T_TMP/rep"
# A sampled thread's exit record carries its counters at its exit: they
# replace the last sample's, never less (counters only grow). Its on-CPU
# time missed at most the gap after the last sample and a tick of
# staleness. Its runqueue time can miss more: the kernel adds a wait to
# run_delay when the wait ends, so a wait in progress at the last sample
# comes after it whole (seen on a loaded machine: 9.4 ms after a sample
# of 0, with a 4.7 ms gap); it still fits the thread's life.
equal "... every sampled thread born in the run has its counters to its exit" \
	"$(jqv "$J" '[.runs[0].threads[] | select(.accounting_source == "procfs" and .sampled.counters_from == "birth" and .counters_from_exit_record != true)] | length')" 0
bad=$(jq -r --argjson tick "$tick" '.runs[0].threads[] | select(.counters_from_exit_record) |
	select(.on_cpu_ns < .sampled.on_cpu_ns or .runqueue_ns < .sampled.runqueue_ns or
	       .on_cpu_ns - .sampled.on_cpu_ns > .sampled.unobserved_max_ns + $tick or
	       .on_cpu_ns + .runqueue_ns > .lifetime_ns + $tick) |
	"\(.tid): on \(.on_cpu_ns) vs \(.sampled.on_cpu_ns), rq \(.runqueue_ns) vs \(.sampled.runqueue_ns), gap \(.sampled.unobserved_max_ns)"' "$J")
equal "... each adds on-CPU time only in the gap after its last one, and all fits its life" "$bad" ""
# Then the tree's CPU time is nearly all accounted for. rusage also has what
# each thread's exit does after its record is written (the address space,
# the joiner's wakeup, the final switch): no record carries it. eBPF
# measures it, so the same workload runs with eBPF too: 55-60 us a thread
# on a PVM guest (2.6-2.7% of this tree's CPU, where the unaccounted part
# was 1.9-2.5%), tsarun's own exit probes in it, so it is an upper bound.
# Beyond it, a percent of rusage may go unaccounted.
"$TSARUN" -q --json "$T_TMP/tail.json" -- "$WORKLOADS/threads" 200 4 2000
validate "$T_TMP/tail.json"
equal "the exits after their records, measured by eBPF: every thread has one" \
	"$(jqv "$T_TMP/tail.json" '.runs[0].quality.taskstats.cpu_after_exit_records_threads')" 201
tail_pc=$(jqv "$T_TMP/tail.json" '.runs[0].quality | .taskstats.cpu_after_exit_records_ns * 100 / .cross_check.tree_cpu_vs_rusage.sum_kernel')
at_most "... at most 5% of the tree's CPU (% of rusage)" "$tail_pc" 5
at_most "... rusage CPU time no thread accounts for, % (was the short threads'), less the exits' $tail_pc%" \
	"$(jq -r --argjson tail "$tail_pc" '.runs[0].quality.cross_check.tree_cpu_vs_rusage.unseen_fraction * 100 - $tail' "$J")" 1
# A thread one sample saw lives as long as its exit record says, not the
# span between the middles of the gaps around that sample (once ~8 ms for
# threads of ~1.3 ms, most of it residual: most of each such thread's life).
# Summed over the threads, not the worst one: what stays residual by
# mechanism falls on a thread here and there. The record's counters leave
# out the time the hypervisor took while the thread ran (steal: in
# sum_exec_runtime only as CPU the thread did not get, in run_delay not at
# all) and the exit path after their last update; on this VM under load
# eBPF saw single threads of 2 ms lose 150-270 us to steal, and the kernel's
# own counters left 166 us of one such thread's life (no sleep, etime -
# sum_exec_runtime - run_delay at its exit) uncovered: 7.8% of its life
# then, while the sum stayed under 0.1%. So the bound is 5% beyond the
# machine's steal during the run (% of its busy time, from /proc/stat): 15.4%
# residual was seen on a host that took a large share.
at_most "... threads completed from their records: residual, % of their life (all of them), steal $steal_pc% + 5" \
	"$(jqv "$J" '[.runs[0].threads[] | select(.counters_from_exit_record == true)] | ([.[].residual_ns] | add) * 100 / ([.[].lifetime_ns] | add)')" \
	"$(awk -v s="$steal_pc" 'BEGIN { print s + 5 }')"

# --- a command shorter than one sample -------------------------------------------------
# Its leader is read once more when it has exited, before it is reaped (a
# zombie keeps its counters and the name it died with): it was once shown
# as tsarun-spawner with no CPU time, the barrier's sample.
"$TSARUN" -q -b proc --sample 200ms --json "$J" -- "$WORKLOADS/burn" 60
validate "$J"
equal "a command shorter than one sample: its leader has its name" "$(jqv "$J" '[.runs[0].threads[].comm] | join(",")')" burn
within "... and all its CPU time, against rusage's (ms)" "$(jqv "$J" '.runs[0].threads[0].on_cpu_ns / 1e6')" \
	"$(jqv "$J" '(.runs[0].user_ns + .runs[0].sys_ns) / 1e6')" 5
at_least "... and its life, which ended as tsarun saw it exit (ms)" "$(jqv "$J" '.runs[0].threads[0].lifetime_ns / 1e6')" 58

# --- auto, as root: eBPF works, so procfs is not sampled, and says why -----------------
"$TSARUN" -q --json "$J" -- true
check "auto as root: procfs is not used, with the reason" \
	jq -e '[.runs[0].quality.sources_unavailable[] | select(.source == "procfs") | .reason | test("^not used: eBPF")] == [true]' "$J"
check "auto as root: ebpf active" jq -e '.runs[0].quality.sources_active | index("ebpf")' "$J"

# --- unprivileged: procfs and rusage say what they can -----------------------------------
D=$T_TMP/nobody
mkdir "$D" && chown nobody "$D"
as_nobody() { setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups "$@"; }
as_nobody "$TSARUN" -q --json "$D/u.json" -- sh -c "'$WORKLOADS/spin_sleep' 200 100; exit 7"
equal "unprivileged: tsarun exits with the command's status" "$?" 7
validate "$D/u.json"
check "unprivileged: procfs and rusage are active" \
	jq -e '.runs[0].quality.sources_active | (index("procfs") != null and index("rusage") != null)' "$D/u.json"
equal "unprivileged: ebpf and taskstats unavailable, with reasons" \
	"$(jqv "$D/u.json" '[.runs[0].quality.sources_unavailable[] | select((.source == "ebpf" or .source == "taskstats") and (.reason | length > 10))] | length')" 2
within "unprivileged: spinsleep on-CPU from procfs (ms)" \
	"$(jqv "$D/u.json" "$(thread "$D/u.json" spinsleep).on_cpu_ns / 1e6")" 200 1
check "unprivileged: the shell and its child are in the tree" \
	jq -e '[.runs[0].threads[].comm] | (index("sh") != null and index("spinsleep") != null)' "$D/u.json"
as_nobody "$TSARUN" -q --json "$D/u.json" -b ebpf -- touch "$D/ran" 2>"$T_TMP/err"
equal "unprivileged, --backend ebpf: refused (125)" "$?" 125
check "... saying why" grep -q "ebpf source is not available: not permitted" "$T_TMP/err"
check "... and the command did not run" test ! -e "$D/ran"
as_nobody "$TSARUN" -q --json "$D/u.json" -b taskstats -- true 2>"$T_TMP/err"
equal "unprivileged, --backend taskstats: refused (125)" "$?" 125
as_nobody "$TSARUN" -q --json "$D/u.json" -b proc -- true
equal "unprivileged, --backend proc: runs" "$?" 0
