// SPDX-License-Identifier: MIT
/* tsarun report RUN.json: a stored artifact's report, in each of its formats (cmd.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact.h"
#include "cmd.h"
#include "confine.h"
#include "export.h"
#include "gate_report.h"
#include "options.h"
#include "outputs.h"
#include "report_html.h"
#include "report_text.h"
#include "run.h"
#include "stacks.h"
#include "table.h"
#include "termwrap.h"
#include "textsafe.h"
#include "trace.h"

/* tsarun report --format folded|svg: the last run's stacks, as --flame wrote them. */
static int report_stacks(const struct tsarun_opts *o, const struct session *s, const char *command)
{
	static const char *const views[] = {"offcpu", "oncpu", "wall"};
	const struct run *r = &s->runs[s->nruns - 1];
	int ret;

	if (!r->stacks) {
		textsafe_term_line(stderr, "tsarun: report: '", o->report_artifact,
				   "' has no stacks: record them with --stacks (where threads "
				   "blocked) or --flame (and where they ran)");
		return EXIT_TSARUN;
	}
	if (o->report_profile == REPORT_ONCPU && !r->stacks->oncpu) {
		/* The reason is the artifact's text: escaped like the path. */
		fputs("tsarun: report: '", stderr);
		textsafe_fput(stderr, textsafe_term, o->report_artifact, TEXTSAFE_NUL);
		fputs("' has no on-CPU samples: record them with --flame", stderr);
		if (r->stacks->oncpu_reason[0])
			textsafe_term_line(stderr, " (this run: ", r->stacks->oncpu_reason, ")");
		else
			fputc('\n', stderr);
		return EXIT_TSARUN;
	}
	ret = outputs_stack_profile(stdout, r, o->report_profile, o->report_svg,
				    (struct stack_profile_layout){.inverted = o->report_inverted,
								  .reversed = o->report_reversed},
				    command);
	if (ret) {
		fprintf(stderr, "tsarun: report: cannot write the %s view: %s\n",
			views[o->report_profile], strerror(-ret));
		return EXIT_TSARUN;
	}
	return 0;
}

/* tsarun report --format trace: the last run as Chrome Trace Event JSON (Perfetto). */
static int report_trace(const struct tsarun_opts *o, const struct session *s, const char *command)
{
	const struct run *r = &s->runs[s->nruns - 1];

	if (!r->detailed) {
		textsafe_term_line(stderr, "tsarun: report: '", o->report_artifact,
				   "' has no threads for a trace (its last run kept no detail)");
		return EXIT_TSARUN;
	}
	if (!r->timeline && !o->quiet)
		textsafe_term_line(stderr, "tsarun: report: '", o->report_artifact,
				   "' has no timeline: each thread is one slice of its whole life; "
				   "record with --timeline for its on-CPU, runqueue, S and D "
				   "intervals");
	if (trace_write(stdout, r, command)) {
		fprintf(stderr, "tsarun: report: cannot write the trace: %s\n", strerror(EIO));
		return EXIT_TSARUN;
	}
	return 0;
}

/* tsarun report RUN.json: a stored artifact's report, again, to stdout. */
int cmd_report(const struct tsarun_opts *o)
{
	struct session s = {0};
	struct comparison cmp = {0};
	bool have_cmp = false;
	char *text = NULL;
	struct artifact_read_opts ro = {.what = "artifact",
					.detail = true,
					.cmp = &cmp,
					.have_cmp = &have_cmp,
					.text = o->report_html ? &text : NULL};
	struct confine_opts co = options_for_confine(o);
	const char *command;
	char err[768];
	int code = 0;

	if (confine_offline(&co, NULL, NULL))
		return EXIT_TSARUN;
	if (artifact_read(o->report_artifact, &ro, &s, err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		return EXIT_TSARUN;
	}
	if (have_cmp)
		s.cmp = &cmp;
	command = session_command(&s);
	if (o->report_html) {
		struct report_html h = {
		    .run = {.artifact = text,
			    .artifact_len = strlen(text),
			    .s = &s,
			    .name = o->report_artifact},
		};
		int ret = report_html_write(stdout, &h);

		if (ret) {
			fprintf(stderr, "tsarun: report: cannot write the HTML page: %s\n",
				strerror(-ret));
			code = EXIT_TSARUN;
		}
	} else if (o->report_export) {
		int ret = o->report_export == 1	  ? export_threads_csv(stdout, &s.runs[s.nruns - 1])
			  : o->report_export == 2 ? export_runs_csv(stdout, &s)
						  : export_hyperfine_json(stdout, &s);

		if (ret) {
			fprintf(stderr, "tsarun: report: cannot write the export: %s\n",
				strerror(-ret));
			code = EXIT_TSARUN;
		}
	} else if (o->report_trace) {
		code = report_trace(o, &s, command);
	} else if (o->report_profile >= 0) {
		code = report_stacks(o, &s, command);
	} else if (o->report_markdown) {
		gate_report_session_markdown(stdout, &s, o->top, o->sort);
	} else {
		struct report_text_opts ro = {
		    .table =
			{
			    .sort = o->sort,
			    .top = o->top,
			    .color = outputs_use_color(o->color, stdout),
			    .command = command,
			    .artifact = o->report_artifact,
			    .width = o->wide ? 0 : termwrap_width(STDOUT_FILENO),
			},
		    .stored = true,
		};

		report_text_print(stdout, &s, &ro);
	}
	if (fflush(stdout) || ferror(stdout))
		code = EXIT_TSARUN;
	free(text);
	comparison__free(&cmp);
	session__free(&s);
	return code;
}
