/* SPDX-License-Identifier: MIT */
/*
 * Monitor mode: tsarun -p PID attaches to a running process and reports
 * its threads every --interval (launcher/cmd_monitor.c; the filters, table and
 * JSON Lines are analyze/monitor.h).
 */
#ifndef TSARUN_ATTACH_H
#define TSARUN_ATTACH_H

struct tsarun_opts;

/* Run monitor mode; returns the exit code (0, or 125 for tsarun's own errors). */
int monitor_main(const struct tsarun_opts *o);

#endif /* TSARUN_ATTACH_H */
