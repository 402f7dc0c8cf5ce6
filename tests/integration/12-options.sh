#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every option that takes a value refuses a malformed one: exit 125, one
# line on stderr that names the option and the value, and the command does
# not run. The options are read from --help, so one added there without a
# row below fails here (the unit test does the same from the parser's tables).
. "$(dirname "$0")/../lib.sh"
cd "$T_TMP"

# OPTION -> malformed values, separated by '|'.
declare -A bad=(
	[--json]='' [--out-dir]='' [--report]='' [--user]=''
	[--sort]='nope|WALL' [--top]='abc|0|-1|1.5' [--color]='sometimes'
	[--descendants]='all' [--kill-grace]='-1|5|5 parsecs|1e3s'
	[--ringbuf]='5 parsecs|1K|2G|-4K' [--timeline-buffer]='5 parsecs|1K|2G|-4K'
	[--timeline-max]='0|abc|-1|100000001' [--runs]='abc|0|-1|10001' [--warmup]='x|-1'
	[--baseline]='' [--baseline-cmd]='' [--fail-over]='10|-5%|cpu=|nope=5%'
	[--metric]='nope|cpu,' [--max-runs]='0|abc' [--inconclusive]='maybe'
	[--junit]='' [--markdown]='' [--html]='' [--flame-diff]=''
	[--export-csv]='' [--export-runs-csv]='' [--export-hyperfine]=''
	[--sample]='-1|abc|5 parsecs' [--offcpu-min]='5 parsecs|-1ms|abc'
	[--interval]='-1|abc' [--stream]='' [--stream-backlog]='2G|-1|abc' [--count]='abc|-1' [--backend]='nope' [--freq]='0|abc|10001'
	[--pid]='abc|0|-1' [--output]='xml' [--tid]='abc|0' [--comm]=''
	[--bash-top]='abc|-1|1.5|100001' [--bash-depth]='abc|-1|2x'
)
# Options listed with a value in --help (--bash takes the script and its
# arguments, not a value).
mapfile -t opts < <("$TSARUN" --help | grep -oE -- '(^|[ ,])--[a-z][a-z-]+[ =][A-Z][A-Z.]*' |
	grep -oE -- '--[a-z-]+' | grep -vx -- '--bash' | sort -u)
at_least "--help lists the options that take a value" "${#opts[@]}" 15

for opt in "${opts[@]}"; do
	if [ -z "${bad[$opt]+set}" ]; then
		not_ok "$opt takes a value but has no malformed values in tests/integration/12-options.sh"
		continue
	fi
	IFS='|' read -r -a vals <<<"${bad[$opt]}|"
	[ -z "${bad[$opt]}" ] && vals=('')
	for v in "${vals[@]}"; do
		rm -f "$T_TMP/ran"
		"$TSARUN" "$opt" "$v" -- touch "$T_TMP/ran" >/dev/null 2>"$T_TMP/err"
		rc=$?
		msg=$(cat "$T_TMP/err")
		if [ $rc -ne 125 ]; then
			not_ok "$opt '$v' is refused with 125" "exit $rc: $msg"
		elif [ "$(wc -l <"$T_TMP/err")" -ne 1 ] || [[ "$msg" != "tsarun: "* ]]; then
			not_ok "$opt '$v': one line, 'tsarun: ...'" "$msg"
		elif [[ "$msg" != *"$opt"* ]]; then
			not_ok "$opt '$v': the message names the option" "$msg"
		elif [ -n "$v" ] && [[ "$msg" != *"'$v'"* ]]; then
			not_ok "$opt '$v': the message names the value" "$msg"
		elif [ -e "$T_TMP/ran" ]; then
			not_ok "$opt '$v': the command did not run"
		else
			ok "$opt '$v' is refused with 125: $msg"
		fi
	done
done

# The subcommands' options, likewise (values malformed, files never read).
sub() {
	local want=$1 v=$2; shift 2
	"$@" >/dev/null 2>"$T_TMP/err"
	rc=$?
	msg=$(cat "$T_TMP/err")
	if [ $rc -eq 125 ] && [[ "$msg" == "tsarun: "*"$want"*"'$v'"* ]] && [ "$(wc -l <"$T_TMP/err")" -eq 1 ]; then
		ok "${*:2}: refused with 125, naming $want and '$v'"
	else
		not_ok "${*:2}: refused with 125, naming $want and '$v'" "exit $rc: $msg"
	fi
}
sub --fail-over 10 "$TSARUN" compare a.json b.json --fail-over 10
sub --metric nope "$TSARUN" compare a.json b.json --metric nope
sub --inconclusive maybe "$TSARUN" compare a.json b.json --inconclusive maybe
sub --format svg2 "$TSARUN" report a.json --format svg2
sub --top 0 "$TSARUN" report a.json --top 0
sub --sort nope "$TSARUN" report a.json --sort nope

# Contradictory options: refused before the command runs, not guessed.
rm -f "$T_TMP/ran"
"$TSARUN" -q -v -- touch "$T_TMP/ran" >/dev/null 2>"$T_TMP/err"
equal "-q -v: refused with 125" "$?" 125
check "-q -v: one line that names both" grep -qx "tsarun: -q and -v contradict each other .*: choose one" "$T_TMP/err"
check "-q -v: the command did not run" test ! -e "$T_TMP/ran"
