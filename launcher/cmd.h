/* SPDX-License-Identifier: MIT */
/*
 * tsarun's commands, one file each, for main() to dispatch to: a command's
 * run (cmd_run.c), compare (cmd_compare.c) and report (cmd_report.c);
 * monitor mode (-p) is cmd_monitor.c's, doctor cmd_doctor.c's. Each returns the
 * process's exit status: the command's own for a run (128+N for a signal,
 * 126/127 when it could not be executed or found), EXIT_GATE when the
 * regression gate failed, EXIT_TSARUN when tsarun itself did. Nothing here
 * exits; each prints its own errors once.
 */
#ifndef TSARUN_CMD_H
#define TSARUN_CMD_H

#define EXIT_TSARUN 125
#define EXIT_GATE   3 /* the command succeeded, the regression gate failed */

struct tsarun_opts;

/* A command's run (or --bash script's), as the supervisor, under the watchdog (watchdog.h). */
int cmd_run(struct tsarun_opts *o);

/* tsarun compare BASE.json NEW.json: the gate's verdict, offline. */
int cmd_compare(const struct tsarun_opts *o);

/* tsarun report RUN.json: a stored artifact's report, again, to stdout. */
int cmd_report(const struct tsarun_opts *o);

#endif /* TSARUN_CMD_H */
