/*
 * extent_set.c - written extents, kept sorted and merged on insertion.
 */
#include <string.h>

#include "extent_set.h"

static void remove_at(struct extent_set *s, size_t i, size_t count)
{
	memmove(&s->e[i], &s->e[i + count], (s->n - i - count) * sizeof(s->e[0]));
	s->n -= count;
}

/* Full: merge the two neighbours with the smallest hole between them. */
static void make_room(struct extent_set *s)
{
	size_t best = 0;

	for (size_t i = 1; i + 1 < s->n; i++)
		if (s->e[i + 1].lo - s->e[i].hi < s->e[best + 1].lo - s->e[best].hi)
			best = i;
	s->e[best].hi = s->e[best + 1].hi;
	remove_at(s, best + 1, 1);
}

void extent_set_add(struct extent_set *s, uint64_t lo, uint64_t hi)
{
	size_t i = 0, j;

	while (i < s->n && s->e[i].hi < lo)
		i++;
	/* e[i..j) touch or overlap [lo, hi): they become one extent. */
	for (j = i; j < s->n && s->e[j].lo <= hi; j++) {
		if (s->e[j].lo < lo)
			lo = s->e[j].lo;
		if (s->e[j].hi > hi)
			hi = s->e[j].hi;
	}
	if (j > i) {
		s->e[i] = (struct extent){ lo, hi };
		remove_at(s, i + 1, j - i - 1);
		return;
	}
	if (s->n == EXTENT_SET_MAX) {
		make_room(s);
		extent_set_add(s, lo, hi);
		return;
	}
	memmove(&s->e[i + 1], &s->e[i], (s->n - i) * sizeof(s->e[0]));
	s->e[i] = (struct extent){ lo, hi };
	s->n++;
}

void extent_set_clip(struct extent_set *s, uint64_t end)
{
	while (s->n > 0 && s->e[s->n - 1].lo >= end)
		s->n--;
	if (s->n > 0 && s->e[s->n - 1].hi > end)
		s->e[s->n - 1].hi = end;
}
