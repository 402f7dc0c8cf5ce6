# set -x: the script's trace is its own, with no line of the profiler's.
f() { echo "in f $1"; }
set -x
echo one
x=$((1 + 2))
f "$x"
(echo sub)
echo "$(echo cs)"
for i in 1 2; do echo "$i"; done
trap 'echo bye' EXIT
