/* SPDX-License-Identifier: MIT */
/*
 * A hash index over the caller's records: it maps a key to a 32-bit value,
 * most often the index of the record in the caller's array that holds the
 * key (a name's id, a node's index, a pid's entry). The keys stay in those
 * records; the map holds, per slot, the value and 32 bits of the key's
 * hash. Open addressing with linear probing, at most half full, doubling
 * as it fills, with the size arithmetic checked.
 *
 * Why not keys in the slots: the tables this replaced held 4 bytes a slot
 * and found the key in the record they had to read anyway; slots of a
 * 64-bit key, value and hash (24 bytes) missed the cache and made a flame
 * graph's build a sixth to a third slower. 8 bytes a slot keep it as fast.
 *
 * The caller hashes (lib/hash.h's FNV-1a for text; an integer can be its
 * own hash: the map multiplies it by 2^64/phi, Fibonacci hashing, before it
 * takes a slot and a tag from it) and passes the hash with each call.
 * Growth never calls back: it rehashes from the tags. A lookup takes a
 * probe of any form (a byte run, a node's fields, a pid) and the caller's
 * equal(value, probe, ctx), which compares it with the record a value
 * names; it is called only where the tags agree.
 *
 * Ownership and lifetime: the map owns its slots only; the records and
 * what they hold stay the caller's, and so does ctx, which must outlive
 * the map's lookups. Not for anything an attacker could aim at for more
 * than slow lookups: callers that hold hostile input bound what they
 * insert (hmap__insert_cost() tells what the next insertion allocates).
 * At most 2^30 entries. No deletion: no user needs it. A zeroed struct
 * hmap is an empty map with a NULL ctx.
 *
 * Its names are hmap, not hashmap: the libbpf archive linked into tsarun
 * exports libbpf's own hashmap__*() functions.
 *
 * Knows nothing of tsarun.
 */
#ifndef LIB_HASHMAP_H
#define LIB_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Does the record value names hold the key probe points at? */
typedef bool (*hmap_equal_fn)(uint32_t value, const void *probe, void *ctx);

struct hmap_slot {
	uint32_t tag; /* 32 bits of the mixed hash, the lowest set; 0: free */
	uint32_t value;
};

struct hmap {
	struct hmap_slot *slots;
	size_t cap; /* a power of two, or 0 */
	size_t n;
	unsigned int shift; /* 32 - log2(cap) */
	void *ctx;	    /* for equal() */
};

/* An empty map whose lookups give equal() ctx; it allocates at its first insertion. */
void hmap__init(struct hmap *m, void *ctx);

/* Frees the slots: the map is empty again, with its ctx. */
void hmap__free(struct hmap *m);

/* Forgets every entry, keeps the memory. */
void hmap__clear(struct hmap *m);

/* Fibonacci hashing's top 32 bits, the lowest set: a slot is the top log2(cap) bits. */
static inline uint32_t hmap__tag(uint64_t hash)
{
	return (uint32_t)((hash * 11400714819323198485ull) >> 32) | 1;
}

/*
 * Is an entry equal to probe present? Its value goes to *value (may be
 * NULL). equal() is given at each call, not kept in the map: it is the
 * probe's (one map can be looked up by probes of several forms), and where
 * the call names a function the compiler inlines it into the probing, as
 * the hand-written tables were. The analysis' big tables run this millions
 * of times; a call and an indirect one cost a tenth of a flame graph's build.
 */
static inline bool hmap__find(const struct hmap *m, uint64_t hash, hmap_equal_fn equal,
			      const void *probe, uint32_t *value)
{
	uint32_t tag = hmap__tag(hash);
	size_t mask = m->cap - 1;

	if (!m->cap)
		return false;
	for (size_t i = (size_t)((uint64_t)tag >> m->shift);; i = (i + 1) & mask) {
		const struct hmap_slot *s = &m->slots[i];

		if (!s->tag)
			return false;
		if (s->tag == tag && equal(s->value, probe, m->ctx)) {
			if (value)
				*value = s->value;
			return true;
		}
	}
}

/*
 * Adds an entry the caller knows is absent (a find() of it just failed):
 * nothing is compared. 0, or -ENOMEM with the map as it was.
 */
int hmap__insert(struct hmap *m, uint64_t hash, uint32_t value);

/*
 * Room for one more entry: after it, the next hmap__insert() cannot fail
 * (for a caller that makes a record before it inserts it, and cannot unmake
 * it). 0 or -ENOMEM.
 */
int hmap__reserve(struct hmap *m);

/* The bytes the next insertion (or hmap__reserve()) adds to what the map holds: 0 when it has room. */
size_t hmap__insert_cost(const struct hmap *m);

/*
 * The values, in no order that means anything (keep the order of the
 * caller's records where it reaches output):
 *	for (size_t it = 0; hmap__next(m, &it, &value);)
 * The map must not change during the walk.
 */
bool hmap__next(const struct hmap *m, size_t *it, uint32_t *value);

#endif /* LIB_HASHMAP_H */
