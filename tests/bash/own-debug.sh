# A DEBUG trap of the script's own replaces tsarun's: the report says so.
echo a
trap "dbg=1" DEBUG
sleep 0.01
trap - DEBUG
echo b
