#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tsarun under valgrind memcheck: no invalid access, no uninitialised use,
# no leak, on what valgrind can follow.
#
# Valgrind 3.19 (Debian 12) does not know pidfd_open(2) (system call 434),
# which the supervisor needs for every run: a full run fails there with
# ENOSYS. So memcheck covers start-up and the BPF load (doctor), and the
# reading, rendering and comparing of artifacts (report, compare); the run
# loop itself is covered by the whole integration suite under ASan and
# LeakSanitizer (.ci/run). Where valgrind can follow a full run, it is
# checked too. libbpf's bpf(2) attributes are suppressed (tests/valgrind.supp).
. "$(dirname "$0")/../lib.sh"
need_bpf "valgrind tests"
command -v valgrind >/dev/null || cannot_run "valgrind tests" "valgrind is not installed (ci/packages)"
cd "$T_TMP"

# memcheck NAME ARGS...: tsarun ARGS under memcheck, clean.
memcheck() {
	local name=$1 rc
	shift
	valgrind --quiet --suppressions="$REPO/tests/valgrind.supp" --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=99 --child-silent-after-fork=yes \
		"$TSARUN" "$@" >"$T_TMP/out" 2>"$T_TMP/vg"
	rc=$?
	if [ $rc -eq 99 ] || grep -q '^==[0-9]*== [A-Z]' "$T_TMP/vg"; then
		not_ok "memcheck: $name" "$(grep '^==' "$T_TMP/vg" | head -15)"
	else
		ok "memcheck: $name (exit $rc)"
	fi
	return $rc
}

memcheck "doctor: start-up, loading and checking every source" doctor --json
check "doctor under memcheck: the eBPF check passed" sh -c "jq -e '.checks[] | select(.name == \"ebpf\") | .available' '$T_TMP/out' >/dev/null"

# Artifacts with every section, made without valgrind.
"$TSARUN" -q -r 5 --json base.json -- "$WORKLOADS/mutex_wait" 30 20
"$TSARUN" -q -r 5 --flame --waker --out-dir fl --json run.json -- "$WORKLOADS/mutex_wait" 30 20
"$TSARUN" -q --json bash.json --bash -c 'f() { (true); }; for i in 1 2; do f; done'
memcheck "report: the table, the stacks and the runs of an artifact" report fl/run.json
check "report under memcheck: the table was printed" grep -q TOTAL "$T_TMP/out"
memcheck "report --format markdown" report fl/run.json --format markdown
memcheck "report: a --bash artifact" report bash.json
memcheck "compare: the gate's statistics and every output" compare base.json fl/run.json \
	--fail-over 900% --junit j.xml --markdown m.md
check "compare under memcheck: JUnit written" grep -q '<testsuite' j.xml

# The run loop, when this valgrind can follow it.
valgrind --quiet "$TSARUN" --no-sandbox -q --json /dev/null -- true 2>"$T_TMP/vg"
if grep -q 'unhandled .*syscall: 434' "$T_TMP/vg"; then
	echo "# valgrind $(valgrind --version | sed 's/valgrind-//') cannot follow pidfd_open(2): the run loop is checked under ASan/LSan instead"
else
	memcheck "a full run: repeated runs, threads, processes, stacks" --no-sandbox -q -r 2 --flame \
		--out-dir vgrun --json a.json -- sh -c "'$WORKLOADS/threads' 50 4 100; '$WORKLOADS/mutex_wait' 30 20"
	validate vgrun/a.json
fi
