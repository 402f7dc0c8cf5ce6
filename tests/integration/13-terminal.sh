#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a user sees in a terminal: the table fits its width (80, 120, 200
# columns, in a pseudo-terminal made by script(1)), a file or a pipe gets
# every column, --wide too; a command that cannot run is one line; the
# progress of repeated runs is one line rewritten on a terminal and absent
# from a pipe.
. "$(dirname "$0")/../lib.sh"
need_root "terminal tests"
cd "$T_TMP"
command -v script >/dev/null || {
	skip "the terminal tests" "script(1) (util-linux) is not installed"
	exit 0
}

# In a pty of COLS columns: the command's combined output, without CRs and colours.
in_pty() {
	local cols=$1
	shift
	script -qec "stty cols $cols rows 40; $*" /dev/null </dev/null | tr -d '\r' |
		sed 's/\x1b\[[0-9;]*m//g'
}
# The widest line, colours left out.
widest() { sed 's/\x1b\[[0-9;]*[a-zA-Z]//g' "$1" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }'; }

W=$T_TMP/w.json
# Two processes, one with two threads' worth of shell: a table of a few rows.
printf '%s\n' '#!/bin/sh' '(sleep 0.05; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done) &' \
	'sleep 0.1' 'wait' >work.sh
chmod 755 work.sh
work=$T_TMP/work.sh
for cols in 80 120 200; do
	in_pty "$cols" "'$TSARUN' --json '$W' -- '$work'" >"t$cols.txt"
	check "$cols columns: the table was printed" grep -q '^  TOTAL' "t$cols.txt"
	at_most "$cols columns: every line fits" "$(widest "t$cols.txt")" "$cols"
done
check "80 columns: PID and TID in one column" grep -q 'PID/TID  COMM' t80.txt
check "80 columns: says what it left out, and how to see it" \
	grep -q '(left out for 80 columns: SWITCHES.*see --wide)' t80.txt
check "80 columns: the quality line is wrapped at a word, continued deeper" \
	sh -c "grep -A1 '^  quality:' t80.txt | sed -n 2p | grep -q '^    [a-z]'"
check "120 columns: every column" grep -q 'SWITCHES' t120.txt
check "200 columns: every column, nothing left out" sh -c "grep -q SWITCHES t200.txt && ! grep -q 'left out' t200.txt"
in_pty 80 "COLUMNS=200 '$TSARUN' --json '$W' -- true" >c200.txt
check "COLUMNS overrides the terminal's own width" sh -c "grep -q SWITCHES c200.txt && [ \$(awk '{ if (length(\$0) > m) m = length(\$0) } END { print m }' c200.txt) -gt 80 ]"
in_pty 80 "'$TSARUN' --wide --json '$W' -- true" >wide.txt
check "--wide: every column at 80" sh -c "grep -q SWITCHES wide.txt && ! grep -q 'left out' wide.txt"
"$TSARUN" --json "$W" -- "$work" 2>pipe.txt
check "a pipe: every column" grep -q 'SWITCHES' pipe.txt
check "a pipe: the quality line whole" grep -q '^  quality: residual.*kernel cross-check' pipe.txt
check "a pipe: units in the header, once" grep -Eq '^ +ms +ms +ms +ms +ms +ms +avg/max us +vol/invol$' pipe.txt

# tsarun's own lines on stderr fit too: a tsarun killed by SIGKILL leaves
# kernel.task_delayacct on, and the next one restores it and says so (a
# line of 101 columns once, when an earlier kill was repaired by this
# suite's first run). The suites run one after another, but a tsarun of
# another run of the tests beside this one may repair it first: then this
# one has nothing to say.
"$TSARUN" -q --json "$T_TMP/k.json" -- sleep 7.25 &
tp=$!
sleep 0.5
kill -KILL "$tp"
wait "$tp" 2>/dev/null
pkill -f '^sleep 7.25$' || true
in_pty 80 "'$TSARUN' --json '$T_TMP/k2.json' -- true" >repair80.txt
if grep -q 'restored kernel.task_delayacct' repair80.txt; then
	at_most "80 columns: the line saying kernel.task_delayacct was restored fits" "$(widest repair80.txt)" 80
else
	skip "80 columns: the line saying kernel.task_delayacct was restored fits" \
		"a tsarun beside this run of the tests restored it first"
fi

# The line of what was written: wrapped at words on a terminal, whole in a pipe.
long=a-long-artifact-name-that-makes-every-file-name-long.json
in_pty 80 "'$TSARUN' --json '$long' --flame --timeline -- sleep 0.05" >wrote80.txt
check "80 columns: the files written are said" \
	sh -c "grep -q '^tsarun: wrote' wrote80.txt && grep -q 'critpath.svg in \\.' wrote80.txt"
at_most "80 columns: the line of what was written fits" "$(widest wrote80.txt)" 80
check "80 columns: ... continued deeper, cut at a name" \
	sh -c "grep -A1 '^tsarun: wrote' wrote80.txt | sed -n 2p | grep -q '^  a-long-artifact-name'"
"$TSARUN" --json "$long" --flame --timeline -- sleep 0.05 2>wrote-pipe.txt
check "a pipe: the line of what was written whole" \
	grep -q '^tsarun: wrote a-long.*critpath.svg in \. (ui.perfetto.dev opens the trace)$' wrote-pipe.txt

# One unit, three decimals, 0 for nothing: the TOTAL row's figures.
total=$(grep '^  TOTAL' pipe.txt)
check "TOTAL: times with three decimals or 0" sh -c "echo '$total' | awk '{ for (i = 2; i <= 7; i++) if (\$i !~ /^([0-9]+\\.[0-9][0-9][0-9]|0|<0\\.001)\$/) exit 1 }'"
check "no '0 ns' nor '0.0 us' anywhere" sh -c "! grep -Eq '(^| )0 ns|0\\.0 us' pipe.txt"

# A command that cannot run: one line, 127 or 126, the artifact still written.
in_pty 80 "'$TSARUN' --json '$W' -- /nonexistent; echo rc=\$?" >nx.txt
equal "a missing command: one line, then its status" "$(cat nx.txt)" \
	"tsarun: cannot execute '/nonexistent': No such file or directory
rc=127"
"$TSARUN" --runs 3 --json "$W" -- /nonexistent 2>nx-pipe.txt
equal "a missing command with --runs 3 exits 127" "$?" 127
equal "... in one line" "$(wc -l <nx-pipe.txt)" 1
equal "... and the artifact says not_started" "$(jqv "$W" '.runs[0].status')" not_started
"$TSARUN" report "$W" >nx-report.txt
check "its report names no tsarun helper" sh -c "! grep -q tsarun-spawner nx-report.txt && grep -q '(before exec)' nx-report.txt"

# Progress: on a terminal, one line rewritten per run and cleared; never in a pipe.
in_pty 100 "'$TSARUN' --runs 4 --no-table --json '$W' -- sleep 0.2" >prog.txt
check "progress: run 2, 3 and 4 of 4, each with the estimate and an ETA" \
	sh -c "grep -q 'tsarun: run 2/4   wall 2[0-9][0-9]\.[0-9] ms, cpu .*ETA ' prog.txt &&
		grep -q 'tsarun: run 3/4   wall 2[0-9][0-9]\.[0-9] ms +- .*ETA ' prog.txt &&
		grep -q 'tsarun: run 4/4 ' prog.txt"
script -qec "stty cols 100 rows 40; '$TSARUN' --runs 4 --no-table --json '$W' -- sleep 0.2" /dev/null </dev/null >prog-raw.txt
equal "progress: rewritten in place (CR, erase line), on no line of its own" \
	"$(grep -c 'tsarun: run' prog-raw.txt) $(grep -o $'\r\033\\[Ktsarun: run' prog-raw.txt | wc -l)" "1 3"
equal "progress: cleared before anything else is written" "$(tail -c 4 prog-raw.txt | od -An -c | tr -s ' ')" ' \r 033 [ K'
"$TSARUN" --runs 4 --json "$W" -- sleep 0.1 2>prog-pipe.txt
check "progress: nothing of it in a pipe" sh -c "! grep -q 'tsarun: run' prog-pipe.txt && ! grep -q \$'\\r' prog-pipe.txt"
in_pty 100 "'$TSARUN' -q --runs 3 --json '$W' -- sleep 0.1" >prog-q.txt
check "progress: none with -q" sh -c "! grep -q 'tsarun: run' prog-q.txt"

# The artifact a run replaces stays as .old (perf's perf.data.old), and the report says so.
rm -f keep.json keep.json.old
"$TSARUN" --json keep.json -- true 2>keep1.err
check "the first run: no .old, nothing said of one" sh -c "[ ! -e keep.json.old ] && grep -qx '  artifact: keep.json' keep1.err"
"$TSARUN" --json keep.json -- sh -c true 2>keep2.err
equal "the second run: the first's artifact is keep.json.old" \
	"$(jq -r '.command.argv | join(" ")' keep.json.old) / $(jq -r '.command.argv | join(" ")' keep.json)" "true / sh -c true"
check "... and the report says where it went" grep -qx '  artifact: keep.json (the previous one is now keep.json.old)' keep2.err

# The series' summary and the gate's tables fit the terminal too (80, 120, 200
# columns): columns dropped least useful first and named, notes wrapped at
# words; a pipe and --wide get every column.
# The widest line in characters (UTF-8), colours left out.
widest_chars() {
	python3 -c 'import sys
t = open(sys.argv[1], encoding="utf-8", errors="replace").read()
print(max([len(l) for l in t.split("\n")] + [0]))' "$1"
}
# In a pty of COLS columns: each CR (a progress rewrite) a line break, colours left out.
in_pty_raw() {
	local cols=$1
	shift
	script -qec "stty cols $cols rows 40; $*" /dev/null </dev/null | tr '\r' '\n' |
		sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g'
}
printf '%s\n' '#!/bin/sh' 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' >spin.sh
chmod 755 spin.sh
spin=$T_TMP/spin.sh
"$TSARUN" --runs 5 --json base.json -- "$spin" 2>/dev/null
for cols in 80 120 200; do
	in_pty_raw "$cols" "'$TSARUN' --runs 5 --baseline base.json --json new.json -- '$spin'" >g$cols.txt
	check "gate at $cols columns: the summary and the gate were printed" \
		sh -c "grep -q '^  METRIC .*MEDIAN' g$cols.txt && grep -q '^regression gate' g$cols.txt"
	at_most "gate at $cols columns: every line fits" "$(widest_chars "g$cols.txt")" "$cols"
	in_pty_raw "$cols" "'$TSARUN' compare base.json new.json" >cmp$cols.txt
	check "compare at $cols columns: the table was printed" grep -q '^  METRIC .*VERDICT' cmp$cols.txt
	at_most "compare at $cols columns: every line fits" "$(widest_chars "cmp$cols.txt")" "$cols"
done
check "gate at 80 columns: says what it left out, and how to see it" \
	sh -c "grep -q '(left out for 80 columns: MEAN, OUTLIERS; see --wide)' g80.txt &&
		grep -Eq '\\(left out for 80 columns: RUNS(, THRESHOLD)?; see --wide\\)' g80.txt"
check "gate at 200 columns: every column, nothing left out" \
	sh -c "grep -q 'OUTLIERS' g200.txt && grep -q 'THRESHOLD' g200.txt && ! grep -q 'left out' g200.txt"
"$TSARUN" --runs 5 --baseline base.json --json new.json -- "$spin" 2>gpipe.txt
check "gate in a pipe: every column" sh -c "grep -q 'OUTLIERS' gpipe.txt && grep -q 'RUNS.*THRESHOLD' gpipe.txt && ! grep -q 'left out' gpipe.txt"
in_pty_raw 80 "'$TSARUN' --wide --runs 5 --baseline base.json --json new.json -- '$spin'" >gwide.txt
check "gate with --wide at 80: every column" sh -c "grep -q 'OUTLIERS' gwide.txt && grep -q 'RUNS.*THRESHOLD' gwide.txt && ! grep -q 'left out' gwide.txt"
in_pty_raw 80 "'$TSARUN' compare --wide base.json new.json" >cmpwide.txt
check "compare --wide at 80: every column" sh -c "grep -q 'RUNS.*THRESHOLD' cmpwide.txt && ! grep -q 'left out' cmpwide.txt"
"$TSARUN" compare base.json new.json >cmppipe.txt
check "compare in a pipe: every column" sh -c "grep -q 'RUNS.*THRESHOLD' cmppipe.txt && ! grep -q 'left out' cmppipe.txt"

# The --bash report too: its hot lists, the tree (functions, a pipeline in a
# loop, a command substitution, each with the processes it ran) and the notes
# under it fit; under 120 columns the tree leaves out DEPTH and %PARENT (its
# indent and %TOTAL tell them); a pipe gets every column.
cat >deep.sh <<'EOS'
f() { sleep 0.02; for i in 1 2 3; do echo "$i" | cat >/dev/null; done; }
g() { f; x=$(date +%s); h() { f; }; h; }
g
tar -C / -cf /dev/null etc/hostname
EOS
for cols in 80 120 200; do
	in_pty_raw "$cols" "'$TSARUN' --json b.json --bash deep.sh" >b$cols.txt
	check "--bash at $cols columns: the tree was printed" \
		sh -c "grep -q 'WHERE.*COMMAND\$' b$cols.txt && grep -q '└─tar' b$cols.txt && grep -q '↳ cat' b$cols.txt"
	at_most "--bash at $cols columns: every line fits" "$(widest_chars "b$cols.txt")" "$cols"
done
check "--bash at 80 columns: no DEPTH or %PARENT" sh -c "! grep -Eq 'DEPTH|%PARENT' b80.txt"
check "--bash at 80 columns: the trap's cost note wrapped, continued deeper" \
	sh -c "grep -v '^\$' b80.txt | grep -A1 '^times exclude' | sed -n 2p | grep -q '^  [a-z]'"
"$TSARUN" --json b.json --bash deep.sh 2>bpipe.txt >/dev/null
check "--bash in a pipe: every column" sh -c "grep -q 'WHERE DEPTH .*%PARENT' bpipe.txt"
