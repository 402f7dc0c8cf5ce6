// SPDX-License-Identifier: MIT
/* A hash index over the caller's records (hashmap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

#define HMAP_FIRST_CAP 64
/* A slot is the top bits of a 32-bit tag whose lowest bit is set: 2^31 slots, half of them used. */
#define HMAP_MAX_CAP   ((size_t)1 << 31)

void hmap__init(struct hmap *m, void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->ctx = ctx;
}

void hmap__free(struct hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = 0;
	m->n = 0;
	m->shift = 0;
}

void hmap__clear(struct hmap *m)
{
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->n = 0;
}

static size_t first_slot(uint32_t tag, unsigned int shift)
{
	return (size_t)((uint64_t)tag >> shift);
}

/* The capacity the next insertion needs: cap itself when it has room, 0 when past the limit. */
static size_t next_cap(const struct hmap *m)
{
	if (m->n < m->cap / 2)
		return m->cap;
	if (!m->cap)
		return HMAP_FIRST_CAP;
	if (m->cap >= HMAP_MAX_CAP || m->cap * 2 > SIZE_MAX / sizeof(*m->slots))
		return 0;
	return m->cap * 2;
}

size_t hmap__insert_cost(const struct hmap *m)
{
	size_t cap = next_cap(m);

	if (!cap)
		return SIZE_MAX;
	return (cap - m->cap) * sizeof(*m->slots);
}

static void place(struct hmap_slot *slots, size_t cap, unsigned int shift, struct hmap_slot s)
{
	size_t i;

	for (i = first_slot(s.tag, shift); slots[i].tag; i = (i + 1) & (cap - 1))
		;
	slots[i] = s;
}

static int grow(struct hmap *m, size_t cap)
{
	struct hmap_slot *slots = calloc(cap, sizeof(*slots));
	unsigned int shift = 32 - (unsigned int)__builtin_ctzll(cap);

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].tag)
			place(slots, cap, shift, m->slots[i]);
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	m->shift = shift;
	return 0;
}

int hmap__reserve(struct hmap *m)
{
	size_t cap = next_cap(m);

	if (!cap)
		return -ENOMEM;
	return cap == m->cap ? 0 : grow(m, cap);
}

int hmap__insert(struct hmap *m, uint64_t hash, uint32_t value)
{
	int err = hmap__reserve(m);

	if (err)
		return err;
	place(m->slots, m->cap, m->shift, (struct hmap_slot){hmap__tag(hash), value});
	m->n++;
	return 0;
}

bool hmap__next(const struct hmap *m, size_t *it, uint32_t *value)
{
	for (; *it < m->cap; (*it)++) {
		if (!m->slots[*it].tag)
			continue;
		if (value)
			*value = m->slots[*it].value;
		(*it)++;
		return true;
	}
	return false;
}
