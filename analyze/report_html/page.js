// SPDX-License-Identifier: MIT
/*
 * The HTML report's script: reads the page's data elements (report_html.h)
 * and draws one section per thing the run recorded. A section is an entry
 * of SECTIONS: when(ctx) says whether the data it needs is there (a section
 * whose data is absent is not drawn at all), render(body, ctx) draws it.
 * A new kind of data (the explained regression, the critical path) is a new
 * entry, without touching the others.
 *
 * Every text that came from the command (argv, thread names, stack frames,
 * a script's commands, file names, reasons quoted from an artifact) is put
 * in the page as text: textContent, createTextNode, canvas fillText, never
 * markup. h() below is the only way elements are made.
 */
"use strict";
(function () {
	const T0 = performance.now();

	/* ---------- data ---------- */
	function readData(id) {
		const e = document.getElementById(id);
		return e ? JSON.parse(e.textContent) : null;
	}

	/* ---------- elements: text only ---------- */
	function h(tag, props, ...kids) {
		const e = document.createElement(tag);
		for (const k in props || {}) {
			const v = props[k];
			if (v === null || v === undefined || v === false) continue;
			if (k === "class") e.className = v;
			else if (k === "text") e.textContent = String(v);
			else if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
			else if (k === "style") Object.assign(e.style, v);
			else if (/^(data-[a-z-]+|title|id|type|placeholder|value|colspan|role|aria-label|for)$/.test(k))
				e.setAttribute(k, String(v));
			else throw new Error("h(): attribute " + k + " is not one the page sets");
		}
		for (const c of kids.flat(Infinity)) {
			if (c === null || c === undefined || c === false) continue;
			e.append(c instanceof Node ? c : document.createTextNode(String(c)));
		}
		return e;
	}

	/* ---------- numbers for people (as the terminal report writes them) ---------- */
	function fmtDur(ns) {
		if (ns === null || ns === undefined || !isFinite(ns)) return "n/a";
		const a = Math.abs(ns);
		if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
		if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e8 ? 1 : 2) + " ms";
		if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e5 ? 0 : 1) + " us";
		return Math.round(ns) + " ns";
	}
	function fmtMs(ns) {
		if (ns === null || ns === undefined) return "-";
		const ms = ns / 1e6;
		if (ns === 0) return "0";
		return ms >= 100 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
	}
	function fmtKiB(k) {
		if (k === null || k === undefined) return "n/a";
		return k >= 1048576 ? (k / 1048576).toFixed(2) + " GiB" : k >= 1024 ? (k / 1024).toFixed(2) + " MiB" : Math.round(k) + " KiB";
	}
	function fmtCount(v) {
		return v === null || v === undefined ? "n/a" : Number.isInteger(v) ? String(v) : v.toFixed(1);
	}
	function fmtUnit(v, unit) {
		return unit === "ns" ? fmtDur(v) : unit === "KiB" ? fmtKiB(v) : fmtCount(v);
	}
	function pct(v) {
		return (100 * v).toFixed(v < 0.001 ? 3 : v < 0.1 ? 2 : 1) + "%";
	}
	/* A command line as a shell would take it back: words with specials in quotes. */
	function shellWords(argv) {
		return (argv || []).map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'")).join(" ");
	}

	const STATE_COLORS = {
		on_cpu: "#e4572e", runqueue: "#f3a712", sleeping: "#4c86c6", uninterruptible: "#8e5bb5",
		stopped: "#7a8a99", other: "#b9c0ca",
	};
	const STATE_LABELS = {
		on_cpu: "on CPU", runqueue: "runqueue", sleeping: "sleeping (S)", uninterruptible: "uninterruptible (D)",
		stopped: "stopped", other: "residual",
	};
	function legend(keys) {
		return h("div", { class: "legend" }, keys.map((k) => h("span", null, h("i", { style: { background: STATE_COLORS[k] } }), STATE_LABELS[k])));
	}

	/* ---------- the tooltip ---------- */
	const tip = document.getElementById("tooltip");
	function showTip(ev, lines) {
		tip.textContent = lines.join("\n");
		tip.hidden = false;
		const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
		const y = ev.clientY + 16 + tip.offsetHeight > window.innerHeight ? ev.clientY - tip.offsetHeight - 10 : ev.clientY + 16;
		tip.style.left = Math.max(4, x) + "px";
		tip.style.top = Math.max(4, y) + "px";
	}
	function hideTip() {
		tip.hidden = true;
	}

	/* ---------- a key-value tile ---------- */
	function kv(key, text, sub, field, raw) {
		return h("div", { class: "kv", "data-field": field, "data-value": raw },
			h("div", { class: "k" }, key), h("div", { class: "v" }, text), sub ? h("div", { class: "s" }, sub) : null);
	}

	function lastRun(a) {
		return a && a.runs && a.runs.length ? a.runs[a.runs.length - 1] : null;
	}
	function runStatus(r) {
		if (!r) return "no run";
		if (r.status === "signaled") return "killed by " + (r.exit.signal_name || "signal " + r.exit.signal);
		if (r.status === "interrupted") return "interrupted" + (r.interrupted_by ? " by " + r.interrupted_by : "") + (r.exit.code !== null ? ", exit " + r.exit.code : "");
		return "exit " + r.exit.code;
	}

	/* ---------- section: the run's header ---------- */
	function runHeader(body, a, d, label) {
		const r = lastRun(a);
		if (label) body.append(h("h3", null, label));
		body.append(h("div", { class: "cmd code", "data-field": "command" }, shellWords(a.command.argv)));
		const measured = a.runs.filter((x) => !x.warmup).length;
		const g = h("div", { class: "grid" });
		g.append(kv("status", runStatus(r), a.command.mode === "bash" ? "bash script" : null, "status", r.exit.code));
		g.append(kv("wall", fmtDur(r.wall_ns), "from the start barrier to the exit", "wall_ns", r.wall_ns));
		g.append(kv("CPU", fmtDur(r.user_ns + r.sys_ns), "user " + fmtDur(r.user_ns) + " + sys " + fmtDur(r.sys_ns), "cpu_ns", r.user_ns + r.sys_ns));
		g.append(kv("max RSS", fmtKiB(r.max_rss_kb), null, "max_rss_kb", r.max_rss_kb));
		if (r.totals) g.append(kv("threads", String(r.totals.threads), r.totals.processes + (r.totals.processes === 1 ? " process" : " processes"), "threads", r.totals.threads));
		if (r.rusage) g.append(kv("switches", r.rusage.voluntary_switches + " / " + r.rusage.involuntary_switches, "voluntary / involuntary (rusage)", "switches", r.rusage.voluntary_switches));
		if (a.runs.length > 1) g.append(kv("runs", String(measured), (a.runs.length - measured) + " warm-up; the thread detail is the last run's", "runs", measured));
		const host = a.host || {};
		g.append(kv("host", host.kernel || "?", [host.arch, host.cpus + " CPUs", host.cpu_model, host.virtualized && host.virtualized !== "none" ? host.virtualized : null].filter(Boolean).join(", "), "kernel", host.kernel));
		g.append(kv("tool", "tsarun " + ((a.tool && a.tool.version) || "?"), a.tool && a.tool.sandbox ? (a.tool.sandbox.active ? "sandboxed" : "not sandboxed: " + (a.tool.sandbox.reason || "?")) : null, "tool", a.tool && a.tool.version));
		body.append(g);
		const q = r.quality || {};
		const src = h("ul", { class: "lines", "data-field": "sources" });
		src.append(h("li", null, "sources: " + (q.sources_active || []).join(" ")));
		for (const u of q.sources_unavailable || []) src.append(h("li", { class: "note" }, u.source + " unavailable: " + u.reason));
		body.append(src);
		const qual = [];
		if (q.residual_percent !== undefined) qual.push("residual " + q.residual_percent.toFixed(3) + "%");
		if (q.lost_events !== undefined) qual.push("lost records " + q.lost_events);
		const cc = q.cross_check && q.cross_check.on_cpu_vs_sum_exec_runtime;
		if (cc && cc.available) qual.push("kernel cross-check " + pct(cc.total_fraction));
		if (q.stack_drops) qual.push("stack drops " + q.stack_drops);
		if (q.timeline) qual.push("timeline " + (q.timeline.complete ? "complete" : "incomplete"));
		if (qual.length) body.append(h("p", { class: "hint", "data-field": "quality" }, "quality: " + qual.join("   ")));
		// Warnings and notes, as the terminal report words them.
		const lines = (d && d.report ? d.report.split("\n") : []).map((l) => l.trim()).filter((l) => /^(warning|note):/.test(l));
		if (lines.length) {
			const ul = h("ul", { class: "lines", "data-field": "warnings" });
			for (const l of lines) ul.append(h("li", { class: l.startsWith("warning") ? "warning" : "note" }, l));
			body.append(ul);
		}
	}
	function renderSummary(body, ctx) {
		if (ctx.base) {
			const sides = h("div", { class: "sides" });
			const b = h("div", { "data-side": "base" }), n = h("div", { "data-side": "new" });
			runHeader(b, ctx.base, ctx.baseDerived, "baseline");
			runHeader(n, ctx.a, ctx.d, "new");
			sides.append(b, n);
			body.append(sides);
		} else {
			runHeader(body, ctx.a, ctx.d);
		}
	}

	/* ---------- strip plots ---------- */
	/*
	 * rows: [{label, values, median, low, high}] on one axis; the median a
	 * tick, the interval a band. Returns an <svg>.
	 */
	function stripPlot(rows, unit, width) {
		const W = width || 420, rowH = 34, M = { l: 70, r: 14, t: 6, b: 22 };
		const all = rows.flatMap((r) => r.values.concat([r.low, r.high].filter((v) => v !== undefined && v !== null)));
		let lo = d3.min(all), hi = d3.max(all);
		if (lo === hi) { lo -= Math.abs(lo) * 0.05 || 1; hi += Math.abs(hi) * 0.05 || 1; }
		const pad = (hi - lo) * 0.06;
		const x = d3.scaleLinear().domain([lo - pad, hi + pad]).range([M.l, W - M.r]);
		const H = M.t + rows.length * rowH + M.b;
		const svg = d3.create("svg").attr("width", W).attr("height", H).attr("viewBox", `0 0 ${W} ${H}`);
		rows.forEach((r, i) => {
			const y = M.t + i * rowH + rowH / 2;
			const g = svg.append("g");
			g.append("text").attr("x", M.l - 8).attr("y", y + 4).attr("text-anchor", "end").text(r.label);
			if (r.low !== undefined && r.low !== null)
				g.append("rect").attr("x", x(r.low)).attr("y", y - 11).attr("width", Math.max(1, x(r.high) - x(r.low))).attr("height", 22).attr("fill", r.color || "#2f6fd6").attr("opacity", 0.13);
			r.values.forEach((v, k) => {
				const jitter = ((k * 7919) % 13) / 13 - 0.5;
				g.append("circle").attr("cx", x(v)).attr("cy", y + jitter * 12).attr("r", 3.6).attr("fill", r.color || "#2f6fd6").attr("opacity", 0.8)
					.on("mousemove", () => showTip(d3.event, [r.label + (r.runs ? ", run " + r.runs[k] : ""), fmtUnit(v, unit)])).on("mouseleave", hideTip);
			});
			if (r.median !== undefined && r.median !== null)
				g.append("line").attr("x1", x(r.median)).attr("x2", x(r.median)).attr("y1", y - 13).attr("y2", y + 13).attr("stroke", "#1d2330").attr("stroke-width", 2);
		});
		const axis = d3.axisBottom(x).ticks(Math.max(2, Math.floor(W / 110))).tickFormat((v) => fmtUnit(v, unit));
		if (d3.min(all) === d3.max(all)) axis.tickValues([all[0]]);
		svg.append("g").attr("class", "axis").attr("transform", `translate(0,${H - M.b})`).call(axis);
		return svg.node();
	}

	function metricDesc(m) {
		if (!m.interval) return "";
		return "median " + fmtUnit(m.median, m.unit) + "; " + (100 * m.interval.coverage).toFixed(1) + "% interval of the median " +
			fmtUnit(m.interval.low, m.unit) + " to " + fmtUnit(m.interval.high, m.unit) + " (" + m.interval.method + ")";
	}

	/* ---------- section: each metric over the runs ---------- */
	function renderRuns(body, ctx) {
		body.append(h("p", { class: "hint" }, "Each dot is a measured run that completed (warm-up runs and failed runs are not counted); the bar is the median, the band the interval that holds the median with the stated confidence, from the runs alone."));
		const sides = ctx.base ? [["baseline", ctx.baseDerived], ["new", ctx.d]] : [[null, ctx.d]];
		const grid = h("div", { class: "strips" });
		const names = ctx.d.metrics.map((m) => m.name);
		for (const name of names) {
			const rows = [], descs = [];
			let unit = "count", why = null;
			for (const [label, d] of sides) {
				const m = d.metrics.find((x) => x.name === name);
				if (!m || !m.values) { why = (label ? label + ": " : "") + (m ? m.unavailable : "not in this artifact"); continue; }
				unit = m.unit;
				rows.push({ label: label || "runs", values: m.values, runs: m.runs, median: m.median, low: m.interval && m.interval.low, high: m.interval && m.interval.high, color: label === "baseline" ? "#7a8a99" : "#2f6fd6" });
				descs.push((label ? label + ": " : "") + metricDesc(m));
			}
			const box = h("div", { class: "strip", "data-metric": name });
			box.append(h("h3", null, name));
			if (rows.length) {
				box.append(stripPlot(rows, unit));
				const m = ctx.d.metrics.find((x) => x.name === name);
				if (m && m.values) box.dataset.median = String(m.median);
				for (const t of descs) box.append(h("div", { class: "hint" }, t));
			}
			if (why) box.append(h("div", { class: "hint" }, "n/a: " + why));
			grid.append(box);
		}
		body.append(grid);
	}

	/* ---------- section: the verdict ---------- */
	function renderVerdict(body, ctx) {
		const c = ctx.comparison;
		body.append(h("p", null, h("span", { class: "badge " + c.verdict, "data-field": "verdict" }, c.verdict), "  ",
			h("span", { class: "badge " + c.outcome, "data-field": "outcome" }, c.outcome), "  ",
			"baseline: " + (c.baseline.kind === "command" ? "the command " + c.baseline.command + " (paired runs)" : c.baseline.path),
			c.runs_added ? "; " + c.runs_added + " runs added (up to " + c.max_runs + ")" : ""));
		body.append(h("p", { class: "hint" }, "The statistic: " + c.statistic.method + ", a " + Math.round(100 * c.statistic.confidence) + "% interval from " + c.statistic.resamples + " resamples (seed " + c.statistic.seed + (c.statistic.paired ? ", paired runs" : "") + "). A regression is an interval wholly above 1 + the threshold."));
		const t = h("table", { class: "data", "data-field": "verdict-metrics" });
		t.append(h("tr", null, ["metric", "baseline median", "new median", "ratio", "interval", "threshold", "verdict", ""].map((x, i) => h("th", { class: i === 0 || i === 7 ? "text" : null }, x))));
		const ratio = (v) => (v === null || v === undefined ? "n/a" : v.toFixed(4));
		for (const m of c.metrics) {
			t.append(h("tr", { "data-metric": m.name },
				h("td", { class: "text" }, m.name),
				h("td", { "data-value": m.base_median }, fmtUnit(m.base_median, m.unit)),
				h("td", { "data-value": m.new_median }, fmtUnit(m.new_median, m.unit)),
				h("td", { "data-value": m.ratio }, ratio(m.ratio)),
				h("td", null, "[" + ratio(m.ci_low) + ", " + ratio(m.ci_high) + "]"),
				h("td", null, m.threshold === null ? "-" : "+" + (100 * m.threshold).toFixed(1) + "%"),
				h("td", null, h("span", { class: "badge " + m.verdict }, m.verdict)),
				h("td", { class: "text" }, m.note || (m.noisy ? "noisy" : ""))));
		}
		body.append(t);
		const grid = h("div", { class: "strips" });
		for (const m of c.metrics) {
			if (!m.base_values || !m.new_values) continue;
			const box = h("div", { class: "strip", "data-metric": m.name });
			box.append(h("h3", null, m.name + ": baseline and new runs"));
			box.append(stripPlot([
				{ label: "baseline", values: m.base_values, median: m.base_median, color: "#7a8a99" },
				{ label: "new", values: m.new_values, median: m.new_median, color: m.verdict === "regression" ? "#b3261e" : "#2f6fd6" },
			], m.unit));
			grid.append(box);
		}
		body.append(grid);
		const notes = (c.notes || []).concat((c.baseline.fingerprint_differences || []).map((x) => "machine differs: " + x));
		if (c.noise_sentinel && c.noise_sentinel.available && c.noise_sentinel.fired) notes.push("noise sentinel fired: runqueue wait grew by " + fmtDur(c.noise_sentinel.excess_ns));
		if (notes.length) body.append(h("ul", { class: "lines" }, notes.map((n) => h("li", { class: "note" }, n))));
	}

	/* ---------- section: where it moved (comparison.explanation) ---------- */
	const EXPLAIN_STATE = { on_cpu: "on-CPU", runqueue: "runqueue", sleeping: "sleeping (S)", uninterruptible: "uninterruptible (D)", stopped: "stopped", residual: "residual" };
	function explainLabel(level, p) {
		const thread = (name) => { const i = name.lastIndexOf(":"); return i < 0 ? name : name.slice(i + 1) + " in " + name.slice(0, i); };
		if (level === "process") return "process " + p.process;
		if (level === "bash") { const i = p.command.lastIndexOf(";"); return "bash line " + (i < 0 ? p.command : p.command.slice(i + 1)); }
		let s = "thread " + thread(p.thread) + ", " + (EXPLAIN_STATE[p.state] || p.state);
		if (level === "stack") { const f = p.stack.split(";").filter((x) => !x.endsWith("_[k]")); s += " at " + (f.length > 3 ? "\u2026;" : "") + f.slice(-3).join(";"); }
		return s;
	}
	function renderExplain(body, ctx) {
		const e = ctx.comparison.explanation;
		body.append(h("p", { class: "hint" }, "Each part's change is the difference of its medians per run, new less baseline. A part is blamed when it moved by the floor or more beyond its own run-to-run noise (a rank-sum test, and a " + Math.round(100 * e.confidence) + "% bootstrap interval wholly beyond the floor, corrected for the parts that moved); the others are summed as within noise, and what no part holds is the remainder. Shares are of the metric's measured change."));
		/* the gated metrics first, as the verdict lists them; wall (explained always) after */
		const gatedOrder = (ctx.comparison.metrics || []).map((x) => x.name);
		const rank = (m) => (gatedOrder.indexOf(m.name) < 0 ? gatedOrder.length : gatedOrder.indexOf(m.name));
		for (const m of e.metrics.slice().sort((a, b) => rank(a) - rank(b))) {
			const box = h("div", { class: "explain", "data-field": "explain-metric", "data-metric": m.name });
			if (!m.available) {
				box.append(h("h3", null, m.name + ": not explained"), h("p", { class: "note" }, m.reason));
				body.append(box);
				continue;
			}
			box.append(h("h3", null, m.name + " " + (m.change_ns < 0 ? "-" : "+") + fmtDur(Math.abs(m.change_ns)) + " per run (median " + fmtDur(m.base_median_ns) + " \u2192 " + fmtDur(m.new_median_ns) + "; " + m.base_n + " and " + m.new_n + " runs)"));
			box.append(h("p", { class: "hint" }, m.scope + (m.root_thread ? " (" + m.root_thread + ")" : "") + (m.judged ? "; the floor: " + fmtDur(m.floor_ns) : "; too few runs to tell a part from noise")));
			for (const level of ["bash", "stack", "thread", "process"]) {
				const l = m.levels && m.levels[level];
				if (!l || !l.available) continue;
				const t = h("table", { class: "data", "data-field": "explain-parts", "data-level": level });
				t.append(h("tr", null, ["change", "share", "interval", "", "part"].map((x, i) => h("th", { class: i >= 3 ? "text" : null }, x))));
				const row = (change, share, interval, label, blamed, part) => {
					const w = share === null || share === undefined ? 0 : Math.max(0, Math.min(1, Math.abs(share)));
					return h("tr", { "data-blamed": blamed ? "1" : "0", "data-change": change },
						h("td", null, (change < 0 ? "-" : "+") + fmtDur(Math.abs(change))),
						h("td", null, share === null || share === undefined ? "-" : (100 * share).toFixed(1) + "%"),
						h("td", null, interval),
						h("td", { class: "text" }, h("div", { class: "bar", style: { width: "120px" } }, h("span", { style: { width: (100 * w).toFixed(1) + "%", background: change > 0 ? "#b3261e" : "#2f6fd6" } }))),
						h("td", { class: "text", title: part || null }, label));
				};
				let shown = 0;
				for (const p of l.parts) {
					if (!p.blamed && m.judged) break;
					if (shown++ >= 10) break;
					const iv = p.ci_low_ns === null ? "" : "[" + fmtDur(p.ci_low_ns) + ", " + fmtDur(p.ci_high_ns) + "]";
					t.append(row(p.change_ns, p.share, iv, explainLabel(level, p), p.blamed, p.stack || p.command || null));
				}
				if (m.judged) t.append(row(l.within_noise_ns, m.change_ns ? l.within_noise_ns / m.change_ns : null, "", "within noise (" + l.within_noise_parts + " parts that changed)", false));
				t.append(row(l.remainder_ns, m.change_ns ? l.remainder_ns / m.change_ns : null, "", l.remainder, false));
				box.append(h("h4", null, "by " + level + " (" + l.parts_total + " parts, " + l.blamed + " blamed)"), t);
			}
			body.append(box);
		}
	}

	/* ---------- section: the threads ---------- */
	const THREAD_COLS = [
		{ key: "pid", label: "PID", get: (t) => t.pid, fmt: String },
		{ key: "tid", label: "TID", get: (t) => t.tid, fmt: String },
		{ key: "comm", label: "COMM", get: (t) => t.comm, text: true },
		{ key: "lifetime_ns", label: "WALL ms", get: (t) => t.lifetime_ns, fmt: fmtMs },
		{ key: "on_cpu_ns", label: "ON-CPU", get: (t) => t.on_cpu_ns, fmt: fmtMs },
		{ key: "runqueue_ns", label: "RUNQ", get: (t) => t.runqueue_ns, fmt: fmtMs },
		{ key: "sleeping_ns", label: "SLEEP (S)", get: (t) => t.sleeping_ns, fmt: fmtMs },
		{ key: "uninterruptible_ns", label: "D", get: (t) => t.uninterruptible_ns, fmt: fmtMs },
		{ key: "other_ns", label: "OTHER", get: (t) => (t.stopped_ns || 0) + (t.residual_ns || 0), fmt: fmtMs },
		{ key: "wakeup_max_ns", label: "WAKE us avg/max", get: (t) => (t.wakeup_latency_ns ? t.wakeup_latency_ns.max : null),
			show: (t) => (t.wakeup_latency_ns && t.wakeup_latency_ns.count ? Math.round(t.wakeup_latency_ns.avg / 1e3) + "/" + Math.round(t.wakeup_latency_ns.max / 1e3) : "-") },
		{ key: "switches", label: "SWITCHES vol/invol", get: (t) => (t.voluntary_switches === null ? null : t.voluntary_switches + t.involuntary_switches),
			show: (t) => (t.voluntary_switches === null || t.voluntary_switches === undefined ? "-" : t.voluntary_switches + "/" + t.involuntary_switches) },
	];
	const BAR_KEYS = ["on_cpu", "runqueue", "sleeping", "uninterruptible", "stopped", "other"];
	function stateBar(t) {
		const v = { on_cpu: t.on_cpu_ns, runqueue: t.runqueue_ns, sleeping: t.sleeping_ns || 0, uninterruptible: t.uninterruptible_ns || 0, stopped: t.stopped_ns || 0, other: t.residual_ns || 0 };
		const total = t.lifetime_ns || 1;
		const bar = h("div", { class: "bar" });
		for (const k of BAR_KEYS) {
			if (!v[k]) continue;
			const s = h("span", { style: { width: (100 * v[k] / total).toFixed(3) + "%", background: STATE_COLORS[k] } });
			s.addEventListener("mousemove", (ev) => showTip(ev, [t.comm + " (tid " + t.tid + ")", STATE_LABELS[k] + ": " + fmtDur(v[k]) + " (" + pct(v[k] / total) + " of its life)"]));
			s.addEventListener("mouseleave", hideTip);
			bar.append(s);
		}
		return bar;
	}
	const MAX_ROWS = 1000;
	function renderThreads(body, ctx) {
		const r = lastRun(ctx.a), threads = r.threads;
		let sortKey = "lifetime_ns", desc = true, filter = "";
		const input = h("input", { type: "search", placeholder: "filter: name, tid or pid", "aria-label": "filter threads" });
		const status = h("span", { class: "status", "data-field": "thread-count" });
		body.append(h("div", { class: "toolbar" }, input, status));
		body.append(legend(BAR_KEYS));
		const table = h("table", { class: "data", "data-field": "threads" });
		const head = h("tr");
		for (const c of THREAD_COLS) {
			const th = h("th", { class: "sortable" + (c.text ? " text" : ""), "data-key": c.key, title: "sort by " + c.label }, c.label);
			th.addEventListener("click", () => {
				if (sortKey === c.key) desc = !desc;
				else { sortKey = c.key; desc = !c.text; }
				draw();
			});
			head.append(th);
		}
		head.append(h("th", { class: "text" }, "STATES"));
		const thead = h("thead", null, head), tbody = h("tbody");
		table.append(thead, tbody);
		body.append(h("div", { class: "scroll" }, table));
		function draw() {
			const col = THREAD_COLS.find((c) => c.key === sortKey);
			const f = filter.toLowerCase();
			let rows = threads.filter((t) => !f || String(t.comm).toLowerCase().includes(f) || String(t.tid) === f || String(t.pid) === f);
			rows.sort((x, y) => {
				const a = col.get(x), b = col.get(y);
				let c = a === b ? 0 : a === null || a === undefined ? 1 : b === null || b === undefined ? -1 : col.text ? String(a).localeCompare(String(b)) : a - b;
				if (desc && a !== null && b !== null && a !== undefined && b !== undefined) c = -c;
				return c || x.tid - y.tid;
			});
			const shown = rows.slice(0, MAX_ROWS);
			tbody.replaceChildren(...shown.map((t) => h("tr", { "data-tid": t.tid },
				THREAD_COLS.map((c) => h("td", { class: c.text ? "text comm" : null, "data-value": c.get(t), title: c.text ? t.comm : null },
					c.show ? c.show(t) : c.fmt ? c.fmt(c.get(t)) : c.get(t))),
				h("td", { class: "text" }, stateBar(t)))));
			for (const th of head.children) {
				th.classList.remove("sorted-asc", "sorted-desc");
				if (th.dataset.key === sortKey) th.classList.add(desc ? "sorted-desc" : "sorted-asc");
			}
			status.textContent = (rows.length === threads.length ? threads.length + " threads" : rows.length + " of " + threads.length + " threads") +
				(rows.length > MAX_ROWS ? "; the first " + MAX_ROWS + " shown: filter to see others" : "") + "; click a heading to sort";
		}
		input.addEventListener("input", () => { filter = input.value.trim(); draw(); });
		draw();
	}

	/* ---------- the timeline's data, as typed arrays ---------- */
	function stateOfKind(name) {
		if (name.startsWith("on_cpu")) return "on_cpu";
		if (name.startsWith("runqueue")) return "runqueue";
		if (name === "sleeping" || name === "uninterruptible" || name === "stopped") return name;
		return "other";
	}
	function timelineLanes(a) {
		const r = lastRun(a), tl = r.timeline;
		const kinds = tl.kinds.map(stateOfKind);
		const byTid = new Map(r.threads.map((t) => [t.tid, t]));
		let t1 = r.wall_ns;
		const lanes = tl.threads.map((th) => {
			const n = th.intervals.length, s = new Float64Array(n), e = new Float64Array(n), k = new Uint8Array(n), cpu = new Int16Array(n);
			for (let i = 0; i < n; i++) {
				const v = th.intervals[i];
				s[i] = v[0]; e[i] = v[0] + v[1]; k[i] = BAR_KEYS.indexOf(kinds[v[2]]); cpu[i] = v[3] === null ? -1 : v[3];
				if (e[i] > t1) t1 = e[i];
			}
			const t = byTid.get(th.tid);
			// The thread's name as it ended (the timeline's names change only at exec).
			const names = t ? t.comm : th.names && th.names.length ? th.names[th.names.length - 1][2] : "?";
			return { tid: th.tid, pid: th.pid, comm: names, start: s, end: e, kind: k, cpu: cpu };
		});
		let t0 = 0;
		for (const l of lanes) if (l.start.length && l.start[0] < t0) t0 = l.start[0];
		return { lanes, t0, t1, complete: tl.complete, intervals: tl.intervals };
	}

	/* ---------- section: states over time ---------- */
	const STATE_KEYS = ["on_cpu", "runqueue", "sleeping", "uninterruptible", "stopped"];
	// Threads in each state per bin, from the timeline's intervals: each one's overlap, exactly
	// (a difference array for the bins it covers whole).
	function statesFromTimeline(T, W) {
		const K = STATE_KEYS, NB = Math.min(400, Math.floor(W / 3)), span = T.t1 - T.t0 || 1, bw = span / NB;
		const acc = K.map(() => new Float64Array(NB + 1)), full = K.map(() => new Float64Array(NB + 2));
		for (const l of T.lanes) {
			for (let i = 0; i < l.start.length; i++) {
				const k = l.kind[i];
				if (k >= K.length) continue;
				const a = (l.start[i] - T.t0) / bw, b = (l.end[i] - T.t0) / bw;
				const ia = Math.floor(a), ib = Math.min(Math.floor(b), NB - 1);
				if (ia === ib) { acc[k][ia] += b - a; continue; }
				acc[k][ia] += ia + 1 - a;
				if (ib < NB) acc[k][ib] += b - ib;
				full[k][ia + 1] += 1; full[k][ib] -= 1;
			}
		}
		const data = [];
		for (let j = 0; j < NB; j++) {
			const row = { t: T.t0 + j * bw, t1: T.t0 + (j + 1) * bw };
			K.forEach((k, ki) => {
				if (j) full[ki][j] += full[ki][j - 1];
				row[k] = acc[ki][j] + full[ki][j];
			});
			data.push(row);
		}
		return { data, t0: T.t0, t1: T.t1, hint: "How many threads were in each state, on average over each " + fmtDur(bw) + " of the run, from the timeline's intervals." };
	}
	// The same from the interval stream's totals (--interval): the tree's time in a state over an
	// interval's length is the threads in it on average. A negative correction is drawn as none.
	function statesFromStream(st) {
		const col = (name) => st.row.indexOf(name), K = STATE_KEYS;
		const cs = col("start_ns"), ce = col("end_ns"), ck = K.map((k) => col(k + "_ns"));
		const data = [];
		for (const iv of st.intervals) {
			const len = iv[ce] - iv[cs];
			if (len <= 0) continue;
			const row = { t: iv[cs], t1: iv[ce] };
			K.forEach((k, ki) => { row[k] = Math.max(0, iv[ck[ki]]) / len; });
			data.push(row);
		}
		if (!data.length) return null;
		const lens = data.map((d) => d.t1 - d.t).sort((a, b) => a - b);
		return { data, t0: data[0].t, t1: data[data.length - 1].t1,
			hint: "How many threads were in each state, on average over each interval of the stream (--interval, " + fmtDur(lens[lens.length >> 1]) + ")" +
				(st.not_kept ? "; " + st.not_kept + " later intervals are in the stream only" : "") + "." };
	}
	function renderStates(body, ctx) {
		const W = Math.max(600, body.clientWidth || 1200), H = 190, M = { l: 44, r: 12, t: 8, b: 22 };
		const S = ctx.timeline ? statesFromTimeline(ctx.timeline, W - M.l - M.r) : statesFromStream(ctx.streamTotals);
		const K = STATE_KEYS, data = S.data;
		// Each bin drawn as a step over its own span: the last bin's value is held to its end.
		const steps = data.concat([Object.assign({}, data[data.length - 1], { t: data[data.length - 1].t1 })]);
		const stack = d3.stack().keys(K)(steps);
		const x = d3.scaleLinear().domain([S.t0, S.t1]).range([M.l, W - M.r]);
		const y = d3.scaleLinear().domain([0, d3.max(stack[stack.length - 1], (p) => p[1]) || 1]).nice().range([H - M.b, M.t]);
		const area = d3.area().x((p) => x(p.data.t)).y0((p) => y(p[0])).y1((p) => y(p[1])).curve(d3.curveStepAfter);
		const svg = d3.create("svg").attr("width", W).attr("height", H).attr("data-field", "states-chart")
			.attr("data-source", ctx.timeline ? "timeline" : "stream").attr("data-bins", data.length);
		svg.selectAll("path").data(stack).join("path").attr("fill", (s) => STATE_COLORS[s.key]).attr("d", area);
		svg.append("g").attr("class", "axis").attr("transform", `translate(0,${H - M.b})`).call(d3.axisBottom(x).ticks(8).tickFormat((v) => fmtDur(v)));
		svg.append("g").attr("class", "axis").attr("transform", `translate(${M.l},0)`).call(d3.axisLeft(y).ticks(5));
		const rule = svg.append("line").attr("y1", M.t).attr("y2", H - M.b).attr("stroke", "#1d2330").attr("opacity", 0);
		svg.on("mousemove", function () {
			const [mx] = d3.mouse(this), tx = x.invert(mx);
			let j = d3.bisectRight(data.map((d) => d.t), tx) - 1;
			j = Math.max(0, Math.min(data.length - 1, j));
			const d = data[j];
			rule.attr("x1", x(tx)).attr("x2", x(tx)).attr("opacity", 0.5);
			showTip(d3.event, [fmtDur(d.t) + " to " + fmtDur(d.t1) + ", threads on average:"].concat(K.map((k) => STATE_LABELS[k] + ": " + d[k].toFixed(2))));
		}).on("mouseleave", () => { rule.attr("opacity", 0); hideTip(); });
		body.append(h("p", { class: "hint" }, S.hint));
		body.append(legend(K), svg.node());
	}

	/* ---------- section: the timeline (canvas) ---------- */
	function renderTimeline(body, ctx) {
		const T = ctx.timeline, lanes = T.lanes, LH = 16, LABEL = 190, AXIS = 26;
		const width = Math.max(640, (body.clientWidth || 1200) - 2);
		const plotW = width - LABEL;
		const visLanes = Math.min(lanes.length, 32), height = visLanes * LH;
		const x0 = d3.scaleLinear().domain([T.t0, T.t1]).range([0, plotW]);
		let x = x0, first = 0;
		const status = h("span", { class: "status", "data-field": "timeline-domain" });
		const reset = h("button", { type: "button" }, "reset zoom"), zin = h("button", { type: "button" }, "zoom in"), zout = h("button", { type: "button" }, "zoom out");
		body.append(h("p", { class: "hint" }, "A lane per thread (" + lanes.length + " threads, " + T.intervals + " intervals" + (T.complete ? "" : "; the timeline is incomplete: see the warnings") +
			"). Wheel or buttons to zoom, drag to pan, hover for an interval; the scroll bar moves through the lanes."));
		body.append(h("div", { class: "toolbar" }, reset, zin, zout, status), legend(BAR_KEYS.slice(0, 5)));
		const axisSvg = d3.create("svg").attr("width", width).attr("height", AXIS);
		const axisG = axisSvg.append("g").attr("class", "axis").attr("transform", `translate(${LABEL},${AXIS - 1})`);
		const canvas = h("canvas", { "data-field": "timeline-canvas" });
		const dpr = window.devicePixelRatio || 1;
		canvas.width = width * dpr; canvas.height = height * dpr;
		canvas.style.width = width + "px"; canvas.style.height = height + "px";
		const lanesBox = h("div", { class: "tl-lanes" });
		const spacer = h("div", { style: { height: lanes.length * LH - height + "px" } });
		canvas.style.position = "sticky"; canvas.style.top = "0";
		lanesBox.style.maxHeight = height + "px";
		lanesBox.append(canvas, spacer);
		const box = h("div", { class: "canvas-box" }, axisSvg.node(), lanesBox);
		body.append(box);
		const g = canvas.getContext("2d");
		const colors = BAR_KEYS.map((k) => STATE_COLORS[k]);
		const cover = new Float32Array(Math.ceil(plotW) * colors.length);
		function lowerBound(arr, v) {
			let lo = 0, hi = arr.length;
			while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] < v) lo = m + 1; else hi = m; }
			return lo;
		}
		function draw() {
			g.setTransform(dpr, 0, 0, dpr, 0, 0);
			g.clearRect(0, 0, width, height);
			const [d0, d1] = x.domain(), k = plotW / (d1 - d0);
			g.font = "11px system-ui, sans-serif";
			g.textBaseline = "middle";
			for (let li = first; li < Math.min(lanes.length, first + visLanes); li++) {
				const l = lanes[li], y = (li - first) * LH;
				if ((li & 1) === 0) { g.fillStyle = "#f7f8fb"; g.fillRect(0, y, width, LH); }
				g.fillStyle = "#1d2330";
				g.save(); g.beginPath(); g.rect(0, y, LABEL - 6, LH); g.clip();
				g.fillText(l.comm + "  " + l.tid, 6, y + LH / 2);
				g.restore();
				// Intervals a pixel or wider are drawn; narrower ones are summed per pixel by state.
				cover.fill(0);
				const paths = colors.map(() => new Path2D());
				const endFirst = lowerBound(l.end, d0);
				let touched = false;
				for (let i = endFirst; i < l.start.length && l.start[i] <= d1; i++) {
					const a = (Math.max(l.start[i], d0) - d0) * k, b = (Math.min(l.end[i], d1) - d0) * k;
					if (b - a >= 1) paths[l.kind[i]].rect(LABEL + a, y + 2, b - a, LH - 4);
					else {
						const px = Math.min(Math.floor(a), cover.length / colors.length - 1);
						cover[px * colors.length + l.kind[i]] += b - a;
						touched = true;
					}
				}
				if (touched) {
					// A pixel of many short intervals: a column split by how long each state held it.
					const full = LH - 4;
					for (let px = 0, n = cover.length / colors.length; px < n; px++) {
						let sum = 0;
						for (let c = 0; c < colors.length; c++) sum += cover[px * colors.length + c];
						if (!sum) continue;
						let yb = y + 2 + full;
						const scale = full / Math.max(1, sum);
						for (let c = 0; c < colors.length; c++) {
							const hh = cover[px * colors.length + c] * scale;
							if (hh <= 0) continue;
							paths[c].rect(LABEL + px, yb - hh, 1, hh);
							yb -= hh;
						}
					}
				}
				paths.forEach((p, c) => { g.fillStyle = colors[c]; g.fill(p); });
			}
			axisG.call(d3.axisTop(x.copy().range([0, plotW])).ticks(Math.max(2, Math.floor(plotW / 110))).tickFormat((v) => fmtDur(v)));
			status.textContent = "showing " + fmtDur(d0) + " to " + fmtDur(d1) + " of " + fmtDur(T.t1 - T.t0) + " (x" + ((T.t1 - T.t0) / (d1 - d0)).toFixed(1) + ")";
			status.dataset.lo = String(d0);
			status.dataset.hi = String(d1);
		}
		const maxK = Math.max(1, (T.t1 - T.t0) / 1000);
		const zoom = d3.zoom().scaleExtent([1, maxK]).extent([[0, 0], [plotW, height]]).translateExtent([[0, 0], [plotW, height]])
			.filter(() => !d3.event.shiftKey && !d3.event.button)
			.on("zoom", () => {
				const t = d3.event.transform;
				// The canvas' x includes the label column: the zoom works on the plot's.
				x = t.rescaleX(x0);
				hideTip();
				draw();
			});
		const sel = d3.select(canvas);
		sel.call(zoom).on("dblclick.zoom", null);
		reset.addEventListener("click", () => sel.call(zoom.transform, d3.zoomIdentity));
		zin.addEventListener("click", () => sel.call(zoom.scaleBy, 2, [plotW / 2, 0]));
		zout.addEventListener("click", () => sel.call(zoom.scaleBy, 0.5, [plotW / 2, 0]));
		lanesBox.addEventListener("scroll", () => {
			const f = Math.min(lanes.length - visLanes, Math.floor(lanesBox.scrollTop / LH));
			if (f !== first) { first = f; draw(); }
		});
		canvas.addEventListener("mousemove", (ev) => {
			const rect = canvas.getBoundingClientRect(), mx = ev.clientX - rect.left - LABEL, li = first + Math.floor((ev.clientY - rect.top) / LH);
			if (mx < 0 || li >= lanes.length) return hideTip();
			const l = lanes[li], tv = x.invert(mx), i = lowerBound(l.end, tv);
			if (i >= l.start.length || l.start[i] > tv + (x.domain()[1] - x.domain()[0]) / plotW) return showTip(ev, [l.comm + " (tid " + l.tid + ", pid " + l.pid + ")", "not alive at " + fmtDur(tv)]);
			showTip(ev, [l.comm + " (tid " + l.tid + ", pid " + l.pid + ")", STATE_LABELS[BAR_KEYS[l.kind[i]]] + (l.cpu[i] >= 0 ? " on CPU " + l.cpu[i] : ""),
				"from " + fmtDur(l.start[i]) + " for " + fmtDur(l.end[i] - l.start[i])]);
		});
		canvas.addEventListener("mouseleave", hideTip);
		draw();
	}

	/* ---------- flame graphs (canvas) ---------- */
	function prepareFlame(fj) {
		const n = fj.frames.length, depth = new Int32Array(n), x = new Float64Array(n), w = new Float64Array(n), parent = new Int32Array(n), color = new Array(n);
		const names = fj.names, next = [], stack = [];
		let maxDepth = 0;
		for (let i = 0; i < n; i++) {
			const f = fj.frames[i];
			depth[i] = f[0]; w[i] = f[2];
			color[i] = "#" + (f[3] | 0).toString(16).padStart(6, "0");
			stack.length = f[0];
			const p = f[0] ? stack[f[0] - 1] : -1;
			parent[i] = p;
			x[i] = p < 0 ? 0 : next[p];
			next[i] = x[i];
			if (p >= 0) next[p] += w[i];
			stack.push(i);
			if (f[0] > maxDepth) maxDepth = f[0];
		}
		return { fj, n, depth, x, w, parent, color, names, maxDepth, total: fj.total, units: fj.units };
	}
	function flameValue(F, v) {
		return F.units === "ns" ? fmtDur(v) : v + " " + F.units;
	}
	function flameGraph(fj, title) {
		const F = prepareFlame(fj), RH = 17;
		const root = h("div", { class: "flame", "data-title": title });
		const input = h("input", { type: "search", placeholder: "search frames (regular expression)", "aria-label": "search " + title });
		const reset = h("button", { type: "button" }, "reset zoom");
		const status = h("span", { class: "status", "data-field": "flame-status" });
		root.append(h("div", { class: "toolbar" }, input, reset, status));
		const leg = h("div", { class: "legend" });
		for (const c of fj.categories) {
			if (!c.named || !c.value) continue;
			leg.append(h("span", null, h("i", { style: { background: "#" + c.color.toString(16).padStart(6, "0") } }), c.name + " " + flameValue(F, c.value) + " (" + pct(c.value / (F.total || 1)) + ")"));
		}
		root.append(leg);
		const canvas = h("canvas", { "data-field": "flame-canvas" });
		/* A graph taller than the box scrolls inside it, opened at its root (the bottom). */
		const box = h("div", { class: "canvas-box flame-box" }, canvas);
		root.append(box);
		let zoomed = 0, match = null, width = 0, height = 0, atRoot = false;
		const dpr = window.devicePixelRatio || 1, g = canvas.getContext("2d");
		function isAncestor(a, b) { for (let p = b; p >= 0; p = F.parent[p]) if (p === a) return true; return false; }
		function geometry(i) {
			// Zoomed into z: its range fills the width; its ancestors are drawn full width.
			const z = zoomed, zx = F.x[z], zw = F.w[z] || 1, k = width / zw;
			if (F.depth[i] < F.depth[z]) return isAncestor(i, z) ? [0, width] : null;
			if (F.x[i] + F.w[i] <= zx || F.x[i] >= zx + zw) return null;
			return [(F.x[i] - zx) * k, F.w[i] * k];
		}
		function draw() {
			width = Math.max(600, box.clientWidth || 1200);
			height = (F.maxDepth + 1) * RH + 4;
			canvas.width = width * dpr; canvas.height = height * dpr;
			canvas.style.width = width + "px"; canvas.style.height = height + "px";
			if (!atRoot && box.isConnected) { box.scrollTop = box.scrollHeight; atRoot = true; }
			g.setTransform(dpr, 0, 0, dpr, 0, 0);
			g.clearRect(0, 0, width, height);
			g.font = "11px system-ui, sans-serif"; g.textBaseline = "middle";
			for (let i = 0; i < F.n; i++) {
				const geo = geometry(i);
				if (!geo || geo[1] < 0.4) continue;
				const y = height - (F.depth[i] + 1) * RH;
				const dim = F.depth[i] < F.depth[zoomed];
				g.fillStyle = match && match[i] ? "#e05aa8" : F.color[i];
				g.globalAlpha = dim ? 0.55 : 1;
				g.fillRect(geo[0], y, Math.max(0.4, geo[1] - 0.5), RH - 1);
				g.globalAlpha = 1;
				if (geo[1] > 30) {
					g.save(); g.beginPath(); g.rect(geo[0], y, geo[1] - 3, RH); g.clip();
					g.fillStyle = "#1d1d1d";
					g.fillText(F.names[F.fj.frames[i][1]], geo[0] + 3, y + RH / 2);
					g.restore();
				}
			}
			if (!F.n) {
				/* An empty graph (a view with no stacks, no samples in a short run): say so, draw nothing. */
				root.dataset.zoom = "0";
				root.dataset.zoomName = "";
				root.dataset.zoomValue = "0";
				status.textContent = "nothing was recorded in this view";
				return;
			}
			const zname = F.names[F.fj.frames[zoomed][1]];
			root.dataset.zoom = String(zoomed);
			root.dataset.zoomName = zname;
			root.dataset.zoomValue = String(F.w[zoomed]);
			let s = zoomed ? "zoomed into " + zname + ": " + flameValue(F, F.w[zoomed]) + " (" + pct(F.w[zoomed] / (F.total || 1)) + " of all)" : "all: " + flameValue(F, F.total) + "; click a frame to zoom";
			if (match) s += "; matched " + flameValue(F, match.total) + " (" + pct(match.total / (F.total || 1)) + ")";
			status.textContent = s;
		}
		function at(ev) {
			const r = canvas.getBoundingClientRect(), mx = ev.clientX - r.left, d = Math.floor((height - (ev.clientY - r.top)) / RH);
			for (let i = 0; i < F.n; i++) {
				if (F.depth[i] !== d) continue;
				const geo = geometry(i);
				if (geo && mx >= geo[0] && mx < geo[0] + geo[1]) return i;
			}
			return -1;
		}
		canvas.addEventListener("click", (ev) => { const i = at(ev); if (i >= 0) { zoomed = i; draw(); } });
		canvas.addEventListener("mousemove", (ev) => {
			const i = at(ev);
			if (i < 0) return hideTip();
			const f = F.fj.frames[i], lines = [F.names[f[1]], flameValue(F, F.w[i]) + " (" + pct(F.w[i] / (F.total || 1)) + " of all" + (zoomed ? ", " + pct(F.w[i] / (F.w[zoomed] || 1)) + " of the zoomed frame" : "") + ")"];
			if (fj.diff) {
				const d = diffOf(f);
				lines.push(d.kind + ": baseline " + flameValue(F, f[4]) + ", new " + flameValue(F, f[5]) + " (" + (d.change >= 0 ? "+" : "-") + flameValue(F, Math.abs(d.change)) + (f[4] ? ", " + (d.change >= 0 ? "+" : "") + (100 * d.change / f[4]).toFixed(1) + "%" : "") + ")");
			} else if (f[4]) {
				const parts = [];
				for (let k = 0; k < f[4].length; k += 2) {
					const c = fj.categories.find((cc) => cc.id === f[4][k]);
					parts.push((c ? c.name : "category " + f[4][k]) + " " + flameValue(F, f[4][k + 1]));
				}
				lines.push(parts.join(", "));
			}
			showTip(ev, lines);
		});
		canvas.addEventListener("mouseleave", hideTip);
		reset.addEventListener("click", () => { zoomed = 0; draw(); });
		input.addEventListener("input", () => {
			const q = input.value;
			if (!q) { match = null; draw(); return; }
			let re;
			try { re = new RegExp(q, "i"); } catch (e) { re = { test: (s) => s.toLowerCase().includes(q.toLowerCase()) }; }
			match = new Uint8Array(F.n); match.total = 0;
			const hit = F.names.map((nm) => re.test(nm));
			for (let i = 0; i < F.n; i++) {
				if (!hit[F.fj.frames[i][1]]) continue;
				match[i] = 1;
				let p = F.parent[i];
				while (p >= 0 && !match[p]) p = F.parent[p];
				if (p < 0) match.total += F.w[i];
			}
			draw();
		});
		root.redraw = draw;
		/* Every frame, for whoever reads the graph (a test): name, width, and a diff's two sides. */
		root.frames = () => F.fj.frames.map((f) => ({ name: F.names[f[1]], value: f[2], base: fj.diff ? f[4] : null, new: fj.diff ? f[5] : null, kind: fj.diff ? diffOf(f).kind : null }));
		return root;
	}
	/* A differential frame: grown, shrunk or the same (within half a percent of its width, as flame.c colours it). */
	function diffOf(f) {
		const change = f[5] - f[4];
		return { change, kind: Math.abs(change) * 200 <= Math.max(f[4], f[5]) ? "same" : change > 0 ? "grown" : "shrunk" };
	}
	function flameTabs(body, views) {
		const bar = h("div", { class: "toolbar" }), holder = h("div");
		body.append(bar, holder);
		const buttons = [];
		views.forEach((v, i) => {
			const b = h("button", { type: "button", "data-view": v.key }, v.label);
			b.addEventListener("click", () => show(i));
			buttons.push(b);
			bar.append(b);
		});
		let graphs = [];
		function show(i) {
			buttons.forEach((b, k) => b.classList.toggle("on", k === i));
			if (!graphs[i]) {
				graphs[i] = h("div", null, h("p", { class: "hint" }, views[i].hint), flameGraph(views[i].data, views[i].key));
			}
			holder.replaceChildren(graphs[i]);
			graphs[i].querySelector(".flame").redraw();
		}
		show(0);
	}
	function renderFlames(body, ctx) {
		const f = ctx.d.flames, views = [];
		if (f.wall) views.push({ key: "wall", label: "wall clock", data: f.wall, hint: "Every thread's whole life by state (on CPU, runqueue, S, D), with the stacks where it blocked or ran: width is time." });
		if (f.offcpu) views.push({ key: "offcpu", label: "off-CPU", data: f.offcpu, hint: "Where threads blocked (S and D), by the stack at the moment they went to sleep: width is blocked time." });
		if (f.oncpu) views.push({ key: "oncpu", label: "on-CPU", data: f.oncpu, hint: "Where threads ran, from on-CPU samples: width is samples." });
		flameTabs(body, views);
		if (f.oncpu_reason) body.append(h("p", { class: "hint" }, "no on-CPU flame graph: " + f.oncpu_reason));
	}

	/* ---------- section: differential flame graphs (with a baseline) ---------- */
	function renderDiffFlames(body, ctx) {
		const f = ctx.diffFlames, views = [];
		if (f.reason) {
			body.append(h("p", { class: "hint", "data-field": "diff-flames-reason" }, "no differential flame graphs: " + f.reason));
			return;
		}
		const hint = "Baseline against new, each side's stacks averaged per run: a frame is as wide as the larger side; red where the new runs spent more, blue where less, near white within half a percent. ";
		if (f.wall) views.push({ key: "diff-wall", label: "wall clock", data: f.wall, hint: hint + "Every thread's life by state, with its stacks." });
		if (f.offcpu) views.push({ key: "diff-offcpu", label: "off-CPU", data: f.offcpu, hint: hint + "Where threads blocked (S and D)." });
		if (f.oncpu) views.push({ key: "diff-oncpu", label: "on-CPU", data: f.oncpu, hint: hint + "Where threads ran, from on-CPU samples spread over their CPU time." });
		const w = f.wall && f.wall.diff;
		if (w) body.append(h("p", { class: "hint", "data-field": "diff-flames-totals" }, "wall clock per run: baseline " + fmtDur(w.base) + ", new " + fmtDur(w.new) + "."));
		flameTabs(body, views);
	}

	/* ---------- section: the bash tree and its flame graphs ---------- */
	const BASH_FORKS = ["subshell", "background", "pipeline_part", "comsub", "procsub", "coproc", "fork"];
	function bashCat(kind) {
		return kind === "function" || kind === "source" || kind === "eval" ? 1 : kind === "trap" ? 3 : kind === "bash" ? 4 : BASH_FORKS.includes(kind) ? 2 : 0;
	}
	function bashLabel(c) {
		if (c.parent === null) return "bash";
		const t = c.text || "";
		if (["command", "function", "source", "eval", "pipeline"].includes(c.kind)) return c.line + ": " + (t || "(" + c.kind + ")");
		return t || "(" + c.kind + ")";
	}
	/* The script's call tree as flame.h's data, each command's own time (bashprint.c's rule). */
	function bashFlame(cmds, cpu) {
		const byId = new Map(cmds.map((c) => [c.id, { c, kids: [] }]));
		let root = null;
		for (const n of byId.values()) {
			if (n.c.parent === null) root = n;
			else if (byId.has(n.c.parent)) byId.get(n.c.parent).kids.push(n);
		}
		function self(n) {
			const v = cpu ? n.c.cpu_ns : n.c.wall_ns;
			let kids = 0;
			for (const k of n.kids) {
				if (cpu) kids += k.c.cpu_ns;
				else if (n.c.kind === "pipeline") kids = Math.max(kids, k.c.wall_ns);
				else if (!["background", "coproc", "procsub"].includes(k.c.kind)) kids += k.c.wall_ns;
			}
			return Math.max(0, v - kids);
		}
		function value(n) { n.v = self(n) + n.kids.reduce((s, k) => s + value(k), 0); return n.v; }
		if (!root) return null;
		value(root);
		const palette = [0xe4572e, 0xe08a1e, 0x3fb8af, 0x9b6fc7, 0x5fae57];
		const names = [], nameIx = new Map(), frames = [];
		function nm(s) { if (!nameIx.has(s)) { nameIx.set(s, names.length); names.push(s); } return nameIx.get(s); }
		(function walk(n, d) {
			if (!n.v) return;
			frames.push([d, nm(bashLabel(n.c)), n.v, palette[bashCat(n.c.kind)]]);
			n.kids.slice().sort((a, b) => a.c.id - b.c.id).forEach((k) => walk(k, d + 1));
		})(root, 0);
		const cats = ["command", "function, source, eval", "subshell, pipeline part, substitution, background", "trap", "nested bash"];
		return { units: "ns", total: root.v, names, frames, categories: cats.map((c, i) => ({ id: i, name: c, named: true, value: 0, color: palette[i] })) };
	}
	function renderBash(body, ctx) {
		const b = ctx.a.bash, cmds = b.commands, total = b.total;
		body.append(h("p", { class: "hint" }, "bash profile (" + b.recorder + " recorder): " + total.commands + " commands; the script's own wall time " + fmtDur(total.self_wall_ns) +
			", every bash process's " + fmtDur(total.total_wall_ns) + ", CPU " + fmtDur(total.cpu_ns) + (b.trap_cost ? "; the trap's own cost is taken out of every figure" : "") + ". Click ▸ to open a command's children."));
		const byParent = new Map();
		for (const c of cmds) { const p = c.parent === null ? -1 : c.parent; if (!byParent.has(p)) byParent.set(p, []); byParent.get(p).push(c); }
		const root = cmds.find((c) => c.parent === null);
		const table = h("table", { class: "data tree", "data-field": "bash-tree" });
		table.append(h("tr", null, ["", "LINE", "WALL", "%TOTAL", "CPU", "COUNT", "COMMAND"].map((x, i) => h("th", { class: i === 6 || i === 0 ? "text" : null }, x))));
		const rowsOf = new Map(), open = new Set();
		function addRows(c, depth) {
			const kids = byParent.get(c.id) || [];
			const tog = h("span", { class: "tog" }, kids.length ? (depth < 1 ? "▾" : "▸") : "");
			const tr = h("tr", { "data-id": c.id, "data-depth": depth },
				h("td", { class: "text" }, tog),
				h("td", null, c.line || "-"), h("td", { "data-value": c.wall_ns }, fmtDur(c.wall_ns)),
				h("td", null, pct(c.wall_ns / (root.wall_ns || 1))), h("td", { "data-value": c.cpu_ns }, fmtDur(c.cpu_ns)), h("td", null, c.count),
				h("td", { class: "cmdtext" }, "  ".repeat(depth) + (c.parent === null ? "(script)" : (c.pipeline_part ? "| " : "") + (c.text || "(" + c.kind + ")")) + (c.kind === "function" ? "  [function]" : "")));
			const mine = [tr];
			for (const p of c.processes || [])
				mine.push(h("tr", { class: "proc-line" }, h("td"), h("td"), h("td", null, fmtDur(p.wall_ns)), h("td"), h("td"), h("td", null, p.count),
					h("td", { class: "cmdtext" }, "  ".repeat(depth + 1) + "↳ " + p.comm + " (pid " + p.first_pid + "): " + fmtDur(p.on_cpu_ns) + " CPU + " + fmtDur(p.runqueue_ns) + " runq + " +
						(p.sleeping_ns === null ? "n/a" : fmtDur(p.sleeping_ns)) + " S + " + (p.uninterruptible_ns === null ? "n/a" : fmtDur(p.uninterruptible_ns)) + " D")));
			rowsOf.set(c.id, mine);
			if (depth < 1 && kids.length) open.add(c.id);
			tog.addEventListener("click", () => { if (open.has(c.id)) open.delete(c.id); else open.add(c.id); tog.textContent = open.has(c.id) ? "▾" : "▸"; layout(); });
			for (const r of mine) table.append(r);
			for (const k of kids) addRows(k, depth + 1);
		}
		function layout() {
			(function vis(c, shown) {
				for (const r of rowsOf.get(c.id)) r.hidden = !shown;
				for (const k of byParent.get(c.id) || []) vis(k, shown && open.has(c.id));
			})(root, true);
		}
		addRows(root, 0);
		layout();
		body.append(h("div", { class: "toolbar" },
			h("button", { type: "button", onclick: () => { for (const c of cmds) if ((byParent.get(c.id) || []).length) open.add(c.id); sync(); } }, "open all"),
			h("button", { type: "button", onclick: () => { open.clear(); open.add(root.id); sync(); } }, "close all")));
		function sync() { for (const [id, rows] of rowsOf) { const t = rows[0].querySelector(".tog"); if (t.textContent) t.textContent = open.has(id) ? "▾" : "▸"; } layout(); }
		body.append(h("div", { class: "scroll" }, table));
		const views = [];
		const fw = bashFlame(cmds, false), fc = bashFlame(cmds, true);
		if (fw && fw.total) views.push({ key: "bash-wall", label: "wall time", data: fw, hint: "Each command's own wall time (less its children's), under the functions, subshells and pipelines that ran it." });
		if (fc && fc.total) views.push({ key: "bash-cpu", label: "CPU time", data: fc, hint: "Each command's own CPU time (with the children it reaped), the same way." });
		if (views.length) flameTabs(body, views);
	}

	/* ---------- section: the critical path ---------- */
	const PATH_COLORS = { on_cpu: STATE_COLORS.on_cpu, runqueue: STATE_COLORS.runqueue, blocked: STATE_COLORS.uninterruptible, outside: "#6aa84f", unknown: STATE_COLORS.other };
	const PATH_LABELS = { on_cpu: "on-CPU", runqueue: "waiting for a CPU", blocked: "blocked on a waker outside the tree", outside: "tsarun (before the command, after its end)", unknown: "unknown" };
	function pathLabel(g) {
		const who = g.tid === null ? "" : g.comm + " (" + g.tid + ")";
		if (g.kind === "blocked") return g.what + " (" + who + ", " + (g.state === "uninterruptible" ? "D" : g.state === "stopped" ? "T" : "S") + ")";
		if (g.kind === "outside") return "tsarun: " + g.what;
		if (g.kind === "unknown") return (who ? who + " " : "") + "unknown: " + g.what;
		return who + " " + PATH_LABELS[g.kind] + (g.what ? " " + g.what : "");
	}
	function renderCritpath(body, ctx) {
		const r = lastRun(ctx.a), cp = r.critical_path, groups = cp.groups, segs = cp.segments, wall = cp.wall_ns || 1;
		body.append(h("p", { class: "hint" }, "The chain of threads, states and outside wakers the wall time waited for, walked back from the command's end along the wakeups: " +
			segs.length + " segments, " + cp.edges + " edges" + (cp.complete ? "" : "; incomplete: " + fmtDur(cp.unknown_ns) + " unknown") +
			". A group's time is also the most the wall time would drop without it."));
		body.append(h("div", { class: "legend" }, ...Object.keys(PATH_COLORS).map((k) => h("span", null, h("i", { style: { background: PATH_COLORS[k] } }), PATH_LABELS[k]))));
		// The path along the wall: each pixel in the colour of the kind with the most time in it.
		const W = Math.max(300, body.clientWidth || 1000), H = 22;
		const canvas = h("canvas", { "data-field": "critpath-canvas", style: { width: W + "px", height: H + "px" } });
		canvas.width = W;
		canvas.height = H;
		const pix = new Array(W).fill(null).map(() => new Map());
		for (const s of segs) {
			const a = Math.max(0, s[0]) * W / wall, b = Math.min(wall, s[0] + s[1]) * W / wall;
			for (let x = Math.floor(a); x < Math.min(W, Math.ceil(b)); x++) {
				const w = Math.min(b, x + 1) - Math.max(a, x);
				if (w > 0) pix[x].set(s[2], (pix[x].get(s[2]) || 0) + w);
			}
		}
		const top = pix.map((m) => { let best = -1, v = -1; for (const [g, w] of m) if (w > v) { v = w; best = g; } return best; });
		const c2 = canvas.getContext("2d");
		top.forEach((g, x) => { if (g < 0) return; c2.fillStyle = PATH_COLORS[groups[g].kind] || PATH_COLORS.unknown; c2.fillRect(x, 0, 1, H); });
		canvas.addEventListener("mousemove", (ev) => {
			const x = Math.floor(ev.offsetX), m = pix[x];
			if (!m || !m.size) return hideTip();
			showTip(ev, [fmtDur(x * wall / W) + " into the run"].concat([...m.entries()].sort((p, q) => q[1] - p[1]).slice(0, 4).map(([g]) => pathLabel(groups[g]))));
		});
		canvas.addEventListener("mouseleave", hideTip);
		body.append(h("div", { class: "scroll" }, canvas));
		const table = h("table", { class: "data", "data-field": "critpath-groups" });
		table.append(h("thead", null, h("tr", null, h("th", { class: "text" }, "on the path"), h("th", null, "time"), h("th", null, "share (at most saved without it)"), h("th", null, "segments"))));
		const tb = h("tbody");
		for (const g of groups.slice(0, 50))
			tb.append(h("tr", { "data-kind": g.kind },
				h("td", { class: "text comm", title: pathLabel(g) }, h("i", { class: "swatch", style: { background: PATH_COLORS[g.kind] } }), pathLabel(g)),
				h("td", { "data-value": g.total_ns }, fmtDur(g.total_ns)),
				h("td", { "data-value": g.share, style: { whiteSpace: "nowrap" } },
					h("div", { class: "bar", style: { display: "inline-block", width: "70%", verticalAlign: "middle" } }, h("span", { style: { width: (100 * g.share).toFixed(2) + "%", background: PATH_COLORS[g.kind] } })), " " + pct(g.share)),
				h("td", null, g.segments)));
		table.append(tb);
		body.append(h("div", { class: "scroll" }, table));
		if (groups.length > 50) body.append(h("p", { class: "hint" }, (groups.length - 50) + " more groups in the artifact's runs[].critical_path"));
	}

	/* ---------- section: the text report ---------- */
	function renderText(body, ctx) {
		const text = [ctx.d.report, ctx.d.verdict_report].filter(Boolean).join("\n");
		body.append(h("details", { class: "raw" }, h("summary", null, "the report as tsarun prints it on the terminal"), h("pre", { class: "code", "data-field": "text-report" }, text)));
	}

	/* ---------- the sections ---------- */
	const SECTIONS = [
		{ id: "summary", title: "Run", when: () => true, render: renderSummary },
		{ id: "verdict", title: "Verdict", when: (c) => !!c.comparison, render: renderVerdict },
		{ id: "explain", title: "Where it moved", when: (c) => !!(c.comparison && c.comparison.explanation && c.comparison.explanation.metrics.length), render: renderExplain },
		{ id: "diffflames", title: "Differential flame graphs", when: (c) => !!c.diffFlames, render: renderDiffFlames },
		{ id: "runs", title: "Runs", when: (c) => c.a.runs.filter((r) => !r.warmup).length > 1 || (c.base && c.base.runs.length > 1), render: renderRuns },
		{ id: "threads", title: "Threads", when: (c) => !c.base && lastRun(c.a).detailed && lastRun(c.a).threads.length > 0, render: renderThreads },
		{ id: "states", title: "States over time", when: (c) => !c.base && (!!c.timeline || !!c.streamTotals), render: renderStates },
		{ id: "timeline", title: "Timeline", when: (c) => !c.base && !!c.timeline, render: renderTimeline },
		{ id: "critpath", title: "Critical path", when: (c) => !c.base && !!lastRun(c.a).critical_path, render: renderCritpath },
		{ id: "flames", title: "Flame graphs", when: (c) => !c.base && !!c.d.flames, render: renderFlames },
		{ id: "bash", title: "Bash profile", when: (c) => !c.base && !!c.a.bash && c.a.bash.commands.length > 0, render: renderBash },
		{ id: "text", title: "Text report", when: (c) => !!(c.d.report || c.d.verdict_report), render: renderText },
	];

	function main() {
		const page = readData("tsarun-page");
		const ctx = {
			page,
			a: readData("tsarun-artifact"),
			d: readData("tsarun-derived"),
			base: readData("tsarun-base"),
			baseDerived: readData("tsarun-base-derived"),
		};
		ctx.comparison = readData("tsarun-comparison") || ctx.a.comparison || null;
		ctx.diffFlames = readData("tsarun-diff-flames");
		const r = lastRun(ctx.a);
		ctx.timeline = r && r.detailed && r.timeline ? timelineLanes(ctx.a) : null;
		ctx.streamTotals = r && r.detailed && r.stream && r.stream.totals && r.stream.totals.intervals.length ? r.stream.totals : null;
		const cmd = shellWords(ctx.a.command.argv);
		document.title = (ctx.base ? "tsarun compare: " : "tsarun: ") + cmd;
		document.getElementById("title").textContent = ctx.base ? "tsarun compare" : "tsarun: " + cmd;
		document.getElementById("subtitle").textContent = ctx.base
			? "baseline " + shellWords(ctx.base.command.argv) + " against " + cmd
			: runStatus(r) + ", wall " + fmtDur(r.wall_ns) + ", CPU " + fmtDur(r.user_ns + r.sys_ns);
		document.getElementById("tool").textContent = page.tool;
		const main = document.getElementById("sections"), toc = document.getElementById("toc");
		for (const s of SECTIONS) {
			if (!s.when(ctx)) continue;
			const body = h("div");
			const sec = h("section", { class: "sec", id: "sec-" + s.id }, h("h2", null, s.title), body);
			main.append(sec);
			toc.append(h("a", { "data-sec": s.id, onclick: (ev) => { ev.preventDefault(); sec.scrollIntoView(); } }, s.title));
			try {
				s.render(body, ctx);
			} catch (e) {
				body.append(h("p", { class: "error" }, "this section could not be drawn: " + e.message));
				console.error("tsarun report: section " + s.id + ": " + (e.stack || e));
			}
		}
		document.body.dataset.ready = "1";
		document.body.dataset.renderMs = String(Math.round(performance.now() - T0));
	}
	try {
		main();
	} catch (e) {
		document.getElementById("sections").append(h("p", { class: "error" }, "the report could not be drawn: " + e.message));
		console.error("tsarun report: " + (e.stack || e));
		document.body.dataset.ready = "error";
	}
})();
