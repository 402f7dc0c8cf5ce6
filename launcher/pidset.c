// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "hashmap.h"
#include "pidset.h"
#include "vec.h"

/* The key looked up, and the entries it is looked up among. */
struct pid_probe {
	uint32_t key;
	const struct pidset_ent *ents;
};

static bool pid_equal(uint32_t i, const void *probe, void *ctx)
{
	const struct pid_probe *p = probe;

	return p->ents[i].key == p->key;
}

/* A pid is its own hash: the map's Fibonacci hashing spreads consecutive pids. */

int pidset_put(struct pidset *s, uint32_t key, uint64_t val)
{
	struct pid_probe probe = {key, s->ents};
	struct pidset_ent *ents;
	uint32_t i;
	int err;

	if (!key)
		return -EINVAL;
	if (hmap__find(&s->map, key, pid_equal, &probe, &i)) {
		s->ents[i].val = val;
		return 0;
	}
	err = hmap__reserve(&s->map);
	if (err)
		return err;
	ents = vec_grow(s->ents, &s->cap, s->n + 1, sizeof(*s->ents), 256);
	if (!ents)
		return -ENOMEM;
	s->ents = ents;
	s->ents[s->n] = (struct pidset_ent){key, val};
	hmap__insert(&s->map, key, (uint32_t)s->n); /* reserved above */
	s->n++;
	return 0;
}

bool pidset_get(const struct pidset *s, uint32_t key, uint64_t *val)
{
	struct pid_probe probe = {key, s->ents};
	uint32_t i;

	if (!key || !hmap__find(&s->map, key, pid_equal, &probe, &i))
		return false;
	if (val)
		*val = s->ents[i].val;
	return true;
}

void pidset_clear(struct pidset *s)
{
	hmap__clear(&s->map);
	s->n = 0;
}

void pidset_free(struct pidset *s)
{
	hmap__free(&s->map);
	free(s->ents);
	s->ents = NULL;
	s->n = s->cap = 0;
}
