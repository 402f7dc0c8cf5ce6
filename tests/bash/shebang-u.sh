#!/bin/bash -u
# -u on the #! line: the profile is recorded, and the script sees nothing of it.
f() { echo "${FUNCNAME[*]} ${#BASH_SOURCE[@]}"; }
sleep 0.1
f
