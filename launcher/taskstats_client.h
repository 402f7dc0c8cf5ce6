/* SPDX-License-Identifier: MIT */
/*
 * The taskstats client over generic netlink (libnl-genl-3): a query socket
 * (TASKSTATS_CMD_GET for one thread) and, when asked, a listener registered
 * for the exit records of every CPU (TASKSTATS_CMD_ATTR_REGISTER_CPUMASK).
 * The listener hears every task that exits on the machine; the caller keeps
 * what is its own. Records are decoded by analyze/taskstats.h.
 *
 * Ownership: a ts_client owns its sockets and buffer; records handed to a
 * callback live until the callback returns.
 */
#ifndef TSARUN_TASKSTATS_CLIENT_H
#define TSARUN_TASKSTATS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "taskstats.h"

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

#endif /* TSARUN_TASKSTATS_CLIENT_H */
