#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Regenerate the sample artifacts in this directory from real runs
# (make samples):
#
#   run.json, run.txt       a plain run of examples/bench.c, and its table
#   run-80.txt              that table again (tsarun report) in a terminal of
#                           80 columns (script(1) makes the terminal)
#   bash.json, bash.txt,    a --bash run of examples/deploy.sh, its table and
#   bash.bash.folded        profile, and its folded stacks (flame graphs)
#   stacks.json, stacks.txt a --stacks run of the bench, and its table (the
#                           top blocking stacks)
#   base.json               a baseline: 5 runs of the bench
#   gate.json, gate.txt,    the regression gate against base.json: the
#   gate.md, gate-junit.xml artifact with its comparison, the table, the
#                           Markdown summary and the JUnit report
#
# tests/integration/46-samples.sh validates them against the schema and
# reads each back with `tsarun report`: when the artifact changes, run
# `make samples` and commit the result.
#
# Usage: regenerate.sh [TSARUN [BENCH]] (default build/tsarun, build/examples/bench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tsarun=$(realpath "${1:-build/tsarun}")
bench=$(realpath "${2:-$(dirname "$tsarun")/examples/bench}")
if [ "$(id -u)" -ne 0 ]; then
	echo "samples: tsarun needs root for eBPF and taskstats; running with sudo" >&2
	exec sudo "$0" "$tsarun" "$bench"
fi

# Run where the command lines are short and mean the same on any machine:
# the artifacts record the command and the paths as given.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cp "$bench" "$tmp/bench"
cp "$here/../deploy.sh" "$tmp/deploy.sh"
mkdir "$tmp/journal"
cd "$tmp"
unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY
t() { "$tsarun" --color never "$@"; }

echo "samples: a plain run" >&2
t --json run.json --report run.txt -- ./bench journal
script -qec "stty cols 80 rows 40; '$tsarun' report --color never run.json" /dev/null \
	</dev/null | tr -d '\r' >run-80.txt
echo "samples: a --stacks run" >&2
t --stacks --json stacks.json --report stacks.txt -- ./bench journal
echo "samples: a --bash run" >&2
t --json bash.json --report bash.txt --bash ./deploy.sh site 2>/dev/null
echo "samples: a baseline, then the gate against it" >&2
t -q --runs 5 --json base.json -- ./bench journal
t --runs 5 --baseline base.json --fail-over 10% --json gate.json --report gate.txt \
	--markdown gate.md --junit gate-junit.xml -- ./bench journal || {
	rc=$?
	# 3: the gate failed (a slow moment on a shared machine): still a real sample.
	[ $rc -eq 3 ] || exit $rc
}

cp run.json run.txt run-80.txt stacks.json stacks.txt bash.json bash.txt bash.bash.folded base.json gate.json \
	gate.txt gate.md gate-junit.xml "$here/"
# The files belong to whoever ran make, not to root.
if [ -n "${SUDO_UID:-}" ]; then
	chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$here"/*.json "$here"/*.txt "$here"/*.md \
		"$here"/*.xml "$here"/bash.bash.folded
fi
echo "samples: written to $here" >&2
