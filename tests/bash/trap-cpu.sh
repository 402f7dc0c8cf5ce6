# A child's CPU is the command's that ran it, not the trap that runs next.
trap 'echo err >/dev/null' ERR
awk 'BEGIN { for (i = 0; i < 1000000; i++) s += i; exit 1 }'
r() { trap 'echo ret >/dev/null' RETURN; awk 'BEGIN { for (i = 0; i < 1000000; i++) s += i }'; }
r
trap 'echo bye >/dev/null' EXIT
awk 'BEGIN { for (i = 0; i < 1000000; i++) s += i }'
