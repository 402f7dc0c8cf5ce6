#!/usr/bin/env -S bash -e -u
# env -S splits the options: -u stops at the unset variable.
echo before
echo "$unset_variable"
echo after
