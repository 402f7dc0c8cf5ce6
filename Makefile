# SPDX-License-Identifier: MIT
#
# One non-recursive build for tsarun. Quiet by default; V=1 shows commands.
#
#   make            build/tsarun (BPF objects and skeletons included)
#   make check      every test suite, ending with "N passed, N failed, N skipped"
#   make bench      overhead benchmarks, reported as ratios
#   make check-asan the integration suites with tsarun built with ASan + UBSan
#   make check-kernels  a subset of them on real Debian kernels under QEMU
#                   (tests/kernels/; KERNELS="6.1 host" selects some,
#                   KERNELS_SUITES="kernel-variants" some of its suites)
#   make fuzz       each fuzz target for FUZZ_TIME seconds (libFuzzer, clang)
#   make fuzz-nightly  the bash records' analysis an hour a target, the rest 10 min
#   make demo       build, then run tsarun on the bundled example
#   make samples    regenerate examples/samples/ from real runs (root)
#   make deps       install the Debian packages the build and tests need
#   make deps-run   only those building and running tsarun needs (Debian, Ubuntu)
#   make install    PREFIX=/usr/local DESTDIR=
#
# vmlinux.h is generated from the BTF of the machine that builds
# (VMLINUX_BTF, default /sys/kernel/btf/vmlinux) rather than checked in:
# tsarun needs kernel BTF at run time anyway (tp_btf and CO-RE), so any
# machine it runs on can also produce the header, and CO-RE relocates the
# few fields we read to whatever kernel runs the binary. Point VMLINUX_BTF at
# a saved BTF file to build on a machine without one.

OUTPUT ?= build
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib/tsarun
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
# The formats' schemas, installed in DATADIR/tsarun (tests/check-schemas holds them strict).
SCHEMAS := $(wildcard doc/*.schema.json) doc/junit.xsd

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64le/powerpc/' -e 's/riscv64/riscv/' -e 's/s390x/s390/')

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

PKGS := libbpf libelf zlib libnl-genl-3.0 libseccomp libcjson
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-D_GNU_SOURCE -MMD -MP \
	-DTSARUN_VERSION='"$(VERSION)"' -DTSARUN_REV='"$(GIT_REV)"' \
	-DTSARUN_LIBDIR='"$(LIBDIR)"' -fno-math-errno \
	$(PKG_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
# The layering, held by the include path: lib/ knows nothing of tsarun;
# analyze/ sees lib/ and the wire formats (bpf/tsarun.h, shell/tsa_wire.h),
# never launcher/; launcher/, the tests and the link see everything.
LIB_CFLAGS := $(BASE_CFLAGS) -iquote lib
ANALYZE_CFLAGS := $(BASE_CFLAGS) -iquote $(OUTPUT) -iquote analyze -iquote lib -iquote bpf -iquote shell
ALL_CFLAGS := $(BASE_CFLAGS) -iquote $(OUTPUT) -iquote . -iquote bpf -iquote analyze -iquote launcher \
	-iquote lib -iquote shell
# Every symbol bound at start (-z now: one pass over the hash tables, rather
# than a trampoline saving the vector registers at each function's first
# call; and the GOT read-only from then on), and no library the binary
# does not call: with -fno-math-errno sqrt() is an instruction, and libm
# is not loaded at all. 0.5 ms of 'tsarun --version' on a PVM guest.
ALL_LDFLAGS := $(LDFLAGS) -Wl,-z,now -Wl,--as-needed $(EXTRA_LDFLAGS)
# The libraries whose archives the -dev packages ship (all but libcjson on
# Debian) are linked statically: the dynamic loader's mapping and
# relocation of each shared library is paid at every start (a millisecond
# or two where page faults go through a hypervisor), and the binary does
# not depend on the exact libbpf soname. STATIC=0 links them all shared.
STATIC_PKGS := libbpf libelf zlib libnl-genl-3.0 libseccomp
STATIC_ARCHIVES := bpf elf z nl-genl-3 nl-3 seccomp
STATIC ?= $(if $(strip $(foreach l,$(STATIC_ARCHIVES),$(if $(findstring /,$(shell $(CC) \
	-print-file-name=lib$(l).a)),,missing))),0,1)
ifeq ($(STATIC),1)
LIBS := -Wl,-Bstatic $(filter-out -lpthread,$(shell $(PKG_CONFIG) --libs --static $(STATIC_PKGS) \
	2>/dev/null)) -Wl,-Bdynamic $(shell $(PKG_CONFIG) --libs libcjson 2>/dev/null) -lm -lpthread
else
LIBS := $(PKG_LIBS) -lm
endif
# The symbolizer's C++ demangler (__cxa_demangle): its objects from libstdc++.a
# only, so that tsarun needs no C++ runtime.
LIBS += -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUTPUT) -Ibpf \
	-Wall -Wno-unused-function -mcpu=v3

BPF_PROGS := sched oncpu

# The bash builtin (tsarun --bash), built against the bash-builtins headers.
BASH_INC ?= /usr/include/bash
SHELL_SO := $(OUTPUT)/shell/tsarun-trap.so
SHELL_ENV := $(OUTPUT)/shell/tsarun-env.bash
SHELL_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -fPIC -MMD -MP \
	-DHAVE_CONFIG_H -DSHELL -I$(BASH_INC) -I$(BASH_INC)/include -I$(BASH_INC)/builtins \
	-iquote shell $(EXTRA_SHELL_CFLAGS)
# -z now: bash loads the builtin lazily bound, and every forked child that
# calls a function the parent never called (the fork and exec paths) looked
# it up again and wrote its GOT page: 8 more page faults a fork.
SHELL_LDFLAGS := -shared -Wl,-z,now,-z,relro
# The trap (tsarun-trap.c) and its start-up measurement (trap_calibrate.c);
# what they share is hidden (trap_internal.h), so only the builtin's structs
# and load hooks are exported.
SHELL_OBJS := $(OUTPUT)/shell/tsarun-trap.o $(OUTPUT)/shell/trap_calibrate.o
BPF_OBJS := $(patsubst %,$(OUTPUT)/bpf/%.bpf.o,$(BPF_PROGS))
# The same programs for kernels before 5.17, whose verifier refuses even a
# reference to a bpf_loop() callback (TSA_COMPAT, bpf/stacks.bpf.h).
BPF_SKELS := $(patsubst %,$(OUTPUT)/%.skel.h,$(BPF_PROGS)) \
	$(patsubst %,$(OUTPUT)/%_compat.skel.h,$(BPF_PROGS))

ANALYZE_SRCS := $(wildcard analyze/*.c)
# lib/: pieces that know nothing of tsarun, archived with analyze/ (both layers use them).
LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(LIB_SRCS))
LAUNCHER_SRCS := $(filter-out launcher/main.c,$(wildcard launcher/*.c))
ANALYZE_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(ANALYZE_SRCS))
LAUNCHER_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(LAUNCHER_SRCS))
MAIN_OBJ := $(OUTPUT)/launcher/main.o

LIBANALYZE := $(OUTPUT)/libanalyze.a
LIBLAUNCHER := $(OUTPUT)/liblauncher.a

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,$(UNIT_SRCS))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(OUTPUT)/tests/workloads/%,$(WORKLOAD_SRCS)) \
		 $(OUTPUT)/tests/workloads/two_paths_nofp \
		 $(patsubst tests/workloads/%.cpp,$(OUTPUT)/tests/workloads/%,$(wildcard tests/workloads/*.cpp))

TSARUN := $(OUTPUT)/tsarun

# Fuzz targets (tests/fuzz/fuzz_NAME.c, seed corpus in tests/fuzz/corpus/NAME/):
# replay_NAME runs one on given files (make check, under ASan/UBSan);
# `make fuzz` links each with libFuzzer (clang) in $(OUTPUT)/fuzz.
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRCS))
REPLAY_BINS := $(patsubst %,$(OUTPUT)/tests/fuzz/replay_%,$(FUZZ_NAMES))
FUZZ_BINS := $(patsubst %,$(OUTPUT)/tests/fuzz/fuzz_%,$(FUZZ_NAMES))
FUZZ_TIME ?= 60
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

.DELETE_ON_ERROR:
.SECONDARY: $(BPF_OBJS) $(OUTPUT)/bpf/sched_compat.bpf.o $(OUTPUT)/bpf/oncpu_compat.bpf.o \
	$(OUTPUT)/bpf/sched_usual.bpf.o $(OUTPUT)/bpf/sched_usual_nt.bpf.o \
	$(OUTPUT)/vmlinux.h
.PHONY: all clean check unit integration bench demo samples deps deps-run install format format-check \
	asan tests workloads fuzz fuzz-nightly fuzz-bins check-asan check-kernels

all: $(TSARUN) $(SHELL_SO) $(SHELL_ENV)

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/launcher $(OUTPUT)/analyze $(OUTPUT)/lib $(OUTPUT)/shell $(OUTPUT)/tests/unit \
$(OUTPUT)/tests/workloads $(OUTPUT)/examples:
	$(Q)mkdir -p $@

$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)test -r $(VMLINUX_BTF) || { echo "make: no kernel BTF at $(VMLINUX_BTF);" \
		"set VMLINUX_BTF to a BTF file (see the Makefile header)" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c bpf/tsarun.h bpf/stacks.bpf.h bpf/clock.bpf.h bpf/hist.bpf.h $(OUTPUT)/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(OUTPUT)/bpf/%_compat.bpf.o: bpf/%.bpf.c bpf/tsarun.h bpf/stacks.bpf.h bpf/clock.bpf.h bpf/hist.bpf.h $(OUTPUT)/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DTSA_COMPAT -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# The scheduler probe's usual loaders, written at build time (bpf/mkloader.c)
# from the object built for Linux 6.2 and later (TSA_RDONLY_CAST) with the
# options the usual set does not vary as constants (TSA_USUAL): one with
# --timeline, one without any of it (TSA_NO_TIMELINE).
$(OUTPUT)/bpf/sched_usual.bpf.o $(OUTPUT)/bpf/sched_usual_nt.bpf.o: bpf/sched.bpf.c bpf/tsarun.h \
		bpf/stacks.bpf.h bpf/clock.bpf.h bpf/hist.bpf.h $(OUTPUT)/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DTSA_RDONLY_CAST -DTSA_USUAL \
		$(if $(findstring _nt.,$@),-DTSA_NO_TIMELINE) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(OUTPUT)/mkloader: bpf/mkloader.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $< $(LIBS) -o $@

$(OUTPUT)/sched.loader.h: $(OUTPUT)/mkloader $(OUTPUT)/bpf/sched.bpf.o $(OUTPUT)/bpf/sched_usual.bpf.o \
		$(OUTPUT)/bpf/sched_usual_nt.bpf.o $(OUTPUT)/bpf/sched_compat.bpf.o
	$(call msg,GEN,$@)
	$(Q)ASAN_OPTIONS=detect_leaks=0 $^ > $@

$(OUTPUT)/shell/%.o: shell/%.c | $(OUTPUT)/shell
	$(call msg,CC,$@)
	$(Q)$(CC) $(SHELL_CFLAGS) -c $< -o $@

$(SHELL_SO): $(SHELL_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(SHELL_CFLAGS) $(SHELL_LDFLAGS) $^ -o $@ -lpthread

$(SHELL_ENV): shell/tsarun-env.bash | $(OUTPUT)/shell
	$(call msg,CP,$@)
	$(Q)cp $< $@

# The system calls' names by number (launcher/sandbox.c), from the C
# library's headers: '[0] = "read",' for each numbered __NR_ macro.
$(OUTPUT)/sysnames.h: | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)echo '#include <sys/syscall.h>' | $(CC) -dM -E - | \
		sed -n 's/^#define __NR_\([a-z0-9_]*\) \([0-9][0-9]*\)$$/[\2] = "\1",/p' | sort -t'[' -k2 -n > $@.tmp
	$(Q)test -s $@.tmp && mv $@.tmp $@

# User-space objects that include a generated header must wait for it.
$(LAUNCHER_OBJS) $(MAIN_OBJ): $(BPF_SKELS) $(OUTPUT)/sched.loader.h $(OUTPUT)/sysnames.h

# The HTML report's page (analyze/report_html.h): its template, stylesheet and
# script with D3 inlined from Debian's node-d3, as C strings. D3_JS points
# at another copy of D3 5 (a browser build) to build without that package.
D3_JS ?= /usr/share/nodejs/d3/dist/d3.min.js
REPORT_HTML_PARTS := analyze/report_html/page.html analyze/report_html/page.css \
	analyze/report_html/page.js
$(OUTPUT)/report_html_page.h: analyze/report_html/bundle.py $(REPORT_HTML_PARTS) \
		$(wildcard $(D3_JS)) | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)analyze/report_html/bundle.py $@ analyze/report_html/page.html \
		css=analyze/report_html/page.css app=analyze/report_html/page.js d3=$(D3_JS)
$(OUTPUT)/analyze/report_html.o: $(OUTPUT)/report_html_page.h

$(OUTPUT)/launcher/%.o: launcher/%.c | $(OUTPUT)/launcher
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/analyze/%.o: analyze/%.c | $(OUTPUT)/analyze
	$(call msg,CC,$@)
	$(Q)$(CC) $(ANALYZE_CFLAGS) -c $< -o $@

$(OUTPUT)/lib/%.o: lib/%.c | $(OUTPUT)/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(LIB_CFLAGS) -c $< -o $@

$(LIBANALYZE): $(ANALYZE_OBJS) $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBLAUNCHER): $(LAUNCHER_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(TSARUN): $(MAIN_OBJ) $(LIBLAUNCHER) $(LIBANALYZE)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $^ $(LIBS) -o $@

# Unit tests: one cmocka binary per module.
# test_clock and test_hist run the BPF side's clock offset and histogram code as plain C.
$(OUTPUT)/tests/unit/test_clock: bpf/clock.bpf.h bpf/tsarun.h
$(OUTPUT)/tests/unit/test_hist: bpf/hist.bpf.h bpf/tsarun.h

$(OUTPUT)/tests/unit/%: tests/unit/%.c $(LIBLAUNCHER) $(LIBANALYZE) | $(OUTPUT)/tests/unit
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -iquote tests/unit -DSRCDIR='"$(CURDIR)"' $(ALL_LDFLAGS) $< \
		$(LIBLAUNCHER) $(LIBANALYZE) \
		$(LIBS) $(CMOCKA_LIBS) -o $@

# Workloads with known behaviour, built with frame pointers and -g so that
# stacks and symbols are checkable.
# C++ ones (the demangler's): g++ unless CXX says otherwise.
CXX ?= g++
$(OUTPUT)/tests/workloads/%: tests/workloads/%.cpp | $(OUTPUT)/tests/workloads
	$(call msg,CXX,$@)
	$(Q)$(CXX) -std=gnu++17 -O1 -g -fno-omit-frame-pointer -Wall $< -o $@ -lpthread

$(OUTPUT)/tests/workloads/%: tests/workloads/%.c tests/workloads/common.h | $(OUTPUT)/tests/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O1 -g -fno-omit-frame-pointer -fno-inline -Wall -D_GNU_SOURCE \
		$< -o $@ -lpthread -lm

# The same blocking points in code built the way most software ships: no
# frame pointers, so that the callers come from the stack's top and CFI.
$(OUTPUT)/tests/workloads/two_paths_nofp: tests/workloads/two_paths.c tests/workloads/common.h | $(OUTPUT)/tests/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 -g -fomit-frame-pointer -Wall -D_GNU_SOURCE $< -o $@ -lpthread -lm

# Replays: the fuzz target and a main() that feeds it files.
$(OUTPUT)/tests/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h \
		$(LIBLAUNCHER) $(LIBANALYZE)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -iquote tests/fuzz $(ALL_LDFLAGS) $< tests/fuzz/replay.c \
		$(LIBLAUNCHER) $(LIBANALYZE) $(LIBS) -o $@

# libFuzzer builds (only in the fuzz tree: CC=clang, see `fuzz`). options.c
# is compiled on its own so that the fuzz tree needs no BPF skeleton.
$(OUTPUT)/tests/fuzz/options.o: launcher/options.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(OUTPUT)/tests/fuzz/options.o \
		$(LIBANALYZE)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -iquote tests/fuzz -fsanitize=fuzzer $(ALL_LDFLAGS) $< \
		$(OUTPUT)/tests/fuzz/options.o $(LIBANALYZE) $(LIBS) -o $@

fuzz-bins: $(FUZZ_BINS)

tests: $(UNIT_BINS) $(WORKLOAD_BINS) $(REPLAY_BINS)
workloads: $(WORKLOAD_BINS)

unit: $(UNIT_BINS)
	$(Q)OUTPUT=$(OUTPUT) tests/run-suites unit

integration: $(TSARUN) $(SHELL_SO) $(SHELL_ENV) $(WORKLOAD_BINS)
	$(Q)OUTPUT=$(OUTPUT) tests/run-suites integration

# The sanitizer build is a separate output tree, so it never mixes objects.
asan:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/asan \
		EXTRA_CFLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		EXTRA_LDFLAGS="-fsanitize=address,undefined" $(OUTPUT)/asan/tsarun tests

check: $(TSARUN) $(SHELL_SO) $(SHELL_ENV) tests asan
	$(Q)OUTPUT=$(OUTPUT) tests/run-suites all

# The integration suites again with tsarun built with ASan and UBSan (ONLY=
# selects some, as for `make integration`).
check-asan: $(SHELL_SO) $(SHELL_ENV) $(WORKLOAD_BINS) asan
	$(Q)OUTPUT=$(OUTPUT) tests/run-suites asan-integration

# The kernel matrix: the scheduler probe's variants, the accounting and its
# cross-check, stacks, timeline, bash, the gate and the procfs fallback on
# each Debian kernel of tests/kernels/run, booted under QEMU, and on this one.
check-kernels: $(TSARUN) $(SHELL_SO) $(SHELL_ENV) $(WORKLOAD_BINS)
	$(Q)OUTPUT=$(OUTPUT) tests/run-suites kernels

# Fuzz every parser of outside data for FUZZ_TIME seconds each, FUZZ_TIME_NAME
# for target NAME (libFuzzer, ASan + UBSan); what crashes is kept in
# $(OUTPUT)/fuzz/crashes/NAME/.
fuzz:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/fuzz CC=$(CLANG) \
		EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" \
		EXTRA_LDFLAGS="$(FUZZ_SAN)" fuzz-bins
	$(Q)OUTPUT=$(OUTPUT) FUZZ_TIME=$(FUZZ_TIME) tests/run-suites fuzz

# A nightly campaign: what a profiled script controls (its records and the
# tree built from them) an hour a target, every other parser ten minutes. The
# corpus libFuzzer grows is kept in $(OUTPUT)/fuzz/corpus/NAME/ for the next.
fuzz-nightly:
	$(Q)FUZZ_TIME_bashprof=3600 FUZZ_TIME_bashtree=3600 \
		$(MAKE) --no-print-directory fuzz FUZZ_TIME=600

BENCH_BINS := $(OUTPUT)/tests/bench/bashprof_rate $(OUTPUT)/tests/bench/empty_switch \
	$(OUTPUT)/tests/bench/empty_switch.bpf.o

# The floor under any sched_switch tracer (10-sched-pipe.sh): an empty program.
$(OUTPUT)/tests/bench/empty_switch.bpf.o: tests/bench/empty_switch.bpf.c $(OUTPUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/bench/%: tests/bench/%.c $(LIBANALYZE)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $< $(LIBANALYZE) $(LIBS) -o $@

bench: $(TSARUN) $(SHELL_SO) $(SHELL_ENV) $(WORKLOAD_BINS) $(BENCH_BINS)
	$(Q)OUTPUT=$(OUTPUT) tests/bench/run

$(OUTPUT)/examples/%: examples/%.c | $(OUTPUT)/examples
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -D_GNU_SOURCE $< -o $@ -lpthread

demo: deps $(TSARUN) $(OUTPUT)/examples/bench
	$(Q)examples/demo.sh $(TSARUN)

# The README shows the samples: its copies are rewritten from them (47-readme checks).
samples: $(TSARUN) $(SHELL_SO) $(SHELL_ENV) $(OUTPUT)/examples/bench
	$(Q)examples/samples/regenerate.sh $(TSARUN) $(OUTPUT)/examples/bench
	$(Q)tests/readme-samples --update README.md

deps:
	$(Q)ci/deps

# Only what building and running tsarun needs (ci/packages-run), on Debian and
# Ubuntu: for a CI job that gates a benchmark, not one that runs tsarun's tests.
deps-run:
	$(Q)ci/deps ci/packages-run

# On a fresh machine pkg-config and the libraries arrive with `make deps`,
# after this Makefile was read (PKG_CFLAGS and PKG_LIBS empty). When deps is
# asked for (make deps check, make demo), they are installed first, as the
# making of an included file: make then reads the Makefile again, flags and all.
ifneq ($(filter deps demo,$(MAKECMDGOALS)),)
include $(OUTPUT)/deps.stamp
endif
$(OUTPUT)/deps.stamp: ci/packages ci/deps
	$(Q)ci/deps
	$(Q)mkdir -p $(@D) && touch $@

format:
	$(Q)clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	$(Q)ci/format-check

install: $(TSARUN) $(SHELL_SO) $(SHELL_ENV)
	$(call msg,INSTALL,$(DESTDIR)$(BINDIR)/tsarun)
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(LIBDIR)
	$(Q)install -m 0755 $(TSARUN) $(DESTDIR)$(BINDIR)/tsarun
	$(Q)install -m 0644 doc/tsarun.1 $(DESTDIR)$(MANDIR)/man1/tsarun.1
	$(call msg,INSTALL,$(DESTDIR)$(LIBDIR))
	$(Q)install -m 0644 $(SHELL_SO) $(SHELL_ENV) $(DESTDIR)$(LIBDIR)/
	$(call msg,INSTALL,$(DESTDIR)$(DATADIR)/tsarun)
	$(Q)install -d $(DESTDIR)$(DATADIR)/tsarun $(DESTDIR)$(DATADIR)/bash-completion/completions \
		$(DESTDIR)$(DATADIR)/zsh/site-functions $(DESTDIR)$(DATADIR)/fish/vendor_completions.d
	$(Q)install -m 0644 $(SCHEMAS) $(DESTDIR)$(DATADIR)/tsarun/
	$(Q)install -m 0644 shell/completion/tsarun.bash \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/tsarun
	$(Q)install -m 0644 shell/completion/_tsarun $(DESTDIR)$(DATADIR)/zsh/site-functions/_tsarun
	$(Q)install -m 0644 shell/completion/tsarun.fish \
		$(DESTDIR)$(DATADIR)/fish/vendor_completions.d/tsarun.fish

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

-include $(wildcard $(OUTPUT)/launcher/*.d $(OUTPUT)/analyze/*.d $(OUTPUT)/lib/*.d $(OUTPUT)/shell/*.d)
