#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Records of nested, piped, exec'd and interrupted processes with the
# process tree they ran in: a seed for the bashtree fuzz target
# (tests/fuzz/bash-seeds.py --tree records it).
d=$(mktemp -d)
printf '%s\n' '#!/usr/bin/env bash' 'echo a | cat' 'echo b | cat' >"$d/envp.sh"
chmod +x "$d/envp.sh"
x=$("$d/envp.sh")
echo "$x" | tr a b | cat >/dev/null
env bash -c 'echo through env | cat; f() { echo in f; }; f' >/dev/null
timeout 5 bash -c 'exec bash -c "echo exec | cat"' >/dev/null
( exec bash -c 'true | true' )
sh -c 'bash -c "echo sh; echo two | cat"' >/dev/null
bash -c 'sleep 5 & kill -INT $$; wait' 2>/dev/null
bash -c 'kill -KILL $$' 2>/dev/null
for i in 1 2; do env bash -c 'echo loop | cat' >/dev/null; done
rm -rf "$d"
