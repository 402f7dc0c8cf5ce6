#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A script with DEBUG traps of its own: where bash runs them (not in
# functions, command substitutions or subshells unless functrace or the
# function's trace attribute says so), what they see ($BASH_COMMAND, $?,
# $LINENO), what `trap -p` lists, extdebug's skip, and their removal.
# tsarun --bash must give exactly bash's output (61-bash-real.sh).
trap 'echo "DBG $LINENO $? $BASH_COMMAND"' DEBUG
f() { :; }
f
x=$(true)
echo "x=[$x]"
( : in a subshell )
echo "listed: $(trap -p DEBUG)"
g() { trap 'echo "G $BASH_COMMAND"' DEBUG; }
g
echo after g
trap - DEBUG
echo untrapped
traced() { echo in traced; }
declare -ft traced
trap 'echo "T $BASH_COMMAND"' DEBUG
traced
f
trap - DEBUG
set -T
trap 'echo "ST $BASH_COMMAND"' DEBUG
f
y=$(echo sub)
echo "y=[$y]"
trap - DEBUG
set +T
shopt -s extdebug
trap '[[ $BASH_COMMAND != "echo skip"* ]]' DEBUG
echo skip me
echo kept
trap - DEBUG
shopt -u extdebug
trap '' DEBUG
echo ignored
echo "listed: $(trap -p DEBUG)"
trap - DEBUG
echo "none: [$(trap -p DEBUG)]"
set -x
trap 'echo xt >/dev/null' DEBUG
true traced
trap - DEBUG
set +x
false
echo "status $?"
