// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pidset.h"

static size_t slot(uint32_t key, size_t cap)
{
	/* Fibonacci hashing: consecutive pids spread over the table. */
	return (size_t)(((uint64_t)key * 11400714819323198485ull) >> 32) & (cap - 1);
}

static int grow(struct pidset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	uint32_t *keys = calloc(cap, sizeof(*keys));
	uint64_t *vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->keys[i])
			continue;
		for (j = slot(s->keys[i], cap); keys[j]; j = (j + 1) & (cap - 1))
			;
		keys[j] = s->keys[i];
		vals[j] = s->vals[i];
	}
	free(s->keys);
	free(s->vals);
	s->keys = keys;
	s->vals = vals;
	s->cap = cap;
	return 0;
}

int pidset_put(struct pidset *s, uint32_t key, uint64_t val)
{
	size_t j;
	int err;

	if (!key)
		return -EINVAL;
	if ((s->n + 1) * 2 > s->cap) {
		err = grow(s);
		if (err)
			return err;
	}
	for (j = slot(key, s->cap); s->keys[j] && s->keys[j] != key; j = (j + 1) & (s->cap - 1))
		;
	if (!s->keys[j]) {
		s->keys[j] = key;
		s->n++;
	}
	s->vals[j] = val;
	return 0;
}

bool pidset_get(const struct pidset *s, uint32_t key, uint64_t *val)
{
	if (!s->cap || !key)
		return false;
	for (size_t j = slot(key, s->cap); s->keys[j]; j = (j + 1) & (s->cap - 1)) {
		if (s->keys[j] == key) {
			if (val)
				*val = s->vals[j];
			return true;
		}
	}
	return false;
}

void pidset_clear(struct pidset *s)
{
	if (s->cap) {
		memset(s->keys, 0, s->cap * sizeof(*s->keys));
		memset(s->vals, 0, s->cap * sizeof(*s->vals));
	}
	s->n = 0;
}

void pidset_free(struct pidset *s)
{
	free(s->keys);
	free(s->vals);
	memset(s, 0, sizeof(*s));
}
