/*
 * extent_set.h - the byte ranges of an object that were ever written, as
 * sorted, disjoint, non-adjacent [lo, hi) extents.
 *
 * What a sparse file system keeps per file: a copy of the object need only
 * move these, so holes stay holes. The set is bounded: past
 * EXTENT_SET_MAX extents the two closest merge (the hole between them
 * counts as written), so it may grow to cover more than was written,
 * never less.
 */
#ifndef NPUMEMFS_EXTENT_SET_H
#define NPUMEMFS_EXTENT_SET_H

#include <stddef.h>
#include <stdint.h>

#define EXTENT_SET_MAX 64

struct extent {
	uint64_t lo, hi;
};

struct extent_set {
	struct extent e[EXTENT_SET_MAX];
	size_t n;
};

/* Mark [lo, hi) written; lo < hi. */
void extent_set_add(struct extent_set *s, uint64_t lo, uint64_t hi);
/* Forget everything at or past `end` (the object shrank to `end`). */
void extent_set_clip(struct extent_set *s, uint64_t end);

#endif /* NPUMEMFS_EXTENT_SET_H */
