/* SPDX-License-Identifier: MIT */
/*
 * The taskstats client over generic netlink (libnl-genl-3). The only module
 * that includes libnl.
 *
 * Two parts:
 *  - taskstats_decode(): a pure decoder of one struct taskstats payload, by
 *    the record's version and length rather than by the build's header
 *    (linux-libc-dev may be older or newer than the running kernel). Each
 *    delay counter says whether this record carries it, so a kernel that
 *    lacks a counter never turns it into a zero. Version 15 placed its new
 *    fields in the middle of the structure (16 moved them to the end): it is
 *    refused rather than read with shifted fields.
 *  - struct ts_client: a query socket (TASKSTATS_CMD_GET for one thread)
 *    and, when asked, a listener registered for the exit records of every
 *    CPU (TASKSTATS_CMD_ATTR_REGISTER_CPUMASK). The listener hears every
 *    task that exits on the machine; the caller keeps what is its own.
 *
 * Ownership: a ts_client owns its sockets and buffer; records handed to a
 * callback live until the callback returns.
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
 * Can this process read taskstats here? Resolves the TASKSTATS family and
 * queries its own pid. Returns true, or false with the reason in detail;
 * detail gets the family id and record version when it works.
 */
bool taskstats_check(char *detail, size_t len);

struct ts_client;

/* Open the query socket and resolve the family. NULL with errno and a reason in err. */
struct ts_client *ts_client__new(char *err, size_t errlen);
void ts_client__free(struct ts_client *c);

/*
 * Open the listener: a second socket with a receive buffer of rcvbuf bytes
 * (forced past rmem_max when permitted), registered for exit records on
 * every possible CPU. Returns 0 or -errno with a reason in err.
 */
int ts_client__listen(struct ts_client *c, size_t rcvbuf, char *err, size_t errlen);

/* The listener's descriptor for the event loop (-1 when not listening). */
int ts_client__fd(const struct ts_client *c);

/* Called for each thread record; a non-zero return stops the drain and is returned. */

/*
 * Read every exit record waiting on the listener, without blocking.
 * Returns the number of records passed to fn, or -errno.
 */
int ts_client__drain(struct ts_client *c, ts_record_fn fn, void *ctx);

/*
 * Exit records the kernel could not queue because the listener's buffer was
 * full (the socket's drop counter; cumulative), and how many times the
 * socket reported the overrun (ENOBUFS).
 */
uint64_t ts_client__drops(const struct ts_client *c);
uint64_t ts_client__overruns(const struct ts_client *c);

/* Exit records skipped because their layout cannot be read (version 15). */
uint64_t ts_client__unreadable(const struct ts_client *c);

/*
 * The current record of one live thread (TASKSTATS_CMD_ATTR_PID). Returns 0,
 * -ESRCH when no such thread exists, -EPROTO for an unreadable record.
 */
int ts_client__query(struct ts_client *c, uint32_t tid, struct ts_record *out);

#endif /* TSARUN_TASKSTATS_H */
