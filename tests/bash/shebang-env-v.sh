#!/usr/bin/env -S bash -e -o verbose
# -o verbose split by env -S, with -e
echo a
false
echo not reached
