// SPDX-License-Identifier: MIT
/* Growable arrays (vec.h). */
#include <stdint.h>
#include <stdlib.h>

#include "vec.h"

void *vec_grow(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t n = *cap ? *cap : (first ? first : 1);
	void *p;

	if (need <= *cap && items)
		return items;
	if (!size)
		return NULL;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
	if (n > SIZE_MAX / size)
		return NULL;
	p = realloc(items, n * size);
	if (!p)
		return NULL;
	*cap = n;
	return p;
}
