# Two background jobs run side by side, then the script waits for both.
busy() { local i=0; while ((i < 20000)); do i=$((i + 1)); done; }
busy &
busy &
wait
