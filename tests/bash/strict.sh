# SPDX-License-Identifier: MIT
# Runs unchanged under tsarun --bash: strict mode, traps, coprocs,
# process substitution, nested bash -c; its output and status are its own.
set -euo pipefail
trap 'echo "exit trap $?"' EXIT
trap 'echo "err trap"' ERR
coproc UP { tr a-z A-Z; }
echo hello >&"${UP[1]}"
exec {UP[1]}>&-
read -r up <&"${UP[0]}"
wait
echo "coproc: $up"
while read -r l; do echo "procsub: $l"; done < <(printf 'a\nb\n')
echo "nested: $(bash -c 'echo $((6 * 7)); exit 0')"
bash -c 'exit 4' || echo "nested status $?"
if ! false; then echo "not false"; fi
true one two
echo "underscore: $_"
f() { :; }
f arg
echo "after a function: $_"
echo "stdin: $(cat)"
echo "to stderr" >&2
false
echo unreachable
