/* SPDX-License-Identifier: MIT */
/*
 * A small hash map from a pid (or tid) to a 64-bit value, for the sources
 * that follow a process tree from user space. No deletion: callers keep a
 * time or a generation in the value and treat stale entries as absent.
 * Zero is not a valid key. A zeroed struct is an empty set.
 */
#ifndef TSARUN_PIDSET_H
#define TSARUN_PIDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"

/* The entries, in the order they came, and a lib/hashmap index over them. */
struct pidset {
	struct hmap map; /* pid -> its entry in ents[] */
	struct pidset_ent {
		uint32_t key;
		uint64_t val;
	} * ents;
	size_t n, cap;
};

/* Insert or overwrite. Returns 0 or -ENOMEM (-EINVAL for key 0). */
int pidset_put(struct pidset *s, uint32_t key, uint64_t val);

/* Is key present? Its value goes to *val when val is not NULL. */
bool pidset_get(const struct pidset *s, uint32_t key, uint64_t *val);

/* Forget every entry, keep the memory. */
void pidset_clear(struct pidset *s);
void pidset_free(struct pidset *s);

#endif /* TSARUN_PIDSET_H */
