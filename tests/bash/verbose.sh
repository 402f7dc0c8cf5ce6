# set -v: bash echoes each line as it reads it (the script's own DEBUG
# trap among them); under tsarun, not one line of the profiler's.
set -v
echo one
f() { echo "in f $1"; }
f 2
x=$(echo cs)
(echo sub)
trap ': the script own trap' DEBUG
echo "$x"
trap - DEBUG
set -x
echo three
