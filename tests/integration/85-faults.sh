#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Faults around the run: an artifact that cannot be written (read-only file
# system, disk full), signals to tsarun (SIGINT and SIGHUP sent with kill),
# tsarun itself killed with SIGKILL, and the global state it may change.
#
# The file systems are mounted in a private mount namespace, so nothing is
# left mounted when the test ends, however it ends.
if [ "$(id -u)" -eq 0 ] && [ -z "${TSARUN_TEST_MNTNS:-}" ] && command -v unshare >/dev/null; then
	TSARUN_TEST_MNTNS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
need_bpf "fault tests"
cd "$T_TMP"
# Sleeps this run leaves behind are told apart by their length (other
# worktrees may run this test at the same time): 30.PID and 7.PID seconds.
LEFT=30.$$ KILLED=7.$$
set -m # background jobs keep SIGINT: a non-interactive shell would have them ignore it

# --- The artifact cannot be written -----------------------------------------

# A disk that fills up during the run (the command fills it).
mkdir "$T_TMP/full"
mount -t tmpfs -o size=256k tsarun-test "$T_TMP/full" || not_ok "mount a small tmpfs"
J=$T_TMP/full/a.json
"$TSARUN" -q --json "$J" -- true
validate "$J"
before=$(sha256sum <"$J")
fill="dd if=/dev/zero of=$T_TMP/full/fill bs=4k 2>/dev/null"
"$TSARUN" -q --json "$J" -- sh -c "$fill; exit 0" 2>"$T_TMP/err"
equal "disk full: the command exited 0, tsarun exits 125" "$?" 125
check "disk full: the message names the artifact and the error" \
	grep -q "tsarun: cannot write '$J': No space left on device" "$T_TMP/err"
check "disk full: the command's status is still reported" \
	grep -q "the command: exit 0; tsarun exits 125" "$T_TMP/err"
equal "disk full: the previous artifact is intact (atomic replace)" "$(sha256sum <"$J")" "$before"
equal "disk full: no temporary file is left behind" "$(find "$T_TMP/full" -name '.a.json.*' | wc -l)" 0
"$TSARUN" -q --json "$J" -- sh -c "exit 4" 2>"$T_TMP/err"
equal "disk full: a command that failed keeps its status (4)" "$?" 4
check "disk full: ... and tsarun says the artifact was not written" \
	grep -q "the command: exit 4; tsarun exits 4" "$T_TMP/err"
"$TSARUN" -q --json "$J" -- sh -c 'kill -TERM $$' 2>"$T_TMP/err"
equal "disk full: a command killed by SIGTERM still gives 143" "$?" 143
"$TSARUN" --report "$T_TMP/full/report.txt" --json "$T_TMP/a.json" -- true 2>"$T_TMP/err"
equal "disk full: a --report that cannot be written is an error (125)" "$?" 125
check "disk full: ... named with its error" \
	grep -q "tsarun: cannot write the report '$T_TMP/full/report.txt': No space left on device" "$T_TMP/err"
validate "$T_TMP/a.json"
umount "$T_TMP/full"

# A file system that turns read-only during the run.
mkdir "$T_TMP/ro"
mount -t tmpfs -o size=1m tsarun-test "$T_TMP/ro" || not_ok "mount a tmpfs"
"$TSARUN" -q --json "$T_TMP/ro/a.json" -- mount -o remount,ro "$T_TMP/ro" 2>"$T_TMP/err"
equal "read-only: tsarun exits 125 when the command succeeded" "$?" 125
check "read-only: the message says why" grep -q "Read-only file system" "$T_TMP/err"
check "read-only: ... and the command's status" grep -q "the command: exit 0" "$T_TMP/err"
"$TSARUN" -q --json "$T_TMP/ro/a.json" -- touch "$T_TMP/ran" 2>"$T_TMP/err"
equal "read-only from the start: refused with 125" "$?" 125
check "read-only from the start: before the command runs" test ! -e "$T_TMP/ran"
check "read-only from the start: the message names the file" grep -q "ro/a.json.*Read-only file system" "$T_TMP/err"
umount "$T_TMP/ro"

# --- Signals sent to tsarun -------------------------------------------------

# sig NAME NUMBER: the signal reaches the command, which handles it and exits
# 0, leaving a sleep behind: that gets the signal next, and tsarun does not
# wait for the sleep's 30 s.
sig() {
	local name=$1 num=$2 J=$T_TMP/sig.json pid rc t0
	rm -f "$J" "$T_TMP/got"
	# Started in the background, tsarun (and so the command) would inherit
	# SIGINT ignored where this script itself runs without job control under
	# a caller that ignores it: the command is given SIGINT's default.
	env --default-signal=INT "$TSARUN" -q --json "$J" -- bash -c "trap 'echo $name >$T_TMP/got; exit 0' $name; (trap - INT; exec sleep $LEFT) & touch $T_TMP/ready; wait" &
	pid=$!
	for _ in $(seq 100); do [ -e "$T_TMP/ready" ] && break; sleep 0.05; done
	rm -f "$T_TMP/ready"
	t0=$(date +%s%N)
	kill -s "$name" "$pid"
	wait "$pid"
	rc=$?
	if [ "$name" = INT ]; then
		# A SIGINT to tsarun alone (not the terminal's Ctrl-C) that the command
		# handled and exited 0 from: the command's status is returned (README).
		equal "SIGINT sent with kill to tsarun alone, the command exits 0: tsarun exits 0" "$rc" 0
	else
		equal "SIG$name sent with kill: tsarun exits 128+$num" "$rc" $((128 + num))
	fi
	# The leftover dies of the signal at once; --kill-grace (2 s) is the bound.
	at_most "SIG$name sent with kill: tsarun returns without waiting for the leftover (ms)" \
		$((($(date +%s%N) - t0) / 1000000)) 2500
	equal "SIG$name sent with kill: the leftover got it too" "$(pgrep -c -f "^sleep $LEFT\$")" 0
	equal "SIG$name sent with kill: the leftover ended within the run" "$(jqv "$J" '.runs[0].descendants.left_running')" 0
	equal "SIG$name sent with kill: the command got it" "$(cat "$T_TMP/got" 2>/dev/null)" "$name"
	equal "SIG$name sent with kill: the artifact is marked interrupted" "$(jqv "$J" '.runs[0].status')" interrupted
	equal "SIG$name sent with kill: ... by SIG$name" "$(jqv "$J" '.runs[0].interrupted_by')" "SIG$name"
	equal "SIG$name sent with kill: the command's own exit (0) is kept" "$(jqv "$J" '.runs[0].exit.code')" 0
	validate "$J"
}
sig INT 2
sig HUP 1
# A command that does not handle it dies of it: 128+N, the signal named.
J=$T_TMP/sig.json
"$TSARUN" -q --json "$J" -- sh -c "touch $T_TMP/ready; exec sleep 10" &
pid=$!
for _ in $(seq 100); do [ -e "$T_TMP/ready" ] && break; sleep 0.05; done
sleep 0.1 # the exec
kill -HUP "$pid"
wait "$pid"
equal "SIGHUP to tsarun, the command dies of it: 129" "$?" 129
equal "... the artifact names the command's signal" "$(jqv "$J" '.runs[0].exit.signal_name')" SIGHUP

# --- tsarun killed with SIGKILL ----------------------------------------------

# Global state tsarun may change for a run (delay accounting, tracefs mounts)
# is the same after tsarun was killed mid-run and the next run ended.
# The machine's own delay accounting value: while other tsarun instances hold
# it on (other suites, other engineers), /run/tsarun/delayacct.saved has it.
state() {
	echo "task_delayacct=$(cat /run/tsarun/delayacct.saved 2>/dev/null ||
		sysctl -n kernel.task_delayacct 2>/dev/null || echo none)"
	grep -c ' tracefs ' /proc/self/mounts | sed 's/^/tracefs_mounts=/'
}
before=$(state)
rm -f "$T_TMP/ready"
"$TSARUN" -q --json "$T_TMP/killed.json" -- sh -c "touch $T_TMP/ready; exec sleep $KILLED" &
pid=$!
for _ in $(seq 100); do [ -e "$T_TMP/ready" ] && break; sleep 0.05; done
sleep 0.2
spawner=$(pgrep -P "$pid" -x tsarun-spawner)
kill -KILL "$pid"
wait "$pid" 2>/dev/null
equal "SIGKILL: tsarun is gone (137)" "$?" 137
check "SIGKILL: no artifact is half-written" test ! -e "$T_TMP/killed.json"
equal "SIGKILL: no temporary artifact is left" "$(find "$T_TMP" -maxdepth 1 -name '.killed.json.*' | wc -l)" 0
gone() { for _ in $(seq 40); do [ -e "/proc/$1" ] || return 0; sleep 0.05; done; return 1; }
check "SIGKILL: its spawner ($spawner) went with it" gone "${spawner:-none}"
pkill -KILL -f "^sleep $KILLED\$" # the command itself is left running, as with any killed wrapper
J=$T_TMP/next.json
"$TSARUN" -q --json "$J" -- "$WORKLOADS/burn" 20 2>"$T_TMP/err"
equal "SIGKILL: the next run works" "$?" 0
equal "SIGKILL: the next run sees its thread" "$(jqv "$J" '.runs[0].totals.threads')" 1
validate "$J"
# kernel.task_delayacct is shared by every tsarun on the machine (a registry
# of holders in /run/tsarun): the killed one's registration must be gone, and
# the value back as it was unless another tsarun holds it on right now.
check "SIGKILL: the killed tsarun's delayacct registration was cleared" test ! -e "/run/tsarun/delayacct.$pid"
others=0
for h in /run/tsarun/delayacct.[0-9]*; do
	[ -e "$h" ] && kill -0 "${h##*.}" 2>/dev/null && others=$((others + 1))
done
if [ "$others" -eq 0 ]; then
	equal "SIGKILL: global state is back as it was before (${before//$'\n'/, })" "$(state)" "$before"
else
	echo "# $others other tsarun instances hold kernel.task_delayacct on: its value is theirs to restore"
fi
