#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make deps-run's list (ci/packages-run): what building and running tsarun
# needs and no test tool, with Ubuntu's names on Ubuntu (no bpftool package
# there: linux-tools), and the GitHub Actions example uses it. Needs neither
# root nor BPF; installs nothing (DEPS_PRINT).
. "$(dirname "$0")/../lib.sh"
cd "$T_TMP"

DEPS_PRINT=1 DEPS_DISTRO=debian "$REPO/ci/deps" "$REPO/ci/packages-run" >debian.txt
DEPS_PRINT=1 DEPS_DISTRO=ubuntu "$REPO/ci/deps" "$REPO/ci/packages-run" >ubuntu.txt
check "Debian: bpftool by its name" grep -qx bpftool debian.txt
check "Ubuntu: no bpftool package, linux-tools for this kernel instead" \
	sh -c "! grep -qx bpftool ubuntu.txt && grep -qx linux-tools-common ubuntu.txt && grep -qx 'linux-tools-$(uname -r)' ubuntu.txt"
for tool in valgrind hyperfine clang-format libcmocka-dev linux-perf chromium qemu-system-x86; do
	check "deps-run leaves out the test tool $tool" sh -c "! grep -qx '$tool' debian.txt ubuntu.txt"
done
# Everything deps-run names, deps names too: one list is the other's part.
DEPS_PRINT=1 DEPS_DISTRO=debian "$REPO/ci/deps" >all.txt
equal "every deps-run package is one make deps installs" "$(sort debian.txt | comm -23 - <(sort all.txt) | tr '\n' ' ')" ""
# The build needs each header and tool it names: they are installed here, so the list is whole.
for p in $(cat debian.txt); do
	check "installed here, as the build uses it: $p" sh -c "dpkg-query -W -f='\${Status}' '$p' 2>/dev/null | grep -q 'install ok installed'"
done
equal "the GitHub Actions example installs with deps-run, never deps" \
	"$(grep -c 'make -C "$RUNNER_TEMP/tsarun" deps-run' "$REPO/examples/github-actions-perf.yml") $(grep -c 'make -C "$RUNNER_TEMP/tsarun" deps$' "$REPO/examples/github-actions-perf.yml")" "2 0"
