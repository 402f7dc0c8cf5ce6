#!/bin/bash -v
# -v on the #! line: bash echoes each line it reads, the script's only
echo a
b=$(echo b)
echo "$b"
