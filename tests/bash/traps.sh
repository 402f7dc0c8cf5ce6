# SPDX-License-Identifier: MIT
# A trap-heavy function: RETURN and EXIT traps, nested functions, a function
# in a subshell, background jobs, nested loops; functrace on (set -T), so
# that its functions inherit the RETURN trap. Its counts are exact:
#   leaf: 5 outer x 2 middle x 3 = 30 calls, `:` 60 times;
#   the RETURN trap body runs once per function return after it is set.
leaf() { local k; for k in 1 2; do :; done; }
middle() { local j; for j in 1 2 3; do leaf; done; }
outer() {
	local i
	for i in 1 2; do middle; done
	( trap 'echo sub-exit >/dev/null' EXIT; leaf )
	leaf &
	wait
}
set -T
trap 'returns=$((returns + 1))' RETURN
for o in 1 2 3 4 5; do outer; done
echo "returns=$returns"
