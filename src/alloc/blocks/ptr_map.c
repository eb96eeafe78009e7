/*
 * ptr_map.c - the pointer map's table: creation and doubling.
 */
#include <errno.h>
#include <stdlib.h>

#include "base/mem_populate.h"
#include "ptr_map.h"

#define NPA_PTR_MAP_MIN_SLOTS 64

static int alloc_table(struct npa_ptr_map *m, size_t slots)
{
	struct npa_ptr_slot *s = mem_zalloc(slots, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	m->slot = s;
	m->mask = slots - 1;
	m->shift = (unsigned)(64 - __builtin_ctzll((unsigned long long)slots));
	return 0;
}

int npa_ptr_map_init(struct npa_ptr_map *m)
{
	m->count = 0;
	return alloc_table(m, NPA_PTR_MAP_MIN_SLOTS);
}

void npa_ptr_map_fini(struct npa_ptr_map *m)
{
	free(m->slot);
	*m = (struct npa_ptr_map){ 0 };
}

int npa_ptr_map_grow(struct npa_ptr_map *m)
{
	struct npa_ptr_map old = *m;

	if (alloc_table(m, 2 * (old.mask + 1)) < 0) {
		*m = old;
		return -ENOMEM;
	}
	m->count = 0;
	for (size_t i = 0; i <= old.mask; i++)
		if (old.slot[i].key != 0)
			npa_ptr_map_add(m, (const void *)old.slot[i].key, old.slot[i].block);
	free(old.slot);
	return 0;
}
