/* SPDX-License-Identifier: MIT */
/*
 * The HTML report: one self-contained page per run or comparison (no
 * network: every script and style is inline). The page is a template plus
 * data. The template, its stylesheet, its script and the charting library
 * (D3, from Debian) are put together at build time (analyze/report_html/,
 * $(OUTPUT)/report_html_page.h); this module writes them around the data:
 *
 *   tsarun-artifact    the artifact's JSON text (for compare: the new side)
 *   tsarun-derived     what tsarun computes from it and the page shows as
 *                      is: the text report (warnings and notes as the
 *                      terminal has them), the flame graphs of the stacks
 *                      (flame.h's tree, as the SVGs draw it) and each
 *                      metric's value per measured run with the median's
 *                      interval
 *   tsarun-base, tsarun-base-derived, tsarun-comparison (compare only)
 *   tsarun-diff-flames with a baseline (compare, or a run's --baseline):
 *                      the differential flame graphs of the two sides'
 *                      stacks (flamediff.h), or why there are none
 *
 * each in a <script type="application/json"> element, escaped by
 * textsafe_json_html so that nothing in the data ends the element. The
 * page's script renders each section from the data it needs; text from the
 * command reaches the page through textContent only, never as markup.
 *
 * The caller owns the output (a FILE it opened, however it opens files).
 */
#ifndef TSARUN_REPORT_HTML_H
#define TSARUN_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

struct session;
struct comparison;

struct report_html_side {
	const char *artifact; /* the artifact as JSON text (strict UTF-8) */
	size_t artifact_len;
	const struct session *s; /* its runs, for the derived figures */
	const char *name;	 /* where it was read from or written to (NULL: none) */
};

struct report_html {
	struct report_html_side run; /* the run, or compare's new side */
	/* tsarun compare: the baseline, the verdict as JSON text and as a struct. */
	const struct report_html_side *base;
	const char *comparison;
	const struct comparison *cmp;
};

/* Write the page to f. Returns 0 or -errno (-EIO when f failed). */
int report_html_write(FILE *f, const struct report_html *h);

#endif /* TSARUN_REPORT_HTML_H */
