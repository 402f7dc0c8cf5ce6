// SPDX-License-Identifier: MIT
/*
 * lib/hashmap: an index over the caller's records, with integer keys and
 * with strings looked up by a byte run; collisions, growth, iteration, and
 * growth refused with the map left as it was.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "hash.h"
#include "hashmap.h"

/* Records of integer keys: a pid and its value. */
struct ent {
	uint32_t pid;
	uint64_t val;
};

struct ents {
	struct ent v[20000];
	size_t n;
	int calls;
};

static bool pid_equal(uint32_t value, const void *probe, void *ctx)
{
	struct ents *e = ctx;

	e->calls++;
	return e->v[value].pid == *(const uint32_t *)probe;
}

/* Insert or overwrite, the way a caller does it: find, else append a record and insert it. */
static void put(struct hmap *m, struct ents *e, uint32_t pid, uint64_t val)
{
	uint32_t i;

	if (hmap__find(m, pid, pid_equal, &pid, &i)) {
		e->v[i].val = val;
		return;
	}
	e->v[e->n] = (struct ent){pid, val};
	assert_int_equal(hmap__insert(m, pid, (uint32_t)e->n), 0);
	e->n++;
}

static void test_zeroed_map_is_empty(void **state)
{
	struct hmap m = {0};
	uint32_t v = 7, pid = 1;
	size_t it = 0;

	(void)state;
	assert_false(hmap__find(&m, 1, pid_equal, &pid, &v));
	assert_int_equal(v, 7);
	assert_false(hmap__next(&m, &it, NULL));
	assert_int_equal(hmap__insert_cost(&m), 64 * sizeof(struct hmap_slot));
	hmap__clear(&m);
	hmap__free(&m);
	assert_int_equal(m.n, 0);
}

static void test_integer_keys(void **state)
{
	static struct ents e;
	struct hmap m;
	uint32_t i = 0, pid;

	(void)state;
	hmap__init(&m, &e);
	/* Consecutive pids, their own hash: 10,000 of them, through several doublings. */
	for (pid = 1; pid <= 10000; pid++)
		put(&m, &e, pid, pid * 3ull);
	assert_int_equal(m.n, 10000);
	assert_true(m.cap >= 2 * m.n);
	assert_int_equal(m.cap & (m.cap - 1), 0);
	for (pid = 1; pid <= 10000; pid++) {
		assert_true(hmap__find(&m, pid, pid_equal, &pid, &i));
		assert_int_equal(e.v[i].pid, pid);
		assert_int_equal(e.v[i].val, pid * 3ull);
	}
	pid = 0;
	assert_false(hmap__find(&m, pid, pid_equal, &pid, NULL));
	pid = 10001;
	assert_false(hmap__find(&m, pid, pid_equal, &pid, NULL));
	/* An update finds the record: the count stays. */
	put(&m, &e, 42, 1);
	assert_int_equal(m.n, 10000);
	pid = 42;
	assert_true(hmap__find(&m, pid, pid_equal, &pid, &i));
	assert_int_equal(e.v[i].val, 1);
	/* Spread: equal() runs about once a successful lookup, not along long runs. */
	e.calls = 0;
	for (pid = 1; pid <= 10000; pid++)
		assert_true(hmap__find(&m, pid, pid_equal, &pid, NULL));
	assert_true(e.calls < 10100);
	/* clear() forgets, keeps the memory; the map works again. */
	{
		size_t cap = m.cap;

		hmap__clear(&m);
		e.n = 0;
		assert_int_equal(m.n, 0);
		assert_int_equal(m.cap, cap);
		pid = 42;
		assert_false(hmap__find(&m, pid, pid_equal, &pid, NULL));
		put(&m, &e, 42, 2);
		assert_true(hmap__find(&m, pid, pid_equal, &pid, &i));
		assert_int_equal(e.v[i].val, 2);
	}
	hmap__free(&m);
	assert_null(m.slots);
	assert_false(hmap__find(&m, pid, pid_equal, &pid, NULL));
}

/* The caller's strings, by index; probes are byte runs. */
struct strs {
	char *s[64];
	size_t n;
	uint64_t (*hash)(const char *s, size_t n);
	int calls;
};

struct run {
	const char *s;
	size_t n;
};

static bool str_equal(uint32_t value, const void *probe, void *ctx)
{
	struct strs *t = ctx;
	const struct run *r = probe;
	const char *s = t->s[value];

	t->calls++;
	return !strncmp(s, r->s, r->n) && !s[r->n];
}

static uint64_t fnv(const char *s, size_t n)
{
	return hash_fnv1a(s, n, HASH_FNV1A_BASIS);
}

static uint64_t same(const char *s, size_t n)
{
	return 12345;
}

/* The index of s[0..n), interned on first sight. */
static size_t intern(struct hmap *m, struct strs *t, const char *s, size_t n)
{
	struct run r = {s, n};
	uint64_t h = t->hash(s, n);
	uint32_t v;

	if (hmap__find(m, h, str_equal, &r, &v))
		return v;
	t->s[t->n] = strndup(s, n);
	assert_non_null(t->s[t->n]);
	assert_int_equal(hmap__insert(m, h, (uint32_t)t->n), 0);
	return t->n++;
}

static void check_strings(uint64_t (*hash)(const char *, size_t))
{
	static const char *const words[] = {"main", "foo", "bar", "foobar", "", "ma", "mainx"};
	struct strs t = {.hash = hash};
	struct hmap m;
	size_t ids[7];

	hmap__init(&m, &t);
	for (size_t i = 0; i < 7; i++)
		ids[i] = intern(&m, &t, words[i], strlen(words[i]));
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(ids[i], i);
	/* A prefix of a held word is not that word: "foo" of "foobar", "ma" of "main". */
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(intern(&m, &t, words[i], strlen(words[i])), i);
	assert_int_equal(intern(&m, &t, "foobarbaz", 6), 3);
	assert_int_equal(intern(&m, &t, "mainly", 4), 0);
	assert_int_equal(t.n, 7);
	assert_int_equal(m.n, 7);
	/* Past the first doubling, every word is still found. */
	for (int i = 0; i < 50; i++) {
		char w[16];

		snprintf(w, sizeof(w), "w%d", i);
		assert_int_equal(intern(&m, &t, w, strlen(w)), 7 + i);
	}
	assert_true(m.cap > 64);
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(intern(&m, &t, words[i], strlen(words[i])), i);
	assert_int_equal(m.n, 57);
	hmap__free(&m);
	for (size_t i = 0; i < t.n; i++)
		free(t.s[i]);
}

static void test_string_keys(void **state)
{
	(void)state;
	check_strings(fnv);
}

static void test_colliding_keys(void **state)
{
	(void)state;
	/* Every key has the same hash: equal() tells them apart, along one probe run. */
	check_strings(same);
}

static void test_equal_only_where_tags_agree(void **state)
{
	struct strs t = {.hash = fnv};
	struct hmap m;
	struct run r = {"x", 1};

	(void)state;
	hmap__init(&m, &t);
	intern(&m, &t, "a", 1);
	intern(&m, &t, "b", 1);
	t.calls = 0;
	assert_false(hmap__find(&m, fnv("x", 1), str_equal, &r, NULL));
	assert_int_equal(t.calls, 0);
	hmap__free(&m);
	for (size_t i = 0; i < t.n; i++)
		free(t.s[i]);
}

static void test_iteration(void **state)
{
	struct hmap m = {0};
	unsigned char seen[1000] = {0};
	uint32_t v;
	size_t n = 0;

	(void)state;
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(hmap__insert(&m, i * 7919ull, i), 0);
	for (size_t it = 0; hmap__next(&m, &it, &v);) {
		assert_true(v < 1000);
		assert_int_equal(seen[v], 0);
		seen[v] = 1;
		n++;
	}
	assert_int_equal(n, 1000);
	/* A NULL output is allowed. */
	n = 0;
	for (size_t it = 0; hmap__next(&m, &it, NULL);)
		n++;
	assert_int_equal(n, 1000);
	hmap__free(&m);
}

static void test_insert_cost_and_reserve(void **state)
{
	struct hmap m = {0};
	size_t cap;
	uint32_t i = 1;

	(void)state;
	assert_int_equal(hmap__insert(&m, 1, 1), 0);
	assert_int_equal(hmap__insert_cost(&m), 0);
	cap = m.cap;
	for (; m.n < cap / 2; i++)
		assert_int_equal(hmap__insert(&m, i + 1, i + 1), 0);
	/* Half full: the next insertion doubles, adding cap slots. */
	assert_int_equal(m.cap, cap);
	assert_int_equal(hmap__insert_cost(&m), cap * sizeof(struct hmap_slot));
	assert_int_equal(hmap__insert(&m, i + 1, i + 1), 0);
	i++;
	assert_int_equal(m.cap, 2 * cap);
	/* reserve() makes the room the next insertion needs, and only that. */
	cap = m.cap;
	for (; m.n < cap / 2; i++)
		assert_int_equal(hmap__insert(&m, i + 1, i + 1), 0);
	assert_int_equal(m.cap, cap);
	assert_int_equal(hmap__reserve(&m), 0);
	assert_int_equal(m.cap, 2 * cap);
	assert_int_equal(hmap__insert_cost(&m), 0);
	assert_int_equal(hmap__reserve(&m), 0);
	assert_int_equal(m.cap, 2 * cap);
	hmap__free(&m);
}

static void test_limit_leaves_the_map(void **state)
{
	/* A map at its largest, half full: growth refused, nothing touched. */
	struct hmap_slot dummy = {0};
	size_t huge = (size_t)1 << 31;
	struct hmap m = {.slots = &dummy, .cap = huge, .n = huge / 2, .shift = 1};

	(void)state;
	assert_int_equal(hmap__insert_cost(&m), SIZE_MAX);
	assert_int_equal(hmap__insert(&m, 1, 1), -ENOMEM);
	assert_int_equal(hmap__reserve(&m), -ENOMEM);
	assert_ptr_equal(m.slots, &dummy);
	assert_int_equal(m.cap, huge);
	assert_int_equal(m.n, huge / 2);
	assert_int_equal(dummy.tag, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zeroed_map_is_empty),
	    cmocka_unit_test(test_integer_keys),
	    cmocka_unit_test(test_string_keys),
	    cmocka_unit_test(test_colliding_keys),
	    cmocka_unit_test(test_equal_only_where_tags_agree),
	    cmocka_unit_test(test_iteration),
	    cmocka_unit_test(test_insert_cost_and_reserve),
	    cmocka_unit_test(test_limit_leaves_the_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
