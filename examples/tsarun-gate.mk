# SPDX-License-Identifier: MIT
#
# A performance gate for `make check`, to copy next to your Makefile:
#
#     include tsarun-gate.mk
#     check: perf-check
#
#     make perf-baseline   # once, on a known-good tree: records the baseline
#     make check           # ... perf-check fails when the benchmark regressed
#
# perf-check exits 3 (make reports "Error 3") when the benchmark ran fine
# but its CPU time regressed beyond PERF_FAIL_OVER; it keeps the benchmark's
# own status when the benchmark failed, and 125 when tsarun could not run
# (no baseline, a broken one, bad options). The verdict, as a table, goes to
# stderr and to $(PERF_DIR)/perf.md; $(PERF_DIR)/junit.xml is for CI
# systems that read JUnit. Set PERF_BASELINE_CMD to a command that runs the
# old version to compare the two interleaved in one go (paired mode)
# instead of against the stored baseline.

TSARUN ?= tsarun
# tsarun needs root for eBPF; empty when make already runs as root.
PERF_SUDO ?= $(if $(filter 0,$(shell id -u)),,sudo)
PERF_BENCH ?= ./bench
PERF_DIR ?= perf
PERF_BASELINE ?= $(PERF_DIR)/baseline.json
PERF_FAIL_OVER ?= 10%
PERF_RUNS ?= 10
PERF_BASELINE_CMD ?=

PERF_GATE = $(if $(PERF_BASELINE_CMD),--baseline-cmd '$(PERF_BASELINE_CMD)',--baseline $(PERF_BASELINE))

.PHONY: perf-check perf-baseline

perf-check:
	@mkdir -p $(PERF_DIR)
	$(PERF_SUDO) $(TSARUN) --no-table --runs $(PERF_RUNS) $(PERF_GATE) \
		--fail-over $(PERF_FAIL_OVER) --json $(PERF_DIR)/latest.json \
		--junit $(PERF_DIR)/junit.xml --markdown $(PERF_DIR)/perf.md -- $(PERF_BENCH)

perf-baseline:
	@mkdir -p $(PERF_DIR)
	$(PERF_SUDO) $(TSARUN) -q --runs $(PERF_RUNS) --json $(PERF_BASELINE) -- $(PERF_BENCH)
	@echo "perf-baseline: recorded $(PERF_BASELINE); commit it or keep it as a CI artifact"
