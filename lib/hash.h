/* SPDX-License-Identifier: MIT */
/*
 * FNV-1a over bytes, from a seed: the hash of the private tables that key
 * on text (names, command texts, stacks). Not for anything an attacker
 * could aim at for more than slow lookups: the tables that hold hostile
 * input bound their size instead.
 *
 * Knows nothing of tsarun.
 */
#ifndef LIB_HASH_H
#define LIB_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV1A_BASIS 0xcbf29ce484222325ull

static inline uint64_t hash_fnv1a(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

#endif /* LIB_HASH_H */
