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
if [[ -n ${TSARUN_BASH_SOCK-} ]]; then
	if enable -f "${TSARUN_BASH_SO-}" __tsa 2>/dev/null; then
		if __tsa start; then
			set -T
			# The last word keeps $_ as the script left it (tsarun-trap.c).
			trap '__tsa - "$_"' DEBUG
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
		trap 'printf "%s %s %s %s %s\n%.0s" $BASHPID $EPOCHREALTIME $LINENO ${#FUNCNAME[@]} "${BASH_COMMAND//$'"'\n'"'/ }" "$_" >&$TSARUN_BASH_FD' DEBUG
	elif [[ -n ${TSARUN_BASH_USER_ENV-} ]]; then
		eval ". \"$TSARUN_BASH_USER_ENV\""
	fi
fi
