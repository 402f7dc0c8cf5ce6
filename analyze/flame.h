/* SPDX-License-Identifier: MIT */
/*
 * Flame graphs: folded stacks in, an interactive SVG out (hover details,
 * click to zoom, search, a legend), with no perl and nothing downloaded.
 * Generic on purpose: the off-CPU, on-CPU and wall-clock profiles use it,
 * and so can any other profile that can be written as stacks of names with
 * a value (the bash profiler's commands, for instance).
 *
 *   struct flame *f = flame__new();
 *   flame__set_category(f, 1, "sleeping (S)", FLAME_PAL_BLUE);
 *   flame__add(f, (const char *[]){"main", "read"}, 2, 1500, 1);
 *   flame__parse_folded(f, text, len, 0, &bad);   // "a;b;c 42" lines
 *   flame__write_svg(f, stdout, &(struct flame_svg_opts){.title = "..."});
 *   flame__free(f);
 *
 * Colour carries meaning: each stack belongs to a category (0 unless said
 * otherwise) whose palette colours its frames; a frame shared by stacks of
 * several categories takes the colour of the one with the most value under
 * it, and its tooltip shows the split. A frame may also carry its own
 * category (flame__add_ex), which then wins. Frame names ending in "_[k]"
 * (the flamegraph.pl convention for kernel frames) get a darker shade of
 * their category's colour. Within a palette the shade follows a hash of the
 * name, so one function keeps its colour across graphs.
 *
 * Ownership: the flame copies every name it is given; the caller keeps its
 * strings. Not thread-safe. Functions return 0 or -errno.
 */
#ifndef TSARUN_FLAME_H
#define TSARUN_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FLAME_MAX_CATS 8

enum flame_palette {
	FLAME_PAL_HOT = 0, /* red to yellow: CPU (the classic flame graph) */
	FLAME_PAL_YELLOW,  /* waiting for a CPU */
	FLAME_PAL_BLUE,	   /* sleeping */
	FLAME_PAL_PURPLE,  /* uninterruptible */
	FLAME_PAL_GREEN,
	FLAME_PAL_AQUA,
	FLAME_PAL_ORANGE,
	FLAME_PAL_GREY, /* unattributed, unknown */
	FLAME_PAL_NR,
};

struct flame;

struct flame *flame__new(void);
void flame__free(struct flame *f);

/* Name category cat (0 <= cat < FLAME_MAX_CATS) for the legend and pick its palette. */
int flame__set_category(struct flame *f, int cat, const char *name, enum flame_palette pal);

/* Add value to the stack frames[0] (root) ... frames[n-1] (leaf). Empty names become "[unknown]". */
int flame__add(struct flame *f, const char *const *frames, size_t n, uint64_t value, int cat);

/* The same, with a category per frame (frame_cats[i] < 0: none, use the stack's). */
int flame__add_ex(struct flame *f, const char *const *frames, const int *frame_cats, size_t n,
		  uint64_t value, int cat);

/*
 * Stacks added from now on go in leaf first (flamegraph.pl's --reverse):
 * the graph's roots are where stacks end (the functions that blocked or
 * ran), and above each, who called it, merged across callers.
 */
void flame__set_reversed(struct flame *f, bool reversed);

/*
 * Add the lines of a folded profile ("frame;frame;frame VALUE", as written
 * by flamegraph.pl's stackcollapse scripts, inferno and tsarun) under
 * category cat. Lines that do not parse are skipped and counted in *bad
 * (may be NULL); empty lines and lines starting with '#' are ignored.
 */
int flame__parse_folded(struct flame *f, const char *text, size_t len, int cat, size_t *bad);

/*
 * A differential flame graph, as FlameGraph's difffolded.pl draws one: add
 * each stack with its baseline and its new value (a flame is either
 * differential or not: -EINVAL after flame__add). Frames are as wide as the
 * larger side, so what shrank away is still seen; red where the new side is
 * larger (grown), blue where smaller (shrunk), deeper with the change
 * against the frame's width, near white within half a percent; the tooltip
 * says "grown: baseline X, new Y (+Z, +P%)", and each frame's rect carries
 * data-diff="grown|shrunk|same".
 */
int flame__add_diff(struct flame *f, const char *const *frames, size_t n, uint64_t base,
		    uint64_t new);
bool flame__is_diff(const struct flame *f);

/* Sum of every value added. */
uint64_t flame__total(const struct flame *f);

struct flame_svg_opts {
	const char *title;    /* default "Flame Graph" */
	const char *subtitle; /* optional second line */
	/*
	 * What values count: "ns", "us", "ms" and "s" are shown as durations;
	 * anything else ("samples", "commands") is printed after the number.
	 * Default "samples".
	 */
	const char *units;
	int width;	     /* pixels, default 1200 */
	double min_width_px; /* frames narrower than this are left out, default 0.1 */
	bool inverted;	     /* an icicle graph: the root on top (title "Icicle Graph") */
};

/*
 * Write the graph as a standalone SVG document (well-formed XML, UTF-8;
 * names with invalid UTF-8 or control characters are repaired). Opened in
 * a browser it is interactive: hover a frame for its details, click to zoom
 * into it, Ctrl-F or the Search button to highlight frames by regular
 * expression. An empty flame writes a graph that says so.
 */
int flame__write_svg(const struct flame *f, FILE *out, const struct flame_svg_opts *o);

/*
 * The graph as data, for a page that draws it (the HTML report): one JSON
 * object {"units", "total", "categories": [{id, name, named, value,
 * color}], "names": [...], "frames": [[depth, name, value, color
 * (0xRRGGBB), [cat, value, ...] when the split is worth showing], ...]}.
 * A differential graph (flame__add_diff) also has "diff": {"base", "new"},
 * the two sides' totals, and its frames end in base, new instead of a split
 * (value is the larger, as the frame is drawn; the colour says which grew).
 * Frames come depth-first with children in name order, as the SVG lays
 * them out, so a frame's parent is the last frame before it one level up;
 * every frame is there, however narrow. Names are strict UTF-8 JSON
 * strings, whatever bytes they hold. An empty graph has no frames.
 */
int flame__write_json(const struct flame *f, FILE *out, const char *units);

#endif /* TSARUN_FLAME_H */
