# Two background jobs run side by side, then the script waits for both.
# Each leaves the CPUs idle half of the time, so that tsarun's own work
# (slower under ASan) does not make them wait for one.
busy() {
	local i r
	for r in 1 2 3 4 5; do
		i=0
		while ((i < 4000)); do i=$((i + 1)); done
		sleep 0.02
	done
}
busy &
busy &
wait
