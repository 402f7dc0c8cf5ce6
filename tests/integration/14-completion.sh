#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Shell completion (shell/completion/): every script offers exactly the
# options `tsarun --help` has, the bash one takes a value after exactly the
# options that want one, and bash and fish, given a command line, offer the
# candidates a user expects. make install puts them where each shell looks.
# Needs neither root nor BPF.
. "$(dirname "$0")/../lib.sh"
C=$REPO/shell/completion
cd "$T_TMP"

"$TSARUN" --help >help.txt
grep -oE -- '--[a-z][a-z0-9-]*' help.txt | sort -u >help-long
# The options --help shows with a value after them (--json FILE, -r, --runs N).
grep -oE -- '--[a-z][a-z0-9-]* [A-Z][A-Z.]*' help.txt | cut -d' ' -f1 | sort -u >help-arg

# bash: its lists, as the shell holds them.
bash -c ". '$C/tsarun.bash'; printf '%s\n' \$_tsarun_opts_arg \$_tsarun_opts_flag \$_tsarun_report_opts \$_tsarun_compare_opts --json" |
	grep -- '^--' | sort -u >bash-long
equal "bash: every option --help has, and no other" "$(comm -3 help-long bash-long | tr -d '\t' | tr '\n' ' ')" ""
bash -c ". '$C/tsarun.bash'; printf '%s\n' \$_tsarun_opts_arg \$_tsarun_compare_arg" | grep -- '^--' | sort -u >bash-arg
# --bash takes SCRIPT but is no option with a value: what follows is the command's.
equal "bash: a value after exactly the options that take one" \
	"$(comm -3 <(grep -vx -e --bash -e --view -e --format -e --help help-arg) bash-arg | tr -d '\t' | tr '\n' ' ')" ""
for f in _tsarun tsarun.fish; do
	if [ "$f" = _tsarun ]; then
		grep -oE -- "(^|[{'(,])--[a-z][a-z0-9-]*" "$C/$f" | grep -oE -- '--[a-z0-9-]+' | sort -u >got
	else
		grep '^complete ' "$C/$f" | grep -oE -- ' -l [a-z][a-z0-9-]*' | sed 's/ -l /--/' | sort -u >got
	fi
	equal "$f: every option --help has, and no other" "$(comm -3 help-long got | tr -d '\t' | tr '\n' ' ')" ""
done

# bash: candidates for a command line ("tsarun --sort " and the like).
cands() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tsarun
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}" | sort -u | tr "\n" " "' _ "$C/tsarun.bash" "$@"
}
equal "bash: 'tsarun --so'" "$(cands tsarun --so)" "--sort "
equal "bash: 'tsarun --sort '" "$(cands tsarun --sort '')" "cpu disk offcpu runq sleep switches tid wakeup wall "
equal "bash: 'tsarun --color '" "$(cands tsarun --color '')" "always auto never "
equal "bash: 'tsarun rep'" "$(cands tsarun rep)" "report "
equal "bash: 'tsarun report --format s'" "$(cands tsarun report --format s)" "svg "
equal "bash: 'tsarun report --w'" "$(cands tsarun report --w)" "--wide "
touch run.json notes.txt
equal "bash: 'tsarun report ' offers artifacts" "$(cands tsarun report '')" "run.json "
equal "bash: 'tsarun -q -r 3 -- ' offers commands" "$(cands tsarun -q -r 3 -- tru | grep -o 'true ')" "true "
equal "bash: after the command, its arguments (files)" "$(cands tsarun -- cat no)" "notes.txt "
equal "bash: '--runs 3 ' is no command yet" "$(cands tsarun --runs 3 --ws)" ""

if command -v fish >/dev/null; then
	fc() { fish -c "source '$C/tsarun.fish'; complete -C '$1'" | cut -f1 | sort -u | tr '\n' ' '; }
	equal "fish: 'tsarun --sort '" "$(fc 'tsarun --sort ')" "cpu disk offcpu runq sleep switches tid wakeup wall "
	equal "fish: 'tsarun report --format s'" "$(fc 'tsarun report --format s')" "svg "
	equal "fish: 'tsarun --wi'" "$(fc 'tsarun --wi')" "--wide "
else
	skip "fish: candidates" "fish is not installed"
fi
if command -v zsh >/dev/null; then
	check "zsh: _tsarun parses" zsh -n "$C/_tsarun"
else
	skip "zsh: _tsarun parses" "zsh is not installed"
fi

# make install: each where its shell looks, beside the schemas.
if make -s -C "$REPO" install DESTDIR="$T_TMP/root" PREFIX=/usr OUTPUT="${OUTPUT:-build}" >install.log 2>&1; then
	for f in bash-completion/completions/tsarun zsh/site-functions/_tsarun \
		fish/vendor_completions.d/tsarun.fish tsarun/tsarun.schema.json \
		tsarun/tsarun-doctor.schema.json tsarun/tsarun-monitor.schema.json \
		tsarun/tsarun-stream.schema.json tsarun/junit.xsd; do
		check "make install: share/$f" cmp -s "$T_TMP/root/usr/share/$f" \
			"$(case $f in bash*) echo "$C/tsarun.bash" ;; zsh*) echo "$C/_tsarun" ;; fish*) echo "$C/tsarun.fish" ;; *) echo "$REPO/doc/${f#tsarun/}" ;; esac)"
	done
else
	not_ok "make install DESTDIR=..." "$(tail -5 install.log)"
fi
