#!/bin/bash -e
# #! options hold under --bash too: -e stops at the first failure.
echo before
false
echo after
