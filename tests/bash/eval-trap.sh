# Commands that eval and a signal trap run are timed at their own nodes.
eval 'x=1; sleep 0.1'
trap 'sleep 0.12; echo trapped' USR1
kill -USR1 $$
echo after
