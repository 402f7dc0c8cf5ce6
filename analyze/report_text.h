/* SPDX-License-Identifier: MIT */
/*
 * A session's report for people, composed once: the last run's table, the
 * runs' summary when there were several, the bash profile's tree, and the
 * gate's verdict with where it moved. A run writes it to stderr (or
 * --report FILE); `tsarun report` writes a stored artifact's to stdout.
 */
#ifndef TSARUN_REPORT_TEXT_H
#define TSARUN_REPORT_TEXT_H

#include <stdio.h>

#include "bashprof.h" /* struct bashprof_print_opts */
#include "table.h"    /* struct table_opts */

struct session;

struct report_text_opts {
	/* The table's options; .command is the session's command when NULL. */
	struct table_opts table;
	/* The bash tree's options (.color and .width: the table's). */
	struct bashprof_print_opts bash;
	/*
	 * From a stored artifact: the bash tree is not read back, so a --bash
	 * session says where its profile is instead.
	 */
	bool stored;
};

/* The last run of s must exist. 0, or -EIO when f failed. */
int report_text_print(FILE *f, const struct session *s, const struct report_text_opts *o);

#endif /* TSARUN_REPORT_TEXT_H */
