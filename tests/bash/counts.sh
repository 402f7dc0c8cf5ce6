# SPDX-License-Identifier: MIT
# Known counts and times for tests/integration/60-bash.sh (line numbers matter).
f() { x=$((x + $1)); }
for i in {1..37}; do f "$i"; done
n=0
for ((j = 0; j < 20000; j++)); do n=$((n + 1)); done
( sleep 0.12 )
sleep 0.2 &
wait
echo 5 | cat | tr 5 6
echo "sum=$x n=$n"
exit 3
