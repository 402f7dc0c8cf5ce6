#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tsarun --bash on what real scripts do (issue 24): nested bash started
# through another program, the script's own DEBUG trap, nested command
# substitutions, exec'd nested bash, posix mode, and the exit status
# when only tsarun was interrupted. Each case once went wrong; each test
# fails on the code before its fix.
. "$(dirname "$0")/../lib.sh"
need_bpf "bash profiles of real scripts"
cd "$T_TMP"
J=$T_TMP/a.json
# same_as_bare NAME ARGS...: tsarun --bash ARGS gives bash ARGS's stdout and status.
same_as_bare() {
	local name=$1 bare prof
	shift
	bash "$@" >"$T_TMP/bare.out" 2>"$T_TMP/bare.err"
	bare=$?
	"$TSARUN" -q --color never --json "$J" --bash "$@" >"$T_TMP/prof.out" 2>"$T_TMP/prof.err"
	prof=$?
	equal "$name: the same exit status ($bare)" "$prof" "$bare" || sed 's/^/#   /' "$T_TMP/prof.err" | head -8
	equal "$name: the same stdout" "$(cat "$T_TMP/prof.out")" "$(cat "$T_TMP/bare.out")"
}

# 1. A nested bash reached through env, with pipelines: it once crashed the
# analysis (the node array renumbered smaller than its recorded capacity).
printf '%s\n' '#!/usr/bin/env bash' 'echo a | cat' 'echo b | cat' >envp.sh
chmod +x envp.sh
same_as_bare "a nested bash through env with pipelines" -c 'x=$(./envp.sh); echo "$x"'
validate "$J"
equal "... its pipelines are in the profile" \
	"$(jq -r '[.bash.commands[] | select(.kind == "pipeline") | .text] | sort | join(",")' "$J")" \
	"echo a | cat,echo b | cat"

# ... and issue 23's script, a nested bash behind timeout and sh, then pipelines:
# root's analysis overflowed its heap (exit 134, no artifact).
printf '#!/bin/bash\ntimeout 5 sh -c "bash -c true; :"\necho a | cat >/dev/null\necho b | cat >/dev/null\n' >r.sh
chmod +x r.sh
same_as_bare "issue 23's nested bash behind timeout and sh, then pipelines" ./r.sh
validate "$J"
equal "... its pipelines and the nested bash are in the profile" \
	"$(jq -r '[.bash.commands[] | select(.kind == "pipeline") | .text] | sort | join(",")' "$J") $(jq '[.bash.commands[] | select(.text == "true")] | length' "$J")" \
	"echo a | cat > /dev/null,echo b | cat > /dev/null 1"

# 2. The script's own DEBUG trap runs where bash runs it: not in the
# function nor in the command substitution (functrace is the script's),
# so its output stays out of the captured value.
same_as_bare "the script's own DEBUG trap (issue's case)" -c \
	'trap '\''echo "DBG $BASH_COMMAND"'\'' DEBUG; f() { :; }; f; x=$(true); echo "x=[$x]"'
equal "... it ran for f and x=\$(true) only" "$(grep -c '^DBG' "$T_TMP/prof.out")" 3
bash "$REPO/tests/bash/user-debug.sh" >"$T_TMP/bare.out" 2>&1
"$TSARUN" -q --json "$J" --bash "$REPO/tests/bash/user-debug.sh" >"$T_TMP/prof.out" 2>&1
equal "... functrace, declare -t, trap -p, extdebug, '' and set -x: bash's output and trace" \
	"$(cat "$T_TMP/prof.out")" "$(cat "$T_TMP/bare.out")"
equal "... and the recording went on throughout" "$(jqv "$J" .bash.quality.trap_lost_streams)" 0
equal "... to the last command" "$(jq -r '[.bash.commands[] | select(.text == "echo \"status $?\"")] | .[0].count' "$J")" 1

# 3. The command after the script sets its DEBUG trap keeps its own label.
"$TSARUN" -q --json "$J" --bash -c 'echo start; trap "x=1" DEBUG; sleep 0.3' >/dev/null 2>&1
equal "the command after trap ... DEBUG is itself" \
	"$(jq -r '[.bash.commands[] | select(.depth == 1) | .text] | join(",")' "$J")" \
	'echo start,trap "x=1" DEBUG,sleep 0.3'
at_least "... with its time (ms)" "$(jq -r '[.bash.commands[] | select(.text == "sleep 0.3")] | .[0].wall_ns / 1e6' "$J")" 300

# 6. Nested command substitutions: each below the command that expands
# it, unlabelled (its commands are below it), not a sibling named after
# the innermost.
"$TSARUN" -q --json "$J" --bash -c 'Z=$(echo "$(echo inner)"); echo "$Z"; cat <(echo "$(echo q)")' >"$T_TMP/out" 2>&1
equal "nested substitutions: the script's output" "$(cat "$T_TMP/out")" "inner
q"
# path TEXT: the texts from the top down to the node with that text, parents first
path() { jq -r --arg t "$1" '.bash.commands as $c | def up($n): if $n.parent == null then [] else up($c[$n.parent]) + [$n.text + "/" + $n.kind] end; [$c[] | select(.text == $t)][-1] as $n | up($n) | join(" > ")' "$J"; }
equal "... Z=\$(echo \"\$(echo inner)\"): both below it, in order" "$(path 'echo inner')" \
	'Z=$(echo "$(echo inner)")/command > /command_substitution > echo "$(echo inner)"/command > /command_substitution > echo inner/command'
# (bash sets SUBSHELL_COMSUB in a process substitution too: the $() in it
# adds only SUBSHELL_RESETTRAP, and was once called a process substitution.)
equal "... and in a process substitution: below its command, a command substitution in it" "$(path 'echo q')" \
	'cat <(echo "$(echo q)")/command > /process_substitution > echo "$(echo q)"/command > /command_substitution > echo q/command'
equal "... no node at the top but the script's three commands" \
	"$(jq '[.bash.commands[] | select(.depth == 1)] | length' "$J")" 3

# 5. Corrections. A nested bash reached through exec goes below the exec
# and its trap runs come off it: the exec's row was 350-1300% of the
# script's time, its bash a sibling. And no node is corrected below what
# its children took one after another (a parent's bash -c once read 374%
# of itself in its child).
cat >exec-bash.sh <<'SH'
echo start
exec bash -c 'i=0; while ((i < 3000)); do i=$((i+1)); done; echo done'
SH
same_as_bare "exec bash" exec-bash.sh
equal "... the exec'd bash is below the exec" \
	"$(jq -r '.bash.commands as $c | [$c[] | select(.kind == "bash")][0].parent as $p | $c[$p].text' "$J")" \
	"exec bash -c 'i=0; while ((i < 3000)); do i=\$((i+1)); done; echo done'"
# (The script's figure is corrected over its whole span, the exec's over
# its own, each at its own stretch: a few percent apart, not 350%.)
at_most "... the exec's row is within 10% of the script's time (%)" \
	"$(jq -r '.bash.commands as $c | [$c[] | select(.text | startswith("exec bash"))][0].wall_ns * 100 / $c[0].wall_ns' "$J")" 110
equal "... and the loop in it is counted whole" "$(jq -r '[.bash.commands[] | select(.text == "i=$((i+1))")][0].count' "$J")" 3000
# A script that exec'd bash, whose work is in children its later image
# reaps (a test framework's runner): TOTAL CPU TIME read 0.
printf '%s\n' "echo start" "exec bash -c 'x=\$(i=0; while ((i < 20000)); do i=\$((i+1)); done; echo \$i); echo \$x'" >exec-child.sh
same_as_bare "exec bash, the work in a child" exec-child.sh
at_least "... the script's CPU holds its child's, reaped after the exec (%)" \
	"$(jq -r '.bash.total.cpu_ns * 100 / ([.bash.commands[] | select(.kind == "command_substitution")][0].cpu_ns)' "$J")" 80
# below JSON: the nodes that read less than their children, one after another
below() { jq -r '.bash.commands as $c | [$c[] | . as $n | select(.id > 0) |
	([$c[] | select(.parent == $n.id and .kind != "background" and .kind != "coproc" and .kind != "process_substitution" and $n.kind != "pipeline")] |
	 map(.wall_ns) | add // 0) as $w | select($n.wall_ns < $w) | "\($n.text): \($n.wall_ns) < \($w)"] | join("; ")' "$1"; }
bad=
for i in 1 2 3 4 5; do
	"$TSARUN" -q --json "$T_TMP/n$i.json" --bash -c 'bash -c "for i in {1..2000}; do :; done"; x=$(bash -c "for i in {1..500}; do :; done; echo y")' >/dev/null 2>&1
	bad+=$(below "$T_TMP/n$i.json")
done
equal "no node below its children (5 runs of a nested bash -c)" "$bad" ""
equal "... nor in the exec'd bash" "$(below "$J")" ""

# 4. Posix mode reads no BASH_ENV: a #!/bin/bash --posix script (and
# POSIXLY_CORRECT in the environment) once gave "0 commands" and no word.
# It is profiled in posix mode; a nested bash --posix is said to be
# missing; recursion past the frames kept is said to be folded.
printf '%s\n' '#!/bin/bash --posix' 'echo "$SHELLOPTS ${POSIXLY_CORRECT-}"' 'f() { echo in f; }' 'f' >posix.sh
chmod +x posix.sh
./posix.sh >"$T_TMP/bare.out" 2>&1
"$TSARUN" -q --json "$J" --bash ./posix.sh >"$T_TMP/prof.out" 2>&1
equal "#!/bin/bash --posix: the same output, in posix mode" "$(cat "$T_TMP/prof.out")" "$(cat "$T_TMP/bare.out")"
equal "... and profiled: its 3 commands" "$(jq '[.bash.commands[] | select(.depth >= 1)] | length' "$J")" 3
POSIXLY_CORRECT=1 bash -c 'echo "$SHELLOPTS"; env | grep ^POSIXLY' >"$T_TMP/bare.out" 2>&1
POSIXLY_CORRECT=1 "$TSARUN" -q --json "$J" --bash -c 'echo "$SHELLOPTS"; env | grep ^POSIXLY' >"$T_TMP/prof.out" 2>&1
equal "POSIXLY_CORRECT: the same output, and its value exported" "$(cat "$T_TMP/prof.out")" "$(cat "$T_TMP/bare.out")"
equal "... and profiled" "$(jq '[.bash.commands[] | select(.depth == 1)] | length' "$J")" 2
"$TSARUN" --color never --json "$J" --bash -c 'bash --posix -c "echo nested"; echo top' >/dev/null 2>"$T_TMP/err"
check "a nested bash --posix: the report says its commands are missing" \
	grep -q 'warning: 1 bash process of the tree recorded nothing' "$T_TMP/err"
equal "... and bash.quality counts it" "$(jqv "$J" .bash.quality.silent_bash_processes)" 1
"$TSARUN" --color never --json "$J" --bash -c 'bash -c "echo nested"; (echo sub); echo a | cat; x=$(echo y)' >/dev/null 2>"$T_TMP/err"
equal "... not one that was followed, nor a fork" "$(jqv "$J" .bash.quality.silent_bash_processes)" 0
"$TSARUN" --color never --json "$J" --bash -c 'f() { (( $1 > 0 )) && f $(( $1 - 1 )); return 0; }; f 600; echo done' >/dev/null 2>"$T_TMP/err"
check "600 nested calls: the report says what is folded" grep -q 'deeper than 512' "$T_TMP/err"
equal "... and bash.quality counts it" "$(jqv "$J" .bash.quality.deep_streams)" 1

# The report: the costliest commands first, then the tree; each row with
# its file; --bash-top, --bash-depth, folding of a large tree, the width.
mkdir -p lib
printf '%s\n' 'slow() { sleep 0.2; }' 'quick() { :; }' >lib/util.sh
cat >report.sh <<'SH'
. ./lib/util.sh
quick
slow
f() { g; }
g() { sleep 0.05; }
f
SH
# 250 lines more, each a node of its own.
seq 250 | sed 's/.*/v&=&/' >>report.sh
"$TSARUN" --color never --json "$J" --bash report.sh >/dev/null 2>"$T_TMP/err"
sed -n '/^bash profile/,$p' "$T_TMP/err" >"$T_TMP/tree"
first=$(awk '/^hot commands by self time/ { getline; getline; print; exit }' "$T_TMP/tree")
check "the hot list comes first: the costliest command by self time is the sleep in slow" \
	sh -c "echo '$first' | grep -q 'util.sh:1 .*sleep 0.2  < slow'"
check "... g's sleep is listed with its call path" grep -q 'report.sh:5 .*sleep 0.05  < f > g' "$T_TMP/tree"
check "... the hot list is before the tree" \
	test "$(grep -n '^hot commands by self' "$T_TMP/tree" | cut -d: -f1)" -lt "$(grep -n 'WHERE DEPTH' "$T_TMP/tree" | cut -d: -f1)"
check "... the script's lines name it" grep -q ' report.sh:3 .*├─slow  \[function\]' "$T_TMP/tree"
head -3 report.sh >small.sh
"$TSARUN" --color never --bash small.sh >/dev/null 2>"$T_TMP/err"
check "a line of a function from a sourced file names that file" grep -q ' util.sh:2 .*└─:$' "$T_TMP/err"
check "... the sourcing line names the script" grep -q ' small.sh:1 .*├─\. \./lib/util.sh$' "$T_TMP/err"
check "a tree of more than 200 nodes folds what is below 0.5%" grep -q '└─… [0-9]* more (each below the share shown)' "$T_TMP/tree"
equal "... and the artifact keeps every node" "$(jq '[.bash.commands[] | select(.text | test("^v[0-9]+="))] | length' "$J")" 250
"$TSARUN" --color never --bash-top 2 --bash-depth 1 --json "$J" --bash report.sh >/dev/null 2>"$T_TMP/err"
equal "--bash-top 2: two rows a list" "$(awk '/^hot commands/ { n = 0; getline; inlist = 1; next } inlist && /^ / { n++ } inlist && !/^ / { print n; inlist = 0 }' "$T_TMP/err" | sort -u)" 2
equal "--bash-depth 1: no row below depth 1" \
	"$(awk '/WHERE DEPTH/ { t = 1; next } t && /^SELF RUN TIME/ { t = 0 } t && $2 ~ /^[0-9]+$/ && $2 > 1' "$T_TMP/err")" ""
check "... what is below is folded, and said" grep -q '└─… 1 more (below --bash-depth)' "$T_TMP/err"
"$TSARUN" --color never --bash-top 0 --bash report.sh >/dev/null 2>"$T_TMP/err"
check "--bash-top 0: no hot list" sh -c "! grep -q '^hot commands' '$T_TMP/err'"
"$TSARUN" --bash-top 2 -- true >/dev/null 2>"$T_TMP/err"
equal "--bash-top without --bash: refused" "$?" 125
# On a terminal of 120 columns, every row of the profile fits (each label
# keeps at least 8 characters: a narrower one still gets the columns).
cat >"$T_TMP/on-tty.py" <<'PY'
import fcntl, os, pty, struct, sys, termios
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
out = b""
while True:
    try:
        b = os.read(fd, 65536)
    except OSError:
        break
    if not b:
        break
    out += b
os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
PY
/usr/bin/python3 "$T_TMP/on-tty.py" "$TSARUN" --color never --json "$J" --bash -c \
	'f() { echo "a rather long command line that goes on and on and on, past the edge of any terminal of a hundred and twenty columns, which takes a few more words than that"; }; f >/dev/null' \
	| tr -d '\r' | sed -n '/^bash profile/,/^SELF RUN TIME/p' >"$T_TMP/tty"
check "... the profile was on the terminal" grep -q 'a rather long' "$T_TMP/tty"
equal "... and no row of it is wider than 120 columns" \
	"$(/usr/bin/python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$T_TMP/tty" | awk '{ print ($1 <= 120) ? "fits" : $1 }')" fits

# 8. SIGINT to tsarun alone: passed on to the script's bash, which waits
# for its command, outlives it (the command was not interrupted) and
# finishes: the script's status (0), not 130; the run is still marked.
# The signal is sent once the script runs (after the start-up), from a
# process that leaves SIGINT at its default for tsarun (a background job
# of this script would start with it ignored).
cat >"$T_TMP/sigint.py" <<'PY'
import os, signal, subprocess, sys, time
ready = sys.argv[1]
p = subprocess.Popen(sys.argv[2:], preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
end = time.time() + 20
while not os.path.exists(ready) and time.time() < end and p.poll() is None:
    time.sleep(0.01)
time.sleep(0.1)
p.send_signal(signal.SIGINT)
rc = p.wait()
print(128 - rc if rc < 0 else rc)
PY
rc=$(/usr/bin/python3 "$T_TMP/sigint.py" "$T_TMP/ready" "$TSARUN" -q --json "$J" --bash -c \
	"touch '$T_TMP/ready'; sleep 0.5; echo finished" 2>"$T_TMP/err" >"$T_TMP/out"; cat "$T_TMP/out")
equal "SIGINT to tsarun only, the script finished: its status (0)" "$rc" "finished
0"
equal "... the run is marked interrupted by SIGINT" "$(jqv "$J" '.runs[0].status + " " + .runs[0].interrupted_by')" "interrupted SIGINT"
rm -f "$T_TMP/ready"
rc=$(/usr/bin/python3 "$T_TMP/sigint.py" "$T_TMP/ready" "$TSARUN" -q --json "$J" --bash -c \
	"touch '$T_TMP/ready'; sleep 0.5 & wait; echo not reached" 2>"$T_TMP/err")
equal "... a script that SIGINT ends (in wait): 130" "$rc" 130
