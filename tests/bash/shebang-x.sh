#!/bin/bash -x
# -x on the #! line: the trace is the script's alone.
sleep 0.01
echo hi
