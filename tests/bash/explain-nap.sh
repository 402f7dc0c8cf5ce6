#!/bin/bash
# A script whose third line sleeps $NAP seconds (tests/integration/42-explain.sh).
sleep "${NAP:-0.05}"
for i in 1 2 3; do :; done
sleep 0.02
