# SPDX-License-Identifier: MIT
# bash completion for tsarun. Installed by make install as
# share/bash-completion/completions/tsarun; tests/integration/14-completion.sh
# holds its option lists to `tsarun --help` and runs it in bash.

_tsarun_opts_arg='--json --out-dir --report --html --export-csv --export-runs-csv
	--export-hyperfine --sort --top --color --user --descendants
	--kill-grace --ringbuf --backend -b --sample --runs -r --warmup --baseline --baseline-cmd
	--fail-over --metric --max-runs --inconclusive --junit --markdown --offcpu-min --freq
	--timeline-buffer --timeline-max --pid -p --interval --count --output --tid --comm --stream
	--stream-backlog --bash-top --bash-depth'
_tsarun_opts_flag='--no-table --quiet -q --wide --verbose -v --no-sandbox --no-delayacct --bash
	--bash-no-follow --bash-recalibrate --stacks --waker --flame --timeline --critical-path --show-idle --no-header --help -h
	--version -V'
_tsarun_report_opts='--format -f --view --inverted --reverse --sort --top --wide --color --help -h'
# compare's options that take a value, beyond the run's (_tsarun_opts_arg)
_tsarun_compare_arg='--flame-diff'
_tsarun_compare_opts='--fail-over --metric --inconclusive --junit --markdown --html --flame-diff --wide --color
	--quiet -q --help -h'

# The candidates for the value of option $1.
_tsarun_values()
{
	case $1 in
	--sort) echo 'wall cpu runq sleep disk offcpu switches wakeup tid' ;;
	--color) echo 'auto always never' ;;
	--descendants) echo 'wait leave kill' ;;
	--backend | -b) echo 'auto ebpf taskstats proc ebpf,taskstats ebpf,proc' ;;
	--inconclusive) echo 'warn fail' ;;
	--output) echo 'table json' ;;
	--format | -f) echo 'table markdown folded svg trace html csv runs-csv hyperfine' ;;
	--view) echo 'wall offcpu oncpu' ;;
	--metric) echo 'wall cpu on_cpu runqueue blocked uninterruptible voluntary_switches
		involuntary_switches max_rss instructions' ;;
	--user) compgen -u ;;
	--pid | -p) (cd /proc 2>/dev/null && compgen -G '[0-9]*') ;;
	esac
}

_tsarun()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev= sub= i w files=0
	COMPREPLY=()
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	# Past the command (after --, or the first word that is no option), the command's own.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		compare | report | doctor) [ "$i" -eq 1 ] && sub=$w && continue ;;
		esac
		if [ "$w" = -- ] || { [ -z "$sub" ] && [[ $w != -* ]] &&
			[[ " $_tsarun_opts_arg " != *" ${COMP_WORDS[i - 1]} "* ]]; }; then
			local at=$i
			[ "$w" = -- ] && at=$((i + 1))
			if declare -F _command_offset >/dev/null; then
				_command_offset "$at"
			elif [ "$at" -eq "$COMP_CWORD" ]; then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return 0
		fi
	done
	case $prev in
	--json | --report | --html | --junit | --markdown | --stream | --baseline | --export-csv | \
		--export-runs-csv | --export-hyperfine)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0
		;;
	--out-dir)
		COMPREPLY=($(compgen -d -- "$cur"))
		return 0
		;;
	esac
	w=$(_tsarun_values "$prev")
	if [ -n "$w" ]; then
		COMPREPLY=($(compgen -W "$w" -- "$cur"))
		return 0
	fi
	case $sub in
	report)
		[[ $cur == -* ]] && COMPREPLY=($(compgen -W "$_tsarun_report_opts" -- "$cur")) ||
			COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
		return 0
		;;
	compare)
		if [ "$prev" = --flame-diff ]; then
			COMPREPLY=($(compgen -d -- "$cur"))
			return 0
		fi
		[[ $cur == -* ]] && COMPREPLY=($(compgen -W "$_tsarun_compare_opts" -- "$cur")) ||
			COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
		return 0
		;;
	doctor)
		COMPREPLY=($(compgen -W '--json --help' -- "$cur"))
		return 0
		;;
	esac
	case $cur in
	-*) COMPREPLY=($(compgen -W "$_tsarun_opts_arg $_tsarun_opts_flag" -- "$cur")) ;;
	*)
		[ "$COMP_CWORD" -eq 1 ] && COMPREPLY=($(compgen -W 'compare report doctor' -- "$cur"))
		COMPREPLY+=($(compgen -c -- "$cur"))
		;;
	esac
	return 0
}
complete -F _tsarun -o bashdefault -o default tsarun
