// SPDX-License-Identifier: MIT
/*
 * tsarun: run a command and account for where every thread's time went.
 *
 * main() parses, dispatches to a command (cmd.h), and maps every outcome to
 * the documented exit codes: the command's own status, 128+N for a signal,
 * 125 for tsarun's own errors, 126/127 when the command cannot be executed
 * or found. Nothing below main() exits.
 */
#include <stdio.h>
#include <string.h>

#include "cmd_monitor.h"
#include "cmd.h"
#include "delayacct.h"
#include "cmd_doctor.h"
#include "options.h"
#include "sandbox.h"
#include "textsafe.h"
#include "watchdog.h"

int main(int argc, char **argv)
{
	struct tsarun_opts o;
	char err[256];

	options_defaults(&o);
	if (options_parse(&o, argc, argv, err, sizeof(err))) {
		textsafe_term_line(stderr, "tsarun: ", err, "");
		return EXIT_TSARUN;
	}
	switch (o.mode) {
	case MODE_HELP:
		fputs(options_usage(), stdout);
		return 0;
	case MODE_VERSION:
		printf("tsarun %s (%s)\n", TSARUN_VERSION, TSARUN_REV);
		return 0;
	case MODE_DOCTOR:
		return doctor_run(o.doctor_json);
	case MODE_COMPARE:
		return cmd_compare(&o);
	case MODE_REPORT:
		return cmd_report(&o);
	case MODE_MONITOR:
		return monitor_main(&o);
	case MODE_RUN:
		break;
	}
	/*
	 * The watchdog stays behind as the process the shell started (it
	 * returns the supervisor's status); the supervisor runs the session.
	 */
	{
		struct watchdog_opts wo = {
		    .leave = o.descendants == DESC_LEAVE,
		    .grace_ns = o.kill_grace_ns,
		    .no_sandbox = o.no_sandbox,
		};
		int code, ret = watchdog_start(&wo, &code);

		if (ret > 0)
			return code;
		if (ret < 0) {
			fprintf(stderr, "tsarun: cannot fork the supervisor: %s\n", strerror(-ret));
			return EXIT_TSARUN;
		}
	}
	/* SIGSYS: what tsarun holds for the machine goes back before it exits. */
	sandbox_on_violation(delayacct_on_violation);
	return cmd_run(&o);
}
