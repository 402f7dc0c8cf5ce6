# SPDX-License-Identifier: MIT
# Nested bash processes run by other programs: each goes below the command
# that started the program (line numbers matter).
printf 'all:\n\t@bash -c "for j in 1 2 3; do true; done"; true\n' >"$1/mk.mk"
for m in 1 2; do make -s -f "$1/mk.mk"; done
timeout 5 bash -c 'for i in 1 2 3 4; do :; done'
