/* SPDX-License-Identifier: MIT */
/*
 * Growable arrays: room for at least `need` elements, by doubling from
 * `first`, with the size arithmetic checked for overflow. The array and
 * its capacity stay the caller's; on failure both are left as they were.
 *
 *	struct point *p = vec_grow(pts, &cap, n + 1, sizeof(*pts), 64);
 *	if (!p)
 *		return -ENOMEM;
 *	pts = p;
 *
 * Knows nothing of tsarun.
 */
#ifndef LIB_VEC_H
#define LIB_VEC_H

#include <stddef.h>

/* items itself when it already has room; NULL when out of memory or the size overflows. */
void *vec_grow(void *items, size_t *cap, size_t need, size_t size, size_t first);

#endif /* LIB_VEC_H */
