#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every construct the bash record stream describes, briefly: a seed for the
# bashprof fuzz target (tests/fuzz/bash-seeds.py records it).
f() { local x=$1; echo "$x" >/dev/null; return 0; }
g() { f "$@"; f again; }
for i in 1 2 3; do g "$i"; done
x=$(echo sub; f inner)
(cd / && f subshell)
{ f group; } &
wait
echo a | tr a b | cat >/dev/null
cat <(echo procsub) >/dev/null
trap 'f trapped' USR1
kill -USR1 $$
eval 'f evaluated'
source /dev/null
bash -c 'echo nested; (exit 3)' || true
coproc { read -r l; echo "$l"; }
echo line >&"${COPROC[1]}"
read -r back <&"${COPROC[0]}"
wait
exec true
