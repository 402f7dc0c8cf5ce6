// SPDX-License-Identifier: MIT
/* lib/vec: growth by doubling, the capacity kept, overflow refused. */
#include <stdint.h>
#include <stdlib.h>

#include "unit.h"

#include "vec.h"

static void test_first_and_doubling(void **state)
{
	int *a = NULL, *p;
	size_t cap = 0;

	(void)state;
	p = vec_grow(a, &cap, 1, sizeof(*a), 4);
	assert_non_null(p);
	assert_int_equal(cap, 4);
	a = p;
	for (int i = 0; i < 4; i++)
		a[i] = i;
	/* Room already: the same array, the same capacity. */
	assert_ptr_equal(vec_grow(a, &cap, 4, sizeof(*a), 4), a);
	assert_int_equal(cap, 4);
	p = vec_grow(a, &cap, 5, sizeof(*a), 4);
	assert_non_null(p);
	assert_int_equal(cap, 8);
	a = p;
	for (int i = 0; i < 4; i++)
		assert_int_equal(a[i], i);
	/* A need past twice the capacity doubles until it fits. */
	p = vec_grow(a, &cap, 100, sizeof(*a), 4);
	assert_non_null(p);
	assert_int_equal(cap, 128);
	free(p);
}

static void test_overflow_leaves_the_array(void **state)
{
	size_t cap = 2;
	char *a = malloc(2);
	size_t huge_cap = (SIZE_MAX / 2) + 2;

	(void)state;
	assert_non_null(a);
	assert_null(vec_grow(a, &cap, SIZE_MAX, 1, 2));
	assert_int_equal(cap, 2);
	assert_null(vec_grow(a, &cap, SIZE_MAX / 8 + 1, 16, 2));
	assert_int_equal(cap, 2);
	/* Doubling past SIZE_MAX is refused, not wrapped. */
	assert_null(vec_grow(a, &huge_cap, SIZE_MAX, 1, 2));
	assert_null(vec_grow(NULL, &(size_t){0}, 1, 0, 2));
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_and_doubling),
	    cmocka_unit_test(test_overflow_leaves_the_array),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
