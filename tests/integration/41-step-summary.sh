#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# $GITHUB_STEP_SUMMARY is a file the CI runner owns, and tsarun (root, under
# sudo) appends the gate's verdict to it after the command ran as the
# invoking user. The command can replace that file: root must never write
# through a link the command planted, or into a file that is not the
# runner's (a hard link to another file, a file of another user).
. "$(dirname "$0")/../lib.sh"
need_bpf "step summary tests"
cd "$T_TMP"
export GITHUB_ACTIONS=true
unset GITHUB_STEP_SUMMARY
NOBODY_UID=$(id -u nobody) NOBODY_GID=$(id -g nobody)
# The command runs as nobody, as under `sudo` by that user.
as_sudo() { SUDO_UID=$NOBODY_UID SUDO_GID=$NOBODY_GID SUDO_USER=nobody "$@"; }

"$TSARUN" -q -r 5 --json base.json -- "$WORKLOADS/burn" 5
# A directory of the runner's (nobody's), as the runner's file-commands
# directory is; a file of root's the command must not reach.
mkdir ci && chown nobody ci
# The artifact goes where the user may write (under sudo it is made with the user's rights).
mkdir art && chown nobody art
echo secret >victim && chmod 600 victim
victim_sum=$(sha256sum <victim)

# gate SUMMARY CMD...: a gate that passes (--fail-over 1000%), run as nobody.
gate() {
	local summary=$1
	shift
	GITHUB_STEP_SUMMARY=$summary as_sudo "$TSARUN" -q --color never --baseline base.json \
		--fail-over 1000% --json "$T_TMP/art/new.json" -- "$@"
}

# The runner's own file, a regular one the user owns: appended to.
echo "# earlier step" >ci/summary.md && chown nobody ci/summary.md
gate ci/summary.md "$WORKLOADS/burn" 5 2>err
equal "a regular file of the user's: exit 0" "$?" 0
check "... appended to, after what was there" \
	sh -c "head -1 ci/summary.md | grep -q '^# earlier step' && grep -q '^### tsarun regression gate: .* passed' ci/summary.md"

# Not there yet: created, and it belongs to the user, like every file tsarun makes.
gate ci/new.md "$WORKLOADS/burn" 5 2>err
equal "no file yet: exit 0" "$?" 0
check "... created with the verdict" grep -q '^### tsarun regression gate' ci/new.md
equal "... owned by the user" "$(stat -c %u ci/new.md)" "$NOBODY_UID"

# The command replaces the summary with a link to root's file.
echo "# earlier step" >ci/summary.md && chown nobody ci/summary.md
gate ci/summary.md sh -c "rm -f $T_TMP/ci/summary.md && ln -s $T_TMP/victim $T_TMP/ci/summary.md && $WORKLOADS/burn 5" 2>err
equal "a link planted by the command: tsarun's own error, 125" "$?" 125
equal "... root's file is untouched" "$(sha256sum <victim)" "$victim_sum"
check "... the message names the step summary and the link" \
	grep -q "tsarun: cannot write the step summary (GITHUB_STEP_SUMMARY) 'ci/summary.md': .*symbolic link" err
validate "$T_TMP/art/new.json"
check "... the artifact is written all the same" \
	sh -c "jq -e '.comparison.verdict == \"pass\"' '$T_TMP/art/new.json' >/dev/null"

# A dangling link: not followed to create its target either.
rm -f ci/summary.md && ln -s "$T_TMP/created-by-root" ci/summary.md
gate ci/summary.md "$WORKLOADS/burn" 5 2>err
equal "a dangling link: 125" "$?" 125
check "... nothing created at its target" test ! -e "$T_TMP/created-by-root"

# A hard link to a file of root's (what fs.protected_hardlinks=0 lets a user
# make): the file has two names and is not the user's.
rm -f ci/summary.md && ln victim ci/summary.md
gate ci/summary.md "$WORKLOADS/burn" 5 2>err
equal "a hard link to root's file: 125" "$?" 125
equal "... root's file is untouched" "$(sha256sum <victim)" "$victim_sum"
check "... the message says why" grep -q "step summary .*: it has 2 names (hard links)" err

# A file of another user's (the command cannot make one, but a summary
# file of someone else's is not the runner's either).
rm -f ci/summary.md && : >ci/summary.md && chown daemon ci/summary.md
gate ci/summary.md "$WORKLOADS/burn" 5 2>err
equal "a file of another user's: 125" "$?" 125
check "... the message names its owner" grep -q "step summary .*: it belongs to uid $(id -u daemon), not to the user the command ran as (uid $NOBODY_UID)" err
check "... and it is not written" test ! -s ci/summary.md

# Not a regular file (a FIFO the command made): refused, without blocking.
rm -f ci/summary.md && mkfifo ci/summary.md
gate ci/summary.md "$WORKLOADS/burn" 5 2>err
equal "a FIFO: 125, without waiting for a reader" "$?" 125
check "... the message says it is not a regular file" grep -q "step summary .*not a regular file" err

# tsarun compare runs no command: the runner's regular file is appended to,
# a link is refused there too.
rm -f ci/summary.md && : >ci/summary.md
GITHUB_STEP_SUMMARY=ci/summary.md "$TSARUN" compare base.json "$T_TMP/art/new.json" >/dev/null 2>err
equal "compare: exit 0" "$?" 0
check "compare: appended" grep -q '^### tsarun regression gate' ci/summary.md
rm -f ci/summary.md && ln -s "$T_TMP/victim" ci/summary.md
GITHUB_STEP_SUMMARY=ci/summary.md "$TSARUN" compare base.json "$T_TMP/art/new.json" >/dev/null 2>err
equal "compare through a link: 125" "$?" 125
equal "... root's file is untouched" "$(sha256sum <victim)" "$victim_sum"
