#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Text that came from the command (its argv, its threads' names, a script's
# command text, file names, the strings of an artifact it may have crafted)
# reaches every output escaped for it (lib/textsafe.h): no escape sequence,
# OSC title or 8-bit control reaches a terminal; no line tsarun writes is a
# GitHub workflow command it did not mean; every JSON output is strict
# UTF-8 whatever bytes the command had; JUnit and SVG are well-formed XML;
# a Markdown table keeps its columns.
. "$(dirname "$0")/../lib.sh"
need_bpf "escaping of the command's text"
cd "$T_TMP"
unset GITHUB_STEP_SUMMARY

# check.py MODE FILE: the property each kind of output must have (exit 1 and
# what broke it on stderr). text: strict UTF-8, no control but LF, no
# workflow command ("::" opening a line, "##[" anywhere) but tsarun's own
# annotations; json/jsonl: python's json.load of strict UTF-8, and the text
# rules on the bytes; xml: python's XML parser, and the text rules; md: the
# text rules, and each table's rows with the header's number of cells.
cat >check.py <<'EOF'
import json, re, sys
import xml.etree.ElementTree as ET

mode, path = sys.argv[1], sys.argv[2]
raw = open(path, 'rb').read()
def fail(what, line=None):
    sys.exit(f"{path}: {what}" + (f": {line!r}" if line is not None else ""))
try:
    text = raw.decode('utf-8', errors='strict')
except UnicodeDecodeError as e:
    fail(f"not UTF-8 ({e})", raw[max(0, e.start - 20):e.end + 20])
ours = re.compile(r'::(error|warning|notice) title=tsarun gate[^:]*::')
bad = re.compile('[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]')
for line in text.split('\n'):
    m = bad.search(line if mode != 'json' else line.replace('\t', ' ').replace('\r', ' '))
    if m:
        fail(f"control U+{ord(m.group()):04X} in a line", line)
    if line.lstrip().startswith('::') and not ours.match(line):
        fail("a workflow command tsarun did not mean", line)
    if '##[' in line:
        fail("a '##[' workflow command", line)
if mode == 'json':
    json.loads(text)
elif mode == 'jsonl':
    for line in text.splitlines():
        json.loads(line)
elif mode == 'xml':
    ET.fromstring(raw)
elif mode == 'md':
    cells = None
    for line in text.split('\n'):
        if not line.startswith('|'):
            cells = None
            continue
        n = len(re.findall(r'(?<!\\)(?:\\\\)*\|', line))
        if cells is None:
            cells = n
        elif n != cells:
            fail(f"a row of {n - 1} cells in a table of {cells - 1}", line)
EOF
# sink NAME MODE FILE: ok when FILE has what MODE asks of it.
sink() {
	local out
	if out=$(python3 check.py "$2" "$3" 2>&1); then ok "$1"; else not_ok "$1" "$out"; fi
}

# A name made of what a terminal obeys, what GitHub's runner obeys and what
# a decoder refuses: an OSC title, CSI, "##[", an 8-bit CSI, a surrogate.
# As an executable's name it is the command's argv[0] and its thread's comm
# (15 bytes of it). The argument adds an overlong form.
HOSTILE=$'\e]0;T\a\e[2J##[\x9b\xed\xa0\x80'
INJECT=$'x\n::error::pwned'
ln -s "$WORKLOADS/burn" "$HOSTILE"
ln -s "$WORKLOADS/burn" "$INJECT"
# equal_json NAME FILE GOT WANT: Python's GOT of the document d (FILE read
# as strict UTF-8) equals Python's WANT (H is $HOSTILE's bytes, A $ARG's).
equal_json() {
	local out
	if out=$(H="$HOSTILE" A="$ARG" python3 -c 'import json, os, sys
H, A = os.environb[b"H"], os.environb[b"A"]
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))
got, want = eval(sys.argv[2]), eval(sys.argv[3])
sys.exit(0 if got == want else f"got {got!r}, expected {want!r}")' "$2" "$3" "$4" 2>&1); then
		ok "$1"
	else
		not_ok "$1" "$out"
	fi
}
ARG=$'arg\e]0;X\a\xff\xc0\xaf'

export GITHUB_ACTIONS=true
# A baseline (its file name hostile too) that the hostile command regresses
# against: an ::error annotation quotes the command and the baseline.
BASE=$'base\e[31m\n::error::b.json'
"$TSARUN" -q -r 5 --json "$BASE" -- "$WORKLOADS/burn" 5
"$TSARUN" --color never -r 5 --baseline "$BASE" --fail-over 10% --junit junit.xml \
	--markdown gate.md --flame --timeline --interval 50ms --stream run.jsonl --json run.json \
	-- "./$HOSTILE" 60 "$ARG" 2>run.err
equal "a run of the hostile command regresses: exit 3" "$?" 3
check "... GitHub annotations were written" grep -q '^::error title=tsarun gate' run.err
sink "stderr: no control, no workflow command but tsarun's (GITHUB_ACTIONS=true)" text run.err
check "... the name is shown, escaped" grep -qF 'tsarun: ./\x1b]0;T\x07\x1b[2J##\x5b\x9b\xed\xa0\x80: ' run.err
check "... the thread's row keeps its columns (16 wide)" \
	grep -qE '^ +[0-9]+ +[0-9]+  \\x1b]0;T\\x07\\x1b +[0-9.]+ ' run.err
sink "artifact: strict UTF-8 JSON" json run.json
validate "$T_TMP/run.json"
# The documented rule: the bytes as Python's decode(errors='replace') reads them.
equal_json "... comm: its 15 bytes, U+FFFD where they are not UTF-8" run.json \
	'{t["comm"] for t in d["runs"][-1]["threads"]}' '{H[:15].decode("utf-8", "replace")}'
equal_json "... argv the same way" run.json 'd["command"]["argv"]' \
	'["./" + H.decode("utf-8", "replace"), "60", A.decode("utf-8", "replace")]'
sink "stream: strict UTF-8 JSON Lines" jsonl run.jsonl
sink "JUnit: well-formed XML, no control" xml junit.xml
check "... the command shown in its visible form" \
	grep -qF 'name="tsarun regression gate: ./\x1b]0;T\x07\x1b[2J##&#91;\x9b\xed\xa0\x80"' junit.xml
sink "Markdown: no control, every table keeps its columns" md gate.md
for svg in offcpu wall; do
	sink "flame graph run.$svg.svg: well-formed XML, no control" xml "run.$svg.svg"
	check "... the thread's name shown escaped" grep -qF '\x1b]0;T\x07' "run.$svg.svg"
done
sink "Chrome trace (--timeline): strict UTF-8 JSON" json run.trace.json

# A command named to start a workflow command on a line of its own.
"$TSARUN" --color never --json inj.json -- "./$INJECT" 5 2>inj.err
equal "a command named 'x<LF>::error::pwned': exit 0" "$?" 0
sink "... stderr: no line starts a workflow command" text inj.err
check "... the newline shown as \\n" grep -qF 'tsarun: ./x\n::error::pwned: exit 0' inj.err

# A thread that renames itself (/proc/self/comm), mid-run.
"$TSARUN" --color never --json ren.json -- bash -c \
	'printf "##[e]\033]2;T\007\xff" >/proc/$$/comm; '"$WORKLOADS"'/burn 20; :' 2>ren.err
equal "a thread renamed with control bytes: exit 0" "$?" 0
sink "... stderr: no control" text ren.err
check "... its row shows the new name escaped, cut to its column" grep -qF '  ##\x5be]\x1b]2;T  ' ren.err
sink "... artifact: strict UTF-8 JSON" json ren.json

# --bash: a script's command text with control bytes, bad UTF-8 and an
# injection, each in the tree on stderr and in the artifact.
printf '#!/bin/bash\n: "\033]0;TITLE\007\033[31mred"\n: "\xff\xfe\xed\xa0\x80"\n: "\n::error::from-bash ##[warning]w"\nsleep 0.02\n' >s.sh
chmod +x s.sh
"$TSARUN" --color never --flame --json bash.json --bash ./s.sh 2>bash.err
equal "--bash on a script with control bytes: exit 0" "$?" 0
sink "--bash: stderr, the tree too: no control, no workflow command" text bash.err
check "... the command text shown escaped" grep -qF ': "\x1b]0;TITLE\x07\x1b[31mred"' bash.err
check "... and its bad UTF-8" grep -qF ': "\xff\xfe\xed\xa0\x80"' bash.err
sink "--bash: artifact: strict UTF-8 JSON" json bash.json
validate "$T_TMP/bash.json"
equal_json "--bash: the text reads back with U+FFFD for each bad subpart" bash.json \
	'[c["text"] for c in d["bash"]["commands"] if c["text"].startswith(": ")][1]' \
	'b": \"\xff\xfe\xed\xa0\x80\"".decode("utf-8", "replace")'
sink "--bash: the flame graph bash.bash.svg: well-formed XML" xml bash.bash.svg

# tsarun report and compare of an artifact someone crafted (from a plain
# run's): raw bytes that are not UTF-8, escapes in every string the reports
# print.
"$TSARUN" -q -r 5 --baseline "$BASE" --fail-over 1000% --flame --json plain.json \
	-- "$WORKLOADS/burn" 20
python3 - plain.json crafted.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
H = "\x1b]0;T\x07\x1b[2J\u009b\n::error::c"
r = d["runs"][-1]
for t in r["threads"]:
    t["comm"] = "a|b|\x1b[31m##[error]"
for p in r["processes"]:
    p["comm"] = "::warning::p"
r["quality"]["notes"] = [H, "x"]
r["quality"]["sources_unavailable"] = [{"source": "perf", "reason": H}]
d["host"]["cpu_model"] = "cpu | x | " + H
d["command"]["argv"][0] = "./" + H
d["tool"]["version"] = H
c = d["comparison"]
c["baseline"]["path"] = H
c["notes"] = [H]
for m in c["metrics"]:
    m["note"] = H
for a in r["stacks"]["offcpu_stacks"]:
    a["comm"] = H
    a["user"][0] = "main##[error]" + H
text = json.dumps(d, ensure_ascii=False).encode()
# Bytes no JSON writer makes, as an attacker would write them.
text = text.replace(b'"x"', b'"\xff\xed\xa0\x80\x9b"')
open(sys.argv[2], "wb").write(text)
EOF
"$TSARUN" report --color never crafted.json >rep.out
equal "report of a crafted artifact: exit 0" "$?" 0
sink "... stdout: no control, no workflow command" text rep.out
check "... the strings are shown, escaped" grep -qF '  note: \x1b]0;T\x07\x1b[2J\u009b\n::error::c' rep.out
"$TSARUN" report --format markdown crafted.json >rep.md
sink "report --format markdown of it: no control, every table keeps its columns" md rep.md
"$TSARUN" report --format trace crafted.json >rep.trace.json
sink "report --format trace of it: strict UTF-8 JSON" json rep.trace.json
"$TSARUN" report --format svg crafted.json >rep.svg
sink "report --format svg of it: well-formed XML" xml rep.svg
# Compared with a slower one, under a hostile name: the gate fails and annotates.
CRAFTED=$'crafted\e[1m\n::error::##[error]c.json'
cp crafted.json "$CRAFTED"
python3 - crafted.json slower.json <<'EOF'
import json, sys
j = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8', 'replace'))
for r in j["runs"]:
    r["user_ns"] *= 3
    r["sys_ns"] *= 3
open(sys.argv[2], 'w').write(json.dumps(j))
EOF
"$TSARUN" compare --color never "$CRAFTED" slower.json --junit cmp.xml --markdown cmp.md \
	>cmp.out 2>cmp.err
equal "compare of it with a slower one: exit 3" "$?" 3
check "... annotated" grep -q '^::error title=tsarun gate' cmp.err
sink "compare of it (GITHUB_ACTIONS=true): stdout" text cmp.out
sink "... stderr, its annotations included" text cmp.err
sink "... JUnit" xml cmp.xml
sink "... Markdown" md cmp.md
# The schema's own text is quoted when it is not one tsarun reads.
printf '{"schema":"tsarun\033]0;T\007\n::error::s"}' >schema.json
"$TSARUN" report schema.json >/dev/null 2>schema.err
equal "an artifact of an unknown schema: 125" "$?" 125
sink "... the error quotes it escaped" text schema.err
