/*
 * ptr_map.h - allocated blocks by address (upstream allocated_blocks).
 *
 * Open addressing with linear probing over a power-of-two table, at most
 * half full, deleted entries shifted back instead of left as tombstones,
 * so a lookup touches one or two adjacent slots. The key is stored beside
 * the block so probing never dereferences a block. Blocks are at least
 * 512-byte aligned, so the hash drops the low 9 bits before a Fibonacci
 * multiply, whose top bits pick the slot.
 */
#ifndef NPA_PTR_MAP_H
#define NPA_PTR_MAP_H

#include <stddef.h>
#include <stdint.h>

struct npa_block;

struct npa_ptr_slot {
	uintptr_t key;            /* 0: empty (NULL is never allocated) */
	struct npa_block *block;
};

struct npa_ptr_map {
	struct npa_ptr_slot *slot;
	size_t mask;              /* slots - 1 */
	unsigned shift;           /* 64 - log2(slots) */
	size_t count;
};

int npa_ptr_map_init(struct npa_ptr_map *m);
void npa_ptr_map_fini(struct npa_ptr_map *m);
/* Doubles the table; the map is unchanged if memory runs out. */
int npa_ptr_map_grow(struct npa_ptr_map *m);

static inline size_t npa_ptr_map_home(const struct npa_ptr_map *m, uintptr_t key)
{
	return (size_t)(((uint64_t)(key >> 9) * UINT64_C(0x9E3779B97F4A7C15)) >> m->shift);
}

/* Room for one more block, taken before anything changes so an add cannot fail. */
static inline int npa_ptr_map_reserve(struct npa_ptr_map *m)
{
	if (2 * (m->count + 1) > m->mask + 1)
		return npa_ptr_map_grow(m);
	return 0;
}

static inline struct npa_ptr_slot *npa_ptr_map_slot(const struct npa_ptr_map *m,
						   const void *ptr)
{
	uintptr_t key = (uintptr_t)ptr;

	for (size_t i = npa_ptr_map_home(m, key);; i = (i + 1) & m->mask) {
		struct npa_ptr_slot *s = &m->slot[i];

		if (s->key == key)
			return s;
		if (s->key == 0)
			return NULL;
	}
}

/* The key must be absent and npa_ptr_map_reserve must have succeeded. */
static inline void npa_ptr_map_add(struct npa_ptr_map *m, const void *ptr,
				   struct npa_block *b)
{
	uintptr_t key = (uintptr_t)ptr;
	size_t i = npa_ptr_map_home(m, key);

	while (m->slot[i].key != 0)
		i = (i + 1) & m->mask;
	m->slot[i] = (struct npa_ptr_slot){ key, b };
	m->count++;
}

/* Empties a slot found by npa_ptr_map_slot, moving later entries of its run back into the hole. */
static inline void npa_ptr_map_del_at(struct npa_ptr_map *m, struct npa_ptr_slot *hole)
{
	size_t h = (size_t)(hole - m->slot);

	for (size_t i = (h + 1) & m->mask; m->slot[i].key != 0; i = (i + 1) & m->mask) {
		size_t home = npa_ptr_map_home(m, m->slot[i].key);

		/* The entry may fill the hole unless its home lies in (h, i]. */
		if (((i - home) & m->mask) >= ((i - h) & m->mask)) {
			m->slot[h] = m->slot[i];
			h = i;
		}
	}
	m->slot[h].key = 0;
	m->count--;
}

#endif /* NPA_PTR_MAP_H */
