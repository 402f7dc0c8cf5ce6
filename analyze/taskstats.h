/* SPDX-License-Identifier: MIT */
/*
 * taskstats records (the kernel's per-task accounting over generic netlink):
 * what analyze/ needs of them, with no socket (launcher/taskstats_client.h
 * owns those).
 *
 *  - taskstats_decode(): a pure decoder of one struct taskstats payload, by
 *    the record's version and length rather than by the build's header
 *    (linux-libc-dev may be older or newer than the running kernel). Each
 *    delay counter says whether this record carries it, so a kernel that
 *    lacks a counter never turns it into a zero. Version 15 placed its new
 *    fields in the middle of the structure (16 moved them to the end): it is
 *    refused rather than read with shifted fields.
 *  - taskstats_parse(): the exit records in a buffer of generic netlink
 *    messages, as a listener receives them (pure, for tests and fuzzing),
 *    over the walk the client uses too.
 *
 * Records handed to a callback live until the callback returns.
 */
#ifndef TSARUN_TASKSTATS_H
#define TSARUN_TASKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run.h" /* struct delay_counter, DELAY_NR */

/* The layouts this decoder knows: version 16 is 560 bytes. */
#define TASKSTATS_KNOWN_VERSION 16
#define TASKSTATS_V16_SIZE	560

struct ts_record;
typedef int (*ts_record_fn)(void *ctx, const struct ts_record *r);

/* One thread's record, decoded. */
struct ts_record {
	uint16_t version;
	uint16_t len; /* payload bytes the kernel sent */
	uint32_t tid; /* ac_pid: the thread */
	uint32_t tgid;
	uint32_t ppid;	/* the process's parent (tgid) */
	bool have_tgid; /* ac_tgid (version 12+); else tgid is 0 */
	char comm[16];
	uint32_t exitcode;
	uint64_t etime_ns; /* elapsed since the task started, at the record's time (us precision) */
	uint64_t btime_s;  /* start, seconds since the epoch (ac_btime64, else ac_btime) */
	uint64_t run_ns;   /* cpu_run_virtual_total: se.sum_exec_runtime */
	uint64_t utime_ns; /* ac_utime (us precision) */
	uint64_t stime_ns; /* ac_stime (us precision) */
	uint64_t nvcsw;	   /* 0 unless have_switches */
	uint64_t nivcsw;
	bool have_switches;
	struct delay_counter delays[DELAY_NR]; /* max_ns, min_ns from version 16 */
	/* Where the record came from (set by the client, not the decoder). */
	bool from_exit;	  /* an exit record; otherwise the answer to a query */
	uint64_t sent_ns; /* CLOCK_MONOTONIC: query sent (0 for exit records) */
	uint64_t recv_ns; /* CLOCK_MONOTONIC: received */
};

/*
 * Decode one TASKSTATS_TYPE_STATS payload. Returns 0, -EINVAL when it is too
 * short to hold a thread's identity, or -EPROTO for the version 15 layout.
 */
int taskstats_decode(const void *buf, size_t len, struct ts_record *r);

/*
 * The exit records in len bytes of generic netlink messages of the taskstats
 * family (as a listener receives them): fn for each. Pure, for tests and
 * fuzzing; the client uses the same walk. Returns how many, or -errno.
 * Records in the version 15 layout are counted in *unreadable, not read.
 */
int taskstats_parse(const void *buf, size_t len, int family, ts_record_fn fn, void *ctx,
		    uint64_t *unreadable);

/*
 * The walk under taskstats_parse(), for the client: each thread record of
 * the messages in buf decoded into *rec and passed to fn (fn NULL: the last
 * record stays in *rec, for a query's answer), counted in *count, stamped
 * recv_ns; a netlink error or ACK gives its errno through nlerr (0 for an
 * ACK; NULL: ignored, and records in the version 15 layout are counted in
 * *unreadable rather than failing the walk). Returns 0 or the first error.
 */
int taskstats_walk(const void *buf, size_t len, int family, struct ts_record *rec, ts_record_fn fn,
		   void *ctx, int *nlerr, int *count, uint64_t recv_ns, uint64_t *unreadable);

#endif /* TSARUN_TASKSTATS_H */
