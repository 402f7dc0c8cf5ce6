// SPDX-License-Identifier: MIT
/*
 * The artifact reader: baselines (`--baseline`, `tsarun compare`) and
 * `tsarun report` read files anyone may have written. Whatever it accepts
 * goes through what those commands then do with it: the table, the
 * per-run summary, the Markdown report, and a comparison with itself.
 */
#include <stdbool.h>

#include "artifact.h"
#include "fuzz.h"
#include "gate.h"
#include "gate_report.h"
#include "run.h"
#include "table.h"
#include "trace.h"

static void use(const struct session *s, const struct comparison *cmp)
{
	struct table_opts to = {.top = 5, .color = true, .command = "cmd", .artifact = "a.json"};
	struct gate_side side = {0};
	struct gate_spec spec;
	/* Fewer bootstrap resamples than the default: the same code, more inputs a second. */
	struct comparison c = {
	    .baseline_kind = "artifact", .baseline_name = "fuzz", .resamples = 50};
	char err[512];

	if (!s->nruns)
		abort(); /* the reader promises at least one run */
	table_print(fuzz_sink(), &s->runs[s->nruns - 1], &to);
	gate_report_runs(fuzz_sink(), s->runs, s->nruns, true, 80);
	if (cmp)
		gate_report_comparison(fuzz_sink(), cmp, "cmd", false, 0);
	gate_report_session_markdown(fuzz_sink(), s, 5, SORT_WALL);
	/* tsarun report --format trace: a timeline read from anyone's file. */
	if (s->runs[s->nruns - 1].detailed)
		trace_write(fuzz_sink(), &s->runs[s->nruns - 1], "cmd");
	gate_spec_defaults(&spec);
	gate_spec_finish(&spec, false);
	if (!gate_side_init(&side, s->runs, s->nruns, &s->host) &&
	    !gate_check_available(&spec, &side, "fuzz", err, sizeof(err)) &&
	    !gate_compare(&spec, &side, &side, false, &c))
		gate_report_comparison(fuzz_sink(), &c, "cmd", true, 80);
	comparison__free(&c);
	gate_side_free(&side);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int detail = 0; detail < 2; detail++) {
		struct session s = {0};
		struct comparison cmp = {0};
		bool have_cmp = false;
		struct artifact_read_opts ro = {
		    .what = "artifact", .detail = detail, .cmp = &cmp, .have_cmp = &have_cmp};
		char err[768];

		if (!artifact_parse((const char *)data, size, "fuzz.json", &ro, &s, err,
				    sizeof(err)))
			use(&s, have_cmp ? &cmp : NULL);
		comparison__free(&cmp);
		session__free(&s);
	}
	return 0;
}
