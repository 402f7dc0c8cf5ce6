/* SPDX-License-Identifier: MIT */
/*
 * Parsers for /proc files. They take buffers, not paths, so they can be
 * fed fixtures and fuzzed; the text is untrusted (a comm can hold spaces,
 * parentheses and newlines).
 */
#ifndef TSARUN_PROCFS_H
#define TSARUN_PROCFS_H

#include <stddef.h>
#include <stdint.h>

struct procfs_stat {
	int32_t pid;
	char comm[16];
	char state; /* R, S, D, T, t, Z, X, I, ... */
	int32_t ppid;
	int32_t pgrp;
	uint64_t utime_ticks;
	uint64_t stime_ticks;
	int64_t num_threads;
	uint64_t starttime_ticks; /* field 22: since boot, in clock ticks */
	int32_t processor;	  /* field 39 */
};

/* Parse the contents of /proc/<pid>/stat (len bytes, need not be NUL-terminated). */
int procfs_parse_stat(const char *buf, size_t len, struct procfs_stat *st);

struct procfs_schedstat {
	uint64_t on_cpu_ns;
	uint64_t run_delay_ns;
	uint64_t slices;
};

/* Parse /proc/<pid>/task/<tid>/schedstat: "on_cpu run_delay pcount". */
int procfs_parse_schedstat(const char *buf, size_t len, struct procfs_schedstat *ss);

/*
 * The context switch counts in /proc/<pid>/status (nvcsw and nivcsw):
 * "voluntary_ctxt_switches:" and "nonvoluntary_ctxt_switches:" lines, both
 * required. The status text holds the comm too (the Name: line), so a line
 * counts only where it starts.
 */
int procfs_parse_ctxt_switches(const char *buf, size_t len, uint64_t *nvcsw, uint64_t *nivcsw);

#endif /* TSARUN_PROCFS_H */
