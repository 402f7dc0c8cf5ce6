// SPDX-License-Identifier: MIT
/*
 * Flame graph renderer. Stacks are merged into a tree of nodes (one per
 * distinct path from the root), names are interned, and the SVG is written
 * in one depth-first pass with children in name order, as flamegraph.pl
 * lays them out. The script embedded in the SVG does the interaction.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "hash.h"
#include "hashmap.h"
#include "jsonw.h"
#include "textsafe.h"
#include "vec.h"

struct fnode {
	uint32_t parent;
	uint32_t name;	/* index into names */
	uint32_t depth; /* root is 0 */
	int32_t fcat;	/* the frame's own category, -1: none */
	uint64_t value; /* inclusive */
	uint64_t cat[FLAME_MAX_CATS];
	uint64_t dbase, dnew; /* a differential graph's two sides, inclusive */
};

struct flame {
	struct fnode *nodes;
	size_t nnodes, nodes_cap;

	char *arena; /* interned names, NUL-terminated, back to back */
	size_t alen, acap;
	uint32_t *name_off; /* name id -> offset in arena */
	size_t nnames, names_cap;
	struct hmap names; /* a name's bytes -> its id */
	struct hmap edges; /* (parent, name) -> the child's node index */

	struct {
		char name[64];
		enum flame_palette pal;
		bool named;
	} cats[FLAME_MAX_CATS];
	uint32_t maxdepth;
	bool reversed; /* stacks go in leaf first (flame__set_reversed()) */
	bool diff;     /* flame__add_diff() was used: coloured by change */
};

/*
 * The seed of the name hash: not FNV's basis (it is a digit short), kept so
 * that a function keeps the colour it has always had.
 */
#define NAME_SEED 1469598103934665603ull

static uint64_t hash_bytes(const char *s, size_t n)
{
	return hash_fnv1a(s, n, NAME_SEED);
}

static uint64_t hash_edge(uint32_t parent, uint32_t name)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9E3779B97F4A7C15ull;

	return h ^ (h >> 29);
}

static const char *name_of(const struct flame *f, uint32_t id)
{
	return f->arena + f->name_off[id];
}

/* A name looked up before it is interned. */
struct name_probe {
	const char *s;
	size_t n;
};

static bool name_equal(uint32_t id, const void *probe, void *ctx)
{
	const char *t = name_of(ctx, id);
	const struct name_probe *p = probe;

	return !strncmp(t, p->s, p->n) && t[p->n] == '\0';
}

/* The id of name s[0..n), interned on first sight. Returns -ENOMEM or the id. */
static int64_t intern(struct flame *f, const char *s, size_t n)
{
	struct name_probe probe = {s, n};
	uint64_t h = hash_bytes(s, n);
	uint32_t id, *off;
	char *arena;
	int err;

	if (hmap__find(&f->names, h, name_equal, &probe, &id))
		return id;
	err = hmap__reserve(&f->names);
	if (err)
		return err;
	arena = vec_grow(f->arena, &f->acap, f->alen + n + 1, 1, 64);
	if (!arena)
		return -ENOMEM;
	f->arena = arena;
	off = vec_grow(f->name_off, &f->names_cap, f->nnames + 1, sizeof(*off), 64);
	if (!off)
		return -ENOMEM;
	f->name_off = off;
	memcpy(f->arena + f->alen, s, n);
	f->arena[f->alen + n] = '\0';
	f->name_off[f->nnames] = (uint32_t)f->alen;
	f->alen += n + 1;
	hmap__insert(&f->names, h, (uint32_t)f->nnames); /* reserved above */
	return (int64_t)f->nnames++;
}

/* An edge looked up: a node's parent and name. */
struct edge_probe {
	uint32_t parent, name;
};

static bool edge_equal(uint32_t idx, const void *probe, void *ctx)
{
	const struct fnode *n = &((const struct flame *)ctx)->nodes[idx];
	const struct edge_probe *p = probe;

	return n->parent == p->parent && n->name == p->name;
}

/* The child of parent called name, created on first sight. Returns -ENOMEM or its index. */
static int64_t child(struct flame *f, uint32_t parent, uint32_t name)
{
	struct edge_probe probe = {parent, name};
	uint64_t h = hash_edge(parent, name);
	struct fnode *n;
	uint32_t idx;
	int err;

	if (hmap__find(&f->edges, h, edge_equal, &probe, &idx))
		return idx;
	err = hmap__reserve(&f->edges);
	if (err)
		return err;
	n = vec_grow(f->nodes, &f->nodes_cap, f->nnodes + 1, sizeof(*n), 64);
	if (!n)
		return -ENOMEM;
	f->nodes = n;
	n = &f->nodes[f->nnodes];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->name = name;
	n->depth = f->nodes[parent].depth + 1;
	n->fcat = -1;
	if (n->depth > f->maxdepth)
		f->maxdepth = n->depth;
	hmap__insert(&f->edges, h, (uint32_t)f->nnodes); /* reserved above */
	return (int64_t)f->nnodes++;
}

struct flame *flame__new(void)
{
	struct flame *f = calloc(1, sizeof(*f));
	struct fnode *nodes;
	int64_t root;

	if (!f)
		return NULL;
	hmap__init(&f->names, f);
	hmap__init(&f->edges, f);
	root = intern(f, "all", 3);
	nodes = root < 0 ? NULL : vec_grow(f->nodes, &f->nodes_cap, 1, sizeof(*nodes), 64);
	if (!nodes) {
		flame__free(f);
		errno = ENOMEM;
		return NULL;
	}
	f->nodes = nodes;
	memset(&f->nodes[0], 0, sizeof(f->nodes[0]));
	f->nodes[0].name = (uint32_t)root;
	f->nodes[0].fcat = -1;
	f->nnodes = 1;
	for (int c = 0; c < FLAME_MAX_CATS; c++)
		f->cats[c].pal = FLAME_PAL_HOT;
	return f;
}

void flame__free(struct flame *f)
{
	if (!f)
		return;
	free(f->nodes);
	free(f->arena);
	free(f->name_off);
	hmap__free(&f->names);
	hmap__free(&f->edges);
	free(f);
}

int flame__set_category(struct flame *f, int cat, const char *name, enum flame_palette pal)
{
	if (cat < 0 || cat >= FLAME_MAX_CATS || pal < 0 || pal >= FLAME_PAL_NR)
		return -EINVAL;
	snprintf(f->cats[cat].name, sizeof(f->cats[cat].name), "%s", name ? name : "");
	f->cats[cat].pal = pal;
	f->cats[cat].named = true;
	return 0;
}

/* Add value along the path of frames given as (pointer, length) pairs. */
static int add_path(struct flame *f, const char *const *frames, const size_t *lens,
		    const int *fcats, size_t n, uint64_t value, int cat)
{
	uint32_t cur = 0;

	if (cat < 0 || cat >= FLAME_MAX_CATS)
		return -EINVAL;
	for (size_t k = 0; k < n; k++) {
		size_t i = f->reversed ? n - 1 - k : k;
		const char *s = frames[i] ? frames[i] : "";
		size_t len = lens ? lens[i] : strlen(s);
		int64_t id, c;

		if (!len) {
			s = "[unknown]";
			len = strlen(s);
		}
		id = intern(f, s, len);
		if (id < 0)
			return (int)id;
		c = child(f, cur, (uint32_t)id);
		if (c < 0)
			return (int)c;
		cur = (uint32_t)c;
		if (fcats && fcats[i] >= 0 && fcats[i] < FLAME_MAX_CATS)
			f->nodes[cur].fcat = fcats[i];
	}
	/* Inclusive values: every node on the path, and the root. */
	for (;;) {
		f->nodes[cur].value += value;
		f->nodes[cur].cat[cat] += value;
		if (!cur)
			break;
		cur = f->nodes[cur].parent;
	}
	return 0;
}

int flame__add_diff(struct flame *f, const char *const *frames, size_t n, uint64_t base,
		    uint64_t new)
{
	uint64_t width = base > new ? base : new;
	int err;

	if (f->nodes[0].value && !f->diff)
		return -EINVAL;
	f->diff = true;
	err = add_path(f, frames, NULL, NULL, n, width, 0);
	if (err || !width)
		return err;
	/* add_path() left the values on the path: find it again for the two sides */
	for (uint32_t cur = 0, i = 0;; i++) {
		f->nodes[cur].dbase += base;
		f->nodes[cur].dnew += new;
		if (i == n)
			break;
		{
			size_t k = f->reversed ? n - 1 - i : i;
			const char *s = frames[k] && frames[k][0] ? frames[k] : "[unknown]";
			int64_t id = intern(f, s, strlen(s));

			if (id < 0)
				return (int)id;
			cur = (uint32_t)child(f, cur, (uint32_t)id);
		}
	}
	return 0;
}

void flame__set_reversed(struct flame *f, bool reversed)
{
	f->reversed = reversed;
}

bool flame__is_diff(const struct flame *f)
{
	return f->diff;
}

int flame__add_ex(struct flame *f, const char *const *frames, const int *frame_cats, size_t n,
		  uint64_t value, int cat)
{
	return add_path(f, frames, NULL, frame_cats, n, value, cat);
}

int flame__add(struct flame *f, const char *const *frames, size_t n, uint64_t value, int cat)
{
	return add_path(f, frames, NULL, NULL, n, value, cat);
}

uint64_t flame__total(const struct flame *f)
{
	return f->nodes[0].value;
}

/* One folded line (no newline). Returns 0, -EINVAL when it does not parse, -ENOMEM. */
static int parse_line(struct flame *f, const char *s, size_t len, int cat)
{
	const char **frames = NULL;
	size_t *lens = NULL, n = 0, sp, nsemi = 0;
	uint64_t v = 0;
	int err;

	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	for (sp = len; sp > 0 && s[sp - 1] != ' ' && s[sp - 1] != '\t'; sp--)
		;
	if (sp == 0 || sp == len)
		return -EINVAL;
	for (size_t i = sp; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	len = sp - 1;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		nsemi += s[i] == ';';
	frames = malloc((nsemi + 1) * sizeof(*frames));
	lens = malloc((nsemi + 1) * sizeof(*lens));
	if (!frames || !lens) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0, start = 0; i <= len; i++) {
		if (i < len && s[i] != ';')
			continue;
		frames[n] = s + start;
		lens[n++] = i - start;
		start = i + 1;
	}
	err = add_path(f, frames, lens, NULL, n, v, cat);
out:
	free(frames);
	free(lens);
	return err;
}

int flame__parse_folded(struct flame *f, const char *text, size_t len, int cat, size_t *bad)
{
	size_t nbad = 0;
	int err = 0;

	if (cat < 0 || cat >= FLAME_MAX_CATS)
		return -EINVAL;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len, l = end - i;
		const char *line = text + i;

		i = end + 1;
		while (l && (line[l - 1] == '\r'))
			l--;
		if (!l || line[0] == '#')
			continue;
		err = parse_line(f, line, l, cat);
		if (err == -EINVAL) {
			nbad++;
			err = 0;
		} else if (err) {
			break;
		}
	}
	if (bad)
		*bad = nbad;
	return err;
}

/* SVG output. */

#define XPAD	   10
#define FRAME_H	   16
#define FONT_SIZE  12
#define FONT_WIDTH 0.59
#define TOP_PAD	   60
#define BOTTOM_PAD 34

/*
 * s as XML text (lib/textsafe: entities, controls and bad UTF-8 shown
 * escaped), at most max_chars columns, ".." marking a cut.
 */
static void xml_text(char *out, size_t outlen, const char *s, size_t max_chars)
{
	textsafe_xml_cut(out, outlen, s, TEXTSAFE_NUL, max_chars);
}

static bool duration_units(const char *u, double *ns_per_unit)
{
	if (!strcmp(u, "ns"))
		*ns_per_unit = 1;
	else if (!strcmp(u, "us"))
		*ns_per_unit = 1e3;
	else if (!strcmp(u, "ms"))
		*ns_per_unit = 1e6;
	else if (!strcmp(u, "s"))
		*ns_per_unit = 1e9;
	else
		return false;
	return true;
}

static const char *fmt_value(uint64_t v, const char *units, char *buf, size_t len)
{
	double k;

	if (duration_units(units, &k)) {
		double ns = (double)v * k;

		if (ns >= 1e9)
			snprintf(buf, len, "%.3f s", ns / 1e9);
		else if (ns >= 1e6)
			snprintf(buf, len, "%.2f ms", ns / 1e6);
		else if (ns >= 1e3)
			snprintf(buf, len, "%.1f us", ns / 1e3);
		else
			snprintf(buf, len, "%.0f ns", ns);
	} else {
		snprintf(buf, len, "%llu %s", (unsigned long long)v, units);
	}
	return buf;
}

/* A deterministic number in [0, 1) from a name, so a function keeps its colour. */
static double name_hash(const char *s)
{
	uint64_t h = hash_bytes(s, strlen(s));

	return (double)(h >> 11) / (double)(1ull << 53);
}

static bool is_kernel_frame(const char *s)
{
	size_t n = strlen(s);

	return n > 4 && !strcmp(s + n - 4, "_[k]");
}

/* A frame's colour as 0xRRGGBB: its palette, shaded by a hash of its name. */
static uint32_t color_rgb(enum flame_palette pal, const char *name)
{
	double v = name_hash(name), w = name_hash(name + (name[0] ? 1 : 0));
	int r, g, b;

	switch (pal) {
	case FLAME_PAL_YELLOW:
		r = 175 + (int)(55 * v);
		g = r;
		b = 50 + (int)(20 * w);
		break;
	case FLAME_PAL_BLUE:
		r = 80 + (int)(60 * v);
		g = r;
		b = 190 + (int)(55 * w);
		break;
	case FLAME_PAL_PURPLE:
		r = 170 + (int)(55 * v);
		g = 90 + (int)(40 * v);
		b = 200 + (int)(55 * w);
		break;
	case FLAME_PAL_GREEN:
		g = 200 + (int)(55 * v);
		r = 50 + (int)(60 * w);
		b = r;
		break;
	case FLAME_PAL_AQUA:
		r = 50 + (int)(60 * v);
		g = 165 + (int)(55 * v);
		b = 165 + (int)(55 * w);
		break;
	case FLAME_PAL_ORANGE:
		r = 190 + (int)(65 * v);
		g = 90 + (int)(65 * v);
		b = 0;
		break;
	case FLAME_PAL_GREY:
		r = 160 + (int)(40 * v);
		g = r;
		b = r;
		break;
	case FLAME_PAL_HOT:
	default:
		r = 205 + (int)(50 * w);
		g = (int)(230 * v);
		b = (int)(55 * v);
		break;
	}
	/*
	 * Kernel frames halfway to orange (flamegraph.pl colours them orange):
	 * still the state's hue, plainly apart from the user frames above them.
	 */
	if (is_kernel_frame(name)) {
		r = (r + 230) / 2;
		g = (g + 120) / 2;
		b = (b + 20) / 2;
	}
	return (uint32_t)r << 16 | (uint32_t)g << 8 | (uint32_t)b;
}

static void color(enum flame_palette pal, const char *name, char *buf, size_t len)
{
	uint32_t c = color_rgb(pal, name);

	snprintf(buf, len, "rgb(%u,%u,%u)", c >> 16, (c >> 8) & 255, c & 255);
}

/*
 * A differential frame: red where it grew, blue where it shrank (as
 * difffolded.pl colours them), deeper the larger the change against the
 * frame's width; near white when it moved by less than half a percent.
 */
static int diff_kind(const struct fnode *n)
{
	double d = (double)n->dnew - (double)n->dbase, w = n->value ? (double)n->value : 1;

	return d / w > 0.005 ? 1 : d / w < -0.005 ? -1 : 0;
}

static uint32_t diff_rgb(const struct fnode *n)
{
	double d = (double)n->dnew - (double)n->dbase, w = n->value ? (double)n->value : 1;
	double s = 0.3 + 0.7 * (fabs(d) / w > 1 ? 1 : fabs(d) / w);
	uint32_t fade = (uint32_t)(215 * (1 - s));

	switch (diff_kind(n)) {
	case 1:
		return 0xff0000u | fade << 8 | fade;
	case -1:
		return fade << 16 | fade << 8 | 0xffu;
	default:
		return 0xe6e6e6u;
	}
}

static const char *const diff_names[] = {"shrunk", "same", "grown"};

/* The category that colours node n: its own, else the one with the most value. */
static int node_cat(const struct flame *f, const struct fnode *n)
{
	int best = 0;

	if (n->fcat >= 0)
		return n->fcat;
	for (int c = 1; c < FLAME_MAX_CATS; c++)
		if (n->cat[c] > n->cat[best])
			best = c;
	return best;
}

static const char *cat_label(const struct flame *f, int c, char *buf, size_t len)
{
	if (f->cats[c].named && f->cats[c].name[0])
		return f->cats[c].name;
	snprintf(buf, len, "category %d", c);
	return buf;
}

static const char script[] =
    "\"use strict\";\n"
    "var svg, frames, details, searchbtn, unzoombtn, matchedtxt, W, INV, searching = null;\n"
    "var XPAD = 10, FS = 12, FW = 0.59;\n"
    "function init(evt) {\n"
    "  svg = document.getElementsByTagName(\"svg\")[0];\n"
    "  frames = document.getElementById(\"frames\");\n"
    "  details = document.getElementById(\"details\").firstChild;\n"
    "  searchbtn = document.getElementById(\"search\");\n"
    "  unzoombtn = document.getElementById(\"unzoom\");\n"
    "  matchedtxt = document.getElementById(\"matched\");\n"
    "  W = parseFloat(svg.getAttribute(\"width\"));\n"
    "  INV = svg.getAttribute(\"data-inverted\") === \"1\";\n"
    "  var gs = frames.children;\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var r = rect(gs[i]);\n"
    "    r.setAttribute(\"data-x\", r.getAttribute(\"x\"));\n"
    "    r.setAttribute(\"data-w\", r.getAttribute(\"width\"));\n"
    "    r.setAttribute(\"data-f\", r.getAttribute(\"fill\"));\n"
    "  }\n"
    "}\n"
    "function rect(g) { return g.getElementsByTagName(\"rect\")[0]; }\n"
    "function info(g) { return g.getElementsByTagName(\"title\")[0].textContent.split(\"\\n\"); "
    "}\n"
    "function frame_of(n) {\n"
    "  while (n && n !== svg) {\n"
    "    if (n.parentNode === frames) return n;\n"
    "    n = n.parentNode;\n"
    "  }\n"
    "  return null;\n"
    "}\n"
    "function fit(g) {\n"
    "  var r = rect(g), t = g.getElementsByTagName(\"text\")[0], name = info(g)[0];\n"
    "  var w = parseFloat(r.getAttribute(\"width\")) - 6, n = Math.floor(w / (FS * FW));\n"
    "  t.setAttribute(\"x\", parseFloat(r.getAttribute(\"x\")) + 3);\n"
    "  if (n < 3) { t.textContent = \"\"; return; }\n"
    "  t.textContent = name.length <= n ? name : name.substring(0, n - 2) + \"..\";\n"
    "}\n"
    "function zoom(node) {\n"
    "  var r = rect(node), xmin = parseFloat(r.getAttribute(\"data-x\"));\n"
    "  var w = parseFloat(r.getAttribute(\"data-w\")), xmax = xmin + w;\n"
    "  var ymin = parseFloat(r.getAttribute(\"y\")), ratio = (W - 2 * XPAD) / w, e = 0.0001;\n"
    "  unzoombtn.classList.remove(\"hide\");\n"
    "  var gs = frames.children;\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var g = gs[i], rr = rect(g), x = parseFloat(rr.getAttribute(\"data-x\"));\n"
    "    var gw = parseFloat(rr.getAttribute(\"data-w\")), y = "
    "parseFloat(rr.getAttribute(\"y\"));\n"
    "    g.classList.remove(\"parent\");\n"
    "    g.classList.remove(\"hide\");\n"
    "    if ((INV ? y < ymin : y > ymin) && x <= xmin + e && x + gw >= xmax - e) {\n"
    "      g.classList.add(\"parent\");\n"
    "      rr.setAttribute(\"x\", XPAD);\n"
    "      rr.setAttribute(\"width\", W - 2 * XPAD);\n"
    "    } else if ((INV ? y >= ymin : y <= ymin) && x >= xmin - e && x + gw <= xmax + e) {\n"
    "      rr.setAttribute(\"x\", XPAD + (x - xmin) * ratio);\n"
    "      rr.setAttribute(\"width\", gw * ratio);\n"
    "    } else {\n"
    "      g.classList.add(\"hide\");\n"
    "      continue;\n"
    "    }\n"
    "    fit(g);\n"
    "  }\n"
    "  if (searching) search(searching);\n"
    "}\n"
    "function unzoom() {\n"
    "  unzoombtn.classList.add(\"hide\");\n"
    "  var gs = frames.children;\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var g = gs[i], r = rect(g);\n"
    "    g.classList.remove(\"parent\");\n"
    "    g.classList.remove(\"hide\");\n"
    "    r.setAttribute(\"x\", r.getAttribute(\"data-x\"));\n"
    "    r.setAttribute(\"width\", r.getAttribute(\"data-w\"));\n"
    "    fit(g);\n"
    "  }\n"
    "  if (searching) search(searching);\n"
    "}\n"
    "function reset_search() {\n"
    "  searching = null;\n"
    "  var gs = frames.children;\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var r = rect(gs[i]);\n"
    "    r.setAttribute(\"fill\", r.getAttribute(\"data-f\"));\n"
    "  }\n"
    "  searchbtn.firstChild.nodeValue = \"Search\";\n"
    "  matchedtxt.classList.add(\"hide\");\n"
    "}\n"
    "function search(term) {\n"
    "  var re;\n"
    "  try { re = new RegExp(term); } catch (e) { alert(\"not a regular expression: \" + "
    "term); return; }\n"
    "  reset_search();\n"
    "  searching = term;\n"
    "  var gs = frames.children, m = [];\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var g = gs[i], r = rect(g);\n"
    "    if (!re.test(info(g)[0])) continue;\n"
    "    r.setAttribute(\"fill\", \"rgb(230,0,230)\");\n"
    "    m.push([parseFloat(r.getAttribute(\"data-x\")), "
    "parseFloat(r.getAttribute(\"data-w\"))]);\n"
    "  }\n"
    "  m.sort(function (a, b) { return a[0] - b[0]; });\n"
    "  var sum = 0, end = -1;\n"
    "  for (var j = 0; j < m.length; j++) {\n"
    "    var s = m[j][0], e = m[j][0] + m[j][1];\n"
    "    if (s >= end) { sum += e - s; end = e; } else if (e > end) { sum += e - end; end = e; "
    "}\n"
    "  }\n"
    "  searchbtn.firstChild.nodeValue = \"Reset Search\";\n"
    "  matchedtxt.firstChild.nodeValue = \"Matched: \" + (100 * sum / (W - 2 * "
    "XPAD)).toFixed(1) + \"%\";\n"
    "  matchedtxt.classList.remove(\"hide\");\n"
    "}\n"
    "function search_prompt() {\n"
    "  if (searching) { reset_search(); return; }\n"
    "  var t = prompt(\"Search frames (regular expression):\", \"\");\n"
    "  if (t) search(t);\n"
    "}\n"
    "window.addEventListener(\"click\", function (e) {\n"
    "  if (e.target.id === \"unzoom\") { unzoom(); return; }\n"
    "  if (e.target.id === \"search\") { search_prompt(); return; }\n"
    "  var g = frame_of(e.target);\n"
    "  if (g) zoom(g);\n"
    "}, false);\n"
    "window.addEventListener(\"mouseover\", function (e) {\n"
    "  var g = frame_of(e.target);\n"
    "  if (g) details.nodeValue = info(g).join(\"  |  \");\n"
    "}, false);\n"
    "window.addEventListener(\"mouseout\", function (e) {\n"
    "  if (frame_of(e.target)) details.nodeValue = \" \";\n"
    "}, false);\n"
    "window.addEventListener(\"keydown\", function (e) {\n"
    "  if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {\n"
    "    e.preventDefault();\n"
    "    search_prompt();\n"
    "  } else if (e.keyCode === 27) {\n"
    "    reset_search();\n"
    "    unzoom();\n"
    "  }\n"
    "}, false);\n";

static const char style[] =
    "text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
    "#title { text-anchor: middle; font-size: 17px; }\n"
    "#subtitle { text-anchor: middle; fill: rgb(90,90,90); }\n"
    "#search, #unzoom, #matched { cursor: pointer; }\n"
    "#search:hover, #unzoom:hover { fill: rgb(0,0,160); }\n"
    "#matched { text-anchor: end; }\n"
    ".hide { display: none; }\n"
    ".parent { opacity: 0.5; }\n"
    "#frames > g:hover > rect { stroke: rgb(0,0,0); stroke-width: 0.5; cursor: pointer; }\n";

struct render {
	const struct flame *f;
	FILE *out;
	const char *units;
	double pxper; /* pixels per unit of value */
	double min_px;
	int height;
	int top;	/* where the frames begin: below the title and the legend's rows */
	bool inverted;	/* an icicle graph: the root on top */
	uint32_t *kids; /* children of node i: kids[kid_off[i] .. kid_off[i+1]) */
	size_t *kid_off;
};

static int cmp_kids(const void *a, const void *b, void *ctx)
{
	const struct flame *f = ctx;
	const struct fnode *x = &f->nodes[*(const uint32_t *)a],
			   *y = &f->nodes[*(const uint32_t *)b];

	return strcmp(name_of(f, x->name), name_of(f, y->name));
}

static int build_kids(struct render *r)
{
	const struct flame *f = r->f;
	size_t *fill;

	r->kid_off = calloc(f->nnodes + 1, sizeof(*r->kid_off));
	r->kids = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*r->kids));
	fill = calloc(f->nnodes + 1, sizeof(*fill));
	if (!r->kid_off || !r->kids || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 1; i < f->nnodes; i++)
		r->kid_off[f->nodes[i].parent + 1]++;
	for (size_t i = 0; i < f->nnodes; i++)
		r->kid_off[i + 1] += r->kid_off[i];
	for (size_t i = 1; i < f->nnodes; i++) {
		uint32_t p = f->nodes[i].parent;

		r->kids[r->kid_off[p] + fill[p]++] = (uint32_t)i;
	}
	for (size_t i = 0; i < f->nnodes; i++)
		qsort_r(r->kids + r->kid_off[i], r->kid_off[i + 1] - r->kid_off[i],
			sizeof(*r->kids), cmp_kids, (void *)f);
	free(fill);
	return 0;
}

static void frame_svg(struct render *r, uint32_t idx, uint64_t start)
{
	const struct flame *f = r->f;
	const struct fnode *n = &f->nodes[idx];
	const char *name = name_of(f, n->name);
	double x = XPAD + (double)start * r->pxper, w = (double)n->value * r->pxper;
	double y = r->inverted ? r->top + (double)n->depth * FRAME_H
			       : r->height - BOTTOM_PAD - (double)(n->depth + 1) * FRAME_H;
	char esc[TEXTSAFE_SIZE(300)], label[1024], fill[32], v[48], pct[32], shown[300];
	int cats = 0, lc;

	for (int c = 0; c < FLAME_MAX_CATS; c++)
		cats += n->cat[c] != 0;
	/* A kernel frame without its "_[k]" mark, as flamegraph.pl shows it: its colour says it. */
	if (is_kernel_frame(name))
		snprintf(shown, sizeof(shown), "%.*s [kernel]", (int)(strlen(name) - 4), name);
	else
		snprintf(shown, sizeof(shown), "%s", name);
	xml_text(esc, sizeof(esc), shown, 300);
	if (is_kernel_frame(name))
		snprintf(shown, sizeof(shown), "%.*s", (int)(strlen(name) - 4), name);
	lc = (int)((w - 6) / (FONT_SIZE * FONT_WIDTH));
	if (lc >= 3)
		xml_text(label, sizeof(label), shown, (size_t)lc);
	else
		label[0] = '\0';
	if (f->diff) {
		uint32_t c = diff_rgb(n);

		snprintf(fill, sizeof(fill), "rgb(%u,%u,%u)", c >> 16, (c >> 8) & 255, c & 255);
	} else {
		color(f->cats[node_cat(f, n)].pal, name, fill, sizeof(fill));
	}
	snprintf(pct, sizeof(pct), "%.2f%%",
		 f->nodes[0].value ? 100.0 * (double)n->value / (double)f->nodes[0].value : 0);
	fprintf(r->out, "<g>\n<title>%s\n%s, %s", esc, fmt_value(n->value, r->units, v, sizeof(v)),
		pct);
	if (f->diff) {
		char b[48], d[48];
		double ch = (double)n->dnew - (double)n->dbase;

		fmt_value(n->dbase, r->units, b, sizeof(b));
		fmt_value(n->dnew, r->units, v, sizeof(v));
		fmt_value((uint64_t)fabs(ch), r->units, d, sizeof(d));
		fprintf(r->out, "\n%s: baseline %s, new %s (%s%s", diff_names[diff_kind(n) + 1], b,
			v, ch < 0 ? "-" : "+", d);
		if (n->dbase)
			fprintf(r->out, ", %+.1f%%", 100.0 * ch / (double)n->dbase);
		fputs(")", r->out);
	} else if (cats > 1 || (cats == 1 && f->cats[node_cat(f, n)].named)) {
		const char *sep = "\n";

		for (int c = 0; c < FLAME_MAX_CATS; c++) {
			char cl[64], cn[128];

			if (!n->cat[c])
				continue;
			xml_text(cn, sizeof(cn), cat_label(f, c, cl, sizeof(cl)), 60);
			fprintf(r->out, "%s%s %s (%.1f%%)", sep, cn,
				fmt_value(n->cat[c], r->units, v, sizeof(v)),
				100.0 * (double)n->cat[c] / (double)n->value);
			sep = ", ";
		}
	}
	fprintf(r->out,
		"</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		"rx=\"2\" ry=\"2\"%s%s%s/>\n<text x=\"%.2f\" y=\"%.1f\">%s</text>\n</g>\n",
		x, y, w, FRAME_H - 1, fill, f->diff ? " data-diff=\"" : "",
		f->diff ? diff_names[diff_kind(n) + 1] : "", f->diff ? "\"" : "", x + 3,
		y + FRAME_H - 4.5, label);
}

/* Depth-first, children in name order; frames too narrow to see are left out with their subtree. */
static int frames_svg(struct render *r)
{
	struct item {
		uint32_t idx;
		uint64_t start;
	} * stack;
	size_t top = 0;

	/* Every node is pushed at most once. */
	stack = malloc((r->f->nnodes + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	stack[top++] = (struct item){0, 0};
	while (top) {
		struct item it = stack[--top];
		const struct fnode *n = &r->f->nodes[it.idx];
		size_t lo = r->kid_off[it.idx], hi = r->kid_off[it.idx + 1];
		uint64_t off = it.start;

		if ((double)n->value * r->pxper < r->min_px)
			continue;
		frame_svg(r, it.idx, it.start);
		/* Push in reverse so the first child is drawn first. */
		for (size_t k = lo; k < hi; k++)
			off += r->f->nodes[r->kids[k]].value;
		for (size_t k = hi; k > lo; k--) {
			uint32_t c = r->kids[k - 1];

			off -= r->f->nodes[c].value;
			stack[top++] = (struct item){c, off};
		}
	}
	free(stack);
	return 0;
}

#define LEGEND_ROW_H 16

struct legend_item {
	char fill[32];
	char text[320]; /* XML-escaped */
	int x, row;
};

/*
 * What each colour means, with its share of the total, laid out in rows
 * that fit the picture's width. A category that colours frames of its own
 * (a trap's frame) may hold no stack's value (its time is its commands'):
 * named all the same, without a share, so that every colour drawn is in
 * the legend. Kernel frames: their shade, when the graph has any. Returns
 * the items; *rows is how many rows they take.
 */
static int legend(const struct flame *f, const char *units, int width, struct legend_item *leg,
		  int *rows)
{
	bool drawn[FLAME_MAX_CATS] = {false};
	char esc[256], cl[64], v[48];
	int n = 0, x = XPAD, row = 0;

	for (size_t i = 1; i < f->nnodes; i++)
		if (f->nodes[i].fcat >= 0 && f->nodes[i].fcat < FLAME_MAX_CATS && f->nodes[i].value)
			drawn[f->nodes[i].fcat] = true;
	for (int c = 0; c < FLAME_MAX_CATS; c++) {
		if (!f->cats[c].named || (!f->nodes[0].cat[c] && !drawn[c]))
			continue;
		color(f->cats[c].pal, "", leg[n].fill, sizeof(leg[n].fill));
		xml_text(esc, sizeof(esc), cat_label(f, c, cl, sizeof(cl)), 60);
		if (!f->nodes[0].cat[c])
			snprintf(leg[n].text, sizeof(leg[n].text), "%s (frames)", esc);
		else
			snprintf(leg[n].text, sizeof(leg[n].text), "%s %s (%.1f%%)", esc,
				 fmt_value(f->nodes[0].cat[c], units, v, sizeof(v)),
				 100.0 * (double)f->nodes[0].cat[c] / (double)f->nodes[0].value);
		n++;
	}
	for (size_t i = 1; i < f->nnodes; i++) {
		if (!is_kernel_frame(name_of(f, f->nodes[i].name)))
			continue;
		color(FLAME_PAL_GREY, "kernel_[k]", leg[n].fill, sizeof(leg[n].fill));
		snprintf(leg[n].text, sizeof(leg[n].text),
			 "kernel frames: their state's colour, toward orange");
		n++;
		break;
	}
	for (int i = 0; i < n; i++) {
		/* The text's width as the frames' labels are measured (an escape counts as its length). */
		int w = 16 + (int)(strlen(leg[i].text) * FONT_SIZE * FONT_WIDTH);

		if (x > XPAD && x + w > width - XPAD) {
			x = XPAD;
			row++;
		}
		leg[i].x = x;
		leg[i].row = row;
		x += w + 16;
	}
	*rows = row + 1;
	return n;
}

int flame__write_svg(const struct flame *f, FILE *out, const struct flame_svg_opts *o)
{
	struct flame_svg_opts def = {0};
	struct render r = {.f = f, .out = out};
	const char *title;
	char esc[512], v[48];
	struct legend_item leg[FLAME_MAX_CATS + 1];
	int width, err = 0, nleg, rows = 1;

	if (!o)
		o = &def;
	title = o->title ? o->title : o->inverted ? "Icicle Graph" : "Flame Graph";
	r.units = o->units && *o->units ? o->units : "samples";
	width = o->width > 2 * XPAD + 100 ? o->width : 1200;
	r.min_px = o->min_width_px > 0 ? o->min_width_px : 0.1;
	nleg = f->diff ? 0 : legend(f, r.units, width, leg, &rows);
	r.top = TOP_PAD + (rows - 1) * LEGEND_ROW_H;
	r.height = (int)(f->maxdepth + 1) * FRAME_H + r.top + BOTTOM_PAD;
	r.inverted = o->inverted;
	r.pxper = f->nodes[0].value ? (double)(width - 2 * XPAD) / (double)f->nodes[0].value : 0;
	err = build_kids(&r);
	if (err)
		goto out;

	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" onload=\"init(evt)\" "
		"viewBox=\"0 0 %d %d\" data-inverted=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" "
		"xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
		"<!-- Flame graph written by tsarun. Frames are merged by name from the root "
		"(%s) %s; width is value. -->\n",
		width, r.height, width, r.height, r.inverted, r.inverted ? "top" : "bottom",
		r.inverted ? "down" : "up");
	fprintf(out,
		"<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"#eeeeee\" offset=\"5%%\"/><stop stop-color=\"#eeeeb0\" "
		"offset=\"95%%\"/></linearGradient></defs>\n"
		"<style type=\"text/css\"><![CDATA[\n%s]]></style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
		style, script);
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
		width, r.height);
	xml_text(esc, sizeof(esc), title, 200);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"22\">%s</text>\n", width / 2, esc);
	if (o->subtitle) {
		xml_text(esc, sizeof(esc), o->subtitle, 200);
		fprintf(out, "<text id=\"subtitle\" x=\"%d\" y=\"38\">%s</text>\n", width / 2, esc);
	}
	fprintf(out,
		"<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"22\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"22\">Search</text>\n"
		"<text id=\"matched\" class=\"hide\" x=\"%d\" y=\"%d\"> </text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		/* Room for its longest label, "Reset Search", inside the picture. */
		XPAD,
		width - XPAD - (int)(strlen("Reset Search") * FONT_SIZE * FONT_WIDTH + 0.5) - 4,
		width - XPAD, r.height - 12, XPAD, r.height - 12);

	/* The legend, in rows that fit the width (legend(), laid out before the frames). */
	if (f->diff) {
		char b[48];

		fmt_value(f->nodes[0].dbase, r.units, b, sizeof(b));
		fmt_value(f->nodes[0].dnew, r.units, v, sizeof(v));
		fprintf(
		    out,
		    "<rect x=\"%d\" y=\"44\" width=\"12\" height=\"12\" fill=\"rgb(255,0,0)\"/>"
		    "<text x=\"%d\" y=\"54\">grown</text>\n"
		    "<rect x=\"%d\" y=\"44\" width=\"12\" height=\"12\" fill=\"rgb(0,0,255)\"/>"
		    "<text x=\"%d\" y=\"54\">shrunk (frames as wide as the larger side)</text>\n"
		    "<text x=\"%d\" y=\"54\">baseline %s, new %s</text>\n",
		    XPAD, XPAD + 16, XPAD + 80, XPAD + 96, XPAD + 420, b, v);
	}
	for (int i = 0; i < nleg; i++)
		fprintf(out,
			"<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">%s</text>\n",
			leg[i].x, 44 + leg[i].row * LEGEND_ROW_H, leg[i].fill, leg[i].x + 16,
			54 + leg[i].row * LEGEND_ROW_H, leg[i].text);

	fprintf(out, "<g id=\"frames\">\n");
	if (f->nodes[0].value)
		err = frames_svg(&r);
	fprintf(out, "</g>\n");
	if (!f->nodes[0].value)
		fprintf(out, "<text x=\"%d\" y=\"%d\">no samples: nothing to draw</text>\n", XPAD,
			r.height - BOTTOM_PAD - 4);
	fprintf(out, "</svg>\n");
	if (!err && ferror(out))
		err = -EIO;
out:
	free(r.kids);
	free(r.kid_off);
	return err;
}

int flame__write_json(const struct flame *f, FILE *out, const char *units)
{
	struct render r = {.f = f, .out = out};
	struct item {
		uint32_t idx;
	} *stack = NULL;
	struct jsonw *w = NULL;
	size_t top = 0;
	int err;

	err = build_kids(&r);
	if (err)
		goto out;
	w = jsonw__new(out, 0);
	if (!w) {
		err = -ENOMEM;
		goto out;
	}
	jsonw__obj_open(w);
	jsonw__str_field(w, "units", units && *units ? units : "samples");
	jsonw__uint_field(w, "total", f->nodes[0].value);
	if (f->diff) {
		jsonw__key(w, "diff");
		jsonw__obj_open(w);
		jsonw__uint_field(w, "base", f->nodes[0].dbase);
		jsonw__uint_field(w, "new", f->nodes[0].dnew);
		jsonw__obj_close(w);
	}
	jsonw__key(w, "categories");
	jsonw__arr_open(w);
	for (int c = 0; c < FLAME_MAX_CATS; c++) {
		char cl[64];

		if (!f->cats[c].named && !f->nodes[0].cat[c])
			continue;
		jsonw__obj_open(w);
		jsonw__int_field(w, "id", c);
		jsonw__str_field(w, "name", cat_label(f, c, cl, sizeof(cl)));
		jsonw__bool_field(w, "named", f->cats[c].named);
		jsonw__uint_field(w, "value", f->nodes[0].cat[c]);
		jsonw__uint_field(w, "color", color_rgb(f->cats[c].pal, ""));
		jsonw__obj_close(w);
	}
	jsonw__arr_close(w);
	jsonw__key(w, "names");
	jsonw__arr_open(w);
	for (size_t i = 0; i < f->nnames; i++)
		jsonw__str(w, name_of(f, (uint32_t)i));
	jsonw__arr_close(w);
	/* Depth-first, children in name order: a frame's parent is the last one a level up. */
	jsonw__key(w, "frames");
	jsonw__arr_open(w);
	stack = malloc((f->nnodes + 1) * sizeof(*stack));
	if (!stack) {
		err = -ENOMEM;
		goto out;
	}
	if (f->nodes[0].value)
		stack[top++] = (struct item){0};
	while (top) {
		const struct fnode *n = &f->nodes[stack[--top].idx];
		size_t lo = r.kid_off[n - f->nodes], hi = r.kid_off[n - f->nodes + 1];
		int cats = 0;

		for (int c = 0; c < FLAME_MAX_CATS; c++)
			cats += n->cat[c] != 0;
		jsonw__arr_open(w);
		jsonw__uint(w, n->depth);
		jsonw__uint(w, n->name);
		jsonw__uint(w, n->value);
		jsonw__uint(w, f->diff
				   ? diff_rgb(n)
				   : color_rgb(f->cats[node_cat(f, n)].pal, name_of(f, n->name)));
		/* The split by category, where there is one to show. */
		if (f->diff) {
			/* A differential graph's two sides instead of a split (flame.h). */
			jsonw__uint(w, n->dbase);
			jsonw__uint(w, n->dnew);
		} else if (cats > 1 || (cats == 1 && f->cats[node_cat(f, n)].named)) {
			jsonw__arr_open(w);
			for (int c = 0; c < FLAME_MAX_CATS; c++) {
				if (!n->cat[c])
					continue;
				jsonw__int(w, c);
				jsonw__uint(w, n->cat[c]);
			}
			jsonw__arr_close(w);
		}
		jsonw__arr_close(w);
		for (size_t k = hi; k > lo; k--)
			stack[top++] = (struct item){r.kids[k - 1]};
	}
	jsonw__arr_close(w);
	jsonw__obj_close(w);
	err = jsonw__finish(w);
out:
	jsonw__free(w);
	free(stack);
	free(r.kids);
	free(r.kid_off);
	return err;
}
