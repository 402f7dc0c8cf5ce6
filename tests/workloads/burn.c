// SPDX-License-Identifier: MIT
/*
 * Burns a fixed amount of CPU time: MS milliseconds of this thread's own CPU
 * time, however long that takes on the wall clock. Load on the machine
 * stretches its wall time, not its CPU time, so its cpu metric is a stable
 * figure for gate tests. Usage: burn [MS=50]
 */
#include "common.h"

int main(int argc, char **argv)
{
	spin_cpu_ms(arg_double(argc, argv, 1, 50));
	return 0;
}
