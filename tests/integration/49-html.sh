#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The HTML report (--html FILE, tsarun report --format html, tsarun compare
# --html FILE): one self-contained page, opened from disk in headless
# Chromium (Debian's, driven through its DevTools protocol by
# tests/html/check-page) and in headless Firefox (WebDriver BiDi). Each page loads with no console error and no
# request but itself, draws the sections its artifact has data for, shows
# the artifact's figures (read from the page, compared with the JSON), and
# sorts, zooms and pans under real input events. Text from the command
# (a thread's name, a script's command, argv) is shown as text: nothing in
# it runs or becomes an element. Screenshots at 1400x900 go to
# $OUTPUT/html/ (CI keeps them).
. "$(dirname "$0")/../lib.sh"
need_bpf "the HTML report"
command -v chromium >/dev/null || cannot_run "the HTML report" "chromium is not installed (make deps)"
/usr/bin/python3 -c 'import websocket' 2>/dev/null ||
	cannot_run "the HTML report" "python3-websocket is not installed (make deps)"
cd "$T_TMP"
unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY
SHOTS=$REPO/${OUTPUT:-build}/html
mkdir -p "$SHOTS"
BENCH=$REPO/${OUTPUT:-build}/examples/bench
[ -x "$BENCH" ] || cc -std=gnu11 -O2 -g -Wall -D_GNU_SOURCE "$REPO/examples/bench.c" -o "$T_TMP/bench" -lpthread
[ -x "$BENCH" ] || BENCH=$T_TMP/bench

# page NAME check-page ARGS...: its lines as this suite's, a crash as a failure.
page() {
	local name=$1 line rc
	shift
	/usr/bin/python3 "$REPO/tests/html/check-page" "$@" >page.out 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$name: ${line#ok }" ;;
		"not ok "*) not_ok "$name: ${line#not ok }" ;;
		"# "*) echo "$line" ;;
		esac
	done <page.out
	if [ $rc -ne 0 ] && ! grep -q '^not ok' page.out; then
		not_ok "$name: check-page exited $rc" "$(tail -5 page.out)"
	fi
}

# The bundled example with everything on: under 5 MB, every section.
"$TSARUN" -q --flame --timeline --json run.json --html run.html -- "$BENCH"
equal "--html: exit 0" "$?" 0
size=$(stat -c %s run.html)
at_most "--html: the bench with --flame --timeline is under 5 MB" "$size" 5000000
check "--html: no script or style from elsewhere (no src=, no <link>)" \
	bash -c '! sed "/application\/json/d" run.html | grep -qiE "<script[^>]* src=|<link "'
check "--html: a Content-Security-Policy that allows no network and only the page's scripts" \
	grep -q "default-src 'none'; script-src 'sha256-" run.html
page "run" run.html run.json --shots "$SHOTS/run"

# tsarun report --format html draws the same page from the stored artifact.
"$TSARUN" report --format html run.json >report.html
equal "report --format html: exit 0" "$?" 0
page "report" report.html run.json --shots "$SHOTS/report"
# The text report and the runs' figures; the flame graphs are those `tsarun
# report --format folded` draws from the artifact (which marks a kernel stack
# [truncated] when its user stack was: the artifact keeps one flag a pair).
derived() {
	/usr/bin/python3 -c 'import json, re, sys
t = open(sys.argv[1]).read()
d = json.loads(re.search(r"id=\"tsarun-derived\">(.*?)</script>", t).group(1))
print(json.dumps([d["report"], d["metrics"]]))' "$1"
}
check "report --format html: the same text report and runs as the run's page" \
	cmp -s <(derived run.html) <(derived report.html)

# The interval stream alone (no --timeline): states over time from its totals.
"$TSARUN" -q --interval 20ms --stream stream.jsonl --json stream.json --html stream.html -- "$BENCH"
equal "--interval --html: exit 0" "$?" 0
check "--interval: each state's column of the stream's totals sums to the run's totals" \
	jq -e '.runs[-1] as $r | $r.stream.totals as $t | ($t.row | index("on_cpu_ns")) as $c
		| ([$t.intervals[][$c]] | add) == $r.totals.on_cpu_ns and ($t.intervals | length) == $r.stream.lines' stream.json
page "stream" stream.html stream.json --shots "$SHOTS/stream"

# A view with nothing in it (no on-CPU sample in a run of sleeps): the page
# says so; opening it once threw (CI saw it on the bash page by chance).
"$TSARUN" -q --flame --json idle.json --html idle.html -- sh -c 'sleep 0.05 & sleep 0.03; wait'
equal "--flame of sleeps: no on-CPU sample" "$(jq '.runs[-1].stacks.oncpu_stacks | length' idle.json)" 0
page "empty view" idle.html idle.json --shots "$SHOTS/idle"

# A bash script, with a hostile command and a hostile thread name.
cat >hostile.sh <<'EOF'
: '<script>window.__tsarun_pwned=1</script><img src=x onerror="window.__tsarun_pwned=1">'
f() { (printf '%s' '</script><b>1' >/proc/self/comm; sleep 0.05; :); }
for i in 1 2 3; do f; done
sleep 0.02
EOF
"$TSARUN" -q --flame --json bash.json --html bash.html --bash hostile.sh
equal "--bash --html: exit 0" "$?" 0
check "--bash: the hostile name reached the artifact" \
	jq -e '[.runs[-1].threads[].comm] | index("</script><b>1")' bash.json
page "bash" bash.html bash.json --shots "$SHOTS/bash" --hostile '</script><b>1' \
	--hostile '<script>window.__tsarun_pwned=1</script>'

# Repeated runs: a strip plot per metric, with the median and its interval.
"$TSARUN" -q -r 5 --json base.json --html runs.html -- "$WORKLOADS/spin_sleep" 20 10
equal "--runs --html: exit 0" "$?" 0
page "runs" runs.html base.json --shots "$SHOTS/runs"

# A gate in the run, and tsarun compare --html: both sides and the verdict.
"$TSARUN" -q -r 5 --baseline base.json --fail-over 50% --json gate.json --html gate.html -- \
	"$WORKLOADS/spin_sleep" 20 10
rc=$?
check "--baseline --html: exit 0 or 3" test $rc -eq 0 -o $rc -eq 3
page "gate" gate.html gate.json --shots "$SHOTS/gate"
"$TSARUN" compare base.json gate.json --fail-over 50% --html compare.html >/dev/null
rc=$?
check "compare --html: exit 0 or 3" test $rc -eq 0 -o $rc -eq 3
page "compare" compare.html gate.json --base base.json --shots "$SHOTS/compare"

# A hostile argv[0]: a link named like markup.
mkdir -p bin && ln -sf "$WORKLOADS/spin_sleep" 'bin/<img src=x onerror=__tsarun_pwned=1>'
"$TSARUN" -q --json argv.json --html argv.html -- 'bin/<img src=x onerror=__tsarun_pwned=1>' 5 5
page "argv" argv.html argv.json --hostile '<img src=x onerror=__tsarun_pwned=1>'

# 100,000 intervals and more: the page is usable within 2 s.
"$TSARUN" -q --timeline --json many.json --html many.html -- "$WORKLOADS/pingpong" 20000 0
n=$(jq '.runs[-1].timeline.intervals' many.json)
at_least "timeline of pingpong: 100,000 intervals or more" "$n" 100000
page "100k intervals" many.html many.json --max-load 2 --shots "$SHOTS/many"

# The same checks in Firefox (Debian's firefox-esr, through WebDriver BiDi):
# the page with every section, a bash profile, the stream, a comparison.
if command -v firefox-esr >/dev/null || command -v firefox >/dev/null; then
	page "firefox: run" run.html run.json --browser firefox --shots "$SHOTS/firefox-run"
	page "firefox: bash" bash.html bash.json --browser firefox --hostile '</script><b>1'
	page "firefox: stream" stream.html stream.json --browser firefox
	page "firefox: compare" compare.html gate.json --base base.json --browser firefox \
		--shots "$SHOTS/firefox-compare"
elif [ "${CI:-}" = true ]; then
	not_ok "the HTML report in Firefox" "cannot run in CI: firefox-esr is not installed (make deps)"
else
	skip "the HTML report in Firefox" "firefox-esr is not installed (make deps)"
fi

# What cannot be written is refused before the command runs.
"$TSARUN" -q --json x.json --html /nonexistent/dir/x.html -- true 2>err.txt
equal "--html into a missing directory: exit 125" "$?" 125
check "... and says which file" grep -q "cannot write the HTML report '/nonexistent/dir/x.html'" err.txt
check "... before the command ran (no artifact)" test ! -e x.json
"$TSARUN" report --format html --view wall run.json >/dev/null 2>err.txt
equal "report --format html --view: refused" "$?" 125
echo "1..$T_N"
