// SPDX-License-Identifier: MIT
/* The regression gate's SPEC and metric list: --fail-over, --metric. */
#include "fuzz.h"
#include "gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size), err[256];
	struct gate_spec g;

	gate_spec_defaults(&g);
	if (!gate_parse_fail_over(&g, s, err, sizeof(err))) {
		for (int m = 0; m < METRIC_NR; m++)
			if (g.gated[m] && !(g.threshold[m] > 0 && g.threshold[m] <= 10))
				abort(); /* an accepted threshold is within (0%, 1000%] */
	}
	gate_spec_defaults(&g);
	gate_parse_metrics(&g, s, err, sizeof(err));
	gate_spec_finish(&g, size && (data[0] & 1));
	free(s);
	return 0;
}
