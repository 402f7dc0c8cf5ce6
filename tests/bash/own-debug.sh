# A DEBUG trap of the script's own runs beside tsarun's (60-bash.sh).
echo a
trap "dbg=1" DEBUG
sleep 0.01
trap - DEBUG
echo b
