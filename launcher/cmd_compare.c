// SPDX-License-Identifier: MIT
/* tsarun compare BASE.json NEW.json: the same verdict as a run's gate, offline (cmd.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact.h"
#include "cmd.h"
#include "confine.h"
#include "gate.h"
#include "gate_report.h"
#include "options.h"
#include "outputs.h"
#include "report_html.h"
#include "run.h"
#include "termwrap.h"
#include "textsafe.h"

int cmd_compare(const struct tsarun_opts *o)
{
	struct session base = {0}, new = {0};
	struct gate_side bside = {0}, nside = {0};
	struct comparison cmp = {
	    .baseline_kind = "artifact", .baseline_name = o->compare_base, .offline = true};
	char err[1536], what[600], nwhat[600];
	char *base_text = NULL, *new_text = NULL, *cmp_text = NULL;
	struct outputs *out = NULL;
	struct confine_opts co = options_for_confine(o);
	struct outputs_opts oo = options_for_outputs(o);
	int code = EXIT_TSARUN, ret;
	bool color, html = o->html_path != NULL;

	if (confine_offline(&co, &oo, &out))
		return EXIT_TSARUN;
	ret =
	    artifact_read(o->compare_base,
			  &(struct artifact_read_opts){
			      .what = "baseline", .detail = html, .text = html ? &base_text : NULL},
			  &base, err, sizeof(err));
	if (!ret)
		ret = artifact_read(o->compare_new,
				    &(struct artifact_read_opts){.what = "new artifact",
								 .detail = html,
								 .text = html ? &new_text : NULL},
				    &new, err, sizeof(err));
	if (ret)
		goto out_err;
	if (gate_side_init(&bside, base.runs, base.nruns, &base.host) ||
	    gate_side_init(&nside, new.runs, new.nruns, &new.host)) {
		snprintf(err, sizeof(err), "out of memory");
		goto out_err;
	}
	snprintf(what, sizeof(what), "baseline '%s'", o->compare_base);
	snprintf(nwhat, sizeof(nwhat), "new artifact '%s'", o->compare_new);
	ret = gate_check_mode(base.mode, new.mode, what, nwhat, err, sizeof(err));
	if (!ret)
		ret = gate_check_available(&o->gate_spec, &bside, what, err, sizeof(err));
	if (!ret)
		ret = gate_check_runs(&bside, what, err, sizeof(err));
	if (!ret) {
		snprintf(what, sizeof(what), "new artifact '%s'", o->compare_new);
		ret = gate_check_available(&o->gate_spec, &nside, what, err, sizeof(err));
	}
	/* Offline no run can be added: a short side could only be inconclusive. */
	if (!ret)
		ret = gate_check_runs(&nside, what, err, sizeof(err));
	if (ret)
		goto out_err;
	cmp.base_command = session_command(&base);
	cmp.new_command = session_command(&new);
	ret = gate_compare(&o->gate_spec, &bside, &nside, false, &cmp);
	if (ret) {
		snprintf(err, sizeof(err), "cannot compare: %s", strerror(-ret));
		goto out_err;
	}
	outputs_stamp(&cmp);
	color = outputs_use_color(o->color, stdout);
	if (!o->quiet)
		gate_report_comparison(stdout, &cmp, o->compare_new, color,
				       o->wide ? 0 : termwrap_width(STDOUT_FILENO));
	fflush(stdout);
	code = cmp.outcome == GATE_FAIL ? EXIT_GATE : 0;
	if (outputs_gate(&cmp, o->compare_new, out) && code == 0)
		code = EXIT_TSARUN;
	if (outputs_flame_diff(
		out,
		&(struct comparison_sides){
		    .base = base.runs, .nbase = base.nruns, .new = new.runs, .nnew = new.nruns},
		o->compare_new, o->quiet) &&
	    code == 0)
		code = EXIT_TSARUN;
	if (html) {
		struct session cs = {.cmp = &cmp};
		struct report_html_side bs = {.artifact = base_text,
					      .artifact_len = strlen(base_text),
					      .s = &base,
					      .name = o->compare_base};
		struct report_html h = {
		    .run = {.artifact = new_text,
			    .artifact_len = strlen(new_text),
			    .s = &new,
			    .name = o->compare_new},
		    .base = &bs,
		    .cmp = &cmp,
		};

		cmp_text = artifact_render_comparison(&cs);
		h.comparison = cmp_text;
		if ((!cmp_text || outputs_html(out, &h)) && code == 0)
			code = EXIT_TSARUN;
		if (!cmp_text)
			fprintf(stderr, "tsarun: cannot write the HTML report '%s': %s\n",
				o->html_path, strerror(ENOMEM));
	}
	goto out;
out_err:
	textsafe_term_line(stderr, "tsarun: ", err, "");
out:
	free(base_text);
	free(new_text);
	free(cmp_text);
	outputs__free(out);
	comparison__free(&cmp);
	gate_side_free(&bside);
	gate_side_free(&nside);
	session__free(&base);
	session__free(&new);
	return code;
}
