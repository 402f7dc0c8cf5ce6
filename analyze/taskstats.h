/* SPDX-License-Identifier: MIT */
/*
 * The taskstats client over generic netlink (libnl-genl-3). The only module
 * that includes libnl.
 */
#ifndef TSARUN_TASKSTATS_H
#define TSARUN_TASKSTATS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Can this process read taskstats here? Resolves the TASKSTATS family and
 * queries its own pid. Returns true, or false with the reason in why;
 * detail gets the family id and record version when it works.
 */
bool taskstats_check(char *detail, size_t len);

#endif /* TSARUN_TASKSTATS_H */
