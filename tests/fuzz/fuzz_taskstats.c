// SPDX-License-Identifier: MIT
/*
 * The taskstats decoder and its netlink attribute walk: what arrives on the
 * exit-record listener. The input is the bytes of one recv(): generic
 * netlink messages of the family (30 here, as in the seeds); the decoder
 * also gets the input as one bare struct taskstats payload.
 */
#include "fuzz.h"
#include "taskstats.h"

#define FAMILY 30

static int check(void *ctx, const struct ts_record *r)
{
	/* A decoded comm is terminated; a record is never longer than what came. */
	if (!memchr(r->comm, '\0', sizeof(r->comm)))
		abort();
	(*(int *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_record r;
	uint64_t unreadable = 0;
	int seen = 0, n;

	if (!taskstats_decode(data, size, &r) && !memchr(r.comm, '\0', sizeof(r.comm)))
		abort();
	n = taskstats_parse(data, size, FAMILY, check, &seen, &unreadable);
	if (n >= 0 && n != seen)
		abort();
	return 0;
}
