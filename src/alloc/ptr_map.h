/*
 * ptr_map.h - allocated blocks by address (upstream allocated_blocks).
 *
 * uthash with a multiplicative hash of the address: blocks are at least
 * 512-byte aligned, so the low bits carry nothing and Jenkins' hash over 8
 * bytes would cost more than the rest of a cached allocation.
 */
#ifndef NPA_PTR_MAP_H
#define NPA_PTR_MAP_H

#include <stdint.h>

static inline unsigned npa_ptr_hash(const void *key)
{
	uint64_t p;

	__builtin_memcpy(&p, key, sizeof(p));
	return (unsigned)(((p >> 9) * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

#undef HASH_FUNCTION
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = npa_ptr_hash(keyptr))
/* Keys are pointers: compare them as such, not with memcmp. */
#undef HASH_KEYCMP
#define HASH_KEYCMP(a, b, n) (*(void *const *)(a) != *(void *const *)(b))
#include <uthash.h>

#include "block.h"

static inline struct npa_block *npa_ptr_map_find(struct npa_block *map, const void *ptr)
{
	struct npa_block *b = NULL;

	HASH_FIND(hh, map, &ptr, sizeof(ptr), b);
	return b;
}

static inline void npa_ptr_map_add(struct npa_block **map, struct npa_block *b)
{
	HASH_ADD(hh, *map, ptr, sizeof(b->ptr), b);
}

static inline void npa_ptr_map_del(struct npa_block **map, struct npa_block *b)
{
	HASH_DELETE(hh, *map, b);
}

#endif /* NPA_PTR_MAP_H */
