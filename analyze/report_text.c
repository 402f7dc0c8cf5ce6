// SPDX-License-Identifier: MIT
/* A session's report for people: table, runs, bash tree, verdict (report_text.h). */
#include <errno.h>
#include <string.h>

#include "gate_report.h"
#include "report_text.h"
#include "run.h"

int report_text_print(FILE *f, const struct session *s, const struct report_text_opts *o)
{
	const struct run *r = &s->runs[s->nruns - 1];
	struct table_opts to = o->table;
	const char *command = to.command ? to.command : session_command(s);

	to.command = command;
	table_print(f, r, &to);
	if (s->nruns > 1)
		gate_report_runs(f, s->runs, s->nruns, to.color, to.width);
	if (r->bash) {
		struct bashprof_print_opts bo = o->bash;

		bo.color = to.color;
		bo.width = (unsigned)to.width;
		bashprof__print(r->bash, f, &bo);
	}
	if (s->cmp)
		gate_report_comparison(f, s->cmp, command, to.color, to.width);
	if (!r->bash && o->stored && s->mode && !strcmp(s->mode, "bash"))
		fprintf(f,
			"\n  the bash profile is in the artifact's \"bash\" key, and in the file "
			"its bash.folded names (none when the artifact went to a device)\n");
	return ferror(f) ? -EIO : 0;
}
