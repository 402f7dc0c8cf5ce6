{ __tsa_us=$_ __tsa_xv=$-${TSARUN_BASH_VERBOSE:+v}; unset TSARUN_BASH_VERBOSE; set +xv; } 2>/dev/null
# SPDX-License-Identifier: MIT
# tsarun --bash: the BASH_ENV every bash of the profiled tree reads first.
#
# It enables the __tsa builtin (tsarun-trap.so), which connects to tsarun,
# sources the user's own BASH_ENV, measures the trap's cost and turns
# functrace on for bash, so that functions, command substitutions and
# subshells inherit the DEBUG trap, but not for the script (its `$-`,
# `set +T` and RETURN trap are its own: tsarun-trap.c); `trap` is replaced
# by one that leaves ours out of its listings. Then one short trap string
# goes on DEBUG. It defines no variable or function of its own and reads
# and writes nothing the script owns. If the builtin cannot be loaded
# (another bash), the pure-bash trap below records instead, with plain
# `set -T`, and the report says what it does not do.
#
# A script run with -x (on its #! line) must not trace this file: its first
# and last lines turn -x and -v off and back on, traced to /dev/null. -v
# would echo the first line as bash reads it: the script's own -v (its #!
# line) comes in TSARUN_BASH_VERBOSE instead (launcher/probe_bash.c); a
# nested `bash -v` still echoes it. The builtin drops bash's echo of the
# trap's string at each command (tsarun-trap.c). The
# trap goes on last, in one command with the rest of the clean-up, so that
# its first run is for the script's first command, which finds $_ as bash
# left it.
if [[ -n ${TSARUN_BASH_SOCK-} ]]; then
	if enable -f "${TSARUN_BASH_SO-}" __tsa 2>/dev/null; then
		# __tsa start turns functrace on for bash, not for the script (tsarun-trap.c);
		# `trap` leaves ours out of its listings.
		if __tsa start; then
			enable -f "${TSARUN_BASH_SO-}" trap 2>/dev/null
			# The last word keeps $_ as the script left it (tsarun-trap.c).
			__tsa_trap='__tsa - "$_"'
		fi
	elif [[ -n ${TSARUN_BASH_FALLBACK-} && -z ${TSARUN_BASH_NOFOLLOW-} || -z ${TSARUN_BASH_ROOT-} ]] &&
		[[ -n ${TSARUN_BASH_FALLBACK-} ]] && exec {TSARUN_BASH_FD}>>"$TSARUN_BASH_FALLBACK"; then
		# The fallback: one line per command, to a file tsarun reads at the end.
		export TSARUN_BASH_ROOT=${TSARUN_BASH_ROOT:-$BASHPID}
		if [[ -n ${TSARUN_BASH_USER_ENV-} ]]; then
			eval ". \"$TSARUN_BASH_USER_ENV\""
			{ __tsa_xv+=$-; set +xv; } 2>/dev/null
		fi
		set -T
		# The depth is how many functions and sourced files run: BASH_SOURCE
		# has one entry each, and one more for a script file (not for -c or
		# stdin), whatever FUNCNAME says. printf's last word, printed as
		# nothing, keeps $_ as the script left it.
		__tsa_trap='${#BASH_SOURCE[@]}'
		[[ $- == *[cs]* || $0 == "${BASH-}" || $0 == bash || $0 == -bash ]] ||
			__tsa_trap='$((${#BASH_SOURCE[@]} - 1))'
		__tsa_trap='printf "%s %s %s %s %s\n%.0s" $BASHPID $EPOCHREALTIME $LINENO '$__tsa_trap' "${BASH_COMMAND//$'"'\n'"'/ }" "$_" >&$TSARUN_BASH_FD'
	elif [[ -n ${TSARUN_BASH_USER_ENV-} ]]; then
		eval ". \"$TSARUN_BASH_USER_ENV\""
		{ __tsa_xv+=$-; set +xv; } 2>/dev/null
	fi
fi
{
	[[ $__tsa_xv != *x* ]] || set -x
	[[ $__tsa_xv != *v* ]] || set -v
	# Posix mode, which reads no BASH_ENV, turned on here for the script
	# (#!/bin/bash --posix, POSIXLY_CORRECT: launcher/probe_bash.c).
	if [[ -n ${TSARUN_BASH_POSIX-} ]]; then
		[[ $TSARUN_BASH_POSIX == --posix ]] || export POSIXLY_CORRECT="${TSARUN_BASH_POSIX#=}"
		unset TSARUN_BASH_POSIX
		set -o posix
	fi
	# The script's first command finds $_ as bash left it: eval's last word,
	# a comment to it.
	if [[ -n ${__tsa_trap-} ]]; then
		eval "unset __tsa_xv __tsa_trap __tsa_us; trap -- ${__tsa_trap@Q} DEBUG #" "$__tsa_us"
	else
		eval "unset __tsa_xv __tsa_us #" "$__tsa_us"
	fi
} 2>/dev/null
