# A background job reaped by a wait that a subshell follows: its CPU time is the wait's.
busy() { local i=0; while ((i < 20000)); do i=$((i + 1)); done; }
busy &
wait
( busy )
busy &
wait
( busy )
# What a subshell costs besides what it runs: its fork and exit (60-bash.sh).
( : )
( : )
