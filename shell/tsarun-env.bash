{ __tsa_us=$_ __tsa_xv=$-; set +xv; } 2>/dev/null
# SPDX-License-Identifier: MIT
# tsarun --bash: the BASH_ENV every bash of the profiled tree reads first.
#
# It enables the __tsa builtin (tsarun-trap.so), which connects to tsarun,
# sources the user's own BASH_ENV, and measures the trap's cost; then one
# short trap string goes on DEBUG, with functrace so that functions, command
# substitutions and subshells inherit it. It defines no variable or
# function of its own, forces no option but functrace, and reads and writes
# nothing the script owns. If the builtin cannot be loaded (another bash),
# the pure-bash trap below records instead, and the report says so.
#
# A script run with -x (on its #! line) must not trace this file: its first
# and last lines turn -x and -v off and back on, traced to /dev/null (-v
# still echoes the first line, and the trap's word at each command). The
# trap goes on last, in one command with the rest of the clean-up, so that
# its first run is for the script's first command, which finds $_ as bash
# left it.
if [[ -n ${TSARUN_BASH_SOCK-} ]]; then
	if enable -f "${TSARUN_BASH_SO-}" __tsa 2>/dev/null; then
		if __tsa start; then
			set -T
			# The last word keeps $_ as the script left it (tsarun-trap.c).
			__tsa_trap='__tsa - "$_"'
		fi
	elif [[ -n ${TSARUN_BASH_FALLBACK-} && -z ${TSARUN_BASH_NOFOLLOW-} || -z ${TSARUN_BASH_ROOT-} ]] &&
		[[ -n ${TSARUN_BASH_FALLBACK-} ]] && exec {TSARUN_BASH_FD}>>"$TSARUN_BASH_FALLBACK"; then
		# The fallback: one line per command, to a file tsarun reads at the end.
		export TSARUN_BASH_ROOT=${TSARUN_BASH_ROOT:-$BASHPID}
		if [[ -n ${TSARUN_BASH_USER_ENV-} ]]; then
			eval ". \"$TSARUN_BASH_USER_ENV\""
		fi
		set -T
		# printf's last word, printed as nothing, keeps $_ as the script left it.
		__tsa_trap='printf "%s %s %s %s %s\n%.0s" $BASHPID $EPOCHREALTIME $LINENO ${#FUNCNAME[@]} "${BASH_COMMAND//$'"'\n'"'/ }" "$_" >&$TSARUN_BASH_FD'
	elif [[ -n ${TSARUN_BASH_USER_ENV-} ]]; then
		eval ". \"$TSARUN_BASH_USER_ENV\""
	fi
fi
{
	[[ $__tsa_xv != *x* ]] || set -x
	[[ $__tsa_xv != *v* ]] || set -v
	# The script's first command finds $_ as bash left it: eval's last word,
	# a comment to it.
	if [[ -n ${__tsa_trap-} ]]; then
		eval "unset __tsa_xv __tsa_trap __tsa_us; trap -- ${__tsa_trap@Q} DEBUG #" "$__tsa_us"
	else
		eval "unset __tsa_xv __tsa_us #" "$__tsa_us"
	fi
} 2>/dev/null
