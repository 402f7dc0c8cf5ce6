# SPDX-License-Identifier: MIT
# Helpers for integration tests: each script prints TAP lines that
# tests/run-suites counts. Source it first thing:  . "$(dirname "$0")/../lib.sh"
set -u
TSARUN=${TSARUN:-$PWD/build/tsarun}
WORKLOADS=${WORKLOADS:-$PWD/build/tests/workloads}
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$TESTS_DIR/.." && pwd)
T_N=0
T_TMP=$(mktemp -d /tmp/tsarun-test.XXXXXX)
chmod 755 "$T_TMP"
trap 'rm -rf "$T_TMP"' EXIT

ok() { T_N=$((T_N + 1)); echo "ok $T_N - $1"; }
not_ok() {
	T_N=$((T_N + 1))
	echo "not ok $T_N - $1"
	shift
	local l
	for l in "$@"; do echo "#   $l"; done
	return 1 # so that a test can add what it knows: check ... || echo "#   ..."
}
skip() { T_N=$((T_N + 1)); echo "ok $T_N - $1 # SKIP $2"; }

# check NAME COMMAND...: ok when the command succeeds.
check() {
	local name=$1; shift
	if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi
}

# A measurement that is missing ("", null) is no number: awk would read it
# as 0 and a bound could pass on nothing.
numbers() {
	local v
	for v in "$@"; do
		[[ $v =~ ^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$ ]] || return 1
	done
}

# within NAME ACTUAL EXPECTED TOL_PERCENT: |actual - expected| <= tol% of expected.
within() {
	local name=$1 actual=$2 expected=$3 tol=$4
	if ! numbers "$actual" "$expected"; then
		not_ok "$name" "measured '$actual', expected '$expected': not numbers"
	elif awk -v a="$actual" -v e="$expected" -v t="$tol" \
		'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= e * t / 100) }'; then
		ok "$name ($actual vs $expected, tolerance $tol%)"
	else
		not_ok "$name" "measured $actual, expected $expected within $tol%"
	fi
}

# at_least NAME ACTUAL MIN / at_most NAME ACTUAL MAX
at_least() {
	if ! numbers "$2" "$3"; then not_ok "$1" "measured '$2', bound '$3': not numbers"
	elif awk -v a="$2" -v m="$3" 'BEGIN { exit !(a >= m) }'; then ok "$1 ($2 >= $3)"
	else not_ok "$1" "measured $2, expected at least $3"; fi
}
at_most() {
	if ! numbers "$2" "$3"; then not_ok "$1" "measured '$2', bound '$3': not numbers"
	elif awk -v a="$2" -v m="$3" 'BEGIN { exit !(a <= m) }'; then ok "$1 ($2 <= $3)"
	else not_ok "$1" "measured $2, expected at most $3"; fi
}

# equal NAME ACTUAL EXPECTED
equal() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', expected '$3'"; fi
}

# svg_in_chromium SHOTS FILE.svg FRAME ...: tests/html/check-flame-svg's
# checks of each flame graph opened in headless Chromium, as TAP lines.
# Without Chromium or python3-websocket: skipped, or failed in CI.
svg_in_chromium() {
	local out l
	if ! command -v chromium >/dev/null || ! /usr/bin/python3 -c 'import websocket' 2>/dev/null; then
		if [ "${CI:-}" = true ]; then
			not_ok "flame graphs in Chromium" "cannot run in CI: chromium or python3-websocket is not installed"
		else
			skip "flame graphs in Chromium" "chromium or python3-websocket is not installed"
		fi
		return 0
	fi
	out=$(timeout 300 /usr/bin/python3 "$REPO/tests/html/check-flame-svg" "$@" 2>&1)
	while IFS= read -r l; do
		case "$l" in
		"ok "*) ok "in Chromium: ${l#ok }" ;;
		"not ok "*) not_ok "in Chromium: ${l#not ok }" ;;
		esac
	done <<<"$out"
	grep -q '^ok .*Reset Zoom gives' <<<"$out" || not_ok "flame graphs in Chromium: ran" "$(tail -5 <<<"$out")"
}

# Root and BPF are required on CI machines: elsewhere, say why and skip;
# in CI (CI=true), where both must work, a missing one is a failure.
cannot_run() {
	if [ "${CI:-}" = true ]; then
		not_ok "$1" "cannot run in CI: $2"
	else
		skip "$1" "$2"
	fi
	exit 0
}
need_root() {
	[ "$(id -u)" -eq 0 ] || cannot_run "${1:-root tests}" "needs root (run as root, as CI does)"
}
need_bpf() {
	need_root "$@"
	if ! "$TSARUN" doctor --json 2>/dev/null | jq -e '.checks[] | select(.name=="ebpf") | .available' >/dev/null; then
		cannot_run "${1:-eBPF tests}" "eBPF unavailable: $("$TSARUN" doctor --json | jq -r '.checks[] | select(.name=="ebpf") | .detail')"
	fi
}

# The artifact must validate against the schema.
validate() {
	local f=$1
	if out=$(/usr/bin/python3 "$REPO/tests/validate-artifact" "$f" 2>&1); then
		ok "artifact $(basename "$f") validates against the schema"
	else
		not_ok "artifact $(basename "$f") validates against the schema" "$out"
	fi
}

# jq on an artifact: jqv FILE FILTER
jqv() { jq -r "$2" "$1"; }
